//! The tracked CRDs of a leadership term, and the one owner of their state.
//!
//! [`CrdStates`] holds every audited CRD's [`Tracked`] state in a map no other module can
//! reach. The watches, the object audits, the reconciles and the report writer tell it what
//! happened, each through a method named for the event (`new_revision`, `audit_completed`,
//! `object_changed`, `report_written`, ...); it applies the decision (`decisions`, pure and
//! tested apart), and decides whom to wake: the Controller, to reconcile a CRD whose report
//! may now say something else (`reconcile_on`), and the policy report writers. Nothing is
//! woken by what a reconcile or the report writer did themselves (a revision read in a
//! reconcile, a report written): the reconcile goes on to bring the report up to date, and a
//! write changes nothing a report says. Readers see a tracked CRD through [`CrdStates::read`]
//! and `Tracked`'s getters only; the fields are `state`'s, so the compiler holds the rule that
//! one owner changes them. The lock is held only for short in-memory work, never across a
//! network call or a validation.
//!
//! Nothing outside `state` can reach the map:
//!
//! ```compile_fail
//! let (states, _triggered) = crd_audit::operator::state::CrdStates::new();
//! let map = states.lock(); // private: tell the states what happened instead
//! ```
//!
//! nor change a tracked CRD:
//!
//! ```compile_fail
//! fn clear(t: &mut crd_audit::operator::state::Tracked) {
//!     t.blocked = None; // `state`'s field: readers use the getters
//! }
//! ```
//!
//! while reading it is open to all:
//!
//! ```
//! let (states, _triggered) = crd_audit::operator::state::CrdStates::new();
//! assert_eq!(states.read("things.example.com", |t| t.epoch()), None);
//! ```

mod decisions;
mod tracked;

pub use decisions::{Earlier, Effect, Revision, Seen};
pub use tracked::{Blocked, ReportedInvalid, Tracked};

use crate::audit::judge::{Audit, Judgement, Key};
use crate::audit::schema_audit::SchemaAuditStatus;
use crate::operator::status::conversions::Conversions;
use crate::operator::status::{ConditionEvent, LastChange};
use crd_audit_engine::{CheckReport, Crd, size_limits};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::ObjectRef;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// A CRD as the Controller keeps it: its metadata (without managed fields or annotations).
pub type CrdMeta = PartialObjectMeta<CustomResourceDefinition>;

/// The tracked CRDs' states, and whom a change wakes.
pub struct CrdStates {
    tracked: Mutex<BTreeMap<String, Tracked>>,
    /// The CRDs whose state changed, for the Controller to reconcile (`reconcile_on`).
    triggers: mpsc::UnboundedSender<ObjectRef<CrdMeta>>,
    /// Counts what the policy report writers look at changing (a CRD's state, the first
    /// LIST done, what `auto` knows of OpenReports): each writer sleeps until it moves or
    /// one of its own deadlines comes, and misses no change made while it was writing.
    policy_changed: tokio::sync::watch::Sender<u64>,
    /// The first LIST of CRDs is done: a CRD missing from the states is gone, not unseen.
    listed: AtomicBool,
}

/// The CRDs [`CrdStates`] wakes, for the Controller of the term to reconcile
/// (`reconcile_on`): the receiving end of the channel [`CrdStates::new`] makes.
pub struct Triggered(mpsc::UnboundedReceiver<ObjectRef<CrdMeta>>);

impl Triggered {
    /// The names, as the Controller takes its triggers.
    pub fn into_stream(self) -> impl futures::Stream<Item = ObjectRef<CrdMeta>> + Send {
        futures::stream::unfold(self.0, |mut rx| async move {
            let r = rx.recv().await?;
            Some((r, rx))
        })
    }
}

/// What the reconcile needs to bring a report up to date (`reports::due`).
pub struct Observed {
    /// The status the report should have now (without times).
    pub status: SchemaAuditStatus,
    /// The CRD's shell (names, versions), for the metrics and the Events.
    pub crd: Arc<Crd>,
    /// The Events of the conditions that changed since the last ones computed.
    pub events: Vec<ConditionEvent>,
    /// The report says this already.
    pub written: bool,
    /// The first complete LIST of the revision's objects is judged.
    pub audited: bool,
    /// When the revision began to be tracked.
    pub since: tokio::time::Instant,
    /// The report has findings (its lane in the writer's queue).
    pub has_findings: bool,
}

/// A report to write, built from the state when the writer's turn comes.
pub struct ToWrite {
    /// The status, its conditions' times stamped.
    pub status: SchemaAuditStatus,
    /// The status's fingerprint (without times), recorded once written.
    pub fingerprint: u64,
    /// The audit it describes.
    pub epoch: u64,
    /// The revision, to record in the report's spec.
    pub revision: Arc<crate::packed_crd::PackedCrd>,
    /// The CRD's shell (name, uid: the report's owner).
    pub crd: Arc<Crd>,
    pub has_findings: bool,
}

impl CrdStates {
    /// No CRD tracked yet; the receiving end of what it wakes the Controller for.
    pub fn new() -> (Arc<CrdStates>, Triggered) {
        let (triggers, triggered) = mpsc::unbounded_channel();
        let states = Arc::new(CrdStates {
            tracked: Mutex::new(BTreeMap::new()),
            triggers,
            policy_changed: tokio::sync::watch::Sender::new(0),
            listed: AtomicBool::new(false),
        });
        (states, Triggered(triggered))
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Tracked>> {
        self.tracked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The Controller reconciles `crd` (its report may say something else now), and the
    /// policy report writers look again.
    fn wake(&self, crd: &str) {
        // Fails only once the Controller has stopped.
        let _ = self.triggers.send(ObjectRef::new(crd));
        self.wake_policy_writers();
    }

    fn wake_policy_writers(&self) {
        self.policy_changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Applies `f` to the tracked CRD `crd` if its current audit is the one of `epoch` (the
    /// one place that test is made) and wakes its reconcile: `None` when the CRD went away or
    /// a newer revision (or a restarted audit) took over, and whatever the caller was doing
    /// is stale.
    fn if_current<R>(&self, crd: &str, epoch: u64, f: impl FnOnce(&mut Tracked) -> R) -> Option<R> {
        let r = self
            .lock()
            .get_mut(crd)
            .filter(|t| t.epoch() == epoch)
            .map(f);
        if r.is_some() {
            self.wake(crd);
        }
        r
    }

    // ---------------------------------------------------------------- reading

    /// Reads the tracked CRD `crd`, if any.
    pub fn read<R>(&self, crd: &str, f: impl FnOnce(&Tracked) -> R) -> Option<R> {
        self.lock().get(crd).map(f)
    }

    /// Reads every tracked CRD, by name.
    pub fn read_all<R>(&self, f: impl FnOnce(&BTreeMap<String, Tracked>) -> R) -> R {
        f(&self.lock())
    }

    /// Whether `crd` is tracked.
    pub fn tracks(&self, crd: &str) -> bool {
        self.lock().contains_key(crd)
    }

    /// The names of the tracked CRDs.
    pub fn names(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// How many CRDs are tracked.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the CRD the watch shows (its UID and resourceVersion) must be read: it is not
    /// tracked, or not as that revision.
    pub fn needs_read(&self, crd: &str, uid: Option<&str>, resource_version: Option<&str>) -> bool {
        self.lock().get(crd).is_none_or(|t| {
            uid != Some(t.crd().uid.as_str()) || resource_version != t.resource_version()
        })
    }

    /// The audit the tracked CRD needs: its epoch and revision.
    pub fn current_audit(&self, crd: &str) -> Option<(u64, Arc<crate::packed_crd::PackedCrd>)> {
        self.read(crd, |t| (t.epoch(), t.revision().clone()))
    }

    /// The uid of the invalid object `key` of `crd`, if known.
    pub fn invalid_uid(&self, crd: &str, key: &Key) -> Option<String> {
        self.lock()
            .get(crd)
            .and_then(|t| t.audit().invalid.get(key).map(|i| i.uid.clone()))
            .filter(|u| !u.is_empty())
    }

    /// Whether the first LIST of CRDs is reconciled (a CRD missing is gone, not unseen).
    pub fn listed(&self) -> bool {
        self.listed.load(Ordering::Relaxed)
    }

    /// What wakes a policy report writer.
    pub fn policy_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.policy_changed.subscribe()
    }

    // ---------------------------------------------------------------- the CRDs, read

    /// A CRD was read: how it relates to what is tracked. The same revision and status read
    /// again (another resourceVersion: its labels, say) is recorded as read, and nothing else
    /// changes.
    pub fn seen(&self, crd: &Crd, resource_version: Option<String>) -> Seen {
        let mut tracked = self.lock();
        let seen = decisions::on_crd(tracked.get(&crd.name), crd);
        if matches!(seen, Seen::Unchanged)
            && let Some(t) = tracked.get_mut(&crd.name)
        {
            decisions::on_reread(t, resource_version);
        }
        seen
    }

    /// The tracked CRD's status changed (stored versions, the server's conditions), checked
    /// again; the audit of its objects stands. The reconcile that read it goes on to its
    /// report: only the policy report writers are woken.
    pub fn status_changed(
        &self,
        crd: &Crd,
        check: CheckReport,
        sizes: Vec<size_limits::Finding>,
        resource_version: Option<String>,
    ) {
        if let Some(t) = self.lock().get_mut(&crd.name) {
            decisions::on_status(t, crd, check, sizes, resource_version);
        }
        self.wake_policy_writers();
    }

    /// A new revision of `name` (or a CRD seen for the first time) is tracked, under a new
    /// epoch: results of the audits of earlier ones are dropped from now on. What history it
    /// carries is `decisions::track`'s to say. The reconcile that read it starts its audit.
    pub fn new_revision(
        &self,
        name: &str,
        new: Revision,
        change: Option<LastChange>,
        earlier: Option<Earlier>,
        resource_version: Option<String>,
    ) {
        let mut tracked = self.lock();
        let previous = tracked.remove(name);
        let mut t = decisions::track(new, previous, change, earlier);
        decisions::on_reread(&mut t, resource_version);
        tracked.insert(name.to_string(), t);
        drop(tracked);
        self.wake_policy_writers();
    }

    /// The CRD went away (or is no longer audited): its state goes, and with it what its
    /// metrics were about: the names of its versions, if it was tracked.
    pub fn crd_gone(&self, name: &str) -> Option<Vec<String>> {
        let t = self.lock().remove(name)?;
        let versions = t.crd().versions.iter().map(|v| v.name.clone()).collect();
        drop(t); // outside the lock
        self.wake_policy_writers();
        Some(versions)
    }

    /// The term ends: every state goes (dropped outside the lock).
    pub fn forget_all(&self) {
        let all = std::mem::take(&mut *self.lock());
        drop(all);
    }

    /// The first LIST of CRDs is reconciled.
    pub fn first_list_reconciled(&self) {
        self.listed.store(true, Ordering::Relaxed);
        self.wake_policy_writers();
    }

    /// Something the CRDs' states do not hold changed for every CRD (the API server
    /// recovered): every tracked CRD is reconciled again.
    pub fn wake_all(&self) {
        for name in self.names() {
            self.wake(&name);
        }
    }

    /// Something the policy report writers look at, outside the states, changed (what
    /// `auto` knows of OpenReports).
    pub fn policy_api_changed(&self) {
        self.wake_policy_writers();
    }

    // ---------------------------------------------------------------- the object audits

    /// The revision `epoch` has no storage version: no objects to audit. `false` when
    /// stale.
    pub fn no_objects(&self, crd: &str, epoch: u64) -> bool {
        self.if_current(crd, epoch, decisions::on_no_objects)
            .is_some()
    }

    /// The objects of revision `epoch` cannot be read or judged (`blocked` says why).
    /// `false` when stale.
    pub fn audit_blocked(&self, crd: &str, epoch: u64, blocked: Blocked) -> bool {
        self.if_current(crd, epoch, |t| decisions::on_blocked(t, blocked))
            .is_some()
    }

    /// A complete LIST of revision `epoch`'s objects, judged: it replaces the audit. The
    /// effects to carry out; `None` when stale.
    pub fn audit_completed(
        &self,
        crd: &str,
        epoch: u64,
        fresh: Audit,
        secs: f64,
        now: Time,
    ) -> Option<Vec<Effect>> {
        self.if_current(crd, epoch, |t| {
            decisions::on_audit_complete(t, fresh, secs, now)
        })
    }

    /// One watched object of revision `epoch` changed, judged. The effects to carry out;
    /// `None` when stale.
    pub fn object_changed(&self, crd: &str, epoch: u64, j: Judgement) -> Option<Vec<Effect>> {
        self.if_current(crd, epoch, |t| decisions::on_object(t, j))
    }

    /// An object of revision `epoch` was deleted. `false` when stale.
    pub fn object_deleted(&self, crd: &str, epoch: u64, key: &Key, version: &str) -> bool {
        self.if_current(crd, epoch, |t| {
            decisions::on_object_deleted(t, key, version)
        })
        .is_some()
    }

    /// The server answered the annotation of an object of revision `epoch`.
    pub fn annotated(
        &self,
        crd: &str,
        epoch: u64,
        version: &str,
        key: Key,
        refused: bool,
        written: bool,
    ) {
        self.if_current(crd, epoch, |t| {
            decisions::on_annotated(t, version, key, refused, written)
        });
    }

    /// The audit task of `crd` ended when it should not have: the Controller reconciles the
    /// CRD, which starts it again.
    pub fn audit_died(&self, crd: &str) {
        self.wake(crd);
    }

    /// A tracked CRD is missing from a LIST of the CRDs (gone while the watch was down): the
    /// Controller reconciles it and finds it gone.
    pub fn not_listed(&self, crd: &str) {
        self.wake(crd);
    }

    /// A storage migration of `crd` ended: the Controller reconciles the CRD (its report
    /// says what the migration did once the server says it).
    pub fn migration_ended(&self, crd: &str) {
        self.wake(crd);
    }

    // ---------------------------------------------------------------- conversion round trips

    /// Where the conversion round trips of `crd` stand (`None`: not checked, the CRD is not
    /// converted by a webhook), told for its generation `generation`: recorded while the
    /// tracked CRD is that generation (else the news is stale), and its reconcile woken when
    /// that changes what the report says. A check that begins does not hide what an earlier
    /// one found.
    pub fn conversions(&self, crd: &str, generation: i64, now: Option<Conversions>) {
        let mut tracked = self.lock();
        let Some(t) = tracked
            .get_mut(crd)
            .filter(|t| t.crd().generation == generation)
        else {
            return;
        };
        if matches!(now, Some(Conversions::Checking)) && t.conversions.is_some() {
            return;
        }
        if t.conversions == now {
            return;
        }
        t.conversions = now;
        drop(tracked);
        self.wake(crd);
    }

    // ---------------------------------------------------------------- the reports

    /// The report the tracked CRD should have now: its metrics and the Events of its
    /// conditions that changed (computed once the audit is complete), whether it is written
    /// already. `max_listed`: `maxListedObjects`.
    pub fn observe(&self, crd: &str, max_listed: usize) -> Option<Observed> {
        let mut tracked = self.lock();
        let t = tracked.get_mut(crd)?;
        let status = t.desired_status(max_listed);
        let events = decisions::on_report_status(t, &status);
        let written = t.written() == Some(crate::operator::status::fingerprint(&status));
        Some(Observed {
            crd: t.crd().clone(),
            events,
            written,
            audited: t.audited(),
            since: t.since(),
            has_findings: t.has_findings(),
            status,
        })
    }

    /// The report of `crd` to write now, its conditions' times stamped (kept while a
    /// condition's status stays, `now` when it changes); `None` when it is not tracked or
    /// what it says was written already.
    pub fn report_to_write(&self, crd: &str, max_listed: usize, now: &Time) -> Option<ToWrite> {
        let mut tracked = self.lock();
        let t = tracked.get_mut(crd)?;
        let mut status = t.desired_status(max_listed);
        let fingerprint = crate::operator::status::fingerprint(&status);
        if t.written() == Some(fingerprint) {
            return None;
        }
        decisions::on_report_built(t, &mut status, now);
        Some(ToWrite {
            status,
            fingerprint,
            epoch: t.epoch(),
            revision: t.revision().clone(),
            crd: t.crd().clone(),
            has_findings: t.has_findings(),
        })
    }

    /// The report of revision `epoch` was written with this status. Nobody is woken: a
    /// report written changes nothing a report says.
    pub fn report_written(&self, crd: &str, epoch: u64, fingerprint: u64) {
        if let Some(t) = self.lock().get_mut(crd).filter(|t| t.epoch() == epoch) {
            decisions::on_report_written(t, fingerprint);
        }
    }

    /// The reports of the CRDs `missing` names are gone (deleted behind the operator's back,
    /// or missing after a relist): they are written again. Wakes those CRDs.
    pub fn reports_gone(&self, missing: impl Fn(&str) -> bool) {
        let mut gone = Vec::new();
        for (name, t) in self.lock().iter_mut() {
            if t.written().is_some() && missing(name) {
                decisions::on_report_gone(t);
                gone.push(name.clone());
            }
        }
        for name in gone {
            self.wake(&name);
        }
    }

    /// The report CRD is served again: every report went with it and is written again.
    /// Wakes every CRD.
    pub fn every_report_gone(&self) {
        for t in self.lock().values_mut() {
            decisions::on_report_gone(t);
        }
        self.wake_all();
    }
}

#[cfg(test)]
impl CrdStates {
    /// For tests: the audit of `crd` begins again (nothing judged yet).
    pub fn audit_restarted_for_tests(&self, crd: &str) {
        if let Some(t) = self.lock().get_mut(crd) {
            decisions::audit_restarted_for_tests(t);
        }
        self.wake_policy_writers();
    }
}

/// For tests: the states with their trigger channel open and unread.
#[cfg(test)]
pub fn for_tests() -> Arc<CrdStates> {
    let (states, triggered) = CrdStates::new();
    std::mem::forget(triggered);
    states
}
