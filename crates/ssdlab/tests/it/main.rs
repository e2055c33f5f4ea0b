//! Integration tests: one binary, one module per concern.

mod bad_input;
mod dedup;
mod destage;
mod determinism;
mod elision;
mod every_scheme;

mod figures;
mod flows;
mod hire;
mod host;
mod hotr;
mod invariants;
mod layers;
mod mapping_cache;
mod md1;
mod redundancy;
mod schemes;
mod shadow;
mod suspension;
mod timeline;
mod timing;
mod traces;
mod versions;
mod wear;
mod workloads;

use ssdlab::config::{Config, ConfigBuilder};
use ssdlab::metrics::Summary;
use ssdlab::sim::{RunOptions, SimError, Simulation};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{TraceError, TraceOptions, TraceReader};
use ssdlab::workload::{IoOp, Request};
use std::path::PathBuf;

/// `s` as JSON without its wall-clock section (`sim`): what two runs of one workload must
/// agree on.
pub fn without_wall_clock(s: &Summary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap();
    v.as_object_mut().unwrap().remove("sim");
    v
}

/// Runs `cfg` on `reqs` with verification and returns the summary and every request's response
/// time, µs, in completion order.
pub fn run_recorded(cfg: &Config, reqs: Vec<Result<Request, TraceError>>) -> (Summary, Vec<f64>) {
    let mut it = reqs.into_iter();
    let mut responses = Vec::new();
    let mut sim = Simulation::new(
        cfg,
        RunOptions {
            seed: 1,
            verify: true,
            ..Default::default()
        },
        &mut it,
    )
    .unwrap();
    sim.on_request(Box::new(|r| {
        responses.push(r.response_us);
        Ok(())
    }));
    let s = sim.run().unwrap();
    (s, responses)
}

/// [`run_recorded`] on the `tiny` drive with `sets`, for one-page requests (µs, page, op).
pub fn run_tiny_pages(sets: &[&str], reqs: &[(u64, u64, IoOp)]) -> (Summary, Vec<f64>) {
    let reqs = reqs
        .iter()
        .map(|&(t_us, page, op)| page_request(t_us, page, op, None))
        .collect();
    run_recorded(&config("tiny", sets), reqs)
}

/// Path of a bundled trace.
pub fn trace_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/traces")
        .join(name)
}

/// A preset with `key=value` overrides.
pub fn config(preset: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// Replays a bundled trace (first `limit` requests) with verification on.
pub fn run_trace(cfg: &Config, name: &str, limit: u64, seed: u64) -> Result<Summary, SimError> {
    let opts = TraceOptions {
        limit: Some(limit),
        ..Default::default()
    };
    let mut reader = TraceReader::open(&trace_path(name), opts)?;
    let summary = Simulation::new(
        cfg,
        RunOptions {
            seed,
            verify: true,
            ..Default::default()
        },
        &mut reader,
    )?
    .run();
    summary.map(|mut s| {
        s.trace = Some(reader.counts.clone());
        s
    })
}

/// Runs a synthetic workload.
pub fn run_synth(cfg: &Config, spec: &str, seed: u64, verify: bool) -> Summary {
    let spec: SynthSpec = spec.parse().unwrap();
    let mut gen = spec.generate().unwrap();
    let summary = Simulation::new(
        cfg,
        RunOptions {
            seed,
            verify,
            ..Default::default()
        },
        &mut gen,
    )
    .unwrap()
    .run()
    .unwrap();
    summary
}

/// The value of environment variable `key` (e.g. `SSDLAB_PROPTEST_CASES`), or `default`.
pub fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `spec`'s requests as `n` I/O flows (none for one): the same number of requests split over
/// flows with seeds of their own, in priority classes urgent, high, medium, low in turn.
pub fn flows_of(spec: &SynthSpec, n: usize) -> Vec<ssdlab::workload::flows::FlowSpec> {
    use ssdlab::workload::flows::{FlowSpec, Priority};
    if n < 2 {
        return Vec::new();
    }
    let classes = [
        Priority::Urgent,
        Priority::High,
        Priority::Medium,
        Priority::Low,
    ];
    (0..n)
        .map(|k| FlowSpec {
            synth: Some(
                SynthSpec {
                    requests: spec.requests / n as u64
                        + u64::from((k as u64) < spec.requests % n as u64),
                    seed: spec.seed + k as u64,
                    ..spec.clone()
                }
                .to_string(),
            ),
            priority: classes[k % 4],
            ..FlowSpec::named(&format!("f{k}"))
        })
        .collect()
}

/// The stream of `spec`, or of `flows` ([`flows_of`]) when there are any.
pub fn open(
    spec: &SynthSpec,
    flows: &[ssdlab::workload::flows::FlowSpec],
) -> Box<ssdlab::workload::Requests<'static>> {
    if flows.is_empty() {
        Box::new(spec.generate().unwrap())
    } else {
        Box::new(ssdlab::workload::flows::Merged::open(flows).unwrap())
    }
}

/// A one-page request at `t_us` µs to `page` (4 KiB pages), with an optional content hash.
pub fn page_request(
    t_us: u64,
    page: u64,
    op: IoOp,
    content: Option<u128>,
) -> Result<Request, TraceError> {
    Ok(Request {
        time_ns: t_us * 1000,
        offset_bytes: page * 4096,
        size_bytes: 4096,
        op,
        device: 0,
        content,
        flow: 0,
    })
}

/// Replays scripted requests with verification on (and an optional power loss).
pub fn run_requests(
    cfg: &Config,
    reqs: Vec<Result<Request, TraceError>>,
    power_loss_at_ns: Option<u64>,
) -> Summary {
    // The pre-processing pass sees the requests (a test of it scripts no bad ones).
    let mut pre = reqs
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned().map(Ok))
        .collect::<Vec<Result<Request, TraceError>>>()
        .into_iter();
    let mut it = reqs.into_iter();
    let opts = RunOptions {
        seed: 1,
        verify: true,
        power_loss_at_ns,
        ..Default::default()
    };
    Simulation::build(cfg, opts, &mut it, Some(&mut pre), &|_, _| {})
        .unwrap()
        .run()
        .unwrap()
}

/// Every file under `dir` (recursively) whose name ends in `.ext`.
pub fn files_with_ext(dir: &std::path::Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_with_ext(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}
