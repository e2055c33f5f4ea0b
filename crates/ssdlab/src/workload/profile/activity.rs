//! Arrivals over the whole span in a bounded number of time buckets whose width doubles as the
//! span grows, so a week-long trace costs the same memory as a second-long one.

use serde::Serialize;

/// Most buckets kept; past it, neighbours merge and the width doubles.
const BUCKETS: usize = 65_536;

/// Reads and writes per bucket of a doubling width, from the first arrival.
#[derive(Debug, Clone, Default)]
pub(crate) struct ActivityCounter {
    first_ns: Option<u64>,
    width_ns: u64,
    counts: Vec<[u64; 2]>,
}

impl ActivityCounter {
    /// Starts the span at `t_ns` unless it has started (a counter of some arrivals only
    /// starts where the whole stream does).
    pub(crate) fn begin(&mut self, t_ns: u64) {
        self.first_ns.get_or_insert(t_ns);
    }

    /// Adds an arrival at `t_ns` (in arrival order), a write when `write`.
    pub(crate) fn add(&mut self, t_ns: u64, write: bool) {
        let first = *self.first_ns.get_or_insert(t_ns);
        if self.width_ns == 0 {
            self.width_ns = 1_000;
        }
        let mut i = (t_ns.saturating_sub(first) / self.width_ns) as usize;
        while i >= BUCKETS {
            let merged: Vec<[u64; 2]> = self
                .counts
                .chunks(2)
                .map(|c| [c.iter().map(|x| x[0]).sum(), c.iter().map(|x| x[1]).sum()])
                .collect();
            self.counts = merged;
            self.width_ns = self.width_ns.saturating_mul(2);
            i = (t_ns.saturating_sub(first) / self.width_ns) as usize;
        }
        if self.counts.len() <= i {
            self.counts.resize(i + 1, [0, 0]);
        }
        self.counts[i][usize::from(write)] += 1;
    }

    /// Reads and writes in each of `k` equal slices of the span up to `end_ns`; a bucket that
    /// straddles a slice boundary is shared between the two by overlap (so a slice is exact
    /// to within one bucket, at most 1/32,768 of the span).
    pub(crate) fn slices(&self, k: usize, end_ns: u64) -> Vec<[u64; 2]> {
        let mut out = vec![[0u64; 2]; k];
        let Some(first) = self.first_ns else {
            return out;
        };
        let span = end_ns.saturating_sub(first).max(1) as f64;
        let mut exact = vec![[0f64; 2]; k];
        let w = self.width_ns as f64;
        for (i, c) in self.counts.iter().enumerate() {
            let (a, b) = (
                i as f64 * w / span * k as f64,
                (i as f64 + 1.0) * w / span * k as f64,
            );
            let mut s = (a as usize).min(k - 1);
            loop {
                let lo = a.max(s as f64);
                let hi = if s + 1 >= k {
                    b.max(lo)
                } else {
                    b.min(s as f64 + 1.0)
                };
                let share = if b > a { (hi - lo) / (b - a) } else { 1.0 };
                exact[s][0] += c[0] as f64 * share;
                exact[s][1] += c[1] as f64 * share;
                if s + 1 >= k || b <= s as f64 + 1.0 {
                    break;
                }
                s += 1;
            }
        }
        // Whole counts that keep each direction's total (largest remainders).
        for d in 0..2 {
            let total: u64 = self.counts.iter().map(|c| c[d]).sum();
            let shares: Vec<f64> = exact.iter().map(|e| e[d]).collect();
            if total > 0 {
                for (o, n) in out
                    .iter_mut()
                    .zip(crate::workload::apportion(&shares, total))
                {
                    o[d] = n;
                }
            }
        }
        out
    }
}

/// Reads and writes in each tenth of the span (first to last arrival).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Tenths {
    /// Reads per tenth.
    pub reads: Vec<u64>,
    /// Writes per tenth.
    pub writes: Vec<u64>,
}

impl Tenths {
    pub(crate) fn of(slices: &[[u64; 2]]) -> Self {
        Tenths {
            reads: slices.iter().map(|s| s[0]).collect(),
            writes: slices.iter().map(|s| s[1]).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_exact_to_a_bucket_over_any_span() {
        let mut a = ActivityCounter::default();
        // A week: one read a minute in the first half, one write a minute in the second.
        let week_ns = 7 * 86_400 * 1_000_000_000u64;
        let minute = 60_000_000_000u64;
        let n = week_ns / minute;
        for i in 0..=n {
            a.add(i * minute, i > n / 2);
        }
        assert!(a.counts.len() <= BUCKETS);
        let t = a.slices(10, n * minute);
        let reads: u64 = t[..5].iter().map(|s| s[0]).sum();
        let writes: u64 = t[5..].iter().map(|s| s[1]).sum();
        assert_eq!(reads + writes, n + 1, "{t:?}");
        for s in &t {
            let total = s[0] + s[1];
            assert!(
                total.abs_diff((n + 1) / 10) <= 2 + (n + 1) / 32_768,
                "{t:?}"
            );
        }
    }
}
