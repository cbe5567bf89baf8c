//! End-to-end tests against a real API server (kube-apiserver 1.20 + etcd on loopback,
//! started by `tests/testenv/up.sh`; the standalone apiextensions-apiserver 1.36 for what
//! 1.20 cannot show), in one test binary: `cli` (one-shot commands against a cluster) and
//! `operator` (the controller). Helpers are in `support`. The tests take the server one at
//! a time (`support::serial`).

mod support;

mod cli;
mod operator;
