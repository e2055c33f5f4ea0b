//! Reliability III (issue 49): inputs silently ignored or altered are refused or noted.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use std::path::PathBuf;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn trace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0.csv")
}

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
