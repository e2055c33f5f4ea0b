//! The experiment runner and report end to end through the CLI.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use std::path::{Path, PathBuf};

fn ssdlab() -> Command {
    Command::cargo_bin("ssdlab").unwrap()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-exp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn trace() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/traces/financial1_10k.disksim");
    std::fs::canonicalize(p).unwrap().display().to_string()
}

/// A tiny experiment: one trace and one synthetic workload, FIFO/RPS, a 2-value grid; with
/// `broken`, a third variant whose config is invalid.
fn write_experiment(dir: &Path, broken: bool) {
    let mut text = format!(
        r#"
name = "tinyexp"
title = "Tiny experiment"
preset = "tiny"
set = ["precondition.fill=0.7"]
baseline = "FIFO"

[[workload]]
name = "fin"
trace = "{}"
limit = 400

[[workload]]
name = "syn"
synth = "requests=400,write_ratio=0.5,iat_us=200,footprint_gib=0.01,seed=2"

[[variant]]
name = "FIFO"
set = ["sched.policy=fifo"]

[[variant]]
name = "RPS"
set = ["sched.policy=rps"]

[grid]
"ftl.gc_victim" = ["greedy", "cost-benefit"]

[[figure]]
id = "rl"
title = "Read latency"
kind = "bars"
metric = "read.mean_us"
normalize = true
[figure.paper]
fin = {{ RPS = 0.5 }}

[[figure]]
id = "red"
title = "Read latency below FIFO (%)"
kind = "bars"
metric = "read.mean_us"
reduction = true
variants = ["RPS"]

[[figure]]
id = "cdf"
title = "CDF"
kind = "cdf"
metric = "read"
workload = "syn"

[[figure]]
id = "tail"
title = "Tail"
kind = "percentiles"
metric = "all"
workload = "fin"

[[figure]]
id = "sweep"
title = "Sweep"
kind = "sweep"
metric = "write_amplification"
x = "ftl.gc_victim"
"#,
        trace()
    );
    if broken {
        text.push_str("\n[[variant]]\nname = \"BAD\"\nset = [\"ftl.over_provisioning=1.5\"]\n");
    }
    std::fs::write(dir.join("experiment.toml"), text).unwrap();
}

fn results(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("results"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn run_resumes_and_report_has_tables_and_no_external_references() {
    let dir = fresh_dir("resume");
    write_experiment(&dir, false);
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .args(["--jobs", "2"])
        .assert()
        .success()
        .stderr(contains("8 run, 0 already done, 0 failed"));
    assert_eq!(results(&dir), 8);
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("0 run, 8 already done"));
    // Changing one point's config makes only the affected points run again.
    let text = std::fs::read_to_string(dir.join("experiment.toml"))
        .unwrap()
        .replace(
            "set = [\"sched.policy=rps\"]",
            "set = [\"sched.policy=rps\", \"flash.command_us=1\"]",
        );
    std::fs::write(dir.join("experiment.toml"), text).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("4 run, 4 already done"));

    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(
        md.contains("| workload | FIFO | RPS | RPS (paper) |"),
        "{md}"
    );
    assert!(
        md.contains("| fin ftl.gc_victim=greedy | 1.000 |")
            || md.contains("| fin gc_victim=greedy | 1.000 |"),
        "{md}"
    );
    assert!(md.contains("| 0.500 |"), "paper value beside ours: {md}");
    // The trace reaches beyond the tiny drive and is folded onto it; the synthetic workload
    // stays inside: the report says which.
    let note = md
        .lines()
        .find(|l| l.contains("Address folding"))
        .unwrap_or_else(|| panic!("no folding note: {md}"));
    assert!(
        note.contains("fin (4 points") && !note.contains("syn ("),
        "{note}"
    );
    assert!(
        md.contains("## All metrics")
            && md.contains("## Provenance")
            && md.contains("ssdlab run --preset tiny")
    );
    // The table's RPS value is RPS / FIFO of the stored results.
    let load = |id: &str| -> serde_json::Value {
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("results").join(format!("{id}.json"))).unwrap(),
        )
        .unwrap();
        r["summary"]["read"]["mean_us"].clone()
    };
    let ratio = load("fin__gc_victim-greedy__RPS").as_f64().unwrap()
        / load("fin__gc_victim-greedy__FIFO").as_f64().unwrap();
    assert!(
        md.contains(&format!("| {ratio:.3} |")),
        "ratio {ratio:.3} not in report"
    );
    // The reduction figure shows (FIFO − RPS) / FIFO in percent.
    let pct = (1.0 - ratio) * 100.0;
    let shown = if pct.abs() >= 10.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.3}")
    };
    assert!(
        md.contains(&format!("| fin gc_victim=greedy | {shown} |"))
            || md.contains(&format!("| fin ftl.gc_victim=greedy | {shown} |")),
        "reduction {shown} not in report: {md}"
    );
    for f in [
        "rl.svg",
        "cdf-syn_gc_victim_greedy.svg",
        "tail-fin_gc_victim_greedy.svg",
        "sweep-fin.svg",
    ] {
        assert!(dir.join("figures").join(f).exists(), "{f} missing");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("<table>"));
    let stripped = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for external in [
        "http://", "https://", "src=", "href=", "<link", "@import", "url(",
    ] {
        assert!(
            !stripped.contains(external),
            "report.html references something external: {external}"
        );
    }
}

#[test]
fn a_failing_point_does_not_stop_the_others() {
    let dir = fresh_dir("fail");
    write_experiment(&dir, true);
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("8 run, 0 already done, 4 failed"))
        .stderr(contains("ftl.over_provisioning = 1.5"));
    assert_eq!(results(&dir), 8);
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("4 points without results"));
}

#[test]
fn plan_xargs_run_spec_collect_report() {
    let dir = fresh_dir("plan");
    write_experiment(&dir, false);
    let jobs = dir.join("jobs");
    let out = dir.join("cluster-results");
    ssdlab()
        .args(["experiment", "plan"])
        .arg(&dir)
        .arg("--out")
        .arg(&jobs)
        .assert()
        .success()
        .stderr(contains("wrote 8 job files"));
    // The documented local form: ls jobs/*.json | xargs -P 2 -n 1 ssdlab run-spec --out DIR
    let bin = assert_cmd::cargo::cargo_bin("ssdlab");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ls {}/*.json | xargs -P 2 -n 1 {} run-spec --out {}",
            jobs.display(),
            bin.display(),
            out.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    ssdlab()
        .args(["experiment", "collect"])
        .arg(&dir)
        .arg("--from")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains("collected 8 results"));
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("0 run, 8 already done"));
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("0 points without results"));
}

#[test]
fn the_quick_experiment_runs_and_reports() {
    // Copy experiments/quick to a scratch directory, pointing its traces at the repository.
    let repo =
        std::fs::canonicalize(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap();
    let text = std::fs::read_to_string(repo.join("experiments/quick/experiment.toml")).unwrap();
    let text = text.replace("../../testdata", &format!("{}/testdata", repo.display()));
    let dir = fresh_dir("quick");
    std::fs::write(dir.join("experiment.toml"), text).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("12 run, 0 already done, 0 failed"));
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success()
        // The 8 the spec declares and every report's read-time breakdown.
        .stderr(contains("9 figures (0 points without results)"));
}

/// The repository root and every committed experiment directory (`experiments/*` and their
/// `fig7` sub-experiment).
fn committed_experiments() -> (PathBuf, Vec<PathBuf>) {
    let repo =
        std::fs::canonicalize(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap();
    let mut dirs = vec![];
    for e in std::fs::read_dir(repo.join("experiments")).unwrap() {
        let dir = e.unwrap().path();
        for d in [dir.clone(), dir.join("fig7")] {
            if d.join("experiment.toml").exists() {
                dirs.push(d);
            }
        }
    }
    (repo, dirs)
}

/// Every number a committed cause cites is computed from the results when the report is drawn
/// (a `{…}` template): none is typed, so none can drift from the runs behind it. The reports'
/// own test (`committed_reports_and_doc_images_are_current`) evaluates every template.
#[test]
fn causes_cite_only_computed_numbers() {
    let (repo, dirs) = committed_experiments();
    let mut typed = vec![];
    for dir in &dirs {
        let spec = ssdlab::experiment::ExperimentSpec::load(dir).unwrap();
        for f in &spec.figures {
            for (v, cause) in &f.cause {
                let bare = ssdlab::report::bare_numbers(cause);
                if !bare.is_empty() {
                    typed.push(format!(
                        "{} figure {} cause of {v}: {bare:?}",
                        dir.strip_prefix(&repo).unwrap().display(),
                        f.id
                    ));
                }
            }
        }
    }
    assert!(
        typed.is_empty(),
        "typed numbers in causes:\n{}",
        typed.join("\n")
    );
}

/// Committed results must match HEAD: a change that alters any point's config (or workload)
/// hash must re-run the affected experiments in the same commit
/// (`ssdlab experiment run experiments/<name>` re-runs exactly the stale points).
#[test]
fn committed_experiment_results_match_the_current_configs() {
    let (_, dirs) = committed_experiments();
    assert!(dirs.len() >= 6, "{dirs:?}");
    for dir in dirs {
        let spec = ssdlab::experiment::ExperimentSpec::load(&dir).unwrap();
        let loaded = ssdlab::experiment::load_results(&spec, &dir);
        assert!(
            loaded.tampered.is_empty(),
            "{}: results failing their content hash: {:?}",
            dir.display(),
            loaded.tampered
        );
        let loaded = loaded.points;
        let stale: Vec<&str> = loaded
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(p, _)| p.id.as_str())
            .collect();
        assert!(
            stale.is_empty(),
            "{}: {} of {} points have no current result (re-run `ssdlab experiment run {}`): {:?}",
            dir.display(),
            stale.len(),
            loaded.len(),
            dir.display(),
            &stale[..stale.len().min(5)]
        );
        let stale = ssdlab::experiment::calibrate::stale(&spec, &dir).unwrap();
        assert!(
            stale.is_empty(),
            "{}: calibration missing or stale for {stale:?} (re-run `ssdlab experiment run {}`)",
            dir.display(),
            dir.display()
        );
        let stored = std::fs::read_dir(dir.join("results")).unwrap().count();
        assert_eq!(
            stored,
            loaded.len(),
            "{}: results without a point",
            dir.display()
        );
    }
}

/// pe-suspension.txt compresses every trace "so that the system idle time is reduced from 98%
/// to around 70% for each workload": the committed FIFO runs must sit there on both cells.
#[test]
fn committed_pe_suspension_runs_are_calibrated_to_70_percent_idle_per_cell() {
    for exp in ["pe-suspension", "pe-suspension-gc"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments")
            .join(exp)
            .join("results");
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with("__FIFO.json") {
                continue;
            }
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let idle = r["summary"]["idle_pct"].as_f64().unwrap();
            assert!((idle - 70.0).abs() <= 2.0, "{exp}/{name}: {idle} % idle");
            seen += 1;
        }
        assert_eq!(seen, 12, "{exp}: six workloads x two cells");
    }
}

/// Fig. 7's workload is the main experiment's F2 stand-in compressed 7 times beyond its
/// calibrated SLC time scale ("we compress the time of F2 by 7 times"): the two agree.
#[test]
fn fig7_compresses_the_calibrated_f2_time_scale_seven_times() {
    let exp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/pe-suspension");
    let cal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exp.join("calibration.json")).unwrap())
            .unwrap();
    let slc = cal["entries"]["fin2-synth preset=pe-suspension-slc"]["value"]
        .as_f64()
        .unwrap();
    let fig7 = std::fs::read_to_string(exp.join("fig7/experiment.toml")).unwrap();
    let set = fig7
        .lines()
        .find_map(|l| l.trim().strip_prefix("set = [\"host.time_scale="))
        .expect("fig7 sets the time scale");
    let scale: f64 = set.trim_end_matches("\"]").parse().unwrap();
    assert!(
        (scale - slc / 7.0).abs() <= 1e-12 * slc,
        "fig7 host.time_scale = {scale}, main experiment's SLC F2 / 7 = {}",
        slc / 7.0
    );
}

#[test]
fn grid_set_applies_at_its_grid_point_and_a_wrong_key_is_named() {
    let dir = fresh_dir("gridset");
    let text = |key: &str| {
        format!(
            r#"
name = "gridset"
title = "t"
preset = "tiny"

[grid]
"flash.cell" = ["slc", "mlc"]

[[workload]]
name = "syn"
synth = "requests=200,write_ratio=0.5,iat_us=200,footprint_gib=0.01,seed=2"
grid_set = {{ "{key}" = ["host.time_scale=3"] }}

[[variant]]
name = "FIFO"
"#
        )
    };
    std::fs::write(dir.join("experiment.toml"), text("cell=mlc")).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success();
    let span = |id: &str| -> f64 {
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("results").join(format!("{id}.json"))).unwrap(),
        )
        .unwrap();
        r["summary"]["simulated_s"].as_f64().unwrap()
    };
    // The MLC point's arrivals are stretched 3x, the SLC point's are not.
    let (slc, mlc) = (span("syn__cell-slc__FIFO"), span("syn__cell-mlc__FIFO"));
    assert!(mlc > 2.5 * slc, "slc {slc} s, mlc {mlc} s");
    std::fs::write(dir.join("experiment.toml"), text("cell=tlc")).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .failure()
        .stderr(contains("grid_set key `cell=tlc` is not a grid point"));
}

#[test]
fn run_spec_refuses_a_job_id_that_is_a_path() {
    let dir = fresh_dir("escape");
    write_experiment(&dir, false);
    let jobs = dir.join("jobs");
    ssdlab()
        .args(["experiment", "plan"])
        .arg(&dir)
        .arg("--out")
        .arg(&jobs)
        .assert()
        .success();
    let job = std::fs::read_dir(&jobs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&job).unwrap()).unwrap();
    v["point"]["id"] = "../escape".into();
    std::fs::write(&job, v.to_string()).unwrap();
    let out = dir.join("out");
    ssdlab()
        .arg("run-spec")
        .arg(&job)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("point.id"));
    assert!(!dir.join("escape.json").exists());
}

#[test]
fn a_special_file_as_trace_is_refused_not_hashed_forever() {
    let dir = fresh_dir("devzero");
    std::fs::write(
        dir.join("experiment.toml"),
        r#"
name = "devzero"
title = "A device as trace"
preset = "tiny"

[[workload]]
name = "zero"
trace = "/dev/zero"

[[variant]]
name = "FIFO"
"#,
    )
    .unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(contains("regular file"));
}

#[test]
fn a_hand_edited_result_is_reported_not_published_and_runs_again() {
    let dir = fresh_dir("tamper");
    write_experiment(&dir, false);
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success();
    // Make one point look 10x faster.
    let victim = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&victim).unwrap()).unwrap();
    let mean = v["summary"]["all"]["mean_us"].as_f64().unwrap();
    v["summary"]["all"]["mean_us"] = serde_json::json!(mean / 10.0);
    std::fs::write(&victim, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let id = victim.file_stem().unwrap().to_string_lossy().to_string();
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .failure()
        .stderr(contains("content hash").and(contains(id.as_str())));
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(
        report.contains(&id),
        "the left-out point is listed as missing"
    );
    // The next run replaces it; then the report is whole again.
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("1 run, 7 already done"));
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success();
}

#[test]
fn two_runs_of_one_experiment_directory_do_not_overlap() {
    let dir = fresh_dir("locked");
    write_experiment(&dir, false);
    let _held = ssdlab::experiment::lock(&dir).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("another ssdlab process"));
}

/// Every committed report (REPORT.md, report.html, figures/*.svg) is what `ssdlab experiment
/// report` draws from the committed results today, with no figure left over from an earlier
/// spec; and every image the README and docs/ show is one of those figures, so none can go
/// stale behind the results it shows.
#[test]
fn committed_reports_and_doc_images_are_current() {
    let (repo, dirs) = committed_experiments();
    let mut stale = vec![];
    for dir in &dirs {
        let rel = dir.strip_prefix(&repo).unwrap().display().to_string();
        let spec = ssdlab::experiment::ExperimentSpec::load(dir).unwrap();
        let results = ssdlab::experiment::load_results(&spec, dir);
        let command = format!("ssdlab experiment run {rel} && ssdlab experiment report {rel}");
        let calibration = ssdlab::experiment::calibrate::load(&spec, dir);
        let r = ssdlab::report::build(&spec, &results.points, &calibration, &command)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut expected = vec![
            (dir.join("REPORT.md"), r.markdown.clone()),
            (dir.join("report.html"), r.html.clone()),
        ];
        for f in &r.figures {
            expected.push((
                dir.join("figures").join(format!("{}.svg", f.id)),
                f.svg.clone(),
            ));
        }
        for (path, text) in &expected {
            if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.strip_prefix(&repo).unwrap().display().to_string());
            }
        }
        for e in std::fs::read_dir(dir.join("figures")).unwrap() {
            let path = e.unwrap().path();
            if !expected.iter().any(|(p, _)| *p == path) {
                stale.push(format!(
                    "{} (drawn by no figure of the spec)",
                    path.strip_prefix(&repo).unwrap().display()
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "reports that differ from what `ssdlab experiment report` draws now (run it on their experiments): {stale:?}"
    );
    // Images shown by the README and the docs: report figures only.
    let mut pages = vec![repo.join("README.md")];
    let mut todo = vec![repo.join("docs")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    let mut images = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, _) in text.match_indices("![") {
            let rest = &text[i..];
            let Some(open) = rest.find("](") else {
                continue;
            };
            let link = &rest[open + 2..rest.find(')').unwrap()];
            let path = std::fs::canonicalize(page.parent().unwrap().join(link))
                .unwrap_or_else(|_| panic!("{}: image {link} does not exist", page.display()));
            let in_figures = path.starts_with(repo.join("experiments"))
                && path.parent().is_some_and(|p| p.ends_with("figures"));
            let sidecar = path.with_extension("json");
            assert!(
                in_figures || screenshot_is_current(&repo, &sidecar),
                "{}: image {link} is not a report figure (experiments/*/figures/*.svg) nor a screenshot with a sidecar {} whose command still writes the events it shows, so no test keeps it current",
                page.display(),
                sidecar.display()
            );
            images += 1;
        }
    }
    assert!(images > 0);
}

/// A screenshot of a timeline in Perfetto (docs/cli.md) stays current through its sidecar:
/// the command that writes the timeline it shows and that timeline's events by category.
/// Re-running the command must give the same events.
fn screenshot_is_current(repo: &Path, sidecar: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(sidecar) else {
        return false;
    };
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let timeline = std::env::temp_dir().join(format!("ssdlab-shot-{}.json", std::process::id()));
    let args: Vec<String> = spec["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            a.as_str()
                .unwrap()
                .replace("{timeline}", timeline.to_str().unwrap())
        })
        .collect();
    Command::cargo_bin("ssdlab")
        .unwrap()
        .current_dir(repo)
        .args(&args)
        .assert()
        .success();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&timeline).unwrap()).unwrap();
    let _ = std::fs::remove_file(&timeline);
    let mut counts = serde_json::Map::new();
    for e in file["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" || e["ph"] == "b" {
            let cat = e["cat"].as_str().unwrap().to_string();
            let n = counts.get(&cat).and_then(|v| v.as_u64()).unwrap_or(0);
            counts.insert(cat, (n + 1).into());
        }
    }
    assert_eq!(
        serde_json::Value::Object(counts),
        spec["counts"],
        "{}: the timeline behind the screenshot changed; re-take it (its `about`)",
        sidecar.display()
    );
    true
}

/// `[calibrate]`: the time scale that brings the baseline to 70 % idle is found per workload
/// and grid point on the baseline variant alone, stored with every probe, and given to every
/// variant; a spec that would calibrate on a scheme variant, or let a variant override the
/// calibrated key, is refused.
#[test]
fn calibration_runs_on_the_baseline_only_and_reaches_its_target() {
    let dir = fresh_dir("calibrate");
    let spec = |variant: &str, rps_set: &str| {
        format!(
            r#"
name = "cal"
title = "Calibrated"
preset = "tiny"
baseline = "FIFO"

[[workload]]
name = "mix"
synth = "requests=800,write_ratio=0.4,size_kib=4,iat_us=100,footprint_gib=0.005,seed=3"

[grid]
"flash.cell" = ["slc", "mlc"]

[[variant]]
name = "FIFO"
scheme = "baseline"

[[variant]]
name = "RPS"
scheme = "rps"
set = [{rps_set}]

[calibrate]
variant = "{variant}"
key = "host.time_scale"
range = [0.01, 100.0]
metric = "idle_pct"
target = 70.0
tolerance = 1.0
"#
        )
    };
    std::fs::write(dir.join("experiment.toml"), spec("RPS", "")).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("calibrate.variant").and(contains("baseline")));
    std::fs::write(
        dir.join("experiment.toml"),
        spec("FIFO", "\"host.time_scale=2\""),
    )
    .unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("calibrate.key").and(contains("RPS")));
    std::fs::write(dir.join("experiment.toml"), spec("FIFO", "")).unwrap();
    ssdlab()
        .args(["experiment", "plan", "--out"])
        .arg(dir.join("jobs"))
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(contains("experiment calibrate"));
    ssdlab()
        .args(["experiment", "run", "--jobs", "2"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("2 searched now").and(contains("4 run, 0 already done")));
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("calibration.json")).unwrap())
            .unwrap();
    let entries = c["entries"].as_object().unwrap();
    assert_eq!(entries.len(), 2, "{c}");
    let mut scales = vec![];
    for e in entries.values() {
        assert_eq!(e["variant"], "FIFO");
        assert_eq!(e["within_tolerance"], true, "{e}");
        assert!((e["reached"].as_f64().unwrap() - 70.0).abs() <= 1.0);
        assert!(e["probes"].as_array().unwrap().len() >= 3);
        scales.push(e["value"].as_f64().unwrap());
    }
    // MLC's slower programs need a longer time scale for the same idle share.
    assert!(scales[0] != scales[1], "{scales:?}");
    // Every variant runs with the value found; the baseline reaches the target.
    for cell in ["slc", "mlc"] {
        let e = &entries[&format!("mix cell={cell}")];
        for v in ["FIFO", "RPS"] {
            let r: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(
                    dir.join("results")
                        .join(format!("mix__cell-{cell}__{v}.json")),
                )
                .unwrap(),
            )
            .unwrap();
            let sets = r["point"]["sets"].as_array().unwrap();
            assert!(
                sets.iter()
                    .any(|s| s == &format!("host.time_scale={}", e["value"])),
                "{v} {cell}: {sets:?}"
            );
            if v == "FIFO" {
                assert_eq!(r["summary"]["idle_pct"], e["reached"]);
            }
        }
    }
    // Nothing changed: nothing searched, nothing run again; the report shows the table.
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("0 searched now").and(contains("0 run, 4 already done")));
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success();
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(report.contains("Calibration (baseline only)"), "{report}");
}

/// `experiment timeline`: one committed point re-run with a timeline gives its stored result,
/// and the file holds its operations; an unknown point is named.
#[test]
fn a_committed_point_re_runs_with_a_timeline_and_gives_its_stored_result() {
    let (repo, _) = committed_experiments();
    let dir = repo.join("experiments/quick");
    let out = std::env::temp_dir().join(format!("ssdlab-point-{}.json", std::process::id()));
    ssdlab()
        .args(["experiment", "timeline"])
        .arg(&dir)
        .arg("fin1__cell-tlc__FIFO")
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains("the re-run gives the stored result"));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results/fin1__cell-tlc__FIFO.json")).unwrap(),
    )
    .unwrap();
    let flash = file["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "flash")
        .count() as u64;
    let ops: u64 = ["reads", "programs", "erases"]
        .iter()
        .map(|k| stored["summary"]["flash"][*k].as_u64().unwrap())
        .sum();
    assert_eq!(flash, ops);
    let _ = std::fs::remove_file(&out);
    ssdlab()
        .args(["experiment", "timeline"])
        .arg(&dir)
        .arg("no-such-point")
        .arg("--out")
        .arg(&out)
        .assert()
        .failure()
        .stderr(contains("no point `no-such-point`"));
    assert!(!out.exists());
}

#[test]
fn a_workload_of_flows_runs_each_alone_and_reports_per_flow_metrics() {
    let dir = fresh_dir("flows");
    let text = format!(
        r#"
name = "tenants-tiny"
title = "Two tenants"
preset = "tiny"
seeds = 2
baseline = "FIFO"

[[workload]]
name = "two"
alone = true
[[workload.flow]]
name = "reader"
trace = "{}"
limit = 300
[[workload.flow]]
name = "writer"
synth = "requests=300,write_ratio=1,iat_us=200,footprint_gib=0.002,seed=4"

[[variant]]
name = "FIFO"
[[variant]]
name = "RPS"
scheme = "rps"

[[figure]]
id = "slowdown"
title = "Reader slowdown"
kind = "bars"
metric = "flows.reader.slowdown"
"#,
        trace()
    );
    std::fs::write(dir.join("experiment.toml"), text).unwrap();
    ssdlab()
        .args(["experiment", "run"])
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(results(&dir), 4);
    let mut writers = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir.join("results")).unwrap() {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        let s = &v["summary"];
        let flows = s["flows"].as_array().unwrap();
        assert_eq!(flows[0]["requests"], 300);
        assert!(flows[0]["slowdown"].as_f64().unwrap() > 0.0);
        assert!(s["fairness"].as_f64().unwrap() <= 1.0);
        // The second seed draws the writer's stream from its own seed; the trace is the same.
        writers.insert(
            v["point"]["source"]["flows"][1]["synth"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        assert!(v["command"]
            .as_str()
            .unwrap()
            .contains("--flow 'reader=trace:"));
    }
    assert_eq!(writers.len(), 2, "{writers:?}");
    ssdlab()
        .args(["experiment", "report"])
        .arg(&dir)
        .assert()
        .success();
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(report.contains("flow `reader`: trace"), "{report}");
    assert!(
        report.contains("| two | 1."),
        "the slowdown table: {report}"
    );
    // A workload-level trace key beside flows, and `alone` with one flow, are refused by name.
    for (bad, want) in [
        (
            "name = \"two\"\nalone = true\n",
            "`alone` measures each flow's slowdown beside the others",
        ),
        (
            "name = \"two\"\nlimit = 5\n",
            "`limit` beside `[[workload.flow]]` tables",
        ),
    ] {
        let one = format!(
            "name = \"x\"\ntitle = \"x\"\npreset = \"tiny\"\n[[workload]]\n{bad}[[workload.flow]]\nname = \"w\"\nsynth = \"requests=5\"\n[[variant]]\nname = \"v\"\n"
        );
        std::fs::write(dir.join("experiment.toml"), one).unwrap();
        ssdlab()
            .args(["experiment", "run"])
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(contains(want));
    }
}
