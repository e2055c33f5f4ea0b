//! `ssdlab trace extend`, `run --extend`, `--skip` and an experiment's `extend` / `skip`
//! (issue 50): the bootstrap keeps the trace's count and mix, its statistics round-trip, and
//! bad specs are refused naming the key.

use super::reliability::{ssdlab, trace};
use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-extend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn stats(path: &std::path::Path) -> Value {
    let out = ssdlab()
        .args(["trace", "stats", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Extended to its own length and to three times it, the trace's first-order statistics come
/// back on average over four seeds (count exactly; read share, mean size, duration per request
/// and re-reads within bounds: one seed's draw of ~150 blocks moves the mean size by up to
/// a fifth, hm_0's sizes being heavy-tailed and clustered).
#[test]
fn an_extension_round_trips_the_traces_statistics() {
    let src = stats(&trace());
    let n = src["requests"].as_u64().unwrap();
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let rr = |v: &Value| v["profile"]["reuse"]["reread_pct"].as_f64().unwrap();
    for requests in [n, 3 * n] {
        let mut mean = [0.0; 4];
        for seed in 1..=4 {
            let out = tmp(&format!("ext-{requests}-{seed}.csv"));
            ssdlab()
                .args(["trace", "extend"])
                .arg(trace())
                .args([
                    "--requests",
                    &requests.to_string(),
                    "--seed",
                    &seed.to_string(),
                ])
                .arg("--out")
                .arg(&out)
                .assert()
                .success()
                .stderr(contains(format!("wrote {requests} requests")).and(contains("of 7016")));
            let s = stats(&out);
            assert_eq!(s["requests"].as_u64(), Some(requests));
            for (m, v) in mean.iter_mut().zip([
                f(&s, "read_pct"),
                f(&s, "mean_size_bytes"),
                f(&s, "duration_s") / requests as f64,
                rr(&s),
            ]) {
                *m += v / 4.0;
            }
        }
        let want = [
            f(&src, "read_pct"),
            f(&src, "mean_size_bytes"),
            f(&src, "duration_s") / n as f64,
            rr(&src),
        ];
        let ratio: Vec<f64> = mean.iter().zip(want).map(|(m, w)| m / w).collect();
        assert!(
            (mean[0] - want[0]).abs() < 3.0,
            "{requests}: read % {mean:?} vs {want:?}"
        );
        assert!(
            (0.9..1.1).contains(&ratio[1]),
            "{requests}: mean size {ratio:?}"
        );
        assert!(
            (0.75..1.33).contains(&ratio[2]),
            "{requests}: duration {ratio:?}"
        );
        assert!(
            (0.85..1.15).contains(&ratio[3]),
            "{requests}: re-reads {ratio:?}"
        );
    }
}

/// `run --extend` replays the bootstrap without a file: as many requests as asked, checked
/// by --verify; `--skip` with `--limit` replays the second half.
#[test]
fn run_replays_an_extension_and_a_second_half() {
    let json = tmp("run.json");
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--verify", "--trace"])
        .arg(trace())
        .args(["--extend", "requests=9000,seed=2", "--json"])
        .arg(&json)
        .assert()
        .success();
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(s["requests"].as_u64(), Some(9000));
    assert_eq!(s["verified"].as_bool(), Some(true));
    ssdlab()
        .args(["run", "--preset", "tiny", "--trace"])
        .arg(trace())
        .args(["--skip", "3508", "--limit", "3508", "--json"])
        .arg(&json)
        .assert()
        .success()
        .stdout(contains("3508 by --skip"));
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(s["requests"].as_u64(), Some(3508));
    assert_eq!(s["trace"]["skipped_head"].as_u64(), Some(3508));
}

/// Bad extension specs and flags: each refused, naming what is wrong.
#[test]
fn bad_extensions_are_refused_with_the_key() {
    for (args, says) in [
        (vec!["--extend", "requests=0"], "requests = 0"),
        (
            vec!["--extend", "requests=10,blocks=3"],
            "unknown key `blocks`",
        ),
        (
            vec!["--extend", "requests=10,block=window"],
            "`window_ms` is required",
        ),
    ] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--trace"])
            .arg(trace())
            .args(args)
            .assert()
            .failure()
            .stderr(contains(says));
    }
    // --extend and --skip read a trace: refused with --synth.
    for (flag, value, says) in [
        ("--extend", "requests=5", "--trace"),
        ("--skip", "5", "--skip reads a trace"),
    ] {
        ssdlab()
            .args([
                "run",
                "--preset",
                "tiny",
                "--synth",
                "requests=10",
                flag,
                value,
            ])
            .assert()
            .failure()
            .stderr(contains(says));
    }
    ssdlab()
        .args(["trace", "extend"])
        .arg(trace())
        .args([
            "--requests",
            "10",
            "--block",
            "window",
            "--window-ms",
            "0.000001",
            "--out",
        ])
        .arg(tmp("never.csv"))
        .assert()
        .failure()
        .stderr(contains("windows, more than"));
    assert!(!tmp("never.csv").exists());
}

/// An experiment's workload may be an extended trace (each seed draws its own blocks) or a
/// part of one (`skip`, `limit`); `extend` without a trace is refused at load.
#[test]
fn an_experiment_runs_extended_and_partial_traces() {
    let dir = tmp("exp");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        r#"
name = "ext"
title = "Extended"
preset = "tiny"
seeds = 2

[[workload]]
name = "long"
trace = "{t}"
extend = "requests=8000,seed=5"

[[workload]]
name = "second-half"
trace = "{t}"
skip = 3508
limit = 3508

[[variant]]
name = "FIFO"
set = ["sched.policy=fifo"]
"#,
        t = trace().display()
    );
    std::fs::write(dir.join("experiment.toml"), &toml).unwrap();
    ssdlab()
        .args(["experiment", "run", "--jobs", "2"])
        .arg(&dir)
        .assert()
        .success();
    let mut rows: Vec<Value> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|e| serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap())
        .collect();
    rows.sort_by_key(|r| r["point"]["id"].as_str().unwrap().to_string());
    let pick = |w: &str| -> Vec<&Value> {
        rows.iter()
            .filter(|r| r["point"]["workload"] == w)
            .collect()
    };
    let long = pick("long");
    assert_eq!(long.len(), 2);
    assert!(long
        .iter()
        .all(|r| r["summary"]["requests"].as_u64() == Some(8000)));
    // The second seed draws other blocks: another mean read latency.
    assert_ne!(
        long[0]["summary"]["read"]["mean_us"],
        long[1]["summary"]["read"]["mean_us"]
    );
    assert!(long[1]["command"]
        .as_str()
        .unwrap()
        .contains("--extend 'requests=8000,seed=6"));
    let half = pick("second-half");
    assert!(half
        .iter()
        .all(|r| r["summary"]["requests"].as_u64() == Some(3508)));
    let bad = toml.replace("trace = \"", "synth = \"requests=10\"\n#");
    std::fs::write(dir.join("experiment.toml"), bad).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .failure()
        .stderr(contains("`extend` lengthens a trace"));
}
