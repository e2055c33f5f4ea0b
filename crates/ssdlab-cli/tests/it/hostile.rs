//! Reproducers of issue 18 (hostile input): each must end with exit 2 and an error naming the
//! field, never a panic, an abort or a silent wrong answer. Issue 18 lists more; each class
//! joins this file as it is fixed.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;

const SYNTH: &str = "requests=100,write_ratio=0.5,iat_us=100,footprint_gib=0.01,seed=1";

fn refused(sets: &[&str], field: &str) {
    let mut args = vec!["run", "-q", "--preset", "tiny"];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--synth", SYNTH]);
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(&args)
        .assert()
        .code(2)
        .stderr(contains(field));
}

#[test]
fn stripe_width_overflow_is_refused() {
    refused(
        &[
            "redundancy.scheme=\"ttflash\"",
            "redundancy.ttflash_k=4294967295",
        ],
        "redundancy.ttflash_k = 4294967295",
    );
}

#[test]
fn zero_logical_pages_is_refused() {
    refused(&["ftl.over_provisioning=0.9998"], "ftl.over_provisioning");
}

#[test]
fn unbounded_ispp_iterations_are_refused() {
    refused(
        &["suspend.policy=\"ips\"", "flash.ispp_iterations=2147483647"],
        "flash.ispp_iterations",
    );
    refused(&["flash.ispp_iterations=1000000"], "flash.ispp_iterations");
}

#[test]
fn unvalidated_duration_is_refused() {
    for v in ["-1", "-inf", "nan"] {
        refused(
            &[&format!("flash.erase_verify_us={v}")],
            "flash.erase_verify_us",
        );
    }
}

#[test]
fn synthetic_spec_values_are_validated() {
    for (spec, field) in [
        ("requests=-5", "requests"),
        ("requests=nan", "requests"),
        ("requests=2.7", "requests"),
        ("rate_iops=-5", "rate_iops"),
        ("iat_us=1e300", "iat_us"),
    ] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--preset", "tiny", "--synth"])
            .arg(format!("{spec},write_ratio=0.5,footprint_gib=0.01"))
            .assert()
            .code(2)
            .stderr(contains(field));
    }
}

#[test]
fn io_errors_print_their_cause_once() {
    let out = Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--preset", "tiny", "--trace", "/"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.matches("os error").count(), 1, "{text}");
    assert!(text.starts_with("error: /:"), "{text}");
}

#[test]
fn empty_trace_says_so() {
    let path = std::env::temp_dir().join(format!("ssdlab-empty-{}.csv", std::process::id()));
    std::fs::write(&path, "").unwrap();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--preset", "tiny", "--trace"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains("the trace is empty"));
    std::fs::remove_file(&path).ok();
}

#[test]
fn negative_power_loss_time_is_the_tools_own_error() {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--power-loss-at",
            "-1",
            "--synth",
            SYNTH,
        ])
        .assert()
        .code(2)
        .stderr(contains("--power-loss-at -1: must be a time >= 0"));
}

fn trace_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("ssdlab-hostile-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn arrival_times_beyond_simulated_time_are_refused_not_wrapped() {
    // MSR timestamps are 100 ns ticks: the second request comes 1.8e19 ns after the first.
    let msr = trace_file(
        "late.csv",
        "128166386783630075,hm,0,Write,0,4096,10\n\
         184467440737095516,hm,0,Read,0,4096,10\n",
    );
    let run = |extra: &[&str]| {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--preset", "tiny", "--trace"])
            .arg(&msr)
            .args(extra)
            .assert()
            .code(2)
            .stderr(contains("request 1 arrives at"))
            .stderr(contains("host.time_scale"));
    };
    run(&[]);
    // A sane trace scaled beyond the limit.
    let ok = trace_file(
        "scaled.csv",
        "128166386783630075,hm,0,Write,0,4096,10\n\
         128166386813630075,hm,0,Read,0,4096,10\n",
    );
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--set",
            "host.time_scale=1e9",
            "--trace",
        ])
        .arg(&ok)
        .assert()
        .code(2)
        .stderr(contains("request 1 arrives at"));
    std::fs::remove_file(msr).ok();
    std::fs::remove_file(ok).ok();
}

#[test]
fn rails_period_beyond_simulated_time_is_refused() {
    let mut cmd = Command::cargo_bin("ssdlab").unwrap();
    cmd.args([
        "run",
        "-q",
        "--preset",
        "tiny",
        "--set",
        "geometry.channels=2",
        "--scheme",
        "rails",
        "--set",
        "redundancy.rails_switch_us=9223372036854775807",
        "--synth",
        SYNTH,
    ]);
    cmd.assert()
        .code(2)
        .stderr(contains("redundancy.rails_switch_us"));
}

/// The summary without provenance and the trace's path.
fn summary_of(json: &std::path::Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    for k in ["sim", "tool", "trace"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn traces_from_stdin_give_the_same_requests_as_the_file() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    for name in ["msr_hm_0.csv", "financial1_2k.spc", "cloudphysics_3k.vscsi"] {
        let path = dir.join(name);
        let out = |tag: &str| {
            std::env::temp_dir().join(format!(
                "ssdlab-stdin-{}-{tag}-{name}.json",
                std::process::id()
            ))
        };
        let (from_file, from_stdin) = (out("file"), out("stdin"));
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--preset", "tiny", "--trace"])
            .arg(&path)
            .arg("--json")
            .arg(&from_file)
            .assert()
            .success();
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--preset", "tiny", "--trace", "-", "--json"])
            .arg(&from_stdin)
            .write_stdin(std::fs::read(&path).unwrap())
            .assert()
            .success();
        assert_eq!(summary_of(&from_file), summary_of(&from_stdin), "{name}");
        std::fs::remove_file(from_file).ok();
        std::fs::remove_file(from_stdin).ok();
    }
}

#[test]
fn a_request_ending_past_2_64_bytes_is_a_bad_offset_not_a_stall() {
    let t = trace_file(
        "huge-offset.csv",
        "128166386783630075,hm,0,Write,0,4096,10\n\
         128166386783630085,hm,0,Write,18446744073709551615,4096,10\n",
    );
    for cmd in [
        vec!["run", "-q", "--preset", "tiny", "--trace"],
        vec!["trace", "stats"],
    ] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(&cmd)
            .arg(&t)
            .assert()
            .code(2)
            .stderr(contains(":2: field `offset`"));
    }
    std::fs::remove_file(t).ok();
}

/// MSR lines of `n` writes of 1 GiB each, 10 us apart.
fn gib_writes(n: u64) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{},hm,0,Write,{},1073741824,100\n",
                128166372000000000 + i * 100,
                i << 30
            )
        })
        .collect()
}

#[test]
fn memory_admission_refuses_a_run_beyond_max_memory() {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run",
            "-q",
            "--preset",
            "hotr",
            "--synth",
            SYNTH,
            "--max-memory",
            "64M",
        ])
        .assert()
        .code(2)
        .stderr(contains("--max-memory").and(contains("mapping")));
    for bad in ["lots", "-1G", "0"] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--synth", SYNTH, "--max-memory", bad])
            .assert()
            .code(2)
            .stderr(contains("--max-memory"));
    }
    // The estimate is shown by part.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["config", "memory", "--preset", "hotr"])
        .assert()
        .success()
        .stdout(contains("pages in flight").and(contains("total")));
}

#[test]
fn huge_requests_are_issued_through_the_page_window() {
    // 8 GiB of writes in 8 requests on the 16 MiB tiny drive, 64 pages in flight at most:
    // every request completes (the window makes the later ones wait, and says so).
    let path = trace_file("gib.csv", &gib_writes(8));
    let json = path.with_extension("json");
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run",
            "--preset",
            "tiny",
            "--set",
            "host.max_pages_in_flight=64",
        ])
        .arg("--trace")
        .arg(&path)
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .stdout(contains("page window: 8 requests waited"));
    let s = summary_of(&json);
    assert_eq!(s["write"]["count"], 8);
    assert_eq!(s["window_waits"], 8);
}

#[test]
fn trace_stats_of_huge_requests_streams() {
    // 1,000 GiB footprint in 1,000 requests: counted as runs, not pages (this took 4 GB).
    let path = trace_file("gib-stats.csv", &gib_writes(1000));
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["trace", "stats"])
        .arg(&path)
        .assert()
        .success()
        .stdout(contains("1000.000 GiB"));
}

#[test]
fn a_truncated_gzip_trace_names_the_line() {
    use std::io::Write as _;
    let text: String = (0..20_000)
        .map(|i| {
            format!(
                "{},hm,0,Read,{},4096,100\n",
                128166372000000000u64 + i * 10_000,
                i * 4096
            )
        })
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let path =
        std::env::temp_dir().join(format!("ssdlab-hostile-{}-cut.csv.gz", std::process::id()));
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let out = Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--trace"])
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    // "<file>:<line>: cannot read this line: <cause>", the line past the last whole one.
    let line: u64 = err
        .split(".csv.gz:")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line number in {err}"));
    assert!(line > 1 && line < 20_000, "{err}");
    assert!(err.contains("cannot read this line"), "{err}");
}

#[test]
fn a_timestamp_before_the_first_record_counts_as_clamped() {
    let path = trace_file(
        "back.csv",
        "128166372000100000,hm,0,Read,0,4096,100\n128166372000000000,hm,0,Read,4096,4096,100\n128166372000200000,hm,0,Read,8192,4096,100\n",
    );
    let json = path.with_extension("json");
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--trace"])
        .arg(&path)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["trace"]["clamped_timestamps"], 1, "{}", v["trace"]);
}

#[test]
fn a_reader_that_stops_reading_ends_the_tool_quietly() {
    // `ssdlab trace stats … | head -0`: the read end closes before the tool writes.
    let trace = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/traces/msr_rsrch_1.csv");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args(["trace", "stats"])
        .arg(&trace)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}
