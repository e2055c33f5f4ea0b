//! One test per class of bad input: the error names file, line, field and expectation, or the
//! config key and constraint; nothing panics.

use ssdlab::config::ConfigBuilder;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::trace::{TraceOptions, TraceReader};
use std::io::Write;

fn trace_error(name: &str, text: impl AsRef<[u8]>, lenient: bool) -> Result<u64, String> {
    let dir = std::env::temp_dir().join(format!("ssdlab-bad-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_ref())
        .unwrap();
    let opts = TraceOptions {
        lenient,
        ..Default::default()
    };
    let cfg = ConfigBuilder::preset("tiny").unwrap().build().unwrap();
    let result = TraceReader::open(&path, opts)
        .map_err(|e| e.to_string())
        .and_then(|mut r| {
            let s = Simulation::new(&cfg, RunOptions::default(), &mut r)
                .map_err(|e| e.to_string())?
                .run();
            s.map(|s| s.requests).map_err(|e| e.to_string())
        });
    std::fs::remove_dir_all(&dir).ok();
    result
}

const MSR_OK: &str = "128166386783630075,hm,0,Write,3164164096,4096,2896\n";

#[test]
fn truncated_line() {
    let e = trace_error(
        "t.csv",
        format!("{MSR_OK}{MSR_OK}128166386783631602,hm,0,Read,3282006016\n"),
        false,
    )
    .unwrap_err();
    assert!(
        e.contains("t.csv:3") && e.contains("`Size`") && e.contains("line ends early"),
        "{e}"
    );
}

#[test]
fn bad_number() {
    let e = trace_error(
        "n.csv",
        format!("{MSR_OK}128166386783631602,hm,0,Read,32x2,4096,1\n"),
        false,
    )
    .unwrap_err();
    assert!(
        e.contains("n.csv:2") && e.contains("`Offset`") && e.contains("32x2"),
        "{e}"
    );
}

#[test]
fn unknown_opcode() {
    let e = trace_error(
        "o.csv",
        format!("{MSR_OK}128166386783631602,hm,0,Trim,0,4096,1\n"),
        false,
    )
    .unwrap_err();
    assert!(
        e.contains("o.csv:2") && e.contains("Read or Write") && e.contains("Trim"),
        "{e}"
    );
    // DiskSim's op is its flags in hex (7: a read); `g` is no hex number.
    let e = trace_error("o.disksim", "0 0 8 8 0\n10 0 8 8 g\n", false).unwrap_err();
    assert!(
        e.contains("o.disksim:2") && e.contains("`op`") && e.contains("flags in hex"),
        "{e}"
    );
}

#[test]
fn negative_size() {
    let e = trace_error(
        "s.spc",
        "0,303567,3584,w,0.0\n0,303574,-3584,w,0.026\n",
        false,
    )
    .unwrap_err();
    assert!(
        e.contains("s.spc:2") && e.contains("`Size`") && e.contains("-3584"),
        "{e}"
    );
}

#[test]
fn lenient_skips_and_counts() {
    let n = trace_error("l.csv", format!("{MSR_OK}garbage,line\n{MSR_OK}"), true).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn unknown_format() {
    let e = trace_error("u.txt", "hello world\nthis is not a trace\n", false).unwrap_err();
    assert!(e.contains("cannot detect the trace format"), "{e}");
}

#[test]
fn missing_file() {
    let e = TraceReader::open(
        std::path::Path::new("/nonexistent/trace.csv"),
        TraceOptions::default(),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("/nonexistent/trace.csv"));
}

#[test]
fn out_of_range_address_with_error_policy() {
    let line = "128166386783630075,hm,0,Write,999999999999,4096,2896\n";
    let dir = std::env::temp_dir().join(format!("ssdlab-oor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.csv");
    std::fs::write(&path, line).unwrap();
    let cfg = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("ftl.out_of_range=error")
        .unwrap()
        .build()
        .unwrap();
    let mut r = TraceReader::open(&path, TraceOptions::default()).unwrap();
    let e = Simulation::new(&cfg, RunOptions::default(), &mut r)
        .unwrap()
        .run()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("beyond the logical capacity") && e.contains("out_of_range"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_config_key() {
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("flash.read_ms=3")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("read_ms"), "{e}");
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .overlay_toml("[ftl]\nvictim = \"greedy\"\n", "x.toml")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("victim"), "{e}");
}

#[test]
fn impossible_geometry() {
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("geometry.pages_per_block=0")
        .unwrap()
        .set("geometry.page_size_bytes=1000")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("geometry.pages_per_block = 0") && e.contains("multiple of 512"),
        "{e}"
    );
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("geometry.blocks_per_plane=2")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("ftl.gc_threshold"), "{e}");
}

#[test]
fn wrong_type_names_the_key() {
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("geometry.channels=many")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("channels"), "{e}");
}

#[test]
fn overlong_line_is_refused_without_buffering_the_file() {
    let long = "9".repeat(200_000);
    let e = trace_error("long.csv", format!("{MSR_OK}{long}\n"), false).unwrap_err();
    assert!(
        e.contains("long.csv:2") && e.contains("at most 65536 bytes"),
        "{e}"
    );
}

#[test]
fn absurd_request_size_is_refused() {
    let e = trace_error(
        "big.csv",
        "128166386783630075,hm,0,Write,0,99999999999999,1\n",
        false,
    )
    .unwrap_err();
    assert!(
        e.contains("big.csv:1") && e.contains("`size`") && e.contains("at most 1073741824"),
        "{e}"
    );
}

/// One binary vSCSI v1 record (32 bytes, little-endian).
fn vscsi_record(cmd: u16, version: u8, lbn: u64, ts_us: u64) -> Vec<u8> {
    let mut r = Vec::with_capacity(32);
    r.extend_from_slice(&1u32.to_le_bytes());
    r.extend_from_slice(&4096u32.to_le_bytes());
    r.extend_from_slice(&1u32.to_le_bytes());
    r.extend_from_slice(&cmd.to_le_bytes());
    r.extend_from_slice(&(u16::from(version) << 8).to_le_bytes());
    r.extend_from_slice(&lbn.to_le_bytes());
    r.extend_from_slice(&ts_us.to_le_bytes());
    r
}

#[test]
fn truncated_binary_record() {
    let mut bytes = vscsi_record(0x2a, 1, 8, 10);
    bytes.extend(vscsi_record(0x28, 1, 8, 20));
    bytes.extend(&vscsi_record(0x28, 1, 16, 30)[..20]);
    let e = trace_error("t.vscsi", &bytes, false).unwrap_err();
    assert!(
        e.contains("t.vscsi:3") && e.contains("whole 32-byte record") && e.contains("20 trailing"),
        "{e}"
    );
}

#[test]
fn unsupported_binary_version() {
    let mut bytes = vscsi_record(0x2a, 1, 8, 10);
    bytes.extend(vscsi_record(0x28, 2, 8, 20));
    let e = trace_error("v2.vscsi", &bytes, false).unwrap_err();
    assert!(
        e.contains("v2.vscsi:2") && e.contains("`ver`") && e.contains("version 1"),
        "{e}"
    );
}

#[test]
fn impossible_dedup_configs_name_the_keys() {
    let err = |sets: &[&str]| {
        let mut b = ConfigBuilder::preset("deduphr").unwrap();
        let deduphr = [
            "dedup.enabled=true",
            "staging.design=extra-chip",
            "staging.policy=deduphr",
        ];
        for s in deduphr.iter().chain(sets) {
            b = b.set(s).unwrap();
        }
        b.build().unwrap_err().to_string()
    };
    let e = err(&["dedup.enabled=false"]);
    assert!(
        e.contains("staging.policy = \"deduphr\"") && e.contains("dedup.enabled"),
        "{e}"
    );
    let e = err(&["staging.design=none"]);
    assert!(e.contains("needs a staging space"), "{e}");
    let e = err(&["staging.refcount_threshold=1"]);
    assert!(e.contains("staging.refcount_threshold = 1"), "{e}");
    let e = err(&["buffer.device_pages=64"]);
    assert!(
        e.contains("dedup.enabled") && e.contains("buffer.device_pages = 64"),
        "{e}"
    );
}

#[test]
fn bad_synthetic_dedup_parameters_are_named() {
    use ssdlab::workload::synth::SynthSpec;
    for (spec, key) in [
        ("dedup=1.5", "dedup = 1.5"),
        ("dup_zipf=-1", "dup_zipf"),
        ("dup_pool=0", "dup_pool"),
    ] {
        let e = spec.parse::<SynthSpec>().unwrap_err();
        assert!(e.contains(key), "{spec}: {e}");
    }
}

#[test]
fn control_characters_in_a_bad_line_are_escaped_in_the_error() {
    let bad = "128166386783631602,hm,0,Re\0ad\x1b[31m,0,4096,1\n";
    let e = trace_error("nul.csv", format!("{MSR_OK}{bad}"), false).unwrap_err();
    assert!(!e.contains('\0') && !e.contains('\x1b'), "{e:?}");
    assert!(e.contains(":2:") && e.contains("Re?ad?[31m"), "{e}");
    // An overlong line is quoted by its first bytes, escaped the same way.
    let long = format!("\0\x1b{}\n", "x".repeat(2 << 20));
    let e = trace_error("long-ctl.csv", format!("{MSR_OK}{long}"), false).unwrap_err();
    assert!(!e.contains('\0') && !e.contains('\x1b'), "{e:?}");
}

#[test]
fn synthetic_weights_times_and_sizes_beyond_what_a_run_holds_are_named() {
    use ssdlab::workload::synth::SynthSpec;
    for (spec, key) in [
        // Weights whose sum overflows.
        ("size_kib=4:1e308|8:1e308", "weights add up"),
        // Every time-valued key, not only iat_us.
        ("requests=5,batch=5,batch_us=1e300", "batch_us = 1e300"),
        (
            "arrivals=onoff,on_ms=1,off_ms=1e308,on_share=1",
            "on_ms + off_ms",
        ),
        ("arrivals=onoff,on_ms=1e-9,off_ms=1000,on_share=1", "1 ns"),
        ("arrivals=bmodel,b=0.7,span_s=1e300", "span_s = 1e300"),
        (
            "write_ratio=0.5,read_arrivals=bmodel,read_b=0.7,read_span_s=1e300",
            "read_span_s",
        ),
        // A b-model window shorter than the mean gap would change the rate.
        (
            "requests=1000,iat_us=100,arrivals=bmodel,b=0.7,span_s=0.00001",
            "change the rate",
        ),
        // One size limit for traces and synthetic workloads.
        ("size_kib=1073741824", "1048576 KiB"),
        (
            "write_ratio=0.5,footprint_gib=8,write_size_kib=4194304",
            "write_size_kib",
        ),
    ] {
        let e = spec.parse::<SynthSpec>().unwrap_err();
        assert!(e.contains(key), "{spec}: {e}");
    }
    // The limits themselves are accepted.
    for spec in [
        "size_kib=1048576",
        "requests=1000,iat_us=100,arrivals=bmodel,b=0.7,span_s=0.1",
    ] {
        spec.parse::<SynthSpec>().unwrap();
    }
}

#[test]
fn more_fitting_rounds_never_fail_nor_run_away() {
    use ssdlab::workload::fit::{fit, FitOptions};
    // A pure-write trace: its stand-in must write only.
    let path = crate::trace_path("msr_hm_0.csv");
    let writes: Vec<_> = TraceReader::open(&path, TraceOptions::default())
        .unwrap()
        .filter(|r| {
            r.as_ref()
                .is_ok_and(|r| r.op == ssdlab::workload::IoOp::Write)
        })
        .take(500)
        .collect();
    let target = ssdlab::workload::profile::profile(writes.into_iter()).unwrap();
    // The domain a correction may give: 64 pages per page access of the target.
    let cap_gib = 64.0 * target.write_popularity.accesses as f64 / 262_144.0;
    for rounds in [0, 6, 40, 200] {
        let f = fit(
            &target,
            &FitOptions {
                rounds,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(f.synth.write_ratio, 1.0, "rounds {rounds}: {}", f.spec);
        // The writes' hot set is capped; the address range holds both directions' hot sets
        // (twice the larger), so it is bounded by twice the cap.
        let hot = f.synth.write.footprint_gib.unwrap_or(f.synth.footprint_gib);
        assert!(hot <= cap_gib * 1.01, "rounds {rounds}: {}", f.spec);
        assert!(
            f.synth.footprint_gib <= 2.0 * cap_gib * 1.01,
            "rounds {rounds}: {}",
            f.spec
        );
    }
}
