//! Reading from a cluster for the one-shot commands (`plan --cluster`,
//! `manifests --rbac-for-cluster`): the operator's kube client on a single-threaded runtime,
//! paginated LISTs handed over one object at a time (a page at most is in memory).

use crate::operator::client::{self, cli_runtime, describe};
use crate::operator::controller::{crd_resource, object_resource, object_value};
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use std::path::Path;

/// Objects fetched per LIST request.
const PAGE: u32 = 500;

pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
}

impl Cluster {
    /// The cluster of `--kubeconfig`/`--context` (else `KUBECONFIG`, `~/.kube/config`, the
    /// in-cluster ServiceAccount).
    pub fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> Result<Cluster, String> {
        let runtime = cli_runtime()?;
        let (client, _) = runtime.block_on(client::connect(kubeconfig, context))?;
        Ok(Cluster { runtime, client })
    }

    /// A CRD as the engine reads it, or `None` when there is none of that name.
    pub fn crd(&self, name: &str) -> Result<Option<Value>, String> {
        let ar = crd_resource();
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        self.runtime
            .block_on(api.get_opt(name))
            .map(|o| o.map(|o| object_value(o, &ar)))
            .map_err(|e| describe(&e))
    }

    /// Every CRD of the cluster.
    pub fn each_crd(&self, each: &mut dyn FnMut(Value)) -> Result<(), String> {
        let ar = crd_resource();
        self.each(&ar, each)
    }

    /// Every object of a CRD at a version, in all namespaces.
    pub fn each_object(
        &self,
        crd: &crd_audit_engine::Crd,
        version: &str,
        each: &mut dyn FnMut(Value),
    ) -> Result<(), String> {
        self.each(&object_resource(crd, version), each)
    }

    fn each(&self, ar: &kube::api::ApiResource, each: &mut dyn FnMut(Value)) -> Result<(), String> {
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), ar);
        let mut params = ListParams::default().limit(PAGE);
        loop {
            let page = self
                .runtime
                .block_on(api.list(&params))
                .map_err(|e| format!("listing {}: {}", ar.plural, describe(&e)))?;
            let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
            for item in page.items {
                each(object_value(item, ar));
            }
            match next {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(()),
            }
        }
    }
}
