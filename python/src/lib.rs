//! `ssdlab._ssdlab`: the Rust core behind the Python package. Every function takes plain
//! values and returns JSON or CSV text that `ssdlab/__init__.py` turns into Python objects, so
//! the summary a Python user sees is byte for byte the CLI's `--json`. Simulations run with the
//! GIL released.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ssdlab::config::{Config, ConfigBuilder, PRESETS};
use ssdlab::experiment::{
    collect, load_results, plan, run_job, run_points, ExperimentSpec, PointOutcome,
};
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::extend::{ExtendSpec, Extended};
use ssdlab::workload::fit::FitOptions;
use ssdlab::workload::flows::{FlowSpec, Merged};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{self, TraceOptions, TraceReader};

create_exception!(
    _ssdlab,
    SsdlabError,
    PyException,
    "A bad configuration, workload or run; the message names the file, line or key."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    SsdlabError::new_err(e.to_string())
}

/// Runs `f`, its error or a panic (a bug in ssdlab) raised as [`SsdlabError`]: no panic
/// crosses into Python, where it would be a `PanicException` (a `BaseException` that `sweep`
/// could not report as one failed point, and that does not pickle).
fn guarded<T, E: std::fmt::Display>(f: impl FnOnce() -> Result<T, E>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(err),
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(err(format!(
                "internal error (a bug in ssdlab; please report it with the call that caused it): {what}"
            )))
        }
    }
}

/// [`guarded`] with the GIL released.
fn detached<T: Send, E: std::fmt::Display>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, E> + Send,
) -> PyResult<T> {
    py.detach(|| guarded(f))
}

/// The configuration of `preset`, then `scheme`, then each `key=value` of `sets`.
fn build(preset: &str, scheme: Option<&str>, sets: &[String]) -> Result<Config, String> {
    ConfigBuilder::resolve(preset, scheme, sets).map_err(|e| e.to_string())
}

/// What to replay.
enum Source {
    Trace {
        path: String,
        options: TraceOptions,
        extend: Option<ExtendSpec>,
    },
    Synth(Box<SynthSpec>),
    /// Several I/O flows.
    Flows(Vec<FlowSpec>),
}

/// Runs one simulation; returns the JSON summary (with `alone`, each flow's run by itself:
/// its slowdown and the run's fairness) and, when asked, the per-request CSV.
fn simulate(
    cfg: &Config,
    source: Source,
    opts: RunOptions,
    want_requests: bool,
    timeline: Option<&str>,
    alone: Option<Vec<ssdlab::metrics::Summary>>,
) -> Result<(String, Option<String>), String> {
    use ssdlab::metrics::timeline::{Layout, Limits, Timeline};
    let mut timeline = match timeline {
        Some(path) => {
            let out = ssdlab::files::Streamed::create(std::path::Path::new(path))
                .map_err(|e| format!("cannot write {path}: {e}"))?;
            let t = Timeline::new(out, Layout::of(cfg), Limits::default())
                .map_err(|e| format!("writing {path}: {e}"))?;
            Some((path, t))
        }
        None => None,
    };
    let mut csv = want_requests.then(|| csv::Writer::from_writer(Vec::new()));
    let mut reader: Option<TraceReader> = None;
    let mut extended: Option<Extended> = None;
    let mut synth;
    let mut merged: Option<Merged> = None;
    // precondition.pre_process reads the workload once before the run.
    let mut pre: Option<Box<ssdlab::workload::Requests>> = None;
    let want_pre = cfg.precondition.pre_process;
    let workload: &mut ssdlab::workload::Requests = match source {
        Source::Trace {
            path,
            options,
            extend: Some(spec),
        } => {
            let open = || {
                Extended::open(std::path::Path::new(&path), options.clone(), &spec)
                    .map_err(|e| e.to_string())
            };
            if want_pre {
                pre = Some(Box::new(open()?));
            }
            extended.insert(open()?)
        }
        Source::Trace { path, options, .. } => {
            let open = || {
                TraceReader::open(std::path::Path::new(&path), options.clone())
                    .map_err(|e| e.to_string())
            };
            if want_pre {
                pre = Some(Box::new(open()?));
            }
            reader.insert(open()?)
        }
        Source::Synth(spec) => {
            if want_pre {
                pre = Some(Box::new(spec.generate()?));
            }
            synth = spec.generate()?;
            &mut synth
        }
        Source::Flows(flows) => {
            let open = || Merged::open(&flows).map_err(|e| e.to_string());
            if want_pre {
                pre = Some(Box::new(open()?));
            }
            merged.insert(open()?)
        }
    };
    let mut sim = Simulation::build(cfg, opts, workload, pre.as_deref_mut(), &|_, _| {})
        .map_err(|e| e.to_string())?;
    if let Some(w) = csv.as_mut() {
        sim.on_request(Box::new(|r| w.serialize(r).map_err(std::io::Error::other)));
    }
    if let Some((_, t)) = timeline.as_mut() {
        sim.on_timeline(Box::new(t));
    }
    let mut summary = sim.run().map_err(|e| e.to_string())?;
    if let Some((path, t)) = timeline {
        t.finish()
            .and_then(|(out, _)| out.finish())
            .map_err(|e| format!("writing {path}: {e}"))?;
    }
    summary.trace = reader.map(|r| r.counts);
    if let Some(alone) = alone {
        summary.add_alone(&alone);
    }
    let json = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    let requests = match csv {
        Some(w) => {
            let bytes = w.into_inner().map_err(|e| e.to_string())?;
            Some(String::from_utf8(bytes).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    Ok((json, requests))
}

/// Runs one simulation (the GIL released meanwhile). Returns `(summary_json, requests_csv)`.
#[pyfunction]
#[pyo3(signature = (preset, scheme, sets, trace, synth, seed, verify, limit, format, time_unit, device, requests, skip, extend, timeline, flows, alone))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    preset: String,
    scheme: Option<String>,
    sets: Vec<String>,
    trace: Option<String>,
    synth: Option<String>,
    seed: u64,
    verify: bool,
    limit: Option<u64>,
    format: Option<String>,
    time_unit: Option<String>,
    device: Option<u32>,
    requests: bool,
    skip: u64,
    extend: Option<String>,
    timeline: Option<String>,
    flows: Option<String>,
    alone: bool,
) -> PyResult<(String, Option<String>)> {
    detached(py, || {
        let cfg = build(&preset, scheme.as_deref(), &sets)?;
        if limit == Some(0) {
            return Err("limit = 0: must be >= 1 (a run of no requests measures nothing)".into());
        }
        let flows = flows.map(|text| parse_flows(&text)).transpose()?;
        if alone && flows.as_ref().is_none_or(|f| f.len() < 2) {
            return Err("alone=True measures each flow's slowdown beside the others: give two or more flows".into());
        }
        let source = match (trace, synth) {
            (None, None) if flows.is_some() => {
                let trace_keys = [
                    ("limit", limit.is_some()),
                    ("format", format.is_some()),
                    ("time_unit", time_unit.is_some()),
                    ("device", device.is_some()),
                    ("skip", skip > 0),
                    ("extend", extend.is_some()),
                ];
                if let Some((key, _)) = trace_keys.iter().find(|k| k.1) {
                    return Err(format!(
                        "{key}= reads a trace; with flows= give it in the flow's own dict"
                    ));
                }
                Source::Flows(flows.clone().unwrap_or_default())
            }
            (_, _) if flows.is_some() => {
                return Err(
                    "flows= is the run's workload: give no trace= or synth= beside it".into(),
                )
            }
            (Some(path), None) => Source::Trace {
                path,
                options: TraceOptions {
                    format: format.as_deref().map(str::parse).transpose()?,
                    time_unit: time_unit.as_deref().map(str::parse).transpose()?,
                    limit,
                    skip,
                    device,
                    ..TraceOptions::default()
                },
                extend: extend
                    .as_deref()
                    .map(str::parse)
                    .transpose()
                    .map_err(|e| format!("extend: {e}"))?,
            },
            (None, Some(_)) if extend.is_some() || skip > 0 => {
                return Err("extend= and skip= read a trace; give trace=, not synth=".into())
            }
            (None, Some(spec)) => Source::Synth(Box::new(spec.parse()?)),
            _ => return Err("give exactly one of trace=, synth= or flows=".to_string()),
        };
        let opts = RunOptions {
            seed,
            verify,
            flows: flows.clone().unwrap_or_default(),
            ..RunOptions::default()
        };
        let alone = match (&flows, alone) {
            (Some(f), true) => Some(ssdlab::experiment::run_alone(&cfg, &opts, f)?),
            _ => None,
        };
        simulate(&cfg, source, opts, requests, timeline.as_deref(), alone)
    })
}

/// The flows of `flows=` (a JSON list of dicts with the keys of a `[[flow]]` table), checked.
fn parse_flows(text: &str) -> Result<Vec<FlowSpec>, String> {
    FlowSpec::from_json(text, "flows=").map_err(|e| e.to_string())
}

/// Streams what `write` writes to the file `out` (buffered, flushed); returns its result.
fn write_to<T>(
    out: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<T>,
) -> Result<T, String> {
    let file = std::fs::File::create(out).map_err(|e| format!("cannot write {out}: {e}"))?;
    let mut w = std::io::BufWriter::new(file);
    write(&mut w)
        .and_then(|n| std::io::Write::flush(&mut w).map(|()| n))
        .map_err(|e| format!("writing {out}: {e}"))
}

/// Writes the synthetic workload `spec` (the `--synth` syntax) to `out` as MSR Cambridge CSV,
/// or as FIU IODedup when it has duplicate content; returns `(requests, format)`.
#[pyfunction]
fn synth(py: Python<'_>, spec: String, out: String) -> PyResult<(u64, String)> {
    detached(py, || {
        let spec: SynthSpec = spec.parse()?;
        let gen = spec.generate()?;
        let (n, format) = if spec.dedup > 0.0 {
            (write_to(&out, |w| gen.write_fiu(w))?, "fiu")
        } else {
            (write_to(&out, |w| gen.write_msr_csv(w))?, "msr")
        };
        Ok::<_, String>((n, format.to_string()))
    })
}

/// `ssdlab trace extend`: the trace at `path` (format detected unless given) lengthened by the
/// block bootstrap `spec`, written to `out` as MSR Cambridge CSV; returns the requests written.
#[pyfunction]
#[pyo3(signature = (path, format, spec, out))]
fn extend(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    spec: String,
    out: String,
) -> PyResult<u64> {
    detached(py, || {
        let spec: ExtendSpec = spec.parse()?;
        let options = TraceOptions {
            format: format.as_deref().map(str::parse).transpose()?,
            ..TraceOptions::default()
        };
        let ext = Extended::open(std::path::Path::new(&path), options, &spec)
            .map_err(|e| e.to_string())?;
        write_to(&out, |w| ssdlab::workload::write_msr_csv(ext, w))
    })
}

/// The statistics of `source`, as `ssdlab trace stats` computes them.
fn stats_of(source: Source) -> Result<trace::TraceStats, String> {
    match source {
        Source::Trace { path, options, .. } => {
            let reader = TraceReader::open(std::path::Path::new(&path), options)
                .map_err(|e| e.to_string())?;
            trace::stats(reader).map_err(|e| e.to_string())
        }
        Source::Synth(spec) => {
            trace::summarise(spec.generate()?, "synthetic".into()).map_err(|e| e.to_string())
        }
        Source::Flows(flows) => {
            let merged = Merged::open(&flows).map_err(|e| e.to_string())?;
            trace::summarise(merged, "flows".into()).map_err(|e| e.to_string())
        }
    }
}

/// A trace at `path` in `format` (`None`: detected), read whole.
fn whole_trace(path: String, format: Option<&str>) -> Result<Source, String> {
    Ok(Source::Trace {
        path,
        options: TraceOptions {
            format: format.map(str::parse).transpose()?,
            ..TraceOptions::default()
        },
        extend: None,
    })
}

/// The statistics of a trace (`path`, with `format` or detection) or of a synthetic `spec`,
/// as the JSON of `ssdlab trace stats --json`.
#[pyfunction]
#[pyo3(signature = (path, spec, format))]
fn trace_stats(
    py: Python<'_>,
    path: Option<String>,
    spec: Option<String>,
    format: Option<String>,
) -> PyResult<String> {
    detached(py, || {
        let source = match (path, spec) {
            (Some(path), None) => whole_trace(path, format.as_deref())?,
            (None, Some(spec)) => Source::Synth(Box::new(spec.parse()?)),
            _ => return Err("give exactly one of trace= or synth=".to_string()),
        };
        serde_json::to_string(&stats_of(source)?).map_err(|e| e.to_string())
    })
}

/// `ssdlab trace fit`: the fitted spec and its evidence as JSON.
#[pyfunction]
#[pyo3(signature = (path, format, requests, seed, rounds))]
fn fit(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    requests: Option<u64>,
    seed: u64,
    rounds: usize,
) -> PyResult<String> {
    detached(py, || {
        let source = whole_trace(path.clone(), format.as_deref())?;
        let Source::Trace { options, .. } = &source else {
            unreachable!("whole_trace gives a trace")
        };
        let options = options.clone();
        let stats = stats_of(source)?;
        let opts = FitOptions {
            requests,
            seed,
            rounds,
        };
        let open = || {
            TraceReader::open(std::path::Path::new(&path), options.clone())
                .map_err(|e| e.to_string())
        };
        let (f, choice) = ssdlab::workload::fit::fit_workload(&stats.profile, Some(&open), &opts)
            .map_err(|e| format!("fitting {path}: {e}"))?;
        let mut v = serde_json::to_value(&f).map_err(|e| e.to_string())?;
        v["choice"] = serde_json::to_value(&choice).map_err(|e| e.to_string())?;
        v["failure"] = f.failure().into();
        Ok::<_, String>(v.to_string())
    })
}

/// The resolved configuration as JSON.
#[pyfunction]
#[pyo3(signature = (preset, scheme, sets))]
fn config(preset: String, scheme: Option<String>, sets: Vec<String>) -> PyResult<String> {
    guarded(|| {
        let cfg = build(&preset, scheme.as_deref(), &sets)?;
        serde_json::to_string(&cfg).map_err(|e| e.to_string())
    })
}

/// `(name, summary)` of every preset.
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    PRESETS
        .iter()
        .map(|p| (p.name.to_string(), p.summary.to_string()))
        .collect()
}

/// `(name, summary, paper)` of every scheme.
#[pyfunction]
fn schemes() -> Vec<(String, String, String)> {
    ssdlab::schemes::SCHEMES
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.summary.to_string(),
                s.paper.to_string(),
            )
        })
        .collect()
}

/// Points run, points skipped (already done), points failed with their errors.
type Outcomes = (Vec<String>, Vec<String>, Vec<(String, String)>);

/// Runs every point of the experiment in `dir` not already done (resumable), on `jobs` threads
/// (the GIL released). Returns `(done, skipped, [(point, error)])`.
#[pyfunction]
#[pyo3(signature = (dir, jobs))]
fn experiment_run(py: Python<'_>, dir: String, jobs: usize) -> PyResult<Outcomes> {
    detached(py, || {
        let dir = std::path::Path::new(&dir);
        let spec = ExperimentSpec::load(dir).map_err(|e| e.to_string())?;
        let outcomes = run_points(&spec, dir, jobs.max(1), None, &|_, _| {}, &|_| {})
            .map_err(|e| e.to_string())?;
        let (mut done, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        for o in outcomes {
            match o {
                PointOutcome::Done(id) => done.push(id),
                PointOutcome::Skipped(id) => skipped.push(id),
                PointOutcome::Failed(id, e) => failed.push((id, e.to_string())),
            }
        }
        Ok::<_, String>((done, skipped, failed))
    })
}

/// The experiment's current points with their stored results (`null` where none), as JSON:
/// `[{"point", "workload", "variant", "grid", "summary"}]`.
#[pyfunction]
fn experiment_results(dir: String) -> PyResult<String> {
    guarded(|| {
        let dir = std::path::Path::new(&dir);
        let spec = ExperimentSpec::load(dir).map_err(|e| e.to_string())?;
        let loaded = load_results(&spec, dir);
        let rows: Vec<serde_json::Value> = loaded
            .points
            .iter()
            .map(|(p, r)| {
                serde_json::json!({
                    "point": p.id,
                    "workload": p.workload,
                    "variant": p.variant,
                    "grid": p.grid,
                    "summary": r.as_ref().map(|r| &r.summary),
                })
            })
            .collect();
        serde_json::to_string(&rows).map_err(|e| e.to_string())
    })
}

/// Writes one job file per point of the experiment in `dir` that has no current result into
/// `out`; returns their paths (for running them elsewhere: Ray tasks, a Slurm array). Like
/// `ssdlab experiment plan`, an invalid point stops the whole plan.
#[pyfunction]
fn experiment_plan_pending(dir: String, out: String) -> PyResult<Vec<String>> {
    guarded(|| {
        let dir = std::path::Path::new(&dir);
        let spec = ExperimentSpec::load(dir).map_err(|e| e.to_string())?;
        let pending: std::collections::BTreeSet<String> = load_results(&spec, dir)
            .points
            .into_iter()
            .filter(|(_, r)| r.is_none())
            .map(|(p, _)| p.id)
            .collect();
        let files = plan(&spec, dir, std::path::Path::new(&out)).map_err(|e| e.to_string())?;
        let mut jobs = Vec::new();
        for f in files {
            let id = f.file_stem().map(|s| s.to_string_lossy().into_owned());
            if id.is_some_and(|id| pending.contains(&id)) {
                jobs.push(f.display().to_string());
            } else {
                // A point already done: its job is not needed.
                std::fs::remove_file(&f).map_err(|e| e.to_string())?;
            }
        }
        Ok::<_, String>(jobs)
    })
}

/// Runs one job file (from [`experiment_plan_pending`]) and writes its result into `out_dir`
/// (the GIL released); returns the result's path.
#[pyfunction]
fn experiment_run_job(py: Python<'_>, job: String, out_dir: String) -> PyResult<String> {
    detached(py, || {
        run_job(
            std::path::Path::new(&job),
            std::path::Path::new(&out_dir),
            None,
        )
        .map(|p| p.display().to_string())
        .map_err(|e| e.to_string())
    })
}

/// Copies results written elsewhere (`source`) into the experiment's store when they belong to
/// a current point; returns `(collected, ignored)`.
#[pyfunction]
fn experiment_collect(dir: String, source: String) -> PyResult<(usize, usize)> {
    guarded(|| {
        let dir = std::path::Path::new(&dir);
        let spec = ExperimentSpec::load(dir).map_err(|e| e.to_string())?;
        collect(&spec, dir, std::path::Path::new(&source)).map_err(|e| e.to_string())
    })
}

/// The native module.
#[pymodule]
fn _ssdlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdlabError", m.py().get_type::<SsdlabError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(config, m)?)?;
    m.add_function(wrap_pyfunction!(synth, m)?)?;
    m.add_function(wrap_pyfunction!(extend, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_run, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_results, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_plan_pending, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_run_job, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_collect, m)?)?;
    Ok(())
}
