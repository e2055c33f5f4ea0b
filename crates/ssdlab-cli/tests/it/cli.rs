//! The command-line interface end to end: names scripts depend on, exit codes, messages.

use assert_cmd::Command;
use predicates::str::contains;
use std::path::PathBuf;

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/traces")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn run_writes_every_documented_json_key() {
    let out = tmp("run.json");
    ssdlab()
        .args([
            "run",
            "--preset",
            "hotr",
            "--set",
            "geometry.blocks_per_plane=64",
            "--set",
            "precondition.fill=0.8",
        ])
        .args(["--trace"])
        .arg(testdata("msr_hm_0.csv"))
        .args([
            "--format", "msr", "--scheme", "baseline", "--seed", "3", "--verify", "--limit",
            "1500", "--json",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("response time (us)"))
        .stdout(contains("verify: passed"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    for key in [
        "requests",
        "read.count",
        "read.mean_us",
        "read.p99_us",
        "write.count",
        "write.mean_us",
        "write.p99_us",
        "all.mean_us",
        "all.p99_us",
        "reads_blocked_pct",
        "read_wait_us",
        "write_amplification",
        "flash.reads",
        "flash.programs",
        "flash.erases",
        "gc.count",
        "sim.wall_s",
        "sim.events",
        "sim.requests_per_s",
        "config_hash",
        "seed",
    ] {
        let found = key.split('.').try_fold(&v, |node, k| node.get(k));
        assert!(found.is_some(), "missing JSON key {key}");
    }
    assert_eq!(v["requests"], 1500);
    assert_eq!(v["seed"], 3);
    assert!(v["read_wait_us"].is_object());
}

#[test]
fn synth_output_replays_and_trace_stats_describe_it() {
    let csv = tmp("synth.csv");
    ssdlab()
        .args(["synth", "--out"])
        .arg(&csv)
        .args([
            "--requests",
            "3000",
            "--write-ratio",
            "0.25",
            "--size-kib",
            "4,8",
            "--iat-us",
            "50",
            "--footprint-gib",
            "0.01",
            "--seed",
            "9",
        ])
        .assert()
        .success();
    ssdlab()
        .args(["trace", "stats"])
        .arg(&csv)
        .assert()
        .success()
        .stdout(contains("format             msr"))
        .stdout(contains("requests           3000"));
    ssdlab()
        .args(["run", "--preset", "tiny", "--quiet", "--verify", "--trace"])
        .arg(&csv)
        .assert()
        .success();
}

#[test]
fn dedup_synth_keeps_contents_and_deduphr_survives_a_power_loss() {
    let fiu = tmp("dedup.fiu");
    ssdlab()
        .args(["synth", "--out"])
        .arg(&fiu)
        .args([
            "--requests",
            "4000",
            "--write-ratio",
            "0.7",
            "--size-kib",
            "4,8",
            "--iat-us",
            "400",
            "--footprint-gib",
            "0.01",
            "--dedup",
            "0.6",
        ])
        .assert()
        .success()
        .stderr(contains("FIU IODedup"));
    let out = tmp("dedup.json");
    ssdlab()
        .args([
            "run",
            "--preset",
            "deduphr",
            "--scheme",
            "deduphr",
            "--set",
            "geometry.blocks_per_plane=64",
        ])
        .args([
            "--quiet",
            "--verify",
            "--power-loss-at",
            "500000",
            "--trace",
        ])
        .arg(&fiu)
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        v["dedup"]["dedup_ratio_pct"].as_f64().unwrap() > 30.0,
        "{}",
        v["dedup"]
    );
    assert_eq!(v["staging"]["power_losses"], 1);
    ssdlab()
        .args(["run", "--synth", "requests=5", "--power-loss-at=-3"])
        .assert()
        .code(2)
        .stderr(contains("--power-loss-at"));
}

#[test]
fn vscsi_encodings_are_detected_and_forced() {
    for (file, format) in [
        ("cloudphysics_3k.vscsi", "vscsi-bin"),
        ("cloudphysics_3k.vscsi.csv", "vscsi"),
    ] {
        ssdlab()
            .args(["trace", "stats"])
            .arg(testdata(file))
            .assert()
            .success()
            .stdout(contains(format!("format             {format}\n")))
            .stdout(contains("requests           3000"))
            .stdout(contains("read %             41.17"));
    }
    // Forcing the binary format on text names the first record.
    ssdlab()
        .args(["trace", "stats", "--format", "vscsi-bin"])
        .arg(testdata("cloudphysics_3k.vscsi.csv"))
        .assert()
        .code(2)
        .stderr(contains("cloudphysics_3k.vscsi.csv:1"));
}

#[test]
fn config_show_prints_every_key_and_reloads() {
    let out = ssdlab()
        .args([
            "config",
            "show",
            "--preset",
            "pe-suspension-mlc",
            "--set",
            "sched.policy=rps",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("policy = \"rps\"")
            && text.contains("program_us = 660.0")
            && text.contains("transfer_us = 40.0")
    );
    let file = tmp("shown.toml");
    std::fs::write(&file, &text).unwrap();
    let again = ssdlab()
        .args(["config", "show", "--config"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(again).unwrap(), text);
}

#[test]
fn presets_are_listed() {
    let out = ssdlab()
        .arg("presets")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for p in [
        "tiny",
        "hotr",
        "pe-suspension-slc",
        "pe-suspension-mlc",
        "shadowgc",
        "hire",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(p)),
            "{p} missing from:\n{text}"
        );
    }
}

#[test]
fn bad_inputs_exit_2_with_a_message() {
    let bad = tmp("bad.csv");
    std::fs::write(&bad, "128166386783630075,hm,0,Write,3164164096,4096,2896\n128166386783630075,hm,0,Write,31641x4096,4096,2896\n").unwrap();
    ssdlab()
        .args(["run", "--trace"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(contains("bad.csv:2: field `Offset`"));
    ssdlab()
        .args(["run", "--preset", "nope", "--synth", "requests=5"])
        .assert()
        .code(2)
        .stderr(contains("unknown preset"));
    ssdlab()
        .args([
            "run",
            "--set",
            "ftl.over_provisioning=1.5",
            "--synth",
            "requests=5",
        ])
        .assert()
        .code(2)
        .stderr(contains("ftl.over_provisioning = 1.5"));
    ssdlab()
        .args(["run", "--synth", "requests=5,bogus=1"])
        .assert()
        .code(2)
        .stderr(contains("bogus"));
}

#[test]
fn the_scheme_listing_in_the_docs_is_current() {
    let listing = ssdlab().arg("schemes").output().unwrap();
    assert!(listing.status.success());
    let listing = String::from_utf8(listing.stdout).unwrap();
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemes/README.md"),
    )
    .unwrap();
    assert!(
        doc.contains(&format!("```\n{listing}```")),
        "docs/schemes/README.md does not hold the current `ssdlab schemes` listing: paste it"
    );
}

#[test]
fn schemes_are_listed_selected_labelled_and_refused_by_name() {
    ssdlab()
        .arg("schemes")
        .assert()
        .success()
        .stdout(contains("hotr"))
        .stdout(contains("follows: hotr.txt"))
        .stdout(contains("gc-preempt.hard_floor=0.005 (parameter)"));
    let out = tmp("ttflash-rps.json");
    ssdlab()
        .args(["run", "--preset", "tiny", "--scheme", "rps+ttflash"])
        .args(["--set", "geometry.channels=5", "--verify", "--trace"])
        .arg(testdata("msr_hm_0.csv"))
        .args(["--limit", "500", "--json"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("scheme ttflash+rps"))
        .stdout(contains("ttflash: "));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["scheme"], "ttflash+rps");
    ssdlab()
        .args(["run", "--preset", "tiny", "--scheme", "ips+ipc", "--synth"])
        .arg("requests=10")
        .assert()
        .code(2)
        .stderr(contains("`ips` and `ipc` cannot be combined"));
}

#[test]
fn config_show_with_a_scheme_reloads_to_the_same_hash() {
    let shown = ssdlab()
        .args(["config", "show", "--preset", "hotr", "--scheme", "hotr+ipc"])
        .output()
        .unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    for key in [
        "scheme = \"hotr+ipc\"",
        "refcount_threshold",
        "max_queued_copies",
        "rails_switch_us",
        "host_pages",
        "[shadow]",
    ] {
        assert!(text.contains(key), "config show lacks {key}");
    }
    let file = tmp("shown.toml");
    std::fs::write(&file, &text).unwrap();
    let hash = |args: &[&str]| {
        let out = tmp("hash.json");
        ssdlab()
            .args(["run", "-q", "--synth", "requests=20", "--json"])
            .arg(&out)
            .args(args)
            .assert()
            .success();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        v["config_hash"].as_str().unwrap().to_string()
    };
    let file = file.display().to_string();
    assert_eq!(
        hash(&["--preset", "hotr", "--scheme", "hotr+ipc"]),
        hash(&["--preset", "tiny", "--config", &file])
    );
}

#[test]
fn trace_fit_prints_a_spec_that_runs_and_stats_profile_it() {
    let out = ssdlab()
        .args(["trace", "fit"])
        .arg(testdata("financial1_10k.disksim"))
        .arg("--out")
        .arg(tmp("fin.toml"))
        .assert()
        .success()
        .stderr(contains("read arrivals:"))
        .stderr(contains("reuse.reread_pct"))
        .get_output()
        .stdout
        .clone();
    let spec = String::from_utf8(out).unwrap().trim().to_string();
    assert!(
        spec.starts_with("requests=10000,") && !spec.contains('\n'),
        "{spec}"
    );
    let toml = std::fs::read_to_string(tmp("fin.toml")).unwrap();
    assert!(toml.contains(&format!("synth = \"{spec}\"")), "{toml}");
    ssdlab()
        .args(["run", "--preset", "tiny", "-q", "--synth", &spec])
        .assert()
        .success();
    ssdlab()
        .args(["trace", "stats", "--synth", &spec])
        .assert()
        .success()
        .stdout(contains("requests           10000"))
        .stdout(contains("page types"));
    ssdlab()
        .args(["synth", "--out"])
        .arg(tmp("fin-standin.csv"))
        .args(["--spec", &spec])
        .assert()
        .success();
    let empty = tmp("one.csv");
    std::fs::write(
        &empty,
        "128166386783630075,hm,0,Write,3164164096,4096,2896\n",
    )
    .unwrap();
    ssdlab()
        .args(["trace", "fit"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(contains("1 request(s); a fit needs at least 2"));
    ssdlab()
        .args(["trace", "stats", "--synth", "requests=10,arrivals=bmodel"])
        .assert()
        .code(2)
        .stderr(contains("arrivals=bmodel needs b"));
}

#[test]
fn a_disksim_request_dump_with_hex_flags_loads_and_is_detected() {
    let path = tmp("disksim-dump.trace");
    std::fs::write(
        &path,
        "0.000000 0 1234 8 40000001\n0.100000 0 2048 8 40000000\n0.200000 0 4096 16 1\n",
    )
    .unwrap();
    let out = tmp("disksim-dump.json");
    ssdlab()
        .args(["run", "-q", "--preset", "tiny", "--trace"])
        .arg(&path)
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        (v["read"]["count"].as_u64(), v["write"]["count"].as_u64()),
        (Some(2), Some(1))
    );
}

/// The cross-check flags change how the run is computed, not what it reports: the summary is
/// the same with every event scheduled and with a version beside every mapping entry.
#[test]
fn full_events_and_full_versions_give_the_same_summary() {
    let run = |name: &str, flags: &[&str]| {
        let out = tmp(name);
        ssdlab()
            .args([
                "run",
                "-q",
                "--preset",
                "hotr",
                "--set",
                "geometry.blocks_per_plane=64",
            ])
            .args(["--set", "precondition.fill=0.8", "--trace"])
            .arg(testdata("msr_hm_0.csv"))
            .args(["--format", "msr", "--limit", "3000", "--json"])
            .arg(&out)
            .args(flags)
            .assert()
            .success();
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let events = v["sim"]["events"].as_u64().unwrap();
        v.as_object_mut().unwrap().remove("sim");
        (v, events)
    };
    let (base, events) = run("cross-base.json", &[]);
    let (full_events, more) = run("cross-events.json", &["--full-events"]);
    let (full_versions, same) = run("cross-versions.json", &["--full-versions"]);
    assert_eq!(base, full_events);
    assert_eq!(base, full_versions);
    assert!(
        more > events,
        "{more} events with every phase, {events} without"
    );
    assert_eq!(same, events);
}
