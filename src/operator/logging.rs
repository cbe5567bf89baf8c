//! Logging: JSON lines on stderr through `tracing`, filtered by `RUST_LOG`.

/// JSON log lines on stderr; `RUST_LOG` filters them (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_client=off"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .try_init();
}
