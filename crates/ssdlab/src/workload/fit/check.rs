//! The verdict on a fitted stand-in: its first-order statistics against the workload's, and
//! its process parameters against the workload's span and counts. A fit that misses one is
//! reported as such and `ssdlab trace fit` exits non-zero ("never fail silently").

use super::super::profile::{Profile, SizeShare};
use super::super::synth::{Process, SynthSpec};
use serde::Serialize;

/// Write ratio: within this many percentage points.
pub const WRITE_PCT_POINTS: f64 = 1.0;
/// Duration: within this share.
pub const DURATION_SHARE: f64 = 0.10;
/// Reads or writes in a tenth of the span: within this share of the workload's count there,
/// or [`TENTH_FLOOR`] of all its requests, whichever is larger (a tenth with few requests is
/// judged by the floor, not by a share of almost nothing).
pub const TENTH_SHARE: f64 = 0.25;
/// See [`TENTH_SHARE`].
pub const TENTH_FLOOR: f64 = 0.01;
/// Mean request size of a direction: within this share, or three standard errors of the mean
/// of the direction's requests, whichever is larger (a direction of a few requests draws its
/// sizes with that much noise).
pub const SIZE_SHARE: f64 = 0.10;

/// One statistic's verdict.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Check {
    /// What is compared.
    pub statistic: String,
    /// The workload's value (for a parameter check, the limit the workload sets).
    pub trace: f64,
    /// The stand-in's value (for a parameter check, the parameter's).
    pub stand_in: f64,
    /// The bound it must meet, in words.
    pub bound: String,
    /// Whether it does.
    pub ok: bool,
}

fn within(statistic: String, trace: f64, stand_in: f64, tol: f64, bound: String) -> Check {
    Check {
        statistic,
        trace,
        stand_in,
        ok: (stand_in - trace).abs() <= tol,
        bound,
    }
}

/// A number as a check shows it: whole numbers without decimals.
pub fn shown(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// Mean and standard deviation of the size, KiB, over the listed sizes (the rest, rare sizes,
/// left out on both sides alike).
fn mean_kib(sizes: &[SizeShare]) -> (f64, f64) {
    let share: f64 = sizes.iter().map(|s| s.pct).sum();
    if share <= 0.0 {
        return (0.0, 0.0);
    }
    let mean = sizes.iter().map(|s| f64::from(s.kib) * s.pct).sum::<f64>() / share;
    let var = sizes
        .iter()
        .map(|s| (f64::from(s.kib) - mean).powi(2) * s.pct)
        .sum::<f64>()
        / share;
    (mean, var.sqrt())
}

/// How many of [`checks`] the stand-in misses.
pub(super) fn missed(target: &Profile, got: &Profile, spec: &SynthSpec) -> usize {
    checks(target, got, spec).iter().filter(|c| !c.ok).count()
}

/// The checks of stand-in profile `got` (generated at the workload's length) against the
/// workload's `target`, and of `spec`'s processes against the workload.
pub fn checks(target: &Profile, got: &Profile, spec: &SynthSpec) -> Vec<Check> {
    let mut v = Vec::new();
    let n = target.requests as f64;
    v.push(within(
        "requests".into(),
        n,
        got.requests as f64,
        0.0,
        "equal".into(),
    ));
    v.push(within(
        "write_pct".into(),
        target.write_pct,
        got.write_pct,
        WRITE_PCT_POINTS,
        format!("± {WRITE_PCT_POINTS} point"),
    ));
    v.push(within(
        "duration_s".into(),
        target.duration_s,
        got.duration_s,
        DURATION_SHARE * target.duration_s,
        format!("± {:.0} %", DURATION_SHARE * 100.0),
    ));
    let floor = TENTH_FLOOR * n;
    for (name, t, g) in [
        ("reads", &target.tenths.reads, &got.tenths.reads),
        ("writes", &target.tenths.writes, &got.tenths.writes),
    ] {
        for (i, (&a, &b)) in t.iter().zip(g).enumerate() {
            let tol = (TENTH_SHARE * a as f64).max(floor);
            v.push(within(
                format!("{name} in tenth {}", i + 1),
                a as f64,
                b as f64,
                tol,
                format!("± {tol:.0}"),
            ));
        }
    }
    let counts = [
        n * (1.0 - target.write_pct / 100.0),
        n * target.write_pct / 100.0,
    ];
    for ((name, t, g), count) in [
        ("read", &target.sizes.read, &got.sizes.read),
        ("write", &target.sizes.write, &got.sizes.write),
    ]
    .into_iter()
    .zip(counts)
    {
        let (a, sd) = mean_kib(t);
        if a > 0.0 {
            let tol = (SIZE_SHARE * a).max(3.0 * sd / count.max(1.0).sqrt());
            v.push(within(
                format!("{name} mean size (KiB)"),
                a,
                mean_kib(g).0,
                tol,
                format!("± {tol:.2} KiB"),
            ));
        }
    }
    let span_ms = target.duration_s * 1e3;
    for (prefix, process, batch, share) in spec.processes() {
        let expected = n * share;
        let direction = match prefix {
            "read_" => counts[0],
            "write_" => counts[1],
            _ => n,
        };
        let param = |what: String, value: f64, limit: f64, ok: bool| Check {
            statistic: format!("{prefix}{what}"),
            trace: limit,
            stand_in: value,
            bound: "a value the workload can show".into(),
            ok,
        };
        if let Process::OnOff { on_ms, off_ms, .. } = process {
            for (k, ms) in [("on_ms", on_ms), ("off_ms", off_ms)] {
                v.push(param(
                    format!("{k} (≤ the span, ms)"),
                    ms,
                    span_ms,
                    ms <= span_ms,
                ));
            }
        }
        if share > 0.0 {
            v.push(param(
                "batch (≤ the direction's requests)".into(),
                batch,
                direction,
                batch <= direction.max(1.0),
            ));
            v.push(param(
                "requests drawn (> 0 where the workload has some)".into(),
                expected,
                direction,
                direction == 0.0 || expected >= 1.0,
            ));
        }
    }
    v
}
