//! `crd-audit manifests`: the report CRD, or a least-privilege ClusterRole for a cluster.

use super::{EXIT_CLEAN, EXIT_INPUT_ERROR};
use crate::operator::kube::Kube;
use crate::operator::manifests::schema_audit_crd;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a ClusterRole that grants read access only to the CRD groups present in the
    /// cluster of the kubeconfig context (instead of `*`).
    #[arg(long)]
    pub rbac_for_cluster: bool,
    /// Kubeconfig for --rbac-for-cluster (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
}

/// The ClusterRole reading exactly these groups' custom resources.
pub fn cluster_role(groups: &BTreeSet<String>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "crd-audit-objects"},
        "rules": [{"apiGroups": groups.iter().collect::<Vec<_>>(), "resources": ["*"],
            "verbs": ["get", "list", "watch"]}]})
}

pub fn run(args: &Args) -> u8 {
    if !args.rbac_for_cluster {
        println!(
            "{}",
            serde_json::to_string_pretty(&schema_audit_crd()).unwrap_or_default()
        );
        return EXIT_CLEAN;
    }
    let kube = match Kube::from_environment(args.kubeconfig.as_deref(), None, false) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let mut groups = BTreeSet::new();
    let r = kube.list(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        500,
        &mut |crd| {
            if let Some(g) = crd["spec"]["group"].as_str() {
                groups.insert(g.to_string());
            }
        },
    );
    if let Err(e) = r {
        eprintln!("error: listing CRDs: {e}");
        return EXIT_INPUT_ERROR;
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&cluster_role(&groups)).unwrap_or_default()
    );
    EXIT_CLEAN
}
