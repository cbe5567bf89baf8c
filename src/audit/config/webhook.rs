//! The configuration keys of the gate's webhook: `gateTimeoutSeconds`, `gateFailurePolicy`,
//! `gateObjectSelector` and `gateMatchConditions`, as the operator writes them into its
//! `ValidatingWebhookConfiguration`, and their checks (what the API server would refuse).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// `gateFailurePolicy`: what the API server does with a CRD change when the gate cannot
/// answer (down, unreachable, too slow).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum FailurePolicy {
    /// The change goes through unjudged.
    #[default]
    Ignore,
    /// The change is refused.
    Fail,
}

impl FailurePolicy {
    /// The value of the webhook's `failurePolicy` field.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Ignore => "Ignore",
            FailurePolicy::Fail => "Fail",
        }
    }
}

/// `gateObjectSelector`: a label selector on the CRDs sent to the gate, as Kubernetes writes
/// one (`matchLabels`, `matchExpressions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<LabelRequirement>,
}

/// One `matchExpressions` entry of a label selector.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelRequirement {
    pub key: String,
    pub operator: SelectorOperator,
    #[serde(default)]
    pub values: Vec<String>,
}

/// The operators of a label selector's expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl SelectorOperator {
    pub fn as_str(self) -> &'static str {
        match self {
            SelectorOperator::In => "In",
            SelectorOperator::NotIn => "NotIn",
            SelectorOperator::Exists => "Exists",
            SelectorOperator::DoesNotExist => "DoesNotExist",
        }
    }
}

/// One of `gateMatchConditions`: a named CEL expression over the admission request.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MatchCondition {
    pub name: String,
    pub expression: String,
}

/// The most `matchConditions` a webhook may have (the API server's limit).
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// `gateTimeoutSeconds` by default (the webhook's `timeoutSeconds`).
pub const DEFAULT_GATE_TIMEOUT_SECONDS: u32 = 10;

/// The API server accepts webhook timeouts from 1 to 30 seconds.
pub const MAX_GATE_TIMEOUT_SECONDS: u32 = 30;

/// The longest `gateBudget` for a webhook timeout: nine tenths of it (9 s of the default
/// 10 s), so that the answer leaves before the API server stops waiting.
pub fn max_gate_budget(timeout_seconds: u32) -> Duration {
    Duration::from_millis(u64::from(timeout_seconds) * 900)
}

/// What is wrong with a `gateObjectSelector` that reads as one: an operator's values that
/// the API server would refuse.
pub(super) fn selector_error(value: &serde_json::Value) -> Option<String> {
    let selector: LabelSelector = serde_json::from_value(value.clone()).ok()?;
    for (i, r) in selector.match_expressions.iter().enumerate() {
        let at = format!("matchExpressions[{i}]");
        if r.key.is_empty() {
            return Some(format!("{at}: an empty key"));
        }
        let needs_values = matches!(r.operator, SelectorOperator::In | SelectorOperator::NotIn);
        if needs_values && r.values.is_empty() {
            return Some(format!(
                "{at}: operator {} needs values",
                r.operator.as_str()
            ));
        }
        if !needs_values && !r.values.is_empty() {
            return Some(format!(
                "{at}: operator {} takes no values",
                r.operator.as_str()
            ));
        }
    }
    selector
        .match_labels
        .keys()
        .find(|k| k.is_empty())
        .map(|_| "matchLabels: an empty key".to_string())
}

/// What is wrong with `gateMatchConditions` that read as a list of them: names the API
/// server would refuse (empty, too long, not a qualified name, repeated), empty expressions,
/// more than it allows.
pub(super) fn match_conditions_error(value: &serde_json::Value) -> Option<String> {
    let conditions: Vec<MatchCondition> = serde_json::from_value(value.clone()).ok()?;
    if conditions.len() > MAX_MATCH_CONDITIONS {
        return Some(format!(
            "{} conditions, more than the API server allows ({MAX_MATCH_CONDITIONS})",
            conditions.len()
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let qualified = !c.name.is_empty()
            && c.name.len() <= 63
            && c.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            && c.name.as_bytes()[0].is_ascii_alphanumeric()
            && c.name.as_bytes()[c.name.len() - 1].is_ascii_alphanumeric();
        if !qualified {
            return Some(format!(
                "[{i}].name: {:?} is not a name the API server accepts (at most 63 letters, \
                 digits, '-', '_' and '.', starting and ending with a letter or digit)",
                c.name
            ));
        }
        if !seen.insert(c.name.as_str()) {
            return Some(format!("[{i}].name: {:?} is given twice", c.name));
        }
        if c.expression.trim().is_empty() {
            return Some(format!("[{i}].expression: empty"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;

    #[test]
    fn webhook_keys() {
        let c = Config::default();
        assert_eq!(c.gate_timeout_seconds, 10);
        assert_eq!(c.gate_failure_policy, FailurePolicy::Ignore);
        assert_eq!(c.gate_object_selector, None);
        assert!(c.gate_match_conditions.is_empty());
        let c = Config::parse(
            "c.yaml",
            "gateTimeoutSeconds: 30\ngateBudget: 27s\ngateFailurePolicy: Fail\n\
             gateObjectSelector:\n  matchLabels: {audit: \"yes\"}\n  matchExpressions:\n  \
             - {key: tier, operator: NotIn, values: [scratch]}\n  - {key: owner, operator: Exists}\n\
             gateMatchConditions:\n- {name: not-kube-system, expression: \"request.userInfo.username != 'system:admin'\"}\n",
        )
        .unwrap();
        assert_eq!(c.gate_timeout_seconds, 30);
        assert_eq!(c.gate_budget, Duration::from_secs(27));
        assert_eq!(c.gate_failure_policy, FailurePolicy::Fail);
        let selector = c.gate_object_selector.unwrap();
        assert_eq!(selector.match_labels["audit"], "yes");
        assert_eq!(
            selector.match_expressions[0],
            LabelRequirement {
                key: "tier".into(),
                operator: SelectorOperator::NotIn,
                values: vec!["scratch".into()]
            }
        );
        assert_eq!(
            selector.match_expressions[1].operator,
            SelectorOperator::Exists
        );
        assert_eq!(c.gate_match_conditions[0].name, "not-kube-system");
        // The budget stays below the timeout: nine tenths of it at most.
        assert_eq!(max_gate_budget(10), Duration::from_secs(9));
        assert_eq!(
            Config::parse("c.yaml", "gateTimeoutSeconds: 1\ngateBudget: 900ms")
                .unwrap()
                .gate_budget,
            Duration::from_millis(900)
        );
        for (bad, says) in [
            (
                "gateTimeoutSeconds: 0",
                "c.yaml: gateTimeoutSeconds: 0 is out of range (1 to 30",
            ),
            (
                "gateTimeoutSeconds: 31",
                "c.yaml: gateTimeoutSeconds: 31 is out of range (1 to 30",
            ),
            (
                "gateTimeoutSeconds: 2.5",
                "c.yaml: gateTimeoutSeconds: 2.5 is not a whole number (1 to 30",
            ),
            (
                "gateTimeoutSeconds: 5",
                "c.yaml: gateBudget: 8s is out of range (100ms to 4.5s: nine tenths of gateTimeoutSeconds 5",
            ),
            (
                "gateTimeoutSeconds: 20\ngateBudget: 19s",
                "c.yaml: gateBudget: 19s is out of range (100ms to 18s",
            ),
            (
                "gateFailurePolicy: Sometimes",
                "c.yaml: gateFailurePolicy: unknown variant `Sometimes`, expected `Ignore` or `Fail`",
            ),
            (
                "gateFailurePolicy: ignore",
                "c.yaml: gateFailurePolicy: unknown variant `ignore`",
            ),
            (
                "gateObjectSelector: {matchLabel: {a: b}}",
                "c.yaml: gateObjectSelector: unknown field `matchLabel`",
            ),
            (
                "gateObjectSelector: {matchExpressions: [{key: a, operator: In}]}",
                "c.yaml: gateObjectSelector: matchExpressions[0]: operator In needs values",
            ),
            (
                "gateObjectSelector: {matchExpressions: [{key: a, operator: Exists, values: [b]}]}",
                "c.yaml: gateObjectSelector: matchExpressions[0]: operator Exists takes no values",
            ),
            (
                "gateObjectSelector: {matchExpressions: [{key: a, operator: Has}]}",
                "c.yaml: gateObjectSelector: unknown variant `Has`",
            ),
            (
                "gateMatchConditions: [{name: a}]",
                "c.yaml: gateMatchConditions: missing field `expression`",
            ),
            (
                "gateMatchConditions: [{name: -a, expression: 'true'}]",
                "c.yaml: gateMatchConditions: [0].name: \"-a\" is not a name",
            ),
            (
                "gateMatchConditions: [{name: a, expression: 'true'}, {name: a, expression: 'false'}]",
                "c.yaml: gateMatchConditions: [1].name: \"a\" is given twice",
            ),
            (
                "gateMatchConditions: [{name: a, expression: ' '}]",
                "c.yaml: gateMatchConditions: [0].expression: empty",
            ),
        ] {
            let e = Config::parse("c.yaml", bad).unwrap_err();
            assert!(e.starts_with(says), "{bad}: {e}");
        }
        let many: String = (0..65)
            .map(|i| format!("- {{name: c{i}, expression: 'true'}}\n"))
            .collect();
        let e = Config::parse("c.yaml", &format!("gateMatchConditions:\n{many}")).unwrap_err();
        assert!(
            e.contains("65 conditions, more than the API server allows (64)"),
            "{e}"
        );
    }
}
