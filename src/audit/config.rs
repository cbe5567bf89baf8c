//! The operator's configuration file (`config/crd-audit.yaml`): a serde struct, every key
//! optional, unknown keys refused with an error naming the key and the file, values checked.

mod webhook;

use serde::Deserialize;
use std::time::Duration;
pub use webhook::{
    DEFAULT_GATE_TIMEOUT_SECONDS, FailurePolicy, LabelRequirement, LabelSelector,
    MAX_GATE_TIMEOUT_SECONDS, MAX_MATCH_CONDITIONS, MatchCondition, SelectorOperator,
    max_gate_budget,
};
use webhook::{match_conditions_error, selector_error};

/// The largest `maxListedObjects`: with every message bounded, a report of this many
/// entries stays far below etcd's request limit (1.5 MiB).
pub const MAX_LISTED_OBJECTS: usize = 1000;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Config {
    /// Globs of CRD groups to audit (empty: all).
    pub include_groups: Vec<String>,
    /// Globs of CRD groups not to audit.
    pub exclude_groups: Vec<String>,
    /// Globs of namespaces whose objects are not audited.
    pub exclude_namespaces: Vec<String>,
    pub annotate_objects: bool,
    pub emit_events: bool,
    pub max_listed_objects: usize,
    pub redact_values: bool,
    /// Go duration (`1h`, `30m`) or seconds.
    #[serde(deserialize_with = "duration")]
    pub full_resync_interval: Duration,
    pub cel_enabled: bool,
    /// Client-side limit of write requests a second, and their burst.
    pub api_qps: f64,
    pub api_burst: u32,
    /// Also write `wgpolicyk8s.io/v1alpha2` PolicyReports (one per namespace with invalid
    /// objects) and a ClusterPolicyReport (cluster-scoped objects), for Policy Reporter and
    /// other readers of that API. Needs their CRDs installed (crd-audit never installs them).
    pub policy_reports: bool,
    /// Which policy-report API the reports are written to (`policyReports: true`).
    pub policy_reports_api: PolicyReportsApi,
    /// The memory (MiB, estimated) of compiled CRD validators kept between judgements; a
    /// CRD whose validator is not kept is compiled again when its objects change.
    #[serde(rename = "validatorCacheMiB")]
    pub validator_cache_mib: usize,
    /// The CRD change gate: what the admission webhook does with a CRD change that makes
    /// stored objects invalid.
    pub gate: GateMode,
    /// Where the API server reaches the gate, for an operator run outside the cluster
    /// (default: the Service `crd-audit` of the operator's namespace).
    pub gate_url: Option<String>,
    /// A directory with `tls.crt`, `tls.key` and `ca.crt` (as cert-manager writes them) for
    /// the gate's TLS (default: a self-managed CA and certificate in a Secret).
    pub gate_cert_dir: Option<std::path::PathBuf>,
    /// How long the gate judges stored objects before it answers with what it has (below
    /// `gateTimeoutSeconds`).
    #[serde(deserialize_with = "duration")]
    pub gate_budget: Duration,
    /// The webhook's `timeoutSeconds`: how long the API server waits for the gate's answer.
    pub gate_timeout_seconds: u32,
    /// The webhook's `failurePolicy`: what the API server does when the gate cannot answer.
    pub gate_failure_policy: FailurePolicy,
    /// The webhook's `objectSelector`: only CRDs whose labels match are sent to the gate.
    pub gate_object_selector: Option<LabelSelector>,
    /// The webhook's `matchConditions` (CEL): only requests that match them all are sent to
    /// the gate. Written only to API servers that serve them (1.28 and newer).
    pub gate_match_conditions: Vec<MatchCondition>,
    /// Per-CRD metric series (about 15 a CRD). `false` sums them into one cluster-wide series
    /// each (`crd=""`), for very large clusters.
    pub per_crd_metrics: bool,
    /// The leader migrates a CRD's stored objects to its storage version on its own, once
    /// none of them is stuck, and then prunes `status.storedVersions` to it (what `crd-audit
    /// migrate` does), paced by `apiQps`.
    pub migrate_stored_versions: bool,
    /// The leader round-trips the stored objects of every CRD converted by a webhook through
    /// it (what `crd-audit roundtrip` does) after each change of the CRD and at the full
    /// resync, paced by `apiQps` after every write: the report's `ConversionsLossless`.
    pub audit_conversions: bool,
}

/// `gate`: the CRD change gate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    /// No webhook.
    #[default]
    Off,
    /// Changes are allowed, with admission warnings naming the objects they strand.
    Warn,
    /// A change that makes a stored object stuck is refused.
    Deny,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            include_groups: Vec::new(),
            exclude_groups: Vec::new(),
            exclude_namespaces: Vec::new(),
            annotate_objects: false,
            emit_events: true,
            max_listed_objects: 50,
            redact_values: true,
            full_resync_interval: Duration::from_secs(3600),
            cel_enabled: true,
            api_qps: 20.0,
            api_burst: 50,
            policy_reports: false,
            policy_reports_api: PolicyReportsApi::Auto,
            validator_cache_mib: 16,
            gate: GateMode::Off,
            gate_url: None,
            gate_cert_dir: None,
            gate_budget: DEFAULT_GATE_BUDGET,
            gate_timeout_seconds: DEFAULT_GATE_TIMEOUT_SECONDS,
            gate_failure_policy: FailurePolicy::Ignore,
            gate_object_selector: None,
            gate_match_conditions: Vec::new(),
            per_crd_metrics: true,
            migrate_stored_versions: false,
            audit_conversions: false,
        }
    }
}

/// `policyReportsApi`: where the policy reports go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum PolicyReportsApi {
    /// OpenReports (`openreports.io/v1alpha1` Report and ClusterReport) when its CRDs are
    /// installed, else `wgpolicyk8s.io/v1alpha2` (PolicyReport and ClusterPolicyReport).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// OpenReports only.
    #[serde(rename = "openreports")]
    OpenReports,
    /// `wgpolicyk8s.io/v1alpha2` only.
    #[serde(rename = "wgpolicyk8s")]
    WgPolicy,
    /// Both APIs, the same results in each.
    #[serde(rename = "both")]
    Both,
}

/// `gateBudget` by default: the webhook's timeout is 10 s, and the answer must leave in time.
pub const DEFAULT_GATE_BUDGET: Duration = Duration::from_secs(8);

/// The largest `validatorCacheMiB` (64 GiB).
pub const MAX_VALIDATOR_CACHE_MIB: usize = 64 << 10;

/// The longest `fullResyncInterval` (30 days): longer ones would overflow the clock
/// arithmetic of the timers, and a resync that rare is no resync.
pub const MAX_RESYNC_INTERVAL: Duration = Duration::from_secs(30 * 24 * 3600);

fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    duration_of(&value).map_err(serde::de::Error::custom)
}

/// A duration given as a Go duration (`1h`, `30m`) or a whole number of seconds.
fn duration_of(value: &serde_json::Value) -> Result<Duration, String> {
    let expected =
        "expected a Go duration such as 1h or 30m, or a number of seconds, from 1m to 720h";
    match value {
        serde_json::Value::Number(n) => n
            .as_u64()
            .map(Duration::from_secs)
            .ok_or_else(|| format!("invalid duration {n} ({expected})")),
        serde_json::Value::String(t) => crd_audit_engine::parse::duration(t)
            .ok()
            .filter(|ns| *ns >= 0)
            .map(|ns| Duration::from_nanos(ns.unsigned_abs()))
            .ok_or_else(|| format!("invalid duration {t:?} ({expected})")),
        other => Err(format!(
            "invalid duration {} ({expected})",
            crd_audit_engine::render::json(other)
        )),
    }
}

/// The allowed values of each numeric key, as its errors say them.
const RANGES: [(&str, &str); 7] = [
    ("apiQps", "0.01 to 10000 writes a second"),
    ("apiBurst", "1 to 10000"),
    ("maxListedObjects", "0 to 1000: a report must fit in etcd"),
    ("validatorCacheMiB", "0 to 65536 (64 GiB)"),
    ("fullResyncInterval", "1m to 720h"),
    (
        "gateBudget",
        "100ms to 9s with the default gateTimeoutSeconds of 10: at most nine tenths of it",
    ),
    ("gateTimeoutSeconds", "1 to 30: the API server's limits"),
];

/// The allowed range of a numeric key.
fn range(key: &str) -> &'static str {
    RANGES
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, r)| r)
}

/// `key: value is out of range (range)`.
fn out_of_range(key: &str, value: impl std::fmt::Display) -> String {
    format!("{key}: {value} is out of range ({})", range(key))
}

/// The error of a value that is not the number a key takes (`whole`: an integer), or one
/// beyond its type.
fn not_a_number(key: &str, value: &serde_json::Value, whole: bool) -> String {
    let shown = crd_audit_engine::render::json(value);
    let what = if whole { "a whole number" } else { "a number" };
    match value.as_f64() {
        Some(f) if whole && f.fract() != 0.0 => {
            format!("{key}: {shown} is not a whole number ({})", range(key))
        }
        Some(_) => out_of_range(key, shown),
        None => format!("{key}: {shown} is not {what} ({})", range(key)),
    }
}

/// The error of one key's value, read alone as its field reads it, so that the message
/// names the key, the value and what is allowed (serde's own errors do not say where they
/// are).
fn key_error(key: &str, value: &serde_json::Value) -> Option<String> {
    use serde_json::from_value as read;
    let v = value.clone();
    let e = match key {
        "includeGroups" | "excludeGroups" | "excludeNamespaces" => {
            read::<Vec<String>>(v).err().map(|e| e.to_string())
        }
        "annotateObjects"
        | "emitEvents"
        | "redactValues"
        | "celEnabled"
        | "policyReports"
        | "migrateStoredVersions"
        | "auditConversions" => read::<bool>(v).err().map(|e| e.to_string()),
        "maxListedObjects" | "validatorCacheMiB" => {
            return read::<usize>(v)
                .err()
                .map(|_| not_a_number(key, value, true));
        }
        "apiBurst" | "gateTimeoutSeconds" => {
            return read::<u32>(v).err().map(|_| not_a_number(key, value, true));
        }
        "apiQps" => {
            return read::<f64>(v)
                .err()
                .map(|_| not_a_number(key, value, false));
        }
        "policyReportsApi" => read::<PolicyReportsApi>(v).err().map(|e| e.to_string()),
        "fullResyncInterval" => duration_of(value).err(),
        "gateBudget" => duration_of(value).err().map(|_| {
            format!(
                "{} is not a duration ({})",
                crd_audit_engine::render::json(value),
                range(key)
            )
        }),
        "gate" => read::<GateMode>(v).err().map(|e| e.to_string()),
        "gateUrl" => match value.as_str() {
            Some(u) if u.starts_with("https://") && u.len() > "https://".len() => None,
            _ => Some(format!(
                "{} is not an https:// URL (the API server calls webhooks over TLS only)",
                crd_audit_engine::render::json(value)
            )),
        },
        "gateCertDir" => read::<String>(v).err().map(|e| e.to_string()),
        "gateFailurePolicy" => read::<FailurePolicy>(v).err().map(|e| e.to_string()),
        "gateObjectSelector" => read::<Option<LabelSelector>>(v)
            .err()
            .map(|e| e.to_string())
            .or_else(|| selector_error(value)),
        "gateMatchConditions" => read::<Vec<MatchCondition>>(v)
            .err()
            .map(|e| e.to_string())
            .or_else(|| match_conditions_error(value)),
        _ => None,
    }?;
    Some(format!("{key}: {e}"))
}

impl Config {
    /// Reads the configuration from YAML text: one document, a map (or empty).
    pub fn parse(name: &str, text: &str) -> Result<Config, String> {
        let mut docs = crd_audit_engine::load::parse_str(name, text).into_iter();
        let first = match docs.next() {
            None => return Ok(Config::default()),
            Some(d) => d.map_err(|e| e.to_string())?,
        };
        if let Some(extra) = docs.next() {
            let line = extra.as_ref().map_or(0, |d| d.line);
            return Err(format!(
                "{name}: line {line}: a second YAML document; the configuration is one document"
            ));
        }
        let value = match first.value {
            serde_json::Value::Null => return Ok(Config::default()),
            v @ serde_json::Value::Object(_) => v,
            _ => return Err(format!("{name}: the configuration must be a map")),
        };
        if let Some(e) = value
            .as_object()
            .into_iter()
            .flatten()
            .find_map(|(k, v)| key_error(k, v))
        {
            return Err(format!("{name}: {e}"));
        }
        let c: Config = serde_json::from_value(value).map_err(|e| format!("{name}: {e}"))?;
        c.check().map_err(|e| format!("{name}: {e}"))?;
        Ok(c)
    }

    /// Values that would break the operator are refused, not clamped.
    fn check(&self) -> Result<(), String> {
        if !(self.api_qps.is_finite() && (0.01..=10_000.0).contains(&self.api_qps)) {
            return Err(out_of_range("apiQps", format!("{:?}", self.api_qps)));
        }
        if self.api_burst == 0 || self.api_burst > 10_000 {
            return Err(out_of_range("apiBurst", self.api_burst));
        }
        if self.max_listed_objects > MAX_LISTED_OBJECTS {
            return Err(out_of_range("maxListedObjects", self.max_listed_objects));
        }
        if self.validator_cache_mib > MAX_VALIDATOR_CACHE_MIB {
            return Err(out_of_range("validatorCacheMiB", self.validator_cache_mib));
        }
        if self.full_resync_interval < Duration::from_secs(60) {
            return Err(format!(
                "fullResyncInterval: {:?} is below the minimum of 1m (1m to 720h)",
                self.full_resync_interval
            ));
        }
        if self.full_resync_interval > MAX_RESYNC_INTERVAL {
            return Err(format!(
                "fullResyncInterval: {}s is above the maximum of 720h (1m to 720h: 30 days)",
                self.full_resync_interval.as_secs()
            ));
        }
        if !(1..=MAX_GATE_TIMEOUT_SECONDS).contains(&self.gate_timeout_seconds) {
            return Err(out_of_range(
                "gateTimeoutSeconds",
                self.gate_timeout_seconds,
            ));
        }
        let max_budget = max_gate_budget(self.gate_timeout_seconds);
        if !(Duration::from_millis(100)..=max_budget).contains(&self.gate_budget) {
            return Err(format!(
                "gateBudget: {:?} is out of range (100ms to {:?}: nine tenths of \
                 gateTimeoutSeconds {}, so that the answer leaves before the API server stops \
                 waiting)",
                self.gate_budget, max_budget, self.gate_timeout_seconds
            ));
        }
        for (key, globs) in [
            ("includeGroups", &self.include_groups),
            ("excludeGroups", &self.exclude_groups),
            ("excludeNamespaces", &self.exclude_namespaces),
        ] {
            if let Some(g) = globs.iter().find(|g| g.is_empty()) {
                return Err(format!("{key}: an empty pattern ({g:?}) matches nothing"));
            }
        }
        Ok(())
    }

    /// Whether a CRD group is audited.
    pub fn audits_group(&self, group: &str) -> bool {
        self.group_filter().audits(group)
    }

    /// Whether objects of a namespace are audited.
    pub fn audits_namespace(&self, namespace: &str) -> bool {
        self.namespace_filter().audits(namespace)
    }

    /// `includeGroups` and `excludeGroups`, on their own.
    pub fn group_filter(&self) -> GroupFilter {
        GroupFilter {
            include: self.include_groups.clone(),
            exclude: self.exclude_groups.clone(),
        }
    }

    /// `excludeNamespaces`, on its own.
    pub fn namespace_filter(&self) -> NamespaceFilter {
        NamespaceFilter {
            exclude: self.exclude_namespaces.clone(),
        }
    }
}

/// Which CRD groups are audited (`includeGroups`, `excludeGroups`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupFilter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl GroupFilter {
    /// Whether CRDs of a group are audited.
    pub fn audits(&self, group: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|g| glob(g, group)))
            && !self.exclude.iter().any(|g| glob(g, group))
    }
}

/// Which namespaces' objects are audited (`excludeNamespaces`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamespaceFilter {
    exclude: Vec<String>,
}

impl NamespaceFilter {
    /// Whether objects of a namespace are audited.
    pub fn audits(&self, namespace: &str) -> bool {
        !self.exclude.iter().any(|g| glob(g, namespace))
    }
}

/// `*` matches any run of characters.
pub fn glob(pattern: &str, s: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == s,
        Some((head, rest)) => {
            let Some(tail) = s.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_keys() {
        let c = Config::parse(
            "c.yaml",
            "includeGroups: ['*.example.com']\nexcludeGroups: [internal.example.com]\nmaxListedObjects: 5\nfullResyncInterval: 30m\nredactValues: false\napiQps: 2.5\n",
        )
        .unwrap();
        assert_eq!(c.max_listed_objects, 5);
        assert_eq!(c.full_resync_interval, Duration::from_secs(1800));
        assert!(!c.redact_values);
        assert_eq!(c.api_qps, 2.5);
        assert!(!c.policy_reports);
        assert!(
            Config::parse("c.yaml", "policyReports: true")
                .unwrap()
                .policy_reports
        );
        assert_eq!(c.policy_reports_api, PolicyReportsApi::Auto);
        for (text, api) in [
            ("auto", PolicyReportsApi::Auto),
            ("openreports", PolicyReportsApi::OpenReports),
            ("wgpolicyk8s", PolicyReportsApi::WgPolicy),
            ("both", PolicyReportsApi::Both),
        ] {
            let c = Config::parse("c.yaml", &format!("policyReportsApi: {text}")).unwrap();
            assert_eq!(c.policy_reports_api, api, "{text}");
        }
        let e = Config::parse("c.yaml", "policyReportsApi: kyverno").unwrap_err();
        assert!(
            e.starts_with("c.yaml: policyReportsApi: unknown variant `kyverno`, expected one of"),
            "{e}"
        );
        assert!(c.audits_group("a.example.com"));
        assert!(!c.audits_group("internal.example.com"));
        assert!(!c.audits_group("other.io"));
        assert_eq!(Config::parse("c.yaml", "").unwrap(), Config::default());
        assert_eq!(
            Config::parse("c.yaml", "fullResyncInterval: 7200")
                .unwrap()
                .full_resync_interval,
            Duration::from_secs(7200)
        );
    }

    #[test]
    fn gate_keys() {
        let c = Config::default();
        assert_eq!(c.gate, GateMode::Off);
        assert_eq!(c.gate_budget, Duration::from_secs(8));
        let c = Config::parse(
            "c.yaml",
            "gate: deny\ngateUrl: https://127.0.0.1:9443/validate-crd\ngateCertDir: /certs\ngateBudget: 2500ms\n",
        )
        .unwrap();
        assert_eq!(c.gate, GateMode::Deny);
        assert_eq!(
            c.gate_url.as_deref(),
            Some("https://127.0.0.1:9443/validate-crd")
        );
        assert_eq!(c.gate_cert_dir, Some(std::path::PathBuf::from("/certs")));
        assert_eq!(c.gate_budget, Duration::from_millis(2500));
        assert_eq!(
            Config::parse("c.yaml", "gate: warn").unwrap().gate,
            GateMode::Warn
        );
        for (bad, says) in [
            ("gate: block", "c.yaml: gate: unknown variant `block`"),
            (
                "gateBudget: 10s",
                "c.yaml: gateBudget: 10s is out of range (100ms to 9s",
            ),
            (
                "gateBudget: 1ms",
                "c.yaml: gateBudget: 1ms is out of range (100ms to 9s",
            ),
            (
                "gateBudget: soon",
                "c.yaml: gateBudget: \"soon\" is not a duration (100ms to 9s",
            ),
            (
                "gateUrl: http://127.0.0.1/x",
                "c.yaml: gateUrl: \"http://127.0.0.1/x\" is not an https:// URL",
            ),
        ] {
            let e = Config::parse("c.yaml", bad).unwrap_err();
            assert!(e.starts_with(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_shipped_configuration_parses() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/crd-audit.yaml"),
        )
        .unwrap();
        assert_eq!(
            Config::parse("config/crd-audit.yaml", &text).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn refuses_unknown_keys_bad_values_and_second_documents() {
        let err = |text: &str| Config::parse("conf.yaml", text).unwrap_err();
        let e = err("annotateObject: true");
        assert!(
            e.starts_with("conf.yaml: unknown field `annotateObject`"),
            "{e}"
        );
        for bad in [
            "apiQps: 1e-300",
            "apiQps: -1",
            "apiQps: 0",
            "apiQps: .nan",
            "apiBurst: 0",
            "apiBurst: -3",
            "maxListedObjects: -1",
            "maxListedObjects: 100000",
            "validatorCacheMiB: -1",
            "validatorCacheMiB: 99999999999",
            "fullResyncInterval: -5m",
            "fullResyncInterval: 1s",
            "fullResyncInterval: soon",
            "emitEvents: maybe",
            "policyReports: yes please",
            "policyReportsApi: kyverno",
            "policyReportsApi: true",
            "excludeNamespaces: ['']",
            "[1, 2]",
        ] {
            let e = err(bad);
            assert!(e.starts_with("conf.yaml"), "{bad}: {e}");
        }
        // Each error names its key, and numbers are printed short.
        for (bad, said) in [
            (
                "apiBurst: -3",
                "conf.yaml: apiBurst: -3 is out of range (1 to 10000)",
            ),
            (
                "maxListedObjects: -3",
                "conf.yaml: maxListedObjects: -3 is out of range (0 to 1000",
            ),
            (
                "fullResyncInterval: -5",
                "conf.yaml: fullResyncInterval: invalid duration -5",
            ),
            (
                "fullResyncInterval: 18446744073709551615",
                "conf.yaml: fullResyncInterval: 18446744073709551615s is above the maximum",
            ),
            (
                "fullResyncInterval: 9000000000000000000",
                "conf.yaml: fullResyncInterval: 9000000000000000000s is above the maximum",
            ),
            (
                "fullResyncInterval: 2562047h",
                "conf.yaml: fullResyncInterval: 9223369200s is above the maximum",
            ),
            (
                "apiQps: 1e-300",
                "conf.yaml: apiQps: 1e-300 is out of range",
            ),
            (
                "emitEvents: 3",
                "conf.yaml: emitEvents: invalid type: integer `3`, expected a boolean",
            ),
        ] {
            let e = err(bad);
            assert!(e.starts_with(said), "{bad}: {e}");
        }
        // Every numeric key's error names the key, the value and the allowed range, whatever
        // is wrong with the value.
        for (bad, said) in [
            (
                "apiBurst: 99999999999",
                "apiBurst: 99999999999 is out of range (1 to 10000)",
            ),
            (
                "apiBurst: 20000",
                "apiBurst: 20000 is out of range (1 to 10000)",
            ),
            (
                "apiBurst: 2.5",
                "apiBurst: 2.5 is not a whole number (1 to 10000)",
            ),
            (
                "apiBurst: lots",
                "apiBurst: \"lots\" is not a whole number (1 to 10000)",
            ),
            (
                "maxListedObjects: 1e30",
                "maxListedObjects: 1e+30 is out of range (0 to 1000",
            ),
            (
                "maxListedObjects: 5000",
                "maxListedObjects: 5000 is out of range (0 to 1000",
            ),
            (
                "validatorCacheMiB: -1",
                "validatorCacheMiB: -1 is out of range (0 to 65536",
            ),
            (
                "validatorCacheMiB: 70000",
                "validatorCacheMiB: 70000 is out of range (0 to 65536",
            ),
            ("apiQps: 1e400", "apiQps: "),
            (
                "apiQps: nan",
                "apiQps: \"nan\" is not a number (0.01 to 10000 writes a second)",
            ),
            (
                "apiQps: 20000",
                "apiQps: 20000.0 is out of range (0.01 to 10000 writes a second)",
            ),
            (
                "fullResyncInterval: 1e30s",
                "fullResyncInterval: invalid duration \"1e30s\"",
            ),
            (
                "fullResyncInterval: 1s",
                "fullResyncInterval: 1s is below the minimum of 1m (1m to 720h)",
            ),
        ] {
            let e = err(bad);
            assert!(e.starts_with(&format!("conf.yaml: {said}")), "{bad}: {e}");
            let key = said.split(':').next().unwrap();
            assert!(e.contains(range(key)), "{bad}: {e} names no range");
        }
        assert_eq!(
            Config::parse("c.yaml", "fullResyncInterval: 720h")
                .unwrap()
                .full_resync_interval,
            MAX_RESYNC_INTERVAL
        );
        let e = err("emitEvents: true\n---\nemitEvents: false\n");
        assert!(e.contains("second YAML document"), "{e}");
        assert!(e.contains("line 3"), "{e}");
    }
}
