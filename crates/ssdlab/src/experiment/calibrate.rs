//! Calibration (`[calibrate]` of an experiment): one workload parameter (a config key such as
//! `host.time_scale`) searched, for each workload and grid point, on the *baseline* variant
//! only, until one of its metrics reaches a target — a baseline-only figure of the paper (e.g.
//! pe-suspension.txt's "idle time is reduced from 98% to around 70%"). Every variant of that
//! workload and grid point then runs with the value found: the schemes are predictions on the
//! calibrated workload, never inputs to the search.
//!
//! The search is a bisection (on a log scale when both bounds are positive) that assumes the
//! metric moves one way over the range; both bounds are probed first, and a target they do not
//! bracket is reported as not reached with the closer probe. A metric that turns back over the
//! range (reads blocked against the time scale rises with load, then falls once reads queue
//! behind reads) takes `scan = N`: the upper bound and N points below it are probed downwards
//! and the first bracket found is bisected. Results go to
//! `calibration.json` beside `experiment.toml`, each entry with every probe and a hash of what
//! it was found for (the baseline point's configuration, workload and seed, and the
//! `[calibrate]` section), so a changed input is searched again and nothing else is.

use super::point::{hex, seal_digest};
use super::spec::CalibrateSpec;
use super::{grid_label, io_err, ExperimentError, ExperimentSpec, Point};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// File of an experiment directory holding its calibration.
pub const CALIBRATION_FILE: &str = "calibration.json";

/// One run of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The key's value.
    pub value: f64,
    /// The metric the baseline reached with it.
    pub metric: f64,
}

/// The calibration of one workload at one grid point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Workload name.
    pub workload: String,
    /// Grid point label (empty without a grid).
    pub grid: String,
    /// The variant every probe ran (the experiment's baseline).
    pub variant: String,
    /// The key searched.
    pub key: String,
    /// The value found: the probe closest to the target, or with `scan` the highest value within
    /// the tolerance.
    pub value: f64,
    /// The metric's path.
    pub metric: String,
    /// The target.
    pub target: f64,
    /// The metric reached with `value`.
    pub reached: f64,
    /// Whether `reached` is within the tolerance of the target.
    pub within_tolerance: bool,
    /// Every probe, in the order run.
    pub probes: Vec<Probe>,
    /// Hash of the inputs it was found for.
    pub inputs: String,
    /// SHA-256 of this entry with this field empty: an entry edited by hand or damaged is
    /// searched again, never used (as results are sealed).
    #[serde(default)]
    pub content_hash: String,
}

impl Entry {
    fn digest(&self) -> String {
        let mut bare = self.clone();
        bare.content_hash.clear();
        seal_digest(&bare)
    }

    fn sealed(mut self) -> Self {
        self.content_hash = self.digest();
        self
    }

    /// Whether the entry is as the search wrote it for `c`: its hash matches, and its value is
    /// one of its probes, inside the search's range.
    fn intact(&self, c: &CalibrateSpec) -> bool {
        let [lo, hi] = c.range;
        self.content_hash == self.digest()
            && (lo..=hi).contains(&self.value)
            && self.probes.iter().any(|p| p.value == self.value)
    }
}

/// Calibrated values by workload and grid point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Entries keyed by `"<workload> <grid label>"`.
    pub entries: BTreeMap<String, Entry>,
}

fn entry_key(workload: &str, grid: &BTreeMap<String, String>) -> String {
    format!("{workload} {}", grid_label(grid))
        .trim_end()
        .to_string()
}

impl Calibration {
    /// The value found for `workload` at grid point `grid`, if any.
    pub fn value(&self, workload: &str, grid: &BTreeMap<String, String>) -> Option<f64> {
        self.entries
            .get(&entry_key(workload, grid))
            .map(|e| e.value)
    }
}

/// The calibration stored in `dir` (empty without `[calibrate]`, or when the file is missing or
/// unreadable: its points then have no current result until calibration runs).
/// Entries that are not intact (edited by hand, damaged, outside the range) are left out: their
/// points are searched again.
pub fn load(spec: &ExperimentSpec, dir: &Path) -> Calibration {
    let Some(c) = &spec.calibrate else {
        return Calibration::default();
    };
    let mut cal: Calibration = std::fs::read_to_string(dir.join(CALIBRATION_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    cal.entries.retain(|_, e| e.intact(c));
    cal
}

/// Writes `cal` to `dir` whole (a temporary file, then a rename).
fn store(dir: &Path, cal: &Calibration) -> Result<(), ExperimentError> {
    let path = dir.join(CALIBRATION_FILE);
    let text = serde_json::to_string_pretty(cal).expect("calibrations serialise") + "\n";
    crate::files::write_whole(&path, text.as_bytes()).map_err(io_err(&path))
}

/// The baseline points the search runs on, one per workload and grid point, uncalibrated,
/// each with the hash of what its entry is found for: the point (config, workload, seed) and
/// the `[calibrate]` section. Workloads are fingerprinted once, as for the points' own hashes.
fn targets(
    spec: &ExperimentSpec,
    c: &CalibrateSpec,
    dir: &Path,
) -> Result<Vec<(Point, String)>, ExperimentError> {
    let points: Vec<Point> = spec
        .points_with(dir, &Calibration::default())
        .into_iter()
        // The first run's seed: a workload parameter is found once per workload and grid point
        // and every replica runs with it.
        .filter(|p| p.variant == c.variant && p.replica == 0)
        .collect();
    let section = serde_json::to_string(c).expect("calibrate specs serialise");
    super::runner::hashes(&points)
        .into_iter()
        .zip(points)
        .map(|(hash, p)| {
            let mut h = Sha256::new();
            h.update(hash?.as_bytes());
            h.update(&section);
            Ok((p, hex(&h.finalize()[..8])))
        })
        .collect()
}

/// Workloads and grid points whose stored calibration is missing or was found for other
/// inputs (empty without `[calibrate]`).
///
/// # Errors
/// Config or workload errors.
pub fn stale(spec: &ExperimentSpec, dir: &Path) -> Result<Vec<String>, ExperimentError> {
    let Some(c) = &spec.calibrate else {
        return Ok(Vec::new());
    };
    let have = load(spec, dir);
    let mut out = Vec::new();
    for (p, inputs) in targets(spec, c, dir)? {
        let key = entry_key(&p.workload, &p.grid);
        if have.entries.get(&key).map(|e| &e.inputs) != Some(&inputs) {
            out.push(key);
        }
    }
    Ok(out)
}

/// Searches every workload and grid point whose calibration is missing or stale, `jobs` at a
/// time, and stores the file; returns the calibration and how many entries were searched.
///
/// # Errors
/// Config, workload, simulation or I/O errors (the first of them; nothing is stored then).
pub fn calibrate(
    spec: &ExperimentSpec,
    dir: &Path,
    jobs: usize,
) -> Result<(Calibration, usize), ExperimentError> {
    let Some(c) = &spec.calibrate else {
        return Ok((Calibration::default(), 0));
    };
    let have = load(spec, dir);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| ExperimentError::Run {
            point: "calibration".into(),
            message: e.to_string(),
        })?;
    let targets = targets(spec, c, dir)?;
    // Entries still current are kept (those of other inputs or of points gone are dropped);
    // each search is stored as soon as it finishes (a killed calibration loses only the
    // searches under way).
    let wanted: BTreeMap<String, String> = targets
        .iter()
        .map(|(p, inputs)| (entry_key(&p.workload, &p.grid), inputs.clone()))
        .collect();
    let current = |k: &String, e: &Entry| wanted.get(k) == Some(&e.inputs);
    let store_lock = std::sync::Mutex::new(Calibration {
        entries: have
            .entries
            .iter()
            .filter(|(k, e)| current(k, e))
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect(),
    });
    let found: Vec<Result<bool, ExperimentError>> = pool.install(|| {
        targets
            .into_par_iter()
            .map(|(p, inputs)| {
                let key = entry_key(&p.workload, &p.grid);
                if have.entries.get(&key).is_some_and(|e| current(&key, e)) {
                    return Ok(false);
                }
                let e = search(c, &p, inputs)?.sealed();
                let mut cal = store_lock.lock().expect("no search panics holding it");
                cal.entries.insert(key, e);
                store(dir, &cal)?;
                Ok(true)
            })
            .collect()
    });
    let mut searched = 0;
    for r in found {
        searched += usize::from(r?);
    }
    let out = store_lock
        .into_inner()
        .expect("no search panics holding it");
    if out != have {
        store(dir, &out)?;
    }
    Ok((out, searched))
}

/// The search for one run outside an experiment (`ssdlab trace stats --target-idle`): the
/// probe taken and every probe made.
///
/// # Errors
/// Config, workload or simulation errors, or a metric the run does not have.
pub fn search_one(c: &CalibrateSpec, p: &Point) -> Result<(Probe, Vec<Probe>), ExperimentError> {
    let e = search(c, p, String::new())?;
    Ok((
        Probe {
            value: e.value,
            metric: e.reached,
        },
        e.probes,
    ))
}

/// The search for one baseline point.
fn search(c: &CalibrateSpec, p: &Point, inputs: String) -> Result<Entry, ExperimentError> {
    let probes = probe(c, |value| {
        let mut q = p.clone();
        q.sets.push(format!("{}={value}", c.key));
        q.id = format!("{}@{}={value}", p.id, c.key);
        q.verify = false;
        let r = q.run(String::new(), crate::sim::memory::default_limit())?;
        crate::metrics::metric(&r.summary, &c.metric).ok_or_else(|| ExperimentError::Run {
            point: q.id.clone(),
            message: format!(
                "calibrate.metric = `{}`: not a number in this run's summary",
                c.metric
            ),
        })
    })?;
    let close = |m: f64| (m - c.target).abs() <= c.tolerance;
    let best = best(c, &probes).clone();
    Ok(Entry {
        workload: p.workload.clone(),
        grid: grid_label(&p.grid),
        variant: p.variant.clone(),
        key: c.key.clone(),
        value: best.value,
        metric: c.metric.clone(),
        target: c.target,
        reached: best.metric,
        within_tolerance: close(best.metric),
        probes,
        inputs,
        content_hash: String::new(),
    })
}

/// The probes of the search, in the order run; `metric_at` runs the baseline with the key at a
/// value.
fn probe<E>(
    c: &CalibrateSpec,
    mut metric_at: impl FnMut(f64) -> Result<f64, E>,
) -> Result<Vec<Probe>, E> {
    let [lo, hi] = c.range;
    let log = lo > 0.0;
    let to_x = |v: f64| if log { v.ln() } else { v };
    let from_x = |x: f64| if log { x.exp() } else { x };
    let mut probes: Vec<Probe> = Vec::new();
    let mut run = |value: f64| -> Result<f64, E> {
        let metric = metric_at(value)?;
        probes.push(Probe { value, metric });
        Ok(metric)
    };
    let close = |m: f64| (m - c.target).abs() <= c.tolerance;
    let brackets = |fa: f64, fb: f64| {
        !close(fa) && !close(fb) && (fa - c.target).signum() != (fb - c.target).signum()
    };
    let (mut a, mut b) = (to_x(lo), to_x(hi));
    let mut runs = 0;
    // `Some(metric at a)` once [a, b] brackets the target.
    let bracket = if c.scan == 0 {
        let fa = run(lo)?;
        let fb = run(hi)?;
        runs += 2;
        brackets(fa, fb).then_some(fa)
    } else {
        // Downwards from the upper bound until two neighbours bracket the target.
        let (top, bottom) = (b, a);
        let at = |i: u32| top - (top - bottom) * f64::from(i) / f64::from(c.scan + 1);
        let mut upper = run(hi)?;
        runs += 1;
        let mut found = None;
        if !close(upper) {
            for i in 1..=c.scan + 1 {
                let f = run(from_x(at(i)))?;
                runs += 1;
                if close(f) {
                    break;
                }
                if brackets(f, upper) {
                    (a, b) = (at(i), at(i - 1));
                    found = Some(f);
                    break;
                }
                upper = f;
            }
        }
        found
    };
    if let Some(fa) = bracket {
        let below_at_a = fa < c.target;
        while runs < c.max_runs {
            let mid = (a + b) / 2.0;
            let fm = run(from_x(mid))?;
            runs += 1;
            if close(fm) {
                break;
            }
            if (fm < c.target) == below_at_a {
                a = mid;
            } else {
                b = mid;
            }
        }
    }
    Ok(probes)
}

/// The probe taken: with `scan`, the highest value within the tolerance (the crossing nearest
/// the upper bound); otherwise, or when none is within it, the closest to the target.
fn best<'a>(c: &CalibrateSpec, probes: &'a [Probe]) -> &'a Probe {
    let gap = |p: &Probe| (p.metric - c.target).abs();
    let within = probes
        .iter()
        .filter(|p| gap(p) <= c.tolerance)
        .max_by(|x, y| x.value.total_cmp(&y.value));
    match within {
        Some(p) if c.scan > 0 => p,
        _ => probes
            .iter()
            .min_by(|x, y| gap(x).total_cmp(&gap(y)))
            .expect("one probe at least"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(scan: u32) -> CalibrateSpec {
        CalibrateSpec {
            variant: "baseline".into(),
            key: "host.time_scale".into(),
            range: [0.001, 10.0],
            metric: "reads_blocked_pct".into(),
            target: 40.0,
            tolerance: 1.0,
            max_runs: 30,
            scan,
        }
    }

    /// Reads blocked against the time scale: rises as load grows (smaller scale), peaks at
    /// 0.1 and falls again when saturated, below the target at both bounds.
    fn hump(scale: f64) -> Result<f64, ()> {
        let x = scale.log10() + 1.0;
        Ok(90.0 * (-x * x).exp())
    }

    #[test]
    fn a_target_both_bounds_miss_is_found_by_the_scan_at_the_lighter_crossing() {
        assert!(hump(0.001).unwrap() < 40.0 && hump(10.0).unwrap() < 40.0);
        let plain = probe(&spec(0), hump).unwrap();
        assert_eq!(plain.len(), 2, "{plain:?}");
        assert!((best(&spec(0), &plain).metric - 40.0).abs() > 1.0);
        let c = spec(6);
        let scanned = probe(&c, hump).unwrap();
        let b = best(&c, &scanned);
        assert!((b.metric - 40.0).abs() <= 1.0, "{scanned:?}");
        // Two crossings, at 10^(-1 ± 0.9): the one above the peak is taken.
        assert!(b.value > 0.1, "{b:?}");
        assert!(scanned.len() <= 30);
    }

    #[test]
    fn without_a_scan_the_bounds_are_probed_then_bisected() {
        let falling = |scale: f64| -> Result<f64, ()> { Ok(50.0 - 10.0 * scale.log10()) };
        let p = probe(&spec(0), falling).unwrap();
        assert_eq!((p[0].value, p[1].value), (0.001, 10.0));
        assert!((best(&spec(0), &p).metric - 40.0).abs() <= 1.0);
    }
}
