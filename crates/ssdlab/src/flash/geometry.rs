//! Geometry and the dense numbering of dies, planes, blocks and pages.
//!
//! Global numbering nests as channel → chip → die → plane → block → page, so a physical page
//! number (`Ppn`) determines its block, plane, die and channel by division.

use crate::config::GeometryConfig;
use serde::Serialize;

/// Global die index (channel-major).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct DieId(pub u32);
/// Global plane index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PlaneId(pub u32);
/// Global block index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BlockId(pub u32);
/// Physical page number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Ppn(pub u32);
/// Channel index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ChannelId(pub u32);

/// Derived geometry with address arithmetic.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// Channels, including a HotR staging channel if there is one (always the last).
    pub channels: u32,
    /// Channels that hold host data (all but the staging channel).
    pub data_channels: u32,
    /// Chips per channel.
    pub chips_per_channel: u32,
    /// Dies per chip.
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Bytes per page.
    pub page_size_bytes: u32,
}

impl Geometry {
    /// Geometry of a validated config.
    pub fn new(c: &GeometryConfig) -> Self {
        Geometry {
            channels: c.channels,
            data_channels: c.channels,
            chips_per_channel: c.chips_per_channel,
            dies_per_chip: c.dies_per_chip,
            planes_per_die: c.planes_per_die,
            blocks_per_plane: c.blocks_per_plane,
            pages_per_block: c.pages_per_block,
            page_size_bytes: c.page_size_bytes,
        }
    }
    /// The geometry of a configuration: with a dedicated staging chip, one more channel of the
    /// same shape is appended after the data channels; with Rails the second half of the
    /// channels holds the mirror and no data of its own.
    pub fn of(cfg: &crate::config::Config) -> Self {
        let mut g = Geometry::new(&cfg.geometry);
        if cfg.staging.design == crate::config::StagingDesign::ExtraChip {
            g.channels += 1;
        }
        if cfg.redundancy.scheme == crate::config::RedundancyScheme::Rails {
            g.data_channels = g.channels / 2;
        }
        g
    }
    /// Dies holding host data.
    pub fn data_dies(&self) -> u32 {
        self.data_channels * self.dies_per_channel()
    }
    /// Planes holding host data.
    pub fn data_planes(&self) -> u32 {
        self.data_dies() * self.planes_per_die
    }
    /// Pages of the planes holding host data.
    pub fn data_pages(&self) -> u32 {
        self.data_planes() * self.blocks_per_plane * self.pages_per_block
    }
    /// Number of dies.
    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    /// Dies sharing one channel.
    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    /// Number of planes.
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    /// Number of blocks.
    pub fn blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    /// Number of physical pages.
    pub fn pages(&self) -> u32 {
        self.blocks() * self.pages_per_block
    }
    /// Channel of a die.
    pub fn channel_of(&self, die: DieId) -> ChannelId {
        ChannelId(die.0 / self.dies_per_channel())
    }
    /// Die of a plane.
    pub fn die_of_plane(&self, plane: PlaneId) -> DieId {
        DieId(plane.0 / self.planes_per_die)
    }
    /// Plane of a block.
    pub fn plane_of_block(&self, block: BlockId) -> PlaneId {
        PlaneId(block.0 / self.blocks_per_plane)
    }
    /// Block of a page.
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        BlockId(ppn.0 / self.pages_per_block)
    }
    /// Page offset inside its block.
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        ppn.0 % self.pages_per_block
    }
    /// Block number inside its plane.
    pub fn block_in_plane(&self, block: BlockId) -> u32 {
        block.0 % self.blocks_per_plane
    }
    /// Plane of a page.
    pub fn plane_of(&self, ppn: Ppn) -> PlaneId {
        self.plane_of_block(self.block_of(ppn))
    }
    /// Die of a page.
    pub fn die_of(&self, ppn: Ppn) -> DieId {
        self.die_of_plane(self.plane_of(ppn))
    }
    /// First page of a block.
    pub fn first_page(&self, block: BlockId) -> Ppn {
        Ppn(block.0 * self.pages_per_block)
    }
    /// First block of a plane.
    pub fn first_block(&self, plane: PlaneId) -> BlockId {
        BlockId(plane.0 * self.blocks_per_plane)
    }
    /// The first plane of a die.
    pub fn die_plane(&self, die: DieId) -> PlaneId {
        PlaneId(die.0 * self.planes_per_die)
    }
    /// The planes of a die, as global plane numbers.
    pub fn planes_of_die(&self, die: DieId) -> std::ops::Range<u32> {
        let first = self.die_plane(die).0;
        first..first + self.planes_per_die
    }
    /// Plane from its (channel, chip, die, plane) coordinates.
    pub fn plane_at(&self, channel: u32, chip: u32, die: u32, plane: u32) -> PlaneId {
        let die_global = (channel * self.chips_per_channel + chip) * self.dies_per_chip + die;
        PlaneId(die_global * self.planes_per_die + plane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_nest() {
        let g = Geometry {
            channels: 2,
            data_channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 8,
            page_size_bytes: 4096,
        };
        assert_eq!(g.pages(), 2 * 2 * 2 * 2 * 4 * 8);
        let plane = g.plane_at(1, 0, 1, 1);
        assert_eq!(plane, PlaneId(11));
        let block = BlockId(g.first_block(plane).0 + 3);
        let ppn = Ppn(g.first_page(block).0 + 5);
        assert_eq!(g.plane_of(ppn), plane);
        assert_eq!(g.page_in_block(ppn), 5);
        assert_eq!(g.die_of(ppn), DieId(5));
        assert_eq!(g.channel_of(DieId(5)), ChannelId(1));
    }
}
