//! The flash array: geometry and addresses, timing presets, and the state of dies and channels.

mod array;
mod geometry;
mod timing;

pub use array::{Channel, Die, DieState};
pub use geometry::{BlockId, ChannelId, DieId, Geometry, PlaneId, Ppn};
pub use timing::{CellType, Timing};
