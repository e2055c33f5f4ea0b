//! Dedup and DedupHR: reference counts through writes, overwrites and GC, the threshold up and
//! down on a scripted drive with exact latencies, power-loss recovery, and DedupHR against HotR
//! on a synthetic dedup workload and the real FIU trace.

use crate::{config, run_synth, run_trace};
use ssdlab::metrics::Summary;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::trace::TraceError;
use ssdlab::workload::{IoOp, Request};

fn req(t_us: u64, page: u64, op: IoOp, content: u128) -> Result<Request, TraceError> {
    crate::page_request(t_us, page, op, Some(content))
}

/// Two data channels (one die, one plane each) plus a staging chip, TLC, DedupHR at 3.
fn scripted(reqs: Vec<Result<Request, TraceError>>, power_loss_at_ns: Option<u64>) -> Summary {
    scripted_with(reqs, power_loss_at_ns, &[])
}

fn scripted_with(
    reqs: Vec<Result<Request, TraceError>>,
    power_loss_at_ns: Option<u64>,
    extra: &[&str],
) -> Summary {
    let mut sets = vec![
        "scheme=deduphr",
        "geometry.channels=2",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=64",
    ];
    sets.extend(extra);
    crate::run_requests(&config("deduphr", &sets), reqs, power_loss_at_ns)
}

/// Content 7 written to pages 1, 3, 5 (count 3: staged), then a conflicted read of page 3.
/// Odd pages live on die 1 (channel-first striping), even ones on die 0.
fn staged_then_read(extra: Vec<Result<Request, TraceError>>) -> Vec<Result<Request, TraceError>> {
    let mut v = vec![
        req(0, 1, IoOp::Write, 7),      // new content: programmed on die 1
        req(2_000, 3, IoOp::Write, 7),  // duplicate: count 2, no program
        req(2_100, 5, IoOp::Write, 7),  // duplicate: count 3, copied to the staging chip
        req(4_000, 9, IoOp::Write, 99), // new content: die 1 programs 4000 .. 5360.24
        req(4_100, 3, IoOp::Read, 0),   // conflicted, staged: served from staging (85.24)
    ];
    v.extend(extra);
    v
}

#[test]
fn duplicates_cost_no_program_and_the_threshold_stages_a_copy() {
    let s = scripted(staged_then_read(vec![]), None);
    let d = s.dedup.as_ref().unwrap();
    assert_eq!((d.page_writes, d.duplicate_pages), (4, 2));
    assert_eq!(
        s.flash.by_cause["user"][1], 2,
        "two unique pages programmed"
    );
    assert_eq!(s.staging.migrations, 1, "one copy, made on the write path");
    assert_eq!(s.flash.by_cause["migration"], [0, 1, 0], "no extra read");
    assert_eq!((s.staging.redirected, s.reads_blocked), (1, 1));
    assert!((s.read.mean_us - 85.24).abs() < 1e-3, "{}", s.read.mean_us);
    assert_eq!(s.staging.copies, 1);
}

#[test]
fn falling_back_to_one_reference_invalidates_the_copy() {
    let s = scripted(
        staged_then_read(vec![
            req(6_000, 5, IoOp::Write, 8), // count 2: the copy stays
            req(6_100, 3, IoOp::Write, 8), // count 1: the copy goes
            req(8_000, 11, IoOp::Write, 98),
            req(8_100, 1, IoOp::Read, 0), // conflicted, no copy: waits at home
        ]),
        None,
    );
    let st = &s.staging;
    assert_eq!((st.copies_invalidated, st.copies, st.redirected), (1, 0, 1));
    assert_eq!(st.misses, 1);
    // Content 8 reached 2 references only: not staged.
    assert_eq!(st.migrations, 1);
    assert_eq!(s.reads_blocked, 2);
}

#[test]
fn a_copy_on_a_busy_staging_die_is_not_used() {
    let s = scripted(
        vec![
            req(0, 1, IoOp::Write, 7),
            req(2_000, 3, IoOp::Write, 7),
            req(2_100, 5, IoOp::Write, 7), // copy of 7: staging die 2100 .. 3460.24
            req(4_000, 21, IoOp::Write, 8), // die 1 programs 4000 .. 5360.24
            req(4_010, 25, IoOp::Write, 8),
            req(4_020, 27, IoOp::Write, 8), // copy of 8: staging die busy 4020 .. 5380.24
            req(4_100, 3, IoOp::Read, 0),   // conflicted; its copy's die is programming too
        ],
        None,
    );
    let st = &s.staging;
    assert_eq!((st.redirected, st.copy_busy, st.migrations), (0, 1, 2));
    // Served home after page 21's program: 5360.24 + 85.24 - 4100.
    assert!(
        (s.read.mean_us - 1345.48).abs() < 1e-3,
        "{}",
        s.read.mean_us
    );
}

#[test]
fn a_backlogged_staging_die_skips_copies() {
    let reqs = || {
        vec![
            req(0, 1, IoOp::Write, 7),
            req(10, 11, IoOp::Write, 6),
            req(2_000, 3, IoOp::Write, 7),
            req(2_010, 13, IoOp::Write, 6),
            req(2_100, 5, IoOp::Write, 7),  // copy of 7 queued
            req(2_110, 15, IoOp::Write, 6), // copy of 6 while the first is queued
        ]
    };
    let one = scripted_with(reqs(), None, &["staging.max_queued_copies=1"]);
    assert_eq!((one.staging.migrations, one.staging.copies_skipped), (1, 1));
    let two = scripted_with(reqs(), None, &["staging.max_queued_copies=2"]);
    assert_eq!((two.staging.migrations, two.staging.copies_skipped), (2, 0));
}

#[test]
fn power_loss_drops_the_map_table_and_reads_go_home() {
    // The copy is programmed 2100 .. 3460.24 us. Power fails at 3.6 ms, after it was made:
    // the same conflicted read now waits at home.
    let s = scripted(staged_then_read(vec![]), Some(3_600_000));
    let st = &s.staging;
    assert_eq!((st.power_losses, st.copies_lost, st.copies), (1, 1, 0));
    assert_eq!(st.redirected, 0);
    assert_eq!(st.misses, 1);
    assert!(
        s.read.mean_us > 1000.0,
        "waited for the program: {}",
        s.read.mean_us
    );
    // A later threshold crossing stages the content again.
    let s = scripted(
        staged_then_read(vec![
            req(6_000, 13, IoOp::Write, 7), // count 4: re-staged after the loss
            req(8_000, 15, IoOp::Write, 97),
            req(8_100, 5, IoOp::Read, 0),
        ]),
        Some(3_600_000),
    );
    assert_eq!((s.staging.migrations, s.staging.redirected), (2, 1));
    // Power fails at 3 ms while the copy is being programmed: it is discarded when done.
    let s = scripted(staged_then_read(vec![]), Some(3_000_000));
    let st = &s.staging;
    assert_eq!(
        (st.copies_lost, st.migrations_discarded, st.redirected),
        (0, 1, 0)
    );
}

/// A small drive under a synthetic dedup workload heavy enough to run GC.
const SYNTH: &str = "requests=30000,write_ratio=0.7,size_kib=4|8|16,iat_us=300,footprint_gib=0.2,zipf=0.9,dedup=0.5,dup_pool=0.01,seed=5";
const SMALL: [&str; 5] = [
    "dedup.enabled=true",
    "geometry.blocks_per_plane=64",
    "precondition.fill=0.9",
    "precondition.pattern=random",
    "staging.design=none",
];

#[test]
fn reference_counts_survive_overwrites_and_gc() {
    let mut sets = SMALL.to_vec();
    sets.push("staging.policy=hotr");
    let s = run_synth(&config("deduphr", &sets), SYNTH, 1, true);
    let d = s.dedup.as_ref().unwrap();
    assert!(
        s.gc.count > 0 && s.gc.pages_moved > 0,
        "GC moved shared pages"
    );
    assert!(d.dedup_ratio_pct > 20.0, "{}", d.dedup_ratio_pct);
    assert!(d.contents_dropped > 0);
    // Conservation: every non-duplicate page write is one user program.
    assert_eq!(
        s.flash.by_cause["user"][1],
        d.page_writes - d.duplicate_pages
    );
    assert!(
        d.flash_read_pct > d.host_read_pct,
        "Fig. 11: dedup raises the read share"
    );
    // The same workload without dedup programs every page.
    let mut off = sets.clone();
    off.push("dedup.enabled=false");
    let plain = run_synth(&config("deduphr", &off), SYNTH, 1, true);
    assert!(plain.dedup.is_none());
    assert_eq!(plain.flash.by_cause["user"][1], d.page_writes);
}

#[test]
fn deduphr_redirects_more_conflicted_reads_than_hotr_at_equal_staging() {
    let run = |policy: &str| {
        let mut sets = SMALL.to_vec();
        sets.pop();
        sets.push("staging.design=extra-chip");
        let p = format!("staging.policy={policy}");
        sets.push(&p);
        run_synth(&config("deduphr", &sets), SYNTH, 1, true)
    };
    let (hotr, deduphr) = (run("hotr"), run("deduphr"));
    assert_eq!(hotr.staging.capacity_pages, deduphr.staging.capacity_pages);
    assert!(
        deduphr.staging.redirected > hotr.staging.redirected,
        "DedupHR {} vs HotR {}",
        deduphr.staging.redirected,
        hotr.staging.redirected
    );
    assert!(deduphr.read.mean_us < hotr.read.mean_us);
}

#[test]
fn power_loss_mid_run_keeps_verification_green() {
    let mut sets = SMALL.to_vec();
    sets.pop();
    sets.push("scheme=deduphr");
    let cfg = config("deduphr", &sets);
    let spec: ssdlab::workload::synth::SynthSpec = SYNTH.parse().unwrap();
    let mut gen = spec.generate().unwrap();
    let s = Simulation::new(
        &cfg,
        RunOptions {
            seed: 1,
            verify: true,
            power_loss_at_ns: Some(4_000_000_000),
            ..Default::default()
        },
        &mut gen,
    )
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(s.staging.power_losses, 1);
    assert!(s.staging.copies_lost > 0);
    assert!(s.staging.redirected > 0);
}

#[test]
fn the_real_fiu_trace_deduplicates_and_verifies() {
    let sets = ["scheme=deduphr", "ftl.out_of_range=wrap"];
    let s = run_trace(&config("deduphr", &sets), "fiu_cheetah_10k.fiu", 10_000, 1).unwrap();
    let d = s.dedup.as_ref().unwrap();
    // SOURCE.md: 1,102 writes with 798 distinct MD5s in this window.
    assert_eq!(d.page_writes, 1102);
    // At most 1102 - 798 duplicates; fewer when a content died before its next write.
    assert!(
        d.duplicate_pages <= 1102 - 798 && d.duplicate_pages > 250,
        "{}",
        d.duplicate_pages
    );
    assert_eq!(
        s.flash.by_cause["user"][1],
        d.page_writes - d.duplicate_pages
    );
}

/// HotR under dedup: two host pages with the same content, each read twice while idle.
fn two_pages_one_content() -> Vec<Result<Request, TraceError>> {
    vec![
        req(0, 1, IoOp::Write, 7),
        req(2_000, 3, IoOp::Write, 7), // duplicate: the same content, no program
        req(4_000, 1, IoOp::Read, 0),
        req(4_200, 3, IoOp::Read, 0),
    ]
}

/// HotR below the dedup layer on the scripted drive.
fn scripted_hotr(reqs: Vec<Result<Request, TraceError>>, extra: &[&str]) -> Summary {
    let mut sets = vec![
        "scheme=hotr+dedup",
        "geometry.channels=2",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=64",
        "staging.hot_fraction=1",
    ];
    sets.extend(extra);
    crate::run_requests(&config("deduphr", &sets), reqs, None)
}

#[test]
fn hotr_under_dedup_keys_its_hot_set_by_host_page_unless_told_otherwise() {
    // By host page: page 3's first read is a miss, not a hit of page 1's entry — no copy.
    let lba = scripted_hotr(two_pages_one_content(), &[]);
    assert_eq!(lba.staging.migrations, 0);
    // By content: the second read hits the content's entry and copies it.
    let content = scripted_hotr(two_pages_one_content(), &["staging.key=content"]);
    assert_eq!(content.staging.migrations, 1);
}

#[test]
fn a_host_page_copy_is_dropped_when_the_page_is_rewritten_with_a_duplicate() {
    let mut reqs = two_pages_one_content();
    reqs.extend([
        req(4_400, 1, IoOp::Read, 0),  // hit: page 1 copied (content 7)
        req(9_000, 1, IoOp::Write, 8), // a new content for page 1: its copy is stale
        req(9_100, 5, IoOp::Write, 7), // content 7 stays alive through page 3
        req(12_000, 1, IoOp::Read, 0),
    ]);
    let s = scripted_hotr(reqs, &[]);
    assert_eq!(s.staging.migrations, 1);
    assert_eq!(s.staging.copies_invalidated, 1);
}
