//! Closed forms of the destage buffer (`buffer.flush_backlog_pages`, MQSim's write cache) on
//! the one-die `tiny` drive: writes complete from DRAM while the flushes in flight stay below
//! the bound, then wait for one to end.

use crate::{config, run_recorded, run_tiny_pages as run};
use ssdlab::workload::IoOp;

#[test]
fn writes_complete_from_dram_until_the_flushes_reach_the_bound() {
    let cfg = config("tiny", &[]);
    let program = cfg.flash.transfer_us + cfg.flash.program_us;
    let dram = 1.0;
    // A one-page buffer, one background flush at a time: three writes of different pages
    // 1 us apart. The first fills the buffer, the second evicts it (its flush starts), the
    // third finds the bound reached and waits for that flush, then evicts the second.
    let sets = [
        "buffer.device_pages=1",
        "buffer.cache_reads=false",
        "buffer.dram_ns_per_page=1000",
        "buffer.flush_backlog_pages=1",
    ];
    let reqs = vec![
        (0, 1, IoOp::Write),
        (1, 2, IoOp::Write),
        (2, 3, IoOp::Write),
    ];
    let (s, r) = run(&sets, &reqs);
    assert!((r[0] - dram).abs() < 1e-6, "{}", r[0]);
    assert!((r[1] - dram).abs() < 1e-6, "{}", r[1]);
    // Waited from t = 2 us for the flush queued at t = 1 us, then DRAM.
    let want = 1.0 + program - 2.0 + dram;
    assert!((r[2] - want).abs() < 1e-6, "{} vs {want}", r[2]);
    assert_eq!(s.buffer.background_flushes, 2);
    assert_eq!(s.buffer.back_pressure_waits, 1);
    // In line (the default), the write that evicts waits for its flush instead.
    let (inline, r) = run(&sets[..3], &reqs);
    assert!((r[1] - program).abs() < 1e-6, "{}", r[1]);
    assert_eq!(inline.buffer.background_flushes, 0);
}

#[test]
fn eager_flushes_write_a_page_back_the_first_time_it_is_written_in_a_period() {
    let sets = [
        "buffer.device_pages=8",
        "buffer.cache_reads=false",
        "buffer.flush_backlog_pages=8",
        "buffer.eager_flush_period_ms=1",
    ];
    // Page 1 at 0, 10 and 2000 us: flushed at 0 (first in the period), not at 10, flushed at
    // 2000 (a new period); it stays cached clean, so nothing is flushed at the end of the run.
    let reqs = vec![
        (0, 1, IoOp::Write),
        (10, 1, IoOp::Write),
        (2000, 1, IoOp::Write),
    ];
    let (s, _) = run(&sets, &reqs);
    assert_eq!(s.buffer.eager_flushes, 2);
    assert_eq!(s.flash.programs, 2);
    assert_eq!(s.buffer.write_hits, 2);
}

#[test]
fn with_the_sector_unit_partial_page_flushes_count_their_sectors() {
    // 4 KiB pages (8 sectors), a bound of one page: three 2 KiB writes of different pages, 1 us
    // apart, each flushed eagerly. Counting pages, the first flush fills the bound and the
    // next two writes wait; counting sectors (MQSim), two 4-sector flushes fit under the
    // 8-sector bound, so only the third write waits.
    let sets = |unit: &'static str| {
        [
            "buffer.device_pages=8",
            "buffer.cache_reads=false",
            "buffer.dram_ns_per_page=1000",
            "buffer.flush_backlog_pages=1",
            "buffer.eager_flush_period_ms=1000",
            unit,
        ]
    };
    let half = |t_us: u64, page: u64| {
        Ok(ssdlab::workload::Request {
            time_ns: t_us * 1000,
            offset_bytes: page * 4096,
            size_bytes: 2048,
            op: IoOp::Write,
            device: 0,
            content: None,
            flow: 0,
        })
    };
    let reqs = || vec![half(0, 1), half(1, 2), half(2, 3)];
    let dram = 1.0;
    let (pages, rp) = run_recorded(
        &config("tiny", &sets("buffer.flush_backlog_unit=\"page\"")),
        reqs(),
    );
    let (sectors, rs) = run_recorded(
        &config("tiny", &sets("buffer.flush_backlog_unit=\"sector\"")),
        reqs(),
    );
    assert_eq!(pages.buffer.back_pressure_waits, 2);
    assert_eq!(sectors.buffer.back_pressure_waits, 1);
    assert!((rp[0] - dram).abs() < 1e-6 && rp[1] > dram + 1.0, "{rp:?}");
    assert!((rs[1] - dram).abs() < 1e-6 && rs[2] > dram + 1.0, "{rs:?}");
    // The same three flushes reach flash either way.
    assert_eq!(pages.buffer.eager_flushes, 3);
    assert_eq!(sectors.buffer.eager_flushes, 3);
}

#[test]
fn destage_settings_are_validated() {
    let build = |sets: &[&str]| {
        let mut b = ssdlab::config::ConfigBuilder::preset("tiny").unwrap();
        for s in sets {
            b = b.set(s).unwrap();
        }
        b.build().map(|_| ()).map_err(|e| e.to_string())
    };
    let e = build(&["buffer.flush_backlog_pages=4"]).unwrap_err();
    assert!(e.contains("needs a device buffer"), "{e}");
    let e = build(&["buffer.device_pages=8", "buffer.eager_flush_period_ms=5"]).unwrap_err();
    assert!(e.contains("buffer.flush_backlog_pages > 0"), "{e}");
    let e = build(&[
        "buffer.device_pages=8",
        "buffer.flush_backlog_unit=\"sector\"",
    ])
    .unwrap_err();
    assert!(e.contains("buffer.flush_backlog_unit"), "{e}");
    let e = build(&[
        "buffer.device_pages=8",
        "buffer.flush_backlog_pages=4",
        "buffer.flush_backlog_unit=\"sector\"",
        "geometry.page_size_bytes=65536",
    ])
    .unwrap_err();
    assert!(e.contains("at most 64"), "{e}");
}
