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
fn pre_processing_programs_pages_read_before_written_at_the_policys_level() {
    // Page 5 is only read (25 times: read-hot, high level); page 6 is read once, then written
    // three times (mixed: normal level); page 7 is written before it is read (not
    // pre-processed). The drive starts empty: only pre-processing puts pages 5 and 6 there.
    let script = || {
        let mut r: Vec<_> = (0..25).map(|i| req(i * 10_000, 5, IoOp::Read)).collect();
        r.push(req(300_000, 6, IoOp::Read));
        r.extend((0..3).map(|i| req(310_000 + i * 10_000, 6, IoOp::Write)));
        r.push(req(400_000, 7, IoOp::Write));
        r.push(req(500_000, 7, IoOp::Read));
        r
    };
    // A one-page buffer: the first read of page 5 and the read of page 6 go to flash, the
    // others hit the buffer.
    let s = run(
        &[
            "buffer.device_pages=1",
            "voltage.policy=hire",
            "precondition.pre_process=true",
        ],
        script(),
    );
    assert_eq!(s.pre_processed_pages, Some(2));
    assert_eq!(s.voltage.read_pages["high"], 1);
    assert!((s.voltage.read_us["high"] - 70.0).abs() < 1e-3);
    assert_eq!(s.voltage.read_pages["normal"], 1);
    assert!((s.voltage.read_us["normal"] - 170.0).abs() < 1e-3);
    // Without pre-processing the never-written pages are not on flash at any level.
    let off = run(&["buffer.device_pages=1", "voltage.policy=hire"], script());
    assert_eq!(off.pre_processed_pages, None);
    assert_eq!(off.voltage.read_pages["high"], 0);
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

/// The `hire` scheme as users select it (its settings include the clean read-hot rewrite).
fn hire_scheme(sets: &[&str], reqs: Vec<Result<Request, TraceError>>) -> Summary {
    let mut b = ssdlab::config::ConfigBuilder::preset("hire")
        .unwrap()
        .scheme("hire");
    for s in [
        "geometry.channels=1",
        "geometry.chips_per_channel=1",
        "geometry.blocks_per_plane=64",
        "ftl.over_provisioning=0.25",
    ]
    .iter()
    .chain(sets)
    {
        b = b.set(s).unwrap();
    }
    crate::run_requests(&b.build().unwrap(), reqs, None)
}

#[test]
fn a_clean_read_hot_eviction_is_programmed_high_in_idle_time() {
    // A two-page buffer. Page 0 written once and evicted (write-hot: low level), read back
    // (310 µs at the low level; it enters the buffer clean, read once: read-hot), evicted clean
    // by two writes and rewritten at the high level while the die idles; read back again at
    // the high level's 70 µs.
    let r = || {
        vec![
            req(0, 0, IoOp::Write),
            req(10, 1, IoOp::Write),
            req(20, 2, IoOp::Write),
            req(10_000, 0, IoOp::Read),
            req(20_000, 3, IoOp::Write),
            req(20_010, 4, IoOp::Write),
            req(40_000, 0, IoOp::Read),
        ]
    };
    let s = hire_scheme(
        &[
            "buffer.device_pages=2",
            "voltage.rewrite_clean_read_hot=true",
        ],
        r(),
    );
    assert_eq!(s.buffer.rewrites, 1);
    assert_eq!(s.voltage.programs["high"], 1);
    assert_eq!(s.voltage.read_pages["low"], 1);
    assert_eq!(s.voltage.read_pages["high"], 1);
    assert!((s.voltage.read_us["high"] - 70.0).abs() < 1e-3);
    // Without the rewrite (our extension; the scheme leaves it off) the page stays low.
    let off = hire_scheme(&["buffer.device_pages=2"], r());
    assert_eq!((off.buffer.rewrites, off.voltage.programs["high"]), (0, 0));
    assert_eq!(off.voltage.read_pages["low"], 2);
}

#[test]
fn idle_time_rewrites_wait_for_host_writes_queued_rewrites_do_not() {
    // Page 0 is read twice into a four-page buffer around three writes that fill it; three
    // more writes evict those (their programs keep the die busy), the next evicts page 0 clean
    // and read-hot, and 33 more follow. Queued, its rewrite takes its place among the host
    // programs (and every later write waits 600 µs longer for the program it evicted); held for
    // idle time, it runs after all of them.
    let r = || {
        let mut r = vec![req(0, 0, IoOp::Read)];
        r.extend((1..=3).map(|p| req(10_000, p, IoOp::Write)));
        r.push(req(10_000, 0, IoOp::Read));
        r.extend((4..=40).map(|p| req(20_000, p, IoOp::Write)));
        r
    };
    let sets = |when: &str| {
        vec![
            "buffer.device_pages=4".to_string(),
            "voltage.rewrite_clean_read_hot=true".to_string(),
            format!("voltage.rewrite_when={when}"),
        ]
    };
    let run = |when: &str| {
        let s = sets(when);
        hire_scheme(&s.iter().map(String::as_str).collect::<Vec<_>>(), r())
    };
    let (idle, queued) = (run("idle"), run("queued"));
    assert_eq!((idle.buffer.rewrites, queued.buffer.rewrites), (1, 1));
    assert_eq!(idle.voltage.programs["high"], 1);
    assert!(
        idle.write.mean_us < queued.write.mean_us,
        "idle {} vs queued {}",
        idle.write.mean_us,
        queued.write.mean_us
    );
}

#[test]
fn gc_relevels_a_page_whose_hotness_changed() {
    // Rewrites off: page 0 is written (write-hot, a low block), then read and evicted clean as
    // read-hot, which only updates its hotness field. Overwriting pages 1..150 of the 240 makes
    // GC collect page 0's block (its only valid page); the move programs page 0 at the high level, where it is read at the end.
    let mut r = vec![req(0, 0, IoOp::Write)];
    r.extend((1..4).map(|p| req(10 + p, p, IoOp::Write)));
    r.push(req(10_000, 0, IoOp::Read));
    // Pseudo-random order, so GC victims still hold valid pages.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    r.extend((0..3000u64).map(|i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        req(20_000 + i * 1000, 1 + x % 150, IoOp::Write)
    }));
    r.push(req(20_000_000, 0, IoOp::Read));
    let s = hire_scheme(
        &[
            "buffer.device_pages=2",
            "voltage.rewrite_clean_read_hot=false",
            "geometry.blocks_per_plane=40",
            "geometry.pages_per_block=4",
        ],
        r,
    );
    assert!(s.flash.erases > 0);
    assert!(s.gc.pages_moved > 0 && s.voltage.gc_relevelled >= 1);
    assert_eq!(s.voltage.read_pages["high"], 1);
    assert!((s.voltage.read_us["high"] - 70.0).abs() < 1e-3);
}

#[test]
fn wear_of_preconditioned_blocks_is_reported_apart() {
    // Overwrites spread over the preconditioned data: GC erases fill blocks and run blocks.
    let writes = (0..20_000u64)
        .map(|i| req(i * 2000, i * 7919 % 9000, IoOp::Write))
        .collect::<Vec<_>>();
    let s = run(
        &[
            "buffer.device_pages=0",
            "voltage.policy=lvc",
            "precondition.fill=0.8",
            "precondition.pattern=random",
            "voltage.split_fill_wear=true",
        ],
        writes,
    );
    let w = s.voltage.run_blocks.as_ref().expect("asked for");
    let run_erases: u64 = w.erases.values().sum();
    assert!(
        w.fill_block_erases > 0 && run_erases > 0,
        "{w:?} of {}",
        s.flash.erases
    );
    assert_eq!(run_erases + w.fill_block_erases, s.flash.erases);
    assert!((w.wearing_weight - run_erases as f64 * 8.03 / 10.04).abs() < 1e-3);
    // Not asked for: not reported.
    let plain = run(&["buffer.device_pages=0"], vec![req(0, 0, IoOp::Write)]);
    assert!(plain.voltage.run_blocks.is_none());
}
