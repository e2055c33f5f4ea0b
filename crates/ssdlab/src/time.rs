//! Simulated time: integer nanoseconds, never floating point.

use serde::Serialize;
use std::ops::{Add, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SimTime(pub u64);

impl SimTime {
    /// The start of every simulation.
    pub const ZERO: SimTime = SimTime(0);

    /// Nanoseconds since the start.
    pub fn ns(self) -> u64 {
        self.0
    }

    /// Microseconds since the start, for reports.
    pub fn as_us(self) -> f64 {
        self.0 as f64 / 1e3
    }

    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    fn add(self, ns: u64) -> SimTime {
        SimTime(self.0 + ns)
    }
}

impl Sub for SimTime {
    type Output = u64;
    fn sub(self, rhs: SimTime) -> u64 {
        self.0 - rhs.0
    }
}

/// Converts a non-negative duration in microseconds (as written in configs) to nanoseconds.
pub fn us_to_ns(us: f64) -> u64 {
    (us * 1e3).round() as u64
}
