//! `crd-audit manifests`: the report CRD, or a least-privilege ClusterRole for a cluster.

use super::{EXIT_CLEAN, EXIT_INPUT_ERROR};
use crate::audit::schema_audit::crd_manifest;
use crate::cluster::reader::Cluster;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a ClusterRole that grants read access only to the CRD groups present in the
    /// cluster of the kubeconfig context (instead of `*`), and write access to the policy
    /// reports (`policyReports: true`: OpenReports and wgpolicyk8s.io).
    #[arg(long)]
    pub rbac_for_cluster: bool,
    /// Kubeconfig for --rbac-for-cluster (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,
}

/// The ClusterRole reading exactly these groups' custom resources (its first rule), and
/// writing the policy reports of `policyReports: true` (its other rules).
pub fn cluster_role(groups: &BTreeSet<String>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "crd-audit-objects"},
        "rules": [{"apiGroups": groups.iter().collect::<Vec<_>>(), "resources": ["*"],
            "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["openreports.io"],
            "resources": ["reports", "clusterreports"],
            "verbs": ["get", "list", "create", "patch", "update", "delete"]},
            {"apiGroups": ["wgpolicyk8s.io"],
            "resources": ["policyreports", "clusterpolicyreports"],
            "verbs": ["get", "list", "create", "patch", "update", "delete"]}]})
}

pub fn run(args: &Args) -> u8 {
    if !args.rbac_for_cluster {
        println!("{}", crd_manifest());
        return EXIT_CLEAN;
    }
    let cluster = match Cluster::connect(args.kubeconfig.as_deref(), args.context.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let mut groups = BTreeSet::new();
    let r = cluster.each_crd(&mut |crd| {
        if let Some(g) = crd["spec"]["group"].as_str() {
            groups.insert(g.to_string());
        }
    });
    if let Err(e) = r {
        eprintln!("error: {e}");
        return EXIT_INPUT_ERROR;
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&cluster_role(&groups)).unwrap_or_default()
    );
    EXIT_CLEAN
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The narrowed ClusterRole grants on the policy reports (OpenReports, wgpolicyk8s.io)
    /// exactly what the shipped one does.
    #[test]
    fn the_policy_report_rules_match_the_shipped_rbac() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/rbac.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let shipped: Vec<Value> = crd_audit_engine::load::parse_str("rbac.yaml", &text)
            .into_iter()
            .map(|d| d.unwrap().value)
            .filter(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == "crd-audit")
            .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
            .filter(|r| {
                r["apiGroups"] == json!(["wgpolicyk8s.io"])
                    || r["apiGroups"] == json!(["openreports.io"])
            })
            .collect();
        assert_eq!(shipped.len(), 2, "{shipped:?}");
        let groups = BTreeSet::from(["example.com".to_string()]);
        let role = cluster_role(&groups);
        assert_eq!(role["rules"][0]["apiGroups"], json!(["example.com"]));
        assert_eq!(role["rules"].as_array().unwrap()[1..], shipped[..]);
    }
}
