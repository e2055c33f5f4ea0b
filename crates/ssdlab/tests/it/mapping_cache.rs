//! Closed forms of the cached mapping table (`ftl.mapping_cache_*`) on the one-die `tiny`
//! drive (every translation page is in flash from the start): 4 KiB pages, 3-byte entries,
//! 1365 entries per translation page.

use crate::{config, run_tiny_pages};
use ssdlab::metrics::Summary;
use ssdlab::workload::IoOp;

const PER_PAGE: u64 = 1365;

/// Runs `reqs` on the `tiny` drive, filled, with `sets`.
fn run(sets: &[&str], reqs: &[(u64, u64, IoOp)]) -> (Summary, Vec<f64>) {
    let mut all = vec!["precondition.fill=1.0"];
    all.extend_from_slice(sets);
    run_tiny_pages(&all, reqs)
}

#[test]
fn a_miss_costs_one_translation_read_before_the_data_read_and_a_hit_none() {
    let cfg = config("tiny", &[]);
    let one_read = cfg.flash.command_us + cfg.flash.read_us + cfg.flash.transfer_us;
    // Pages in three translation pages, one second apart, then the first again.
    let reqs = vec![
        (0, 0, IoOp::Read),
        (1_000_000, PER_PAGE, IoOp::Read),
        (2_000_000, 2 * PER_PAGE, IoOp::Read),
        (3_000_000, 0, IoOp::Read),
    ];
    let (without, plain) = run(&[], &reqs);
    let (with, cached) = run(&["ftl.mapping_cache_entries=4"], &reqs);
    for r in &plain {
        assert!((r - one_read).abs() < 1e-6, "{r} vs {one_read}");
    }
    for (i, r) in cached.iter().enumerate() {
        let want = if i < 3 { 2.0 * one_read } else { one_read };
        assert!((r - want).abs() < 1e-6, "request {i}: {r} vs {want}");
    }
    let c = with.mapping_cache.as_ref().unwrap();
    assert_eq!((c.read_misses, c.read_hits, c.translation_reads), (3, 1, 3));
    assert_eq!(with.flash.by_cause["mapping"], [3, 0, 0]);
    assert_eq!(with.flash.reads, without.flash.reads + 3);
    // Each miss's wait for its translation page is the read's mapping wait.
    assert!((with.read_wait_us["mapping"] - 3.0 * one_read / 4.0).abs() < 1e-6);
    assert!(without.mapping_cache.is_none() && !without.read_wait_us.contains_key("mapping"));
}

#[test]
fn a_dirty_eviction_writes_its_translation_page_back_by_one_read_and_one_program() {
    let cfg = config("tiny", &[]);
    let one_read = cfg.flash.command_us + cfg.flash.read_us + cfg.flash.transfer_us;
    // A write of page 0 (its entry turns dirty), then a read in another translation page that
    // evicts it from a one-entry cache.
    let reqs = vec![(0, 0, IoOp::Write), (1_000_000, PER_PAGE, IoOp::Read)];
    let (_, plain) = run(&[], &reqs);
    let (with, cached) = run(&["ftl.mapping_cache_entries=1"], &reqs);
    // The write waited for its entry: one translation read more.
    assert!((cached[0] - plain[0] - one_read).abs() < 1e-6);
    let c = with.mapping_cache.as_ref().unwrap();
    assert_eq!((c.write_misses, c.read_misses, c.writebacks), (1, 1, 1));
    // Two loads, then the write-back: a read merging the entries not cached, a program.
    assert_eq!(
        (c.translation_reads, c.merge_reads, c.translation_programs),
        (2, 1, 1)
    );
    assert_eq!(with.flash.by_cause["mapping"], [3, 1, 0]);
}

#[test]
fn a_write_back_never_programmed_holds_its_page_so_later_misses_read_nothing() {
    let cfg = config("tiny", &[]);
    let one_read = cfg.flash.command_us + cfg.flash.read_us + cfg.flash.transfer_us;
    // The eviction of the previous test, then a read of page 1: its entry is in the page
    // written back, not cached.
    let reqs = vec![
        (0, 0, IoOp::Write),
        (1_000_000, PER_PAGE, IoOp::Read),
        (2_000_000, 1, IoOp::Read),
    ];
    let one = ["ftl.mapping_cache_entries=1"];
    let (programmed, p) = run(&one, &reqs);
    let (held, h) = run(&[one[0], "ftl.mapping_writeback=\"never\""], &reqs);
    let (pc, hc) = (
        programmed.mapping_cache.as_ref().unwrap(),
        held.mapping_cache.as_ref().unwrap(),
    );
    // Both merge; only the programmed one writes the page, and its later miss reads it.
    assert_eq!((pc.merge_reads, pc.translation_programs), (1, 1));
    assert_eq!((hc.merge_reads, hc.translation_programs), (1, 0));
    assert_eq!((pc.filled_without_read, hc.filled_without_read), (0, 1));
    assert!((p[2] - 2.0 * one_read).abs() < 1e-6, "{p:?}");
    assert!((h[2] - one_read).abs() < 1e-6, "{h:?}");
    assert_eq!(held.flash.by_cause["mapping"], [3, 0, 0]);
}

#[test]
fn mapping_cache_sizes_are_validated() {
    let err = ssdlab::config::ConfigBuilder::preset("tiny")
        .unwrap()
        .set("ftl.mapping_cache_entries=8")
        .unwrap()
        .set("ftl.mapping_cache_bytes=64")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("set one of them"), "{err}");
}

#[test]
fn translation_reads_go_ahead_of_queued_host_reads_with_mapping_reads_first() {
    let cfg = config("tiny", &[]);
    let one_read = cfg.flash.command_us + cfg.flash.read_us + cfg.flash.transfer_us;
    // Pages 0 and 1 have their entries cached by first reads; a write of page 0 (a hit) then
    // holds the die while a read of page 1 (a hit) and a read in another translation page (a
    // miss) queue behind it. Responses come in completion order: the write's last.
    let t = 1_000_000;
    let reqs = vec![
        (0, 0, IoOp::Read),
        (t / 2, 1, IoOp::Read),
        (t, 0, IoOp::Write),
        (t + 1, 1, IoOp::Read),
        (t + 2, PER_PAGE, IoOp::Read),
    ];
    let sets = ["ftl.mapping_cache_entries=4", "sched.policy=\"rps\""];
    let (_, fifo) = run(&sets, &reqs);
    let mut first = sets.to_vec();
    first.push("sched.mapping_reads_first=true");
    let (s, ahead) = run(&first, &reqs);
    // The miss's translation read goes before the queued read of page 0, which waits for it;
    // the miss itself still waits for that read (its data read queues behind it) either way.
    assert!(
        (ahead[3] - fifo[3] - one_read).abs() < 1e-6,
        "{ahead:?} vs {fifo:?}"
    );
    assert!((ahead[4] - fifo[4]).abs() < 1e-6, "{ahead:?} vs {fifo:?}");
    assert_eq!(s.mapping_cache.as_ref().unwrap().translation_reads, 3);
}
