//! Time compression: the idle fraction of a workload on a drive, and the time scale that brings
//! it to a target (pe-suspension.txt §3.1 compresses its traces from ~98 % to ~70 % idle).
//!
//! *Idle* is the fraction of the simulated span — first arrival to last completion — during
//! which no host request is outstanding (queued or in service anywhere in the drive). It is
//! measured by simulation, so it accounts for the drive's own speed, GC and queueing. The
//! search is the experiments' calibration ([`crate::experiment::calibrate`]) with `idle_pct` as
//! its metric: one mechanism for both.

use crate::config::{Config, ConfigBuilder};
use crate::experiment::calibrate::Probe;
use crate::experiment::{CalibrateSpec, ExperimentError, Point, WorkloadRef};

/// The run of `source` on the drive `preset` + `sets` that a search varies.
fn point(preset: &str, sets: &[String], source: &WorkloadRef, seed: u64) -> Point {
    Point {
        id: "idle".into(),
        workload: "calibrate".into(),
        variant: "calibrate".into(),
        grid: Default::default(),
        preset: preset.to_string(),
        scheme: None,
        sets: sets.to_vec(),
        seed,
        replica: 0,
        verify: false,
        source: source.clone(),
    }
}

/// Idle % of `source` on the drive `preset` + `sets` as given.
///
/// # Errors
/// Config, workload or simulation errors.
pub fn idle_pct(
    preset: &str,
    sets: &[String],
    source: &WorkloadRef,
    seed: u64,
) -> Result<f64, ExperimentError> {
    let r = point(preset, sets, source, seed)
        .run(String::new(), crate::sim::memory::default_limit())?;
    Ok(r.summary["idle_pct"].as_f64().unwrap_or(0.0))
}

/// The `host.time_scale` (searched over 10⁻⁴ … 10⁴ on a log scale, at most 20 runs, stopping
/// within 0.5 points) whose idle % is closest to `target_pct`; returns the probe taken and
/// every probe made, in order.
///
/// # Errors
/// Config, workload or simulation errors.
pub fn scale_for_idle(
    preset: &str,
    sets: &[String],
    source: &WorkloadRef,
    seed: u64,
    target_pct: f64,
) -> Result<(Probe, Vec<Probe>), ExperimentError> {
    let c = CalibrateSpec {
        variant: "calibrate".into(),
        key: "host.time_scale".into(),
        range: [1e-4, 1e4],
        metric: "idle_pct".into(),
        target: target_pct,
        tolerance: 0.5,
        max_runs: 20,
        scan: 0,
    };
    crate::experiment::calibrate::search_one(&c, &point(preset, sets, source, seed))
}

/// Validates `preset` + `sets` (so a bad key is reported before any simulation runs).
///
/// # Errors
/// The config error naming the key.
pub fn check(preset: &str, sets: &[String]) -> Result<Config, crate::config::ConfigError> {
    sets.iter()
        .try_fold(ConfigBuilder::preset(preset)?, |b, s| b.set(s))?
        .build()
}
