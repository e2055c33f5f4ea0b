//! `ssdlab explain TIMELINE ID`: the life of one request from a `run --timeline` file — its
//! waits by cause, each flash operation that served it, and what ran on that die while it
//! waited — in text, so the slowest requests of a run can be read without a viewer;
//! `--slowest N` lists the requests to ask about.
//!
//! The file is read line by line (the timeline writes one event per line), twice, keeping
//! only the asked request's events: memory does not grow with the file.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;

#[derive(Deserialize)]
struct Event {
    name: String,
    cat: String,
    ph: String,
    ts: f64,
    dur: Option<f64>,
    pid: u32,
    tid: u32,
    id2: Option<Local>,
    #[serde(default)]
    args: serde_json::Value,
}

#[derive(Deserialize)]
struct Local {
    local: u64,
}

/// Calls `f` with every event of the timeline at `path` (plain or gzip) and its line number.
fn each_event(path: &Path, mut f: impl FnMut(Event, usize)) -> Result<()> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::GzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let mut header = false;
    for (i, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("reading {} line {}", path.display(), i + 1))?;
        if i == 0 {
            header = line.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
            if !header {
                bail!(
                    "{}: line 1 is not the start of an ssdlab timeline (write one with `ssdlab run --timeline FILE`)",
                    path.display()
                );
            }
            continue;
        }
        let body = line.trim_end().trim_end_matches(',');
        if !body.starts_with("{\"name\"") {
            continue;
        }
        let e: Event = serde_json::from_str(body)
            .with_context(|| format!("{} line {}: not a timeline event", path.display(), i + 1))?;
        f(e, i + 1);
    }
    if !header {
        bail!("{}: empty file", path.display());
    }
    Ok(())
}

fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1e3)
}

/// A record column's cause: `wait_gc_us` → `gc`, `service_us` → `service`.
fn cause(column: &str) -> &str {
    column.trim_start_matches("wait_").trim_end_matches("_us")
}

/// The waits a request span's record gives, largest first, without the zero ones.
fn waits(args: &serde_json::Value) -> Vec<(String, f64)> {
    let mut w: Vec<(String, f64)> = args
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("wait_") || *k == "service_us" || *k == "bus_us")
        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    w.sort_by(|a, b| b.1.total_cmp(&a.1));
    w
}

/// `--slowest N`: the N requests of the file with the longest response times.
pub fn slowest(path: &Path, n: usize) -> Result<String> {
    let mut top: Vec<(f64, u64, Event)> = Vec::new();
    each_event(path, |e, _| {
        if e.ph != "b" || e.cat != "request" {
            return;
        }
        let (Some(id), Some(r)) = (
            e.id2.as_ref().map(|i| i.local),
            e.args["response_us"].as_f64(),
        ) else {
            return;
        };
        // Kept longest first: insert in place, drop the shortest past n.
        let at = top.partition_point(|t| t.0.total_cmp(&r).is_ge());
        if at < n {
            top.insert(at, (r, id, e));
            top.truncate(n);
        }
    })?;
    if top.is_empty() {
        bail!(
            "{}: no request spans in the timeline (a window that holds no completed request?)",
            path.display()
        );
    }
    // With several I/O flows, the flow of each request.
    let flows = top.iter().any(|t| t.2.args["flow"].is_string());
    let mut out = format!(
        "{:>10}  {:<5} {:>14} {:>12}  {}largest wait\n",
        "id",
        "op",
        "arrival",
        "response",
        if flows { "flow          " } else { "" }
    );
    for (r, id, e) in &top {
        let w = waits(&e.args)
            .into_iter()
            .find(|(k, _)| k.starts_with("wait_"))
            .map_or("-".to_string(), |(k, v)| format!("{} {}", cause(&k), ms(v)));
        let flow = if flows {
            format!("{:<13} ", e.args["flow"].as_str().unwrap_or("-"))
        } else {
            String::new()
        };
        out += &format!(
            "{id:>10}  {:<5} {:>14} {:>12}  {flow}{w}\n",
            e.name,
            ms(e.ts),
            ms(*r)
        );
    }
    Ok(out)
}

/// The life of request `id`.
pub fn explain(path: &Path, id: u64) -> Result<String> {
    // Pass 1: the request's span, its operations, and the tracks' names.
    let mut span: Option<Event> = None;
    let mut ops: Vec<Event> = Vec::new();
    let mut names: HashMap<(u32, u32), String> = HashMap::new();
    let mut first = f64::INFINITY;
    each_event(path, |e, _| {
        if e.ph == "X" {
            first = first.min(e.ts);
        }
        if e.ph == "M" && e.name == "thread_name" {
            if let Some(n) = e.args["name"].as_str() {
                // "die 3" or "die 3 plane 12": the die is what a page waits on.
                let die = n.split(" plane").next().unwrap_or(n).to_string();
                names.insert((e.pid, e.tid), die);
            }
        } else if e.ph == "b" && e.id2.as_ref().is_some_and(|i| i.local == id) {
            span = Some(e);
        } else if e.ph == "X" && e.cat.starts_with("flash") && e.args["req"].as_u64() == Some(id) {
            ops.push(e);
        }
    })?;
    let Some(span) = span else {
        bail!(
            "request {id} is not in {} (ids are the order requests entered the drive, from 0; a --timeline-window or --timeline-max-events may have left it out: `ssdlab explain FILE --slowest 10` lists ids the file holds)",
            path.display()
        );
    };
    let a = &span.args;
    let arrival = span.ts;
    let response = a["response_us"].as_f64().unwrap_or(0.0);
    let flow = a["flow"]
        .as_str()
        .map(|f| format!(" of flow `{f}`"))
        .unwrap_or_default();
    let mut out = format!(
        "request {id}{flow}: {} of {} B at offset {} arrived at {}, completed after {}\n",
        span.name,
        a["size"],
        a["offset"],
        ms(arrival),
        ms(response)
    );
    let admitted = a["admitted_us"].as_f64().unwrap_or(0.0);
    if admitted > 0.0 {
        out += &format!(
            "  before the drive's queues (host link, write-queue bound): {}\n",
            ms(admitted)
        );
    }
    let w = waits(a);
    if !w.is_empty() {
        out += "  its flash pages' time, summed over them:";
        for (k, v) in &w {
            out += &format!(" {} {};", cause(k), ms(*v));
        }
        out.pop();
        out += "\n";
    }
    if ops.is_empty() {
        out += "  no flash operation in the file carries its id: it was served from a buffer, outside the window, or by operations a scheme issued for it (a parity rebuild's reads, a staging copy), which the timeline does not tie to the request\n";
        return Ok(out);
    }
    ops.sort_by(|x, y| x.ts.total_cmp(&y.ts));
    // Pass 2: what each of its dies ran between the arrival and the operation's start.
    let dies: BTreeMap<String, f64> = ops.iter().fold(BTreeMap::new(), |mut m, o| {
        let die = names.get(&(o.pid, o.tid)).cloned().unwrap_or_default();
        let t = m.entry(die).or_insert(o.ts);
        *t = t.max(o.ts);
        m
    });
    let mut before: BTreeMap<String, BTreeMap<String, (u64, f64)>> = BTreeMap::new();
    each_event(path, |e, _| {
        if e.ph != "X" || !e.cat.starts_with("flash") || e.args["req"].as_u64() == Some(id) {
            return;
        }
        let Some(die) = names.get(&(e.pid, e.tid)) else {
            return;
        };
        let Some(&until) = dies.get(die) else { return };
        let end = e.ts + e.dur.unwrap_or(0.0);
        if end <= arrival || e.ts >= until {
            return;
        }
        let what = format!("{} {}", e.args["cause"].as_str().unwrap_or("?"), e.name);
        let slot = before
            .entry(die.clone())
            .or_default()
            .entry(what)
            .or_default();
        slot.0 += 1;
        slot.1 += end.min(until) - e.ts.max(arrival);
    })?;
    for o in &ops {
        let die = names.get(&(o.pid, o.tid)).cloned().unwrap_or_default();
        out += &format!(
            "  {}{} on {die} (plane {}, block {}, page {}): from {} to {}{}\n",
            o.name,
            if o.cat == "flash" {
                ""
            } else {
                " (a part: suspended)"
            },
            o.args["plane"],
            o.args["block"],
            o.args["page"],
            ms(o.ts),
            ms(o.ts + o.dur.unwrap_or(0.0)),
            if o.ts > arrival {
                format!(", {} after arrival", ms(o.ts - arrival))
            } else {
                String::new()
            }
        );
    }
    if arrival < first {
        out += &format!(
            "  (the file's events start at {}, after the arrival: what ran before is not in it; widen --timeline-window)\n",
            ms(first)
        );
    }
    for (die, work) in &before {
        let mut work: Vec<_> = work.iter().collect();
        work.sort_by(|x, y| y.1 .1.total_cmp(&x.1 .1));
        out +=
            &format!("  {die} ran, between the arrival and this request's last operation there:");
        for (what, (n, t)) in work {
            out += &format!(
                " {n} {what}{} ({});",
                if *n == 1 { "" } else { "s" },
                ms(*t)
            );
        }
        out.pop();
        out += "\n";
    }
    Ok(out)
}
