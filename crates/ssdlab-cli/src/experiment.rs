//! `ssdlab experiment …` and `ssdlab run-spec`.

use crate::output::write_whole;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use ssdlab::experiment::{self, ExperimentSpec, PointOutcome};
use ssdlab::report;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub enum ExperimentCmd {
    /// Run every point not already finished (resumable), in parallel; calibrates first when
    /// the experiment declares `[calibrate]`.
    Run(RunExp),
    /// Find the experiment's `[calibrate]` values (on its baseline variant) without running the
    /// points; `plan` needs them.
    Calibrate(RunExp),
    /// Write REPORT.md, report.html and figures/*.svg from the stored results.
    Report(DirArg),
    /// Write one self-contained job file per point (for Slurm arrays, GNU parallel, xargs).
    Plan(PlanArgs),
    /// Re-run one point with a timeline (`run --timeline`), to look inside the run behind a
    /// result; checks that the re-run gives the stored result.
    Timeline(TimelineArgs),
    /// Merge results written by `ssdlab run-spec` into the experiment.
    Collect(CollectArgs),
}

#[derive(Args, Debug)]
pub struct DirArg {
    /// Experiment directory (holds experiment.toml).
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct RunExp {
    /// Experiment directory (holds experiment.toml).
    pub dir: PathBuf,
    /// Parallel points (default: number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub memory: crate::memory_args::MemoryArgs,
}

#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// The point's id: its result's file name without `.json` (e.g. `hm0__HotR__seed-2`).
    pub point: String,
    /// Where to write the timeline (`.json` or `.json.gz`).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub limits: crate::timeline_out::TimelineLimits,
    #[command(flatten)]
    pub memory: crate::memory_args::MemoryArgs,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Where to write the job files.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// Experiment directory.
    pub dir: PathBuf,
    /// Directory of result files from `run-spec`.
    #[arg(long)]
    pub from: PathBuf,
}

#[derive(Args, Debug)]
pub struct RunSpecArgs {
    /// Job file written by `ssdlab experiment plan`.
    pub file: PathBuf,
    /// Directory for the result (default: `results` beside the job file's directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub memory: crate::memory_args::MemoryArgs,
}

pub fn dispatch(cmd: ExperimentCmd) -> Result<()> {
    match cmd {
        ExperimentCmd::Run(a) => run(&a.dir, a.jobs, a.memory.limit()?),
        ExperimentCmd::Calibrate(a) => {
            let spec = ExperimentSpec::load(&a.dir)?;
            if spec.calibrate.is_none() {
                bail!(
                    "{}: declares no [calibrate] section; nothing to calibrate",
                    a.dir.join("experiment.toml").display()
                );
            }
            let _held = experiment::lock(&a.dir)?;
            let (c, searched) = experiment::calibrate::calibrate(&spec, &a.dir, jobs(a.jobs))?;
            print_calibration(&c, searched);
            Ok(())
        }
        ExperimentCmd::Report(a) => write_report(&a.dir),
        ExperimentCmd::Timeline(a) => timeline(&a),
        ExperimentCmd::Plan(a) => {
            let spec = ExperimentSpec::load(&a.dir)?;
            let files = experiment::plan(&spec, &a.dir, &a.out)?;
            eprintln!("wrote {} job files to {}", files.len(), a.out.display());
            Ok(())
        }
        ExperimentCmd::Collect(a) => {
            let spec = ExperimentSpec::load(&a.dir)?;
            let (n, ignored) = experiment::collect(&spec, &a.dir, &a.from)?;
            eprintln!("collected {n} results into {}/{} ({ignored} files ignored: not results of current points)", a.dir.display(), experiment::RESULTS_DIR);
            Ok(())
        }
    }
}

pub fn run_spec(a: RunSpecArgs) -> Result<()> {
    let out = match a.out {
        Some(o) => o,
        None => a
            .file
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."))
            .join("results"),
    };
    if out.exists() && !out.is_dir() {
        bail!(
            "--out {}: not a directory (run-spec writes the point's result file into a directory)",
            out.display()
        );
    }
    let path = experiment::run_job(&a.file, &out, a.memory.limit()?)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn jobs(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// One line per calibrated workload and grid point: value found, metric reached, probes.
fn print_calibration(c: &experiment::calibrate::Calibration, searched: usize) {
    eprintln!(
        "calibration: {} workload(s) and grid point(s), {searched} searched now",
        c.entries.len()
    );
    for (key, e) in &c.entries {
        eprintln!(
            "  {key}: {}={} gives {} {:.3} (target {}{}; {} runs of {})",
            e.key,
            e.value,
            e.metric,
            e.reached,
            e.target,
            if e.within_tolerance {
                ""
            } else {
                ", NOT reached"
            },
            e.probes.len(),
            e.variant
        );
    }
}

fn run(dir: &Path, jobs_arg: Option<usize>, max_memory: Option<u64>) -> Result<()> {
    let spec = ExperimentSpec::load(dir)?;
    let total = spec.points(dir).len() as u64;
    let jobs = jobs(jobs_arg);
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(total)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} points  {elapsed} elapsed, ETA {eta}  {msg}",
        )
        .expect("valid template"),
    );
    eprintln!("experiment {}: {total} points on {jobs} threads", spec.name);
    let outcomes = experiment::run_points(
        &spec,
        dir,
        jobs,
        max_memory,
        &|c, searched| bar.suspend(|| print_calibration(c, searched)),
        &|o| {
            bar.inc(1);
            if let PointOutcome::Failed(id, _) = o {
                bar.set_message(format!("failed: {id}"));
            }
        },
    )?;
    bar.finish_and_clear();
    let (mut done, mut skipped, mut failed) = (0, 0, Vec::new());
    for o in outcomes {
        match o {
            PointOutcome::Done(_) => done += 1,
            PointOutcome::Skipped(_) => skipped += 1,
            PointOutcome::Failed(id, e) => failed.push((id, e)),
        }
    }
    eprintln!(
        "{done} run, {skipped} already done, {} failed",
        failed.len()
    );
    for (id, e) in &failed {
        eprintln!("  {id}: {e}");
    }
    if !failed.is_empty() {
        bail!(
            "{} of {total} points failed (the others are stored; fix and rerun to resume)",
            failed.len()
        );
    }
    Ok(())
}

fn write_report(dir: &Path) -> Result<()> {
    let spec = ExperimentSpec::load(dir)?;
    let results = experiment::load_results(&spec, dir);
    let unknown = report::unknown_metrics(&spec, &results.points);
    if !unknown.is_empty() {
        bail!(
            "{}: {}",
            dir.join("experiment.toml").display(),
            unknown.join("; ")
        );
    }
    let command = format!(
        "ssdlab experiment run {0} && ssdlab experiment report {0}",
        dir.display()
    );
    let calibration = experiment::calibrate::load(&spec, dir);
    let r = report::build(&spec, &results.points, &calibration, &command)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.join("experiment.toml").display()))?;
    let figdir = dir.join("figures");
    std::fs::create_dir_all(&figdir).with_context(|| format!("creating {}", figdir.display()))?;
    for f in &r.figures {
        write_whole(&figdir.join(format!("{}.svg", f.id)), f.svg.as_bytes())?;
    }
    write_whole(&dir.join("REPORT.md"), r.markdown.as_bytes())?;
    write_whole(&dir.join("report.html"), r.html.as_bytes())?;
    eprintln!(
        "wrote {0}/REPORT.md, {0}/report.html and {1} figures ({2} points without results)",
        dir.display(),
        r.figures.len(),
        r.missing.len()
    );
    if !results.tampered.is_empty() {
        bail!(
            "{} stored results fail their content hash (edited or damaged) and were left out of the report: {}; delete them and run `ssdlab experiment run {}` again",
            results.tampered.len(),
            results.tampered.join(", "),
            dir.display()
        );
    }
    Ok(())
}

/// `experiment timeline`: one point re-run with a timeline; its summary must equal the stored
/// result when that result is current (else the run would not be the one behind the numbers).
fn timeline(a: &TimelineArgs) -> Result<()> {
    let spec = ExperimentSpec::load(&a.dir)?;
    let points = spec.points(&a.dir);
    let Some(point) = points.iter().find(|p| p.id == a.point) else {
        bail!(
            "{}: no point `{}` (ids are the file names in {}/results without .json, e.g. `{}`)",
            a.dir.display(),
            a.point,
            a.dir.display(),
            points.first().map_or("", |p| p.id.as_str())
        );
    };
    let cfg = point.config()?;
    let mut t = crate::timeline_out::open(&cfg, &a.limits, &a.out)?;
    let hash = point.hash()?;
    let result = point.run_traced(hash.clone(), a.memory.limit()?, Some(Box::new(&mut t)))?;
    crate::timeline_out::finish(t, &a.out, false)?;
    let stored = a.dir.join("results").join(format!("{}.json", point.id));
    let current = std::fs::read_to_string(&stored)
        .ok()
        .and_then(|t| serde_json::from_str::<experiment::PointResult>(&t).ok())
        .filter(|r| r.point_hash == hash);
    match current {
        Some(r) => {
            use ssdlab::metrics::deterministic;
            if deterministic(&r.summary) != deterministic(&result.summary) {
                bail!(
                    "the re-run of {} differs from its stored result {} although both have point hash {hash}: the timeline is not of the run behind the stored numbers",
                    point.id,
                    stored.display()
                );
            }
            eprintln!("the re-run gives the stored result {}", stored.display());
        }
        None => eprintln!(
            "note: {} has no current stored result to compare with (run the experiment first)",
            point.id
        ),
    }
    Ok(())
}
