//! The controller's command-line options (`crd-audit controller ...`), as the CLI hands them
//! to [`crate::operator::run`].

use crate::audit::config::Config;

/// Command-line options of the controller.
#[derive(Clone, Debug)]
pub struct Options {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    pub config: Config,
    pub metrics_addr: String,
    /// Address of the CRD change gate (with `gate: warn` or `deny`).
    pub webhook_addr: String,
    /// The operator's namespace (its leader-election Lease).
    pub namespace: String,
    /// The names of its Lease, the gate's Service, Secret and webhook configuration.
    pub names: crate::audit::instance_names::InstanceNames,
    pub identity: String,
    /// `None`: on in a pod, off elsewhere.
    pub leader_elect: Option<bool>,
}
