//! Arrival processes of the generator beyond Poisson and constant gaps: an ON/OFF process
//! (a two-state Markov-modulated Poisson process, MMPP-2) and the b-model cascade
//! (Wang et al., "Data mining meets performance evaluation: fast algorithms for modeling
//! bursty traffic", ICDE 2002), a self-similar process with one parameter.
//!
//! Each process draws from its own seeded generator, so a stream of reads and a stream of
//! writes are independent and adding a process leaves the draws of the others unchanged.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution, Exp};

/// The shape of an arrival process; its mean gap is given apart (`iat_us`, `write_ratio`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Process {
    /// Exponential gaps (Poisson arrivals).
    Poisson,
    /// Constant gaps.
    Constant,
    /// Two-state MMPP: exponential ON and OFF periods of these means, with `on_share` of the
    /// requests arriving during ON periods (1 = nothing arrives while OFF).
    OnOff {
        /// Mean ON period, ms.
        on_ms: f64,
        /// Mean OFF period, ms.
        off_ms: f64,
        /// Share of requests that arrive in ON periods.
        on_share: f64,
    },
    /// b-model cascade over windows of `span_s` seconds: each interval's requests are split
    /// between its halves binomially with probability `b` for a half chosen at random, down to
    /// 1 µs, so the busiest half holds a share `b` on average at every scale.
    BModel {
        /// Bias, in [0.5, 1): 0.5 is uniform, near 1 all requests fall in one burst.
        b: f64,
        /// Length of one cascade, s (`None`: the whole stream's nominal length).
        span_s: Option<f64>,
    },
}

impl Process {
    /// The spec's name of the process.
    pub fn name(&self) -> &'static str {
        match self {
            Process::Poisson => "exp",
            Process::Constant => "const",
            Process::OnOff { .. } => "onoff",
            Process::BModel { .. } => "bmodel",
        }
    }

    /// Checks the parameters; `key` prefixes the names in messages (`read_`, `write_` or
    /// nothing).
    pub(crate) fn validate(&self, key: &str) -> Result<(), String> {
        match *self {
            Process::Poisson | Process::Constant => Ok(()),
            Process::OnOff {
                on_ms,
                off_ms,
                on_share,
            } => {
                if !(on_ms.is_finite() && on_ms > 0.0) {
                    return Err(format!("{key}on_ms = {on_ms}: must be > 0"));
                }
                if !(off_ms.is_finite() && off_ms > 0.0) {
                    return Err(format!("{key}off_ms = {off_ms}: must be > 0"));
                }
                if !(0.0..=1.0).contains(&on_share) {
                    return Err(format!("{key}on_share = {on_share}: must be in [0, 1]"));
                }
                Ok(())
            }
            Process::BModel { b, span_s } => {
                if !(0.5..1.0).contains(&b) {
                    return Err(format!("{key}b = {b}: must be in [0.5, 1)"));
                }
                match span_s {
                    Some(s) if !(s.is_finite() && s > 0.0) => {
                        Err(format!("{key}span_s = {s}: must be > 0"))
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}

/// Exponential gaps of a Poisson stream of `rate` per µs (`None` for no arrivals).
fn gaps(rate: f64) -> Option<Exp<f64>> {
    (rate > 0.0).then(|| Exp::new(rate).expect("positive rate"))
}

/// Finest interval of the b-model cascade, µs: below it requests spread uniformly.
const BMODEL_LEAF_US: f64 = 1.0;

/// A running arrival process: successive absolute arrival times, µs.
#[derive(Clone)]
pub(crate) enum Arrival {
    Poisson(Exp<f64>),
    Constant(f64),
    OnOff {
        on: bool,
        left_us: f64,
        /// Gaps while ON and while OFF (`None`: nothing arrives in that state).
        gaps_on: Option<Exp<f64>>,
        gaps_off: Option<Exp<f64>>,
        dwell_on: Exp<f64>,
        dwell_off: Exp<f64>,
    },
    BModel {
        b: f64,
        span_us: f64,
        per_cascade: u64,
        base_us: f64,
        /// Intervals still to split: (start µs, length µs, requests).
        stack: Vec<(f64, f64, u64)>,
        /// Arrivals of the current leaf, latest first.
        leaf: Vec<f64>,
    },
}

impl Arrival {
    /// A process of mean gap `gap_us` (> 0) whose nominal length is `total_us`.
    pub(crate) fn new(p: Process, gap_us: f64, total_us: f64, rng: &mut ChaCha8Rng) -> Self {
        let rate = 1.0 / gap_us;
        match p {
            Process::Poisson => Arrival::Poisson(Exp::new(rate).expect("positive rate")),
            Process::Constant => Arrival::Constant(gap_us),
            Process::OnOff {
                on_ms,
                off_ms,
                on_share,
            } => {
                let p_on = on_ms / (on_ms + off_ms);
                let on = rng.random_bool(p_on);
                let dwell_on = Exp::new(1.0 / (on_ms * 1e3)).expect("validated");
                let dwell_off = Exp::new(1.0 / (off_ms * 1e3)).expect("validated");
                let left_us = if on {
                    dwell_on.sample(rng)
                } else {
                    dwell_off.sample(rng)
                };
                Arrival::OnOff {
                    on,
                    left_us,
                    gaps_on: gaps(rate * on_share / p_on),
                    gaps_off: gaps(rate * (1.0 - on_share) / (1.0 - p_on)),
                    dwell_on,
                    dwell_off,
                }
            }
            Process::BModel { b, span_s } => {
                let span_us = span_s.map_or(total_us.max(gap_us), |s| s * 1e6);
                Arrival::BModel {
                    b,
                    span_us,
                    per_cascade: ((span_us * rate).round() as u64).max(1),
                    base_us: -span_us,
                    stack: Vec::new(),
                    leaf: Vec::new(),
                }
            }
        }
    }

    /// The arrival after `now_us`, µs (`now_us` is the previous arrival; the first call gets
    /// 0 and Poisson and constant processes then arrive at 0).
    pub(crate) fn next(&mut self, now_us: f64, first: bool, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            Arrival::Poisson(e) => {
                if first {
                    0.0
                } else {
                    now_us + e.sample(rng)
                }
            }
            Arrival::Constant(g) => {
                if first {
                    0.0
                } else {
                    now_us + *g
                }
            }
            Arrival::OnOff {
                on,
                left_us,
                gaps_on,
                gaps_off,
                dwell_on,
                dwell_off,
            } => {
                let mut t = now_us;
                loop {
                    let gaps = if *on { &*gaps_on } else { &*gaps_off };
                    if let Some(gaps) = gaps {
                        let gap = gaps.sample(rng);
                        if gap < *left_us {
                            *left_us -= gap;
                            return t + gap;
                        }
                    }
                    t += *left_us;
                    *on = !*on;
                    *left_us = if *on {
                        dwell_on.sample(rng)
                    } else {
                        dwell_off.sample(rng)
                    };
                }
            }
            Arrival::BModel {
                b,
                span_us,
                per_cascade,
                base_us,
                stack,
                leaf,
            } => loop {
                if let Some(t) = leaf.pop() {
                    return t;
                }
                let Some((start, len, n)) = stack.pop() else {
                    *base_us += *span_us;
                    stack.push((*base_us, *span_us, *per_cascade));
                    continue;
                };
                if n == 0 {
                    continue;
                }
                if n == 1 || len <= BMODEL_LEAF_US {
                    leaf.extend((0..n).map(|_| start + rng.random::<f64>() * len));
                    leaf.sort_unstable_by(|x, y| y.total_cmp(x));
                    continue;
                }
                let big = Binomial::new(n, *b).expect("validated bias").sample(rng);
                let (left, right) = if rng.random_bool(0.5) {
                    (big, n - big)
                } else {
                    (n - big, big)
                };
                let half = len / 2.0;
                stack.push((start + half, half, right));
                stack.push((start, half, left));
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn times(p: Process, gap: f64, n: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut a = Arrival::new(p, gap, gap * n as f64, &mut rng);
        let mut t = 0.0;
        (0..n)
            .map(|i| {
                t = a.next(t, i == 0, &mut rng);
                t
            })
            .collect()
    }

    #[test]
    fn every_process_keeps_its_mean_rate_and_order() {
        for p in [
            Process::Poisson,
            Process::Constant,
            Process::OnOff {
                on_ms: 0.5,
                off_ms: 4.5,
                on_share: 0.9,
            },
            Process::BModel {
                b: 0.75,
                span_s: None,
            },
        ] {
            let t = times(p, 100.0, 200_000);
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{p:?} out of order");
            let mean = (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64;
            assert!((mean - 100.0).abs() < 5.0, "{p:?}: mean gap {mean}");
        }
    }

    #[test]
    fn on_off_puts_its_share_of_requests_in_on_periods() {
        // With on_share = 1 nothing arrives while OFF: gaps longer than the longest plausible
        // ON gap appear (the OFF periods), and at least 10 % of the time passes in them.
        let t = times(
            Process::OnOff {
                on_ms: 1.0,
                off_ms: 9.0,
                on_share: 1.0,
            },
            100.0,
            100_000,
        );
        let long: f64 = t
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|&g| g > 1000.0)
            .sum();
        assert!(long / t[t.len() - 1] > 0.5, "{}", long / t[t.len() - 1]);
    }
}
