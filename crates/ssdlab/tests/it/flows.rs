//! I/O flows: one flow is the run of its source; flows never share pages; each flow's results
//! are its own requests'.

use crate::{config, trace_path, without_wall_clock};
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::flows::{FlowSpec, Merged, Priority};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{TraceOptions, TraceReader};
use ssdlab::workload::{IoOp, Request};

fn flow(name: &str) -> FlowSpec {
    FlowSpec::named(name)
}

fn flow_of(name: &str, synth: &str) -> FlowSpec {
    FlowSpec {
        synth: Some(synth.into()),
        ..flow(name)
    }
}

fn run_flows(cfg: &ssdlab::config::Config, flows: &[FlowSpec]) -> ssdlab::metrics::Summary {
    let mut merged = Merged::open(flows).unwrap();
    let opts = RunOptions {
        seed: 1,
        verify: true,
        flows: merged.specs().to_vec(),
        ..Default::default()
    };
    Simulation::new(cfg, opts, &mut merged)
        .unwrap()
        .run()
        .unwrap()
}

#[test]
fn one_flow_is_the_run_of_its_source() {
    let cfg = config("hotr", &["precondition.fill=0.5"]);
    let path = trace_path("msr_hm_0.csv");
    let mut f = flow("only");
    f.trace = Some(path.clone());
    f.limit = Some(3000);
    let flows = run_flows(&cfg, &[f]);
    let opts = TraceOptions {
        limit: Some(3000),
        ..Default::default()
    };
    let mut reader = TraceReader::open(&path, opts).unwrap();
    let plain = Simulation::new(
        &cfg,
        RunOptions {
            seed: 1,
            verify: true,
            ..Default::default()
        },
        &mut reader,
    )
    .unwrap()
    .run()
    .unwrap();
    assert!(flows.flows.is_empty());
    assert_eq!(without_wall_clock(&flows), without_wall_clock(&plain));
}

#[test]
fn flows_do_not_share_pages() {
    // A device buffer serves a read of a page written before: flow `b` reads the offsets flow
    // `a` wrote (16 distinct pages each). In one flow the reads hit; as two flows they address
    // other pages and miss.
    let cfg = config("tiny", &["buffer.device_pages=64"]);
    let writes = "requests=16,write_ratio=1,iat_us=10,footprint_gib=0.0001,seq=1,seed=3";
    let reads = "requests=16,write_ratio=0,iat_us=10,footprint_gib=0.0001,seq=1,seed=3";
    let a = flow_of("a", writes);
    let b = FlowSpec {
        start_us: 10_000.0,
        ..flow_of("b", reads)
    };
    let two = run_flows(&cfg, &[a.clone(), b.clone()]);
    assert_eq!(two.buffer.read_hits, 0);
    // The same requests as one stream.
    let one: Vec<_> = Merged::open(&[a, b])
        .unwrap()
        .map(|r| {
            let mut r = r.unwrap();
            r.flow = 0;
            Ok(r)
        })
        .collect();
    let mut it = one.into_iter();
    let s = Simulation::new(&cfg, RunOptions::default(), &mut it)
        .unwrap()
        .run()
        .unwrap();
    // Every read of a page `a` wrote hits.
    let all: Vec<_> = Merged::open(&[flow_of("a", writes), flow_of("b", reads)])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let written: std::collections::BTreeSet<u64> = all
        .iter()
        .filter(|r| r.op == IoOp::Write)
        .map(|r| r.offset_bytes)
        .collect();
    let overlap = all
        .iter()
        .filter(|r| r.op == IoOp::Read && written.contains(&r.offset_bytes))
        .count() as u64;
    assert!(overlap >= 12, "{overlap}");
    assert_eq!(s.buffer.read_hits, overlap);
}

#[test]
fn each_flow_counts_its_own_requests() {
    let cfg = config("tiny", &[]);
    let spec = |w: f64, n: u64, seed: u64| {
        SynthSpec {
            requests: n,
            write_ratio: w,
            seed,
            footprint_gib: 0.002,
            ..SynthSpec::default()
        }
        .to_string()
    };
    let r = flow_of("reader", &spec(0.0, 300, 1));
    let w = flow_of("writer", &spec(1.0, 500, 2));
    let s = run_flows(&cfg, &[r, w.clone()]);
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["reader", "writer"]);
    let (fr, fw) = (&s.flows[0], &s.flows[1]);
    assert_eq!(
        (fr.requests, fr.host.read.count, fr.host.write.count),
        (300, 300, 0)
    );
    assert_eq!(
        (fw.requests, fw.host.read.count, fw.host.write.count),
        (500, 0, 500)
    );
    assert_eq!(
        fw.host.read_wait_us.keys().collect::<Vec<_>>(),
        s.read_wait_us.keys().collect::<Vec<_>>()
    );
    // Throughput over the flow's own span.
    let pages: u64 = Merged::open(&[w])
        .unwrap()
        .filter(|q| q.as_ref().unwrap().op == IoOp::Write)
        .map(|q| q.unwrap().size_bytes)
        .sum();
    let want = pages as f64 / 1e6 / fw.simulated_s;
    assert!(
        (fw.throughput.write_mb_s - want).abs() < 1e-3 * want,
        "{} vs {want}",
        fw.throughput.write_mb_s
    );
    assert!((fw.throughput.iops - 500.0 / fw.simulated_s).abs() < 1e-3 * fw.throughput.iops);
}

/// The request records of a verified run of one-page writes, all arriving at once, each
/// `(page, flow)` of `writes`, by flows `f0`, `f1`, … of the given priorities.
fn one_page_writes(
    cfg: &ssdlab::config::Config,
    priorities: &[Priority],
    writes: impl Iterator<Item = (u64, u16)>,
) -> Vec<ssdlab::metrics::RequestRecord> {
    let specs: Vec<FlowSpec> = priorities
        .iter()
        .enumerate()
        .map(|(k, p)| FlowSpec {
            priority: *p,
            ..flow(&format!("f{k}"))
        })
        .collect();
    let mut reqs = writes.map(|(page, flow)| {
        Ok(Request {
            time_ns: 0,
            offset_bytes: page * 4096,
            size_bytes: 4096,
            op: IoOp::Write,
            device: 0,
            content: None,
            flow,
        })
    });
    let opts = RunOptions {
        seed: 1,
        verify: true,
        flows: specs,
        ..Default::default()
    };
    let mut records = Vec::new();
    let mut sim = Simulation::new(cfg, opts, &mut reqs).unwrap();
    sim.on_request(Box::new(|r| {
        records.push(r.clone());
        Ok(())
    }));
    sim.run().unwrap();
    records
}

/// Three flows of eight one-page writes each, all arriving at once, on a one-die drive that
/// holds one request at a time: the order the drive takes them (their ids) by flow, and each
/// request's response time in units of the first one's.
fn fetch_order(arbitration: &str, priorities: [Priority; 3]) -> (Vec<u16>, Vec<f64>) {
    let cfg = config(
        "tiny",
        &[
            "host.max_requests_in_flight=1",
            &format!("host.arbitration={arbitration}"),
        ],
    );
    let mut records = one_page_writes(&cfg, &priorities, (0..24u64).map(|i| (i, (i % 3) as u16)));
    records.sort_by_key(|r| r.id);
    let order = records
        .iter()
        .map(|r| r.flow.as_deref().unwrap()[1..].parse().unwrap())
        .collect();
    let unit = records[0].response_us;
    (
        order,
        records.iter().map(|r| r.response_us / unit).collect(),
    )
}

#[test]
fn round_robin_and_weighted_round_robin_take_requests_in_their_closed_form_order() {
    use Priority::*;
    let (rr, times) = fetch_order("round-robin", [High; 3]);
    assert_eq!(rr, [0, 1, 2].repeat(8));
    // One request at a time, each as long as the first: the i-th taken is done at i units.
    for (i, t) in times.iter().enumerate() {
        assert!((t - (i + 1) as f64).abs() < 1e-6, "request {i}: {t}");
    }
    // Weighted: per round 4 high, 2 medium, 1 low, while each class has requests left.
    let (wrr, _) = fetch_order("weighted-round-robin", [Low, High, Medium]);
    let round = [1, 1, 1, 1, 2, 2, 0];
    let mut want: Vec<u16> = round.repeat(2);
    // High has 8 (done after two rounds); then medium and low share 2:1 until each is out.
    want.extend([2, 2, 0, 2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(wrr, want);
    // An urgent flow is emptied first.
    let (urgent, _) = fetch_order("weighted-round-robin", [Low, Low, Urgent]);
    assert_eq!(&urgent[..8], &[2; 8]);
    // FIFO: all arrived together, so the flow given first goes first.
    let (fifo, _) = fetch_order("fifo", [High; 3]);
    assert_eq!(fifo, [[0u16; 8], [1; 8], [2; 8]].concat());
}

#[test]
fn a_flow_never_holds_more_than_its_queue_depth() {
    // Two flows of writes arriving at once; the first may hold one request at a time.
    let cfg = config("tiny", &[]);
    let w = "requests=40,write_ratio=1,iat_us=1,footprint_gib=0.001,seed=4";
    let a = FlowSpec {
        queue_depth: 1,
        ..flow_of("a", w)
    };
    let s = run_flows(&cfg, &[a, flow_of("b", w)]);
    // Held to one at a time, `a` waits for the drive while `b` does not.
    assert!(s.fetch_waits > 0);
    let (fa, fb) = (&s.flows[0], &s.flows[1]);
    assert!(
        fa.host.write.mean_us > 2.0 * fb.host.write.mean_us,
        "{} vs {}",
        fa.host.write.mean_us,
        fb.host.write.mean_us
    );
}

#[test]
fn a_timeline_draws_each_flows_requests_under_its_own_process() {
    use ssdlab::metrics::timeline::{Layout, Limits, Timeline};
    let cfg = config("tiny", &[]);
    let w = "requests=30,write_ratio=0.5,iat_us=50,footprint_gib=0.001,seed=4";
    let flows = [flow_of("a", w), flow_of("b", w)];
    let mut merged = Merged::open(&flows).unwrap();
    let opts = RunOptions {
        seed: 1,
        flows: flows.to_vec(),
        ..Default::default()
    };
    let mut timeline = Timeline::new(Vec::new(), Layout::of(&cfg), Limits::default()).unwrap();
    let mut sim = Simulation::new(&cfg, opts, &mut merged).unwrap();
    sim.on_timeline(Box::new(&mut timeline));
    sim.run().unwrap();
    let (bytes, _) = timeline.finish().unwrap();
    let file: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let events = file["traceEvents"].as_array().unwrap();
    let process = |pid: &serde_json::Value| {
        events
            .iter()
            .find(|e| e["name"] == "process_name" && &e["pid"] == pid)
            .map(|e| e["args"]["name"].as_str().unwrap().to_string())
    };
    let mut seen = std::collections::BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["cat"] == "request" && e["ph"] == "b")
    {
        let flow = e["args"]["flow"].as_str().unwrap();
        assert_eq!(
            process(&e["pid"]).as_deref(),
            Some(format!("host requests: flow {flow}").as_str())
        );
        *seen.entry(flow.to_string()).or_insert(0) += 1;
    }
    assert_eq!(seen, [("a".to_string(), 30), ("b".to_string(), 30)].into());
}

#[test]
fn confined_flows_keep_their_data_on_their_channels_under_verify() {
    // Two channels; `a` may use channel 1 only, `b` every channel. --verify checks every
    // written page of `a` is on its planes, through GC on a filled drive.
    let cfg = config(
        "tiny",
        &[
            "geometry.channels=2",
            "precondition.fill=0.8",
            "precondition.pattern=random",
        ],
    );
    let w = |seed: u64| {
        format!("requests=3000,write_ratio=0.8,iat_us=20,footprint_gib=0.05,seed={seed}")
    };
    let a = FlowSpec {
        channels: vec![1],
        ..flow_of("a", &w(1))
    };
    let s = run_flows(&cfg, &[a.clone(), flow_of("b", &w(2))]);
    assert!(s.gc.count > 0, "GC ran");
    assert_eq!(s.flows[0].requests, 3000);
    // Refused where pages move by other rules than striping, naming what is needed.
    for set in ["ftl.allocation=dynamic", "ftl.plane_choice=most-free"] {
        let cfg = config("tiny", &["geometry.channels=2", set]);
        let mut merged = Merged::open(&[a.clone(), flow_of("b", &w(2))]).unwrap();
        let opts = RunOptions {
            flows: merged.specs().to_vec(),
            ..Default::default()
        };
        let e = Simulation::new(&cfg, opts, &mut merged)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("need ftl.allocation = \"static\""), "{set}: {e}");
    }
}

#[test]
fn a_single_flows_queue_depth_and_channels_apply_too() {
    use ssdlab::metrics::timeline::{Layout, Limits, Timeline};
    // One flow held to one request at a time: its requests wait on the host side, and the
    // summary says how long its reads did.
    let cfg = config("tiny", &["geometry.channels=2"]);
    let w = "requests=400,write_ratio=0.5,iat_us=5,footprint_gib=0.01,seed=3";
    let held = FlowSpec {
        queue_depth: 1,
        ..flow_of("only", w)
    };
    let s = run_flows(&cfg, &[held]);
    assert!(s.fetch_waits > 0);
    assert!(s.read_wait_us["host_queue"] > 0.0);
    // One flow confined to channel 1: every host program is on that channel's process.
    let confined = FlowSpec {
        channels: vec![1],
        ..flow_of("only", w)
    };
    let mut merged = Merged::open(std::slice::from_ref(&confined)).unwrap();
    let opts = RunOptions {
        verify: true,
        flows: vec![confined],
        ..Default::default()
    };
    let mut timeline = Timeline::new(Vec::new(), Layout::of(&cfg), Limits::default()).unwrap();
    let mut sim = Simulation::new(&cfg, opts, &mut merged).unwrap();
    sim.on_timeline(Box::new(&mut timeline));
    sim.run().unwrap();
    let (bytes, _) = timeline.finish().unwrap();
    let file: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let programs: Vec<&serde_json::Value> = file["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "flash" && e["name"] == "program" && e["args"]["cause"] == "user")
        .collect();
    assert!(!programs.is_empty());
    assert!(
        programs.iter().all(|e| e["pid"] == 1),
        "a program on channel 0"
    );
}

/// A low-priority and a high-priority flow of 40 one-page writes each, all arriving at once on
/// a one-die drive that takes every request at once: the flows in the order the die completes
/// their writes.
fn die_order(flow_priority: bool, priorities: [Priority; 2]) -> Vec<u16> {
    let mut sets = vec!["host.max_requests_in_flight=0".to_string()];
    if flow_priority {
        sets.push("sched.flow_priority=true".into());
    }
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let cfg = config("tiny", &sets);
    let mut records = one_page_writes(
        &cfg,
        &priorities,
        (0..80u64).map(|i| (i / 2, (i % 2) as u16)),
    );
    records.sort_by(|a, b| a.response_us.total_cmp(&b.response_us));
    records
        .iter()
        .map(|r| r.flow.as_deref().unwrap()[1..].parse().unwrap())
        .collect()
}

#[test]
fn flow_priority_serves_a_die_s_classes_as_mqsim_s_priority_scheduler() {
    use Priority::*;
    // Without it the die serves in the order the drive took them: the flow given first.
    assert_eq!(
        die_order(false, [Low, High]),
        [[0u16; 40], [1; 40]].concat()
    );
    // With it: the first write taken starts on the idle die (the search that found it alone
    // in the low class left the current weight at 1); then per cycle of the current weight 4
    // high to 1 low (MQSim's TSU_Priority_OutOfOrder with weights 4, 2, 1; the medium class is
    // empty), until the high flow is out.
    let mut want = vec![0u16];
    for _ in 0..10 {
        want.extend([1, 1, 1, 1, 0]);
    }
    want.extend([0; 29]);
    assert_eq!(die_order(true, [Low, High]), want);
    // An urgent flow's writes go before every other class's.
    let got = die_order(true, [Low, Urgent]);
    assert_eq!(
        &got[..41],
        &[[0u16].as_slice(), &[1; 40]].concat()[..],
        "{got:?}"
    );
}

/// With `ftl.flow_blocks = "own"` each flow writes, and GC relocates, into blocks of its own:
/// `--verify` (every run here) fails if a block the run opened holds two flows' pages, with
/// flows over equal halves of the drive and with flows confined to channels (their pages
/// then interleave on the stripe). With one flow the key changes nothing.
#[test]
fn flows_with_blocks_of_their_own_pass_verify_and_one_flow_is_unchanged() {
    let spec = |w: f64, seed: u64| {
        SynthSpec {
            requests: 4000,
            write_ratio: w,
            seed,
            footprint_gib: 1.0,
            ..SynthSpec::default()
        }
        .to_string()
    };
    let flows = [
        flow_of("reader", &spec(0.1, 1)),
        flow_of("writer", &spec(0.9, 2)),
    ];
    let run = |blocks: &str, flows: &[FlowSpec], sets: &[&str]| {
        let mut all = vec!["precondition.fill=0.8", "precondition.pattern=random"];
        let key = format!("ftl.flow_blocks={blocks}");
        all.push(&key);
        all.extend_from_slice(sets);
        run_flows(&config("tiny", &all), flows)
    };
    let own = run("own", &flows, &[]);
    assert!(own.gc.pages_moved > 0, "GC ran");
    let confined = [
        FlowSpec {
            channels: vec![0],
            ..flows[0].clone()
        },
        FlowSpec {
            channels: vec![1],
            ..flows[1].clone()
        },
    ];
    let own = run("own", &confined, &["geometry.channels=2"]);
    assert!(own.gc.pages_moved > 0, "GC ran");
    let one = |blocks| {
        let mut v = without_wall_clock(&run(blocks, &flows[1..], &[]));
        v.as_object_mut().unwrap().remove("config_hash");
        v
    };
    assert_eq!(one("own"), one("shared"));
}

/// A plane that cannot hold every flow's open blocks and GC reserve beside its data is refused
/// when the run is built, naming the keys.
#[test]
fn flows_whose_own_blocks_do_not_fit_a_plane_are_refused_by_name() {
    let cfg = config(
        "tiny",
        &["ftl.flow_blocks=own", "ftl.over_provisioning=0.1"],
    );
    let flows: Vec<FlowSpec> = (0..8)
        .map(|k| flow_of(&format!("f{k}"), "requests=10,seed=1"))
        .collect();
    let mut merged = Merged::open(&flows).unwrap();
    let opts = RunOptions {
        flows: merged.specs().to_vec(),
        ..Default::default()
    };
    let err = Simulation::new(&cfg, opts, &mut merged)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("ftl.over_provisioning")
            && err.contains("8 I/O flows with ftl.flow_blocks = \"own\""),
        "{err}"
    );
}
