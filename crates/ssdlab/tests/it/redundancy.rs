//! Rails (mirrored halves, optional role switching) and TTFlash (RAID-5 rebuilds) end to end on
//! a real trace, with verification on (every read, including those served by the mirror or
//! rebuilt from a stripe, is checked against the page's current version).

use crate::{config, run_trace};
use ssdlab::config::{Config, ConfigBuilder};
use ssdlab::metrics::Summary;

/// The hotr drive, small enough for GC (and so mirrored erases) to run on a trace excerpt.
fn drive(sets: &[&str]) -> Config {
    let mut all = vec![
        "geometry.blocks_per_plane=64",
        "precondition.fill=0.85",
        "precondition.pattern=random",
    ];
    all.extend_from_slice(sets);
    config("hotr", &all)
}

fn replay(cfg: &Config) -> Summary {
    run_trace(cfg, "financial1_10k.disksim", 6000, 1).unwrap()
}

const RAILS: [&str; 2] = ["redundancy.scheme=rails", "geometry.channels=20"];

#[test]
fn rails_mirrors_every_program_and_erase() {
    let s = replay(&drive(&RAILS));
    let [_, user_programs, _] = s.flash.by_cause["user"];
    let [_, gc_programs, gc_erases] = s.flash.by_cause["gc"];
    let [_, mirror_programs, mirror_erases] = s.flash.by_cause["redundancy"];
    assert!(gc_erases > 0, "GC must run so that erases are mirrored");
    assert_eq!(s.redundancy.mirror_programs, user_programs + gc_programs);
    assert_eq!(mirror_programs, s.redundancy.mirror_programs);
    assert_eq!(mirror_erases, gc_erases);
    assert!(s.redundancy.redirected > 0);
    assert_eq!(s.redundancy.role_switches, 0);
    assert_eq!(s.cost.space_factor, 2.0);
}

#[test]
fn rails_role_switching_keeps_programs_off_the_read_set() {
    let plain = replay(&drive(&RAILS));
    let mut sets = RAILS.to_vec();
    sets.push("redundancy.rails_switch_us=2000");
    let switched = replay(&drive(&sets));
    assert!(switched.redundancy.role_switches > 0);
    // The same host data reaches both replicas, only later on the one that was reading (GC
    // moves depend on timing, so only the host programs are the same in both runs).
    let [_, user_programs, _] = switched.flash.by_cause["user"];
    let [_, gc_programs, gc_erases] = switched.flash.by_cause["gc"];
    assert_eq!(user_programs, plain.flash.by_cause["user"][1]);
    assert_eq!(
        switched.redundancy.mirror_programs,
        user_programs + gc_programs
    );
    assert_eq!(switched.flash.by_cause["redundancy"][2], gc_erases);
    // Reads meet fewer programs; writes wait for their half's write period.
    assert!(
        switched.redundancy.redirected > plain.redundancy.redirected,
        "the mirror serves the reads of the primary's write periods"
    );
    // About half of the reads fall in the mirror's read periods, and the mirror holds the
    // preconditioned data too (it was filled mirrored), so most of those go there.
    assert!(
        switched.redundancy.redirected_pct > 25.0,
        "{}",
        switched.redundancy.redirected_pct
    );
    assert!(switched.read.mean_us < plain.read.mean_us);
    assert!(switched.write.mean_us > plain.write.mean_us);
}

#[test]
fn rails_role_switching_needs_rails() {
    let e = ConfigBuilder::preset("hotr")
        .unwrap()
        .set("redundancy.rails_switch_us=1000")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("redundancy.rails_switch_us = 1000"), "{e}");
}

#[test]
fn ttflash_rebuilds_conflicted_reads_from_k_dies_and_updates_parity_per_write() {
    let s = replay(&drive(&["redundancy.scheme=ttflash"]));
    let k = 4;
    let [_, user_programs, _] = s.flash.by_cause["user"];
    let [parity_reads, parity_programs, _] = s.flash.by_cause["redundancy"];
    let r = &s.redundancy;
    assert!(r.rebuilt > 0);
    // Redundancy reads are the rebuilds' k reads plus one parity read per update.
    assert_eq!(parity_reads, k * r.rebuilt + r.parity_reads);
    // Read-modify-write (the default): one parity program per host program, each after a
    // read of the old parity unless the stripe had none yet (the preconditioned data has
    // parity, so nearly all do).
    assert_eq!(parity_programs, r.parity_programs);
    assert_eq!(r.parity_programs, user_programs);
    assert!(r.parity_reads <= r.parity_programs);
    assert!(r.parity_reads * 100 >= r.parity_programs * 95);
}

#[test]
fn ttflash_full_stripes_write_one_parity_per_k_programs_gc_moves_included() {
    let s = replay(&drive(&[
        "redundancy.scheme=ttflash",
        "redundancy.parity_update=stripe",
    ]));
    let k = 4;
    let [_, user_programs, _] = s.flash.by_cause["user"];
    let [_, gc_programs, _] = s.flash.by_cause["gc"];
    let r = &s.redundancy;
    assert!(s.gc.count > 0, "GC must run so that relocations re-stripe");
    assert_eq!(r.parity_reads, 0);
    // One parity program per k data programs of a group: more than the host programs alone
    // make (relocated pages join new stripes), at most all programs (GC programs include
    // relocated parity pages, which join no stripe).
    let data = user_programs + gc_programs;
    assert!(
        r.parity_programs <= data / k,
        "{} vs {data}",
        r.parity_programs
    );
    assert!(
        r.parity_programs > user_programs / k + user_programs / 20,
        "{} vs {user_programs} host programs",
        r.parity_programs
    );
}

/// Parity is mapped data: a drive holding it has more valid pages, so GC moves more than
/// the same drive whose parity would be free garbage, and `--verify` (run by `replay`)
/// checks every stripe's parity page against the mapping.
#[test]
fn ttflash_parity_is_valid_data_that_gc_moves() {
    for update in ["read-modify-write", "stripe"] {
        let set = format!("redundancy.parity_update={update}");
        let s = replay(&drive(&["redundancy.scheme=ttflash", &set]));
        let base = replay(&drive(&[]));
        assert!(
            s.gc.pages_moved > base.gc.pages_moved,
            "{update}: TTFlash moves {} pages, the baseline {}",
            s.gc.pages_moved,
            base.gc.pages_moved
        );
    }
}

#[test]
fn ttflash_parity_survives_a_power_loss_under_gc() {
    for update in ["read-modify-write", "stripe"] {
        let set = format!("redundancy.parity_update={update}");
        let cfg = drive(&["redundancy.scheme=ttflash", &set]);
        let spec = "requests=6000,write_ratio=0.7,size_kib=4|8|16,iat_us=150,footprint_gib=0.5,zipf=0.8,seed=3";
        let spec: ssdlab::workload::synth::SynthSpec = spec.parse().unwrap();
        let mut gen = spec.generate().unwrap();
        let opts = ssdlab::sim::RunOptions {
            seed: 1,
            verify: true,
            power_loss_at_ns: Some(400_000_000),
            ..Default::default()
        };
        let s = ssdlab::sim::Simulation::new(&cfg, opts, &mut gen)
            .unwrap()
            .run()
            .unwrap();
        assert!(s.gc.count > 0 && s.staging.power_losses == 1, "{update}");
    }
}

#[test]
fn read_modify_write_costs_one_parity_read_and_program_per_data_write() {
    use ssdlab::workload::IoOp;
    let cfg = config("hotr", &["redundancy.scheme=ttflash"]);
    // Pages 0..3 share static stripe 0: the first write finds no parity (a program only),
    // each later one reads the old parity first; page 4 starts stripe 1.
    let reqs = (0..5u64)
        .map(|p| crate::page_request(p * 5_000, p, IoOp::Write, None))
        .chain([crate::page_request(30_000, 2, IoOp::Write, None)])
        .collect();
    let s = crate::run_requests(&cfg, reqs, None);
    let r = &s.redundancy;
    assert_eq!((r.parity_programs, r.parity_reads), (6, 4));
    assert_eq!(s.flash.by_cause["redundancy"], [4, 6, 0]);
    assert_eq!(s.flash.by_cause["user"][1], 6);
}

/// TTFlash on the tiny drive with `k`, `planes` per die and a parity update mode, 90 % filled
/// in order, then 16 KiB writes of `spec`, with verification.
fn ttflash_tiny(k: u32, planes: u32, update: &str, spec: &str) -> Result<Summary, String> {
    let cfg = ConfigBuilder::preset("tiny")
        .unwrap()
        .scheme("ttflash")
        .set(&format!("geometry.channels={}", k + 1))
        .unwrap()
        .set(&format!("redundancy.ttflash_k={k}"))
        .unwrap()
        .set(&format!("geometry.planes_per_die={planes}"))
        .unwrap()
        .set(&format!("redundancy.parity_update=\"{update}\""))
        .unwrap()
        .set("precondition.fill=0.9")
        .unwrap()
        .build()
        .unwrap();
    let spec: ssdlab::workload::synth::SynthSpec = spec.parse().unwrap();
    let mut gen = spec.generate().unwrap();
    let opts = ssdlab::sim::RunOptions {
        seed: 1,
        verify: true,
        ..Default::default()
    };
    ssdlab::sim::Simulation::new(&cfg, opts, &mut gen)
        .and_then(ssdlab::sim::Simulation::run)
        .map_err(|e| e.to_string())
}

const SEQUENTIAL: &str =
    "requests=20000,write_ratio=1,size_kib=16,seq=1,iat_us=200,footprint_gib=0.01,seed=1";

#[test]
fn ttflash_parity_spreads_over_a_dies_planes_whatever_k() {
    // Parity on `id % planes` put every parity page of a die on one plane with k = 1 (ids
    // follow the order stripes are written), which filled it (issue 33, N10).
    for (k, planes) in [(1, 2), (1, 4), (3, 4)] {
        let s = ttflash_tiny(k, planes, "read-modify-write", SEQUENTIAL)
            .unwrap_or_else(|e| panic!("k={k}, {planes} planes: {e}"));
        assert_eq!(s.requests, 20_000);
    }
}

#[test]
fn ttflash_full_stripes_never_count_a_dead_stripes_parity_as_data() {
    // A parity page relocated after its stripe died was taken for data and joined a stripe.
    // Random 16 KiB writes over more than the logical space (folded onto it): GC moves
    // parity pages while their stripes die.
    let spec = "requests=20000,write_ratio=1,size_kib=16,iat_us=200,footprint_gib=0.02,seed=1";
    for (k, planes) in [(3, 1), (3, 2), (1, 1)] {
        let s = ttflash_tiny(k, planes, "stripe", spec)
            .unwrap_or_else(|e| panic!("k={k}, {planes} planes: {e}"));
        assert_eq!(s.requests, 20_000);
        // On the k = 1 drive (half the pages are parity) the writes are folded onto the host's
        // pages, never onto the parity ids appended after them (they overwrote parity pages
        // and failed --verify).
        assert_eq!(s.wrapped_requests > 0, k == 1);
    }
}
