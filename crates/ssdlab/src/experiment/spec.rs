//! The experiment file format.
//!
//! About 550 lines of code (then its tests): the file's types, their defaults and the checks
//! made at load stay together, each check beside the field it guards.

use super::{io_err, ExperimentError, Point, WorkloadRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A whole experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Short name (directory name).
    pub name: String,
    /// Title for the report.
    pub title: String,
    /// What the experiment reproduces, for the report.
    #[serde(default)]
    pub description: String,
    /// Master seed of every point.
    #[serde(default = "one")]
    pub seed: u64,
    /// Runs of each point, with seeds `seed`, `seed + 1`, … (each replica's synthetic
    /// workloads draw their streams from their own seed too); reports give means and 95 %
    /// confidence intervals over them.
    #[serde(default = "one_run", skip_serializing_if = "is_one")]
    pub seeds: u32,
    /// Preset every point starts from.
    pub preset: String,
    /// Scheme(s) of every point unless a variant names its own.
    #[serde(default)]
    pub scheme: Option<String>,
    /// Overrides applied to every point (`key=value`).
    #[serde(default)]
    pub set: Vec<String>,
    /// Run every point with `--verify`.
    #[serde(default)]
    pub verify: bool,
    /// Workloads.
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadSpec>,
    /// Variants (schemes, policies).
    #[serde(rename = "variant")]
    pub variants: Vec<VariantSpec>,
    /// Config keys swept over all their values (cartesian product); the key `preset` sweeps
    /// presets, and a key `synth.<key>` sets that key of every (synthetic) workload's spec.
    #[serde(default)]
    pub grid: BTreeMap<String, Vec<toml::Value>>,
    /// Variant that normalised metrics are divided by.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Figures of the report.
    #[serde(default, rename = "figure")]
    pub figures: Vec<FigureSpec>,
    /// A workload parameter found per workload and grid point on the baseline variant before
    /// any point runs ([`super::calibrate`]).
    #[serde(default)]
    pub calibrate: Option<CalibrateSpec>,
    /// The degradation × achieved share × coverage table of a read-redirection scheme (the
    /// report's "Decomposition").
    #[serde(default)]
    pub decomposition: Option<DecompositionSpec>,
}

/// How much of the optimal system's gain a scheme achieves, and why not more: for each scheme,
/// D = (B − O) / B (the baseline B's degradation against the optimal system O, on `metric`),
/// G = (B − S) / B (the scheme's gain), A = G / D, and coverage = the scheme's redirected read
/// requests ÷ the baseline's blocked read requests, with the blocked read pages the scheme did
/// not redirect split by cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecompositionSpec {
    /// The optimal system's variant.
    pub optimal: String,
    /// The schemes' variants.
    pub schemes: Vec<String>,
    /// The latency metric of D and G.
    #[serde(default = "mean_response")]
    pub metric: String,
    /// The paper's values, by scheme.
    #[serde(default)]
    pub paper: BTreeMap<String, PaperDecomposition>,
    /// The grid point the paper's values belong to (its label, e.g. `cell=tlc`; `all` or
    /// absent without a grid).
    #[serde(default)]
    pub grid: Option<String>,
}

fn mean_response() -> String {
    "all.mean_us".into()
}

/// A paper's D, gain, blocked and redirected shares (all %), from which its A and coverage
/// follow.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperDecomposition {
    /// Degradation of the baseline against the optimal system, %.
    pub d: f64,
    /// The scheme's gain over the baseline, %.
    pub gain: f64,
    /// Read requests blocked on the baseline, %.
    pub blocked: f64,
    /// Read requests the scheme redirects, %.
    pub redirected: f64,
}

fn one() -> u64 {
    1
}

fn one_run() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// Most runs per point (`seeds`).
pub const MAX_SEEDS: u32 = 100;

/// `[low, high]`, exactly two numbers (serde's fixed arrays would drop a third).
fn two_bounds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let v = Vec::<f64>::deserialize(d)?;
    <[f64; 2]>::try_from(v.as_slice()).map_err(|_| {
        serde::de::Error::custom(format!(
            "expected two numbers [low, high], found {} ({v:?})",
            v.len()
        ))
    })
}

/// Calibration: the value of one workload parameter (a config key such as `host.time_scale`)
/// that brings one metric of the *baseline* variant to a target (a baseline-only figure of the
/// paper), found for each workload and grid point and then given to every variant there. Scheme
/// variants never enter the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrateSpec {
    /// The variant the search runs; must be the experiment's `baseline`.
    pub variant: String,
    /// The config key searched (a workload parameter; no variant may set it).
    pub key: String,
    /// Bounds of the search, `[low, high]`; searched on a log scale when both are positive.
    #[serde(deserialize_with = "two_bounds")]
    pub range: [f64; 2],
    /// Dotted path of the baseline metric (e.g. `idle_pct`).
    pub metric: String,
    /// The value the metric should reach.
    pub target: f64,
    /// Stop once the metric is this close to the target.
    pub tolerance: f64,
    /// Most runs per workload and grid point (the two bounds included).
    #[serde(default = "default_max_runs")]
    pub max_runs: u32,
    /// Probe points between the bounds for a metric that does not move one way over the range
    /// (0: bisect between the bounds). With `scan = N`, the upper bound and then N points evenly
    /// spaced below it (log scale when both bounds are positive) are probed downwards, and the
    /// first neighbours that bracket the target are bisected: the crossing nearest the upper
    /// bound is the one found (for `host.time_scale`, the lightest load that reaches the target).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scan: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn default_max_runs() -> u32 {
    30
}

/// One workload of an experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Name used in tables and figures.
    pub name: String,
    /// Trace file, relative to the experiment directory.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// Synthetic spec (as `ssdlab run --synth`) instead of a trace.
    #[serde(default)]
    pub synth: Option<String>,
    /// The trace lengthened by a block bootstrap (as `ssdlab run --extend`, e.g.
    /// `requests=1000000,seed=2`); each seed of the experiment adds to its seed.
    #[serde(default)]
    pub extend: Option<String>,
    /// Trace format (`auto` if absent).
    #[serde(default)]
    pub format: Option<String>,
    /// Use only the first N requests (after `skip`).
    #[serde(default)]
    pub limit: Option<u64>,
    /// Leave out the first N requests (with `limit`: any part of a trace, e.g. its second
    /// half).
    #[serde(default)]
    pub skip: u64,
    /// Keep only this device / disk / ASU.
    #[serde(default)]
    pub device: Option<u32>,
    /// Overrides for this workload only (e.g. `host.time_scale=0.2`).
    #[serde(default)]
    pub set: Vec<String>,
    /// Overrides for this workload at one grid point, keyed by the grid label as reports print
    /// it (`preset=pe-suspension-mlc`); applied after the grid values (e.g. a time scale
    /// calibrated per workload and cell).
    #[serde(default)]
    pub grid_set: BTreeMap<String, Vec<String>>,
    /// A note for the report (e.g. "synthetic stand-in for Fin2, which is not public").
    #[serde(default)]
    pub note: String,
    /// Several I/O flows sharing the drive instead of `trace` or `synth` (`[[workload.flow]]`
    /// tables, the keys of a config file's `[[flow]]`; trace paths relative to the experiment
    /// directory). Figures name a flow's metrics `flows.<name>.<key>`.
    #[serde(default, rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<crate::workload::flows::FlowSpec>,
    /// With flows: each point also runs every flow alone on its drive, for each flow's
    /// `slowdown` and the point's `fairness` (as `ssdlab run --alone`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alone: bool,
}

/// One variant (a scheme or policy setting).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Name used in tables and legends.
    pub name: String,
    /// Scheme(s) of this variant (`hotr`, `hotr+ipc`; see `ssdlab schemes`), replacing the
    /// experiment's.
    #[serde(default)]
    pub scheme: Option<String>,
    /// Overrides of this variant.
    #[serde(default)]
    pub set: Vec<String>,
}

/// Figure kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureKind {
    /// One group of bars per workload (and grid point), one bar per variant.
    Bars,
    /// Latency CDF per variant for one workload; `metric` is `all`, `read` or `write`.
    Cdf,
    /// Tail-latency percentiles (95 … 99.9) per variant; `metric` is `all`, `read` or `write`.
    Percentiles,
    /// Metric against the values of the grid key `x`, one line per variant.
    Sweep,
    /// Metric over the grid keys `x` and `y`, one map per workload, variant and value of the
    /// other grid keys.
    Heatmap,
}

/// A figure of the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// File name stem.
    pub id: String,
    /// Title.
    pub title: String,
    /// Kind.
    pub kind: FigureKind,
    /// Dotted path into the run summary (e.g. `read.mean_us`), or a latency class for CDFs
    /// and percentiles.
    pub metric: String,
    /// Divide by the baseline variant's value of the same workload and grid point.
    #[serde(default)]
    pub normalize: bool,
    /// Show (B − v) / B × 100, the percentage by which each variant is below the baseline
    /// variant B of the same workload and grid point — the papers' "degradation" of the
    /// baseline against the optimal system, and their "reduces … by x %".
    #[serde(default)]
    pub reduction: bool,
    /// Restrict to one workload (CDF, percentiles and sweeps default to every workload).
    #[serde(default)]
    pub workload: Option<String>,
    /// Grid key on the x axis (sweeps, heat maps).
    #[serde(default)]
    pub x: Option<String>,
    /// Grid key on the y axis (heat maps).
    #[serde(default)]
    pub y: Option<String>,
    /// Heat maps: divide each cell by this variant's value of the same cell (the same metric
    /// and normalisation; e.g. a scheme's reduction over the optimal system's: A = G / D).
    #[serde(default)]
    pub over: Option<String>,
    /// Heat maps with `over`: the divisor's metric, when not `metric` (e.g. coverage: a
    /// scheme's redirected reads over the baseline's blocked reads).
    #[serde(default)]
    pub over_metric: Option<String>,
    /// Heat maps: the paper's value of what the map shows; cells within 10 % of it are
    /// framed and the report names them (or says none is, and which comes nearest).
    #[serde(default)]
    pub paper_value: Option<f64>,
    /// Paper-reported values: workload → variant → value (same normalisation as the figure);
    /// a key `"<workload> <grid label>"` (e.g. `"fin1 preset=pe-suspension-mlc"`) gives the
    /// value at that grid point only.
    #[serde(default)]
    pub paper: BTreeMap<String, BTreeMap<String, f64>>,
    /// Paper-reported means over its workloads: grid label (e.g. `preset=pe-suspension-slc`,
    /// or `all` without a grid) → variant → value. Bars figures then add a "mean" group per grid
    /// point with the mean of our workloads beside these.
    #[serde(default)]
    pub paper_mean: BTreeMap<String, BTreeMap<String, f64>>,
    /// Why ours differs from the paper's mean, by variant: the report's claims table shows it
    /// beside the verdict (state the run that shows the cause, or that none has yet).
    #[serde(default)]
    pub cause: BTreeMap<String, String>,
    /// Variant to normalise by, instead of the experiment's `baseline`.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Variants whose value here is an input the workloads were built to match (e.g. a
    /// stand-in's dedup ratio): the claims table marks them `input`, never a verdict.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Variants shown (all if empty).
    #[serde(default)]
    pub variants: Vec<String>,
    /// Caption (where the paper's numbers come from, how ours differ).
    #[serde(default)]
    pub caption: String,
}

impl ExperimentSpec {
    /// Checks a workload of I/O flows: no workload-level source or trace keys beside them, and
    /// each flow as a run checks it.
    fn check_flows(&self, w: &WorkloadSpec) -> Result<(), String> {
        let beside = [
            ("trace", w.trace.is_some()),
            ("synth", w.synth.is_some()),
            ("extend", w.extend.is_some()),
            ("format", w.format.is_some()),
            ("limit", w.limit.is_some()),
            ("skip", w.skip > 0),
            ("device", w.device.is_some()),
        ];
        if let Some((key, _)) = beside.iter().find(|k| k.1) {
            return Err(format!(
                "workload `{}`: `{key}` beside `[[workload.flow]]` tables: give it in the flow's own table",
                w.name
            ));
        }
        crate::workload::flows::FlowSpec::check_all(&w.flows)
            .map_err(|e| format!("workload `{}`: {e}", w.name))?;
        if w.alone && w.flows.len() < 2 {
            return Err(format!(
                "workload `{}`: `alone` measures each flow's slowdown beside the others: give two or more flows",
                w.name
            ));
        }
        Ok(())
    }

    /// Reads `DIR/experiment.toml`.
    ///
    /// # Errors
    /// I/O errors, TOML errors naming the key, and inconsistencies (duplicate names, a baseline
    /// that is not a variant, a workload with both or neither of `trace` and `synth`).
    pub fn load(dir: &Path) -> Result<Self, ExperimentError> {
        let path = dir.join("experiment.toml");
        let text = crate::files::read_text(&path).map_err(io_err(&path))?;
        let spec: ExperimentSpec = toml::from_str(&text).map_err(|e| ExperimentError::Spec {
            path: path.display().to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        spec.check().map_err(|message| ExperimentError::Spec {
            path: path.display().to_string(),
            message,
        })?;
        Ok(spec)
    }

    fn check(&self) -> Result<(), String> {
        if self.workloads.is_empty() || self.variants.is_empty() {
            return Err("an experiment needs at least one [[workload]] and one [[variant]]".into());
        }
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            return Err(format!(
                "seeds = {}: must be in [1, {MAX_SEEDS}] (runs of each point)",
                self.seeds
            ));
        }
        if self.seed.checked_add(u64::from(self.seeds) - 1).is_none() {
            return Err(format!(
                "seed = {} with seeds = {}: the last replica's seed passes 2^64 - 1",
                self.seed, self.seeds
            ));
        }
        let unique = |names: Vec<&str>, what: &str| {
            let mut seen = std::collections::BTreeSet::new();
            names.into_iter().try_for_each(|n| {
                if seen.insert(n) {
                    Ok(())
                } else {
                    Err(format!("duplicate {what} name `{n}`"))
                }
            })
        };
        unique(
            self.workloads.iter().map(|w| w.name.as_str()).collect(),
            "workload",
        )?;
        unique(
            self.variants.iter().map(|v| v.name.as_str()).collect(),
            "variant",
        )?;
        unique(
            self.figures.iter().map(|f| f.id.as_str()).collect(),
            "figure",
        )?;
        for w in &self.workloads {
            if !w.flows.is_empty() {
                self.check_flows(w)?;
                continue;
            }
            if w.alone {
                return Err(format!(
                    "workload `{}`: `alone` runs each I/O flow by itself; give `[[workload.flow]]` tables",
                    w.name
                ));
            }
            if w.trace.is_some() == w.synth.is_some() {
                return Err(format!(
                    "workload `{}`: give exactly one of `trace`, `synth` and `[[workload.flow]]` tables",
                    w.name
                ));
            }
            if let Some(e) = &w.extend {
                if w.trace.is_none() {
                    return Err(format!(
                        "workload `{}`: `extend` lengthens a trace; give `trace`",
                        w.name
                    ));
                }
                e.parse::<crate::workload::extend::ExtendSpec>()
                    .map_err(|why| format!("workload `{}`: {why}", w.name))?;
            }
        }
        if let Some(b) = &self.baseline {
            if !self.variants.iter().any(|v| &v.name == b) {
                return Err(format!("baseline `{b}` is not one of the variants"));
            }
        }
        if let Some(c) = &self.calibrate {
            self.check_calibrate(c)?;
        }
        if let Some(dc) = &self.decomposition {
            if self.baseline.is_none() {
                return Err("decomposition: the experiment needs a `baseline` variant".into());
            }
            for v in std::iter::once(&dc.optimal)
                .chain(&dc.schemes)
                .chain(dc.paper.keys())
            {
                if !self.variants.iter().any(|x| &x.name == v) {
                    return Err(format!("decomposition: `{v}` is not one of the variants"));
                }
            }
        }
        for (k, values) in &self.grid {
            if values.is_empty() {
                return Err(format!("grid key `{k}` has no values"));
            }
            let Some(key) = k.strip_prefix(SYNTH_GRID) else {
                continue;
            };
            for w in &self.workloads {
                let Some(spec) = &w.synth else {
                    return Err(format!(
                        "grid key `{k}` sets a key of a synthetic spec, but workload `{}` is not synthetic",
                        w.name
                    ));
                };
                for v in values {
                    let spec = super::point::with_spec_key(spec, key, &value_text(v));
                    if let Err(e) = spec.parse::<crate::workload::synth::SynthSpec>() {
                        return Err(format!(
                            "grid key `{k}` = {v} on workload `{}`: {e}",
                            w.name
                        ));
                    }
                }
            }
        }
        let count = self
            .grid
            .values()
            .fold(self.workloads.len() as u128, |n, v| n * v.len() as u128)
            .saturating_mul(self.variants.len() as u128);
        if count > MAX_POINTS as u128 {
            return Err(format!(
                "{count} points ({} workloads x {} grid values x {} variants): more than the {MAX_POINTS} an experiment may have; split it into several experiments",
                self.workloads.len(),
                self.grid
                    .values()
                    .map(|v| v.len().to_string())
                    .collect::<Vec<_>>()
                    .join(" x "),
                self.variants.len()
            ));
        }
        let combos = self.combos();
        let labels: Vec<String> = combos.iter().map(grid_label).collect();
        for w in &self.workloads {
            if let Some(bad) = w.grid_set.keys().find(|k| !labels.contains(k)) {
                return Err(format!(
                    "workload `{}`: grid_set key `{bad}` is not a grid point (one of: {})",
                    w.name,
                    labels.join(", ")
                ));
            }
        }
        let mut ids: BTreeMap<String, String> = BTreeMap::new();
        for w in &self.workloads {
            for (combo, label) in combos.iter().zip(&labels) {
                for v in &self.variants {
                    let id = point_id(&w.name, combo, &v.name);
                    let what = format!(
                        "workload `{}`, grid `{label}`, variant `{}`",
                        w.name, v.name
                    );
                    if let Some(other) = ids.insert(id.clone(), what.clone()) {
                        return Err(format!(
                            "{other} and {what} map to the same result file `results/{id}.json` (names are reduced to letters, digits, `-` and `.`); rename one"
                        ));
                    }
                }
            }
        }
        for f in &self.figures {
            let plain = !f.id.is_empty()
                && !f.id.starts_with('.')
                && f.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !plain {
                return Err(format!(
                    "figure id `{}`: must be a plain file name (letters, digits, `-`, `_`, `.`; not starting with `.`), as the figure is written to the experiment's report directory under it",
                    f.id
                ));
            }
            if (f.normalize || f.reduction) && self.baseline.is_none() && f.baseline.is_none() {
                return Err(format!(
                    "figure `{}` is compared with a baseline but neither it nor the experiment has a `baseline`",
                    f.id
                ));
            }
            if f.normalize && f.reduction {
                return Err(format!(
                    "figure `{}`: give at most one of `normalize` and `reduction`",
                    f.id
                ));
            }
            for v in f.variants.iter().chain(&f.baseline).chain(&f.inputs) {
                if !self.variants.iter().any(|x| &x.name == v) {
                    return Err(format!(
                        "figure `{}`: `{v}` is not one of the variants",
                        f.id
                    ));
                }
            }
            if matches!(f.kind, FigureKind::Cdf | FigureKind::Percentiles)
                && !["all", "read", "write"].contains(&f.metric.as_str())
            {
                return Err(format!(
                    "figure `{}`: metric `{}`: a latency figure takes `all`, `read` or `write`",
                    f.id, f.metric
                ));
            }
            if f.kind == FigureKind::Heatmap {
                fn key<'k>(
                    grid: &BTreeMap<String, Vec<toml::Value>>,
                    k: &'k Option<String>,
                ) -> Option<&'k String> {
                    k.as_ref().filter(|k| grid.contains_key(*k))
                }
                match (key(&self.grid, &f.x), key(&self.grid, &f.y)) {
                    (Some(x), Some(y)) if x != y => {}
                    _ => {
                        return Err(format!(
                            "figure `{}`: a heat map needs `x` and `y` = two different grid keys",
                            f.id
                        ))
                    }
                }
                if f.over_metric.is_some() && f.over.is_none() {
                    return Err(format!(
                        "figure `{}`: over_metric needs over = the variant whose value divides",
                        f.id
                    ));
                }
                if let Some(o) = f
                    .over
                    .as_ref()
                    .filter(|o| !self.variants.iter().any(|v| &v.name == *o))
                {
                    return Err(format!(
                        "figure `{}`: over = `{o}` is not one of the variants",
                        f.id
                    ));
                }
            }
            if f.kind == FigureKind::Sweep
                && !f.x.as_ref().is_some_and(|x| self.grid.contains_key(x))
            {
                return Err(format!(
                    "figure `{}`: a sweep needs `x` = one of the grid keys",
                    f.id
                ));
            }
        }
        Ok(())
    }

    fn check_calibrate(&self, c: &CalibrateSpec) -> Result<(), String> {
        if self.baseline.as_deref() != Some(c.variant.as_str()) {
            return Err(format!(
                "calibrate.variant = `{}`: must be the experiment's baseline ({}); calibration never runs a scheme under test",
                c.variant,
                self.baseline.as_deref().map_or("none given".to_string(), |b| format!("`{b}`"))
            ));
        }
        // Any spelling that sets the key (an inline table included), at any level: the
        // calibrated value would override it silently, or a variant would run at another one.
        let sets_key = |s: &String| crate::config::ConfigBuilder::assignment_sets(s, &c.key);
        let mut levels: Vec<(String, &Vec<String>)> =
            vec![("the experiment's `set`".into(), &self.set)];
        for w in &self.workloads {
            levels.push((format!("workload `{}`", w.name), &w.set));
            for (g, sets) in &w.grid_set {
                levels.push((format!("workload `{}`'s grid_set for `{g}`", w.name), sets));
            }
        }
        for v in &self.variants {
            levels.push((format!("variant `{}`", v.name), &v.set));
        }
        if let Some((level, s)) = levels
            .iter()
            .find_map(|(l, sets)| sets.iter().find(|s| sets_key(s)).map(|s| (l, s)))
        {
            return Err(format!(
                "calibrate.key = `{}`: {level} sets it too (`{s}`); a calibrated workload parameter is found by the search and is the same for every variant",
                c.key
            ));
        }
        if self.grid.contains_key(&c.key) {
            return Err(format!(
                "calibrate.key = `{}`: it is also a grid key",
                c.key
            ));
        }
        let [lo, hi] = c.range;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(format!(
                "calibrate.range = [{lo}, {hi}]: must be two finite numbers, low < high"
            ));
        }
        if !(c.target.is_finite() && c.tolerance.is_finite() && c.tolerance > 0.0) {
            return Err(format!(
                "calibrate: target = {} and tolerance = {} must be finite, tolerance > 0",
                c.target, c.tolerance
            ));
        }
        if !(2..=200).contains(&c.max_runs) {
            return Err(format!(
                "calibrate.max_runs = {}: must be in [2, 200]",
                c.max_runs
            ));
        }
        if c.scan + 2 > c.max_runs {
            return Err(format!(
                "calibrate.scan = {}: the scan probes scan + 2 values, more than max_runs = {}",
                c.scan, c.max_runs
            ));
        }
        Ok(())
    }

    /// Every combination of the grid's values (one empty combination without a grid).
    fn combos(&self) -> Vec<BTreeMap<String, String>> {
        self.combos_without(&[])
    }

    /// Every combination of the values of the grid keys not in `skip`, valued as points store
    /// them.
    pub(crate) fn combos_without(&self, skip: &[&str]) -> Vec<BTreeMap<String, String>> {
        let mut combos: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
        for (key, values) in self
            .grid
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
        {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(key.clone(), value_text(v));
                        c
                    })
                })
                .collect();
        }
        combos
    }

    /// Every point: workloads × grid combinations × variants, in that nesting order. With
    /// `[calibrate]`, the value stored in the directory's calibration file for the point's
    /// workload and grid point is set after the workload's and grid's overrides (none before
    /// calibration has run: such points have no current result).
    pub fn points(&self, dir: &Path) -> Vec<Point> {
        let calibrated = super::calibrate::load(self, dir);
        self.points_with(dir, &calibrated)
    }

    /// [`ExperimentSpec::points`] with the calibrated values given.
    pub(crate) fn points_with(
        &self,
        dir: &Path,
        calibrated: &super::calibrate::Calibration,
    ) -> Vec<Point> {
        let combos = self.combos();
        let mut points = Vec::new();
        for w in &self.workloads {
            for combo in &combos {
                let value = self
                    .calibrate
                    .as_ref()
                    .and_then(|c| calibrated.value(&w.name, combo).map(|v| (c, v)));
                for v in &self.variants {
                    let mut sets = self.set.clone();
                    sets.extend(w.set.iter().cloned());
                    sets.extend(
                        combo
                            .iter()
                            .filter(|(k, _)| k.as_str() != "preset" && !k.starts_with(SYNTH_GRID))
                            .map(|(k, val)| format!("{k}={val}")),
                    );
                    if let Some(extra) = w.grid_set.get(&grid_label(combo)) {
                        sets.extend(extra.iter().cloned());
                    }
                    if let Some((c, value)) = value {
                        sets.push(format!("{}={value}", c.key));
                    }
                    sets.extend(v.set.iter().cloned());
                    let preset = combo
                        .get("preset")
                        .map_or(self.preset.clone(), |p| p.trim_matches('"').to_string());
                    for replica in 0..self.seeds {
                        let id = point_id(&w.name, combo, &v.name);
                        let seed = self.seed + u64::from(replica);
                        points.push(Point {
                            id: if replica == 0 {
                                id
                            } else {
                                format!("{id}__seed-{seed}")
                            },
                            workload: w.name.clone(),
                            variant: v.name.clone(),
                            grid: combo.clone(),
                            preset: preset.clone(),
                            scheme: v.scheme.clone().or_else(|| self.scheme.clone()),
                            sets: sets.clone(),
                            seed,
                            replica,
                            verify: self.verify,
                            source: synth_grid(WorkloadRef::of(w, dir), combo).replica(replica),
                        });
                    }
                }
            }
        }
        points
    }
}

/// The prefix of grid keys that set a key of the workloads' synthetic specs.
const SYNTH_GRID: &str = "synth.";

/// A workload's source at a grid point: its synthetic spec with the grid's `synth.` keys set.
fn synth_grid(source: WorkloadRef, combo: &BTreeMap<String, String>) -> WorkloadRef {
    match source {
        WorkloadRef::Synth { mut spec } => {
            for (k, v) in combo {
                if let Some(key) = k.strip_prefix(SYNTH_GRID) {
                    spec = super::point::with_spec_key(&spec, key, v);
                }
            }
            WorkloadRef::Synth { spec }
        }
        other => other,
    }
}

/// Most points an experiment may have (workloads × grid combinations × variants): each is a
/// full run with a result file, and the plan is held in memory.
pub const MAX_POINTS: u64 = 100_000;

/// A grid point as reports and `grid_set` name it: `key=value` pairs (the key's last dotted
/// part, strings unquoted) joined by spaces.
pub(crate) fn grid_label(grid: &BTreeMap<String, String>) -> String {
    grid.iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                k.rsplit('.').next().unwrap_or(k),
                v.trim_matches('"')
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A grid value as it is written in `--set` (strings quoted, arrays as TOML).
fn value_text(v: &toml::Value) -> String {
    v.to_string()
}

/// `s` reduced to letters, digits, `-` and `.` (anything else becomes `_`): safe in a file name.
pub(crate) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn point_id(workload: &str, combo: &BTreeMap<String, String>, variant: &str) -> String {
    let mut id = slug(workload);
    for (k, v) in combo {
        let key = k.rsplit('.').next().unwrap_or(k);
        id.push_str(&format!("__{}-{}", slug(key), slug(v.trim_matches('"'))));
    }
    id.push_str("__");
    id.push_str(&slug(variant));
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
name = "t"
title = "T"
preset = "tiny"
set = ["precondition.fill=0.5"]
baseline = "FIFO"
[[workload]]
name = "a"
synth = "requests=10"
[[workload]]
name = "b"
trace = "x.csv"
set = ["host.time_scale=0.5"]
[[variant]]
name = "FIFO"
set = ["sched.policy=fifo"]
[[variant]]
name = "RPS"
set = ["sched.policy=rps"]
[grid]
"flash.cell" = ["slc", "mlc", "tlc"]
"ftl.gc_threshold" = [0.05, 0.1]
"#;

    #[test]
    fn seeds_run_each_point_with_its_own_seed_and_stream() {
        let mut spec: ExperimentSpec = toml::from_str(SPEC).unwrap();
        spec.seed = 7;
        spec.seeds = 3;
        spec.check().unwrap();
        let points = spec.points(Path::new("/exp"));
        assert_eq!(points.len(), 2 * 3 * 2 * 2 * 3);
        let ids: std::collections::BTreeSet<_> = points.iter().map(|p| p.id.clone()).collect();
        assert_eq!(ids.len(), points.len(), "point ids are unique");
        let runs: Vec<&Point> = points
            .iter()
            .filter(|p| p.workload == "a" && p.variant == "RPS" && p.grid == points[0].grid)
            .collect();
        assert_eq!(
            runs.iter().map(|p| (p.replica, p.seed)).collect::<Vec<_>>(),
            [(0, 7), (1, 8), (2, 9)]
        );
        // The first run keeps its id and stream; the others draw their own.
        assert!(!runs[0].id.contains("seed-"));
        assert!(runs[2].id.ends_with("__seed-9"));
        let specs: Vec<String> = runs
            .iter()
            .map(|p| match &p.source {
                WorkloadRef::Synth { spec } => spec.clone(),
                t => panic!("{t:?}"),
            })
            .collect();
        assert_eq!(
            specs,
            ["requests=10", "requests=10,seed=2", "requests=10,seed=3"]
        );
        let traced: Vec<&Point> = points.iter().filter(|p| p.workload == "b").collect();
        assert!(traced.iter().all(|p| p.source == traced[0].source));
        for bad in [0, MAX_SEEDS + 1] {
            spec.seeds = bad;
            assert!(spec.check().unwrap_err().contains("seeds ="));
        }
        spec.seeds = 2;
        spec.seed = u64::MAX;
        assert!(spec.check().unwrap_err().contains("2^64"));
    }

    #[test]
    fn grid_expands_to_the_cartesian_product() {
        let spec: ExperimentSpec = toml::from_str(SPEC).unwrap();
        spec.check().unwrap();
        let points = spec.points(Path::new("/exp"));
        assert_eq!(points.len(), 2 * 3 * 2 * 2);
        let ids: std::collections::BTreeSet<_> = points.iter().map(|p| p.id.clone()).collect();
        assert_eq!(ids.len(), points.len(), "point ids are unique");
        let p = points
            .iter()
            .find(|p| p.id == "b__cell-mlc__gc_threshold-0.1__RPS")
            .unwrap();
        assert_eq!(
            p.sets,
            vec![
                "precondition.fill=0.5",
                "host.time_scale=0.5",
                "flash.cell=\"mlc\"",
                "ftl.gc_threshold=0.1",
                "sched.policy=rps"
            ]
        );
        assert_eq!(
            p.source,
            WorkloadRef::Trace {
                path: "/exp/x.csv".into(),
                format: None,
                limit: None,
                skip: 0,
                device: None,
                extend: None
            }
        );
    }

    #[test]
    fn figure_ids_must_be_plain_file_names() {
        for id in ["../../ESCAPED", "/tmp/abs", "a/b", "", ".hidden"] {
            let bad = format!(
                "{SPEC}\n[[figure]]\nid = \"{id}\"\ntitle = \"t\"\nkind = \"bars\"\nmetric = \"read.mean_us\"\n"
            );
            let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
            let e = spec.check().unwrap_err();
            assert!(e.contains("plain file name"), "{id}: {e}");
        }
    }

    #[test]
    fn synth_grid_keys_set_the_workload_spec_not_the_config() {
        let text = r#"
name = "t"
title = "T"
preset = "tiny"
baseline = "B"
[[workload]]
name = "a"
synth = "requests=10,write_ratio=0.5,seed=3"
[[variant]]
name = "B"
[grid]
"synth.write_ratio" = [0.2, 0.8]
"host.time_scale" = [1.0]
"#;
        let spec: ExperimentSpec = toml::from_str(text).unwrap();
        spec.check().unwrap();
        let points = spec.points(Path::new("/exp"));
        let p = points
            .iter()
            .find(|p| p.id == "a__time_scale-1.0__write_ratio-0.2__B")
            .unwrap();
        assert_eq!(p.sets, vec!["host.time_scale=1.0"]);
        assert_eq!(
            p.source,
            WorkloadRef::Synth {
                spec: "requests=10,seed=3,write_ratio=0.2".into()
            }
        );
        // A trace workload cannot take a synthetic key; a value the spec refuses is named.
        let trace = text.replace(
            r#"synth = "requests=10,write_ratio=0.5,seed=3""#,
            r#"trace = "x.csv""#,
        );
        let e = toml::from_str::<ExperimentSpec>(&trace)
            .unwrap()
            .check()
            .unwrap_err();
        assert!(
            e.contains("`synth.write_ratio`") && e.contains("not synthetic"),
            "{e}"
        );
        let bad = text.replace("[0.2, 0.8]", "[0.2, 1.5]");
        let e = toml::from_str::<ExperimentSpec>(&bad)
            .unwrap()
            .check()
            .unwrap_err();
        assert!(
            e.contains("synth.write_ratio") && e.contains("write_ratio"),
            "{e}"
        );
    }

    #[test]
    fn a_heat_map_needs_two_grid_keys_and_over_metric_needs_over() {
        let base = r#"
name = "t"
title = "T"
preset = "tiny"
baseline = "B"
[[workload]]
name = "a"
synth = "requests=10"
[[variant]]
name = "B"
[grid]
"host.time_scale" = [1.0]
"ftl.gc_threshold" = [0.05]
[[figure]]
id = "h"
title = "H"
kind = "heatmap"
metric = "read.mean_us"
"#;
        let check = |extra: &str| {
            toml::from_str::<ExperimentSpec>(&format!("{base}{extra}"))
                .unwrap()
                .check()
        };
        let e = check("x = \"host.time_scale\"\n").unwrap_err();
        assert!(e.contains("two different grid keys"), "{e}");
        let both = "x = \"host.time_scale\"\ny = \"ftl.gc_threshold\"\n";
        check(both).unwrap();
        let e = check(&format!("{both}over_metric = \"read.p99_us\"\n")).unwrap_err();
        assert!(e.contains("over_metric needs over"), "{e}");
        let e = check(&format!("{both}over = \"C\"\n")).unwrap_err();
        assert!(e.contains("`C` is not one of the variants"), "{e}");
    }

    #[test]
    fn a_huge_grid_is_refused_with_its_count() {
        let mut bad = SPEC.to_string();
        for k in 0..10 {
            bad.push_str(&format!("\"k{k}\" = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"));
        }
        let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
        let e = spec.check().unwrap_err();
        assert!(e.contains("240000000000 points"), "{e}");
    }

    #[test]
    fn colliding_point_ids_are_refused() {
        let bad = SPEC
            .replace("name = \"RPS\"", "name = \"a/b\"")
            .replace("name = \"FIFO\"", "name = \"a_b\"");
        let bad = bad.replace("baseline = \"FIFO\"", "baseline = \"a_b\"");
        let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
        let e = spec.check().unwrap_err();
        assert!(e.contains("same result file"), "{e}");
    }

    #[test]
    fn colliding_grid_values_are_refused() {
        let bad = SPEC.replace(r#"["slc", "mlc", "tlc"]"#, r#"["a/b", "a_b"]"#);
        let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
        let e = spec.check().unwrap_err();
        assert!(
            e.contains("grid `cell=a/b") && e.contains("same result file"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_specs_are_rejected() {
        let bad = SPEC.replace("baseline = \"FIFO\"", "baseline = \"LIFO\"");
        let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
        assert!(spec.check().unwrap_err().contains("LIFO"));
        let bad = SPEC.replace("synth = \"requests=10\"", "");
        let spec: ExperimentSpec = toml::from_str(&bad).unwrap();
        assert!(spec.check().unwrap_err().contains("exactly one"));
    }
}
