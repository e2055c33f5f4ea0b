//! Block and plane bookkeeping: write pointers, valid counts, erase counts, free pools and the
//! active block of each write stream.

use crate::flash::Level;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Write streams: each plane has one active block per stream. A stream is host or GC data
/// at one threshold-voltage level, so every block holds pages of a single level; GC's
/// shadow stream (shadowgc.txt) keeps relocated zombie pages apart from other relocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// GC relocations (else host data).
    pub gc: bool,
    /// GC relocations of zombie (host-shadow) pages into dedicated blocks.
    pub shadow: bool,
    /// Programming level of the stream's pages.
    pub level: Level,
}

impl Stream {
    /// Host writes at the normal level.
    pub const USER: Stream = Stream {
        gc: false,
        shadow: false,
        level: Level::Normal,
    };
    /// GC relocations at the normal level.
    pub const GC: Stream = Stream {
        gc: true,
        shadow: false,
        level: Level::Normal,
    };
    /// Number of streams.
    pub const COUNT: usize = 3 * Level::ALL.len();
    /// Host writes at `level`.
    pub fn user(level: Level) -> Self {
        Stream {
            gc: false,
            shadow: false,
            level,
        }
    }
    /// GC relocations keeping `level`.
    pub fn gc(level: Level) -> Self {
        Stream {
            gc: true,
            shadow: false,
            level,
        }
    }
    /// GC relocations of zombie pages into dedicated blocks, keeping `level`.
    pub fn dedicated(level: Level) -> Self {
        Stream {
            gc: true,
            shadow: true,
            level,
        }
    }
    /// Index into per-plane tables.
    pub fn index(self) -> usize {
        (usize::from(self.gc) + usize::from(self.shadow)) * Level::ALL.len() + self.level as usize
    }
    /// Only GC may take a plane's last free block, so GC can always make progress.
    pub fn may_take_last_block(self) -> bool {
        self.gc
    }
}

/// Life cycle of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, in the plane's free pool.
    Free,
    /// Being written by a stream.
    Active,
    /// Fully written and settled: a GC candidate.
    Full,
    /// Chosen by GC; its valid pages are being moved.
    Victim,
    /// Part of the HotR staging space: holds copies, never a GC victim or a data block.
    Staging,
}

/// Per-block metadata.
#[derive(Debug, Clone)]
pub struct BlockInfo {
    /// State.
    pub state: BlockState,
    /// Pages holding valid data.
    pub valid: u32,
    /// Next page to program.
    pub write_ptr: u32,
    /// Pages allocated whose program has not completed.
    pub inflight: u32,
    /// Erases so far.
    pub erase_count: u32,
    /// Time the last page was allocated (age for cost-benefit GC).
    pub last_write: SimTime,
    /// Threshold-voltage level its pages were programmed with (since its last erase).
    pub level: Level,
    /// Programmed in fast mode (shadowgc.txt: short retention, refreshed).
    pub fast: bool,
    /// Valid pages whose logical page is dirty in the host buffer (zombies).
    pub zombies: u32,
}

/// Per-plane pools.
#[derive(Debug, Clone)]
pub struct PlaneInfo {
    /// Free blocks ordered by (erase count, index): the least worn is taken first.
    pub free: BinaryHeap<Reverse<(u32, u32)>>,
    /// Active block per stream (`u32::MAX` = none).
    pub active: [u32; Stream::COUNT],
    /// A GC job is running on this plane.
    pub gc_running: bool,
    /// The plane belongs to the staging chip (no host data, no GC).
    pub staging: bool,
}

impl PlaneInfo {
    /// A plane whose blocks `first..first + n` are all free.
    pub fn new(first: u32, n: u32) -> Self {
        PlaneInfo {
            free: (first..first + n).map(|b| Reverse((0, b))).collect(),
            active: [u32::MAX; Stream::COUNT],
            gc_running: false,
            staging: false,
        }
    }
    /// Free blocks in the pool.
    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
    }
}

impl BlockInfo {
    /// A fresh, erased block.
    pub fn new() -> Self {
        BlockInfo {
            state: BlockState::Free,
            valid: 0,
            write_ptr: 0,
            inflight: 0,
            erase_count: 0,
            last_write: SimTime::ZERO,
            level: Level::Normal,
            fast: false,
            zombies: 0,
        }
    }
}

impl Default for BlockInfo {
    fn default() -> Self {
        Self::new()
    }
}
