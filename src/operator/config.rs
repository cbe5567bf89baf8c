//! The operator's configuration file (`config/crd-audit.yaml`); every key is optional.

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Globs of CRD groups to audit (empty: all).
    pub include_groups: Vec<String>,
    /// Globs of CRD groups not to audit.
    pub exclude_groups: Vec<String>,
    pub exclude_namespaces: Vec<String>,
    pub annotate_objects: bool,
    pub emit_events: bool,
    pub max_listed_objects: usize,
    pub redact_values: bool,
    pub full_resync_interval_seconds: u64,
    pub cel_enabled: bool,
    /// Client-side limit of write requests a second, and their burst.
    pub api_qps: f64,
    pub api_burst: u32,
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
            full_resync_interval_seconds: 3600,
            cel_enabled: true,
            api_qps: 20.0,
            api_burst: 50,
        }
    }
}

/// Go-style duration (`1h`, `30m`, `45s`) in seconds.
fn seconds(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => crate::cel::stdlib::parse_duration(s)
            .ok()
            .map(|ns| (ns / 1_000_000_000) as u64),
        _ => None,
    }
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or("must be a list of strings")?
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| "must be a list of strings".to_string())
        })
        .collect()
}

impl Config {
    /// Reads the configuration from YAML text; unknown keys are errors (typos should not
    /// pass silently).
    pub fn parse(name: &str, text: &str) -> Result<Config, String> {
        let mut c = Config::default();
        let Some(doc) = crate::load::parse_str(name, text).into_iter().next() else {
            return Ok(c);
        };
        let v = doc.map_err(|e| e.to_string())?.value;
        let Value::Object(m) = v else {
            return if v.is_null() {
                Ok(c)
            } else {
                Err(format!("{name}: the configuration must be a map"))
            };
        };
        for (k, val) in &m {
            let bad = |e: String| format!("{name}: {k}: {e}");
            let flag = || {
                val.as_bool()
                    .ok_or_else(|| bad("must be true or false".into()))
            };
            match k.as_str() {
                "includeGroups" => c.include_groups = strings(val).map_err(bad)?,
                "excludeGroups" => c.exclude_groups = strings(val).map_err(bad)?,
                "excludeNamespaces" => c.exclude_namespaces = strings(val).map_err(bad)?,
                "annotateObjects" => c.annotate_objects = flag()?,
                "emitEvents" => c.emit_events = flag()?,
                "redactValues" => c.redact_values = flag()?,
                "celEnabled" => c.cel_enabled = flag()?,
                "maxListedObjects" => {
                    c.max_listed_objects =
                        val.as_u64().ok_or_else(|| bad("must be a number".into()))? as usize
                }
                "fullResyncInterval" => {
                    c.full_resync_interval_seconds =
                        seconds(val).ok_or_else(|| bad("must be a duration like 1h".into()))?
                }
                "apiQps" => {
                    c.api_qps = val.as_f64().ok_or_else(|| bad("must be a number".into()))?
                }
                "apiBurst" => {
                    c.api_burst = val.as_u64().ok_or_else(|| bad("must be a number".into()))? as u32
                }
                _ => return Err(bad("unknown key".into())),
            }
        }
        Ok(c)
    }

    /// Whether a CRD group is audited.
    pub fn audits_group(&self, group: &str) -> bool {
        (self.include_groups.is_empty() || self.include_groups.iter().any(|g| glob(g, group)))
            && !self.exclude_groups.iter().any(|g| glob(g, group))
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
    fn parses_keys_and_refuses_unknown_ones() {
        let c = Config::parse(
            "c.yaml",
            "includeGroups: ['*.example.com']\nexcludeGroups: [internal.example.com]\nmaxListedObjects: 5\nfullResyncInterval: 30m\nredactValues: false\n",
        )
        .unwrap();
        assert_eq!(c.max_listed_objects, 5);
        assert_eq!(c.full_resync_interval_seconds, 1800);
        assert!(!c.redact_values);
        assert!(c.audits_group("a.example.com"));
        assert!(!c.audits_group("internal.example.com"));
        assert!(!c.audits_group("other.io"));
        assert!(Config::parse("c.yaml", "annotateObject: true").is_err());
        assert_eq!(Config::parse("c.yaml", "").unwrap(), Config::default());
    }
}
