//! An activity envelope: the relative request rate in each of K equal slices of a stream's
//! span. A process given one places its requests slice by slice in proportion to the weights
//! (none in a slice of weight 0), its bursts keeping their shape within a slice (`side.rs`).
//! Long idle spans, diurnal swings and week-long traces are modelled this way instead of by
//! one ON/OFF pair stretched over the whole span. The envelope's cumulative weight also maps a
//! workload's own times to "operational" time, where its activity is even ([`Warp`]), for the
//! fit to model the processes there.

use std::fmt;

/// Most slices of an envelope.
pub const MAX_SLICES: usize = 1000;

/// Relative request rates of K equal slices of the span.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// One weight per slice (relative; only their proportions matter).
    pub weights: Vec<f64>,
}

impl Envelope {
    /// Parses `w1|w2|…` for key `key`.
    ///
    /// # Errors
    /// Fewer than two or more than [`MAX_SLICES`] weights, a weight that is not a finite
    /// number ≥ 0, or all weights zero.
    pub fn parse(key: &str, v: &str) -> Result<Self, String> {
        let e = Envelope {
            weights: weights(key, v)?,
        };
        e.validate(key)?;
        Ok(e)
    }

    /// Checks the weights.
    ///
    /// # Errors
    /// As [`Envelope::parse`].
    pub fn validate(&self, key: &str) -> Result<(), String> {
        let n = self.weights.len();
        if !(2..=MAX_SLICES).contains(&n) {
            return Err(format!(
                "synthetic spec {key}: {n} weight(s); give 2 to {MAX_SLICES} slices separated by |"
            ));
        }
        if self.weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!(
                "synthetic spec {key}: weights must be finite numbers >= 0"
            ));
        }
        if self.weights.iter().sum::<f64>() <= 0.0 {
            return Err(format!(
                "synthetic spec {key}: every weight is 0 (no slice could hold a request)"
            ));
        }
        Ok(())
    }

    /// The envelope of per-slice counts (`None` when there are none).
    pub fn of_counts(counts: &[u64]) -> Option<Self> {
        (counts.len() >= 2 && counts.iter().any(|&c| c > 0)).then(|| Envelope {
            weights: counts.iter().map(|&c| c as f64).collect(),
        })
    }

    /// The mapping over a span of `span` (any unit).
    pub fn warp(&self, span: f64) -> Warp {
        let total: f64 = self.weights.iter().sum();
        let mut cum = Vec::with_capacity(self.weights.len() + 1);
        let mut acc = 0.0;
        cum.push(0.0);
        for w in &self.weights {
            acc += w / total;
            cum.push(acc);
        }
        *cum.last_mut().expect("two slices at least") = 1.0;
        Warp { cum, span }
    }
}

impl fmt::Display for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.weights.iter().map(|w| format!("{w}")).collect();
        f.write_str(&parts.join("|"))
    }
}

/// The weights `w1|w2|…` of key `key`, each a finite number ≥ 0 (a message naming the key and
/// the weight otherwise).
pub(super) fn weights(key: &str, v: &str) -> Result<Vec<f64>, String> {
    v.split('|')
        .map(|w| {
            w.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    format!("synthetic spec {key}: `{w}` is not a weight (a finite number >= 0)")
                })
        })
        .collect()
}

/// An envelope's cumulative weight over a span: real time → operational time.
#[derive(Debug, Clone)]
pub struct Warp {
    /// Cumulative share of the weight at each slice boundary (0 … 1).
    cum: Vec<f64>,
    span: f64,
}

impl Warp {
    /// Operational time of real time `t`: the share of the weight before `t`, times the span
    /// (past the span, time runs on unwarped).
    pub fn operational(&self, t: f64) -> f64 {
        if t >= self.span || self.span <= 0.0 {
            return t;
        }
        let y = (t / self.span).max(0.0) * (self.cum.len() - 1) as f64;
        let k = (y as usize).min(self.cum.len() - 2);
        let (a, b) = (self.cum[k], self.cum[k + 1]);
        self.span * (a + (y - k as f64) * (b - a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operational_time_runs_by_the_weight_of_each_slice() {
        let e = Envelope::parse("envelope", "1|0|3").unwrap();
        let w = e.warp(300.0);
        // A quarter of the weight in the first slice, none in the second, the rest after.
        for (t, u) in [
            (0.0, 0.0),
            (50.0, 37.5),
            (100.0, 75.0),
            (200.0, 75.0),
            (250.0, 187.5),
        ] {
            assert!(
                (w.operational(t) - u).abs() < 1e-9,
                "{t}: {}",
                w.operational(t)
            );
        }
        assert_eq!(w.operational(350.0), 350.0);
        assert_eq!(e.to_string(), "1|0|3");
    }

    #[test]
    fn bad_envelopes_are_refused() {
        for (v, says) in [
            ("1", "1 weight"),
            ("1|-1", "not a weight"),
            ("0|0", "every weight is 0"),
            ("1|x", "not a weight"),
            ("1|inf", "not a weight"),
        ] {
            let e = Envelope::parse("read_envelope", v).unwrap_err();
            assert!(e.contains(says) && e.contains("read_envelope"), "{v}: {e}");
        }
    }
}
