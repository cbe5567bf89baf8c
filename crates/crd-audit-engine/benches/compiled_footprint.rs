//! Where the bytes of a compiled CRD go (issue "Crossplane-scale clusters"):
//!
//!   cargo bench -p crd-audit-engine --bench compiled_footprint -- DIR_OR_FILES...
//!
//! For every CRD document read it measures, with a counting global allocator, the heap bytes
//! each form keeps: the YAML text, the parsed document (`serde_json::Value`), the CRD model
//! ([`Crd`]), the compiled validator ([`CrdValidator`]) and within it the CEL programs
//! (the difference `without_cel` makes), the check report, and the peak while checking.
//! It prints one line per CRD (with `-v`) and the totals, medians and maxima, so that a
//! change to a compiled form is measured, not guessed (`scripts/crossplane-crds.py` writes
//! Crossplane-shaped CRDs to measure on).

use crd_audit_engine::{Crd, CrdValidator, Release, check_crd};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The heap bytes `make` leaves allocated in what it returns.
fn kept<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = live();
    let t = make();
    (t, live().saturating_sub(before))
}

#[derive(Default)]
struct Row {
    name: String,
    yaml: usize,
    value: usize,
    crd: usize,
    validator: usize,
    cel: usize,
    check: usize,
    check_peak: usize,
}

const COLUMNS: [&str; 7] = [
    "yaml",
    "document",
    "crd model",
    "validator",
    "of it CEL",
    "check report",
    "check peak",
];

fn cells(r: &Row) -> [usize; 7] {
    [
        r.yaml,
        r.value,
        r.crd,
        r.validator,
        r.cel,
        r.check,
        r.check_peak,
    ]
}

fn files(args: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in args {
        let p = PathBuf::from(a);
        if p.is_dir() {
            let mut inner: Vec<PathBuf> = std::fs::read_dir(&p)
                .unwrap_or_else(|e| panic!("{a}: {e}"))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                })
                .collect();
            inner.sort();
            out.extend(inner);
        } else {
            out.push(p);
        }
    }
    out
}

fn mib(b: usize) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn kib(b: usize) -> String {
    format!("{:.0} KiB", b as f64 / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let verbose = args.iter().any(|a| a == "-v");
    let paths: Vec<String> = args.into_iter().filter(|a| a != "-v").collect();
    if paths.is_empty() {
        eprintln!("usage: compiled_footprint [-v] DIR_OR_FILE...");
        std::process::exit(2);
    }
    let release = Release::NEWEST;
    let mut rows = Vec::new();
    for path in files(&paths) {
        let (text, yaml) = kept(|| std::fs::read_to_string(&path).unwrap());
        let docs = crd_audit_engine::load::parse_str(&path.display().to_string(), &text);
        drop(text);
        for doc in docs {
            let doc = doc.unwrap_or_else(|e| panic!("{}: {}", e.source_name, e.message));
            // Measured again on its own: parse_documents returns all documents at once.
            let (value, value_bytes) = kept(|| doc.value.clone());
            drop(doc);
            if value["kind"] != "CustomResourceDefinition" {
                continue;
            }
            let (crd, crd_bytes) = kept(|| Crd::from_value(&value));
            let Ok(crd) = crd else {
                continue;
            };
            drop(value);
            let (validator, validator_bytes) =
                kept(|| CrdValidator::for_release(&crd, release).expect("compiles"));
            let before = live();
            let validator = validator.without_cel();
            let cel = before.saturating_sub(live());
            drop(validator);
            PEAK.store(live(), Ordering::Relaxed);
            let start = live();
            let (report, check) = kept(|| check_crd(&crd, release));
            let check_peak = PEAK.load(Ordering::Relaxed).saturating_sub(start);
            drop(report);
            let row = Row {
                name: crd.name.clone(),
                yaml,
                value: value_bytes,
                crd: crd_bytes,
                validator: validator_bytes,
                cel,
                check,
                check_peak,
            };
            if verbose {
                println!(
                    "{:<60} {}",
                    row.name,
                    cells(&row)
                        .iter()
                        .zip(COLUMNS)
                        .map(|(b, c)| format!("{c} {}", kib(*b)))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        eprintln!("no CRDs read");
        std::process::exit(1);
    }
    println!("{} CRDs", rows.len());
    println!(
        "{:<14} {:>12} {:>12} {:>12} {:>10}",
        "", "total", "median", "max", "/yaml"
    );
    let yaml_total: usize = rows.iter().map(|r| r.yaml).sum();
    for (i, col) in COLUMNS.iter().enumerate() {
        let mut v: Vec<usize> = rows.iter().map(|r| cells(r)[i]).collect();
        v.sort_unstable();
        let total: usize = v.iter().sum();
        println!(
            "{:<14} {:>12} {:>12} {:>12} {:>9.2}x",
            col,
            mib(total),
            kib(v[v.len() / 2]),
            kib(v[v.len() - 1]),
            total as f64 / yaml_total as f64
        );
    }
}
