//! Logging: JSON lines on stderr through `tracing`, filtered by `RUST_LOG`.

/// JSON log lines on stderr; `RUST_LOG` filters them (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_client=off"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        // The span of the step a line comes from (`reconcile`, `object_audit`,
        // `write_report`, `remove`), with the CRD it is about.
        .with_current_span(true)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .try_init();
}
