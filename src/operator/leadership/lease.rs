//! Leader election on a `coordination.k8s.io/v1` Lease, with the rules of client-go's
//! leaderelection package: a replica takes the Lease when it is free or when its holder has
//! not renewed it for a whole lease duration (judged by this replica's own clock, from when
//! it last saw the record change, so clocks need not agree); the holder renews it every
//! `RETRY` on its own task, never behind other writes, and stops acting as leader when it
//! could not renew within `RENEW_DEADLINE`, which is shorter than the lease, so that no
//! standby can take over while it still acts. On shutdown the holder releases the Lease.
//!
//! A Lease held under this replica's identity that this process never acquired is another
//! process's: the one this one replaces in the same pod (the container restarted after a
//! crash, which released nothing), or one running with the same `POD_NAME`. This process
//! waits for it to expire like any other replica, so that two processes never act as leader
//! at once, and a replica killed without releasing the Lease is replaced after the lease
//! duration whichever replica takes over.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use std::time::Duration;
use tokio::time::Instant;

/// How long a Lease holds without renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// A leader that has not renewed for this long stops acting as leader.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often the holder renews, and a standby tries.
pub const RETRY: Duration = Duration::from_secs(2);

pub struct Elector {
    api: Api<Lease>,
    /// The Lease's name (the instance's: `crd-audit` by default).
    name: String,
    namespace: String,
    identity: String,
    /// The last record seen (holder, renew time) and when this replica first saw it.
    observed: Option<(Option<String>, Option<MicroTime>, Instant)>,
    /// Whether this process has held the Lease: only then is a record naming its identity
    /// its own.
    acquired: bool,
}

/// Why this replica cannot take part in an election.
#[derive(Debug)]
pub enum ElectionError {
    /// The Lease's namespace does not exist.
    NamespaceMissing(String),
    /// The server answered with an error (transient or not).
    Api(kube::Error),
}

impl std::fmt::Display for ElectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElectionError::NamespaceMissing(ns) => write!(
                f,
                "leader election needs the namespace {ns:?} for its Lease: create it \
                 (kubectl create namespace {ns}), name another one with --namespace, or run \
                 with --leader-elect=false"
            ),
            ElectionError::Api(e) => write!(f, "{}", crate::cluster::client::describe(e)),
        }
    }
}

impl std::error::Error for ElectionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ElectionError::NamespaceMissing(_) => None,
            ElectionError::Api(e) => Some(e),
        }
    }
}

fn now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

impl Elector {
    /// An elector on the Lease `name` of `namespace`.
    pub fn new(client: kube::Client, name: &str, namespace: &str, identity: &str) -> Elector {
        Elector {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            namespace: namespace.to_string(),
            identity: identity.to_string(),
            observed: None,
            acquired: false,
        }
    }

    fn spec(&self, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: Some(now()),
            renew_time: Some(now()),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    /// One round: acquire or renew the Lease. `Ok(true)` when this replica holds it now.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, ElectionError> {
        let current = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(ElectionError::Api)?;
        let Some(mut lease) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(self.spec(0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => {
                    self.acquired = true;
                    Ok(true)
                }
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(kube::Error::Api(s)) if s.code == 404 && s.message.contains("namespaces") => {
                    Err(ElectionError::NamespaceMissing(self.namespace.clone()))
                }
                Err(e) => Err(ElectionError::Api(e)),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let record = (holder.clone(), spec.renew_time.clone());
        let observed_at = match &self.observed {
            Some((h, r, at)) if (h, r) == (&record.0, &record.1) => *at,
            _ => Instant::now(),
        };
        self.observed = Some((record.0, record.1, observed_at));
        let duration = Duration::from_secs(spec.lease_duration_seconds.unwrap_or(15).max(1) as u64);
        let mine = self.acquired && holder.as_deref() == Some(self.identity.as_str());
        let free = holder.is_none() || observed_at.elapsed() > duration;
        if !mine && !free {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0);
        let mut next = self.spec(if mine { transitions } else { transitions + 1 });
        if mine {
            next.acquire_time = spec.acquire_time.clone();
        }
        lease.spec = Some(next);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => {
                self.acquired = true;
                Ok(true)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(ElectionError::Api(e)),
        }
    }

    /// Gives the Lease up (on shutdown) so a standby need not wait for it to expire.
    pub async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now());
        let _ = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await;
    }
}

/// Whether the server serves Leases at all (the standalone apiextensions-apiserver does not).
pub async fn leases_served(client: &kube::Client) -> Result<bool, kube::Error> {
    match client
        .list_api_group_resources("coordination.k8s.io/v1")
        .await
    {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == "leases")),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Waits until this replica holds the Lease. A missing namespace is an error to fix, not a
/// reason to loop. While it waits, the replica is ready (`/readyz`) as long as the Lease
/// can be read.
pub(crate) async fn acquire(
    elector: &mut Elector,
    metrics: &crate::operator::metrics::Metrics,
) -> Result<(), ElectionError> {
    let mut last_error: Option<Instant> = None;
    loop {
        let tried = elector.try_acquire_or_renew().await;
        metrics.set_ready(matches!(tried, Ok(false)));
        match tried {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e @ ElectionError::NamespaceMissing(_)) => return Err(e),
            Err(e) => {
                // Said at most every 30 s while the API server is unreachable.
                if last_error.is_none_or(|t| t.elapsed() > Duration::from_secs(30)) {
                    tracing::warn!(error = %e, "leader election: the Lease could not be read or written; retrying");
                    last_error = Some(Instant::now());
                }
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Renews the Lease until it is lost: taken by another replica, or not renewed within the
/// renew deadline (shorter than the lease, so that no standby takes over while this one
/// still acts).
pub(crate) async fn keep_leading(elector: &mut Elector) {
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(RETRY).await;
        let left = RENEW_DEADLINE.saturating_sub(renewed.elapsed());
        match tokio::time::timeout(left, elector.try_acquire_or_renew()).await {
            Ok(Ok(true)) => renewed = Instant::now(),
            Ok(Ok(false)) => return,
            Ok(Err(e)) => tracing::warn!(error = %e, "renewing the Lease failed"),
            Err(_) => {}
        }
        if renewed.elapsed() >= RENEW_DEADLINE {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::fake_api;

    /// A standby is ready while it can read the Lease, and not while it cannot.
    #[tokio::test(start_paused = true)]
    async fn a_standby_is_ready_while_it_can_read_the_lease() {
        let (client, fake) = fake_api::start();
        let mut a = Elector::new(client.clone(), "crd-audit", "crd-audit", "a");
        assert!(a.try_acquire_or_renew().await.unwrap());
        let mut b = Elector::new(client, "crd-audit", "crd-audit", "b");
        let metrics = crate::operator::metrics::Metrics::new();
        assert!(!metrics.is_ready(), "not ready before the first try");
        let waiting = acquire(&mut b, &metrics);
        tokio::pin!(waiting);
        let for_a_while = |secs| tokio::time::sleep(Duration::from_secs(secs));
        tokio::select! {
            _ = &mut waiting => panic!("took a Lease held and renewed"),
            _ = for_a_while(5) => {}
        }
        assert!(metrics.is_ready());
        fake.lock().unwrap().fail_leases = true;
        tokio::select! {
            _ = &mut waiting => panic!("took a Lease it cannot read"),
            _ = for_a_while(5) => {}
        }
        assert!(!metrics.is_ready());
    }

    /// Virtual time: the test runs in milliseconds however long the lease.
    #[tokio::test(start_paused = true)]
    async fn a_leader_that_cannot_renew_stands_down_before_the_lease_ends_and_competes_again() {
        let (client, fake) = fake_api::start();
        let mut a = Elector::new(client.clone(), "crd-audit", "crd-audit", "a");
        let mut b = Elector::new(client, "crd-audit", "crd-audit", "b");
        assert!(a.try_acquire_or_renew().await.unwrap());
        assert!(!b.try_acquire_or_renew().await.unwrap());
        // An outage: the leader's renewals fail.
        fake.lock().unwrap().fail_leases = true;
        let started = Instant::now();
        keep_leading(&mut a).await;
        let stood_down = started.elapsed();
        assert!(
            stood_down >= RENEW_DEADLINE && stood_down < LEASE_DURATION,
            "{stood_down:?}"
        );
        // The standby takes over only after a whole lease duration without renewal.
        fake.lock().unwrap().fail_leases = false;
        assert!(!b.try_acquire_or_renew().await.unwrap());
        tokio::time::sleep(LEASE_DURATION + RETRY).await;
        assert!(b.try_acquire_or_renew().await.unwrap());
        let holder = fake.lock().unwrap().lease.as_ref().unwrap()["spec"]["holderIdentity"].clone();
        assert_eq!(holder, "b");
        // The old leader competes again and waits as a standby.
        assert!(!a.try_acquire_or_renew().await.unwrap());
        // A release frees the Lease at once.
        b.release().await;
        assert!(a.try_acquire_or_renew().await.unwrap());
    }

    /// A process that finds the Lease under its own identity, held by the process it replaces
    /// (a container restarted after SIGKILL: nothing was released), waits for the lease to
    /// expire as any replica does; one that acquired it renews it.
    #[tokio::test(start_paused = true)]
    async fn a_restarted_process_waits_for_its_predecessors_lease_to_expire() {
        let (client, _fake) = fake_api::start();
        let mut killed = Elector::new(client.clone(), "crd-audit", "crd-audit", "pod-a");
        assert!(killed.try_acquire_or_renew().await.unwrap());
        assert!(
            killed.try_acquire_or_renew().await.unwrap(),
            "a holder renews"
        );
        drop(killed);
        let mut restarted = Elector::new(client, "crd-audit", "crd-audit", "pod-a");
        let started = Instant::now();
        while !restarted.try_acquire_or_renew().await.unwrap() {
            tokio::time::sleep(RETRY).await;
        }
        let waited = started.elapsed();
        assert!(
            waited > LEASE_DURATION && waited <= LEASE_DURATION + RETRY,
            "{waited:?}"
        );
        assert!(restarted.try_acquire_or_renew().await.unwrap());
    }
}
