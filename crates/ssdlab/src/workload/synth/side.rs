//! One running arrival process of a synthetic stream, in batches, and — with an activity
//! envelope — the exact placement of its requests in the envelope's slices.

use super::arrivals::{Arrival, Process};
use super::envelope::Envelope;
use crate::workload::apportion;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Gamma, Poisson};

/// The process itself: its arrivals in its own time, µs.
#[derive(Clone)]
struct Core {
    arrival: Arrival,
    rng: ChaCha8Rng,
    /// Its next request, µs (`None` before the first).
    next_us: Option<f64>,
    /// The process's latest arrival (a batch's start), µs.
    process_us: f64,
    /// How many requests a batch brings.
    law: BatchLaw,
    /// Gaps within a batch (`None`: all at once).
    spacing: Option<Exp<f64>>,
}

/// The law of a batch's size B (mean m); also the law of a run of writes to one page
/// (`rewrite_shape`).
#[derive(Clone)]
pub(super) enum BatchLaw {
    /// Geometric: after each request the batch goes on with probability `more` = 1 − 1 / m.
    Geometric { more: f64 },
    /// B − 1 Poisson with a gamma-distributed mean (shape r, mean m − 1): negative binomial,
    /// geometric at r = 1, a heavier tail below (a few very large batches among many small
    /// ones), E[B²] / E[B] = m + (m − 1)(1 + (m − 1) / r) / m. `left`: requests still to come
    /// in the current batch.
    Mixed { mean: Gamma<f64>, left: u64 },
}

/// Largest Poisson mean a batch of the mixed law draws from (a batch's size is bounded by the
/// workload's requests anyway; this keeps the draw finite).
const MAX_BATCH_MEAN: f64 = 1e9;

impl BatchLaw {
    pub(super) fn new(batch: f64, shape: f64) -> Self {
        if shape == 1.0 || batch <= 1.0 {
            BatchLaw::Geometric {
                more: 1.0 - 1.0 / batch,
            }
        } else {
            BatchLaw::Mixed {
                mean: Gamma::new(shape, (batch - 1.0) / shape).expect("validated shape"),
                left: 0,
            }
        }
    }

    /// A new batch starts: draws how many requests follow its first.
    pub(super) fn start(&mut self, rng: &mut ChaCha8Rng) {
        if let BatchLaw::Mixed { mean, left } = self {
            let lambda = mean.sample(rng).min(MAX_BATCH_MEAN);
            *left = if lambda > 0.0 {
                Poisson::new(lambda).map_or(0, |p| p.sample(rng) as u64)
            } else {
                0
            };
        }
    }

    /// Whether the current batch brings another request.
    pub(super) fn goes_on(&mut self, rng: &mut ChaCha8Rng) -> bool {
        match self {
            BatchLaw::Geometric { more } => *more > 0.0 && rng.random_bool(*more),
            BatchLaw::Mixed { left, .. } => {
                let on = *left > 0;
                *left = left.saturating_sub(1);
                on
            }
        }
    }
}

impl Core {
    fn peek(&mut self) -> f64 {
        match self.next_us {
            Some(t) => t,
            None => {
                let t = self.arrival.next(0.0, true, &mut self.rng);
                self.law.start(&mut self.rng);
                self.process_us = t;
                self.next_us = Some(t);
                t
            }
        }
    }

    fn take(&mut self) -> f64 {
        let t = self.peek();
        let next = if self.law.goes_on(&mut self.rng) {
            t + self
                .spacing
                .as_ref()
                .map_or(0.0, |e| e.sample(&mut self.rng))
        } else {
            self.process_us = self.arrival.next(self.process_us, false, &mut self.rng);
            self.law.start(&mut self.rng);
            self.process_us.max(t)
        };
        self.next_us = Some(next);
        t
    }
}

/// Exact counts per slice of the span: the process's requests, in order, fill the slices one
/// after another, each slice's requests mapped onto it linearly from the process times between
/// the request before them and the request after them — so a slice holds exactly its count
/// and a burst keeps its shape within it.
struct Placement {
    counts: Vec<u64>,
    slice_us: f64,
    /// The slice being filled (`counts.len()`: all are full).
    slice: usize,
    /// Requests of it still to come.
    left: u64,
    /// Process times mapped onto the slice's start and end.
    from_us: f64,
    to_us: f64,
    /// Process time of the latest request taken.
    last_us: f64,
    /// The slice being filled is the last with requests (its last request ends the span).
    closing: bool,
    /// Draws of the riders (kept off the process's generator, which placement replays).
    riders: ChaCha8Rng,
    /// Riders still to come in each slice, when each slice carries an exact number of them.
    rider_counts: Option<Vec<u64>>,
    /// Whether the request taken last is one of those riders.
    rode: bool,
}

/// Margin of a placed request from its slice's ends, as a share of the slice.
const INSIDE: f64 = 1e-4;

/// One running arrival process with its own generator, in batches.
pub(super) struct Side {
    core: Core,
    /// Probability that a request of this process is a read riding in a write batch.
    pub(super) reads: f64,
    placement: Option<Placement>,
}

impl Side {
    /// A process of `batch` requests per arrival on average (their law of gamma shape
    /// `shape`, 1 = geometric), `gap_us` apart on average.
    pub(super) fn new(
        p: Process,
        gap_us: f64,
        total_us: f64,
        batch: (f64, f64),
        batch_us: f64,
        seed: u64,
    ) -> Self {
        let (batch, shape) = batch;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Side {
            core: Core {
                arrival: Arrival::new(p, gap_us * batch, total_us, &mut rng),
                rng,
                next_us: None,
                process_us: 0.0,
                law: BatchLaw::new(batch, shape),
                spacing: (batch_us > 0.0).then(|| Exp::new(1.0 / batch_us).expect("validated gap")),
            },
            reads: 0.0,
            placement: None,
        }
    }

    /// Places the process's first `requests` requests in `envelope`'s slices of `span_us`, in
    /// proportion to the weights (exactly, after rounding); riders then draw from `seed`.
    pub(super) fn place(&mut self, envelope: &Envelope, requests: u64, span_us: f64, seed: u64) {
        self.place_counts(apportion(&envelope.weights, requests), None, span_us, seed);
    }

    /// Places the process's requests `counts[k]` in slice `k` of `span_us`; with `riders`,
    /// exactly `riders[k]` of slice `k`'s requests are riders (drawn from `seed` without
    /// replacement), else each is one with probability [`Self::reads`].
    pub(super) fn place_counts(
        &mut self,
        counts: Vec<u64>,
        riders: Option<Vec<u64>>,
        span_us: f64,
        seed: u64,
    ) {
        self.placement = Some(Placement {
            slice_us: span_us / counts.len() as f64,
            counts,
            slice: 0,
            left: 0,
            from_us: 0.0,
            to_us: 0.0,
            last_us: 0.0,
            closing: false,
            riders: ChaCha8Rng::seed_from_u64(seed),
            rider_counts: riders,
            rode: false,
        });
        self.next_slice(true);
    }

    /// Moves the placement to the next slice with requests (`first`: from the start), looking
    /// ahead on a copy of the process for the process times its requests span.
    fn next_slice(&mut self, first: bool) {
        let Some(p) = self.placement.as_mut() else {
            return;
        };
        if !first {
            p.slice += 1;
        }
        while p.slice < p.counts.len() && p.counts[p.slice] == 0 {
            p.slice += 1;
        }
        if p.slice >= p.counts.len() {
            return;
        }
        p.left = p.counts[p.slice];
        let last = p.counts[p.slice + 1..].iter().all(|&c| c == 0);
        let mut ahead = self.core.clone();
        // The first slice starts at its first request and the last ends at its last, so the
        // placed stream spans the envelope's span as the workload spans its own.
        p.from_us = if first { ahead.peek() } else { p.last_us };
        for _ in 1..p.left {
            ahead.take();
        }
        p.to_us = if last {
            ahead.peek()
        } else {
            ahead.take();
            ahead.peek()
        };
        p.closing = last;
    }

    /// Real time of process time `u` in the slice being filled.
    fn real(&self, u: f64) -> f64 {
        match &self.placement {
            None => u,
            Some(p) if p.slice >= p.counts.len() => f64::INFINITY,
            Some(p) => {
                let span = p.to_us - p.from_us;
                let within = if span > 0.0 {
                    ((u - p.from_us) / span).clamp(0.0, 1.0)
                } else if p.closing {
                    1.0
                } else {
                    0.5
                };
                // Kept just inside the slice, so a request mapped onto a boundary (a batch
                // cut by it) counts in its own slice whatever the rounding of its time.
                p.slice_us * (p.slice as f64 + INSIDE + within * (1.0 - 2.0 * INSIDE))
            }
        }
    }

    /// The slice of the envelope its next request is placed in (`None`: not placed).
    pub(super) fn slice(&self) -> Option<usize> {
        self.placement.as_ref().map(|p| p.slice)
    }

    /// Its next request, real time (infinite once a placed process has placed them all).
    pub(super) fn peek(&mut self) -> f64 {
        let u = self.core.peek();
        self.real(u)
    }

    /// Takes its next request; returns its real time.
    pub(super) fn take(&mut self) -> f64 {
        let u = self.core.peek();
        let t = self.real(u);
        self.core.take();
        if let Some(p) = self.placement.as_mut() {
            if let Some(riders) = p.rider_counts.as_mut() {
                let k = p.slice.min(riders.len() - 1);
                let left = p.left.max(1);
                p.rode = riders[k] > 0 && p.riders.random_range(0..left) < riders[k];
                riders[k] -= u64::from(p.rode);
            }
            p.last_us = u;
            p.left = p.left.saturating_sub(1);
            if p.left == 0 {
                self.next_slice(false);
            }
        }
        t
    }

    /// Whether the request just taken is a read riding in a write batch.
    pub(super) fn rider(&mut self) -> bool {
        if self.reads <= 0.0 {
            return false;
        }
        match self.placement.as_mut() {
            Some(p) if p.rider_counts.is_some() => p.rode,
            Some(p) => p.riders.random_bool(self.reads),
            None => self.core.rng.random_bool(self.reads),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placed_process_fills_each_slice_exactly_and_in_order() {
        let on_off = Process::OnOff {
            on_ms: 5.0,
            off_ms: 50.0,
            on_share: 0.95,
        };
        let mut s = Side::new(on_off, 100.0, 100_000.0, (3.0, 1.0), 5.0, 7);
        let e = Envelope {
            weights: vec![2.0, 0.0, 1.0, 7.0],
        };
        s.place(&e, 1000, 100_000.0, 9);
        let mut counts = [0u32; 4];
        let mut last = 0.0;
        for _ in 0..1000 {
            let t = s.take();
            assert!(t >= last && t <= 100_000.0, "{t} after {last}");
            last = t;
            counts[((t / 25_000.0) as usize).min(3)] += 1;
        }
        assert_eq!(counts, [200, 0, 100, 700]);
        assert_eq!(s.peek(), f64::INFINITY);
    }
}
