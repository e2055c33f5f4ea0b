//! The scheme registry end to end: every scheme runs with verification and reports its own
//! name; every pair either runs or is refused naming both schemes; `config show` output
//! reloads to the same config.

use crate::run_synth;
use ssdlab::config::{Config, ConfigBuilder, ConfigError};
use ssdlab::schemes::{self, Scheme, SCHEMES};

/// A short mixed workload with shared contents (ignored by schemes without dedup).
const MIX: &str = "requests=400,write_ratio=0.5,size_kib=4|8,iat_us=300,footprint_gib=0.01,zipf=0.8,dedup=0.3,seed=3";

/// A small drive every scheme fits on: two channels (Rails mirrors one onto the other, TTFlash
/// stripes 1+1), preconditioned so GC runs, with a device buffer unless dedup is in the set
/// (the dedup layer refuses one) and a small host buffer where a ShadowGC scheme wants one.
fn config(spec: &str) -> Result<Config, ConfigError> {
    let chosen = schemes::parse(spec).map_err(|e| ConfigError::Scheme(e.0))?;
    let mut b = ConfigBuilder::preset("tiny")?
        .scheme(spec)
        .set("geometry.channels=2")?
        .set("ftl.over_provisioning=0.25")?
        .set("precondition.fill=0.7")?
        .set("precondition.pattern=random")?
        .set("redundancy.ttflash_k=1")?;
    let wants = |key: &str| chosen.iter().any(|s| s.sets.iter().any(|(k, _)| *k == key));
    if !wants("dedup.enabled") {
        b = b.set("buffer.device_pages=32")?;
    }
    if wants("buffer.host_pages") {
        b = b.set("buffer.host_pages=32")?;
    }
    b.build()
}

/// The label a request should report: its schemes minus the baseline (unless alone) and
/// minus those another requested scheme contains, in registry order.
fn expected_label(chosen: &[&'static Scheme]) -> String {
    let shown: Vec<&Scheme> = chosen
        .iter()
        .copied()
        .filter(|s| s.name != "baseline")
        .filter(|s| !chosen.iter().any(|o| o.implies.contains(&s.name)))
        .collect();
    if shown.is_empty() {
        "baseline".into()
    } else {
        schemes::join(&shown)
    }
}

fn run_verified(spec: &str) -> String {
    let cfg = config(spec).unwrap_or_else(|e| panic!("--scheme {spec}: {e}"));
    let s = run_synth(&cfg, MIX, 1, true);
    assert_eq!(s.requests, 400, "--scheme {spec}");
    s.scheme
}

#[test]
fn every_scheme_runs_verified_and_reports_its_name() {
    for s in SCHEMES {
        assert_eq!(run_verified(s.name), s.name);
    }
}

#[test]
fn every_pair_runs_verified_or_is_refused_naming_both() {
    let (mut ran, mut refused) = (0, 0);
    for (i, a) in SCHEMES.iter().enumerate() {
        for b in &SCHEMES[i + 1..] {
            let spec = format!("{}+{}", a.name, b.name);
            match schemes::parse(&spec) {
                Ok(chosen) => {
                    assert_eq!(run_verified(&spec), expected_label(&chosen), "{spec}");
                    ran += 1;
                }
                Err(e) => {
                    assert!(
                        e.0.contains(&format!("`{}`", a.name))
                            && e.0.contains(&format!("`{}`", b.name)),
                        "{spec}: {e}"
                    );
                    refused += 1;
                }
            }
        }
    }
    assert_eq!(ran + refused, SCHEMES.len() * (SCHEMES.len() - 1) / 2);
    assert!(ran > refused, "{ran} pairs ran, {refused} refused");
}

#[test]
fn the_matrix_in_the_docs_is_current() {
    let doc = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemes/README.md"),
    )
    .expect("docs/schemes/README.md exists");
    assert!(
        doc.contains(&schemes::matrix_markdown()),
        "docs/schemes/README.md does not hold the current pair matrix: paste `ssdlab schemes --matrix`"
    );
}

#[test]
fn config_show_reloads_to_the_same_hash() {
    for s in SCHEMES {
        let cfg = config(s.name).unwrap();
        let again = ConfigBuilder::preset("hotr")
            .unwrap()
            .overlay_toml(&cfg.to_toml_full(), "shown")
            .unwrap()
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert_eq!(cfg.hash(), again.hash(), "{}", s.name);
        assert_eq!(cfg, again, "{}", s.name);
    }
}

#[test]
fn a_set_alone_reports_the_scheme_it_turns_on() {
    let cfg = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("geometry.channels=2")
        .unwrap()
        .set("staging.design=extra-chip")
        .unwrap()
        .set("suspend.policy=ipc")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(cfg.scheme, "hotr+ipc");
}

#[test]
fn presets_enable_no_scheme() {
    for p in ssdlab::config::PRESETS {
        assert_eq!(
            Config::preset(p.name).unwrap().scheme,
            "baseline",
            "{}",
            p.name
        );
    }
}

#[test]
fn a_requested_scheme_turned_off_by_a_set_is_refused() {
    let e = ConfigBuilder::preset("tiny")
        .unwrap()
        .scheme("hotr")
        .set("staging.design=none")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("`hotr`") && e.contains("not in force"), "{e}");
}

#[test]
fn scheme_parameters_are_validated_and_owned() {
    let build = |scheme: Option<&str>, set: &str| {
        let mut b = ConfigBuilder::preset("tiny").unwrap();
        if let Some(s) = scheme {
            b = b.scheme(s);
        }
        b.set(set).unwrap().build()
    };
    let cfg = build(Some("gc-preempt"), "gc-preempt.hard_floor=0.1").unwrap();
    assert_eq!(cfg.param("gc-preempt", "hard_floor"), 0.1);
    let e = build(Some("gc-preempt"), "gc-preempt.hard_floor=1.5").unwrap_err();
    assert!(e.to_string().contains("gc-preempt.hard_floor = 1.5"), "{e}");
    let e = build(Some("gc-preempt"), "gc-preempt.floor=0.1").unwrap_err();
    assert!(e.to_string().contains("unknown parameter"), "{e}");
    let e = build(None, "gc-preempt.hard_floor=0.1").unwrap_err();
    assert!(e.to_string().contains("not selected"), "{e}");
}

#[test]
fn preemptible_gc_defers_gc_behind_host_work() {
    let sets = |scheme: &str| {
        ConfigBuilder::preset("tiny")
            .unwrap()
            .scheme(scheme)
            .set("precondition.fill=0.85")
            .unwrap()
            .set("precondition.pattern=random")
            .unwrap()
            .build()
            .unwrap()
    };
    let run = |scheme: &str, iat_us: u32| {
        let spec =
            format!("requests=3000,write_ratio=0.5,iat_us={iat_us},footprint_gib=0.01,seed=4");
        run_synth(&sets(scheme), &spec, 1, true)
    };
    // With idle time between bursts, GC moves out of the reads' way.
    let (background, preempt) = (run("baseline", 1000), run("gc-preempt", 1000));
    assert!(background.gc.count > 0 && preempt.gc.count > 0);
    assert!(background.scheme_metrics.is_empty());
    assert!(preempt.scheme_metrics["gc-preempt.deferred"] > 0.0);
    assert!(
        preempt.read_wait_us["gc"] < background.read_wait_us["gc"] / 2.0
            && preempt.read.mean_us < background.read.mean_us,
        "read wait behind GC: preemptible {} vs background {}",
        preempt.read_wait_us["gc"],
        background.read_wait_us["gc"]
    );
    // Saturated, the planes reach the floor and GC takes the die first.
    let saturated = run("gc-preempt", 400);
    assert!(saturated.scheme_metrics["gc-preempt.urgent"] > 0.0);
}

#[test]
fn gc_modes_order_gc_against_host_work_and_preemptive_is_the_gc_preempt_scheme() {
    let cfg = |mode: &str| {
        ConfigBuilder::preset("tiny")
            .unwrap()
            .set("precondition.fill=0.85")
            .unwrap()
            .set("precondition.pattern=random")
            .unwrap()
            .set(&format!("ftl.gc_mode={mode}"))
            .unwrap()
            .build()
            .unwrap()
    };
    assert_eq!(cfg("preemptive").scheme, "gc-preempt");
    assert_eq!(cfg("preemptive").param("gc-preempt", "hard_floor"), 0.005);
    assert_eq!(cfg("urgent").scheme, "baseline");
    assert!(cfg("urgent").to_toml().contains("gc_mode = \"urgent\""));
    assert!(!cfg("background").to_toml().contains("gc_mode"));
    let spec = "requests=3000,write_ratio=0.5,iat_us=1000,footprint_gib=0.01,seed=4";
    let run = |mode: &str| run_synth(&cfg(mode), spec, 1, true);
    let (background, urgent, preemptive) = (run("background"), run("urgent"), run("preemptive"));
    assert!(urgent.scheme_metrics["gc_mode.urgent_first"] > 0.0);
    assert!(preemptive.scheme_metrics["gc-preempt.deferred"] > 0.0);
    // Reads wait behind GC most when GC goes first, least when it yields.
    let gc_wait = |s: &ssdlab::metrics::Summary| s.read_wait_us["gc"];
    assert!(
        gc_wait(&urgent) > gc_wait(&background) && gc_wait(&background) > gc_wait(&preemptive),
        "read wait behind GC: urgent {} background {} preemptive {}",
        gc_wait(&urgent),
        gc_wait(&background),
        gc_wait(&preemptive)
    );
}

/// `urgent-chip` holds a die's host work while GC work waits on any die of its chip (MQSim's
/// per-chip transaction queues), so on a two-die chip reads wait behind GC longer than with
/// `urgent`, and every die still gets its turn (the runs complete, verified).
#[test]
fn chip_scoped_urgent_gc_holds_host_work_of_the_whole_chip() {
    let run = |mode: &str| {
        let cfg = crate::config(
            "tiny",
            &[
                "geometry.dies_per_chip=2",
                "precondition.fill=0.85",
                "precondition.pattern=random",
                &format!("ftl.gc_mode={mode}"),
            ],
        );
        let spec = "requests=3000,write_ratio=0.5,iat_us=500,footprint_gib=0.02,seed=4";
        run_synth(&cfg, spec, 1, true)
    };
    let (die, chip) = (run("urgent"), run("urgent-chip"));
    assert_eq!(die.requests, chip.requests);
    assert!(
        chip.read_wait_us["gc"] > die.read_wait_us["gc"],
        "read wait behind GC: chip {} die {}",
        chip.read_wait_us["gc"],
        die.read_wait_us["gc"]
    );
    assert!(
        chip.scheme_metrics["gc_mode.urgent_first"] > die.scheme_metrics["gc_mode.urgent_first"]
    );
}

/// The core (`src/sim/`) calls policy slots and names no scheme: scheme logic lives in
/// `src/schemes/`. Allowed: `Vec::dedup` and the summary sections policies fill in.
#[test]
fn the_core_names_no_scheme() {
    const NAMES: &[&str] = &[
        "hotr", "deduphr", "dedup", "rails", "ttflash", "shadow", "shadowgc", "hire", "hvc", "lvc",
        "ggc", "zgc", "hgc", "dgc", "sgc",
    ];
    const ALLOWED: &[&str] = &["touched.dedup()", "dedup: None,", "shadow: None,"];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if ALLOWED.iter().any(|a| line.contains(a)) {
                continue;
            }
            let lower = line.to_lowercase();
            let words = lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            if let Some(w) = words.into_iter().find(|w| NAMES.contains(w)) {
                found.push(format!("{}:{}: {w}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "scheme names in the core:\n{}",
        found.join("\n")
    );
}

#[test]
fn several_gc_jobs_per_plane_run_at_once_up_to_the_limit() {
    let run = |jobs: u32| {
        let cfg = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("geometry.planes_per_die=2")
            .unwrap()
            .set("geometry.pages_per_block=8")
            .unwrap()
            .set("ftl.over_provisioning=0.2")
            .unwrap()
            .set("ftl.gc_threshold=0.15")
            .unwrap()
            .set("ftl.gc_mode=urgent")
            .unwrap()
            .set(&format!("ftl.gc_jobs_per_plane={jobs}"))
            .unwrap()
            .set("precondition.fill=0.95")
            .unwrap()
            .set("precondition.pattern=random")
            .unwrap()
            .build()
            .unwrap();
        let spec = "requests=4000,write_ratio=0.85,iat_us=60,footprint_gib=0.003,seed=3";
        run_synth(&cfg, spec, 3, true)
    };
    let (one, four) = (run(1), run(4));
    assert!(one.gc.max_concurrent == 1 && one.gc.count > 0);
    assert!(
        four.gc.max_concurrent > 1 && four.gc.max_concurrent <= 4,
        "{:?}",
        four.gc
    );
    assert_eq!(four.requests, 4000);
}
