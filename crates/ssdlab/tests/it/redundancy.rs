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
fn ttflash_rebuilds_conflicted_reads_from_k_dies() {
    let s = replay(&drive(&["redundancy.scheme=ttflash"]));
    let k = 4;
    let groups = 10 / (k + 1);
    let [_, user_programs, _] = s.flash.by_cause["user"];
    let r = &s.redundancy;
    assert!(r.rebuilt > 0);
    assert_eq!(r.reconstruction_reads, k * r.rebuilt);
    // One parity program per k host programs in a group.
    assert!(r.parity_programs <= user_programs / k);
    assert!(r.parity_programs + groups >= user_programs / k);
}
