//! The Kubernetes release whose rules apply: `--kubernetes-version`, or what a cluster's
//! `/version` says. Shared by the command line and the operator.

/// The newest Kubernetes minor release whose rules the engine models.
pub const NEWEST_MINOR: u32 = crd_audit_engine::Release::NEWEST.minor();

/// The first minor release that serves streaming lists (`sendInitialEvents` on a watch: the
/// WatchList feature, on by default).
pub const STREAMING_LISTS_SINCE: u32 = 34;

/// A Kubernetes release, `1.X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KubeVersion {
    pub minor: u32,
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion {
            minor: NEWEST_MINOR,
        }
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = String;

    /// `1.30`, `v1.30` or `1.30.2` (the patch release does not matter).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad =
            || format!("invalid Kubernetes version {s:?}: expected 1.X, such as 1.{NEWEST_MINOR}");
        let t = s.trim().strip_prefix('v').unwrap_or(s.trim());
        let mut parts = t.split('.');
        let (Some("1"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(bad());
        };
        if parts.next().is_some_and(|p| p.parse::<u32>().is_err()) || parts.next().is_some() {
            return Err(bad());
        }
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        if minor > NEWEST_MINOR {
            return Err(format!(
                "Kubernetes 1.{minor} is newer than the newest release crd-audit models (1.{NEWEST_MINOR})"
            ));
        }
        Ok(KubeVersion { minor })
    }
}

impl KubeVersion {
    /// Whether the release validates updates with ratcheting.
    pub fn ratchets(self) -> bool {
        self.engine().ratchets()
    }

    /// Whether the release's API server streams a watch's initial state (WatchList), so
    /// that no LIST response has to be held whole.
    pub fn streams_lists(self) -> bool {
        self.minor >= STREAMING_LISTS_SINCE
    }

    /// The release as the engine takes it (its CEL environments, what it drops from a CRD).
    pub fn engine(self) -> crd_audit_engine::Release {
        crd_audit_engine::Release::new(self.minor)
    }
}

/// The release a server reports (`/version`: major "1", minor "33" or "33+"); `None` when
/// it cannot be read. A release newer than the newest modelled is judged as the newest.
pub fn from_server(major: &str, minor: &str) -> Option<KubeVersion> {
    if major.trim() != "1" {
        return None;
    }
    let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
    let minor: u32 = digits.parse().ok()?;
    Some(KubeVersion {
        minor: minor.min(NEWEST_MINOR),
    })
}

/// The release of the cluster a client talks to (its `/version`), or the newest modelled
/// when that cannot be read (logged).
pub async fn of_cluster(client: &kube::Client) -> KubeVersion {
    match client.apiserver_version().await {
        Ok(info) => from_server(&info.major, &info.minor).unwrap_or_else(|| {
            tracing::warn!(major = %info.major, minor = %info.minor, "unrecognised API server version; judging by the newest release modelled");
            KubeVersion::default()
        }),
        Err(e) => {
            tracing::warn!(error = %e, "could not read the API server's /version; judging by the newest release modelled");
            KubeVersion::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_versions_are_read() {
        assert_eq!(from_server("1", "20"), Some(KubeVersion { minor: 20 }));
        assert_eq!(from_server("1", "33+"), Some(KubeVersion { minor: 33 }));
        assert_eq!(
            from_server("1", "40"),
            Some(KubeVersion {
                minor: NEWEST_MINOR
            })
        );
        assert_eq!(from_server("2", "0"), None);
        assert_eq!(from_server("1", ""), None);
    }

    #[test]
    fn kubernetes_versions_parse_as_releases() {
        for (text, minor) in [("1.30", 30), ("v1.33", 33), ("1.29.4", 29), ("1.36", 36)] {
            assert_eq!(
                text.parse::<KubeVersion>(),
                Ok(KubeVersion { minor }),
                "{text}"
            );
        }
        for bad in ["2.1", "1", "1.x", "1.30.x", "1.30.1.2", ""] {
            assert!(bad.parse::<KubeVersion>().is_err(), "{bad}");
        }
        assert!("1.37".parse::<KubeVersion>().unwrap_err().contains("newer"));
        assert!(!"1.29".parse::<KubeVersion>().unwrap().ratchets());
        assert!("1.30".parse::<KubeVersion>().unwrap().ratchets());
    }
}
