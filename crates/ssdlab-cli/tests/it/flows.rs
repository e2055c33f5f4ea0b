//! `ssdlab run` with several I/O flows: the config form the docs show, `--flow`, one flow as
//! the plain run, per-flow outputs, and each misuse refused by name.

use assert_cmd::Command;
use predicates::str::contains;
use std::path::PathBuf;

fn ssdlab() -> Command {
    let mut c = Command::cargo_bin("ssdlab").unwrap();
    // Trace paths in flows are relative to the working directory, as --trace's are.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn json(path: &PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The two flows of docs/cli.md's example, as written there.
const EXAMPLE: &str = r#"[[flow]]
name = "reader"
trace = "testdata/traces/msr_hm_0.csv"
[[flow]]
name = "writer"
synth = "requests=20000,write_ratio=0.9,iat_us=300,footprint_gib=1,seed=2"
"#;

/// docs/cli.md's text, which shows [`EXAMPLE`] and the table its run prints.
fn cli_doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap()
}

#[test]
fn the_documented_flows_config_runs_beside_a_preset() {
    let (cfg, out, rows) = (tmp("two.toml"), tmp("two.json"), tmp("two.csv"));
    std::fs::write(&cfg, EXAMPLE).unwrap();
    let doc = cli_doc();
    assert!(
        doc.contains(&format!("```toml\n{EXAMPLE}```")),
        "docs/cli.md no longer shows the example"
    );
    let run = ssdlab()
        .args(["run", "--preset", "hotr", "--config"])
        .arg(&cfg)
        .arg("--json")
        .arg(&out)
        .arg("--requests-out")
        .arg(&rows)
        .assert()
        .success();
    // The per-flow table the docs show is the one this run prints.
    let stdout = String::from_utf8(run.get_output().stdout.clone()).unwrap();
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("flow "))
        .take(3)
        .collect();
    assert_eq!(table.len(), 3, "{stdout}");
    for line in table {
        assert!(
            doc.contains(line),
            "docs/cli.md lacks the current line\n{line}"
        );
    }
    let v = json(&out);
    let flows = v["flows"].as_array().unwrap();
    let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["reader", "writer"]);
    // The reader replays the whole trace: as many requests as the trace alone.
    let alone = tmp("alone.json");
    ssdlab()
        .args([
            "run",
            "--preset",
            "hotr",
            "-q",
            "--trace",
            "testdata/traces/msr_hm_0.csv",
            "--json",
        ])
        .arg(&alone)
        .assert()
        .success();
    assert_eq!(flows[0]["requests"], json(&alone)["requests"]);
    // compare sets each flow's metrics side by side, and warns when the runs' flows differ.
    ssdlab()
        .arg("compare")
        .arg(&out)
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("reader: read mean (us)"))
        .stdout(contains("writer: IOPS"));
    ssdlab()
        .arg("compare")
        .arg(&out)
        .arg(&alone)
        .assert()
        .success()
        .stdout(contains("different I/O flows (reader+writer, one)"));
    assert_eq!(flows[1]["requests"], 20000);
    for key in [
        "read",
        "write",
        "all",
        "read_wait_us",
        "throughput",
        "reads_blocked_pct",
    ] {
        assert!(flows[0].get(key).is_some(), "flows[0] lacks {key}");
    }
    // The request log names each request's flow.
    let text = std::fs::read_to_string(&rows).unwrap();
    assert!(text.starts_with("id,flow,arrival_us,"), "{}", &text[..60]);
    let writers = text
        .lines()
        .filter(|l| l.split(',').nth(1) == Some("writer"))
        .count();
    assert_eq!(writers, 20000);
}

#[test]
fn alone_runs_give_each_flow_its_slowdown_and_the_run_its_fairness() {
    let (shared, r_alone) = (tmp("shared.json"), tmp("r_alone.json"));
    let reader = "reader=trace:testdata/traces/msr_hm_0.csv";
    let writer = "writer=synth:requests=5000,write_ratio=0.9,iat_us=30,footprint_gib=1,seed=2";
    ssdlab()
        .args([
            "run", "--preset", "tiny", "-q", "--alone", "--flow", reader, "--flow", writer,
            "--json",
        ])
        .arg(&shared)
        .assert()
        .success();
    ssdlab()
        .args(["run", "--preset", "tiny", "-q", "--flow", reader, "--json"])
        .arg(&r_alone)
        .assert()
        .success();
    let v = json(&shared);
    let flows = v["flows"].as_array().unwrap();
    // The reader's alone run is the run of the reader by itself.
    let alone = json(&r_alone);
    assert_eq!(flows[0]["alone"]["all_mean_us"], alone["all"]["mean_us"]);
    assert_eq!(flows[0]["alone"]["read_mean_us"], alone["read"]["mean_us"]);
    let slowdowns: Vec<f64> = flows
        .iter()
        .map(|f| {
            let s = f["slowdown"].as_f64().unwrap();
            let want =
                f["all"]["mean_us"].as_f64().unwrap() / f["alone"]["all_mean_us"].as_f64().unwrap();
            assert!((s - want).abs() < 1e-5, "{s} vs {want}");
            s
        })
        .collect();
    let fairness = v["fairness"].as_f64().unwrap();
    let want = slowdowns.iter().cloned().fold(f64::INFINITY, f64::min)
        / slowdowns.iter().cloned().fold(0.0, f64::max);
    assert!(
        (fairness - want).abs() < 1e-5 && fairness <= 1.0,
        "{fairness} vs {want}"
    );
    // This drive is small enough for the writer to slow the reader down.
    assert!(slowdowns[0] > 1.05, "{slowdowns:?}");
    ssdlab()
        .args(["run", "--preset", "tiny", "-q", "--alone", "--flow", reader])
        .assert()
        .code(2)
        .stderr(contains(
            "--alone measures each flow's slowdown beside the others",
        ));
}

#[test]
fn one_flow_is_the_run_of_its_trace() {
    let (a, b, csv_a, csv_b) = (tmp("a.json"), tmp("b.json"), tmp("a.csv"), tmp("b.csv"));
    let trace = "testdata/traces/msr_hm_0.csv";
    ssdlab()
        .args([
            "run",
            "--preset",
            "tiny",
            "-q",
            "--flow",
            &format!("only=trace:{trace}"),
            "--json",
        ])
        .arg(&a)
        .arg("--requests-out")
        .arg(&csv_a)
        .assert()
        .success();
    ssdlab()
        .args(["run", "--preset", "tiny", "-q", "--trace", trace, "--json"])
        .arg(&b)
        .arg("--requests-out")
        .arg(&csv_b)
        .assert()
        .success();
    let strip = |mut v: serde_json::Value| {
        let o = v.as_object_mut().unwrap();
        o.remove("sim");
        // The trace reader's counts belong to a plain trace run only.
        o.remove("trace");
        v
    };
    assert_eq!(strip(json(&a)), strip(json(&b)));
    assert!(json(&a).get("flows").is_none());
    assert_eq!(
        std::fs::read(&csv_a).unwrap(),
        std::fs::read(&csv_b).unwrap()
    );
}

#[test]
fn flow_misuse_is_refused_by_name() {
    let cfg = tmp("bad.toml");
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "[[flow]]\nname = \"r\"\ntrace = \"t\"\nspeed = 2\n",
            &[],
            "bad.toml: flow 1 of 1 (`r`): unknown field `speed`",
        ),
        (
            "[[flow]]\nname = \"r\"\nsynth = \"requests=5\"\nlimit = 3\n",
            &[],
            "flow `r`: `limit`: reads a trace",
        ),
        (
            EXAMPLE,
            &["--trace", "testdata/traces/msr_hm_0.csv"],
            "--trace: the run's workload is its flows",
        ),
        (
            EXAMPLE,
            &["--limit", "5"],
            "--limit reads a trace; it has no effect with flows",
        ),
        (
            EXAMPLE,
            &["--flow", "x=synth:requests=5"],
            "--flow: the config file declares [[flow]] tables too",
        ),
        (
            EXAMPLE,
            &["--set", "host.mode=closed"],
            "host.mode = \"closed\" keeps one queue",
        ),
        (
            EXAMPLE,
            &["--set", "host.arbitration_weights=[0,2,1]"],
            "host.arbitration_weights = [0, 2, 1]: each must be 1-256",
        ),
        (
            EXAMPLE,
            &["--set", "host.arbitration=lottery"],
            "unknown variant `lottery`",
        ),
        (
            "[[flow]]\nname = \"r\"\nsynth = \"requests=5\"\nqueue_depth = 70000\n",
            &[],
            "flow `r`: `queue_depth`: 70000: at most 65536",
        ),
        (
            "[[flow]]\nname = \"gone\"\ntrace = \"testdata/traces/nonexistent.csv\"\n",
            &[],
            "flow `gone`: ",
        ),
    ];
    for (text, extra, want) in cases {
        std::fs::write(&cfg, text).unwrap();
        ssdlab()
            .args(["run", "--preset", "tiny", "-q", "--config"])
            .arg(&cfg)
            .args(*extra)
            .assert()
            .code(2)
            .stderr(contains(*want));
    }
    for (arg, want) in [
        (
            "reader",
            "--flow reader: expected NAME=trace:FILE or NAME=synth:SPEC",
        ),
        ("r=disk:x", "--flow r=disk:x: expected"),
        ("r=synth:requests=5,bogus=1", "flow `r`: `synth`: "),
    ] {
        ssdlab()
            .args(["run", "--preset", "tiny", "-q", "--flow", arg])
            .assert()
            .code(2)
            .stderr(contains(want));
    }
    ssdlab()
        .args([
            "run",
            "--preset",
            "tiny",
            "-q",
            "--flow",
            "a=synth:requests=5",
            "--flow",
            "a=synth:requests=6",
        ])
        .assert()
        .code(2)
        .stderr(contains("flow name `a` is given twice"));
    // Flows are a run's workload: `config show` prints the drive and says so.
    std::fs::write(&cfg, EXAMPLE).unwrap();
    ssdlab()
        .args(["config", "show", "--preset", "tiny", "--config"])
        .arg(&cfg)
        .assert()
        .success()
        .stderr(contains("[[flow]] tables of"));
}

#[test]
fn explain_names_each_requests_flow() {
    let tl = tmp("flows-timeline.json");
    ssdlab()
        .args([
            "run",
            "--preset",
            "tiny",
            "-q",
            "--flow",
            "a=synth:requests=100,write_ratio=0.5,iat_us=50,footprint_gib=0.001,seed=4",
            "--flow",
            "b=synth:requests=100,write_ratio=0.9,iat_us=40,footprint_gib=0.001,seed=5",
            "--timeline",
        ])
        .arg(&tl)
        .assert()
        .success();
    let out = ssdlab()
        .arg("explain")
        .arg(&tl)
        .args(["--slowest", "5"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.lines().next().unwrap().contains("flow"), "{text}");
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l.contains(" a ") || l.contains(" b ")),
        "{text}"
    );
    ssdlab()
        .arg("explain")
        .arg(&tl)
        .arg("0")
        .assert()
        .success()
        .stdout(contains("request 0 of flow `"));
}
