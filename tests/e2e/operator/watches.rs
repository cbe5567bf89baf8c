//! The watch of a CRD's objects (`cluster::object_watch`) on real servers: once it has the
//! objects it watches without bookmarks, and each watch that the server ends resumes from the
//! version it had, without listing again (kube-apiserver 1.20 lists by pages; the
//! apiextensions-apiserver 1.36 streams the initial state).

use super::*;
use crd_audit::cluster::object_watch::{self, Params};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::runtime::watcher::Event;
use std::path::Path;
use std::time::Duration;

/// How long each watch lasts: the server ends it, and the next one resumes.
const TIMEOUT: u32 = 2;

fn thing(group: &str, namespace: &str, name: &str) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Thing",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"size": "small"}})
}

/// What the watch hands out, in short: `init`, `+name`, `done`, `~name`, `-name`, `error ...`.
fn short(item: Option<Result<Event<DynamicObject>, kube::runtime::watcher::Error>>) -> String {
    let name = |o: &DynamicObject| o.metadata.name.clone().unwrap_or_default();
    match item {
        None => "end".into(),
        Some(Ok(Event::Init)) => "init".into(),
        Some(Ok(Event::InitApply(o))) => format!("+{}", name(&o)),
        Some(Ok(Event::InitDone)) => "done".into(),
        Some(Ok(Event::Apply(o))) => format!("~{}", name(&o)),
        Some(Ok(Event::Delete(o))) => format!("-{}", name(&o)),
        Some(Err(e)) => format!("error {e}"),
    }
}

/// Watches the things of `namespace` (two of them) through several watch timeouts, then
/// creates a third: the watch hands out the initial state, nothing while its watches end
/// and resume (a relist would hand out `init` again; a 410 an error), then the new thing.
fn resumes_without_relisting(kubeconfig: &Path, group: &str, namespace: &str, streaming: bool) {
    let admin = Rest::new(kubeconfig, None);
    apply(&admin, &things_crd(&format!("things.{group}"), group, 1));
    let things = format!("/apis/{group}/v1/namespaces/{namespace}/things");
    wait_for("the things CRD to be served", || admin.get(&things).ok());
    for name in ["a", "b"] {
        apply(&admin, &thing(group, namespace, name));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, "v1", "Thing"),
            "things",
        );
        let api: Api<DynamicObject> = Api::namespaced_with(client, namespace, &resource);
        let params = Params {
            streaming,
            // Two pages for two things, where the state is listed.
            page: 1,
            timeout: TIMEOUT,
        };
        let mut w = Box::pin(object_watch::watch(api.clone(), params));
        let mut initial = Vec::new();
        for _ in 0..4 {
            initial.push(short(w.next().await));
        }
        assert_eq!(
            initial,
            ["init", "+a", "+b", "done"],
            "streaming: {streaming}"
        );
        // Three watches or more end and resume meanwhile.
        let quiet = tokio::time::timeout(Duration::from_secs(u64::from(TIMEOUT) * 4), w.next())
            .await
            .map(short);
        assert!(quiet.is_err(), "streaming: {streaming}: {quiet:?}");
        let c: DynamicObject = serde_json::from_value(thing(group, namespace, "c")).unwrap();
        api.create(&PostParams::default(), &c).await.unwrap();
        let next = tokio::time::timeout(Duration::from_secs(30), w.next())
            .await
            .map(short);
        assert_eq!(next.as_deref(), Ok("~c"), "streaming: {streaming}");
    });
}

#[test]
fn object_watches_resume_without_bookmarks_on_kube_apiserver_1_20() {
    let Some(s) = Scenario::shared("objectwatch") else {
        return;
    };
    apply(
        s.admin(),
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    resumes_without_relisting(&s.env.kubeconfig, &s.group, &s.namespace, false);
}

#[test]
fn object_watches_resume_without_bookmarks_on_a_1_36_apiextensions_server() {
    let _turn = shared_turn();
    let Some(server) = shared_apiext() else {
        return;
    };
    resumes_without_relisting(
        &server.kubeconfig,
        "objectwatch.e2e.crd-audit.dev",
        "default",
        true,
    );
}
