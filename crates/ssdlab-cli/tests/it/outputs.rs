//! Outputs and guard rails of `ssdlab run` and `ssdlab compare` (issue 19).

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use std::path::PathBuf;

fn trace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0.csv")
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ssdlab-out-{}-{name}", std::process::id()))
}

fn run_json(scheme: &str, out: &PathBuf) {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run", "-q", "--limit", "2000", "--scheme", scheme, "--trace",
        ])
        .arg(trace())
        .arg("--json")
        .arg(out)
        .assert()
        .success();
}

#[test]
fn compare_puts_runs_side_by_side_with_differences() {
    let (a, b) = (tmp("a.json"), tmp("b.json"));
    run_json("baseline", &a);
    run_json("rps", &b);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    let (ra, rb) = {
        let va: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
        (
            va["read"]["mean_us"].as_f64().unwrap(),
            v["read"]["mean_us"].as_f64().unwrap(),
        )
    };
    let want = format!("{:+.1} %", (rb - ra) / ra * 100.0);
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("compare")
        .args([&a, &b])
        .assert()
        .success()
        .stdout(
            contains("read mean (us)")
                .and(contains(want.as_str()))
                .and(contains("scheme baseline, 2000 requests"))
                .and(contains("scheme rps, 2000 requests"))
                .and(contains("warning").not()),
        );
    // Runs of different lengths are compared with a warning, not silently.
    let short = tmp("short.json");
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--limit", "500", "--trace"])
        .arg(trace())
        .arg("--json")
        .arg(&short)
        .assert()
        .success();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("compare")
        .args([&a, &short])
        .assert()
        .success()
        .stdout(contains(
            "warning: the runs replay different numbers of requests (2000, 500)",
        ));
    let out = Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("compare")
        .args([&a, &b, &a])
        .arg("--json")
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = j["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "read.mean_us")
        .unwrap();
    assert_eq!(read["values"][1].as_f64().unwrap(), rb);
    assert_eq!(read["pct_vs_first"][2].as_f64().unwrap(), 0.0);
    // One file, or a file that is not a summary, is refused.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("compare")
        .arg(&a)
        .assert()
        .code(2);
    let junk = tmp("junk.json");
    std::fs::write(&junk, "{\"x\": 1}").unwrap();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("compare")
        .args([&a, &junk])
        .assert()
        .code(2)
        .stderr(contains("not a run summary"));
}

#[test]
fn an_unwritable_output_fails_before_the_simulation() {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "--trace"])
        .arg(trace())
        .args(["--json", "/nonexistent-dir/out.json"])
        .assert()
        .code(2)
        .stderr(contains("cannot write /nonexistent-dir/out.json"))
        .stdout(contains("response time").not());
}

#[test]
fn a_limit_of_zero_is_refused() {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--limit", "0", "--trace"])
        .arg(trace())
        .assert()
        .code(2)
        .stderr(contains("--limit 0"));
}

#[test]
fn summary_csv_appends_one_row_per_run_under_one_header() {
    let csv = tmp("runs.csv");
    let _ = std::fs::remove_file(&csv);
    let json = tmp("last.json");
    for scheme in ["baseline", "rps"] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args([
                "run", "-q", "--limit", "1000", "--scheme", scheme, "--trace",
            ])
            .arg(trace())
            .arg("--summary-csv")
            .arg(&csv)
            .arg("--json")
            .arg(&json)
            .assert()
            .success();
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(&header[..2], &["source", "seed"]);
    let mut distinct = header.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        header.len(),
        "a column repeated: {header:?}"
    );
    assert!(!header.iter().any(|h| h.contains("cdf")));
    // Columns in the summary's order, not sorted as text.
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert!(at("read.count") < at("read.mean_us"));
    assert!(at("read.p99_us") < at("read.p99_5_us"));
    assert!(at("all.mean_us") < at("read.mean_us"));
    let col = at("read.mean_us");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let last: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(last.len(), header.len());
    assert_eq!(
        last[col].parse::<f64>().unwrap(),
        v["read"]["mean_us"].as_f64().unwrap()
    );
    // A run with columns the header lacks is refused, not misaligned.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run", "-q", "--limit", "1000", "--scheme", "dedup", "--trace",
        ])
        .arg(trace())
        .arg("--summary-csv")
        .arg(&csv)
        .assert()
        .code(2)
        .stderr(contains("header lacks"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
}

#[test]
fn an_implausible_gap_between_arrivals_is_named_by_line() {
    // Three requests 1 ms apart, then one 5,000 s later (MSR ticks are 100 ns).
    let path = tmp("gap.csv");
    std::fs::write(
        &path,
        "128166372000000000,hm,0,Read,0,4096,100\n128166372000010000,hm,0,Read,4096,4096,100\n128166372000020000,hm,0,Read,8192,4096,100\n128166422000020000,hm,0,Read,8192,4096,100\n",
    )
    .unwrap();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--trace"])
        .arg(&path)
        .assert()
        .success()
        .stderr(contains(
            "line 4: arrives 5.000e3 s after the previous request",
        ));
    // A plain trace on a drive that holds it says nothing.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run", "-q", "--preset", "hotr", "--limit", "2000", "--trace",
        ])
        .arg(trace())
        .assert()
        .success()
        .stderr(contains("warning").not());
}

#[test]
fn addresses_folded_onto_a_smaller_drive_are_counted_in_a_warning() {
    // hm_0 spans 13.9 GiB; the `tiny` drive holds 13 MiB.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args([
            "run", "-q", "--preset", "tiny", "--limit", "2000", "--trace",
        ])
        .arg(trace())
        .assert()
        .success()
        .stderr(contains("of 2000 requests").and(contains("were folded onto it")));
}

#[test]
fn the_default_drive_is_a_papers_drive_that_holds_a_real_trace() {
    let out = Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "--limit", "2000", "--trace"])
        .arg(trace())
        .assert()
        .success()
        .stderr(contains("folded").not());
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("10 ch x 1 chips x 1 dies x 8 planes x 2048 blocks x 64 pages"),
        "{text}"
    );
}

/// The `run` of 2,000 hm_0 requests on the `hotr` drive with a host link, writing per-request
/// records to `out` and the summary to `json`.
fn run_with_records(out: &PathBuf, json: &PathBuf) {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--preset", "hotr", "--limit", "2000"])
        .args(["--set", "host.link=sata3", "--trace"])
        .arg(trace())
        .arg("--requests-out")
        .arg(out)
        .arg("--json")
        .arg(json)
        .assert()
        .success();
}

#[test]
fn requests_out_has_one_row_per_request_whose_parts_add_up_to_the_summary() {
    let (csv_path, gz_path, json) = (tmp("req.csv"), tmp("req.csv.gz"), tmp("req.json"));
    run_with_records(&csv_path, &json);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let header = rdr.headers().unwrap().clone();
    assert_eq!(
        &header.iter().take(9).collect::<Vec<_>>(),
        &[
            "id",
            "arrival_us",
            "op",
            "offset",
            "size",
            "response_us",
            "admitted_us",
            "link_out_us",
            "pages"
        ]
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len() as u64, summary["requests"].as_u64().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let num = |r: &csv::StringRecord, name: &str| r[col(name)].parse::<f64>().unwrap();
    // Means rebuilt from the rows equal the summary's (its values are rounded to 1e-6).
    let mean = rows.iter().map(|r| num(r, "response_us")).sum::<f64>() / rows.len() as f64;
    assert!((mean - summary["all"]["mean_us"].as_f64().unwrap()).abs() < 1e-3);
    let reads: Vec<_> = rows.iter().filter(|r| &r[col("op")] == "R").collect();
    let writes = rows.len() - reads.len();
    assert!(!reads.is_empty() && writes > 0);
    let flash_pages: f64 = reads.iter().map(|r| num(r, "flash_pages")).sum();
    for (column, key) in [
        ("wait_read_us", "read"),
        ("wait_user_program_us", "user_program"),
        ("service_us", "service"),
    ] {
        let per_page = reads.iter().map(|r| num(r, column)).sum::<f64>() / flash_pages;
        let want = summary["read_wait_us"][key].as_f64().unwrap();
        assert!(
            (per_page - want).abs() < 1e-3,
            "{column}: {per_page} vs {want}"
        );
    }
    assert!(rows
        .iter()
        .filter(|r| &r[col("op")] == "W")
        .all(|r| r[col("service_us")].is_empty() && num(r, "link_out_us") > 0.0));
    // The gzip file holds the same bytes.
    run_with_records(&gz_path, &json);
    let mut unzipped = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz_path).unwrap()),
        &mut unzipped,
    )
    .unwrap();
    assert_eq!(unzipped, text);
    for p in [csv_path, gz_path, json] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn an_unwritable_requests_out_fails_before_the_simulation() {
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--trace"])
        .arg(trace())
        .args(["--requests-out", "/nonexistent-dir/r.csv"])
        .assert()
        .failure()
        .stderr(contains("cannot write /nonexistent-dir/r.csv"));
}

#[test]
fn a_dash_as_an_output_is_refused_not_written_as_a_file_named_dash() {
    for option in ["--json", "--requests-out", "--summary-csv"] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args([
                "run",
                "-q",
                "--preset",
                "tiny",
                "--synth",
                "requests=10",
                option,
                "-",
            ])
            .assert()
            .code(2)
            .stderr(contains(format!("{option} -: outputs go to files")));
    }
    // The same check serves `trace fit --out` and `synth --out`.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["trace", "fit", "--out", "-"])
        .arg(trace())
        .assert()
        .code(2)
        .stderr(contains("--out -: outputs go to files"));
    let dir = tmp("synth-dash");
    std::fs::create_dir_all(&dir).unwrap();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .current_dir(&dir)
        .args(["synth", "--requests", "10", "--out", "-"])
        .assert()
        .code(2)
        .stderr(contains("--out -: outputs go to files"));
    assert!(!dir.join("-").exists());
}

#[test]
fn a_timeline_opens_as_trace_event_json_and_leaves_the_summary_as_it_was() {
    let (plain, gz, json, json_tl) = (
        tmp("tl.json"),
        tmp("tl.json.gz"),
        tmp("tl-sum.json"),
        tmp("tl-sum2.json"),
    );
    let run = |extra: &[&str], timeline: Option<&PathBuf>, json: &PathBuf| {
        let mut c = Command::cargo_bin("ssdlab").unwrap();
        c.args(["run", "-q", "--limit", "3000", "--trace"])
            .arg(trace())
            .arg("--json")
            .arg(json)
            .args(extra);
        if let Some(t) = timeline {
            c.arg("--timeline").arg(t);
        }
        c.assert().success();
    };
    run(&[], None, &json);
    run(&[], Some(&gz), &json_tl);
    let summary = |p: &PathBuf| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("sim");
        v
    };
    assert_eq!(summary(&json), summary(&json_tl));
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
        &mut text,
    )
    .unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = file["traceEvents"].as_array().unwrap();
    let flash = events.iter().filter(|e| e["cat"] == "flash").count() as u64;
    let s = summary(&json);
    let ops = ["reads", "programs", "erases"]
        .iter()
        .map(|k| s["flash"][*k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(flash, ops);
    // A window of 10 ms keeps fewer events, each of them overlapping it.
    run(
        &["--timeline-window", "10000..20000"],
        Some(&plain),
        &json_tl,
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plain).unwrap()).unwrap();
    let kept = file["traceEvents"].as_array().unwrap();
    assert!(kept.len() < events.len());
    assert!(kept
        .iter()
        .filter(|e| e["ph"] == "X")
        .all(|e| e["ts"].as_f64().unwrap() <= 20000.0
            && e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap() >= 10000.0));
    for p in [plain, gz, json, json_tl] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn bad_timeline_options_are_named() {
    for (args, message) in [
        (
            vec!["--timeline", "x.json", "--timeline-window", "5..2"],
            "START must be below END",
        ),
        (
            vec!["--timeline", "x.json", "--timeline-window", "5"],
            "expected START..END",
        ),
        (
            vec!["--timeline", "x.json", "--timeline-window", "a..2"],
            "\"a\" is not a time",
        ),
        (vec!["--timeline-window", "1..2"], "--timeline"),
        (vec!["--timeline-max-events", "10"], "--timeline"),
    ] {
        Command::cargo_bin("ssdlab")
            .unwrap()
            .args(["run", "-q", "--limit", "10", "--trace"])
            .arg(trace())
            .args(&args)
            .assert()
            .failure()
            .stderr(contains(message));
    }
    assert!(!std::path::Path::new("x.json").exists());
}

#[test]
fn explain_tells_where_the_slowest_read_waited_and_refuses_what_is_not_a_timeline() {
    let (tl, reqs) = (tmp("explain.json.gz"), tmp("explain.csv"));
    Command::cargo_bin("ssdlab")
        .unwrap()
        .args(["run", "-q", "--trace"])
        .arg(trace())
        .args([
            "--set",
            "precondition.fill=0.95",
            "--set",
            "precondition.pattern=random",
        ])
        .arg("--timeline")
        .arg(&tl)
        .arg("--requests-out")
        .arg(&reqs)
        .assert()
        .success();
    let stdout = |args: &[&str]| {
        let o = Command::cargo_bin("ssdlab")
            .unwrap()
            .arg("explain")
            .arg(&tl)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let list = stdout(&["--slowest", "3"]);
    let mut rdr = csv::Reader::from_path(&reqs).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let r = |x: &&csv::StringRecord| x[col("response_us")].parse::<f64>().unwrap();
    let by_response = |a: &&csv::StringRecord, b: &&csv::StringRecord| r(a).total_cmp(&r(b));
    // The list starts with the slowest request of the request log.
    let top = rows.iter().max_by(by_response).unwrap();
    let listed: u64 = list
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(top[col("id")].parse::<u64>().unwrap(), listed, "{list}");
    let slowest = rows
        .iter()
        .filter(|x| &x[col("op")] == "R")
        .max_by(by_response)
        .unwrap();
    let id: u64 = slowest[col("id")].parse().unwrap();
    // Its life: waits behind GC, and the GC programs its die ran meanwhile add up to them.
    let text = stdout(&[&id.to_string()]);
    assert!(text.starts_with(&format!("request {id}: read")), "{text}");
    let wait_gc: f64 = slowest[col("wait_gc_us")].parse().unwrap();
    assert!(wait_gc > 10_000.0, "{text}");
    let ran = text.lines().find(|l| l.contains(" ran, between")).unwrap();
    let gc_ms: f64 = ran
        .split(';')
        .find(|p| p.contains("gc program"))
        .and_then(|p| p.split('(').nth(1))
        .and_then(|p| p.split(" ms").next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (gc_ms * 1e3 - wait_gc).abs() < 0.05 * wait_gc,
        "{gc_ms} ms of GC programs against a GC wait of {wait_gc} us: {text}"
    );
    // Not a timeline, or an id it does not hold: named.
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("explain")
        .arg(trace())
        .arg("1")
        .assert()
        .failure()
        .stderr(contains("line 1 is not the start of an ssdlab timeline"));
    Command::cargo_bin("ssdlab")
        .unwrap()
        .arg("explain")
        .arg(&tl)
        .arg("99999999")
        .assert()
        .failure()
        .stderr(contains("request 99999999 is not in"));
    for p in [tl, reqs] {
        let _ = std::fs::remove_file(p);
    }
}
