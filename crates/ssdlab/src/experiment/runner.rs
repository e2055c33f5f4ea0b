//! Running points in parallel with resume, planning jobs for other machines, loading results.

use super::{io_err, ExperimentError, ExperimentSpec, JobSpec, Point, PointResult};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Subdirectory of an experiment holding one JSON result per point.
pub const RESULTS_DIR: &str = "results";

/// What happened to one point.
#[derive(Debug)]
pub enum PointOutcome {
    /// A result with the same hash already existed.
    Skipped(String),
    /// Ran and stored.
    Done(String),
    /// Failed; the others went on.
    Failed(String, ExperimentError),
}

fn result_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("{id}.json"))
}

/// Writes a result or job file whole ([`crate::files::write_whole`]), so an interrupted run
/// never leaves a half-written result that would later count as finished.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), ExperimentError> {
    crate::files::write_whole(path, text.as_bytes()).map_err(io_err(path))
}

/// Hashes of points, fingerprinting each distinct workload once; a point whose config or
/// workload is broken gets its error, the others their hash.
pub(super) fn hashes(points: &[Point]) -> Vec<Result<String, ExperimentError>> {
    let mut fingerprints: std::collections::BTreeMap<String, Result<String, String>> =
        Default::default();
    points
        .iter()
        .map(|p| {
            let key = serde_json::to_string(&p.source).expect("workload refs serialise");
            let fp = fingerprints
                .entry(key)
                .or_insert_with(|| p.source.fingerprint().map_err(|e| e.to_string()))
                .clone()
                .map_err(|message| ExperimentError::Run {
                    point: p.id.clone(),
                    message,
                })?;
            p.hash_with(&fp)
        })
        .collect()
}

/// Name of the lock file in an experiment directory.
pub const LOCK_FILE: &str = ".ssdlab-lock";

/// The exclusive hold of an experiment directory by this process (an OS file lock, released
/// when this value is dropped or the process ends, however it ends).
#[derive(Debug)]
pub struct DirLock {
    _file: std::fs::File,
}

/// Takes the experiment directory `dir` for this process, or fails at once if another holds it.
///
/// # Errors
/// [`ExperimentError::Locked`] if another process holds it; I/O errors.
pub fn lock(dir: &Path) -> Result<DirLock, ExperimentError> {
    use fs4::fs_std::FileExt;
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))?;
    if file.try_lock_exclusive().map_err(io_err(&path))? {
        Ok(DirLock { _file: file })
    } else {
        Err(ExperimentError::Locked {
            path: path.display().to_string(),
        })
    }
}

fn existing_hash(path: &Path) -> Option<String> {
    let text = crate::files::read_text(path).ok()?;
    let r: PointResult = serde_json::from_str(&text).ok()?;
    // A damaged or edited result is run again.
    r.intact().then_some(r.point_hash)
}

/// Runs every point of `spec` not already finished, on `jobs` threads, storing each result as
/// soon as it is done; holds the directory's [`lock`] meanwhile. With `[calibrate]`, the
/// calibration comes first ([`super::calibrate::calibrate`]) and `on_calibrated` hears it and
/// how many entries were searched. `on_outcome` is called after every point (for progress). A failing point
/// is reported and the others continue. With `max_memory`, the points running at once share
/// it: a point starts when its estimate (see [`crate::sim::memory`]) fits in what the running
/// ones leave, so more jobs never make a point fail that fits alone.
///
/// # Errors
/// If the results directory cannot be created or calibration fails; per-point failures are in
/// the outcomes.
pub fn run_points(
    spec: &ExperimentSpec,
    dir: &Path,
    jobs: usize,
    max_memory: Option<u64>,
    on_calibrated: &dyn Fn(&super::calibrate::Calibration, usize),
    on_outcome: &(dyn Fn(&PointOutcome) + Sync),
) -> Result<Vec<PointOutcome>, ExperimentError> {
    let _held = lock(dir)?;
    let budget = max_memory.map(Budget::new);
    let results = dir.join(RESULTS_DIR);
    std::fs::create_dir_all(&results).map_err(io_err(&results))?;
    // The workload parameters the points need are found first, on the baseline only.
    let (calibrated, searched) = super::calibrate::calibrate(spec, dir, jobs)?;
    if spec.calibrate.is_some() {
        on_calibrated(&calibrated, searched);
    }
    let points = spec.points_with(dir, &calibrated);
    let hashes = hashes(&points);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| ExperimentError::Run {
            point: "*".into(),
            message: e.to_string(),
        })?;
    let outcomes = pool.install(|| {
        points
            .par_iter()
            .zip(hashes)
            .map(|(p, hash)| {
                let outcome = run_one(p, hash, dir, budget.as_ref());
                on_outcome(&outcome);
                outcome
            })
            .collect()
    });
    Ok(outcomes)
}

/// Memory shared by the points running at once.
struct Budget {
    total: u64,
    left: std::sync::Mutex<u64>,
    freed: std::sync::Condvar,
}

impl Budget {
    fn new(total: u64) -> Self {
        Budget {
            total,
            left: std::sync::Mutex::new(total),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits until `bytes` are free and takes them (at most the whole budget: a larger point
    /// runs alone and fails on its own estimate).
    fn take(&self, bytes: u64) -> Taken<'_> {
        let bytes = bytes.min(self.total);
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        while *left < bytes {
            left = self.freed.wait(left).unwrap_or_else(|e| e.into_inner());
        }
        *left -= bytes;
        Taken {
            budget: self,
            bytes,
        }
    }
}

/// Bytes taken from a [`Budget`], given back when dropped.
struct Taken<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        *self.budget.left.lock().unwrap_or_else(|e| e.into_inner()) += self.bytes;
        self.budget.freed.notify_all();
    }
}

fn run_one(
    p: &Point,
    hash: Result<String, ExperimentError>,
    dir: &Path,
    budget: Option<&Budget>,
) -> PointOutcome {
    let path = result_path(dir, &p.id);
    let hash = match hash {
        Ok(h) => h,
        Err(e) => return PointOutcome::Failed(p.id.clone(), e),
    };
    if existing_hash(&path).as_deref() == Some(hash.as_str()) {
        return PointOutcome::Skipped(p.id.clone());
    }
    let need = p.config().map_or(0, |cfg| {
        crate::schemes::memory_estimate(&cfg, p.verify).total()
    });
    let _taken = budget.map(|b| b.take(need));
    let stored = p.run(hash, budget.map(|b| b.total)).and_then(|r| {
        let text = serde_json::to_string_pretty(&r).expect("results serialise");
        write_atomic(&path, &(text + "\n"))
    });
    match stored {
        Ok(()) => PointOutcome::Done(p.id.clone()),
        Err(e) => PointOutcome::Failed(p.id.clone(), e),
    }
}

/// Writes one self-contained job file per point into `out` (for Slurm arrays, GNU parallel,
/// xargs); returns the files written.
///
/// # Errors
/// Config, workload or I/O errors.
pub fn plan(
    spec: &ExperimentSpec,
    dir: &Path,
    out: &Path,
) -> Result<Vec<PathBuf>, ExperimentError> {
    let stale = super::calibrate::stale(spec, dir)?;
    if !stale.is_empty() {
        return Err(ExperimentError::Spec {
            path: dir.join("experiment.toml").display().to_string(),
            message: format!(
                "the calibration of {} workload(s) and grid point(s) is missing or stale ({}…); run `ssdlab experiment calibrate {}` first, so every job carries its calibrated value",
                stale.len(),
                stale[..stale.len().min(3)].join(", "),
                dir.display()
            ),
        });
    }
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let dir = std::fs::canonicalize(dir).map_err(io_err(dir))?;
    let points = spec.points(&dir);
    let hashes = hashes(&points);
    let mut files = Vec::new();
    for (p, point_hash) in points.into_iter().zip(hashes) {
        let job = JobSpec {
            experiment: spec.name.clone(),
            point_hash: point_hash?,
            config_toml: p.config()?.to_toml(),
            point: p,
        };
        let path = out.join(format!("{}.json", job.point.id));
        write_atomic(
            &path,
            &serde_json::to_string_pretty(&job).expect("jobs serialise"),
        )?;
        files.push(path);
    }
    Ok(files)
}

/// Runs one job file and writes its result into `out_dir`; returns the result's path. The
/// point is refused if its estimated memory exceeds `max_memory` bytes.
///
/// # Errors
/// Unreadable job, failing point, I/O.
pub fn run_job(
    job_file: &Path,
    out_dir: &Path,
    max_memory: Option<u64>,
) -> Result<PathBuf, ExperimentError> {
    let text = crate::files::read_text(job_file).map_err(io_err(job_file))?;
    let job: JobSpec = serde_json::from_str(&text).map_err(|e| ExperimentError::Spec {
        path: job_file.display().to_string(),
        message: e.to_string(),
    })?;
    let id = &job.point.id;
    // The id names the result file inside `out_dir`: no path of its own.
    if id.is_empty()
        || id.starts_with('.')
        || id
            .chars()
            .any(|c| matches!(c, '/' | '\\') || c.is_control())
    {
        return Err(ExperimentError::Spec {
            path: job_file.display().to_string(),
            message: format!(
                "point.id = {id:?}: must be a plain file name (no '/', '\\', control characters or leading '.')"
            ),
        });
    }
    let actual = job.point.hash()?;
    if actual != job.point_hash {
        return Err(ExperimentError::Run {
            point: job.point.id.clone(),
            message: format!(
                "the job was planned as {} but its config/workload now hash to {} (trace changed, or another ssdlab version resolves the config differently)",
                job.point_hash, actual
            ),
        });
    }
    let result = job.point.run(actual, max_memory)?;
    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let path = out_dir.join(format!("{}.json", job.point.id));
    write_atomic(
        &path,
        &(serde_json::to_string_pretty(&result).expect("results serialise") + "\n"),
    )?;
    Ok(path)
}

/// The stored results of an experiment, matched to its current points.
#[derive(Debug)]
pub struct Loaded {
    /// `(point, result)`: the result is `None` if missing, stale (hash differs), tampered or
    /// the point cannot be hashed.
    pub points: Vec<(Point, Option<PointResult>)>,
    /// Points whose stored result fails its content hash (edited or damaged): left out.
    pub tampered: Vec<String>,
}

/// Loads the stored results of an experiment, matched to its current points; a result whose
/// content hash does not match its content is left out and listed as tampered.
pub fn load_results(spec: &ExperimentSpec, dir: &Path) -> Loaded {
    let points = spec.points(dir);
    let hashes = hashes(&points);
    let mut tampered = Vec::new();
    let points = points
        .into_iter()
        .zip(hashes)
        .map(|(p, hash)| {
            let r = hash.ok().and_then(|hash| {
                crate::files::read_text(&result_path(dir, &p.id))
                    .ok()
                    .and_then(|t| serde_json::from_str::<PointResult>(&t).ok())
                    .filter(|r| r.point_hash == hash)
            });
            let r = r.filter(|r| {
                let ok = r.intact();
                if !ok {
                    tampered.push(p.id.clone());
                }
                ok
            });
            (p, r)
        })
        .collect();
    Loaded { points, tampered }
}

/// Copies results from `from` (e.g. written by `run-spec` on a cluster) into the experiment's
/// results directory when they belong to a current point with the same hash. Returns
/// `(collected, ignored)` counts.
///
/// # Errors
/// I/O errors.
pub fn collect(
    spec: &ExperimentSpec,
    dir: &Path,
    from: &Path,
) -> Result<(usize, usize), ExperimentError> {
    let _held = lock(dir)?;
    let results = dir.join(RESULTS_DIR);
    std::fs::create_dir_all(&results).map_err(io_err(&results))?;
    let points = spec.points(dir);
    let wanted: std::collections::BTreeMap<_, _> = points
        .iter()
        .zip(hashes(&points))
        .filter_map(|(p, h)| h.ok().map(|h| (p.id.clone(), h)))
        .collect();
    let (mut collected, mut ignored) = (0, 0);
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(io_err(from))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        let parsed = crate::files::read_text(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<PointResult>(&t).ok());
        match parsed {
            Some(r) if wanted.get(&r.point.id) == Some(&r.point_hash) && r.intact() => {
                let text = serde_json::to_string_pretty(&r).expect("results serialise") + "\n";
                write_atomic(&result_path(dir, &r.point.id), &text)?;
                collected += 1;
            }
            _ => ignored += 1,
        }
    }
    Ok((collected, ignored))
}

#[cfg(test)]
mod tests {
    use super::{lock, write_atomic};
    use crate::experiment::ExperimentError;

    #[test]
    fn a_second_holder_of_an_experiment_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("ssdlab-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let held = lock(&dir).unwrap();
        assert!(matches!(lock(&dir), Err(ExperimentError::Locked { .. })));
        drop(held);
        let again = lock(&dir);
        assert!(again.is_ok());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Concurrent writers of one result (two `experiment run`s on one directory) never share a
    /// temporary file: the result is one writer's text, whole, and no temporary is left.
    #[test]
    fn concurrent_writers_of_one_result_do_not_race() {
        let dir = std::env::temp_dir().join(format!("ssdlab-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.json");
        let texts = ["a".repeat(100_000), "b".repeat(100_000)];
        std::thread::scope(|s| {
            for t in &texts {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(path, t).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read_to_string(&path).unwrap();
        assert!(texts.contains(&got));
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "temporary files left behind");
        std::fs::remove_dir_all(&dir).ok();
    }
}
