//! The gate's serving certificate. Either files (`gateCertDir`: `tls.crt`, `tls.key`,
//! `ca.crt`, as cert-manager writes them; read again when they change) or self-managed: a CA
//! and a serving certificate kept in the Secret `<name>-gate-tls` (`crd-audit-gate-tls` by
//! default: `crate::audit::instance_names`) of the operator's namespace, created by the first replica that finds none and renewed by any replica
//! before it expires (writes carry the Secret's `resourceVersion`, so two replicas never
//! both win). Every replica serves what the Secret holds; the leader puts its CA in the
//! webhook configuration.

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, PostParams};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;

/// How long a self-made serving certificate and CA are valid.
const SERVING_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// A serving certificate is renewed when it has less than this left; the CA when it has less
/// than a serving certificate's life left (the old CA stays in the bundle until it expires).
pub(crate) const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The annotations that record what the Secret's certificates are (so that they need not be
/// parsed): when each expires (Unix seconds) and the serving certificate's names.
const SERVING_NOT_AFTER: &str = "crd-audit.dev/serving-not-after";
const CA_NOT_AFTER: &str = "crd-audit.dev/ca-not-after";
const HOSTS: &str = "crd-audit.dev/serving-hosts";

/// The common name of the self-made CA (a renewed serving certificate is signed by the same
/// name and key).
const CA_NAME: &str = "crd-audit gate CA";

/// What the gate serves with: a certificate and its key, and the CA bundle the API server
/// must trust. Swapped whole when the files or the Secret change.
#[derive(Debug)]
pub struct ServingCert {
    key: RwLock<Option<Arc<CertifiedKey>>>,
    ca_bundle: RwLock<Vec<u8>>,
}

impl ServingCert {
    pub fn new() -> Arc<ServingCert> {
        Arc::new(ServingCert {
            key: RwLock::new(None),
            ca_bundle: RwLock::new(Vec::new()),
        })
    }

    /// The CA bundle (PEM) of the certificate served now (empty before the first).
    pub fn ca_bundle(&self) -> Vec<u8> {
        self.ca_bundle.read().map(|b| b.clone()).unwrap_or_default()
    }

    /// Whether a certificate is loaded.
    pub fn loaded(&self) -> bool {
        self.key.read().is_ok_and(|k| k.is_some())
    }

    /// Loads a certificate chain, its key and the CA bundle (PEM); an error names what could
    /// not be read, and the certificate served so far stays.
    pub fn load(&self, cert: &[u8], key: &[u8], ca: &[u8]) -> Result<(), TlsError> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<_, _>>()
            .map_err(|source| TlsError::Pem {
                what: "the certificate",
                source,
            })?;
        if chain.is_empty() {
            return Err(TlsError::Empty("the certificate file"));
        }
        let key = PrivateKeyDer::from_pem_slice(key).map_err(|source| TlsError::Pem {
            what: "the key",
            source,
        })?;
        if CertificateDer::pem_slice_iter(ca).next().is_none() {
            return Err(TlsError::Empty("the CA file"));
        }
        let provider = tokio_rustls::rustls::crypto::ring::default_provider();
        let certified =
            CertifiedKey::from_der(chain, key, &provider).map_err(TlsError::KeyMismatch)?;
        if let Ok(mut k) = self.key.write() {
            *k = Some(Arc::new(certified));
        }
        if let Ok(mut b) = self.ca_bundle.write() {
            *b = ca.to_vec();
        }
        Ok(())
    }
}

impl ResolvesServerCert for ServingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.key.read().ok().and_then(|k| k.clone())
    }
}

/// The TLS configuration of the gate's listener (HTTP/1.1 only).
pub fn server_config(cert: Arc<ServingCert>) -> Arc<tokio_rustls::rustls::ServerConfig> {
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default TLS versions")
        .with_no_client_auth()
        .with_cert_resolver(cert);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Reads `tls.crt`, `tls.key` and `ca.crt` from a directory into `cert` when they changed
/// since `last`; returns what was read.
pub fn load_dir(
    cert: &ServingCert,
    dir: &std::path::Path,
    last: &mut Option<[Vec<u8>; 3]>,
) -> Result<(), TlsError> {
    let read = |f: &str| {
        std::fs::read(dir.join(f)).map_err(|source| TlsError::Read {
            path: dir.join(f),
            source,
        })
    };
    let files = [read("tls.crt")?, read("tls.key")?, read("ca.crt")?];
    if last.as_ref() == Some(&files) {
        return Ok(());
    }
    cert.load(&files[0], &files[1], &files[2])
        .map_err(|e| TlsError::In {
            dir: dir.to_path_buf(),
            source: Box::new(e),
        })?;
    *last = Some(files);
    Ok(())
}

/// The names a self-made serving certificate carries: the Service's (`service`, the one the
/// API server calls the gate through), and the host of `gateUrl` when set.
pub fn serving_hosts(service: &str, namespace: &str, gate_url: Option<&str>) -> Vec<String> {
    let mut hosts = vec![
        service.to_string(),
        format!("{service}.{namespace}"),
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
    ];
    if let Some(host) = gate_url.and_then(url_host) {
        hosts.push(host);
    }
    hosts
}

/// The host of an `https://` URL, without port or brackets.
fn url_host(url: &str) -> Option<String> {
    let rest = url.strip_prefix("https://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_string())
}

pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn ca_params(not_after: u64) -> Result<CertificateParams, TlsError> {
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.distinguished_name.push(DnType::CommonName, CA_NAME);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut p, not_after)?;
    Ok(p)
}

fn set_validity(p: &mut CertificateParams, not_after: u64) -> Result<(), TlsError> {
    let at = |s: u64| time::OffsetDateTime::from_unix_timestamp(s as i64);
    // An hour back, for clocks that lag.
    p.not_before = at(unix_now().saturating_sub(3600))?;
    p.not_after = at(not_after)?;
    Ok(())
}

/// The PEM texts and expiries of a self-made CA and serving certificate.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfMade {
    pub ca_cert: String,
    pub ca_key: String,
    /// The CAs to trust: this CA, then an earlier one that has not expired.
    pub ca_bundle: String,
    pub ca_not_after: u64,
    pub cert: String,
    pub key: String,
    pub not_after: u64,
    pub hosts: Vec<String>,
}

impl SelfMade {
    /// A new CA and a serving certificate for `hosts`.
    pub fn new(hosts: &[String]) -> Result<SelfMade, TlsError> {
        let ca_key = KeyPair::generate()?;
        let ca_not_after = unix_now() + CA_VALIDITY.as_secs();
        let ca = ca_params(ca_not_after)?.self_signed(&ca_key)?;
        let mut made = SelfMade {
            ca_cert: ca.pem(),
            ca_key: ca_key.serialize_pem(),
            ca_bundle: ca.pem(),
            ca_not_after,
            cert: String::new(),
            key: String::new(),
            not_after: 0,
            hosts: Vec::new(),
        };
        made.issue(hosts)?;
        Ok(made)
    }

    /// A serving certificate for `hosts`, signed by this CA.
    fn issue(&mut self, hosts: &[String]) -> Result<(), TlsError> {
        let ca_key = KeyPair::from_pem(&self.ca_key).map_err(TlsError::CaKey)?;
        let issuer = Issuer::new(ca_params(self.ca_not_after)?, ca_key);
        let key = KeyPair::generate()?;
        let mut p = CertificateParams::new(hosts.to_vec())?;
        p.distinguished_name.push(DnType::CommonName, &hosts[0]);
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let not_after = (unix_now() + SERVING_VALIDITY.as_secs()).min(self.ca_not_after);
        set_validity(&mut p, not_after)?;
        let cert = p.signed_by(&key, &issuer)?;
        self.cert = cert.pem();
        self.key = key.serialize_pem();
        self.not_after = not_after;
        self.hosts = hosts.to_vec();
        Ok(())
    }

    /// What must change for these certificates to serve `hosts` for a while longer:
    /// `None` when nothing; a renewed serving certificate (signed by a new CA when this one
    /// is near its end) otherwise.
    pub fn renewed(&self, hosts: &[String]) -> Result<Option<SelfMade>, TlsError> {
        let t = unix_now();
        let serving_ok = self.not_after > t + RENEW_BEFORE.as_secs()
            && hosts.iter().all(|h| self.hosts.contains(h));
        if serving_ok {
            return Ok(None);
        }
        if self.ca_not_after > t + SERVING_VALIDITY.as_secs() + RENEW_BEFORE.as_secs() {
            let mut next = self.clone();
            next.issue(hosts)?;
            return Ok(Some(next));
        }
        let mut next = SelfMade::new(hosts)?;
        if self.ca_not_after > t {
            next.ca_bundle = format!("{}{}", next.ca_cert, self.ca_cert);
        }
        Ok(Some(next))
    }

    /// The Secret `name` in `namespace` that holds it (`resource_version`: the one it replaces).
    pub fn to_secret(
        &self,
        name: &str,
        namespace: &str,
        resource_version: Option<String>,
    ) -> Secret {
        let bytes = |s: &str| ByteString(s.as_bytes().to_vec());
        Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                resource_version,
                labels: Some(BTreeMap::from([(
                    "app.kubernetes.io/name".to_string(),
                    "crd-audit".to_string(),
                )])),
                annotations: Some(BTreeMap::from([
                    (SERVING_NOT_AFTER.to_string(), self.not_after.to_string()),
                    (CA_NOT_AFTER.to_string(), self.ca_not_after.to_string()),
                    (HOSTS.to_string(), self.hosts.join(",")),
                ])),
                ..ObjectMeta::default()
            },
            type_: Some("kubernetes.io/tls".into()),
            data: Some(BTreeMap::from([
                ("tls.crt".to_string(), bytes(&self.cert)),
                ("tls.key".to_string(), bytes(&self.key)),
                ("ca.crt".to_string(), bytes(&self.ca_bundle)),
                ("ca-only.crt".to_string(), bytes(&self.ca_cert)),
                ("ca.key".to_string(), bytes(&self.ca_key)),
            ])),
            ..Secret::default()
        }
    }

    fn of_secret(s: &Secret) -> Option<SelfMade> {
        let data = s.data.as_ref()?;
        let text = |k: &str| {
            data.get(k)
                .and_then(|b| String::from_utf8(b.0.clone()).ok())
        };
        let notes = s.metadata.annotations.as_ref()?;
        let number = |k: &str| notes.get(k).and_then(|v| v.parse::<u64>().ok());
        Some(SelfMade {
            ca_cert: text("ca-only.crt")?,
            ca_key: text("ca.key")?,
            ca_bundle: text("ca.crt")?,
            ca_not_after: number(CA_NOT_AFTER)?,
            cert: text("tls.crt")?,
            key: text("tls.key")?,
            not_after: number(SERVING_NOT_AFTER)?,
            hosts: notes.get(HOSTS)?.split(',').map(str::to_string).collect(),
        })
    }
}

/// Makes sure the Secret `name` holds certificates good for `hosts`, creating or renewing
/// them; returns what it holds. A Secret that is not ours to read (made by hand, missing a
/// key) is replaced.
pub async fn ensure_secret(
    client: &kube::Client,
    name: &str,
    namespace: &str,
    hosts: &[String],
) -> Result<SelfMade, TlsError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret_name = || format!("{namespace}/{name}");
    for _ in 0..3 {
        let found = api.get_opt(name).await.map_err(|source| TlsError::Secret {
            what: "reading",
            secret: secret_name(),
            source,
        })?;
        let (current, version) = match &found {
            Some(s) => (SelfMade::of_secret(s), s.metadata.resource_version.clone()),
            None => (None, None),
        };
        let next = match &current {
            Some(c) => match c.renewed(hosts)? {
                None => return Ok(c.clone()),
                Some(n) => n,
            },
            None => SelfMade::new(hosts)?,
        };
        let secret = next.to_secret(name, namespace, version.clone());
        let written = match found {
            None => api.create(&PostParams::default(), &secret).await,
            Some(_) => api.replace(name, &PostParams::default(), &secret).await,
        };
        match written {
            Ok(_) => {
                tracing::info!(
                    secret = %format!("{namespace}/{name}"),
                    expires = next.not_after,
                    "wrote the gate's serving certificate"
                );
                return Ok(next);
            }
            // Another replica wrote it first: read what it wrote.
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(source) => {
                return Err(TlsError::Secret {
                    what: "writing",
                    secret: secret_name(),
                    source,
                });
            }
        }
    }
    Err(TlsError::Contended(secret_name()))
}

/// Why the gate's certificate could not be read, made or kept.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{what}: {source}")]
    Pem {
        what: &'static str,
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    #[error("{0} holds no certificate")]
    Empty(&'static str),
    #[error("the certificate and its key: {0}")]
    KeyMismatch(#[source] tokio_rustls::rustls::Error),
    #[error("{}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", dir.display())]
    In {
        dir: std::path::PathBuf,
        #[source]
        source: Box<TlsError>,
    },
    #[error("making the certificate: {0}")]
    Make(#[from] rcgen::Error),
    #[error("the CA key: {0}")]
    CaKey(#[source] rcgen::Error),
    #[error("a certificate's validity: {0}")]
    Time(#[from] time::error::ComponentRange),
    #[error("{what} Secret {secret}: {}", crate::cluster::client::describe(.source))]
    Secret {
        what: &'static str,
        secret: String,
        #[source]
        source: kube::Error,
    },
    #[error("Secret {0} kept changing under three attempts to write it")]
    Contended(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_files_are_read_again_when_they_change() {
        let dir = std::env::temp_dir().join(format!("crd-audit-gate-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |m: &SelfMade| {
            std::fs::write(dir.join("tls.crt"), &m.cert).unwrap();
            std::fs::write(dir.join("tls.key"), &m.key).unwrap();
            std::fs::write(dir.join("ca.crt"), &m.ca_cert).unwrap();
        };
        let hosts = serving_hosts("crd-audit", "ops", None);
        let (one, two) = (
            SelfMade::new(&hosts).unwrap(),
            SelfMade::new(&hosts).unwrap(),
        );
        let served = ServingCert::new();
        let mut last = None;
        let e = load_dir(&served, &dir, &mut last).unwrap_err();
        assert!(e.to_string().contains("tls.crt"), "{e}");
        write(&one);
        load_dir(&served, &dir, &mut last).unwrap();
        assert_eq!(served.ca_bundle(), one.ca_cert.as_bytes());
        // cert-manager renews the files: the next read serves the new ones.
        write(&two);
        load_dir(&served, &dir, &mut last).unwrap();
        assert_eq!(served.ca_bundle(), two.ca_cert.as_bytes());
        // A half-written renewal (a key that does not parse) keeps what was served.
        std::fs::write(dir.join("tls.key"), "garbage").unwrap();
        assert!(load_dir(&served, &dir, &mut last).is_err());
        assert_eq!(served.ca_bundle(), two.ca_cert.as_bytes());
        assert!(served.loaded());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn url_hosts() {
        assert_eq!(
            url_host("https://127.0.0.1:9443/validate-crd").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(url_host("https://[::1]:9443/x").as_deref(), Some("::1"));
        assert_eq!(
            url_host("https://gate.example.com/x").as_deref(),
            Some("gate.example.com")
        );
        assert_eq!(url_host("https://"), None);
        assert_eq!(url_host("http://a/b"), None);
    }

    #[test]
    fn self_made_certificates_load_and_renew() {
        let hosts = serving_hosts(
            "crd-audit",
            "ops",
            Some("https://127.0.0.1:9443/validate-crd"),
        );
        assert!(hosts.contains(&"crd-audit.ops.svc".to_string()));
        // Another instance name (the chart's fullname): its Service's names.
        let other = serving_hosts("audit-x", "ops", None);
        assert_eq!(
            other,
            [
                "audit-x",
                "audit-x.ops",
                "audit-x.ops.svc",
                "audit-x.ops.svc.cluster.local"
            ]
        );
        assert!(hosts.contains(&"127.0.0.1".to_string()));
        let made = SelfMade::new(&hosts).unwrap();
        let served = ServingCert::new();
        served
            .load(
                made.cert.as_bytes(),
                made.key.as_bytes(),
                made.ca_bundle.as_bytes(),
            )
            .unwrap();
        assert!(served.loaded());
        assert_eq!(served.ca_bundle(), made.ca_cert.as_bytes());
        // Good for a year: nothing to renew; another host: a new serving certificate from
        // the same CA.
        assert_eq!(made.renewed(&hosts).unwrap(), None);
        let more = [hosts.clone(), vec!["gate.example.com".to_string()]].concat();
        let next = made.renewed(&more).unwrap().unwrap();
        assert_eq!(next.ca_cert, made.ca_cert);
        assert_ne!(next.cert, made.cert);
        assert_eq!(next.hosts, more);
        // Near its end: renewed.
        let old = SelfMade {
            not_after: unix_now() + 3600,
            ..made.clone()
        };
        assert!(old.renewed(&hosts).unwrap().is_some());
        // A CA near its end: a new CA, the old one still trusted.
        let ending = SelfMade {
            ca_not_after: unix_now() + 3600,
            not_after: unix_now() + 60,
            ..made.clone()
        };
        let next = ending.renewed(&hosts).unwrap().unwrap();
        assert_ne!(next.ca_cert, made.ca_cert);
        assert_eq!(next.ca_bundle, format!("{}{}", next.ca_cert, made.ca_cert));
        // Through a Secret and back.
        let s = next.to_secret("audit-x-gate-tls", "ops", None);
        assert_eq!(s.metadata.name.as_deref(), Some("audit-x-gate-tls"));
        assert_eq!(SelfMade::of_secret(&s).unwrap(), next);
        // Garbage is refused and the certificate served so far stays.
        assert!(served.load(b"nope", b"nope", b"nope").is_err());
        assert!(served.loaded());
    }
}
