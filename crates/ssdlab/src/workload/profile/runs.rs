//! Runs of consecutive events and the run an event is in on average (Σ n² / Σ n): how
//! heavy-tailed bursts are, beside their mean.

/// Runs of consecutive events (arrivals close together, writes to one page): the open run's
/// length, then the closed runs' count and sums of lengths and squared lengths.
#[derive(Debug, Clone, Default)]
pub(crate) struct Runs {
    open: u64,
    count: u64,
    sum: f64,
    sq: f64,
}

impl Runs {
    /// One more event in the open run.
    pub(crate) fn extend(&mut self) {
        self.open += 1;
    }

    /// Closes the open run (if any).
    pub(crate) fn close(&mut self) {
        let n = std::mem::take(&mut self.open) as f64;
        if n > 0.0 {
            self.count += 1;
            self.sum += n;
            self.sq += n * n;
        }
    }

    /// The mean run and the run an event is in on average (Σ n² / Σ n), the open run
    /// included; `None` with fewer than `min` runs.
    pub(crate) fn stats(&self, min: u64) -> Option<(f64, f64)> {
        let n = self.open as f64;
        let count = self.count + u64::from(n > 0.0);
        let sum = self.sum + n;
        (count >= min).then(|| (sum / count as f64, (self.sq + n * n) / sum))
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    /// Runs of 1, 3 and (still open) 2: mean 2, an event sees (1 + 9 + 4) / 6; with more runs
    /// asked for than there are, nothing.
    #[test]
    fn the_open_run_counts_and_too_few_runs_give_nothing() {
        let mut r = Runs::default();
        for n in [1, 3, 2] {
            r.close();
            (0..n).for_each(|_| r.extend());
        }
        let (mean, seen) = r.stats(3).unwrap();
        assert_eq!(mean, 2.0);
        assert!((seen - 14.0 / 6.0).abs() < 1e-12, "{seen}");
        assert_eq!(r.stats(4), None);
    }
}
