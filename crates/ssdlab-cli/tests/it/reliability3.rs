//! Reliability III (issue 49): inputs silently ignored or altered are refused or noted.

use super::reliability::{ssdlab, trace};
use predicates::prelude::*;
use predicates::str::contains;

#[test]
fn trace_options_are_refused_with_a_synthetic_workload() {
    for args in [["--limit", "10"], ["--limit", "0"], ["--device", "1"]] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--synth", "requests=100"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(format!("{} reads a trace", args[0])));
        ssdlab()
            .args(["trace", "stats", "--synth", "requests=100"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains("has no effect with --synth"));
    }
}

#[test]
fn a_target_idle_outside_a_percentage_is_refused_before_simulating() {
    for t in ["nan", "1e308", "-1", "100"] {
        ssdlab()
            .args([
                "trace",
                "stats",
                "--preset",
                "tiny",
                &format!("--target-idle={t}"),
            ])
            .arg(trace())
            .assert()
            .code(2)
            .stderr(contains("--target-idle").and(contains("[0, 100)")));
    }
}

#[test]
fn whole_numbers_past_2_53_are_read_exactly_or_refused() {
    let dir = std::env::temp_dir().join(format!("ssdlab-r3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = |seed: &str| {
        let p = dir.join(format!("{seed}.csv"));
        ssdlab()
            .args([
                "synth",
                "--spec",
                &format!("requests=20,seed={seed}"),
                "--out",
            ])
            .arg(&p)
            .assert()
            .success();
        std::fs::read(p).unwrap()
    };
    assert_ne!(out("9007199254740993"), out("9007199254740992"));
    ssdlab()
        .args(["synth", "--spec", "requests=20,seed=1e17", "--out"])
        .arg(dir.join("x.csv"))
        .assert()
        .code(2)
        .stderr(contains("seed = 1e17"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn keys_without_effect_are_noted() {
    for (spec, says) in [
        (
            "requests=50,write_ratio=0,write_zipf=1",
            "write_zipf has no effect",
        ),
        ("requests=50,write_ratio=1,reread=0.2", "reread has no effect"),
        (
            "requests=50,write_ratio=0.5,arrivals=onoff,on_ms=1,off_ms=2,on_share=0.9,read_arrivals=exp,write_arrivals=exp",
            "arrivals (and its",
        ),
    ] {
        ssdlab()
            .args(["trace", "stats", "--synth", spec])
            .assert()
            .success()
            .stderr(contains(says));
    }
    for (set, says) in [
        ("sched.mapping_reads_first=true", "no mapping cache"),
        ("precondition.overwrite=0.5", "steady-state"),
    ] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--limit", "50"])
            .args(["--set", "precondition.pattern=steady-state", "--set", set])
            .arg("--trace")
            .arg(trace())
            .assert()
            .success()
            .stderr(
                contains(format!("warning: {}", set.split('=').next().unwrap()))
                    .and(contains(says)),
            );
    }
}

#[test]
fn page_statistics_past_the_cap_say_not_measured_instead_of_zero() {
    ssdlab()
        .args([
            "trace",
            "stats",
            "--synth",
            "requests=40,size_kib=1048576,footprint_gib=1000,write_ratio=0.5",
        ])
        .assert()
        .success()
        .stdout(contains("not measured").and(contains("read  pages").not()));
}

/// An experiment calibrating `host.time_scale` on variant `a`, with `workload_set` on its
/// workload, `b_set` on variant `b` and `range`.
fn calibrated(dir: &std::path::Path, workload_set: &str, b_set: &str, range: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("experiment.toml"),
        format!(
            r#"
name = "r3"
title = "Reliability III"
preset = "tiny"
baseline = "a"

[[workload]]
name = "w"
synth = "requests=300,write_ratio=0.5,iat_us=200,footprint_gib=0.01,seed=2"
set = [{workload_set}]

[[variant]]
name = "a"
set = ["sched.policy=fifo"]

[[variant]]
name = "b"
set = ["sched.policy=rps", {b_set}]

[calibrate]
variant = "a"
key = "host.time_scale"
range = {range}
metric = "reads_blocked_pct"
target = 2
tolerance = 1
max_runs = 6
"#
        ),
    )
    .unwrap();
}

/// `ssdlab experiment plan dir` fails with exit 2 and a message containing `says`.
fn plan_refused(dir: &std::path::Path, says: &str) {
    ssdlab()
        .args(["experiment", "plan"])
        .arg(dir)
        .arg("--out")
        .arg(dir.join("jobs"))
        .assert()
        .code(2)
        .stderr(contains(says));
}

#[test]
fn the_calibrated_key_is_refused_in_any_spelling_at_any_level() {
    let root = std::env::temp_dir().join(format!("ssdlab-r3-cal-{}", std::process::id()));
    for (i, (w, b, says)) in [
        ("", r#""host={time_scale=0.5}""#, "variant `b` sets it too"),
        (
            r#""host.time_scale=0.5""#,
            r#""sched.policy=rps""#,
            "workload `w` sets it too",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = root.join(i.to_string());
        calibrated(&dir, w, b, "[0.01, 10]");
        plan_refused(&dir, says);
    }
    let dir = root.join("range");
    calibrated(&dir, "", r#""sched.policy=rps""#, "[0.01, 10, 100]");
    plan_refused(&dir, "expected two numbers [low, high], found 3");
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_hand_edited_calibration_is_searched_again_and_the_report_reads_the_result() {
    let dir = std::env::temp_dir().join(format!("ssdlab-r3-seal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    calibrated(&dir, "", r#""sched.policy=rps""#, "[0.01, 10]");
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success();
    let path = dir.join("calibration.json");
    let sealed = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&sealed).unwrap();
    let e = v["entries"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap();
    assert!(!e["content_hash"].as_str().unwrap().is_empty());
    // Edited: another value, the claim kept.
    e["value"] = serde_json::json!(0.01);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    plan_refused(&dir, "missing or stale");
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        sealed,
        "searched again, same result"
    );
    // The report's "reached" is the stored baseline result's metric.
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success();
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results/w__a.json")).unwrap())
            .unwrap();
    let blocked = a["summary"]["reads_blocked_pct"].as_f64().unwrap();
    let row = report
        .lines()
        .find(|l| l.contains("host.time_scale"))
        .unwrap();
    assert!(
        row.contains(&format!("{blocked:.2}")) || row.contains(&format!("{blocked:.1}")),
        "{row} vs {blocked}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_killed_by_sigterm_leaves_no_temporary_file() {
    let dir = std::env::temp_dir().join(format!("ssdlab-r3-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let temporaries = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count()
    };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--synth",
            "requests=50000000,iat_us=1",
        ])
        .arg("--requests-out")
        .arg(dir.join("requests.csv"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The per-request records are written as the run goes: wait for their temporary file.
    let start = std::time::Instant::now();
    while temporaries() == 0 && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(temporaries(), 1, "the run did not start writing");
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(temporaries(), 0);
    assert!(!dir.join("requests.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}
