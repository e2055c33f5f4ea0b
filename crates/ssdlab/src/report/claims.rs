//! The claims table and its rule: each paper mean beside ours, with a 95 % confidence interval
//! over seeds, and the verdict decided from that interval (docs/experiments.md, "Verdicts").
//! The rule and its constants were fixed, with the tests below, before any result was
//! regenerated with several seeds.

use super::{causes, fmt, mean_key, rows_at, BarValues, Data, Table};
use crate::experiment::{FigureKind, FigureSpec};

/// Two-sided 95 % quantiles of Student's t, `t(0.975, df)` for df = 1 … 30 (standard tables,
/// e.g. the NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// `t(0.975, df)`; past the table, the value at the next tabulated df below (40, 60, 120),
/// which is slightly larger than the exact one: the interval errs wide.
fn t975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        _ => 1.980,
    }
}

/// A mean over runs with its 95 % confidence interval (Student's t; a single run has none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Mean.
    pub mean: f64,
    /// Interval's low end (the mean with one run).
    pub low: f64,
    /// Interval's high end.
    pub high: f64,
    /// Values it is made of.
    pub runs: usize,
}

impl Estimate {
    /// The estimate of `values` (`None` without any).
    pub fn of(values: &[f64]) -> Option<Self> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let half = if n < 2 {
            0.0
        } else {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t975(n - 1) * (var / n as f64).sqrt()
        };
        Some(Estimate {
            mean,
            low: mean - half,
            high: mean + half,
            runs: n,
        })
    }

    /// The interval, when there is one (two runs or more).
    pub fn interval(&self) -> Option<(f64, f64)> {
        (self.runs >= 2).then_some((self.low, self.high))
    }

    /// `mean [low, high]`, or the mean alone from one run.
    pub fn shown(&self) -> String {
        with_interval(self.mean, Some(*self))
    }
}

/// `value [low, high]` with `e`'s interval, or `value` alone without one.
pub(super) fn with_interval(value: f64, e: Option<Estimate>) -> String {
    match e.and_then(|e| e.interval()) {
        Some((lo, hi)) => format!(
            "{} [{}, {}]",
            fmt(Some(value)),
            fmt(Some(lo)),
            fmt(Some(hi))
        ),
        None => fmt(Some(value)),
    }
}

/// A verdict on our value against the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within 10 % of the paper's effect.
    Match,
    /// Between half and twice the paper's effect.
    Near,
    /// Outside that (the other direction included).
    Miss,
    /// The verdict changes inside our interval.
    Uncertain,
}

impl Verdict {
    /// The symbol the tables show.
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Match => "✓",
            Verdict::Near => "~",
            Verdict::Miss => "✗",
            Verdict::Uncertain => "uncertain",
        }
    }
}

/// Half-width of the "no effect" band, as a share of the baseline (2.5 %): a paper value of no
/// effect is met when our whole interval lies within it. Fixed from measured seed noise, not
/// from any result it judges: the median seed-to-seed difference of mean response over the
/// paper experiments whose seeds were compared (docs/experiments.md, 2026-11-23) was 1.0 %
/// (hire), 1.2 % (deduphr) and 2.4 % (hotr); the band is the largest, rounded up.
pub const NO_EFFECT_BAND: f64 = 0.025;

/// The thresholds of the ratio of effects where the verdict changes.
const THRESHOLDS: [f64; 4] = [0.5, 0.9, 1.1, 2.0];

/// The verdict on a ratio of effects (ours over the paper's) alone.
pub(super) fn class(r: f64) -> Verdict {
    if (r - 1.0).abs() <= 0.1 + 1e-12 {
        Verdict::Match
    } else if (0.5 - 1e-12..=2.0 + 1e-12).contains(&r) {
        Verdict::Near
    } else {
        Verdict::Miss
    }
}

/// The verdict on `ours` against the paper's value, by the ratio of the two effects measured
/// from `reference` (1 for a normalised figure, else 0): ✓ within 10 % of the paper's effect,
/// ~ between half and twice it, ✗ otherwise; `uncertain` when the verdict changes inside our
/// interval. A paper value of no effect is ✓ when the whole interval lies within `band` of the
/// reference, ✗ when it lies wholly outside, else uncertain. Returns the ratio at our mean
/// (NaN for a no-effect claim).
pub fn verdict(ours: &Estimate, paper: f64, reference: f64, band: f64) -> (Verdict, f64) {
    let effect = paper - reference;
    if effect == 0.0 {
        let (lo, hi) = (ours.low - reference, ours.high - reference);
        let v = if lo.abs() <= band && hi.abs() <= band {
            Verdict::Match
        } else if lo > band || hi < -band {
            Verdict::Miss
        } else {
            Verdict::Uncertain
        };
        return (v, f64::NAN);
    }
    let r = |x: f64| (x - reference) / effect;
    let (a, b) = {
        let (x, y) = (r(ours.low), r(ours.high));
        (x.min(y), x.max(y))
    };
    let first = class(a);
    let flips = std::iter::once(b)
        .chain(
            THRESHOLDS
                .iter()
                .flat_map(|t| [t - 1e-9, t + 1e-9])
                .filter(|p| (a..=b).contains(p)),
        )
        .any(|p| class(p) != first);
    (if flips { Verdict::Uncertain } else { first }, r(ours.mean))
}

/// The no-effect band of a figure in its own unit: a ratio for a normalised figure, percentage
/// points for a reduction, none (exact) for an absolute metric.
fn band(f: &FigureSpec) -> f64 {
    if f.normalize {
        NO_EFFECT_BAND
    } else if f.reduction {
        NO_EFFECT_BAND * 100.0
    } else {
        0.0
    }
}

/// What a row is, when it is not a reproduction: `input` (a value the workloads were built to
/// match) or `calibrated` (the calibration's target, reached by search on the baseline).
fn by_construction(d: &Data, f: &FigureSpec, variant: &str) -> Option<&'static str> {
    if f.inputs.iter().any(|v| v == variant) {
        return Some("input");
    }
    let c = d.spec.calibrate.as_ref()?;
    (c.variant == variant && c.metric == f.metric && !f.normalize && !f.reduction)
        .then_some("calibrated")
}

/// The claim of one variant at one grid point: per run (seed), the mean over the workloads
/// where the metric is defined; and the per-workload means over runs.
pub(super) fn claim_runs(values: &[&Vec<Vec<Option<f64>>>], s: usize) -> (Vec<f64>, Vec<f64>) {
    let runs = values.iter().map(|row| row[s].len()).max().unwrap_or(0);
    let per_run = (0..runs)
        .filter_map(|k| {
            let have: Vec<f64> = values
                .iter()
                .filter_map(|row| row[s].get(k).copied().flatten())
                .collect();
            (!have.is_empty()).then(|| have.iter().sum::<f64>() / have.len() as f64)
        })
        .collect();
    let per_workload = values
        .iter()
        .filter_map(|row| super::estimate(&row[s]).map(|e| e.mean))
        .collect();
    (per_run, per_workload)
}

/// One row per paper mean of a bars figure: the paper's value, ours with its interval over
/// seeds, the spread over workloads, the ratio of the effects, the verdict and the cause.
///
/// # Errors
/// A cause whose template does not evaluate on the results.
pub(super) fn claims_table(d: &Data) -> Result<Option<Table>, String> {
    let mut rows = Vec::new();
    for f in d.spec.figures.iter().filter(|f| f.kind == FigureKind::Bars) {
        if f.paper_mean.is_empty() {
            continue;
        }
        let (groups, variants, values): BarValues = super::bar_values(d, f);
        let reference = if f.normalize { 1.0 } else { 0.0 };
        for grid in d.grids() {
            let key = mean_key(&grid);
            let Some(paper) = f.paper_mean.get(&key) else {
                continue;
            };
            let rows_here = rows_at(&groups, &values, &grid);
            for (s, v) in variants.iter().enumerate() {
                let Some(&p) = paper.get(v) else { continue };
                let (per_run, per_workload) = claim_runs(&rows_here, s);
                let ours = Estimate::of(&per_run);
                let mut shown = ours.map_or("–".into(), |e| e.shown());
                if ours.is_some() && per_workload.len() < rows_here.len() {
                    shown.push_str(&format!(
                        " ({} of {} workloads)",
                        per_workload.len(),
                        rows_here.len()
                    ));
                }
                let spread = Estimate::of(&per_workload)
                    .filter(|e| e.runs >= 2)
                    .map_or("–".into(), |e| {
                        format!("{} ({} workloads)", e.shown(), e.runs)
                    });
                let (status, ratio) = match ours {
                    Some(o) => {
                        let (verdict, r) = verdict(&o, p, reference, band(f));
                        (
                            by_construction(d, f, v)
                                .unwrap_or(verdict.symbol())
                                .to_string(),
                            if r.is_finite() {
                                format!("{r:.2}")
                            } else {
                                "–".into()
                            },
                        )
                    }
                    None => ("–".to_string(), "–".to_string()),
                };
                let cause = match f.cause.get(v) {
                    Some(c) => causes::render(d, c)
                        .map_err(|e| format!("figure `{}`, cause of `{v}`: {e}", f.id))?,
                    None => "–".to_string(),
                };
                rows.push(vec![
                    f.title.clone(),
                    v.clone(),
                    if grid.is_empty() {
                        "–".into()
                    } else {
                        key.clone()
                    },
                    fmt(Some(p)),
                    shown,
                    spread,
                    ratio,
                    status,
                    cause,
                ]);
            }
        }
    }
    Ok((!rows.is_empty()).then(|| Table {
        header: [
            "figure",
            "variant",
            "grid",
            "paper (mean)",
            "ours: mean over workloads [95 % CI over seeds]",
            "over workloads: mean [95 % CI]",
            "ours ÷ paper, as effects",
            "verdict",
            "cause",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(v: f64) -> Estimate {
        Estimate::of(&[v]).unwrap()
    }

    fn interval(lo: f64, hi: f64) -> Estimate {
        Estimate {
            mean: (lo + hi) / 2.0,
            low: lo,
            high: hi,
            runs: 3,
        }
    }

    #[test]
    fn the_interval_is_students_t_over_the_runs() {
        let e = Estimate::of(&[1.0, 2.0, 3.0]).unwrap();
        // s = 1, n = 3: half-width t(0.975, 2) / sqrt(3) = 4.303 / 1.732.
        assert!((e.high - 2.0 - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(e.interval().map(|i| i.0 + i.1), Some(4.0));
        assert_eq!(point(5.0).interval(), None);
        assert_eq!(Estimate::of(&[]), None);
        assert!(t975(45) > 2.0 && t975(500) < 2.0);
    }

    #[test]
    fn verdicts_compare_effects_from_the_reference() {
        // Blocked 33.3 % against the paper's 33.0 %: within 10 % of the effect.
        assert_eq!(verdict(&point(33.3), 33.0, 0.0, 0.0).0, Verdict::Match);
        // Normalised 0.974 against 0.782: an eighth of the paper's gain.
        let (v, r) = verdict(&point(0.974), 0.782, 1.0, NO_EFFECT_BAND);
        assert_eq!(v, Verdict::Miss);
        assert!((r - 0.026 / 0.218).abs() < 1e-9);
        // 36.9 against 46.8: about four fifths.
        assert_eq!(verdict(&point(36.9), 46.8, 0.0, 0.0).0, Verdict::Near);
        // The other direction.
        assert_eq!(
            verdict(&point(1.1), 0.9, 1.0, NO_EFFECT_BAND).0,
            Verdict::Miss
        );
        // Exactly at a threshold: the closed side.
        assert_eq!(verdict(&point(0.9), 1.0, 0.0, 0.0).0, Verdict::Match);
        assert_eq!(verdict(&point(0.5), 1.0, 0.0, 0.0).0, Verdict::Near);
    }

    #[test]
    fn a_verdict_that_flips_inside_the_interval_is_uncertain() {
        // Paper effect 10: ours 8.5 … 9.5 crosses 0.9 (~ to ✓).
        assert_eq!(
            verdict(&interval(8.5, 9.5), 10.0, 0.0, 0.0).0,
            Verdict::Uncertain
        );
        // 6 … 15 spans ~, ✓ and ~ again: the ends agree, the middle does not.
        assert_eq!(
            verdict(&interval(6.0, 15.0), 10.0, 0.0, 0.0).0,
            Verdict::Uncertain
        );
        // Wholly inside one class.
        assert_eq!(
            verdict(&interval(9.2, 10.8), 10.0, 0.0, 0.0).0,
            Verdict::Match
        );
        assert_eq!(
            verdict(&interval(1.0, 4.0), 10.0, 0.0, 0.0).0,
            Verdict::Miss
        );
        // Normalised, paper 0.6 (a 40 % gain): ours 0.95 … 0.99 is a miss throughout.
        assert_eq!(
            verdict(&interval(0.95, 0.99), 0.6, 1.0, NO_EFFECT_BAND).0,
            Verdict::Miss
        );
        // A negative interval against a positive effect stays a miss.
        assert_eq!(
            verdict(&interval(-3.0, -1.0), 10.0, 0.0, 0.0).0,
            Verdict::Miss
        );
    }

    #[test]
    fn no_effect_is_met_only_inside_the_band() {
        let b = NO_EFFECT_BAND;
        assert_eq!(
            verdict(&interval(0.99, 1.02), 1.0, 1.0, b).0,
            Verdict::Match
        );
        assert_eq!(verdict(&point(1.024), 1.0, 1.0, b).0, Verdict::Match);
        // HIRE's online write latency, 1.0496 with one seed: outside the band.
        assert_eq!(verdict(&point(1.0496), 1.0, 1.0, b).0, Verdict::Miss);
        assert_eq!(verdict(&point(0.924), 1.0, 1.0, b).0, Verdict::Miss);
        // Straddling the band's edge.
        assert_eq!(
            verdict(&interval(1.01, 1.04), 1.0, 1.0, b).0,
            Verdict::Uncertain
        );
        // Reductions are in percentage points: 2.5 points either side of zero.
        assert_eq!(verdict(&point(-2.0), 0.0, 0.0, 2.5).0, Verdict::Match);
        assert_eq!(verdict(&point(3.0), 0.0, 0.0, 2.5).0, Verdict::Miss);
        assert!(verdict(&point(1.0), 1.0, 1.0, b).1.is_nan());
    }
}
