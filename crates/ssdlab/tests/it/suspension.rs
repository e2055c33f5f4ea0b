//! P/E suspension: the paper's equation (1), IPC's bound, and the ordering of the policies.

use crate::{config, run_synth, run_trace};
use ssdlab::metrics::Summary;

/// One die, no bus time, programs back to back at ~90 % utilisation, sparse single-page reads.
fn saturated(cell: &str, policy: &str, iat_us: u32) -> Summary {
    let cfg = config(
        &format!("pe-suspension-{cell}"),
        &[
            "geometry.channels=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=1024",
            "flash.transfer_us=0",
            "sched.policy=rps",
            &format!("suspend.policy={policy}"),
        ],
    );
    let spec = format!("requests=200000,write_ratio=0.9,iat_us={iat_us},footprint_gib=0.1,seed=3");
    run_synth(&cfg, &spec, 1, false)
}

fn eq1(program_us: f64, verify_us: f64) -> f64 {
    let sum = program_us + verify_us;
    program_us / sum * program_us / 2.0 + verify_us / sum * verify_us / 2.0
}

#[test]
fn ips_extra_read_latency_matches_equation_1() {
    for (cell, iat, p, v) in [("slc", 140, 20.0, 8.0), ("mlc", 650, 20.0, 24.0)] {
        let s = saturated(cell, "ips", iat);
        let expected = eq1(p, v);
        assert!((expected - if cell == "slc" { 8.29 } else { 11.09 }).abs() < 0.01);
        let got = s.pe.program_suspension_wait_us;
        assert!(
            s.pe.reads_waited_for_suspension > 5000,
            "{cell}: too few samples"
        );
        assert!(
            (got - expected).abs() / expected < 0.03,
            "{cell}: {got} us vs eq. (1) {expected:.2} us"
        );
    }
}

#[test]
fn ipc_never_waits_longer_than_a_voltage_reset() {
    let s = saturated("slc", "ipc", 140);
    assert!(
        s.pe.suspension_wait_max_us <= 4.0 + 1e-9,
        "{}",
        s.pe.suspension_wait_max_us
    );
    assert!(s.pe.phases_cancelled > 0);
    let ideal = saturated("slc", "ideal", 140);
    assert_eq!(ideal.pe.suspension_wait_max_us, 0.0);
}

#[test]
fn policies_are_ordered_on_a_mixed_trace() {
    let run = |sched: &str, policy: &str| {
        let cfg = config(
            "pe-suspension-slc",
            &[
                &format!("sched.policy={sched}"),
                &format!("suspend.policy={policy}"),
                "host.time_scale=0.05",
            ],
        );
        run_trace(&cfg, "msr_cut_rw_40_60.flashnet", 10_000, 1).unwrap()
    };
    let fifo = run("fifo", "off");
    let rps = run("rps", "off");
    let ips = run("rps", "ips");
    let ipc = run("rps", "ipc");
    let ideal = run("rps", "ideal");
    let r = |s: &Summary| s.read.mean_us;
    assert!(
        r(&ideal) <= r(&ipc) && r(&ipc) <= r(&ips) && r(&ips) <= r(&rps) && r(&rps) <= r(&fifo),
        "reads: {} {} {} {} {}",
        r(&ideal),
        r(&ipc),
        r(&ips),
        r(&rps),
        r(&fifo)
    );
    // Writes pay the other way round; `ideal` loses no time on resume, so it sits between RPS and IPS.
    let w = |s: &Summary| s.write.mean_us;
    assert!(
        w(&fifo) <= w(&rps) && w(&rps) <= w(&ideal) && w(&ideal) <= w(&ips) && w(&ips) <= w(&ipc),
        "writes: {} {} {} {} {}",
        w(&fifo),
        w(&rps),
        w(&ideal),
        w(&ips),
        w(&ipc)
    );
    assert!(ips.pe.programs_suspended > 0 && rps.pe.programs_suspended == 0);
}

#[test]
fn per_and_pe0_idealise_program_and_erase() {
    let per = config("pe-suspension-slc", &["flash.pe_idealization=per"]);
    assert_eq!(
        (per.flash.program_us, per.flash.erase_us),
        (per.flash.read_us, per.flash.read_us)
    );
    let pe0 = config(
        "pe-suspension-slc",
        &[
            "flash.pe_idealization=pe0",
            "sched.policy=rps",
            "host.time_scale=0.05",
        ],
    );
    let s = run_trace(&pe0, "msr_cut_rw_40_60.flashnet", 3000, 1).unwrap();
    assert!(s.pe.program_nominal_us <= pe0.flash.transfer_us + 1e-9);
    let e = ssdlab::config::ConfigBuilder::preset("tiny")
        .unwrap()
        .set("flash.pe_idealization=pe0")
        .unwrap()
        .set("suspend.policy=ips")
        .unwrap()
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("suspend.policy"), "{e}");
}

#[test]
fn every_policy_verifies_with_gc_and_without_shadow_buffer() {
    for policy in ["erase", "ips", "ipc", "ideal"] {
        for (shadow, overlap) in [("true", false), ("false", false), ("true", true)] {
            let cfg = config(
                "tiny",
                &[
                    "precondition.fill=0.9",
                    "precondition.pattern=random",
                    "sched.policy=rps",
                    &format!("suspend.policy={policy}"),
                    &format!("suspend.shadow_buffer={shadow}"),
                    "suspend.max_reads_per_suspension=2",
                    &format!("suspend.resume_overlap={overlap}"),
                ],
            );
            let s = run_synth(&cfg, "requests=20000,write_ratio=0.5,size_kib=4|8,iat_us=150,footprint_gib=0.012,zipf=0.6,seed=9", 4, true);
            assert!(
                s.gc.count > 0 && s.pe.suspensions > 0,
                "{policy}/{shadow}/{overlap}"
            );
            assert!(s.pe.suspended_program_increase_pct > 0.0 || policy == "erase");
        }
    }
}

#[test]
fn resume_overlap_resumes_while_the_read_page_leaves() {
    let run = |overlap: bool| {
        let cfg = config(
            "pe-suspension-slc",
            &[
                "geometry.channels=1",
                "geometry.planes_per_die=1",
                "geometry.blocks_per_plane=1024",
                "sched.policy=rps",
                "suspend.policy=ipc",
                &format!("suspend.resume_overlap={overlap}"),
            ],
        );
        let spec = "requests=50000,write_ratio=0.8,iat_us=250,footprint_gib=0.1,seed=3";
        run_synth(&cfg, spec, 1, true)
    };
    let (held, overlapped) = (run(false), run(true));
    assert!(held.pe.suspensions > 1000 && overlapped.pe.suspensions > 1000);
    // Each suspension serves at least one read whose 20 us transfer no longer holds the die:
    // on a 140 us program that is at least 14 points of effective latency per suspension.
    let (h, o) = (
        held.pe.suspended_program_increase_pct,
        overlapped.pe.suspended_program_increase_pct,
    );
    assert!(h - o > 10.0, "held {h} %, overlapped {o} %");
    assert!(overlapped.read.mean_us < held.read.mean_us);
}

/// The P/E-suspension experiment's drive state: written sequentially twice, so GC erases
/// whole invalid blocks from the first write on and IPC suspends those erases.
#[test]
fn erases_are_suspended_under_erase_only_background_gc() {
    let run = |policy: &str| {
        let cfg = config(
            "pe-suspension-slc",
            &[
                "geometry.channels=2",
                "geometry.blocks_per_plane=256",
                "precondition.fill=1.0",
                "precondition.pattern=sequential-rewrite",
                "sched.policy=rps",
                &format!("suspend.policy={policy}"),
            ],
        );
        let spec =
            "requests=10000,write_ratio=0.5,size_kib=4|8,iat_us=100,footprint_gib=0.05,seed=5";
        run_synth(&cfg, spec, 1, true)
    };
    let (off, ipc) = (run("off"), run("ipc"));
    for s in [&off, &ipc] {
        assert!(s.gc.count > 20, "GC must run: {} erases", s.gc.count);
        assert_eq!(s.gc.pages_moved, 0, "whole invalid blocks need no copies");
    }
    assert_eq!(off.pe.erases_suspended, 0);
    assert!(ipc.pe.erases_suspended > 0);
    // An erase pulse or verify stops one voltage reset (4 us) after the read arrives.
    assert!(ipc.pe.erase_suspension_wait_us <= 4.0 + 1e-9);
    assert!(ipc.read.mean_us < off.read.mean_us);
}
