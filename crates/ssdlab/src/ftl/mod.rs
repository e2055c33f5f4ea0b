//! The flash translation layer: page-level mapping, block allocation per plane and stream,
//! GC victim choice, wear (least-erased free block first) and preconditioning.
//!
//! The FTL holds state and answers questions; the timed work (GC reads, programs, erases) is
//! issued by the simulation as operations on the dies, so it interferes with user I/O.
//!
//! About 520 lines of code (then its tests): the [`Ftl`]'s methods share its private tables —
//! mapping, block metadata, free lists, GC candidates — and keep them consistent together;
//! allocation, victim policies, preconditioning and the mapping itself are files of their own.

pub mod alloc;
pub mod blocks;
pub mod cmt;
mod direct;
mod fenwick;
mod fill;
pub mod gc;
pub mod mapping;
mod owner;
pub mod precondition;
mod steady;

pub use owner::FlowOwner;

use crate::config::{gc_threshold_blocks, Config, GcStart};
use crate::flash::{BlockId, Geometry, Level, PlaneId, Ppn};
use crate::time::SimTime;
use alloc::Striping;
use blocks::{BlockInfo, BlockState, PlaneInfo, Stream};
use gc::VictimPolicy;
use mapping::{Mapping, NONE};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;

/// The FTL state.
pub struct Ftl {
    /// Geometry.
    pub geo: Geometry,
    /// Mapping and versions.
    pub map: Mapping,
    /// Per-block metadata, indexed by global block number.
    pub blocks: Vec<BlockInfo>,
    /// Per block: the threshold-voltage level its pages were programmed with since its last
    /// erase. Beside `blocks` rather than in [`BlockInfo`]: every flash read looks it up, and
    /// a byte per block stays in cache where a block's 32 bytes do not (`hotr`: 160 KiB
    /// against 5 MiB).
    levels: Vec<Level>,
    /// Per-plane pools, indexed by global plane number.
    pub planes: Vec<PlaneInfo>,
    /// GC runs on a plane when its free blocks are at or below this.
    pub gc_threshold: u32,
    /// Per block: its valid-page count if it is a GC candidate (full, with an invalid page),
    /// else `u16::MAX`. Kept up to date so victim selection scans 2 bytes per block.
    gc_keys: Vec<u16>,
    striping: Striping,
    victim: Box<dyn VictimPolicy>,
    /// The configured victim policy (direct preconditioning builds one per plane).
    victim_kind: crate::config::GcVictim,
    /// When a further GC job may start (`ftl.gc_start`).
    gc_start: GcStart,
    /// Per logical page: dirty in the host buffer (a zombie). Empty without a host buffer.
    zombie: Vec<u64>,
    /// Zombies count against a block as GC victim (greedy-delay, ZGC).
    delay_zombies: bool,
    /// The shadow stream programs in fast mode (HGC, SGC).
    shadow_fast: bool,
    /// Free blocks per plane only GC may take: one per GC stream.
    gc_reserve: u32,
    /// GC relocations go into the host's open block (`ftl.gc_blocks = "shared"`).
    gc_shared: bool,
    /// Blocks opened so far by the run (the fill's are not counted).
    blocks_opened: u32,
    /// Which I/O flow owns each logical page, when flows have blocks of their own
    /// (`ftl.flow_blocks = "own"` with several flows).
    owner: Option<FlowOwner>,
    /// Flows with blocks of their own (1 when they share blocks): `owner`'s count, kept
    /// beside it for the write path.
    block_flows: u16,
    /// Pages per block that hold data (the rest hold the block's summary).
    data_ppb: u32,
    /// Blocks whose data pages are all allocated and whose summary pages are due, oldest
    /// first (taken by [`Ftl::take_summary`]).
    summaries: Vec<u32>,
    /// GC jobs a plane may run at once.
    max_gc_jobs: u32,
    /// The cached mapping table (`ftl.mapping_cache_*`), once the run starts.
    pub cmt: Option<cmt::MappingCache>,
}

/// A mapping cache's size in entries and its translation pages' entries per page
/// (`ftl.mapping_cache_*`), if one is configured.
pub fn mapping_cache_shape(cfg: &Config, geo: &Geometry) -> Option<(u32, u32)> {
    let t = &cfg.ftl;
    if t.mapping_cache_entries == 0 && t.mapping_cache_bytes == 0 {
        return None;
    }
    let pages = u64::from(geo.pages());
    let entries = if t.mapping_cache_entries > 0 {
        t.mapping_cache_entries
    } else {
        t.mapping_cache_bytes / u64::from(cmt::cached_entry_bytes(pages, geo.page_size_bytes))
    };
    let per_page = geo.page_size_bytes / cmt::translation_entry_bytes(pages, geo.page_size_bytes);
    Some((
        entries.clamp(1, u64::from(u32::MAX)) as u32,
        per_page.max(1),
    ))
}

/// Logical capacity in pages ([`Config::logical_pages`]).
pub fn logical_pages(cfg: &Config) -> u32 {
    cfg.logical_pages()
}

/// Blocks of the staging space: every block of the staging chip, or the last
/// `reserved_blocks_per_plane` blocks of every data plane.
pub fn staging_blocks(cfg: &Config, geo: &Geometry) -> Vec<u32> {
    let bpp = geo.blocks_per_plane;
    match cfg.staging.design {
        crate::config::StagingDesign::None => Vec::new(),
        crate::config::StagingDesign::ExtraChip => {
            (geo.data_planes() * bpp..geo.planes() * bpp).collect()
        }
        crate::config::StagingDesign::ReservedBlocks => {
            let n = cfg.staging.reserved_blocks_per_plane.min(bpp);
            (0..geo.data_planes())
                .flat_map(|p| (p * bpp + bpp - n)..(p + 1) * bpp)
                .collect()
        }
    }
}

impl Ftl {
    /// An empty (fully erased) drive whose mapping keeps versions in `tables`.
    ///
    /// # Errors
    /// [`mapping::OutOfMemory`] if the drive's tables do not fit in memory.
    pub fn new(
        cfg: &Config,
        gc_rng: ChaCha8Rng,
        tables: mapping::VersionTables,
    ) -> Result<Self, mapping::OutOfMemory> {
        let geo = Geometry::of(cfg);
        let mut planes: Vec<PlaneInfo> = (0..geo.planes())
            .map(|p| PlaneInfo::new(p * geo.blocks_per_plane, geo.blocks_per_plane))
            .collect();
        let mut blocks = vec![BlockInfo::new(); geo.blocks() as usize];
        let staging = staging_blocks(cfg, &geo);
        for &b in &staging {
            blocks[b as usize].state = BlockState::Staging;
        }
        for (p, plane) in planes.iter_mut().enumerate() {
            plane
                .free
                .retain(|Reverse((_, b))| blocks[*b as usize].state == BlockState::Free);
            plane.staging = p as u32 >= geo.data_planes();
        }
        Ok(Ftl {
            map: Mapping::with_translation(
                logical_pages(cfg),
                mapping_cache_shape(cfg, &geo).map_or(0, |(_, per_page)| {
                    cmt::MappingCache::translation_pages(logical_pages(cfg), per_page)
                }),
                geo.pages(),
                tables,
            )?,
            blocks,
            levels: vec![Level::Normal; geo.blocks() as usize],
            gc_keys: vec![u16::MAX; geo.blocks() as usize],
            planes,
            gc_threshold: gc_threshold_blocks(cfg.ftl.gc_threshold, geo.blocks_per_plane),
            striping: Striping::new(cfg.ftl.stripe_order, &geo),
            victim: gc::policy(cfg.ftl.gc_victim, gc_rng, cfg.geometry.blocks_per_plane),
            victim_kind: cfg.ftl.gc_victim,
            gc_start: cfg.ftl.gc_start,
            zombie: if cfg.buffer.host_pages > 0 {
                vec![0; (logical_pages(cfg) as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
            delay_zombies: cfg.shadow.gc.delays(),
            shadow_fast: cfg.shadow.gc.fast(),
            gc_reserve: 1 + u32::from(cfg.shadow.gc.separates()),
            gc_shared: cfg.ftl.gc_blocks == crate::config::GcBlocks::Shared,
            blocks_opened: 0,
            owner: None,
            block_flows: 1,
            data_ppb: geo.pages_per_block - cfg.ftl.summary_pages,
            summaries: Vec::new(),
            max_gc_jobs: cfg.ftl.gc_jobs_per_plane,
            cmt: None,
            geo,
        })
    }

    /// GC may relocate a victim's pages into `levels` write streams (a level policy that
    /// re-decides each page's level): every job needs a free block per stream and level, and
    /// GC starts no later than host writes stop for that reserve.
    pub fn relocate_into_levels(&mut self, levels: u32) {
        self.gc_reserve *= levels.max(1);
        self.gc_threshold = self.gc_threshold.max(self.gc_reserve);
    }

    /// Gives each I/O flow write streams of its own (`ftl.flow_blocks = "own"`): `owner`
    /// tells whose a logical page is. A GC job may then relocate into one new block per GC
    /// stream of each flow, and GC starts no later than host writes stop for that reserve.
    pub fn own_flow_blocks(&mut self, owner: FlowOwner) {
        let flows = owner.flows();
        for p in &mut self.planes {
            p.add_flows(flows);
        }
        self.gc_reserve *= u32::from(flows);
        self.gc_threshold = self.gc_threshold.max(self.gc_reserve);
        self.block_flows = flows;
        self.owner = Some(owner);
    }

    /// The flow whose blocks hold `lpn` (0 unless flows have blocks of their own; pages past
    /// the flows' spaces, such as translation pages, are flow 0's).
    #[inline]
    pub fn flow_of(&self, lpn: u32) -> u16 {
        self.owner.as_ref().map_or(0, |o| o.flow_of(lpn))
    }

    /// Flows with blocks of their own (1 when they share blocks).
    #[inline]
    pub fn block_flows(&self) -> u16 {
        self.block_flows
    }

    /// `stream` in the blocks of the flow owning `lpn` (itself unless flows have blocks of
    /// their own; the flow is looked up only then).
    #[inline(always)]
    pub fn flow_stream(&self, stream: Stream, lpn: u32) -> Stream {
        if self.block_flows > 1 {
            stream.of_flow(self.flow_of(lpn))
        } else {
            stream
        }
    }

    /// The plane a logical page belongs to under static striping (also where never-written
    /// pages are read from).
    pub fn home_plane(&self, lpn: u32) -> PlaneId {
        self.striping.plane(lpn)
    }

    /// Whether `stream` can get a page on `plane` now.
    pub fn can_alloc(&self, plane: PlaneId, stream: Stream) -> bool {
        let p = &self.planes[plane.0 as usize];
        let active = p.active(stream.slot(self.gc_shared));
        // Host writes leave one free block per GC stream for every GC job running (at least
        // one), so the jobs can always finish: a victim's pages need at most one new block per
        // stream and its erase gives one back.
        let reserve_left = p.free_blocks() > stream.reserve(self.gc_reserve * p.gc_jobs.max(1));
        if active != NONE && self.blocks[active as usize].write_ptr < self.data_ppb {
            // A block GC shares with host writes: while GC runs, host writes take its pages
            // only as they could open a block, or they could use up what GC opened it for.
            return !(self.gc_shared && p.gc_jobs > 0) || stream.gc || reserve_left;
        }
        reserve_left
    }

    /// Where `stream`'s next page on `plane` would go, as (block number within the plane, page
    /// offset), without taking it; `None` when [`Ftl::can_alloc`] is false.
    pub fn next_page(&self, plane: PlaneId, stream: Stream) -> Option<(u32, u32)> {
        if !self.can_alloc(plane, stream) {
            return None;
        }
        let p = &self.planes[plane.0 as usize];
        let active = p.active(stream.slot(self.gc_shared));
        let in_plane = |b: u32| self.geo.block_in_plane(BlockId(b));
        if active != NONE && self.blocks[active as usize].write_ptr < self.data_ppb {
            return Some((in_plane(active), self.blocks[active as usize].write_ptr));
        }
        let std::cmp::Reverse((_, b)) = p.free.peek()?;
        Some((in_plane(*b), 0))
    }

    /// Takes the next page of `stream`'s active block on `plane`, opening a new block (least
    /// erased first) when needed. Returns `None` when [`Ftl::can_alloc`] is false.
    pub fn alloc(&mut self, plane: PlaneId, stream: Stream, now: SimTime) -> Option<Ppn> {
        if !self.can_alloc(plane, stream) {
            return None;
        }
        let ppb = self.geo.pages_per_block;
        let mut active = self.planes[plane.0 as usize].active(stream.slot(self.gc_shared));
        if active == NONE || self.blocks[active as usize].write_ptr >= self.data_ppb {
            active = self.open_block(plane, stream);
        }
        let p = &mut self.planes[plane.0 as usize];
        let blk = &mut self.blocks[active as usize];
        let ppn = Ppn(active * ppb + blk.write_ptr);
        blk.write_ptr += 1;
        blk.inflight += 1;
        p.inflight += 1;
        blk.last_write = now;
        if blk.write_ptr == self.data_ppb {
            p.set_active(stream.slot(self.gc_shared), NONE);
            if self.data_ppb < ppb {
                // The summary pages are allocated with the last data page; the caller
                // programs them (`take_summary`).
                blk.inflight += ppb - self.data_ppb;
                p.inflight += ppb - self.data_ppb;
                blk.write_ptr = ppb;
                self.summaries.push(active);
            }
        }
        Some(ppn)
    }

    /// A block whose summary pages are due: their pages (allocated, to program and then
    /// settle with [`Ftl::commit_unmapped`]).
    pub fn take_summary(&mut self) -> Option<std::ops::Range<u32>> {
        let b = self.summaries.pop()?;
        let ppb = self.geo.pages_per_block;
        Some(b * ppb + self.data_ppb..(b + 1) * ppb)
    }

    /// Takes the least-erased free block of `plane` as `stream`'s active block.
    pub(crate) fn open_block(&mut self, plane: PlaneId, stream: Stream) -> u32 {
        let b = self.planes[plane.0 as usize]
            .take_free(stream.slot(self.gc_shared))
            .expect("the caller checked the pool");
        self.blocks_opened += 1;
        self.blocks[b as usize].open(stream.shadow && self.shadow_fast);
        self.blocks[b as usize].opened = self.blocks_opened;
        self.levels[b as usize] = stream.level;
        b
    }

    /// The level `block`'s pages were programmed with since its last erase.
    #[inline]
    pub fn block_level(&self, block: BlockId) -> Level {
        self.levels[block.0 as usize]
    }

    /// A block's GC key as maintained (checked by `verify`).
    pub fn gc_key(&self, block: BlockId) -> u16 {
        self.gc_keys[block.0 as usize]
    }

    /// The GC key a block should have: its valid count (plus its zombies under delay) if it
    /// is a candidate, else `u16::MAX`.
    pub fn expected_gc_key(&self, block: usize) -> u16 {
        // Summary pages are never valid and never reclaimable: a block is a candidate once a
        // data page is invalid.
        self.blocks[block].gc_key(self.data_ppb, self.delay_zombies)
    }

    /// Recomputes a block's GC key after its state, valid or zombie count changed.
    fn rekey(&mut self, block: usize) {
        self.gc_keys[block] = self.expected_gc_key(block);
    }

    /// Whether `lpn` is dirty in the host buffer.
    pub fn is_zombie(&self, lpn: u32) -> bool {
        self.zombie
            .get(lpn as usize / 64)
            .is_some_and(|w| w >> (lpn % 64) & 1 == 1)
    }

    /// The host buffer holds `lpn` dirty (or no longer): the block holding its valid page
    /// gains (loses) a zombie.
    pub fn set_zombie(&mut self, lpn: u32, dirty: bool) {
        if self.zombie.is_empty() || self.is_zombie(lpn) == dirty {
            return;
        }
        self.zombie[lpn as usize / 64] ^= 1 << (lpn % 64);
        let ppn = self.map.ppn(lpn);
        if ppn != NONE {
            self.count_zombie(ppn, dirty);
        }
    }

    /// Forgets every zombie (a restart: the host buffer is gone).
    pub fn clear_zombies(&mut self) {
        self.zombie.fill(0);
        for b in 0..self.blocks.len() {
            if self.blocks[b].zombies > 0 {
                self.blocks[b].zombies = 0;
                self.rekey(b);
            }
        }
    }

    fn count_zombie(&mut self, ppn: u32, add: bool) {
        let b = self.geo.block_of(Ppn(ppn)).0 as usize;
        if add {
            self.blocks[b].zombies += 1;
        } else {
            self.blocks[b].zombies -= 1;
        }
        self.rekey(b);
    }

    /// A zombie `lpn` leaves its current page: that page's block loses the zombie. Returns
    /// whether `lpn` is a zombie.
    fn unmark_zombie_page(&mut self, lpn: u32) -> bool {
        let zombie = self.is_zombie(lpn);
        let ppn = self.map.ppn(lpn);
        if zombie && ppn != NONE {
            self.count_zombie(ppn, false);
        }
        zombie
    }

    /// Points `lpn` at `ppn`, moving its zombie mark from the old page's block to the new one.
    fn remap(&mut self, lpn: u32, ppn: u32) -> u32 {
        let zombie = self.unmark_zombie_page(lpn);
        let old = self.map.remap(lpn, ppn);
        if zombie {
            self.count_zombie(ppn, true);
        }
        old
    }

    /// A program into `ppn` finished: the block settles to `Full` once written and idle.
    fn settle(&mut self, ppn: Ppn) {
        let block = self.geo.block_of(ppn).0 as usize;
        self.planes[self.geo.plane_of(ppn).0 as usize].inflight -= 1;
        let b = &mut self.blocks[block];
        b.inflight -= 1;
        if b.write_ptr == self.geo.pages_per_block
            && b.inflight == 0
            && b.state == BlockState::Active
        {
            b.state = BlockState::Full;
            self.rekey(block);
        }
    }

    fn invalidate(&mut self, old: u32) {
        if old != NONE {
            let b = self.geo.block_of(Ppn(old)).0 as usize;
            self.blocks[b].valid -= 1;
            self.planes[self.geo.plane_of(Ppn(old)).0 as usize].valid -= 1;
            self.rekey(b);
        }
    }

    /// One more valid page in `ppn`'s block (which settled just before).
    fn validate(&mut self, ppn: Ppn) {
        let b = self.geo.block_of(ppn).0 as usize;
        self.blocks[b].valid += 1;
        self.planes[self.geo.plane_of(ppn).0 as usize].valid += 1;
        self.rekey(b);
    }

    /// The valid and in-flight pages of `plane`'s blocks, summed (what its counts must be).
    pub fn block_sums(&self, plane: PlaneId) -> (u64, u32) {
        let first = self.geo.first_block(plane).0 as usize;
        let blocks = &self.blocks[first..first + self.geo.blocks_per_plane as usize];
        (
            blocks.iter().map(|b| u64::from(b.valid)).sum(),
            blocks.iter().map(|b| b.inflight).sum(),
        )
    }

    /// Sets every plane's valid and in-flight counts from its blocks' (after a fill that wrote
    /// blocks directly).
    pub(crate) fn recount_planes(&mut self) {
        for p in 0..self.planes.len() {
            let (valid, inflight) = self.block_sums(PlaneId(p as u32));
            self.planes[p].valid = valid;
            self.planes[p].inflight = inflight;
        }
    }

    /// Hints the CPU to fetch what committing a host write of `lpn` will update besides `lpn`'s
    /// entry: the physical entry of the page it overwrites and that page's block. Looks
    /// `lpn`'s entry up, so call it once that entry is likely cached. No effect on results.
    #[inline]
    pub fn prefetch_overwrite(&self, lpn: u32) {
        // `lpn` is NONE for a block's summary pages.
        if lpn >= self.map.logical_pages() {
            return;
        }
        let old = self.map.ppn(lpn);
        if old != NONE {
            self.map.prefetch_physical(old);
            let b = self.geo.block_of(Ppn(old)).0 as usize;
            if let Some(block) = self.blocks.get(b) {
                mapping::prefetch(block);
            }
        }
    }

    /// A host write of `version` of `lpn` landed in `ppn`. It becomes the mapping unless a newer
    /// version already did (writes to different dies may finish out of order). Returns the
    /// physical page it made invalid, if any.
    pub fn commit_write(&mut self, ppn: Ppn, lpn: u32, version: u32) -> Option<Ppn> {
        self.map.programmed(ppn.0, version);
        self.settle(ppn);
        if self.map.supersedes(lpn, version) {
            let old = self.remap(lpn, ppn.0);
            self.invalidate(old);
            self.validate(ppn);
            self.cache_host_update(lpn);
            return (old != NONE).then_some(Ppn(old));
        }
        None
    }

    /// A write made outside the simulation (a fill, a translation page stored at the start)
    /// landed: committed, with no program of `lpn` left in flight.
    pub(crate) fn commit_fill(&mut self, ppn: Ppn, lpn: u32, version: u32) {
        self.commit_write(ppn, lpn, version);
        self.map.release(lpn);
    }

    /// A host write or trim changed `lpn`'s mapping: its cached entry turns dirty.
    fn cache_host_update(&mut self, lpn: u32) {
        let map = &self.map;
        if let Some(c) = self.cmt.as_mut().filter(|c| !c.is_translation(lpn)) {
            c.host_update(lpn, |l| map.ppn(l));
        }
    }

    /// GC or a migration moved `lpn` to `ppn`.
    fn cache_moved(&mut self, lpn: u32, ppn: u32) {
        if let Some(c) = self.cmt.as_mut().filter(|c| !c.is_translation(lpn)) {
            c.moved(lpn, ppn);
        }
    }

    /// GC copied `lpn` from `src` to `dst`. The copy becomes the mapping only if `src` is still
    /// the current location (a host overwrite in between makes the copy stale).
    pub fn commit_move(&mut self, src: Ppn, dst: Ppn, lpn: u32) {
        self.map.copied(src.0, dst.0);
        self.settle(dst);
        if self.map.is_at(lpn, src.0) {
            let old = self.remap(lpn, dst.0);
            self.invalidate(old);
            self.validate(dst);
            self.cache_moved(lpn, dst.0);
        }
    }

    /// A never-written page (pre-existing data, version 0) was programmed into `dst` by a
    /// migration: it becomes the mapping if the page is still unwritten.
    pub fn commit_materialize(&mut self, dst: Ppn, lpn: u32) {
        self.map.programmed(dst.0, 0);
        self.settle(dst);
        if self.map.is_at(lpn, NONE) {
            self.remap(lpn, dst.0);
            self.validate(dst);
            self.cache_moved(lpn, dst.0);
        }
    }

    /// Trims `lpn`: its physical page becomes invalid. Returns that page, if any.
    pub fn trim(&mut self, lpn: u32) -> Option<Ppn> {
        self.unmark_zombie_page(lpn);
        let old = self.map.unmap(lpn);
        self.invalidate(old);
        self.cache_host_update(lpn);
        (old != NONE).then_some(Ppn(old))
    }

    /// Starts the mapping cache (`ftl.mapping_cache_*`) on the drive as the fill left it: every
    /// translation page is programmed once, written or not (MQSim stores the whole mapping
    /// table on flash when a run starts: `Store_mapping_table_on_flash_at_start`), and the
    /// cache starts empty, its translation pages written by `stream`. `verify` keeps the flash
    /// copy of every entry to check the cache against.
    ///
    /// # Errors
    /// The plane that has no free page left for a translation page.
    pub fn start_mapping_cache(
        &mut self,
        cfg: &Config,
        verify: bool,
        stream: Stream,
    ) -> Result<(), precondition::PreconditionError> {
        let Some((entries, per_page)) = mapping_cache_shape(cfg, &self.geo) else {
            return Ok(());
        };
        let host = self.map.logical_pages();
        for t in 0..cmt::MappingCache::translation_pages(host, per_page) {
            let lpn = host + t;
            let plane = self.home_plane(lpn);
            let ppn = self
                .alloc(plane, stream, SimTime::ZERO)
                .ok_or(precondition::PreconditionError { plane: plane.0 })?;
            let version = self.map.next_version(lpn);
            self.commit_fill(ppn, lpn, version);
        }
        let copy = if verify {
            (0..host).map(|l| self.map.ppn(l)).collect()
        } else {
            Vec::new()
        };
        self.cmt = Some(cmt::MappingCache::new(entries, host, per_page, copy));
        Ok(())
    }

    /// A page programmed outside the mapping (the parity of a TTFlash stripe that died while
    /// it was being programmed): written, never valid.
    pub fn commit_unmapped(&mut self, ppn: Ppn) {
        self.map.programmed(ppn.0, 0);
        self.settle(ppn);
    }

    /// Whether `plane` should start GC now.
    pub fn needs_gc(&self, plane: PlaneId) -> bool {
        self.planes[plane.0 as usize].needs_gc(self.gc_threshold, self.max_gc_jobs, self.gc_reserve)
    }

    /// Whether GC should start a job on `plane` now: [`Ftl::needs_gc`], and with
    /// `ftl.gc_start = "new-block"` only if the plane took a free block since the last check
    /// (each check consumes that), or if it runs no job and has no more free blocks than one
    /// job reserves (so a plane that stopped taking blocks cannot starve).
    pub fn may_start_gc(&mut self, plane: PlaneId) -> bool {
        let p = &mut self.planes[plane.0 as usize];
        let took = std::mem::take(&mut p.took_block);
        let starving = p.gc_jobs == 0 && p.free_blocks() <= self.gc_reserve;
        if self.gc_start == GcStart::NewBlock && !took && !starving {
            return false;
        }
        self.needs_gc(plane)
    }

    /// Forgets the blocks planes took while the drive was being built (preconditioning, a
    /// mapping cache's first translation pages): they are not the run's, so with
    /// `ftl.gc_start = "new-block"` they start no GC.
    pub fn forget_block_takes(&mut self) {
        for p in &mut self.planes {
            p.took_block = false;
        }
    }

    /// Chooses and claims a victim on `plane`; `None` if no block has an invalid page.
    pub fn claim_victim(&mut self, plane: PlaneId, now: SimTime) -> Option<BlockId> {
        let first = self.geo.first_block(plane).0 as usize;
        let n = self.geo.blocks_per_plane as usize;
        let i = self.victim.victim(
            &self.blocks[first..first + n],
            &self.gc_keys[first..first + n],
            self.data_ppb,
            now,
        )?;
        let b = first + i;
        self.blocks[b].state = BlockState::Victim;
        self.rekey(b);
        self.planes[plane.0 as usize].gc_jobs += 1;
        Some(BlockId(b as u32))
    }

    /// Claims `block` as its plane's GC victim out of turn (a refresh); false unless it is a
    /// full block with valid data and its plane has no GC job.
    pub fn claim_block(&mut self, block: BlockId) -> bool {
        self.blocks[block.0 as usize].valid > 0 && self.claim_full_block(block)
    }

    /// Claims `block` as its plane's GC victim out of turn (wear levelling); false unless it is
    /// a full block and its plane has no GC job.
    pub fn claim_full_block(&mut self, block: BlockId) -> bool {
        let plane = self.geo.plane_of_block(block);
        let b = block.0 as usize;
        if self.blocks[b].state != BlockState::Full || self.planes[plane.0 as usize].gc_jobs > 0 {
            return false;
        }
        self.blocks[b].state = BlockState::Victim;
        self.rekey(b);
        self.planes[plane.0 as usize].gc_jobs += 1;
        true
    }

    /// Closes an active block early (a refresh of a block still being written): its unwritten
    /// pages are given up until its erase and it becomes a full block. False while a program
    /// into it is in flight.
    pub fn close_block(&mut self, block: BlockId) -> bool {
        let b = block.0 as usize;
        if self.blocks[b].state != BlockState::Active || self.blocks[b].inflight > 0 {
            return false;
        }
        let plane = self.geo.plane_of_block(block);
        for a in self.planes[plane.0 as usize].active_blocks_mut() {
            if *a == block.0 {
                *a = NONE;
            }
        }
        self.blocks[b].write_ptr = self.geo.pages_per_block;
        self.blocks[b].state = BlockState::Full;
        self.rekey(b);
        true
    }

    /// Valid pages of a block as `(ppn, lpn)`.
    pub fn valid_pages(&self, block: BlockId) -> impl Iterator<Item = (Ppn, u32)> + '_ {
        let first = self.geo.first_page(block).0;
        (first..first + self.blocks[block.0 as usize].write_ptr).filter_map(|p| {
            match self.map.lpn(p) {
                NONE => None,
                l => Some((Ppn(p), l)),
            }
        })
    }

    /// Erases a victim block and returns it to its plane's free pool; its GC job ends.
    pub fn erase(&mut self, block: BlockId) {
        let plane = self.geo.plane_of_block(block);
        let b = &mut self.blocks[block.0 as usize];
        debug_assert_eq!(b.valid, 0, "erasing a block with valid pages");
        debug_assert_eq!(b.zombies, 0, "erasing a block with zombie pages");
        let p = &mut self.planes[plane.0 as usize];
        p.reclaim(block.0, b);
        p.gc_jobs -= 1;
    }

    /// Free blocks of every plane, in plane order.
    pub fn free_blocks(&self) -> Vec<u32> {
        self.planes.iter().map(PlaneInfo::free_blocks).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::mapping::VersionTables;
    use rand::SeedableRng;

    /// The `tiny` drive's FTL with `key=value` overrides.
    fn tiny(sets: &[&str]) -> Ftl {
        let mut b = crate::config::ConfigBuilder::preset("tiny").unwrap();
        for s in sets {
            b = b.set(s).unwrap();
        }
        Ftl::new(
            &b.build().unwrap(),
            ChaCha8Rng::seed_from_u64(0),
            VersionTables::Full,
        )
        .unwrap()
    }

    #[test]
    fn user_writes_cannot_take_the_last_free_block() {
        let mut f = tiny(&[]);
        let plane = PlaneId(0);
        let ppb = f.geo.pages_per_block;
        let mut written = 0;
        while let Some(p) = f.alloc(plane, Stream::USER, SimTime(0)) {
            f.commit_write(p, written % 100, written / 100 + 1);
            written += 1;
        }
        assert_eq!(written, (f.geo.blocks_per_plane - 1) * ppb);
        assert!(f.can_alloc(plane, Stream::GC));
    }

    /// With `gc_start = "new-block"` a plane at its threshold starts a job only after it has
    /// taken a free block (one job per block), as MQSim checks; with `any-write`, at every
    /// check. Blocks taken while the drive was built count for nothing.
    #[test]
    fn gc_start_new_block_starts_one_job_per_block_taken() {
        for (mode, without_block) in [("any-write", true), ("new-block", false)] {
            let mut f = tiny(&[
                "ftl.gc_jobs_per_plane=4",
                &format!("ftl.gc_start=\"{mode}\""),
            ]);
            let plane = PlaneId(0);
            let mut lpn = 0;
            while !f.needs_gc(plane) {
                let p = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
                f.commit_write(p, lpn % 64, lpn / 64 + 1);
                lpn += 1;
            }
            f.forget_block_takes();
            assert_eq!(
                f.may_start_gc(plane),
                without_block,
                "{mode}: no block taken"
            );
            // Fill the open block so that the next page takes a free block.
            let take_block = |f: &mut Ftl| loop {
                let p = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
                if f.geo.page_in_block(p) == 0 {
                    break;
                }
            };
            take_block(&mut f);
            assert!(f.may_start_gc(plane), "{mode}: the first job");
            f.claim_victim(plane, SimTime(0)).unwrap();
            assert_eq!(f.may_start_gc(plane), without_block, "{mode}: checked once");
            take_block(&mut f);
            assert!(f.may_start_gc(plane), "{mode}: a second job after a block");
        }
    }

    /// With `gc_start = "new-block"` a plane with no job and no more free blocks than one job
    /// reserves starts one without having taken a block (host writes cannot take one).
    #[test]
    fn gc_start_new_block_never_starves_a_plane() {
        let mut f = tiny(&["ftl.gc_start=\"new-block\""]);
        let plane = PlaneId(0);
        let mut lpn = 0;
        // Host writes stop once the free blocks are down to what GC reserves.
        while let Some(p) = f.alloc(plane, Stream::USER, SimTime(0)) {
            f.commit_write(p, lpn % 64, lpn / 64 + 1);
            lpn += 1;
        }
        assert!(f.planes[0].free_blocks() <= f.gc_reserve);
        f.forget_block_takes();
        assert!(f.may_start_gc(plane));
    }

    /// Block A: 2 valid pages, both zombies; block B: 3 valid pages. Greedy takes A; with
    /// delay A counts 4 and B is taken.
    fn victim_with(gc: &str) -> (BlockId, BlockId, BlockId) {
        let mut f = tiny(&[
            "geometry.pages_per_block=4",
            "geometry.blocks_per_plane=64",
            "buffer.host_pages=8",
            "buffer.device_pages=8",
            &format!("shadow.gc={gc}"),
        ]);
        let plane = PlaneId(0);
        let write = |f: &mut Ftl, lpn: u32, v: u32| {
            let p = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
            f.commit_write(p, lpn, v);
            p
        };
        let first = write(&mut f, 0, 1);
        let a = f.geo.block_of(first);
        for lpn in 1..4 {
            write(&mut f, lpn, 1);
        }
        let fifth = write(&mut f, 4, 1);
        let b = f.geo.block_of(fifth);
        for lpn in 5..8 {
            write(&mut f, lpn, 1);
        }
        for lpn in [0, 1, 4] {
            write(&mut f, lpn, 2);
        }
        f.set_zombie(2, true);
        f.set_zombie(3, true);
        assert_eq!(f.blocks[a.0 as usize].zombies, 2);
        let victim = f.claim_victim(plane, SimTime(0)).unwrap();
        (a, b, victim)
    }

    #[test]
    fn shared_gc_blocks_put_relocations_in_the_host_block_and_keep_gc_its_reserve() {
        for (shared, same) in [("separate", false), ("shared", true)] {
            let mut f = tiny(&[&format!("ftl.gc_blocks={shared}")]);
            let plane = PlaneId(0);
            let host = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
            let moved = f.alloc(plane, Stream::GC, SimTime(0)).unwrap();
            assert_eq!(
                f.geo.block_of(host) == f.geo.block_of(moved),
                same,
                "{shared}"
            );
            if same {
                // The next page of the shared block follows the relocation.
                let next = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
                assert_eq!(next.0, moved.0 + 1);
            }
        }
        // While GC runs on a plane at its reserve, host writes leave the shared block to it.
        let mut f = tiny(&["ftl.gc_blocks=shared"]);
        let plane = PlaneId(0);
        let logical = f.map.logical_pages();
        let mut written = 0;
        while f.planes[0].free_blocks() > 1 {
            let p = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
            f.commit_write(p, written % logical, written / logical + 1);
            written += 1;
        }
        assert!(f.can_alloc(plane, Stream::USER), "the open block has room");
        f.planes[0].gc_jobs = 1;
        assert!(!f.can_alloc(plane, Stream::USER));
        assert!(f.can_alloc(plane, Stream::GC));
    }

    #[test]
    fn delay_counts_zombies_against_a_victim() {
        let (a, _, v) = victim_with("ggc");
        assert_eq!(v, a, "greedy: fewest valid pages");
        let (a, _, v) = victim_with("greedy-separation");
        assert_eq!(v, a, "separation keeps greedy victims");
        let (_, b, v) = victim_with("greedy-delay");
        assert_eq!(v, b, "delay: A's two zombies count against it");
        let (_, b, v) = victim_with("zgc");
        assert_eq!(v, b);
        for gc in ["hgc", "dgc", "sgc"] {
            let (a, _, v) = victim_with(gc);
            assert_eq!(v, a, "{gc} keeps greedy victims");
        }
    }

    #[test]
    fn zombie_counts_follow_the_page() {
        let mut f = tiny(&["buffer.host_pages=8"]);
        let plane = PlaneId(0);
        let block = |f: &Ftl, lpn: u32| f.geo.block_of(Ppn(f.map.ppn(lpn))).0 as usize;
        let p = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
        f.commit_write(p, 9, 1);
        f.set_zombie(9, true);
        f.set_zombie(9, true);
        let first = block(&f, 9);
        assert_eq!(f.blocks[first].zombies, 1, "setting twice counts once");
        // A GC move carries the mark to the new block.
        let d = f.alloc(plane, Stream::GC, SimTime(0)).unwrap();
        f.commit_move(p, d, 9);
        let moved = block(&f, 9);
        assert_ne!(first, moved);
        assert_eq!((f.blocks[first].zombies, f.blocks[moved].zombies), (0, 1));
        // The host writes it back: no longer a zombie.
        f.set_zombie(9, false);
        assert_eq!(f.blocks[moved].zombies, 0);
        // A zombie page that is trimmed leaves no count behind.
        f.set_zombie(9, true);
        f.trim(9);
        assert_eq!(f.blocks[moved].zombies, 0);
        assert!(f.is_zombie(9), "the host still holds it dirty");
    }

    #[test]
    fn overwrite_invalidates_and_gc_moves_keep_mapping() {
        let mut f = tiny(&[]);
        let plane = PlaneId(0);
        let a = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
        f.commit_write(a, 7, 1);
        let b = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
        f.commit_write(b, 7, 2);
        assert_eq!(f.map.ppn(7), b.0);
        assert_eq!(f.blocks[0].valid, 1);
        // An older version finishing late does not win.
        let c = f.alloc(plane, Stream::USER, SimTime(0)).unwrap();
        f.commit_write(c, 7, 1);
        assert_eq!(f.map.ppn(7), b.0);
        let d = f.alloc(plane, Stream::GC, SimTime(0)).unwrap();
        f.commit_move(b, d, 7);
        assert_eq!(f.map.ppn(7), d.0);
        assert_eq!(f.map.held(d.0), 2);
    }
}
