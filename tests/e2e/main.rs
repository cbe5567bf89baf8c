//! End-to-end tests against a real API server (kube-apiserver 1.20 + etcd on loopback,
//! started by `tests/testenv/up.sh`; the standalone apiextensions-apiserver 1.36 for what
//! 1.20 cannot show), in one test binary: `cli` (one-shot commands against a cluster) and
//! `operator` (the controller). Helpers are in `support`.
//!
//! Most scenarios share one started server of each kind and run side by side, each in an API
//! group and namespace of its own with an operator that audits only its group
//! (`operator::Scenario`, `support::shared`). A test that restarts its server, changes
//! cluster-wide RBAC or needs a pristine cluster starts a server of its own and runs alone
//! among them (`support::own_server`). The tests on the node (`node`) take a lane of their own
//! beside them (`support::node_lane`).
//!
//! How many tests work at once is the turns' business, not the cores': libtest's default of
//! a thread per core would have the node's lane and the servers' turns wait on each other's
//! threads (a test waiting for its turn holds one). Unless `RUST_TEST_THREADS` says
//! otherwise, this binary gives libtest `TEST_THREADS` threads.

mod support;

/// More threads than tests can wait on one turn (the node's lane has six tests).
const TEST_THREADS: &str = "12";

/// Before libtest reads the environment (a function of the executable's `.init_array`: run
/// before `main`): sets `RUST_TEST_THREADS` to `TEST_THREADS` unless it is set, and removes
/// what cargo set for this test crate (`is_crate_variable`), so that the cargo builds the tests
/// start (the image's static binary, the webhook example, the previous release) match the
/// builds made outside the tests instead of compiling most of the dependency tree again.
#[used]
#[unsafe(link_section = ".init_array")]
static BEFORE_MAIN: extern "C" fn() = {
    extern "C" fn set() {
        // SAFETY: before main, no other thread runs to read or write the environment.
        unsafe {
            if std::env::var_os("RUST_TEST_THREADS").is_none() {
                std::env::set_var("RUST_TEST_THREADS", TEST_THREADS);
            }
            let names: Vec<_> = std::env::vars_os()
                .map(|(name, _)| name)
                .filter(|name| name.to_str().is_some_and(is_crate_variable))
                .collect();
            for name in names {
                std::env::remove_var(name);
            }
        }
    }
    set
};

#[path = "../common/crate_variables.rs"]
mod crate_variables;
use crate_variables::is_crate_variable;

mod book;
mod chart;
mod cli;
mod image;
mod manifests;
mod migrate;
mod node;
mod operator;
mod roundtrip;
mod testenv;

/// What the tests start (cargo builds, scripts, servers) inherits nothing cargo set for this
/// test crate, and still the cargo that runs the tests.
#[test]
fn the_tests_children_inherit_nothing_cargo_set_for_this_crate() {
    let left: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| is_crate_variable(name))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for name in ["CARGO_PKG_NAME", "CARGO_MANIFEST_DIR", "CARGO_CRATE_NAME"] {
        assert!(std::env::var_os(name).is_none(), "{name} is left");
    }
    assert!(std::env::var_os("CARGO").is_some(), "CARGO was removed");
}
