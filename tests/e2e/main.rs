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

/// Sets `RUST_TEST_THREADS` to `TEST_THREADS` before libtest reads it (a function of the
/// executable's `.init_array`: run before `main`), unless it is set.
#[used]
#[unsafe(link_section = ".init_array")]
static TEST_THREADS_UNLESS_SET: extern "C" fn() = {
    extern "C" fn set() {
        if std::env::var_os("RUST_TEST_THREADS").is_none() {
            // SAFETY: before main, no other thread runs to read or write the environment.
            unsafe { std::env::set_var("RUST_TEST_THREADS", TEST_THREADS) };
        }
    }
    set
};

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
