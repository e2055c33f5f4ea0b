//! HIRE and the voltage controllers: read latency by level on a scripted drive, wear weight
//! through GC, the ordering of the variants on a real trace.

use crate::{config, run_trace};
use ssdlab::metrics::Summary;
use ssdlab::workload::trace::TraceError;
use ssdlab::workload::{IoOp, Request};

fn req(t_us: u64, page: u64, op: IoOp) -> Result<Request, TraceError> {
    crate::page_request(t_us, page, op, None)
}

fn run(sets: &[&str], reqs: Vec<Result<Request, TraceError>>) -> Summary {
    let cfg = config(
        "hire",
        &[
            &[
                "geometry.channels=1",
                "geometry.chips_per_channel=1",
                "geometry.blocks_per_plane=64",
                "ftl.over_provisioning=0.25",
            ],
            sets,
        ]
        .concat(),
    );
    crate::run_requests(&cfg, reqs, None)
}

#[test]
fn each_variant_reads_at_its_level() {
    // Write page 0, then read it long after its program: sense + transfer of the level used.
    let script = || vec![req(0, 0, IoOp::Write), req(10_000, 0, IoOp::Read)];
    for (policy, expected) in [
        ("baseline", 90.0 + 80.0),
        ("hvc", 30.0 + 40.0),
        ("lvc", 210.0 + 100.0),
    ] {
        let s = run(
            &["buffer.device_pages=0", &format!("voltage.policy={policy}")],
            script(),
        );
        assert!(
            (s.read.mean_us - expected).abs() < 1e-3,
            "{policy}: {} vs {expected}",
            s.read.mean_us
        );
    }
}

#[test]
fn hire_programs_evicted_pages_by_hotness() {
    // A two-page buffer. Page 0 written once and evicted: write-hot, low level. Page 1 written
    // once then read 25 times in the buffer: read-hot, high level. Reading both back from flash
    // costs the low and the high level's sense + transfer.
    let mut r = vec![req(0, 0, IoOp::Write), req(10, 1, IoOp::Write)];
    r.extend((0..25).map(|i| req(20 + i, 1, IoOp::Read)));
    r.extend([
        req(100, 2, IoOp::Write),
        req(110, 3, IoOp::Write),
        req(120, 4, IoOp::Write),
    ]);
    r.extend([req(20_000, 0, IoOp::Read), req(30_000, 1, IoOp::Read)]);
    let s = run(&["buffer.device_pages=2", "voltage.policy=hire"], r);
    // Evictions: 0 (written once), 1 (25 reads, 1 write: 96 % reads), 2, then 3 and 4 when the
    // two read-backs enter the buffer.
    assert_eq!(s.buffer.evicted_by_class["write_hot"], 4);
    assert_eq!(s.buffer.evicted_by_class["read_hot"], 1);
    assert_eq!(s.voltage.read_pages["low"], 1);
    assert_eq!(s.voltage.read_pages["high"], 1);
    assert!(
        (s.voltage.read_us["low"] - 310.0).abs() < 1e-3
            && (s.voltage.read_us["high"] - 70.0).abs() < 1e-3
    );
}

#[test]
fn wear_weight_follows_the_erased_blocks_level_through_gc() {
    // Overwrite a small footprint until GC erases blocks: every erase of an HVC drive weighs
    // sum(high volts) / sum(normal volts), of an LVC drive the low ratio.
    let writes = |n| {
        (0..n)
            .map(|i| req(i * 2000, i % 64, IoOp::Write))
            .collect::<Vec<_>>()
    };
    for (policy, weight) in [
        ("hvc", 12.05 / 10.04),
        ("lvc", 8.03 / 10.04),
        ("baseline", 1.0),
    ] {
        let s = run(
            &[
                "buffer.device_pages=0",
                &format!("voltage.policy={policy}"),
                "precondition.fill=0.8",
            ],
            writes(20_000),
        );
        assert!(s.flash.erases > 0);
        let expected = s.flash.erases as f64 * weight;
        assert!(
            (s.voltage.wearing_weight - expected).abs() < 1e-3,
            "{policy}: {} vs {expected}",
            s.voltage.wearing_weight
        );
    }
}

#[test]
fn voltage_controllers_are_ordered_on_a_real_trace() {
    let sets = |policy: &str| {
        config(
            "hire",
            &[
                "geometry.blocks_per_plane=512",
                "geometry.pages_per_block=8",
                "buffer.device_pages=1024",
                "precondition.fill=0.9",
                "precondition.pattern=random",
                &format!("voltage.policy={policy}"),
            ],
        )
    };
    let r = |p: &str| run_trace(&sets(p), "financial1_10k.disksim", 10_000, 1).unwrap();
    let (base, hvc, lvc, hire) = (r("baseline"), r("hvc"), r("lvc"), r("hire"));
    let read = |s: &Summary| s.read.mean_us;
    let wear = |s: &Summary| s.voltage.wearing_weight;
    assert!(
        read(&hvc) <= read(&base) && read(&base) <= read(&lvc),
        "{} {} {}",
        read(&hvc),
        read(&base),
        read(&lvc)
    );
    assert!(read(&hvc) <= read(&hire) && read(&hire) <= read(&lvc));
    assert!(
        wear(&lvc) <= wear(&base) && wear(&base) <= wear(&hvc),
        "{} {} {}",
        wear(&lvc),
        wear(&base),
        wear(&hvc)
    );
    assert!(
        hire.voltage.programs["low"] > 0,
        "write-hot pages are programmed low"
    );
}
