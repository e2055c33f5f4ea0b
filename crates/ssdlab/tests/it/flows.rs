//! I/O flows: one flow is the run of its source; flows never share pages; each flow's results
//! are its own requests'.

use crate::{config, trace_path, without_wall_clock};
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::flows::{FlowSpec, Merged};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{TraceOptions, TraceReader};
use ssdlab::workload::IoOp;

fn flow(name: &str) -> FlowSpec {
    FlowSpec {
        name: name.into(),
        trace: None,
        format: None,
        limit: None,
        skip: 0,
        device: None,
        extend: None,
        synth: None,
        start_us: 0.0,
        time_scale: 1.0,
    }
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
        flows: merged.names().to_vec(),
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
