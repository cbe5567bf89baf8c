//! The command line: parsing it and running its command, one-shot (`crate::cli`) or the
//! operator (`crate::operator`). The only module that reaches both.

use crate::cli::{
    apply_crd, audit, chart_test, check, completions, diff, manifests, migrate, plan, roundtrip,
    validate,
};
use crate::operator::command as controller;
use crate::operator::uninstall_cleanup;
use crate::program::{KUBECTL_PLUGIN_FILE, VERSION};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

/// Audit CustomResourceDefinition schemas and the objects stored under them, with the
/// semantics of kube-apiserver.
#[derive(Debug, Parser)]
#[command(name = "crd-audit", version = VERSION, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report structural-schema violations and CRD-level problems of every version of each CRD.
    ///
    /// Prints what kube-apiserver's NonStructuralSchema condition lists, the errors CRD
    /// validation would return on create (invalid defaults, list-type misuse, invalid
    /// patterns, ...), format warnings, and stored versions that are no longer served.
    /// Also reports size limits: a warning when client-side `kubectl apply` would fail on its
    /// last-applied annotation (over 262,144 bytes of annotations), errors when the CRD is
    /// above the API server's 3 MiB request limit or etcd's default 1.5 MiB request limit.
    /// Exit code 0: nothing found; 1: findings; 2: unreadable input.
    Check(check::Args),
    /// Validate objects against their CRDs as kube-apiserver does on create.
    ///
    /// Each object is matched to a CRD by group and kind and judged at the version its
    /// apiVersion names: pruning of unknown fields, defaulting, ObjectMeta, the OpenAPI
    /// schema with the Kubernetes extensions, list-type uniqueness, embedded resources.
    /// Exit code 0: all valid; 1: invalid objects (or unknown kinds); 2: unreadable input.
    Validate(validate::Args),
    /// List every schema change between two revisions of one CRD, classified tightening,
    /// loosening or neutral. Exit code 1 when any change tightens (for CI gates).
    Diff(diff::Args),
    /// Show which objects become invalid if a CRD revision is applied (judged as stored
    /// data: the whole object, status included). Exit code 1 when any object breaks.
    Plan(plan::Args),
    /// Audit the cluster of the kubeconfig context once, read-only: check every CRD and
    /// judge every object of every CRD as stored data at the storage version.
    ///
    /// Only GET and LIST requests are sent. Findings are printed as they are found and a
    /// table per CRD ends the output; on a terminal, stderr shows progress. Takes the
    /// operator's group and namespace filters (--config, or the flags).
    /// Exit code 0: nothing found; 1: findings; 2: the cluster could not be read completely.
    Audit(audit::Args),
    /// Migrate a CRD's stored objects to its storage version, so that an old version can
    /// leave status.storedVersions (and then the CRD).
    ///
    /// Judges every stored object's unchanged update at the storage version first (the
    /// server's release, ratcheting) and, with --dry-run, only lists the objects whose
    /// rewrite the server would refuse (stuck). Otherwise rewrites every object (an unchanged
    /// write each: the server re-encodes it at the storage version, and skips the write when
    /// nothing changes), paged, at --qps; an object another writer wrote after it was listed
    /// is not sent again (that write stored it); a refused object is listed and never stops
    /// the rest. Then, only if every object was rewritten and the CRD's
    /// generation did not change meanwhile, sets status.storedVersions to the storage version
    /// alone. Ctrl-C stops cleanly; a second run redoes only what is needed.
    /// Exit code 0: storedVersions is the storage version alone; 1: stuck objects block it
    /// (listed); 2: errors.
    Migrate(migrate::Args),
    /// Send every stored object of a CRD converted by a webhook through the webhook to each
    /// other served version and back, as the API server would, and say what is lost.
    ///
    /// Writes nothing (the only write requests are dry runs). For each stored object and each
    /// served version O other than the storage version S: `failed` when converting to O (a GET
    /// at O) or back to S fails, or the webhook answers what the API server would refuse;
    /// `invalid` when the object read at O is invalid under O's schema (a client that reads,
    /// edits and writes it back at O is refused); `lossy` when a round trip changes it: S→O→S
    /// (what an old client's read-modify-write stores; no request shows it, so the webhook is
    /// called as the API server calls it) or O→S→O (a dry-run update at O), naming each field
    /// lost, changed or added. Needs get and list on the objects, update for the dry runs, and
    /// create on services/proxy for a webhook behind a Service reached from outside the
    /// cluster.
    /// Exit code 0: nothing lost (or no webhook: strategy None); 1: findings; 2: errors.
    Roundtrip(roundtrip::Args),
    /// Run the in-cluster operator: audit every CRD and its objects continuously and keep a
    /// SchemaAudit report per CRD.
    Controller(controller::Args),
    /// Remove what the operator wrote outside its manifests: the crd-audit.dev/violations
    /// annotations on custom resources, its policy reports, the SchemaAudit reports, the
    /// gate's webhook configuration and Secret. Run before uninstalling (the Helm chart's
    /// pre-delete hook does).
    ///
    /// It first takes the operator's Lease for an hour, so that no replica writes again.
    /// Exit code 0: all removed; 1: something could not be read or removed (said on stderr);
    /// 2: no cluster to talk to.
    UninstallCleanup(uninstall_cleanup::Args),
    /// Print the SchemaAudit CRD (what manifests/ installs), or with --rbac-for-cluster a
    /// ClusterRole that reads only the CRD groups present in the cluster.
    Manifests(manifests::Args),
    /// Install or upgrade the SchemaAudit CRD in the cluster to the one this binary was built
    /// with (what `crd-audit manifests` prints), and wait until the API server serves it.
    ///
    /// A server-side apply with the field manager crd-audit, forcing conflicts; then the CRD
    /// is read until it is Established, its names are accepted and discovery lists it with
    /// its short names. The Helm chart runs it as a pre-upgrade hook (Helm never upgrades the
    /// CRDs of a chart's crds/ directory). Needs create on customresourcedefinitions, and get
    /// and patch on schemaaudits.crd-audit.dev.
    /// Exit code 0: applied and served; 1: refused, or not served within --timeout;
    /// 2: no cluster to talk to.
    ApplyCrd(apply_crd::Args),
    /// Check an installed operator from inside the cluster, as the Helm chart's `helm test`
    /// does: its readiness endpoint answers 200 through its Service, and a SchemaAudit report
    /// exists (listed with the Pod's ServiceAccount).
    ///
    /// Both are asked again every 2 s until --wait runs out.
    /// Exit code 0: ready, and reports are written; 1: not within --wait; 2: usage or no
    /// cluster to talk to.
    ChartTest(chart_test::Args),
    /// Print a shell completion script, e.g. `crd-audit completions bash >
    /// ~/.local/share/bash-completion/completions/crd-audit`.
    Completions(completions::Args),
}

/// Whether the program runs as a kubectl plugin: its file name (argv[0]) is
/// `kubectl-crd_audit` (with `.exe` on Windows).
pub fn invoked_as_kubectl_plugin(argv0: Option<&OsString>) -> bool {
    argv0
        .and_then(|a| Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.strip_suffix(".exe").unwrap_or(n) == KUBECTL_PLUGIN_FILE)
}

/// Parses the command line; run as a kubectl plugin, usage and help name the program
/// `kubectl crd-audit`. Exits on `--help`, `--version` and usage errors, as clap does.
pub fn parse() -> (Cli, &'static str) {
    let args: Vec<OsString> = std::env::args_os().collect();
    let plugin = invoked_as_kubectl_plugin(args.first());
    let mut cmd = Cli::command();
    if plugin {
        cmd = cmd.bin_name("kubectl crd-audit");
    }
    let matches = cmd.get_matches_from(args);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    (
        cli,
        if plugin {
            KUBECTL_PLUGIN_FILE
        } else {
            "crd-audit"
        },
    )
}

impl Cli {
    /// Whether this command line runs the operator (`controller`), which allocates with the
    /// system allocator (see `allocator`).
    pub fn runs_the_operator(&self) -> bool {
        matches!(self.command, Command::Controller(_))
    }
}

/// Runs the parsed command line; `bin_name` is the program's name for completion scripts.
pub fn run(cli: Cli, bin_name: &str) -> ExitCode {
    let code = match cli.command {
        Command::Completions(args) => completions::run(&args, Cli::command(), bin_name),
        Command::Check(args) => check::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Audit(args) => audit::run(&args),
        Command::Migrate(args) => migrate::run(&args),
        Command::Roundtrip(args) => roundtrip::run(&args),
        Command::Controller(args) => controller::run(&args),
        Command::UninstallCleanup(args) => uninstall_cleanup::run(&args),
        Command::Manifests(args) => manifests::run(&args),
        Command::ApplyCrd(args) => apply_crd::run(&args),
        Command::ChartTest(args) => chart_test::run(&args),
    };
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--name` names the operator's objects for `controller` and `uninstall-cleanup`
    /// (`crd-audit` when not given); a name that is no DNS label is refused.
    #[test]
    fn the_instance_name_flag() {
        let parse = |args: &[&str]| Cli::try_parse_from(args);
        let name_of = |cli: Cli| match cli.command {
            Command::Controller(a) => a.instance.name,
            Command::UninstallCleanup(a) => a.instance.name,
            other => panic!("{other:?}"),
        };
        // The default, unless CRD_AUDIT_NAME is set in the environment of the test.
        if std::env::var_os("CRD_AUDIT_NAME").is_none() {
            let n = name_of(parse(&["crd-audit", "controller"]).unwrap());
            assert_eq!(n.secret(), "crd-audit-gate-tls");
        }
        let n = name_of(parse(&["crd-audit", "controller", "--name", "audit-x"]).unwrap());
        assert_eq!(
            (n.lease(), n.secret().as_str()),
            ("audit-x", "audit-x-gate-tls")
        );
        let n = name_of(parse(&["crd-audit", "uninstall-cleanup", "--name=audit-y"]).unwrap());
        assert_eq!(n.webhook_configuration(), "audit-y");
        let e = parse(&["crd-audit", "controller", "--name", "Audit_X"]).unwrap_err();
        assert!(e.to_string().contains("DNS label"), "{e}");
    }

    #[test]
    fn apply_crd_takes_the_cluster_flags_and_a_timeout() {
        let cli = Cli::try_parse_from([
            "crd-audit",
            "apply-crd",
            "--kubeconfig",
            "/k",
            "--context",
            "c",
            "--timeout",
            "90s",
        ])
        .unwrap();
        let Command::ApplyCrd(a) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(a.cluster.kubeconfig.as_deref(), Some(Path::new("/k")));
        assert_eq!(a.cluster.context.as_deref(), Some("c"));
        assert_eq!(a.timeout, std::time::Duration::from_secs(90));
        assert!(Cli::try_parse_from(["crd-audit", "apply-crd", "--timeout", "0"]).is_err());
    }
}
