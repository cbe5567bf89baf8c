//! The names of the objects an operator instance finds by name in the cluster, all derived
//! from one base name (`--name`, the Helm chart's fullname; `crd-audit` by default): the
//! leader-election Lease, the gate's Service and ValidatingWebhookConfiguration are named
//! after it, the gate's self-managed Secret is `<name>-gate-tls`.

/// The base name when none is given: the names the shipped manifests use.
pub const DEFAULT_NAME: &str = "crd-audit";

/// The names derived from one base name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceNames {
    base: String,
}

impl Default for InstanceNames {
    fn default() -> Self {
        InstanceNames {
            base: DEFAULT_NAME.to_string(),
        }
    }
}

impl std::str::FromStr for InstanceNames {
    type Err = String;

    /// A base name must be a DNS-1035 label (at most 63 lowercase letters, digits and `-`,
    /// starting with a letter and ending with a letter or digit), as a Service's name is.
    fn from_str(s: &str) -> Result<Self, String> {
        let bytes = s.as_bytes();
        let inner_ok = bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
        let ends_ok = bytes.first().is_some_and(u8::is_ascii_lowercase)
            && bytes
                .last()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if s.len() > 63 || !inner_ok || !ends_ok {
            return Err(format!(
                "invalid name {s:?}: the name of the operator's Lease, Service and webhook \
                 configuration must be a DNS label (at most 63 lowercase letters, digits and \
                 '-', starting with a letter, ending with a letter or digit)"
            ));
        }
        Ok(InstanceNames {
            base: s.to_string(),
        })
    }
}

impl std::fmt::Display for InstanceNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.base)
    }
}

impl InstanceNames {
    /// The base name itself.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The `coordination.k8s.io/v1` Lease that makes one replica the leader.
    pub fn lease(&self) -> &str {
        &self.base
    }

    /// The operator's ConfigMap (its configuration, in its namespace), which an uninstall
    /// removes with the rest of the release.
    pub fn config_map(&self) -> &str {
        &self.base
    }

    /// The Service (in the operator's namespace) the API server calls the gate through.
    pub fn service(&self) -> &str {
        &self.base
    }

    /// The Secret (in the operator's namespace) of the gate's self-managed certificate.
    pub fn secret(&self) -> String {
        format!("{}-gate-tls", self.base)
    }

    /// The gate's `ValidatingWebhookConfiguration`, kept by the leader.
    pub fn webhook_configuration(&self) -> &str {
        &self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_names_are_the_shipped_ones() {
        let n = InstanceNames::default();
        assert_eq!(n.lease(), "crd-audit");
        assert_eq!(n.service(), "crd-audit");
        assert_eq!(n.secret(), "crd-audit-gate-tls");
        assert_eq!(n.webhook_configuration(), "crd-audit");
        assert_eq!(DEFAULT_NAME.parse::<InstanceNames>().unwrap(), n);
    }

    #[test]
    fn every_name_derives_from_the_base() {
        let n: InstanceNames = "audit-prod".parse().unwrap();
        assert_eq!(
            (
                n.lease(),
                n.service(),
                n.secret().as_str(),
                n.webhook_configuration()
            ),
            (
                "audit-prod",
                "audit-prod",
                "audit-prod-gate-tls",
                "audit-prod"
            )
        );
        assert_eq!(n.to_string(), "audit-prod");
    }

    #[test]
    fn a_base_that_is_no_dns_label_is_refused() {
        for bad in [
            "",
            "Audit",
            "1audit",
            "audit-",
            "a_b",
            "a.b",
            &"a".repeat(64),
        ] {
            let e = bad.parse::<InstanceNames>().unwrap_err();
            assert!(e.contains("DNS label"), "{bad}: {e}");
        }
        assert!("a".repeat(63).parse::<InstanceNames>().is_ok());
        assert!("a1-b".parse::<InstanceNames>().is_ok());
    }
}
