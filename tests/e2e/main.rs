//! End-to-end tests against a real API server (kube-apiserver 1.20 + etcd on loopback,
//! started by `tests/testenv/up.sh`; the standalone apiextensions-apiserver 1.36 for what
//! 1.20 cannot show), in one test binary: `cli` (one-shot commands against a cluster) and
//! `operator` (the controller). Helpers are in `support`.
//!
//! Most scenarios share one started server of each kind and run side by side, each in an API
//! group and namespace of its own with an operator that audits only its group
//! (`operator::Scenario`, `support::shared`). A test that restarts its server, changes
//! cluster-wide RBAC or needs a pristine cluster starts a server of its own and runs alone
//! (`support::own_server`).

mod support;

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
