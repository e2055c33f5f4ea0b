//! `ssdlab trace fit` never fails silently (issue 50): a stand-in that misses a first-order
//! statistic of its trace is reported, and no spec is printed unless asked for.

use super::reliability::{ssdlab, trace};
use predicates::prelude::*;
use predicates::str::contains;

/// From standard input the trace cannot be read a second time for activity envelopes, so the
/// one-process fit of hm_0 — whose reads come in a few bursts — misses the reads in most
/// tenths of the span: the command fails, names them, and prints no spec.
#[test]
fn a_fit_that_misses_exits_non_zero_and_prints_no_spec() {
    let text = std::fs::read(trace()).unwrap();
    ssdlab()
        .args(["trace", "fit", "-", "--format", "msr"])
        .write_stdin(text.clone())
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            contains("the stand-in misses")
                .and(contains("reads in tenth"))
                .and(contains("MISSED"))
                .and(contains("--force")),
        );
    // --force prints it, marked as failed, and exits 0.
    ssdlab()
        .args(["trace", "fit", "-", "--format", "msr", "--force"])
        .write_stdin(text)
        .assert()
        .success()
        .stdout(contains("requests=7016"))
        .stderr(contains("FAILED (printed with --force)"));
}

/// From the file, the fit gives each direction an activity envelope and every check is met.
#[test]
fn a_fit_from_the_file_meets_every_check_with_envelopes() {
    ssdlab()
        .args(["trace", "fit"])
        .arg(trace())
        .assert()
        .success()
        .stdout(contains("read_envelope=").and(contains("write_envelope=")))
        .stderr(
            contains("overall: every check met").and(contains("fitted with activity envelopes")),
        );
}

/// A bundled trace's path.
fn bundled(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/traces")
        .join(name)
}

/// The spec `trace fit` prints for `trace` (which must succeed).
fn fitted(trace: &std::path::Path) -> String {
    let out = ssdlab().args(["trace", "fit"]).arg(trace).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The re-read share (%) and median time gap (µs) `trace stats` gives for `args`.
fn rereads(args: &[&str]) -> (f64, f64) {
    let out = ssdlab()
        .args(["trace", "stats"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("re-reads")).unwrap();
    let share = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    // "... reads, 1/1556/5017599 µs)": the median is the first of the three.
    let us = line.split(" reads, ").nth(1).unwrap();
    (share, us.split('/').next().unwrap().parse().unwrap())
}

/// msr_cut_rw_20_80 re-reads pages at once (median 1 µs, a read request apart), which a
/// re-read placed a read request later cannot express (the fit of before gave its stand-in a
/// median of 7,303 µs): the fit places them in time, shared among the slices as the trace's
/// were, and meets every check. msr_hm_0's re-reads come about as far apart as its reads and
/// stay placed by distance in reads.
#[test]
fn immediate_rereads_are_fitted_in_time() {
    let cut = bundled("msr_cut_rw_20_80.flashnet");
    let spec = fitted(&cut);
    let spec = spec.as_str();
    assert!(spec.contains("reread_gap_us=") && spec.contains("reread_envelope="));
    let (share, gap) = rereads(&[cut.to_str().unwrap()]);
    assert!((13.0..14.0).contains(&share) && gap <= 1.0, "{share} {gap}");
    for seed in 1..=3 {
        let s = spec.replace("seed=1", &format!("seed={seed}"));
        let (got, median) = rereads(&["--synth", &s]);
        // Riders reading back a write (below) re-read it too when the next one lands on the
        // same write: 17.9-18.8 % over seeds 1-5 against the trace's 13.7 % (9.3-9.4 % over
        // seeds 1-3 without `cobatch_raw`; 15.0-17.0 % before re-reads were kept in their
        // slice, which keeps each slice's reads exact; docs/workloads.md).
        assert!(
            (got - share).abs() < 6.0,
            "seed {seed}: {got} % against {share} %"
        );
        assert!(
            median <= 100.0,
            "seed {seed}: median re-read gap {median} µs"
        );
    }
    ssdlab()
        .args(["trace", "fit"])
        .arg(bundled("msr_hm_0.csv"))
        .assert()
        .success()
        .stdout(contains("reread=").and(contains("reread_gap_us").not()));
}

/// The profile `trace stats --json` gives for `args` (which must succeed).
fn profile(args: &[&str]) -> serde_json::Value {
    let out = ssdlab()
        .args(["trace", "stats", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.get_mut("profile").map(|p| p.take()).unwrap_or(v)
}

/// The coupling statistics (%) `trace stats --json` gives for `args`: reads within 1 ms of a
/// write, and the share of those reading a page written in that millisecond.
fn coupling(args: &[&str]) -> [f64; 2] {
    let p = profile(args);
    let c = &p["burstiness"]["coupling"];
    [
        c["read_within_1ms_of_write_pct"].as_f64().unwrap(),
        c["near_reads_of_written_pct"].as_f64().unwrap(),
    ]
}

/// msr_cut_rw_20_80 reads back what it has just written (a third of its reads come within
/// 1 ms of a write, three quarters of those read a page written in that millisecond). The fit
/// with activity envelopes fits its processes in operational time, where each direction is
/// warped by its own envelope and that tie is lost (the fit of before gave its stand-in 3.9 %
/// and 0 %); the knobs that tie reads to writes are now estimated and corrected in the trace's
/// own time.
#[test]
fn reads_near_writes_are_fitted_in_the_trace_s_own_time() {
    let cut = bundled("msr_cut_rw_20_80.flashnet");
    let spec = fitted(&cut);
    let spec = spec.as_str();
    assert!(spec.contains("read_envelope=") && spec.contains("cobatch="));
    let [near, back] = coupling(&[cut.to_str().unwrap()]);
    assert!(
        (31.0..33.0).contains(&near) && (75.0..77.0).contains(&back),
        "{near} {back}"
    );
    for seed in 1..=3 {
        let s = spec.replace("seed=1", &format!("seed={seed}"));
        let [n, b] = coupling(&["--synth", &s]);
        assert!(
            (n - near).abs() < 0.25 * near && b > 50.0,
            "seed {seed}: near {n} % (trace {near} %), of written {b} % (trace {back} %)"
        );
    }
}

/// msr_rsrch_1's writes come in bursts a cascade of single requests cannot reach: the b-model
/// the fit chooses for them gets its batches too (`bmodel with batches` in the choice), and
/// the stand-in's write IDC at 1 ms comes above 4 over seeds 1-3 (trace 15.5; 2.2-2.4
/// without batches).
#[test]
fn a_chosen_b_model_gets_its_batches() {
    let rsrch = bundled("msr_rsrch_1.csv");
    let out = ssdlab()
        .args(["trace", "fit", "--json"])
        .arg(&rsrch)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let write = &v["arrivals"][1];
    assert_eq!(write["chosen"], "bmodel with batches", "{write}");
    let spec = v["spec"].as_str().unwrap();
    for seed in 1..=3 {
        let s = spec.replace("seed=1", &format!("seed={seed}"));
        let p = profile(&["--synth", &s]);
        let idc = p["burstiness"]["write"]["idc"][0].as_f64().unwrap();
        assert!(idc > 4.0, "seed {seed}: write IDC at 1 ms {idc}");
    }
}

/// Real write bursts are many single requests and a few very long runs: msr_rsrch_1's writes
/// come in runs (arrivals under 1 ms apart) of 4.51 on average, but the run a write sees is
/// 18.97 long, where geometric batches of that mean give 7.0. The fit gives such a direction's
/// batches a gamma shape (`write_batch_shape`), and the stand-in's runs come within 30 % of the
/// trace's over seeds 1-3 (7.0 with geometric batches). A fit whose runs are not heavier than
/// its stand-in's (msr_cut_thpt) gets no shape.
#[test]
fn heavy_tailed_write_bursts_get_a_batch_shape() {
    let rsrch = bundled("msr_rsrch_1.csv");
    let spec = fitted(&rsrch);
    assert!(spec.contains("write_batch_shape="), "{spec}");
    let runs = |p: &serde_json::Value| p["burstiness"]["write"]["run_seen_mean"].as_f64().unwrap();
    let trace = runs(&profile(&[rsrch.to_str().unwrap()]));
    assert!((18.9..19.0).contains(&trace), "{trace}");
    for_seeds(&spec, |seed, p| {
        let got = runs(p);
        assert!(
            (got - trace).abs() < 0.3 * trace,
            "seed {seed}: the run a write sees {got} (trace {trace})"
        );
    });
    let thpt = fitted(&bundled("msr_cut_thpt.flashnet"));
    assert!(
        thpt.contains("write_batch=") && !thpt.contains("batch_shape"),
        "{thpt}"
    );
}

/// A tail a few long runs make is not shaped: fiu_cheetah's write runs look heavier than
/// msr_rsrch_1's (a write sees 35.0 against a mean of 4.37) but two runs of 155 and 96 writes
/// make most of it, and its excess (30.7) is within two of its jackknife standard errors
/// (19.8) of zero, so its writes keep geometric batches; msr_rsrch_1's (14.5 ± 1.1) is shaped
/// (above).
#[test]
fn a_tail_of_a_few_runs_gets_no_shape() {
    let fiu = bundled("fiu_cheetah_10k.fiu");
    let w = &profile(&[fiu.to_str().unwrap()])["burstiness"]["write"];
    let [mean, seen, se] =
        ["run_mean", "run_seen_mean", "run_excess_se"].map(|k| w[k].as_f64().unwrap());
    assert!(seen - mean > 25.0 && seen - mean < 2.0 * se, "{w}");
    let spec = fitted(&fiu);
    assert!(!spec.contains("write_batch_shape"), "{spec}");
}

/// mqsim_tpcc's 8 KiB records sit off page alignment: 86 % of its requests start on an odd
/// page (`start_residues.all_pct`), which under static striping loads the odd dies twice as
/// much as the even ones. Its fitted stand-in without the residue laws `trace fit` gives each
/// direction starts half its requests on odd pages; given the trace's residues as one law
/// (`start_residues`) instead, it comes within 3 points of the trace's odd share over seeds 1-3.
#[test]
fn start_page_residues_carry_into_a_stand_in() {
    let odd = |p: &serde_json::Value| -> f64 {
        let r = p["start_residues"]["all_pct"].as_array().unwrap();
        r.iter()
            .skip(1)
            .step_by(2)
            .map(|x| x.as_f64().unwrap())
            .sum()
    };
    let tpcc = bundled("mqsim_tpcc_small.disksim");
    let stats = profile(&[tpcc.to_str().unwrap()]);
    let trace = odd(&stats);
    assert!((85.0..87.0).contains(&trace), "{trace}");
    let spec: String = fitted(&tpcc)
        .split(',')
        .filter(|kv| !kv.contains("start_residues="))
        .collect::<Vec<_>>()
        .join(",");
    let plain = odd(&profile(&["--synth", &spec]));
    assert!((plain - 50.0).abs() < 3.0, "{plain}");
    let weights: Vec<String> = stats["start_residues"]["all_pct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.to_string())
        .collect();
    let spec = spec.replace(
        ",seed=1",
        &format!(",start_residues={},seed=1", weights.join("|")),
    );
    for_seeds(&spec, |seed, p| {
        let got = odd(p);
        assert!(
            (got - trace).abs() < 3.0,
            "seed {seed}: {got} % of requests start on odd pages (trace {trace} %)"
        );
    });
}

/// msr_cut_rw_40_60 writes a page again right after writing it (32.4 % of its writes start on
/// a page the write before wrote; every copy goes to one die), in long runs of one page (a
/// write sees a run of 4.23 writes of its page): the fit's `rewrite` and `rewrite_shape` give
/// its stand-in the share within 3 points on average over seeds 1-3 (heavy-tailed runs spread
/// one draw's share: 30.1-35.8 % over seeds 1-5) and the runs within 30 % at each (1.3 % and
/// 1.0 without them; 1.9, geometric runs, with the share alone).
#[test]
fn writes_of_the_page_just_written_are_fitted() {
    let cut = bundled("msr_cut_rw_40_60.flashnet");
    let spec = fitted(&cut);
    assert!(
        spec.contains(",rewrite=") && spec.contains(",rewrite_shape="),
        "{spec}"
    );
    let stats = |p: &serde_json::Value| {
        let u = &p["reuse"];
        [&u["rewrite_pct"], &u["rewrite_run_seen_mean"]].map(|x| x.as_f64().unwrap())
    };
    let [share, runs] = stats(&profile(&[cut.to_str().unwrap()]));
    assert!(
        (32.0..33.0).contains(&share) && (4.2..4.3).contains(&runs),
        "{share} {runs}"
    );
    let shares = std::cell::RefCell::new(Vec::new());
    for_seeds(&spec, |seed, p| {
        let [s, r] = stats(p);
        shares.borrow_mut().push(s);
        assert!(
            (r - runs).abs() < 0.3 * runs,
            "seed {seed}: {s} % of writes re-write in runs of {r} (trace {share} %, {runs})"
        );
    });
    let shares = shares.into_inner();
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    assert!((mean - share).abs() < 3.0, "{mean} (trace {share})");
}

/// Calls `check` with the profile of `spec` at seeds 1-3.
fn for_seeds(spec: &str, check: impl Fn(u64, &serde_json::Value)) {
    for seed in 1..=3 {
        let s = spec.replace("seed=1", &format!("seed={seed}"));
        check(seed, &profile(&["--synth", &s]));
    }
}

/// financial1's interleaved streams of 12 KiB reads at an 8 KiB stride start 63.8 % of its
/// reads inside a read about two back: `trace fit` sets `reread_inside`, so its stand-ins read
/// about as many distinct pages as the trace (3,876) instead of re-reading start pages over
/// and over (the same spec without the key: under half as many, the hot set HotR fed on).
#[test]
fn reads_inside_earlier_reads_are_fitted() {
    let fin = bundled("financial1_10k.disksim");
    let spec = fitted(&fin);
    assert!(spec.contains(",reread_inside="), "{spec}");
    let stats = |p: &serde_json::Value| {
        [
            &p["read_popularity"]["pages"],
            &p["reuse"]["reread_inside_pct"],
        ]
        .map(|x| x.as_f64().unwrap())
    };
    let [pages, inside] = stats(&profile(&[fin.to_str().unwrap()]));
    assert!(
        pages == 3876.0 && (63.0..64.0).contains(&inside),
        "{pages} {inside}"
    );
    for_seeds(&spec, |seed, p| {
        let [n, i] = stats(p);
        assert!(
            n > 0.75 * pages && i > 30.0,
            "seed {seed}: {n} read pages, {i} % inside (trace {pages}, {inside} %)"
        );
    });
    let without: String = spec
        .split(',')
        .filter(|kv| !kv.starts_with("reread_inside="))
        .collect::<Vec<_>>()
        .join(",");
    let [n, _] = stats(&profile(&["--synth", &without]));
    assert!(n < 0.5 * pages, "without reread_inside: {n} read pages");
}

/// mqsim_tpcc's 8 KiB records off page alignment start 87 % of its reads and 85 % of its
/// writes on odd pages: `trace fit` gives each half of the footprint its direction's residue
/// law, and the stand-ins start their reads and writes on odd pages as the trace does.
#[test]
fn start_residues_of_each_direction_are_fitted() {
    let tpcc = bundled("mqsim_tpcc_small.disksim");
    let spec = fitted(&tpcc);
    assert!(
        spec.contains(",read_start_residues=") && spec.contains(",write_start_residues="),
        "{spec}"
    );
    let odd = |p: &serde_json::Value| {
        ["read_pct", "write_pct"].map(|k| {
            let pct = p["start_residues"][k].as_array().unwrap();
            pct.iter()
                .skip(1)
                .step_by(2)
                .map(|x| x.as_f64().unwrap())
                .sum::<f64>()
        })
    };
    let [r, w] = odd(&profile(&[tpcc.to_str().unwrap()]));
    assert!(
        (86.0..88.0).contains(&r) && (84.0..87.0).contains(&w),
        "{r} {w}"
    );
    for_seeds(&spec, |seed, p| {
        let [sr, sw] = odd(p);
        assert!(
            (sr - r).abs() < 4.0 && (sw - w).abs() < 4.0,
            "seed {seed}: reads {sr} %, writes {sw} % on odd pages (trace {r}, {w})"
        );
    });
}
