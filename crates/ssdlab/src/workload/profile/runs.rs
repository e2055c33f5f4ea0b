//! Runs of consecutive events and the run an event is in on average (Σ n² / Σ n): how
//! heavy-tailed bursts are, beside their mean, and how many runs that tail rests on.

use std::collections::BTreeMap;

/// What [`Runs`] measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RunStats {
    /// Mean run length.
    pub mean: f64,
    /// The run an event is in on average (Σ n² / Σ n).
    pub seen: f64,
    /// Standard error of the excess `seen − mean` by the delete-one-run jackknife: large when
    /// a few long runs make the tail (a fit trusts a tail only well above it).
    pub excess_se: f64,
}

/// Runs of consecutive events (arrivals close together, writes to one page): the open run's
/// length, then the closed runs' count, sums of lengths and squared lengths, and how many runs
/// have each length (distinct lengths are at most √(2 Σ n), so the map stays small).
#[derive(Debug, Clone, Default)]
pub(crate) struct Runs {
    open: u64,
    count: u64,
    sum: f64,
    sq: f64,
    lengths: BTreeMap<u64, u64>,
}

impl Runs {
    /// One more event in the open run.
    pub(crate) fn extend(&mut self) {
        self.open += 1;
    }

    /// Closes the open run (if any).
    pub(crate) fn close(&mut self) {
        let n = std::mem::take(&mut self.open);
        if n > 0 {
            self.count += 1;
            self.sum += n as f64;
            self.sq += (n * n) as f64;
            *self.lengths.entry(n).or_default() += 1;
        }
    }

    /// The runs' statistics, the open run included; `None` with fewer than `min` runs (or
    /// fewer than 2).
    pub(crate) fn stats(&self, min: u64) -> Option<RunStats> {
        let open = self.open as f64;
        let count = self.count + u64::from(self.open > 0);
        if count < min.max(2) {
            return None;
        }
        let (n, s1, s2) = (count as f64, self.sum + open, self.sq + open * open);
        let excess = |s1: f64, s2: f64, n: f64| s2 / s1 - s1 / n;
        // The excess without one run of each length, and how many runs have it.
        let mut drops: Vec<(f64, f64)> = self
            .lengths
            .iter()
            .map(|(&l, &k)| (l as f64, k as f64))
            .collect();
        if self.open > 0 {
            drops.push((open, 1.0));
        }
        let without = |l: f64| excess(s1 - l, s2 - l * l, n - 1.0);
        let mean_without = drops.iter().map(|&(l, k)| k * without(l)).sum::<f64>() / n;
        let spread: f64 = drops
            .iter()
            .map(|&(l, k)| k * (without(l) - mean_without).powi(2))
            .sum();
        Some(RunStats {
            mean: s1 / n,
            seen: s2 / s1,
            excess_se: ((n - 1.0) / n * spread).sqrt(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    fn runs(lengths: &[u64]) -> Runs {
        let mut r = Runs::default();
        for &n in lengths {
            r.close();
            (0..n).for_each(|_| r.extend());
        }
        r
    }

    /// Runs of 1, 3 and (still open) 2: mean 2, an event sees (1 + 9 + 4) / 6; with more runs
    /// asked for than there are, nothing.
    #[test]
    fn the_open_run_counts_and_too_few_runs_give_nothing() {
        let r = runs(&[1, 3, 2]);
        let s = r.stats(3).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!((s.seen - 14.0 / 6.0).abs() < 1e-12, "{s:?}");
        assert_eq!(r.stats(4), None);
    }

    /// The jackknife by hand: runs 1, 1, 4. Without a 1: runs 1, 4, excess 17/5 − 5/2 = 0.9
    /// (twice); without the 4: runs 1, 1, excess 0. Mean 0.6; SE² = 2/3 × (2 × 0.3² + 0.6²).
    #[test]
    fn the_excess_error_is_the_delete_one_jackknife() {
        let s = runs(&[1, 1, 4]).stats(2).unwrap();
        let want = (2.0 / 3.0 * (2.0 * 0.09 + 0.36f64)).sqrt();
        assert!((s.excess_se - want).abs() < 1e-12, "{s:?} vs {want}");
    }

    /// A tail made by one long run is uncertain; the same excess from many long runs is not.
    #[test]
    fn a_tail_of_one_run_is_less_certain_than_one_of_many() {
        let mut one = vec![1; 999];
        one.push(150);
        let mut many = vec![1; 900];
        many.extend([13; 100]);
        let (one, many) = (
            runs(&one).stats(10).unwrap(),
            runs(&many).stats(10).unwrap(),
        );
        let (x1, x2) = (one.seen - one.mean, many.seen - many.mean);
        assert!(x1 > x2, "{one:?} {many:?}");
        assert!(
            x1 - 2.0 * one.excess_se < x2 - 2.0 * many.excess_se,
            "{one:?} {many:?}"
        );
        assert!(many.excess_se < 0.1 * x2, "{many:?}");
    }
}
