//! Reliability II (issue 33): one test per defect class of the hostile campaign — paths
//! checked, outputs whole or untouched, bounded grids and inputs, no silent wrong answers.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use std::path::{Path, PathBuf};

pub(crate) fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-rel-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn trace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0.csv")
}

/// An experiment of one synthetic workload, two variants and `extra` TOML appended.
fn experiment(dir: &Path, variants: [&str; 2], extra: &str) {
    let text = format!(
        r#"
name = "rel"
title = "Reliability"
preset = "tiny"

[[workload]]
name = "w"
synth = "requests=200,write_ratio=0.5,iat_us=200,footprint_gib=0.01,seed=2"

[[variant]]
name = "{}"
set = ["sched.policy=fifo"]

[[variant]]
name = "{}"
set = ["sched.policy=rps"]
{extra}
"#,
        variants[0], variants[1]
    );
    std::fs::write(dir.join("experiment.toml"), text).unwrap();
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push(e.strip_prefix(dir).unwrap().display().to_string());
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}

#[test]
fn n1_a_figure_id_cannot_leave_the_experiment_directory() {
    let root = fresh_dir("n1");
    let dir = root.join("exp");
    std::fs::create_dir_all(&dir).unwrap();
    for id in ["../../ESCAPED", "/tmp/ESCAPED-abs", "sub/x"] {
        let fig = format!(
            "[[figure]]\nid = \"{id}\"\ntitle = \"t\"\nkind = \"bars\"\nmetric = \"read.mean_us\"\n"
        );
        experiment(&dir, ["a", "b"], &fig);
        ssdlab()
            .args(["experiment", "report"])
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(contains("plain file name").and(contains(id)));
    }
    assert_eq!(files(&root), ["exp/experiment.toml"]);
}

#[test]
fn n2_a_huge_grid_is_refused_with_its_count() {
    let dir = fresh_dir("n2");
    let mut grid = String::from("[grid]\n");
    for k in 0..10 {
        grid.push_str(&format!("\"k{k}\" = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"));
    }
    experiment(&dir, ["a", "b"], &grid);
    for cmd in ["run", "report", "plan"] {
        let mut c = ssdlab();
        c.args(["experiment", cmd]).arg(&dir);
        if cmd == "plan" {
            c.arg("--out").arg(dir.join("jobs"));
        }
        c.timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(contains("20000000000 points").and(contains("more than the 100000")));
    }
}

#[test]
fn n7_colliding_point_ids_are_refused_at_load() {
    let dir = fresh_dir("n7");
    experiment(&dir, ["a/b", "a_b"], "");
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("same result file").and(contains("results/w__a_b.json")));
}

#[test]
fn n5_a_failed_run_leaves_every_output_as_it_was() {
    let dir = fresh_dir("n5");
    let (json, csv, rows) = (dir.join("out.json"), dir.join("req.csv"), dir.join("s.csv"));
    // Nothing existed: nothing is created.
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace", "/nonexistent"])
        .arg("--json")
        .arg(&json)
        .arg("--requests-out")
        .arg(&csv)
        .assert()
        .code(2);
    assert!(files(&dir).is_empty(), "{:?}", files(&dir));
    // Old files stay whole.
    std::fs::write(&json, "{\"old\": 1}\n").unwrap();
    std::fs::write(&csv, "old\n").unwrap();
    std::fs::write(&rows, "a,b\n1,2\n").unwrap();
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace", "/nonexistent"])
        .arg("--json")
        .arg(&json)
        .arg("--requests-out")
        .arg(&csv)
        .arg("--summary-csv")
        .arg(&rows)
        .assert()
        .code(2);
    // A summary CSV whose header lacks this run's columns refuses the row and keeps its own.
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--limit", "100", "--trace"])
        .arg(trace())
        .arg("--summary-csv")
        .arg(&rows)
        .assert()
        .code(2)
        .stderr(contains("lacks"));
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "{\"old\": 1}\n");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "old\n");
    assert_eq!(std::fs::read_to_string(&rows).unwrap(), "a,b\n1,2\n");
    assert_eq!(files(&dir), ["out.json", "req.csv", "s.csv"]);
}

#[test]
fn n5_a_killed_run_leaves_the_previous_outputs_whole() {
    let dir = fresh_dir("n5kill");
    let (json, csv) = (dir.join("out.json"), dir.join("req.csv"));
    std::fs::write(&json, "{\"old\": 1}\n").unwrap();
    std::fs::write(&csv, "old\n").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--synth",
            "requests=50000000,write_ratio=0.5,iat_us=5,footprint_gib=0.01",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--requests-out")
        .arg(&csv)
        .spawn()
        .unwrap();
    // Long enough for the request CSV to have been written to (the run takes minutes).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "{\"old\": 1}\n");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "old\n");
}

#[test]
fn n6_an_output_equal_to_the_input_or_another_output_is_refused() {
    let dir = fresh_dir("n6");
    let t = dir.join("t.csv");
    std::fs::copy(trace(), &t).unwrap();
    let before = std::fs::read(&t).unwrap();
    for (flag, other) in [("--requests-out", &t), ("--json", &t)] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--trace"])
            .arg(&t)
            .arg(flag)
            .arg(dir.join(".").join("t.csv"))
            .assert()
            .code(2)
            .stderr(contains(format!("--trace and {flag} name the same file")));
        assert_eq!(std::fs::read(other).unwrap(), before);
    }
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace"])
        .arg(&t)
        .arg("--json")
        .arg(dir.join("X"))
        .arg("--requests-out")
        .arg(dir.join("X"))
        .assert()
        .code(2)
        .stderr(contains("--json and --requests-out"));
    ssdlab()
        .args(["trace", "fit"])
        .arg(&t)
        .arg("--out")
        .arg(&t)
        .assert()
        .code(2)
        .stderr(contains("TRACE and --out"));
    assert_eq!(std::fs::read(&t).unwrap(), before);
}

#[test]
fn n3_a_summary_csv_that_is_not_a_file_is_refused_before_the_run() {
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace"])
        .arg(trace())
        .args(["--summary-csv", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(contains("not a regular file"));
}

#[test]
fn n17_json_to_a_pipe_is_written_in_place() {
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--limit", "200", "--trace"])
        .arg(trace())
        .args(["--json", "/dev/stdout"])
        .assert()
        .success()
        .stdout(contains("\"config_hash\""));
}

#[test]
fn n8_latencies_are_not_clipped() {
    let dir = fresh_dir("n8");
    let json = dir.join("s.json");
    ssdlab()
        .args(["run", "-q", "--preset", "tiny"])
        .args([
            "--set",
            "flash.program_us=1e9",
            "--set",
            "flash.erase_us=1e9",
        ])
        .args([
            "--synth",
            "requests=3000,write_ratio=1,iat_us=1,footprint_gib=0.01",
        ])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let w = &v["write"];
    let (mean, p99, max) = (
        w["mean_us"].as_f64().unwrap(),
        w["p99_us"].as_f64().unwrap(),
        w["max_us"].as_f64().unwrap(),
    );
    assert!(max > 1.125e12 && mean < max && p99 <= max, "{w}");
}

#[test]
fn n13_duplicate_or_conflicting_synth_keys_are_refused() {
    for (spec, says) in [
        ("write_ratio=0.5,write_ratio=1", "given twice"),
        ("iat_us=10,rate_iops=5", "one of iat_us and rate_iops"),
    ] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--synth", spec])
            .assert()
            .code(2)
            .stderr(contains(says));
    }
}

#[test]
fn n14_a_run_with_no_request_left_is_refused_with_the_reason() {
    let dir = fresh_dir("n14");
    let zero = dir.join("zero.csv");
    std::fs::write(
        &zero,
        "128166372000000000,h,0,Read,0,0,0\n128166372000010000,h,0,Write,4096,0,0\n",
    )
    .unwrap();
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace"])
        .arg(&zero)
        .assert()
        .code(2)
        .stderr(contains("no request to replay").and(contains("2 of size 0")));
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--device", "99", "--trace"])
        .arg(trace())
        .assert()
        .code(2)
        .stderr(contains("7016 of other devices than --device"));
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--synth", "requests=0"])
        .assert()
        .code(2)
        .stderr(contains("at least one request"));
}

#[test]
fn n15_a_figure_metric_no_result_has_is_refused() {
    let dir = fresh_dir("n15");
    let fig =
        "[[figure]]\nid = \"f\"\ntitle = \"t\"\nkind = \"bars\"\nmetric = \"read.mean_uss\"\n";
    experiment(&dir, ["a", "b"], fig);
    ssdlab()
        .args(["experiment", "run", "--jobs", "1"])
        .arg(&dir)
        .assert()
        .success();
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains(
            "metric `read.mean_uss` is a number in none of the 2 results",
        ));
    let cdf = "[[figure]]\nid = \"c\"\ntitle = \"t\"\nkind = \"cdf\"\nmetric = \"reads\"\n";
    experiment(&dir, ["a", "b"], cdf);
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("takes `all`, `read` or `write`"));
}

#[test]
fn n16_keys_of_features_that_are_off_are_warned_about() {
    for (set, says) in [
        ("redundancy.ttflash_k=7", "TTFlash is off"),
        ("suspend.max_suspensions_per_op=1", "suspension is off"),
        ("host.queue_depth=1", "host.mode = \"open\""),
        ("host.link_mb_s=0", "host.link = \"none\""),
    ] {
        ssdlab()
            .args([
                "run", "-q", "--preset", "tiny", "--limit", "100", "--set", set,
            ])
            .arg("--trace")
            .arg(trace())
            .assert()
            .success()
            .stderr(
                contains(format!("warning: {}", set.split('=').next().unwrap()))
                    .and(contains(says)),
            );
    }
    ssdlab()
        .args([
            "run", "-q", "--preset", "tiny", "--limit", "100", "--scheme", "deduphr",
        ])
        .arg("--trace")
        .arg(trace())
        .assert()
        .success()
        .stderr(contains("carries no content fingerprints"));
}

/// Runs `ssdlab ARGS` (reading standard input) feeding `first` bytes of `data`, a pause, then
/// the rest.
fn chunked_stdin(args: &[&str], data: &[u8], first: usize) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&data[..first]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The reader may stop early (a refused input): a broken pipe is then expected.
    let _ = stdin.write_all(&data[first..]);
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn n9_format_detection_does_not_depend_on_how_stdin_is_chunked() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    for (file, first, requests) in [
        ("msr_hm_0.csv.gz", 1, "7016"),
        ("cloudphysics_3k.vscsi", 7, "3000"),
    ] {
        let data = std::fs::read(dir.join(file)).unwrap();
        let out = chunked_stdin(&["trace", "stats", "--json", "-"], &data, first);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["requests"].to_string(), requests, "{file}");
    }
}

#[test]
fn n12_an_endless_stream_of_blank_lines_is_given_up_on() {
    use std::io::Write;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ssdlab"))
        .args(["run", "-q", "--preset", "tiny", "--trace", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let blank = vec![b'\n'; 1 << 16];
    // Blank lines until the reader gives up (the pipe breaks); at most 64 MiB.
    for _ in 0..1024 {
        if stdin.write_all(&blank).is_err() {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot detect the trace format"));
}

#[test]
fn n11_inputs_read_whole_are_capped_and_named() {
    for args in [
        vec!["compare", "/dev/zero", "/dev/zero"],
        vec!["run", "--config", "/dev/zero", "--synth", "requests=10"],
        vec!["run-spec", "/dev/zero"],
    ] {
        ssdlab()
            .args(&args)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(contains("/dev/zero").and(contains("larger than 64 MiB")));
    }
}

#[test]
fn n18_more_jobs_share_the_memory_limit_instead_of_splitting_it() {
    // A tiny point needs ~236 MiB (mostly process overhead): two fit in 300M only one at a time.
    let dir = fresh_dir("n18");
    experiment(&dir, ["a", "b"], "");
    ssdlab()
        .args(["experiment", "run", "--jobs", "2", "--max-memory", "300M"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("2 run, 0 already done, 0 failed"));
}

#[test]
fn messages_name_what_the_user_typed() {
    for (args, says) in [
        (
            vec!["--set", "staging.policy=\"none\""],
            "staging.policy = \"none\": unknown variant",
        ),
        (
            vec!["--set", "flash.program_us=1e9"],
            "(not set: derived from flash.program_us = 1000000000",
        ),
        (vec!["--scheme", "hotr+"], "empty scheme name"),
    ] {
        ssdlab()
            .args(["run", "-q", "--preset", "tiny", "--synth", "requests=10"])
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains(says).and(contains("TOML parse error").not()));
    }
    ssdlab()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--synth",
            "requests=10,footprint_gib=1e20",
        ])
        .assert()
        .code(2)
        .stderr(contains(
            "footprint_gib = 100000000000000000000: must be at most",
        ));
    ssdlab()
        .args(["synth", "--requests", "10", "--out", "/dev/full"])
        .assert()
        .code(2)
        .stderr(contains("/dev/full"));
    let dir = fresh_dir("msg");
    experiment(&dir, ["a", "b"], "");
    ssdlab()
        .args(["experiment", "plan"])
        .arg(&dir)
        .arg("--out")
        .arg(dir.join("jobs"))
        .assert()
        .success();
    let job = walk(&dir.join("jobs")).into_iter().next().unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    ssdlab()
        .arg("run-spec")
        .arg(&job)
        .arg("--out")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(contains("not a directory"));
}

#[test]
fn a_preset_overridden_by_a_full_config_file_is_named() {
    let dir = fresh_dir("preset");
    let full = dir.join("full.toml");
    let shown = ssdlab()
        .args(["config", "show", "--preset", "tiny"])
        .output()
        .unwrap();
    std::fs::write(&full, &shown.stdout).unwrap();
    let run = |preset: Option<&str>| {
        let mut c = ssdlab();
        c.args(["run", "-q", "--synth", "requests=10"])
            .arg("--config")
            .arg(&full);
        if let Some(p) = preset {
            c.args(["--preset", p]);
        }
        c.assert().success()
    };
    // Every key of a full dump is its own value: no feature-off warnings, and the preset named
    // explicitly is said to have no effect.
    run(Some("hotr")).stderr(
        contains("--preset hotr has no effect").and(contains("has no effect: TTFlash").not()),
    );
    run(None).stderr(contains("no effect").not());
}

#[test]
fn pre_processing_needs_a_workload_it_can_read_twice() {
    // From standard input the workload can be read once: refused by name, before the run.
    ssdlab()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--set",
            "precondition.pre_process=true",
            "--trace",
            "-",
        ])
        .write_stdin(std::fs::read(trace()).unwrap())
        .assert()
        .failure()
        .stderr(contains("precondition.pre_process").and(contains("standard input")));
    // Not with the dedup layer: a config error naming both keys.
    ssdlab()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--scheme",
            "dedup",
            "--set",
            "precondition.pre_process=true",
            "--synth",
            "requests=10,dedup=0.5",
        ])
        .assert()
        .failure()
        .stderr(contains("precondition.pre_process").and(contains("dedup.enabled")));
    // From a file it runs, and the summary counts the pages it wrote.
    let json = fresh_dir("pre-process").join("run.json");
    ssdlab()
        .args([
            "run",
            "-q",
            "--preset",
            "tiny",
            "--set",
            "precondition.pre_process=true",
            "--limit",
            "500",
            "--json",
        ])
        .arg(&json)
        .arg("--trace")
        .arg(trace())
        .assert()
        .success();
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(j["pre_processed_pages"].as_u64().unwrap() > 0, "{j}");
}

#[test]
fn a_scheme_that_needs_a_device_buffer_names_the_preset_that_has_one() {
    for (scheme, preset) in [
        ("sgc", "`shadowgc` preset"),
        ("dgc", "`shadowgc` preset"),
        ("hire", "`hire` preset"),
    ] {
        ssdlab()
            .args([
                "run",
                "-q",
                "--preset",
                "tiny",
                "--scheme",
                scheme,
                "--synth",
                "requests=10",
            ])
            .assert()
            .code(2)
            .stderr(contains("buffer.device_pages").and(contains(preset)));
    }
}
