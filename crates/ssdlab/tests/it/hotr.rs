//! HotR: the routing paths on a scripted drive with exact latencies, staging size zero equals
//! the baseline, and redirection on a real trace.

use crate::{config, run_trace};
use ssdlab::metrics::Summary;
use ssdlab::workload::trace::TraceError;
use ssdlab::workload::{IoOp, Request};

fn at(t_us: u64, page: u64, op: IoOp) -> Result<Request, TraceError> {
    crate::page_request(t_us, page, op, None)
}

/// Two data channels (one die each, 1 plane) plus the staging chip, TLC timings.
fn scripted(reqs: Vec<Result<Request, TraceError>>, extra: &[&str]) -> Summary {
    let cfg = config(
        "hotr",
        &[
            "geometry.channels=2",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=64",
            "staging.design=extra-chip",
            "staging.hot_fraction=1",
        ]
        .iter()
        .chain(extra)
        .copied()
        .collect::<Vec<_>>(),
    );
    crate::run_requests(&cfg, reqs, None)
}

#[test]
fn miss_then_copy_then_redirect_then_invalidate() {
    // Logical pages 0, 2, 4 live on data die 0 (channel-first striping over 2 channels).
    let s = scripted(
        vec![
            at(0, 0, IoOp::Write),     // lpn 0 programmed on die 0 by 1360.24 us
            at(2_000, 0, IoOp::Read),  // not conflicted: entry inserted, served at home (85.24)
            at(3_000, 2, IoOp::Write), // die 0 programs 3000 .. 4360.24
            at(3_100, 0, IoOp::Read), // conflicted, entry without copy: home after the program, then copied
            at(7_000, 4, IoOp::Write), // die 0 programs 7000 .. 8360.24
            at(7_100, 0, IoOp::Read), // conflicted, entry with copy: served from the staging chip (85.24)
            at(9_000, 0, IoOp::Write), // invalidates the copy and the entry
            at(11_000, 2, IoOp::Write),
            at(11_100, 0, IoOp::Read), // conflicted again, but no entry: waits at home
        ],
        &[],
    );
    let st = &s.staging;
    assert_eq!(
        (
            st.redirected,
            st.hits_without_copy,
            st.migrations,
            st.copies_invalidated,
            st.misses
        ),
        (1, 1, 1, 1, 1)
    );
    // Read latencies: 85.24 (idle), 4445.48 - 3100, 85.24 (staging), 12445.48 - 11100.
    let expected_mean = (85.24 + 1345.48 + 85.24 + 1345.48) / 4.0;
    assert!(
        (s.read.mean_us - expected_mean).abs() < 1e-3,
        "{} vs {expected_mean}",
        s.read.mean_us
    );
    assert_eq!(s.reads_blocked, 3);
    // Per request (one page each here): 3 of 4 blocked, 1 of 4 redirected.
    assert_eq!(
        (s.read_requests_blocked_pct, s.read_requests_redirected_pct),
        (75.0, 25.0)
    );
    assert!(
        s.cost.space_factor > 1.49 && s.cost.space_factor < 1.51,
        "one staging chip beside two data chips"
    );
}

#[test]
fn per_request_counts_a_request_once_whatever_its_pages() {
    // Pages 0 and 2 on die 0, 1 on die 1. One two-page read (pages 0-1) finds die 0
    // programming: 1 of its 2 pages blocked, the request counts as blocked once.
    let two_pages = |t_us: u64, page: u64, op: IoOp| {
        at(t_us, page, op).map(|mut r| {
            r.size_bytes = 8192;
            r
        })
    };
    let s = scripted(
        vec![
            at(0, 0, IoOp::Write),
            at(0, 1, IoOp::Write),
            at(3_000, 2, IoOp::Write), // die 0 programs 3000 .. 4360.24
            two_pages(3_100, 0, IoOp::Read), // page 0 blocked, page 1 not
            two_pages(6_000, 0, IoOp::Read), // nothing running: not blocked
        ],
        &[],
    );
    assert_eq!(s.reads_blocked, 1);
    assert_eq!(s.reads_blocked_pct, 25.0);
    assert_eq!(s.read_requests_blocked_pct, 50.0);
    assert_eq!(s.read_requests_redirected_pct, 0.0);
}

#[test]
fn without_copies_hotr_is_the_baseline() {
    let sets = [
        "geometry.blocks_per_plane=256",
        "precondition.fill=0.9",
        "precondition.pattern=random",
    ];
    let base = run_trace(&config("hotr", &sets), "financial1_10k.disksim", 10_000, 1).unwrap();
    let mut with = sets.to_vec();
    with.extend(["staging.design=extra-chip", "staging.hot_fraction=0"]);
    let zero = run_trace(&config("hotr", &with), "financial1_10k.disksim", 10_000, 1).unwrap();
    assert_eq!(zero.staging.migrations, 0);
    assert_eq!(
        (
            zero.read.mean_us,
            zero.write.mean_us,
            zero.flash.programs,
            zero.gc.count
        ),
        (
            base.read.mean_us,
            base.write.mean_us,
            base.flash.programs,
            base.gc.count
        )
    );
}

#[test]
fn hotr_redirects_conflicted_reads_and_cuts_read_latency() {
    let sets = [
        "geometry.blocks_per_plane=256",
        "precondition.fill=0.9",
        "precondition.pattern=random",
    ];
    let base = run_trace(&config("hotr", &sets), "financial1_10k.disksim", 10_000, 1).unwrap();
    let mut with = sets.to_vec();
    with.push("staging.design=extra-chip");
    let hotr = run_trace(&config("hotr", &with), "financial1_10k.disksim", 10_000, 1).unwrap();
    assert!(hotr.staging.redirected > 0);
    assert!(
        hotr.read.mean_us < base.read.mean_us,
        "{} vs {}",
        hotr.read.mean_us,
        base.read.mean_us
    );
    assert_eq!(
        hotr.reads_blocked_pct, base.reads_blocked_pct,
        "the conflict test is the blocked test"
    );
}

/// A read of lpn 0 files its entry, a second (unconflicted) read hits it, then a conflicted read.
fn hit_then_conflicted_read() -> Vec<Result<Request, TraceError>> {
    vec![
        at(0, 0, IoOp::Write),     // lpn 0 programmed on die 0 by 1360.24 us
        at(2_000, 0, IoOp::Read),  // entry filed
        at(3_000, 0, IoOp::Read),  // an unconflicted hit
        at(6_000, 2, IoOp::Write), // die 0 programs 6000 .. 7360.24
        at(6_100, 0, IoOp::Read),  // conflicted
    ]
}

#[test]
fn any_hit_copies_by_default_and_only_conflicted_hits_with_the_option() {
    let any = scripted(hit_then_conflicted_read(), &[]);
    // The unconflicted hit at 3000 was copied (programmed on the staging chip by ~4450), so
    // the conflicted read is redirected.
    assert_eq!((any.staging.migrations, any.staging.redirected), (1, 1));
    let conflicted = scripted(
        hit_then_conflicted_read(),
        &["staging.copy_on=conflicted-hit"],
    );
    // No copy at 3000: the conflicted read waits at home and is copied afterwards.
    assert_eq!(
        (
            conflicted.staging.migrations,
            conflicted.staging.redirected,
            conflicted.staging.hits_without_copy
        ),
        (1, 0, 1)
    );
    assert!(conflicted.read.mean_us > any.read.mean_us);
}

#[test]
fn the_hot_set_is_a_share_of_the_distinct_pages_read() {
    // 40 distinct pages of die 0 (even lpns) written, then each read twice: with a hot fraction
    // of 1/4, die 0's list holds 10 entries at the end, so at most 10 copies exist at once and
    // the list evicts (dropping copies) as it fills.
    let mut reqs = Vec::new();
    for i in 0..40u64 {
        reqs.push(at(i * 2_000, 2 * i, IoOp::Write));
    }
    // Pairs 3 ms apart, so each copy is programmed before the next page is read.
    for i in 0..40u64 {
        let t = 100_000 + i * 3_000;
        reqs.push(at(t, 2 * i, IoOp::Read));
        reqs.push(at(t + 200, 2 * i, IoOp::Read));
    }
    let s = scripted(reqs, &["staging.hot_fraction=0.25"]);
    assert!(s.staging.migrations > 0);
    assert!(
        s.staging.peak_copies <= 10,
        "peak {} copies over a hot set of 10",
        s.staging.peak_copies
    );
    assert!(s.staging.copies_dropped > 0, "entries leave the list");
}

/// Die 0's hot pages 0 and 6 get copies; then page 0 is read while die 0 programs and the
/// staging die programs page 6's copy, with one more program queued on die 0.
fn busy_copy_script() -> Vec<Result<Request, TraceError>> {
    vec![
        at(0, 0, IoOp::Write),
        at(0, 6, IoOp::Write),
        at(3_000, 0, IoOp::Read), // entries filed
        at(3_200, 6, IoOp::Read),
        at(4_000, 2, IoOp::Write),   // die 0 programs 4000 .. 5360
        at(4_100, 0, IoOp::Read),    // conflicted hit: home, then copied to staging
        at(10_000, 4, IoOp::Write),  // die 0 programs 10000 .. 11360
        at(10_100, 6, IoOp::Read), // conflicted hit: home (~11445), then copied (staging busy after)
        at(11_500, 8, IoOp::Write), // die 0 programs again
        at(11_550, 10, IoOp::Write), // and has one more queued
        at(11_600, 0, IoOp::Read), // conflicted, copy on a busy staging die
    ]
}

#[test]
fn a_copy_on_a_busy_die_goes_where_busy_copy_says() {
    let fate = |rule: &str| {
        let s = scripted(busy_copy_script(), &[&format!("staging.busy_copy={rule}")]);
        let st = &s.staging;
        (st.copy_busy, st.busy_copy_redirected, st.redirected)
    };
    // Home (the default): the read waits at home, counted as finding its copy's die busy.
    assert_eq!(fate("home"), (1, 0, 0));
    // Redirect: it goes to the copy all the same.
    assert_eq!(fate("redirect"), (0, 1, 1));
    // Less work: the staging die has one program running, home one running and one queued.
    assert_eq!(fate("less-work"), (0, 1, 1));
}
