//! Prometheus metrics (text format) and the health endpoints, served on one port.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const BUCKETS: [f64; 10] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; 10],
    count: u64,
    sum: f64,
}

/// The metric families; labels are rendered into the key (`{crd="x",version="v1"}`).
#[derive(Default)]
pub struct Metrics {
    gauges: Mutex<BTreeMap<(String, String), f64>>,
    counters: Mutex<BTreeMap<(String, String), f64>>,
    histograms: Mutex<BTreeMap<(String, String), Histogram>>,
    pub ready: AtomicBool,
}

/// Renders labels: `{a="x",b="y"}`, escaped as Prometheus wants.
pub fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{k}=\"{v}\"")
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

const HELP: [(&str, &str, &str); 12] = [
    (
        "crd_audit_api_requests_total",
        "counter",
        "API requests sent.",
    ),
    ("crd_audit_objects", "gauge", "Objects of a CRD version."),
    (
        "crd_audit_invalid_objects",
        "gauge",
        "Objects invalid under their version's schema.",
    ),
    (
        "crd_audit_nonstructural_versions",
        "gauge",
        "Versions whose schema is not structural.",
    ),
    (
        "crd_audit_schema_changes_total",
        "counter",
        "Observed schema changes by class.",
    ),
    (
        "crd_audit_validations_total",
        "counter",
        "Objects validated.",
    ),
    (
        "crd_audit_validation_duration_seconds",
        "histogram",
        "Time to validate one object.",
    ),
    (
        "crd_audit_audit_duration_seconds",
        "histogram",
        "Time of a full audit of a CRD.",
    ),
    ("crd_audit_watches", "gauge", "Open watches."),
    (
        "crd_audit_api_errors_total",
        "counter",
        "API requests that failed, by verb.",
    ),
    (
        "crd_audit_leader",
        "gauge",
        "1 when this replica is the leader.",
    ),
    ("crd_audit_build_info", "gauge", "Build information."),
];

impl Metrics {
    pub fn set(&self, name: &str, labels: String, v: f64) {
        if let Ok(mut g) = self.gauges.lock() {
            g.insert((name.to_string(), labels), v);
        }
    }

    pub fn remove_matching(&self, name: &str, label_part: &str) {
        if let Ok(mut g) = self.gauges.lock() {
            g.retain(|(n, l), _| !(n == name && l.contains(label_part)));
        }
    }

    fn set_counter(&self, name: &str, v: f64) {
        if let Ok(mut c) = self.counters.lock() {
            c.insert((name.to_string(), String::new()), v);
        }
    }

    pub fn add(&self, name: &str, labels: String, v: f64) {
        if let Ok(mut c) = self.counters.lock() {
            *c.entry((name.to_string(), labels)).or_insert(0.0) += v;
        }
    }

    pub fn observe(&self, name: &str, labels: String, v: f64) {
        if let Ok(mut h) = self.histograms.lock() {
            let e = h.entry((name.to_string(), labels)).or_default();
            for (i, b) in BUCKETS.iter().enumerate() {
                if v <= *b {
                    e.counts[i] += 1;
                }
            }
            e.count += 1;
            e.sum += v;
        }
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        self.set_counter(
            "crd_audit_api_requests_total",
            super::kube::REQUESTS.load(Ordering::Relaxed) as f64,
        );
        let mut out = String::new();
        for (name, kind, help) in HELP {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            if kind == "histogram" {
                if let Ok(h) = self.histograms.lock() {
                    for ((n, l), e) in h.iter().filter(|((n, _), _)| n == name) {
                        let inner = l.trim_start_matches('{').trim_end_matches('}');
                        let sep = if inner.is_empty() { "" } else { "," };
                        for (i, b) in BUCKETS.iter().enumerate() {
                            out.push_str(&format!(
                                "{n}_bucket{{{inner}{sep}le=\"{b}\"}} {}\n",
                                e.counts[i]
                            ));
                        }
                        out.push_str(&format!(
                            "{n}_bucket{{{inner}{sep}le=\"+Inf\"}} {}\n",
                            e.count
                        ));
                        out.push_str(&format!("{n}_sum{l} {}\n{n}_count{l} {}\n", e.sum, e.count));
                    }
                }
                continue;
            }
            let map = if kind == "gauge" {
                &self.gauges
            } else {
                &self.counters
            };
            if let Ok(m) = map.lock() {
                for ((n, l), v) in m.iter().filter(|((n, _), _)| n == name) {
                    out.push_str(&format!("{n}{l} {v}\n"));
                }
            }
        }
        out
    }
}

/// Serves `/metrics`, `/healthz` and `/readyz` until `stop` is set.
pub fn serve(addr: &str, metrics: Arc<Metrics>, stop: Arc<AtomicBool>) -> Result<(), String> {
    let listener = TcpListener::bind(addr).map_err(|e| format!("listening on {addr}: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                        let mut buf = [0u8; 2048];
                        let n = s.read(&mut buf).unwrap_or(0);
                        let req = String::from_utf8_lossy(&buf[..n]);
                        let path = req.split_whitespace().nth(1).unwrap_or("/");
                        let (status, body) = match path {
                            "/metrics" => ("200 OK", metrics.render()),
                            "/healthz" => ("200 OK", "ok\n".to_string()),
                            "/readyz" if metrics.ready.load(Ordering::Relaxed) => {
                                ("200 OK", "ok\n".to_string())
                            }
                            "/readyz" => ("503 Service Unavailable", "not ready\n".to_string()),
                            _ => ("404 Not Found", "not found\n".to_string()),
                        };
                        let _ = write!(
                            s,
                            "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}
