//! `crd-audit validate --crd CRD... OBJECTS...`: judge objects as the API server would.
//!
//! Objects are read one document at a time and each verdict is written as soon as it is
//! known, so memory does not grow with the input.

use super::crd_catalog::{Catalog, Indexed};
use super::inputs::{self, Sourced};
use super::locate::{Located, POSITIONS_MAX_TEXT, PieceText, locate};
use super::sink::{self, Format, ObjectVerdict, Sink, Totals, ValidateTotals};
use super::updates::{Judging, KubeVersion};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::audit::read_crd::read_crd;
use crate::audit::shown_verdict::ShownVerdict;
use crd_audit_engine::load::positions::DocumentPositions;
use crd_audit_engine::load::stream::Piece;
use crd_audit_engine::load::{Document, LoadError};
use crd_audit_engine::{Cause, Path};
use crd_audit_engine::{Mode, Subresource};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A CRD file or directory (repeat the flag, or separate with commas, for several);
    /// documents that are not CRDs are skipped.
    #[arg(
        long = "crd",
        required_unless_present = "crds_from_cluster",
        value_name = "CRD",
        value_delimiter = ','
    )]
    pub crds: Vec<PathBuf>,
    /// Judge against the CRDs installed in the cluster of the kubeconfig context (read-only);
    /// a CRD also given with --crd replaces the cluster's one of the same group and kind.
    #[arg(long)]
    pub crds_from_cluster: bool,
    /// Kubeconfig for --crds-from-cluster (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE", requires = "crds_from_cluster")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context for --crds-from-cluster (default: the current one).
    #[arg(long, requires = "crds_from_cluster")]
    pub context: Option<String>,
    /// Object files or directories (`-` reads standard input): multi-document YAML or JSON,
    /// `kind: List` documents unpacked.
    #[arg(required = true, value_name = "OBJECTS")]
    pub objects: Vec<PathBuf>,
    /// Judge objects as stored data: the whole object, `status` included, as every write
    /// must pass it on a cluster without validation ratcheting (default: as a create, which
    /// drops `status` under a status subresource).
    #[arg(long, conflicts_with = "update")]
    pub stored: bool,
    /// Judge each object as an UPDATE of the stored object (in these files or directories)
    /// with the same group, kind, namespace and name, with validation ratcheting; an object
    /// with no stored counterpart is judged as a create.
    #[arg(long, value_name = "OLD", value_delimiter = ',')]
    pub update: Vec<PathBuf>,
    /// With --update: the endpoint written, `status` for `PUT .../status`.
    #[arg(long, value_enum, requires = "update")]
    pub subresource: Option<SubresourceArg>,
    /// The Kubernetes release whose rules apply (1.X; default: with --crds-from-cluster the
    /// cluster's own, else the newest modelled, 1.36): CEL rules run in that release's CEL
    /// environment (a rule using a library it lacks fails to compile), and before 1.30
    /// updates are not ratcheted and `optionalOldSelf` is dropped.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// Count fields that pruning would drop (unknown to the schema) as findings, as a
    /// `fieldValidation=Strict` request would refuse them.
    #[arg(long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

/// The endpoint of an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SubresourceArg {
    Status,
}

/// The verdict for an object whose CRD could not be compiled (a bug).
fn not_compiled(obj: &Value, message: &str) -> ShownVerdict {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let meta = obj.get("metadata");
    ShownVerdict {
        api_version: text(obj.get("apiVersion")),
        kind: text(obj.get("kind")),
        namespace: text(meta.and_then(|m| m.get("namespace"))),
        name: text(meta.and_then(|m| m.get("name"))),
        code: 500,
        errors: vec![Cause::internal(Path::root(), message)],
        internal_error: true,
        ..ShownVerdict::default()
    }
}

/// The line for an object no given CRD defines.
fn unknown_kind(obj: &Value, origin: &str) -> ShownVerdict {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let meta = obj.get("metadata");
    let api_version = text(obj.get("apiVersion"));
    let kind = text(obj.get("kind"));
    let message = if !obj.is_object() {
        format!(
            "not an object (a {})",
            crd_audit_engine::render::json_kind(obj).replace("bool", "boolean")
        )
    } else if kind.is_empty() || api_version.is_empty() {
        "apiVersion and kind are required to find the object's CRD".to_string()
    } else {
        format!(
            "no matches for kind {} in version {}: no CRD {origin} defines it",
            crd_audit_engine::render::quote(&kind),
            crd_audit_engine::render::quote(&api_version)
        )
    };
    ShownVerdict {
        api_version,
        kind,
        namespace: text(meta.and_then(|m| m.get("namespace"))),
        name: text(meta.and_then(|m| m.get("name"))),
        code: 404,
        request_error: Some(message),
        ..ShownVerdict::default()
    }
}

/// Consecutive pieces of one input on their way to a worker (batched so that handing them
/// over costs little), numbered for putting results back in order.
struct Job {
    seq: usize,
    file: Arc<str>,
    pieces: Vec<Result<Piece, LoadError>>,
    /// The pieces' text length.
    bytes: usize,
}

/// How much input a worker decodes ahead while the CRDs are still being compiled.
const PARSE_AHEAD: usize = 16 << 20;

/// How much text a job carries at most (a single larger piece goes alone).
const JOB_BYTES: usize = 64 << 10;

/// The verdicts of one piece: per document, its items' verdicts (a `List` has several).
struct Done {
    seq: usize,
    file: Arc<str>,
    /// Each item's verdict, whether a CRD was found for it, and where its findings stand.
    docs: Vec<Result<Vec<Judged>, LoadError>>,
}

/// A job's documents, decoded (which needs no CRD), each with the text of its piece (read
/// again for the positions of findings, then dropped with the job).
struct Parsed {
    seq: usize,
    file: Arc<str>,
    docs: Vec<(Result<Document, LoadError>, Option<SharedText>)>,
}

/// A piece's text, shared by its documents (`None` beyond [`POSITIONS_MAX_TEXT`]).
type SharedText = Arc<PieceText>;

/// One object's verdict, whether a CRD was found for it, and where its findings stand.
type Judged = (ShownVerdict, bool, Located);

/// An input error for a bug met while reading or judging input.
fn internal_load_error(file: &str, message: String) -> LoadError {
    LoadError::new(
        file,
        None,
        None,
        format!("crd-audit failed while reading this input (a bug): {message}"),
    )
}

fn parse(job: Job) -> Parsed {
    let mut docs = Vec::new();
    for piece in job.pieces {
        match piece {
            Ok(p) => match crd_audit_engine::panic_guard::catch(|| p.parse(&job.file)) {
                Ok(parsed) => {
                    // Large pieces are not kept: their findings stand at their documents' lines.
                    let text = (p.text.len() <= POSITIONS_MAX_TEXT).then(|| {
                        Arc::new(PieceText {
                            text: p.text,
                            line_offset: p.line_offset,
                        })
                    });
                    docs.extend(parsed.into_iter().map(|d| (d, text.clone())));
                }
                Err(m) => {
                    let mut e = internal_load_error(&job.file, m);
                    e.doc = Some(0);
                    e.line = Some(p.line_offset + 1);
                    docs.push((Err(e), None));
                }
            },
            Err(e) => docs.push((Err(e), None)),
        }
    }
    Parsed {
        seq: job.seq,
        file: job.file,
        docs,
    }
}

fn judge(catalog: &Catalog, how: &Judging, parsed: Parsed) -> Done {
    let docs = parsed
        .docs
        .into_iter()
        .map(|(doc, text)| {
            doc.and_then(|doc| {
                let (doc_index, doc_line) = (doc.index, doc.line);
                let paths = super::locate::item_paths(&doc.value);
                let sourced = Sourced {
                    file: String::new(),
                    doc,
                };
                let items = inputs::try_unpack_lists(sourced).map_err(|(mut e, value)| {
                    crd_audit_engine::load::drop_value(value);
                    e.source_name = parsed.file.to_string();
                    e
                })?;
                // The document's positions, read once when a finding needs them.
                let mut positions: Option<Option<DocumentPositions>> = None;
                Ok(items
                    .into_iter()
                    .enumerate()
                    .filter(|(_, item)| !item.doc.value.is_null())
                    .map(|(k, item)| {
                        let obj = item.doc.value;
                        let (verdict, known) = match catalog.find(&obj) {
                            Some(Ok(v)) => (how.judge(v, obj), true),
                            Some(Err(message)) => {
                                let verdict = not_compiled(&obj, message);
                                crd_audit_engine::load::drop_value(obj);
                                (verdict, true)
                            }
                            None => {
                                let verdict = unknown_kind(&obj, catalog.origin);
                                crd_audit_engine::load::drop_value(obj);
                                (verdict, false)
                            }
                        };
                        let prefix = paths.get(k).map_or("", String::as_str);
                        let located = locate(&verdict, prefix, doc_line, || {
                            positions
                                .get_or_insert_with(|| {
                                    let t = text.as_ref()?;
                                    DocumentPositions::read(&t.text, doc_index, t.line_offset)
                                })
                                .as_ref()
                        });
                        (verdict, known, located)
                    })
                    .collect())
            })
        })
        .collect();
    Done {
        seq: parsed.seq,
        file: parsed.file,
        docs,
    }
}

/// Reads and compiles the `--crd` inputs, printing what is wrong with them.
fn load_catalog(args: &Args, release: KubeVersion) -> Option<Catalog> {
    let mut crds = match super::crd_catalog::index_crds(&args.crds) {
        Ok(c) => c,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {e}");
            }
            return None;
        }
    };
    let mut unreadable = 0;
    if args.crds_from_cluster {
        match cluster_crds(args, &crds) {
            Ok((c, n)) => {
                crds.extend_held(c);
                unreadable = n;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return None;
            }
        }
    } else if crds.is_empty() {
        eprintln!("error: no CustomResourceDefinition found in the --crd inputs");
        return None;
    }
    let catalog = Catalog::new(crds, release).map(|mut c| {
        c.origin = match (args.crds_from_cluster, args.crds.is_empty()) {
            (false, _) => "given with --crd",
            (true, true) => "in the cluster",
            (true, false) => "in the cluster or given with --crd",
        };
        c.unreadable = unreadable;
        c
    });
    catalog.map_err(|e| eprintln!("error: {e}")).ok()
}

/// The CRDs installed in the cluster, but for those of a group and kind that a file gives,
/// and how many could not be read (each an internal error, said on stderr: the others are
/// used all the same).
fn cluster_crds(
    args: &Args,
    given: &Indexed,
) -> Result<(Vec<(String, crate::packed_crd::PackedCrd)>, usize), String> {
    let cluster = crate::cluster::reader::Cluster::connect(
        args.kubeconfig.as_deref(),
        args.context.as_deref(),
    )?;
    let replaced: std::collections::HashSet<(&str, &str)> = given
        .kinds()
        .map(|(g, k)| (g.as_str(), k.as_str()))
        .collect();
    let mut crds = Vec::new();
    let mut unreadable = Vec::new();
    cluster
        .each_crd(&mut |raw| match read_crd(&raw) {
            Ok(c) if replaced.contains(&(c.group.as_str(), c.kind.as_str())) => {}
            Ok(c) => crds.push((
                format!("cluster:{}", c.name),
                crate::packed_crd::PackedCrd::pack(c),
            )),
            Err(e) => unreadable.push(e),
        })
        .map_err(|e| format!("reading the CRDs of the cluster: {e}"))?;
    for e in &unreadable {
        eprintln!("error: {e}");
    }
    Ok((crds, unreadable.len()))
}

/// The CRDs once compiled (`None` when they could not be read).
type CatalogCell = OnceLock<Option<Catalog>>;

/// [`judge`], with a bug outside the per-object guard reported for the whole job.
fn judge_guarded(catalog: &Catalog, how: &Judging, parsed: Parsed) -> Done {
    let (seq, file) = (parsed.seq, parsed.file.clone());
    crd_audit_engine::panic_guard::catch(|| judge(catalog, how, parsed)).unwrap_or_else(|m| Done {
        seq,
        docs: vec![Err(internal_load_error(&file, m))],
        file,
    })
}

/// [`parse`], with a bug outside the per-piece guard reported for the whole job.
fn parse_guarded(job: Job) -> Parsed {
    let (seq, file) = (job.seq, job.file.clone());
    crd_audit_engine::panic_guard::catch(|| parse(job)).unwrap_or_else(|m| Parsed {
        seq,
        docs: vec![(Err(internal_load_error(&file, m)), None)],
        file,
    })
}

/// A worker: takes jobs, decodes them, judges them once the CRDs are compiled (decoding a
/// bounded amount ahead until then), and hands the verdicts to the writer.
fn work(
    jobs: &Mutex<mpsc::Receiver<Job>>,
    catalog: &CatalogCell,
    how: &Judging,
    done: mpsc::SyncSender<Done>,
) {
    let mut ahead: Vec<Parsed> = Vec::new();
    let mut ahead_bytes = 0;
    loop {
        match catalog.get() {
            Some(None) => return,
            Some(Some(c)) => {
                for parsed in ahead.drain(..) {
                    if done.send(judge_guarded(c, how, parsed)).is_err() {
                        return;
                    }
                }
            }
            None if ahead_bytes >= PARSE_AHEAD => {
                catalog.wait();
                continue;
            }
            None => {}
        }
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else {
            if ahead.is_empty() {
                return;
            }
            catalog.wait(); // the input ended before the CRDs were ready
            continue;
        };
        injected_panic("worker", &job.file);
        let bytes = job.bytes;
        let parsed = parse_guarded(job);
        match catalog.get() {
            Some(Some(c)) => {
                if done.send(judge_guarded(c, how, parsed)).is_err() {
                    return;
                }
            }
            _ => {
                ahead_bytes += bytes;
                ahead.push(parsed);
            }
        }
    }
}

/// Runs a thread's work; a panic (a bug) outside the per-document guards is reported once
/// and stops only that thread.
fn contained(what: &str, stopped: &AtomicUsize, f: impl FnOnce()) {
    if let Err(m) = crd_audit_engine::panic_guard::catch(f) {
        eprintln!("error: crd-audit: the {what} stopped (a bug): {m}");
        stopped.fetch_add(1, Ordering::Relaxed);
    }
}

pub fn run(args: &Args) -> u8 {
    let files = match inputs::expand(&args.objects) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let mut how = Judging {
        mode: if args.stored {
            Mode::Stored
        } else {
            Mode::Create
        },
        release: match &args.kubernetes_version {
            Some(v) => match v.parse::<KubeVersion>() {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: --kubernetes-version: {e}");
                    return EXIT_INPUT_ERROR;
                }
            },
            None if args.crds_from_cluster => {
                match crate::cluster::reader::Cluster::connect(
                    args.kubeconfig.as_deref(),
                    args.context.as_deref(),
                ) {
                    Ok(c) => c.release(),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_INPUT_ERROR;
                    }
                }
            }
            None => KubeVersion::default(),
        },
        to: match args.subresource {
            Some(SubresourceArg::Status) => Subresource::Status,
            None => Subresource::Main,
        },
        ..Judging::default()
    };
    if !args.update.is_empty()
        && let Err(e) = how.read_stored(&args.update)
    {
        eprintln!("error: --update: {e}");
        return EXIT_INPUT_ERROR;
    }
    let how = &how;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(workers * 4);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::sync_channel::<Done>(workers * 4);
    let catalog: CatalogCell = OnceLock::new();
    let abort = AtomicBool::new(false);
    // Threads that stopped on a bug outside the per-document guards.
    let stopped = AtomicUsize::new(0);
    let mut t = ValidateTotals::default();
    // The first failed write to standard output (then nothing more is written).
    let mut write_error: Option<std::io::Error> = None;
    let crds_ok = std::thread::scope(|scope| {
        let (abort, catalog, job_rx, stopped) = (&abort, &catalog, &job_rx, &stopped);
        // Reader: cuts the inputs into pieces, in order, and batches them into jobs.
        scope.spawn(move || {
            // The sender outlives the guard, so that the job queue closes only once a stop is
            // counted.
            let job_tx = job_tx;
            contained("input reader", stopped, || {
                let mut seq = 0;
                for path in &files {
                    let file: Arc<str> = Arc::from(inputs::display_name(path));
                    let mut batch = Vec::new();
                    let mut bytes = 0;
                    let mut pieces = inputs::read_pieces(path).peekable();
                    while let Some(piece) = pieces.next() {
                        bytes += piece.as_ref().map_or(0, |p| p.text.len());
                        batch.push(piece);
                        if bytes >= JOB_BYTES || batch.len() >= 256 || pieces.peek().is_none() {
                            let job = Job {
                                seq,
                                file: file.clone(),
                                pieces: std::mem::take(&mut batch),
                                bytes,
                            };
                            seq += 1;
                            bytes = 0;
                            if abort.load(Ordering::Relaxed) || job_tx.send(job).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
            drop(job_tx);
        });
        let spawn_worker = |done: mpsc::SyncSender<Done>| {
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || {
                    // As with the reader: the result channel closes only once a stop is
                    // counted (a panic drops the worker's own sender while unwinding).
                    contained("validation worker", stopped, || {
                        work(job_rx, catalog, how, done.clone())
                    });
                    drop(done);
                })
                .expect("spawn a validation worker");
        };
        // One worker decodes objects while this thread compiles the CRDs; the others join
        // when the CRDs are ready (more would only slow the compilation down).
        spawn_worker(done_tx.clone());
        // The workers wait for the catalog: it must be set whatever happens.
        let loaded = crd_audit_engine::panic_guard::catch(|| load_catalog(args, how.release))
            .unwrap_or_else(|m| {
                eprintln!("error: crd-audit failed while reading the CRDs (a bug): {m}");
                None
            });
        let ok = loaded.is_some();
        t.internal_errors += loaded.as_ref().map_or(0, |c| c.unreadable);
        let _ = catalog.set(loaded);
        if !ok {
            // Stop the reader, and drain what it queued so that it can finish.
            abort.store(true, Ordering::Relaxed);
            drop(done_tx);
            while let Ok(Ok(_)) = job_rx.lock().map(|rx| rx.recv()) {}
            return false;
        }
        for _ in 1..workers {
            spawn_worker(done_tx.clone());
        }
        drop(done_tx);
        // Writer: puts results back in input order.
        let stdout = std::io::stdout();
        let out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        let command = sink::Command::Validate {
            strict: args.strict,
        };
        let mut sink = sink::new(args.output, command, out);
        // A bug here must not leave the workers blocked on a full channel: the receiver goes
        // with the closure.
        let wrote = crd_audit_engine::panic_guard::catch(|| {
            write_in_order(done_rx, &mut *sink, &mut t, &mut write_error, abort)
        });
        if let Err(m) = wrote {
            eprintln!("error: crd-audit: the output writer stopped (a bug): {m}");
            t.internal_errors += 1;
        }
        abort.store(true, Ordering::Relaxed);
        while let Ok(Ok(_)) = job_rx.lock().map(|rx| rx.recv()) {}
        // Every thread is done now.
        t.internal_errors += stopped.load(Ordering::Relaxed);
        if write_error.is_none() {
            // The text totals are said when they can be; the end of a JUnit or SARIF
            // document must be written.
            let _ = sink.totals(&Totals::Validate(&t));
            if let Err(e) = sink.finish(exit_status(true, &t, args.strict)) {
                write_error = Some(e);
            }
        }
        if let Err(e) = sink.flush()
            && write_error.is_none()
        {
            write_error = Some(e);
        }
        true
    });
    // Freeing the compiled CRDs would only delay the exit.
    std::mem::forget(catalog);
    let status = exit_status(crds_ok, &t, args.strict);
    match write_error {
        Some(e) => sink::write_failed(&e, status),
        None => status,
    }
}

/// Hands the verdicts to the sink in input order (each job's results wait for those of the
/// jobs before it), counting them. A failed write stops the reading of input (`abort`) and
/// the writing of the next results.
fn write_in_order(
    done_rx: mpsc::Receiver<Done>,
    sink: &mut dyn Sink,
    t: &mut ValidateTotals,
    write_error: &mut Option<std::io::Error>,
    abort: &AtomicBool,
) {
    let mut pending: BTreeMap<usize, Done> = BTreeMap::new();
    let (mut next_seq, mut next_index) = (0, 0);
    let mut current_file: Option<Arc<str>> = None;
    let mut emit = |done: Done| {
        if current_file.as_ref() != Some(&done.file) {
            current_file = Some(done.file.clone());
            next_index = 0;
        }
        if write_error.is_some() {
            return;
        }
        for doc in done.docs {
            let index = next_index;
            next_index += 1;
            let verdicts = match doc {
                Ok(v) => v,
                Err(mut e) => {
                    if e.doc.is_some() {
                        e.doc = Some(index);
                    }
                    eprintln!("error: {e}");
                    t.input_errors += 1;
                    if let Err(e) = sink.unreadable(&done.file, Some(index), &e) {
                        *write_error = Some(e);
                        abort.store(true, Ordering::Relaxed);
                        return;
                    }
                    continue;
                }
            };
            let source = format!("{}#{index}", done.file);
            for (verdict, known, at) in verdicts {
                t.count(&verdict, known);
                let written = sink.object_verdict(&ObjectVerdict {
                    file: &done.file,
                    source: &source,
                    verdict: &verdict,
                    known,
                    at: &at,
                });
                if let Err(e) = written {
                    // Stop reading input; what is under way is drained.
                    *write_error = Some(e);
                    abort.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    };
    for done in done_rx {
        pending.insert(done.seq, done);
        while let Some(done) = pending.remove(&next_seq) {
            next_seq += 1;
            emit(done);
        }
    }
    // Every worker has stopped. Results still waiting for an earlier one mean a worker died
    // (a bug, reported by it): write them anyway, and let the reader finish.
    for (_, done) in std::mem::take(&mut pending) {
        emit(done);
    }
}

/// The exit status of a run with these totals (`crds_ok`: the CRDs could be read).
fn exit_status(crds_ok: bool, t: &ValidateTotals, strict: bool) -> u8 {
    if !crds_ok || t.input_errors > 0 || t.internal_errors > 0 {
        EXIT_INPUT_ERROR
    } else if t.invalid > 0 || (strict && t.pruned > 0) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// A test hook of debug builds: panics here when `CRD_AUDIT_INJECT_PANIC` is `site:name` (read
/// once per process), so that tests can reach the worker's panic handling. Release builds
/// ignore the variable. (The engine's own sites answer it with its `fault-injection` feature.)
fn injected_panic(site: &str, name: &str) {
    #[cfg(debug_assertions)]
    {
        static TARGET: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
        let target = TARGET.get_or_init(|| {
            let spec = std::env::var("CRD_AUDIT_INJECT_PANIC").ok()?;
            let (s, n) = spec.split_once(':')?;
            Some((s.to_string(), n.to_string()))
        });
        if target.as_ref().is_some_and(|(s, n)| s == site && n == name) {
            panic!("injected panic at {site} for {name} (CRD_AUDIT_INJECT_PANIC)");
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = (site, name);
}
