//! Leader election on a `coordination.k8s.io/v1` Lease: one replica works, the others wait
//! and serve health and metrics. The holder renews the lease every few seconds; a lease not
//! renewed within its duration is taken over. Updates are conditional on the lease's
//! resourceVersion, so two candidates never both win.

use super::kube::{ApiError, Kube};
use super::report::now_micro;
use serde_json::{Value, json};
use std::time::Duration;

pub const LEASE_NAME: &str = "crd-audit";
pub const LEASE_SECONDS: i64 = 15;
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

pub struct Elector {
    kube: Kube,
    path: String,
    identity: String,
    namespace: String,
}

fn micros_since_epoch(t: &str) -> Option<i128> {
    crate::cel::stdlib::parse_timestamp(t)
        .ok()
        .map(|ns| ns / 1000)
}

fn now_micros() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i128)
}

impl Elector {
    pub fn new(kube: Kube, namespace: &str, identity: &str) -> Elector {
        Elector {
            path: format!(
                "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{LEASE_NAME}"
            ),
            kube,
            identity: identity.to_string(),
            namespace: namespace.to_string(),
        }
    }

    /// One attempt to become or stay the holder; true when this replica holds the lease.
    pub fn try_acquire(&self) -> Result<bool, ApiError> {
        let now = now_micro();
        let lease = match self.kube.get(&self.path) {
            Ok(l) => l,
            Err(e) if e.status == 404 => {
                let body = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": LEASE_NAME, "namespace": self.namespace},
                    "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": LEASE_SECONDS,
                        "acquireTime": now, "renewTime": now, "leaseTransitions": 0}});
                let path = format!(
                    "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                    self.namespace
                );
                return match self.kube.create(&path, &body) {
                    Ok(_) => Ok(true),
                    Err(e) if e.status == 409 => Ok(false),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let spec = &lease["spec"];
        let holder = spec["holderIdentity"].as_str().unwrap_or("");
        let duration = spec["leaseDurationSeconds"]
            .as_i64()
            .unwrap_or(LEASE_SECONDS);
        let renewed = spec["renewTime"].as_str().and_then(micros_since_epoch);
        let expired = renewed.is_none_or(|r| r + i128::from(duration) * 1_000_000 < now_micros());
        if holder != self.identity && !holder.is_empty() && !expired {
            return Ok(false);
        }
        let mut updated: Value = lease.clone();
        updated["spec"]["renewTime"] = Value::String(now.clone());
        updated["spec"]["leaseDurationSeconds"] = json!(LEASE_SECONDS);
        if holder != self.identity {
            updated["spec"]["holderIdentity"] = Value::String(self.identity.clone());
            updated["spec"]["acquireTime"] = Value::String(now);
            let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
            updated["spec"]["leaseTransitions"] = json!(transitions + 1);
        }
        match self.kube.replace(&self.path, &updated) {
            Ok(_) => Ok(true),
            Err(e) if e.status == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }
}
