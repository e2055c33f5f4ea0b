//! `--timeline`: the file is valid trace-event JSON, holds one flash event per operation the
//! summary counts, never shows a die or a channel doing two things at once, keeps to its
//! window and event limit, and writing it changes nothing in the run's results.

use ssdlab::config::{Config, ConfigBuilder};
use ssdlab::metrics::timeline::{Layout, Limits, Timeline, TimelineCounts};
use ssdlab::sim::{RunOptions, SimError, Simulation};
use ssdlab::workload::synth::{Arrivals, SynthSpec};
use std::collections::BTreeMap;

/// The verified run of `spec` on `cfg` with a timeline: its summary (without wall clock),
/// the parsed file and its counts.
pub fn run_with_timeline(
    cfg: &Config,
    spec: &SynthSpec,
    seed: u64,
    limits: Limits,
) -> Result<(serde_json::Value, serde_json::Value, TimelineCounts), SimError> {
    run_flows_with_timeline(cfg, spec, seed, limits, 1)
}

/// [`run_with_timeline`] with `spec`'s requests as `flows` I/O flows ([`crate::flows_of`]).
pub fn run_flows_with_timeline(
    cfg: &Config,
    spec: &SynthSpec,
    seed: u64,
    limits: Limits,
    flows: usize,
) -> Result<(serde_json::Value, serde_json::Value, TimelineCounts), SimError> {
    let layout = Layout::of(cfg);
    let mut timeline = Timeline::new(Vec::new(), layout, limits).unwrap();
    let flows = crate::flows_of(spec, flows);
    let mut gen = crate::open(spec, &flows);
    let opts = RunOptions {
        seed,
        verify: true,
        flows,
        ..Default::default()
    };
    let mut sim = Simulation::new(cfg, opts, &mut *gen)?;
    sim.on_timeline(Box::new(&mut timeline));
    let s = sim.run()?;
    let (bytes, counts) = timeline.finish().unwrap();
    let file: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
    Ok((crate::without_wall_clock(&s), file, counts))
}

/// A suspended operation's part: (start, µs; its number; whether it is the last).
type Part = (f64, u64, bool);

/// Checks a whole timeline (no window, no limit) against its run's summary; `Err` says what
/// is wrong.
pub fn check(
    summary: &serde_json::Value,
    file: &serde_json::Value,
    planes_per_die: u32,
) -> Result<(), String> {
    let events = file["traceEvents"]
        .as_array()
        .ok_or("no traceEvents array")?;
    let num = |v: &serde_json::Value| v.as_f64().ok_or(format!("not a number: {v}"));
    // Operations by kind, and per die the array phases; per channel the bus transfers.
    let mut ops: BTreeMap<String, u64> = BTreeMap::new();
    let mut dies: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut buses: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut open: BTreeMap<(String, u64), f64> = BTreeMap::new();
    let mut spans: BTreeMap<String, u64> = BTreeMap::new();
    // Per (die, plane): the suspended parts as (start, number, last).
    let mut parts: BTreeMap<(u64, u64), Vec<Part>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().ok_or("event without ph")?;
        let cat = e["cat"].as_str().ok_or("event without cat")?;
        match (ph, cat) {
            ("M", "__metadata") => {}
            ("X", "flash" | "flash.suspended") => {
                let (ts, dur) = (num(&e["ts"])?, num(&e["dur"])?);
                if dur < 0.0 {
                    return Err(format!("negative duration: {e}"));
                }
                if cat == "flash" || e["args"]["last"] == true {
                    *ops.entry(e["name"].as_str().unwrap_or("?").to_string())
                        .or_default() += 1;
                }
                let plane = e["args"]["plane"]
                    .as_u64()
                    .ok_or("flash event without plane")?;
                let die = plane / u64::from(planes_per_die);
                dies.entry(die).or_default().push((ts, ts + dur));
                if cat == "flash.suspended" {
                    if e["name"] == "read" {
                        return Err(format!("a read is never a suspended part: {e}"));
                    }
                    let part = e["args"]["part"]
                        .as_u64()
                        .ok_or("a part without its number")?;
                    let last = e["args"]["last"].as_bool().ok_or("a part without `last`")?;
                    parts
                        .entry((die, plane))
                        .or_default()
                        .push((ts, part, last));
                }
            }
            ("X", "bus") => {
                let (ts, dur) = (num(&e["ts"])?, num(&e["dur"])?);
                buses
                    .entry(e["pid"].as_u64().unwrap())
                    .or_default()
                    .push((ts, ts + dur));
            }
            ("b", "request" | "gc" | "suspension") => {
                let id = e["id2"]["local"]
                    .as_u64()
                    .ok_or("a span without id2.local")?;
                if open.insert((cat.to_string(), id), num(&e["ts"])?).is_some() {
                    return Err(format!("two {cat} spans with id {id}"));
                }
                *spans.entry(format!("{cat} {}", e["name"])).or_default() += 1;
            }
            ("e", "request" | "gc" | "suspension") => {
                let id = e["id2"]["local"]
                    .as_u64()
                    .ok_or("a span without id2.local")?;
                let start = open
                    .remove(&(cat.to_string(), id))
                    .ok_or(format!("{cat} {id} ends without a start"))?;
                if num(&e["ts"])? < start {
                    return Err(format!("{cat} {id} ends before it starts"));
                }
            }
            ("C", "queue" | "free") => {
                let values = e["args"].as_object().ok_or("a counter without values")?;
                if values.is_empty() || values.values().any(|v| v.as_u64().is_none()) {
                    return Err(format!("counter values are not counts: {e}"));
                }
                *spans.entry(format!("counter {cat}")).or_default() += 1;
            }
            _ => return Err(format!("unexpected event {e}")),
        }
    }
    if !open.is_empty() {
        return Err(format!("{} requests never end", open.len()));
    }
    let flash = &summary["flash"];
    for (kind, key) in [
        ("read", "reads"),
        ("program", "programs"),
        ("erase", "erases"),
    ] {
        let want = flash[key].as_u64().unwrap_or(0);
        let got = ops.get(kind).copied().unwrap_or(0);
        if got != want {
            return Err(format!("{got} {kind} events, the summary counts {want}"));
        }
    }
    // A die runs one array operation (or one multi-plane gang, whose members share their
    // times) at a time; a channel moves one transfer at a time.
    let apart = |what: &str, spans: &mut Vec<(f64, f64)>| -> Result<(), String> {
        spans.sort_by(|a, b| a.partial_cmp(b).unwrap());
        spans.dedup();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 - 1e-9 {
                return Err(format!("{what}: {:?} overlaps {:?}", w[0], w[1]));
            }
        }
        Ok(())
    };
    for (die, spans) in &mut dies {
        apart(&format!("die {die}"), spans)?;
    }
    for (ch, spans) in &mut buses {
        apart(&format!("channel {ch}'s bus"), spans)?;
    }
    // The parts of each suspended operation are numbered 0, 1, … in time, the final one last.
    for ((die, plane), mut seq) in parts {
        seq.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut next = 0;
        for (ts, part, last) in seq {
            if part != next {
                return Err(format!(
                    "die {die} plane {plane}: part {part} at {ts} us where {next} was due"
                ));
            }
            next = if last { 0 } else { part + 1 };
        }
        if next != 0 {
            return Err(format!(
                "die {die} plane {plane}: an operation without its last part"
            ));
        }
    }
    let requests = events
        .iter()
        .filter(|e| e["ph"] == "b" && e["cat"] == "request")
        .count() as u64;
    let gc_jobs: u64 = spans
        .iter()
        .filter(|(k, _)| k.starts_with("gc \"GC die"))
        .map(|(_, n)| n)
        .sum();
    let suspensions: u64 = spans
        .iter()
        .filter(|(k, _)| k.starts_with("suspension "))
        .map(|(_, n)| n)
        .sum();
    if summary["pe"]["suspensions"].as_u64().unwrap_or(0) != suspensions {
        return Err(format!(
            "{suspensions} suspension spans, the summary counts {}",
            summary["pe"]["suspensions"]
        ));
    }
    if summary["gc"]["count"].as_u64() != Some(gc_jobs) {
        return Err(format!(
            "{gc_jobs} GC job spans, the summary counts {}",
            summary["gc"]["count"]
        ));
    }
    if summary["requests"].as_u64() != Some(requests) {
        return Err(format!(
            "{requests} request spans, the summary has {}",
            summary["requests"]
        ));
    }
    Ok(())
}

fn cfg(sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::preset("tiny").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

fn spec(requests: u64, write_ratio: f64, iat_us: f64) -> SynthSpec {
    SynthSpec {
        requests,
        write_ratio,
        size_kib: vec![4, 8, 16],
        arrivals: Arrivals::Exponential(iat_us),
        footprint_gib: 0.002,
        zipf: 0.8,
        seed: 5,
        ..SynthSpec::default()
    }
}

#[test]
fn a_timeline_shows_every_operation_once_and_changes_nothing() {
    // GC, suspension (its parts), multi-plane gangs on plane tracks, cache reads.
    for sets in [
        vec!["precondition.fill=0.9", "precondition.pattern=random"],
        vec!["precondition.fill=0.9", "suspend.policy=ips"],
        vec!["flash.multi_plane=true", "precondition.fill=0.5"],
        vec!["flash.cache_read=true"],
    ] {
        let c = cfg(&sets);
        let s = spec(2000, 0.5, 20.0);
        let (summary, file, counts) = run_with_timeline(&c, &s, 3, Limits::default()).unwrap();
        let without = crate::elision::try_run(&c, &s, 3, false).unwrap().0;
        assert_eq!(summary, without, "{sets:?}: the timeline changed the run");
        check(&summary, &file, c.geometry.planes_per_die)
            .unwrap_or_else(|e| panic!("{sets:?}: {e}"));
        assert_eq!(counts.dropped, 0);
        if sets.contains(&"precondition.pattern=random") {
            assert!(
                summary["gc"]["count"].as_u64().unwrap() > 0,
                "this case collects"
            );
        }
        if sets.contains(&"suspend.policy=ips") {
            let parts = file["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["cat"] == "flash.suspended")
                .count();
            assert!(parts > 0, "a suspending run shows its operations' parts");
        }
    }
}

#[test]
fn a_window_and_a_limit_bound_the_file() {
    let c = cfg(&["precondition.fill=0.9"]);
    let s = spec(4000, 0.5, 20.0);
    let (lo, hi) = (20_000_000u64, 30_000_000u64);
    let window = Limits {
        window_ns: Some((lo, hi)),
        max_events: None,
    };
    let (_, file, counts) = run_with_timeline(&c, &s, 3, window).unwrap();
    let (_, whole, all) = run_with_timeline(&c, &s, 3, Limits::default()).unwrap();
    assert!(
        counts.written > 0 && counts.written < all.written / 2,
        "{counts:?} of {all:?}"
    );
    for e in file["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" {
            let ts = e["ts"].as_f64().unwrap() * 1e3;
            let end = ts + e["dur"].as_f64().unwrap() * 1e3;
            assert!(end >= lo as f64 - 1.0 && ts <= hi as f64 + 1.0, "{e}");
        }
    }
    let limited = Limits {
        window_ns: None,
        max_events: Some(100),
    };
    let (_, file, counts) = run_with_timeline(&c, &s, 3, limited).unwrap();
    assert_eq!(counts.written, 100);
    assert_eq!(counts.written + counts.dropped, all.written);
    assert_eq!(file["metadata"]["ssdlab_events_dropped"], counts.dropped);
    let timed = |f: &serde_json::Value| {
        f["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] != "M")
            .count()
    };
    assert!(
        timed(&file) <= 200,
        "a request span is two records of one event"
    );
    assert!(timed(&whole) > timed(&file));
}
