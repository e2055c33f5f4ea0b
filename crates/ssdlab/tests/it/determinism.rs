//! Same config + workload + seed ⇒ identical JSON (the wall-clock `sim` section aside).

use crate::{config, run_synth, run_trace};

#[test]
fn two_runs_are_byte_identical() {
    let cfg = config(
        "tiny",
        &[
            "precondition.fill=0.8",
            "precondition.pattern=random",
            "ftl.gc_victim=random",
            "ftl.allocation=dynamic",
        ],
    );
    let spec = "requests=20000,write_ratio=0.6,size_kib=4|8|16,iat_us=150,footprint_gib=0.012,zipf=0.8,seed=3";
    let a = run_synth(&cfg, spec, 42, true).deterministic_json();
    let b = run_synth(&cfg, spec, 42, true).deterministic_json();
    assert!(
        a == b,
        "runs differ; reproduce with: ssdlab run --preset tiny --seed 42 --synth '{spec}'"
    );
    let c = run_synth(&cfg, spec, 43, true).deterministic_json();
    assert_ne!(
        a, c,
        "the seed must matter for random victims and random preconditioning"
    );
}

#[test]
fn trace_runs_are_byte_identical() {
    let cfg = config(
        "hotr",
        &[
            "geometry.blocks_per_plane=128",
            "precondition.fill=0.7",
            "precondition.pattern=random",
        ],
    );
    let a = run_trace(&cfg, "msr_hm_0.csv", 3000, 7)
        .unwrap()
        .deterministic_json();
    let b = run_trace(&cfg, "msr_hm_0.csv", 3000, 7)
        .unwrap()
        .deterministic_json();
    assert_eq!(a, b);
}

#[test]
fn dedup_and_shadow_runs_are_byte_identical() {
    // DedupHR over hash maps of fingerprints and copies, and ShadowGC with both buffers: the
    // hash maps must never decide an order.
    let dedup = config(
        "deduphr",
        &[
            "geometry.blocks_per_plane=64",
            "precondition.fill=0.9",
            "precondition.pattern=random",
        ],
    );
    let spec = "requests=8000,write_ratio=0.7,size_kib=4|8|16,iat_us=300,footprint_gib=0.2,zipf=0.9,dedup=0.5,dup_reads=0.5,seed=5";
    let a = run_synth(&dedup, spec, 9, true).deterministic_json();
    let b = run_synth(&dedup, spec, 9, true).deterministic_json();
    assert!(a == b, "dedup runs differ");
    let shadow = config(
        "tiny",
        &[
            "geometry.blocks_per_plane=128",
            "precondition.fill=0.9",
            "precondition.pattern=random",
            "buffer.host_pages=256",
            "buffer.device_pages=128",
            "shadow.gc=sgc",
        ],
    );
    let spec =
        "requests=8000,write_ratio=0.8,size_kib=4|8,iat_us=1500,footprint_gib=0.02,zipf=0.9,seed=1";
    let a = run_synth(&shadow, spec, 9, true).deterministic_json();
    let b = run_synth(&shadow, spec, 9, true).deterministic_json();
    assert!(a == b, "shadow runs differ");
}
