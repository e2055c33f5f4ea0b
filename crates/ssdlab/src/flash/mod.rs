//! The flash array: geometry and addresses, timing presets, and the state of dies and channels.

mod geometry;
mod timing;

use serde::{Deserialize, Serialize};

/// Threshold-voltage level a page is programmed with (hire.txt): higher levels read faster and
/// wear more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Lowered voltages: least wear, slowest reads (write-hot data).
    Low = 0,
    /// Standard voltages.
    Normal = 1,
    /// Boosted voltages: fastest reads, most wear (read-hot data).
    High = 2,
}

impl Level {
    /// All levels, low to high.
    pub const ALL: [Level; 3] = [Level::Low, Level::Normal, Level::High];
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Low => "low",
            Level::Normal => "normal",
            Level::High => "high",
        }
    }
}

pub use crate::config::CellType;
pub use geometry::{BlockId, ChannelId, DieId, Geometry, PlaneId, Ppn};
pub use timing::Timing;
