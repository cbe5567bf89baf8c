//! Reading from a cluster for the one-shot commands (`audit`, `plan --cluster`,
//! `validate --crds-from-cluster`, `manifests --rbac-for-cluster`): the operator's kube
//! client on a single-threaded runtime, paginated LISTs handed over one object at a time (a
//! page at most is in memory).
//!
//! A one-shot command meets the faults a controller meets, only once: a request that fails
//! on the way (connection refused while the API server restarts, 429, 5xx) is tried again
//! with a growing pause; a page token that expired while a long listing was under way (410
//! Gone) is followed by the token the server offers with the error (the rest of the list,
//! from a newer snapshot), as the API conventions allow for clients that need no consistent
//! snapshot. Other refusals (403, 404) are the caller's to report.

use crate::cluster::client::{self, cli_runtime, describe, status_code};
use crate::cluster::resources::{crd_resource, object_resource, object_value};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, ObjectList};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Objects fetched per LIST request.
const PAGE: u32 = 500;

/// CRDs a page: a generated CRD is up to 1.7 MB, and a page is held while it is read.
const CRD_PAGE: u32 = 20;

/// Attempts of one request before its failure is final (paused by `backoff::PAGE`).
const ATTEMPTS: u32 = 8;

/// Why reading from the cluster failed.
#[derive(Debug)]
pub struct ReadError {
    /// The HTTP status when the server answered (403, 404, ...).
    pub status: Option<u16>,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl ReadError {
    fn new(what: &str, e: &kube::Error) -> ReadError {
        ReadError {
            status: status_code(e),
            message: format!("{what}: {}", describe(e)),
        }
    }

    pub fn forbidden(&self) -> bool {
        self.status == Some(403)
    }

    pub fn not_found(&self) -> bool {
        self.status == Some(404)
    }
}

/// Whether a failed request may succeed when sent again: no answer at all (the connection
/// failed), too many requests, or a server error.
fn transient(e: &kube::Error) -> bool {
    match status_code(e) {
        None => matches!(e, kube::Error::HyperError(_) | kube::Error::Service(_)),
        Some(code) => code == 429 || code >= 500,
    }
}

/// The pause before attempt `n` (1-based) of a request (`backoff::PAGE`).
fn pause(n: u32) -> Duration {
    super::backoff::PAGE.after(n)
}

/// The continuation token an expired-token error (410) offers, if any.
fn continuation_after_expiry(e: &kube::Error) -> Option<String> {
    match e {
        kube::Error::Api(s) if s.code == 410 => s
            .metadata
            .as_ref()
            .and_then(|m| m.continue_.clone())
            .filter(|c| !c.is_empty()),
        _ => None,
    }
}

pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
}

impl Cluster {
    /// The cluster of `--kubeconfig`/`--context` (else `KUBECONFIG`, `~/.kube/config`, the
    /// in-cluster ServiceAccount).
    /// The cluster's Kubernetes release (its `/version`; the newest modelled if unreadable).
    pub fn release(&self) -> crate::release::KubeVersion {
        self.runtime
            .block_on(crate::release::of_cluster(&self.client))
    }

    pub fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> Result<Cluster, String> {
        let runtime = cli_runtime()?;
        let (client, _) = runtime.block_on(client::connect(kubeconfig, context))?;
        Ok(Cluster { runtime, client })
    }

    /// A CRD as the engine reads it, or `None` when there is none of that name.
    pub fn crd(&self, name: &str) -> Result<Option<Value>, String> {
        let ar = crd_resource();
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        self.retrying(|| api.get_opt(name))
            .map(|o| o.map(|o| object_value(o, &ar)))
            .map_err(|e| describe(&e))
    }

    /// Every CRD of the cluster.
    pub fn each_crd(&self, each: &mut dyn FnMut(Value)) -> Result<(), ReadError> {
        self.each_page(&crd_resource(), CRD_PAGE, &mut |v| {
            each(v);
            true
        })
    }

    /// Every object of a CRD at a version, in all namespaces.
    pub fn each_object(
        &self,
        crd: &crd_audit_engine::Crd,
        version: &str,
        each: &mut dyn FnMut(Value),
    ) -> Result<(), ReadError> {
        self.each(&object_resource(crd, version), &mut |v| {
            each(v);
            true
        })
    }

    /// Like [`Cluster::each_object`], until `each` returns false.
    pub fn each_object_while(
        &self,
        crd: &crd_audit_engine::Crd,
        version: &str,
        each: &mut dyn FnMut(Value) -> bool,
    ) -> Result<(), ReadError> {
        self.each(&object_resource(crd, version), each)
    }

    /// About how many objects a CRD has (one LIST of one object: it and the count of the
    /// rest, which the server estimates).
    pub fn count_objects(
        &self,
        crd: &crd_audit_engine::Crd,
        version: &str,
    ) -> Result<u64, ReadError> {
        let ar = object_resource(crd, version);
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        let params = ListParams::default().limit(1);
        let page = self
            .retrying(|| api.list(&params))
            .map_err(|e| ReadError::new(&format!("counting {}", ar.plural), &e))?;
        let rest = page.metadata.remaining_item_count.unwrap_or(0).max(0);
        Ok(page.items.len() as u64 + rest.unsigned_abs())
    }

    /// Sends a request until it succeeds, fails for good, or [`ATTEMPTS`] are spent.
    fn retrying<T, F: std::future::Future<Output = Result<T, kube::Error>>>(
        &self,
        mut request: impl FnMut() -> F,
    ) -> Result<T, kube::Error> {
        let mut attempt = 1;
        loop {
            match self.runtime.block_on(request()) {
                Err(e) if attempt < ATTEMPTS && transient(&e) => {
                    std::thread::sleep(pause(attempt));
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn each(&self, ar: &ApiResource, each: &mut dyn FnMut(Value) -> bool) -> Result<(), ReadError> {
        self.each_page(ar, PAGE, each)
    }

    fn each_page(
        &self,
        ar: &ApiResource,
        page_size: u32,
        each: &mut dyn FnMut(Value) -> bool,
    ) -> Result<(), ReadError> {
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), ar);
        let mut params = ListParams::default().limit(page_size);
        loop {
            let page: ObjectList<DynamicObject> = match self.retrying(|| api.list(&params)) {
                Ok(p) => p,
                Err(e) => match continuation_after_expiry(&e) {
                    // The token expired: go on from where it stood, on a newer snapshot.
                    Some(token) if params.continue_token.is_some() => {
                        params = params.continue_token(&token);
                        continue;
                    }
                    _ => return Err(ReadError::new(&format!("listing {}", ar.plural), &e)),
                },
            };
            let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
            for item in page.items {
                if !each(object_value(item, ar)) {
                    return Ok(());
                }
            }
            match next {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_longest() {
        let p: Vec<u64> = (1..=8).map(|n| pause(n).as_millis() as u64).collect();
        assert_eq!(p, [250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
        assert_eq!(pause(u32::MAX), super::super::backoff::PAGE.max);
    }

    fn api_error(code: u16, continue_: Option<&str>) -> kube::Error {
        let mut s = kube::core::Status::failure("m", "Expired").with_code(code);
        if let Some(c) = continue_ {
            s.metadata = Some(kube::api::ListMeta {
                continue_: Some(c.to_string()),
                ..Default::default()
            });
        }
        kube::Error::Api(s.boxed())
    }

    #[test]
    fn server_errors_and_throttling_are_tried_again_refusals_are_not() {
        for code in [429, 500, 503, 504] {
            assert!(transient(&api_error(code, None)), "{code}");
        }
        for code in [400, 401, 403, 404, 410, 422] {
            assert!(!transient(&api_error(code, None)), "{code}");
        }
    }

    #[test]
    fn an_expired_token_is_followed_by_the_one_the_server_offers() {
        assert_eq!(
            continuation_after_expiry(&api_error(410, Some("next"))).as_deref(),
            Some("next")
        );
        assert_eq!(continuation_after_expiry(&api_error(410, None)), None);
        assert_eq!(continuation_after_expiry(&api_error(410, Some(""))), None);
        assert_eq!(continuation_after_expiry(&api_error(500, Some("x"))), None);
    }
}
