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
fn scripted(reqs: Vec<Result<Request, TraceError>>) -> Summary {
    let cfg = config(
        "hotr",
        &[
            "geometry.channels=2",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=64",
            "staging.design=extra-chip",
            "staging.rlru_entries=16",
            "staging.hot_fraction=0.5",
        ],
    );
    crate::run_requests(&cfg, reqs, None)
}

#[test]
fn miss_then_copy_then_redirect_then_invalidate() {
    // Logical pages 0, 2, 4 live on data die 0 (channel-first striping over 2 channels).
    let s = scripted(vec![
        at(0, 0, IoOp::Write),     // lpn 0 programmed on die 0 by 1360.24 us
        at(2_000, 0, IoOp::Read),  // not conflicted: entry inserted, served at home (85.24)
        at(3_000, 2, IoOp::Write), // die 0 programs 3000 .. 4360.24
        at(3_100, 0, IoOp::Read), // conflicted, entry without copy: home after the program, then copied
        at(7_000, 4, IoOp::Write), // die 0 programs 7000 .. 8360.24
        at(7_100, 0, IoOp::Read), // conflicted, entry with copy: served from the staging chip (85.24)
        at(9_000, 0, IoOp::Write), // invalidates the copy and the entry
        at(11_000, 2, IoOp::Write),
        at(11_100, 0, IoOp::Read), // conflicted again, but no entry: waits at home
    ]);
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
    assert!(
        s.cost.space_factor > 1.49 && s.cost.space_factor < 1.51,
        "one staging chip beside two data chips"
    );
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
