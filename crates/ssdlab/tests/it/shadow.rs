//! Host and device buffers with ShadowGC and its GC baselines: every variant's relocation path
//! on a small drive under GC, verified through a restart; refresh of fast blocks; the write
//! amplification split.

use crate::config;
use ssdlab::metrics::Summary;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::synth::SynthSpec;

const WORKLOAD: &str =
    "requests=30000,write_ratio=0.8,size_kib=4|8,iat_us=1500,footprint_gib=0.02,zipf=0.9,seed=1";

fn run(gc: &str, extra: &[&str], power_loss_at_ns: Option<u64>) -> Summary {
    let mut sets = vec![
        "geometry.blocks_per_plane=128",
        "precondition.fill=0.9",
        "precondition.pattern=random",
        "buffer.host_pages=256",
        "buffer.device_pages=128",
        "shadow.ecc_decode_us=20",
    ];
    let v = format!("shadow.gc={gc}");
    sets.push(&v);
    sets.extend(extra);
    let cfg = config("tiny", &sets);
    let spec: SynthSpec = WORKLOAD.parse().unwrap();
    let mut gen = spec.generate().unwrap();
    let opts = RunOptions {
        seed: 1,
        verify: true,
        power_loss_at_ns,
        ..Default::default()
    };
    Simulation::new(&cfg, opts, &mut gen)
        .unwrap()
        .run()
        .unwrap()
}

#[test]
fn every_variant_takes_its_relocation_path_and_verifies_through_a_restart() {
    let mut wa = Vec::new();
    for gc in [
        "ggc",
        "greedy-delay",
        "greedy-separation",
        "zgc",
        "hgc",
        "dgc",
        "sgc",
    ] {
        let s = run(gc, &[], Some(20_000_000_000));
        let sh = s.shadow.as_ref().unwrap();
        let relocations: u64 = sh.relocated.values().sum();
        assert!(relocations > 1000 && s.gc.count > 0, "{gc}: GC ran");
        let separates = matches!(gc, "greedy-separation" | "zgc" | "hgc" | "sgc");
        let from_buffer = matches!(gc, "dgc" | "sgc");
        assert_eq!(sh.separated > 0, separates, "{gc}: separation");
        assert_eq!(
            sh.from_buffer > 0,
            from_buffer,
            "{gc}: reads from the device buffer"
        );
        assert_eq!(
            sh.twins_dropped > 0,
            matches!(gc, "hgc" | "sgc"),
            "{gc}: twin drop"
        );
        // Pages taken from the device buffer need no GC flash read.
        assert!(
            s.flash.by_cause["gc"][0] + sh.from_buffer <= relocations,
            "{gc}"
        );
        // Conservation: every program is a flushed host page or a relocation.
        assert_eq!(
            s.flash.programs,
            s.flash.by_cause["user"][1] + s.flash.by_cause["gc"][1],
            "{gc}"
        );
        assert!(
            (sh.wa_flush + sh.wa_gc - s.write_amplification).abs() < 1e-5,
            "{gc}: the split adds up"
        );
        assert_eq!(s.staging.power_losses, 1);
        assert!(sh.host_pages_lost > 0 && sh.restart_flushes > 0, "{gc}");
        wa.push((gc, s.write_amplification, s.gc.time_ms));
    }
    let of = |name: &str| wa.iter().find(|w| w.0 == name).unwrap();
    assert!(
        of("sgc").1 < of("ggc").1 && of("sgc").2 < of("ggc").2,
        "ShadowGC lowers WA and GC time on this workload: {wa:?}"
    );
}

#[test]
fn fast_blocks_are_refreshed_after_a_restart_and_when_due() {
    // Restart late: the fast blocks' pages are no longer shadows and hold valid data.
    let s = run("sgc", &["geometry.pages_per_block=8"], Some(40_000_000_000));
    let sh = s.shadow.as_ref().unwrap();
    assert!(sh.refresh_jobs > 0 && sh.refresh_pages > 0, "{sh:?}");
    // A short T − D refreshes fast blocks during the run; the overhead stays small.
    let s = run(
        "hgc",
        &[
            "geometry.pages_per_block=8",
            "shadow.fast_retention_h=0.0003",
            "shadow.power_off_h=0.0001",
        ],
        None,
    );
    let sh = s.shadow.as_ref().unwrap();
    assert!(sh.refresh_jobs > 0, "{sh:?}");
    assert!(sh.refresh_pct < 5.0, "{}", sh.refresh_pct);
    // With the default T − D (120 h) nothing falls due in a 45 s run.
    let s = run("hgc", &["geometry.pages_per_block=8"], None);
    assert_eq!(s.shadow.as_ref().unwrap().refresh_jobs, 0);
}

#[test]
fn the_host_buffer_absorbs_rewrites_and_serves_reads() {
    let with = run("ggc", &[], None);
    let sh = with.shadow.as_ref().unwrap();
    assert!(sh.host_write_hits > 0 && sh.host_read_hits > 0);
    // Every device write is a host-buffer write-back.
    assert!(sh.host_flushes < with.host_pages["write"]);
    let without = run("ggc", &["buffer.host_pages=0"], None);
    assert!(without.shadow.is_none());
    assert!(with.flash.by_cause["user"][1] < without.flash.by_cause["user"][1]);
}

#[test]
fn write_buffers_never_take_a_clean_page() {
    use ssdlab::workload::IoOp;
    // Page 5 is only read (twice); page 7 is written, then read.
    let reqs = || {
        vec![
            crate::page_request(0, 5, IoOp::Read, None),
            crate::page_request(1_000, 5, IoOp::Read, None),
            crate::page_request(2_000, 7, IoOp::Write, None),
            crate::page_request(3_000, 7, IoOp::Read, None),
        ]
    };
    let hits = |cache_reads: &str| {
        let set = format!("buffer.cache_reads={cache_reads}");
        let cfg = config(
            "tiny",
            &["buffer.host_pages=16", "buffer.device_pages=16", &set],
        );
        let s = crate::run_requests(&cfg, reqs(), None);
        (
            s.shadow.as_ref().unwrap().host_read_hits,
            s.buffer.read_hits,
            s.flash.by_cause["user"][0],
        )
    };
    // A read cache keeps page 5 after its first read; write buffers do not.
    let (host, device, flash) = hits("true");
    assert_eq!((host, device, flash), (2, 0, 1));
    let (host, device, flash) = hits("false");
    assert_eq!((host, device, flash), (1, 0, 2));
    // The device buffer alone: the same.
    for (cache_reads, want) in [("true", (2, 1)), ("false", (1, 2))] {
        let set = format!("buffer.cache_reads={cache_reads}");
        let cfg = config("tiny", &["buffer.device_pages=16", &set]);
        let s = crate::run_requests(&cfg, reqs(), None);
        assert_eq!(
            (s.buffer.read_hits, s.flash.by_cause["user"][0]),
            want,
            "cache_reads = {cache_reads}"
        );
    }
}
