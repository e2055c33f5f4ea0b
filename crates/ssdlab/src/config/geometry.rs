//! `[geometry]`: the drive's physical organisation.

use super::*;

/// Physical organisation of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent channels (buses).
    pub channels: u32,
    /// Chips sharing each channel's bus.
    pub chips_per_channel: u32,
    /// Dies per chip; a die runs one array operation at a time.
    pub dies_per_chip: u32,
    /// Planes per die (each with its own blocks and active blocks).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Bytes per flash page (the mapping unit).
    pub page_size_bytes: u32,
}
