//! Block and plane bookkeeping: write pointers, valid counts, erase counts, free pools and the
//! active block of each write stream.

use crate::flash::Level;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Write streams: each plane has one active block per stream. A stream is host or GC data
/// at one threshold-voltage level, so every block holds pages of a single level; GC's
/// shadow stream (shadowgc.txt) keeps relocated zombie pages apart from other relocations.
/// With `ftl.flow_blocks = "own"` every I/O flow has streams of its own (`flow`), so no
/// block holds two flows' pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// GC relocations (else host data).
    pub gc: bool,
    /// GC relocations of zombie (host-shadow) pages into dedicated blocks.
    pub shadow: bool,
    /// Programming level of the stream's pages.
    pub level: Level,
    /// The I/O flow whose blocks it writes (0 unless flows have blocks of their own).
    pub flow: u16,
}

impl Stream {
    /// Host writes at the normal level.
    pub const USER: Stream = Stream {
        gc: false,
        shadow: false,
        level: Level::Normal,
        flow: 0,
    };
    /// GC relocations at the normal level.
    pub const GC: Stream = Stream {
        gc: true,
        shadow: false,
        level: Level::Normal,
        flow: 0,
    };
    /// Number of streams.
    pub const COUNT: usize = 3 * Level::ALL.len();
    /// Host writes at `level`.
    pub fn user(level: Level) -> Self {
        Stream {
            gc: false,
            shadow: false,
            level,
            flow: 0,
        }
    }
    /// GC relocations keeping `level`.
    pub fn gc(level: Level) -> Self {
        Stream {
            gc: true,
            shadow: false,
            level,
            flow: 0,
        }
    }
    /// GC relocations of zombie pages into dedicated blocks, keeping `level`.
    pub fn dedicated(level: Level) -> Self {
        Stream {
            gc: true,
            shadow: true,
            level,
            flow: 0,
        }
    }
    /// The same stream in flow `flow`'s blocks.
    pub fn of_flow(self, flow: u16) -> Self {
        Stream { flow, ..self }
    }
    /// Index into per-plane tables (whatever the flow).
    pub fn index(self) -> usize {
        (usize::from(self.gc) + usize::from(self.shadow)) * Level::ALL.len() + self.level as usize
    }
    /// The active-block slot the stream writes into: its own, or with `shared` (GC relocations
    /// into the host's open block, `ftl.gc_blocks = "shared"`) the host stream's of its level
    /// for plain GC relocations.
    /// Flow `f`'s slots follow flow `f - 1`'s, [`Stream::COUNT`] each.
    pub fn slot(self, shared: bool) -> usize {
        let own = if shared && self.gc && !self.shadow {
            Stream::user(self.level).index()
        } else {
            self.index()
        };
        usize::from(self.flow) * Stream::COUNT + own
    }
    /// Only GC may take a plane's last free block, so GC can always make progress.
    pub fn may_take_last_block(self) -> bool {
        self.gc
    }
    /// Free blocks this stream must leave in the pool when it opens a block: host writes
    /// leave `gc_reserve` (one per GC stream), GC may take the last one.
    pub fn reserve(self, gc_reserve: u32) -> u32 {
        if self.may_take_last_block() {
            0
        } else {
            gc_reserve
        }
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
    /// Programmed in fast mode (shadowgc.txt: short retention, refreshed).
    pub fast: bool,
    /// Valid pages whose logical page is dirty in the host buffer (zombies).
    pub zombies: u32,
    /// When it was last opened, as a count of blocks opened before it (DiskSim's block
    /// sequence number); 0 for blocks the fill wrote.
    pub opened: u32,
}

/// Per-plane pools.
#[derive(Debug, Clone)]
pub struct PlaneInfo {
    /// Free blocks ordered by (erase count, index): the least worn is taken first.
    pub free: BinaryHeap<Reverse<(u32, u32)>>,
    /// Active block per stream slot of flow 0 (`u32::MAX` = none): [`PlaneInfo::active`].
    active: [u32; Stream::COUNT],
    /// The other flows' slots when flows have blocks of their own, [`Stream::COUNT`] each.
    flow_active: Vec<u32>,
    /// GC jobs running on this plane (victim chosen, not yet erased).
    pub gc_jobs: u32,
    /// The plane belongs to the staging chip (no host data, no GC).
    pub staging: bool,
    /// Valid pages in the plane's blocks (the sum of their `valid`).
    pub valid: u64,
    /// Pages allocated and not yet programmed (the sum of its blocks' `inflight`).
    pub inflight: u32,
    /// A block was taken from the free pool since GC last checked (`ftl.gc_start`).
    pub took_block: bool,
}

impl PlaneInfo {
    /// A plane whose blocks `first..first + n` are all free.
    pub fn new(first: u32, n: u32) -> Self {
        PlaneInfo {
            free: (first..first + n).map(|b| Reverse((0, b))).collect(),
            active: [u32::MAX; Stream::COUNT],
            flow_active: Vec::new(),
            gc_jobs: 0,
            staging: false,
            valid: 0,
            inflight: 0,
            took_block: false,
        }
    }
    /// Memory the stream slots of flows `1..flows` take per plane ([`PlaneInfo::add_flows`]).
    pub fn flow_bytes(flows: u16) -> u64 {
        (usize::from(flows.saturating_sub(1)) * Stream::COUNT * std::mem::size_of::<u32>()) as u64
    }
    /// Gives flows `1..flows` stream slots of their own (`ftl.flow_blocks = "own"`).
    pub fn add_flows(&mut self, flows: u16) {
        let more = usize::from(flows.saturating_sub(1)) * Stream::COUNT;
        self.flow_active = vec![u32::MAX; more];
    }
    /// The active block of stream slot `slot` ([`Stream::slot`]; `u32::MAX` = none).
    #[inline]
    pub fn active(&self, slot: usize) -> u32 {
        match slot.checked_sub(Stream::COUNT) {
            None => self.active[slot],
            Some(i) => self.flow_active[i],
        }
    }
    /// Sets the active block of stream slot `slot` (`u32::MAX`: none).
    #[inline]
    pub fn set_active(&mut self, slot: usize, block: u32) {
        match slot.checked_sub(Stream::COUNT) {
            None => self.active[slot] = block,
            Some(i) => self.flow_active[i] = block,
        }
    }
    /// Every stream slot's active block.
    pub fn active_blocks_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.active.iter_mut().chain(self.flow_active.iter_mut())
    }
    /// Free blocks in the pool.
    pub fn free_blocks(&self) -> u32 {
        self.free.len() as u32
    }
    /// Whether GC should start: a data plane running fewer than `max_jobs` GC jobs, at or
    /// below `threshold` free blocks. A further job starts only while the free blocks could
    /// give every job, itself included, a new block per GC stream (`reserve` of them).
    pub fn needs_gc(&self, threshold: u32, max_jobs: u32, reserve: u32) -> bool {
        let free = self.free_blocks();
        !self.staging
            && self.gc_jobs < max_jobs
            && free <= threshold
            && (self.gc_jobs == 0 || free >= (self.gc_jobs + 1) * reserve)
    }
    /// Takes the least-erased free block as the active block of `slot` ([`Stream::slot`]);
    /// returns its global number.
    pub fn take_free(&mut self, slot: usize) -> Option<u32> {
        let Reverse((_, b)) = self.free.pop()?;
        self.set_active(slot, b);
        self.took_block = true;
        Some(b)
    }
    /// Returns erased block `id` (`b`) to the pool: free, unwritten, one more erase.
    pub fn reclaim(&mut self, id: u32, b: &mut BlockInfo) {
        b.state = BlockState::Free;
        b.fast = false;
        b.write_ptr = 0;
        b.erase_count += 1;
        self.free.push(Reverse((b.erase_count, id)));
    }
}

impl BlockInfo {
    /// Becomes an active block (`fast`: programmed in fast mode); the FTL records its level.
    pub fn open(&mut self, fast: bool) {
        self.state = BlockState::Active;
        self.fast = fast;
    }
    /// Its GC key: its valid count (plus its zombies when they count) if it is a candidate —
    /// full, with at least one invalid page — else `u16::MAX`.
    pub fn gc_key(&self, pages_per_block: u32, count_zombies: bool) -> u16 {
        if self.state == BlockState::Full && self.valid < pages_per_block {
            let zombies = if count_zombies { self.zombies } else { 0 };
            (self.valid + zombies).min(u32::from(u16::MAX - 1)) as u16
        } else {
            u16::MAX
        }
    }
    /// A fresh, erased block.
    pub fn new() -> Self {
        BlockInfo {
            state: BlockState::Free,
            valid: 0,
            write_ptr: 0,
            inflight: 0,
            erase_count: 0,
            last_write: SimTime::ZERO,
            fast: false,
            zombies: 0,
            opened: 0,
        }
    }
}

impl Default for BlockInfo {
    fn default() -> Self {
        Self::new()
    }
}
