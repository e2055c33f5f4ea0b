//! Fits with activity envelopes: each direction's arrivals passed through its envelope's
//! inverse ("operational time", where the activity is even), the processes fitted there, and
//! the stand-in placed back in the envelopes' slices and checked against the workload itself;
//! and the choice `ssdlab trace fit` makes between that and one process per direction.

use super::super::profile::profile;
use super::super::{IoOp, Request};
use super::{
    admissible, best_candidate, finish, fit, Envelope, Fit, FitError, FitOptions, Profile,
};
use serde::Serialize;

/// How a workload's fit was made: with or without activity envelopes, and how many checks the
/// other way missed (`None`: not tried, or it could not fit).
#[derive(Debug, Clone, Serialize)]
pub struct FitChoice {
    /// The kept fit has an activity envelope per direction.
    pub enveloped: bool,
    /// Checks the fit without envelopes missed.
    pub plain_misses: usize,
    /// Checks the fit with envelopes missed, or why there is none.
    pub enveloped_misses: Result<usize, String>,
}

/// The fit of a workload as `ssdlab trace fit` makes it: one process per direction, and — when
/// that misses a check and `open` can read the workload again — with an activity envelope per
/// direction; the one that misses fewer checks is kept.
///
/// # Errors
/// [`FitError`] for workloads a generator cannot be fitted to.
pub fn fit_workload<I, E>(
    target: &Profile,
    open: Option<&dyn Fn() -> Result<I, String>>,
    opts: &FitOptions,
) -> Result<(Fit, FitChoice), FitError>
where
    I: Iterator<Item = Result<Request, E>>,
    E: std::fmt::Display,
{
    let plain = fit(target, opts)?;
    let plain_misses = plain.misses().len();
    let Some(open) = open.filter(|_| plain_misses > 0) else {
        let why = if plain_misses == 0 {
            "not needed".to_string()
        } else {
            "the workload cannot be read again (standard input)".to_string()
        };
        return Ok((
            plain,
            FitChoice {
                enveloped: false,
                plain_misses,
                enveloped_misses: Err(why),
            },
        ));
    };
    let env = envelopes(target);
    let enveloped = operational_profile(open, target, &env)
        .map_err(FitError::Stand)
        .and_then(|op| fit_enveloped(target, &op, &env, opts));
    match enveloped {
        Ok(f) if f.misses().len() < plain_misses => {
            let n = f.misses().len();
            Ok((
                f,
                FitChoice {
                    enveloped: true,
                    plain_misses,
                    enveloped_misses: Ok(n),
                },
            ))
        }
        other => Ok((
            plain,
            FitChoice {
                enveloped: false,
                plain_misses,
                enveloped_misses: other.map(|f| f.misses().len()).map_err(|e| e.to_string()),
            },
        )),
    }
}

/// Fits a spec with activity envelopes: the arrival processes are fitted to `operational`, the
/// workload's profile with each direction's arrival times passed through the inverse of its
/// envelope (`envelopes[0]` reads, `[1]` writes; [`envelopes`]), and the stand-in — the
/// processes run through the envelopes — is then checked against the workload's own `target`.
///
/// # Errors
/// [`FitError`] for workloads a generator cannot be fitted to.
pub fn fit_enveloped(
    target: &Profile,
    operational: &Profile,
    envelopes: &[Option<Envelope>; 2],
    opts: &FitOptions,
) -> Result<Fit, FitError> {
    admissible(target)?;
    let (best, arrivals) = best_candidate(operational, opts)?;
    finish(target, best, arrivals, Some(envelopes), opts)
}

/// Each direction's activity envelope over
/// [`ACTIVITY_SLICES`](super::profile::ACTIVITY_SLICES) slices of the span (`None`
/// for a direction without requests).
pub fn envelopes(target: &Profile) -> [Option<Envelope>; 2] {
    [0, 1].map(|d| {
        let counts: Vec<u64> = target.slices.iter().map(|s| s[d]).collect();
        Envelope::of_counts(&counts)
    })
}

/// The profile of a workload in operational time: each direction's arrival times passed
/// through the inverse of its envelope over the workload's span, the two directions merged in
/// time again. `open` opens the workload afresh (it is read twice, once per direction, and
/// streamed: memory does not grow with its length).
///
/// # Errors
/// The workload's read errors.
pub fn operational_profile<I, E>(
    open: impl Fn() -> Result<I, String>,
    target: &Profile,
    envelopes: &[Option<Envelope>; 2],
) -> Result<Profile, String>
where
    I: Iterator<Item = Result<Request, E>>,
    E: std::fmt::Display,
{
    let span_us = target.duration_s * 1e6;
    let first = open()?
        .next()
        .transpose()
        .map_err(|e| e.to_string())?
        .map_or(0, |r| r.time_ns);
    let direction = |op: IoOp| -> Result<_, String> {
        let warp = envelopes[usize::from(op == IoOp::Write)]
            .as_ref()
            .map(|e| e.warp(span_us));
        Ok(open()?.filter_map(move |r| match r {
            Ok(r) if r.op != op => None,
            Ok(mut r) => {
                let t_us = r.time_ns.saturating_sub(first) as f64 / 1e3;
                let u = warp.as_ref().map_or(t_us, |w| w.operational(t_us));
                r.time_ns = (u * 1e3).round() as u64;
                Some(Ok(r))
            }
            Err(e) => Some(Err(e.to_string())),
        }))
    };
    let mut reads = direction(IoOp::Read)?.peekable();
    let mut writes = direction(IoOp::Write)?.peekable();
    let merged = std::iter::from_fn(move || {
        let take_read = match (reads.peek(), writes.peek()) {
            (Some(Ok(r)), Some(Ok(w))) => r.time_ns <= w.time_ns,
            (Some(Err(_)), _) => true,
            (_, Some(Err(_))) => false,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if take_read {
            reads.next()
        } else {
            writes.next()
        }
    });
    profile(merged)
}
