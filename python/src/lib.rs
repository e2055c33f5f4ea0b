//! `ssdlab._ssdlab`: the Rust core behind the Python package. Every function takes plain
//! values and returns JSON or CSV text that `ssdlab/__init__.py` turns into Python objects, so
//! the summary a Python user sees is byte for byte the CLI's `--json`. Simulations run with the
//! GIL released.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ssdlab::config::{Config, ConfigBuilder, PRESETS};
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{TraceOptions, TraceReader};

create_exception!(
    _ssdlab,
    SsdlabError,
    PyException,
    "A bad configuration, workload or run; the message names the file, line or key."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    SsdlabError::new_err(e.to_string())
}

/// The configuration of `preset`, then `scheme`, then each `key=value` of `sets`.
fn build(preset: &str, scheme: Option<&str>, sets: &[String]) -> Result<Config, String> {
    let mut b = ConfigBuilder::preset(preset).map_err(|e| e.to_string())?;
    if let Some(s) = scheme {
        b = b.scheme(s);
    }
    for s in sets {
        b = b.set(s).map_err(|e| e.to_string())?;
    }
    b.build().map_err(|e| e.to_string())
}

/// What to replay.
enum Source {
    Trace { path: String, options: TraceOptions },
    Synth(SynthSpec),
}

/// Runs one simulation; returns the JSON summary and, when asked, the per-request CSV.
fn simulate(
    cfg: &Config,
    source: Source,
    opts: RunOptions,
    want_requests: bool,
) -> Result<(String, Option<String>), String> {
    let mut csv = want_requests.then(|| csv::Writer::from_writer(Vec::new()));
    let mut reader: Option<TraceReader> = None;
    let mut synth;
    let workload: &mut ssdlab::workload::Requests = match source {
        Source::Trace { path, options } => reader.insert(
            TraceReader::open(std::path::Path::new(&path), options).map_err(|e| e.to_string())?,
        ),
        Source::Synth(spec) => {
            synth = spec.generate()?;
            &mut synth
        }
    };
    let mut sim = Simulation::new(cfg, opts, workload).map_err(|e| e.to_string())?;
    if let Some(w) = csv.as_mut() {
        sim.on_request(Box::new(|r| w.serialize(r).map_err(std::io::Error::other)));
    }
    let mut summary = sim.run().map_err(|e| e.to_string())?;
    summary.trace = reader.map(|r| r.counts);
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
#[pyo3(signature = (preset, scheme, sets, trace, synth, seed, verify, limit, format, time_unit, device, requests))]
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
) -> PyResult<(String, Option<String>)> {
    py.detach(|| {
        let cfg = build(&preset, scheme.as_deref(), &sets)?;
        if limit == Some(0) {
            return Err("limit = 0: must be >= 1 (a run of no requests measures nothing)".into());
        }
        let source = match (trace, synth) {
            (Some(path), None) => Source::Trace {
                path,
                options: TraceOptions {
                    format: format.as_deref().map(str::parse).transpose()?,
                    time_unit: time_unit.as_deref().map(str::parse).transpose()?,
                    limit,
                    device,
                    ..TraceOptions::default()
                },
            },
            (None, Some(spec)) => Source::Synth(spec.parse()?),
            _ => return Err("give exactly one of trace= or synth=".to_string()),
        };
        let opts = RunOptions {
            seed,
            verify,
            ..RunOptions::default()
        };
        simulate(&cfg, source, opts, requests)
    })
    .map_err(err)
}

/// The resolved configuration as JSON.
#[pyfunction]
#[pyo3(signature = (preset, scheme, sets))]
fn config(preset: String, scheme: Option<String>, sets: Vec<String>) -> PyResult<String> {
    let cfg = build(&preset, scheme.as_deref(), &sets).map_err(err)?;
    serde_json::to_string(&cfg).map_err(err)
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

/// The native module.
#[pymodule]
fn _ssdlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdlabError", m.py().get_type::<SsdlabError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(config, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    Ok(())
}
