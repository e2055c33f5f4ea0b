//! Every bundled trace format replays end to end with verification; golden summaries guard
//! regressions (update deliberately with `INSTA_UPDATE=always cargo test`).

use crate::{config, run_trace};
use ssdlab::config::Config;

fn small_hotr() -> Config {
    // The hotr drive with fewer blocks per plane so GC runs within a few thousand requests.
    config(
        "hotr",
        &[
            "geometry.blocks_per_plane=64",
            "precondition.fill=0.85",
            "precondition.pattern=random",
        ],
    )
}

fn replay(name: &str, limit: u64) -> ssdlab::metrics::Summary {
    let s = run_trace(&small_hotr(), name, limit, 1).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(s.requests, limit.min(s.requests));
    assert!(s.requests > 0);
    let conserved = s.host_pages["write"];
    assert_eq!(
        s.flash.by_cause["user"][1], conserved,
        "{name}: every host page write is one user program"
    );
    s
}

#[test]
fn msr_csv() {
    let s = replay("msr_hm_0.csv", 4000);
    assert_eq!(s.requests, 4000);
    insta::assert_snapshot!("msr_hm_0", s.deterministic_json());
}

#[test]
fn msr_gzip_matches_plain() {
    let a = replay("msr_hm_0.csv", 2000).deterministic_json();
    let b = replay("msr_hm_0.csv.gz", 2000).deterministic_json();
    assert_eq!(a, b);
}

#[test]
fn disksim_financial() {
    let s = replay("financial1_10k.disksim", 4000);
    assert!(
        s.gc.count > 0,
        "GC must run on the preconditioned small drive"
    );
    insta::assert_snapshot!("financial1", s.deterministic_json());
}

#[test]
fn spc() {
    let s = replay("financial1_2k.spc", 2000);
    let d = replay("financial1_10k.disksim", 2000);
    // The same records in two formats give the same run, up to the SPC file's timestamps
    // being rounded to whole microseconds.
    assert_eq!(
        (s.requests, s.flash.reads, s.flash.programs, s.gc.count),
        (d.requests, d.flash.reads, d.flash.programs, d.gc.count)
    );
    assert!((s.all.mean_us - d.all.mean_us).abs() / d.all.mean_us < 1e-4);
}

#[test]
fn fiu_with_tar_framing() {
    let s = replay("fiu_cheetah_10k.fiu", 3000);
    assert_eq!(s.requests, 3000);
}

#[test]
fn mqsim_disksim_ns_and_flashnet() {
    replay("mqsim_tpcc_small.disksim", 3000);
    replay("msr_cut_rw_40_60.flashnet", 3000);
    replay("websearch_5k.disksim", 3000);
}

#[test]
fn rps_cuts_read_latency_against_fifo_on_a_mixed_trace() {
    let fifo = run_trace(&small_hotr(), "financial1_10k.disksim", 5000, 1).unwrap();
    let rps_cfg = config(
        "hotr",
        &[
            "geometry.blocks_per_plane=64",
            "precondition.fill=0.85",
            "precondition.pattern=random",
            "sched.policy=rps",
        ],
    );
    let rps = run_trace(&rps_cfg, "financial1_10k.disksim", 5000, 1).unwrap();
    assert!(
        rps.read.mean_us < fifo.read.mean_us,
        "RPS {} vs FIFO {}",
        rps.read.mean_us,
        fifo.read.mean_us
    );
    assert!(rps.reads_blocked_pct <= fifo.reads_blocked_pct);
}

#[test]
fn blktrace_dispatch_events() {
    let s = replay("ycsb_ext4_3k.blkparse", 100_000);
    let t = s.trace.as_ref().expect("trace counts are reported");
    // One D event per dispatched request; I and C events are skipped as non-requests.
    assert_eq!(s.requests, t.requests);
    assert!(t.skipped_framing > t.requests);
    assert!(
        s.read.count > s.write.count,
        "YCSB on ext4 is read-dominated"
    );
}

#[test]
fn vscsi_binary_and_csv() {
    let b = replay("cloudphysics_3k.vscsi", 3000);
    let c = replay("cloudphysics_3k.vscsi.csv", 3000);
    // The same 3,000 records in two encodings: the CSV keeps whole seconds only, so the
    // requests and the pages they touch agree, the timing does not.
    assert_eq!(b.requests, 3000);
    assert_eq!(
        (
            b.requests,
            b.read.count,
            b.host_pages["read"],
            b.host_pages["write"]
        ),
        (
            c.requests,
            c.read.count,
            c.host_pages["read"],
            c.host_pages["write"]
        )
    );
    assert_eq!(b.read.count, 1235, "41.2 % reads in this slice");
    let t = c.trace.as_ref().expect("trace counts are reported");
    assert_eq!(t.skipped_framing, 1, "the CSV header");
    insta::assert_snapshot!("cloudphysics_vscsi", b.deterministic_json());
}
