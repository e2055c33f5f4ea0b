//! Time compression: the idle fraction of a workload on a drive, and the time scale that brings
//! it to a target (pe-suspension.txt §3.1 compresses its traces from ~98 % to ~70 % idle).
//!
//! *Idle* is the fraction of the simulated span — first arrival to last completion — during
//! which no host request is outstanding (queued or in service anywhere in the drive). It is
//! measured by simulation, so it accounts for the drive's own speed, GC and queueing.

use crate::config::{Config, ConfigBuilder};
use crate::experiment::{ExperimentError, Point, WorkloadRef};

/// One measurement: `(time_scale, idle %)`.
pub type Probe = (f64, f64);

fn idle_at(
    preset: &str,
    sets: &[String],
    source: &WorkloadRef,
    seed: u64,
    scale: f64,
) -> Result<f64, ExperimentError> {
    let mut sets = sets.to_vec();
    sets.push(format!("host.time_scale={scale}"));
    let point = Point {
        id: format!("idle@{scale}"),
        workload: "calibrate".into(),
        variant: "calibrate".into(),
        grid: Default::default(),
        preset: preset.to_string(),
        scheme: None,
        sets,
        seed,
        replica: 0,
        verify: false,
        source: source.clone(),
    };
    let r = point.run(String::new(), crate::sim::memory::default_limit())?;
    Ok(r.summary["idle_pct"].as_f64().unwrap_or(0.0))
}

/// Idle % of `source` on the drive `preset` + `sets` at `time_scale` 1.
///
/// # Errors
/// Config, workload or simulation errors.
pub fn idle_pct(
    preset: &str,
    sets: &[String],
    source: &WorkloadRef,
    seed: u64,
) -> Result<f64, ExperimentError> {
    idle_at(preset, sets, source, seed, 1.0)
}

/// Bisects (on a log scale, 20 steps over 10⁻⁴…10⁴) the `host.time_scale` whose idle % is
/// closest to `target_pct`; returns the best probe and every probe made.
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
    let (mut lo, mut hi) = (1e-4f64.ln(), 1e4f64.ln());
    let mut probes = Vec::new();
    for _ in 0..20 {
        let mid = (lo + hi) / 2.0;
        let scale = mid.exp();
        let idle = idle_at(preset, sets, source, seed, scale)?;
        probes.push((scale, idle));
        // Compressing (smaller scale) lowers the idle fraction.
        if idle > target_pct {
            hi = mid
        } else {
            lo = mid
        }
    }
    let best = *probes
        .iter()
        .min_by(|a, b| {
            (a.1 - target_pct)
                .abs()
                .total_cmp(&(b.1 - target_pct).abs())
        })
        .expect("20 probes");
    Ok((best, probes))
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
