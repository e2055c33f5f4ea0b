//! HotR (hotr.txt) and DedupHR (deduphr.txt): hot-read pages copied to a staging space; a read
//! that would wait behind a program or erase on its chip is served from the copy instead. The
//! two differ only in what triggers a copy ([`Trigger`]).
//!
//! * R-LRU: per data die, an LRU list of recently read logical pages with an access count
//!   (the device buffer's `LruBuffer` serves as the list).
//! * Conflict: the read's home die is running, or has queued ahead of it, a program or erase
//!   (the same test as `reads_blocked`).
//! * A conflicted read whose entry has a copy is served from staging; one whose entry has none
//!   is served at home and then copied to staging (a migration program, data from the
//!   controller); a miss inserts an entry. At most `hot_fraction` × entries copies per list.
//! * A host write invalidates the page's copy and removes its entry; an entry leaving its list
//!   drops its copy. When the staging space is full, its oldest block is erased and the copies
//!   in it dropped (copies are disposable: home always has the data).
//! * DedupHR: below the dedup layer pages are content ids. A duplicate write that leaves a
//!   content's reference count at or above the threshold copies it to staging on the write path
//!   (the data is in the controller: no flash read) unless it has a copy or one in flight; the
//!   Map_table (`copies`) is counted per home chip. A conflicted read with a copy is redirected.
//!   When the count falls to 1 (or the content dies) the copy is invalidated.
//! * Power loss (`Event::PowerLoss`): the Map_table, the R-LRU lists and every staging copy are
//!   lost; blocks holding copies are erased before reuse; reads keep going home.

use super::{Op, Simulation};
use crate::buffer::LruBuffer;
use crate::config::{Config, StagingPolicy};
use crate::flash::{BlockId, Geometry, PlaneId, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// One plane's share of the staging space, written as a log of blocks.
#[derive(Debug)]
struct StagingPlane {
    plane: u32,
    die: u32,
    free: VecDeque<u32>,
    used: VecDeque<u32>,
    active: Option<(u32, u32)>,
}

/// What puts a page into staging.
#[derive(Debug)]
enum Trigger {
    /// HotR: per data die, an R-LRU list; a list may hold this many copies.
    ReadHot {
        rlru: Vec<LruBuffer>,
        max_copies_per_die: u32,
    },
    /// DedupHR: a content's reference count reaching this.
    RefCount(u32),
}

/// HotR / DedupHR state.
#[derive(Debug)]
pub(super) struct HotR {
    trigger: Trigger,
    /// lpn (a content id under dedup) → (staging ppn, home die): the Map_table.
    copies: FxHashMap<u32, (u32, u32)>,
    copies_per_die: Vec<u32>,
    /// DedupHR: contents whose copy is being programmed.
    in_flight: rustc_hash::FxHashSet<u32>,
    /// Copy programs queued or running, per die.
    queued_copies: Vec<u32>,
    max_queued_copies: u32,
    /// Copies queued at or before this time were lost with the power.
    lost_at: Option<crate::time::SimTime>,
    planes: Vec<StagingPlane>,
    page_lpn: FxHashMap<u32, u32>,
    /// Staging blocks whose erase is queued: copies still being programmed into them are void.
    reclaiming: rustc_hash::FxHashSet<u32>,
    ppb: u32,
}

/// Where a host read page goes.
pub(super) enum Route {
    /// Its home location.
    Home,
    /// Its home location, then copy it to staging.
    HomeThenCopy,
    /// The staging copy at this physical page.
    Copy(u32),
}

impl HotR {
    pub(super) fn new(cfg: &Config, geo: &Geometry) -> Self {
        let mut planes: Vec<StagingPlane> = Vec::new();
        for b in crate::ftl::staging_blocks(cfg, geo) {
            let plane = geo.plane_of_block(BlockId(b)).0;
            if planes.last().is_none_or(|p| p.plane != plane) {
                let die = geo.die_of_plane(PlaneId(plane)).0;
                planes.push(StagingPlane {
                    plane,
                    die,
                    free: VecDeque::new(),
                    used: VecDeque::new(),
                    active: None,
                });
            }
            planes.last_mut().expect("pushed").free.push_back(b);
        }
        let entries = cfg.staging.rlru_entries;
        let trigger = match cfg.staging.policy {
            StagingPolicy::Hotr => Trigger::ReadHot {
                rlru: (0..geo.data_dies())
                    .map(|_| LruBuffer::new(entries))
                    .collect(),
                max_copies_per_die: (cfg.staging.hot_fraction * f64::from(entries)).floor() as u32,
            },
            StagingPolicy::Deduphr => Trigger::RefCount(cfg.staging.refcount_threshold),
        };
        HotR {
            trigger,
            copies: FxHashMap::default(),
            copies_per_die: vec![0; geo.data_dies() as usize],
            in_flight: Default::default(),
            queued_copies: vec![0; geo.dies() as usize],
            max_queued_copies: cfg.staging.max_queued_copies,
            lost_at: None,
            planes,
            page_lpn: FxHashMap::default(),
            reclaiming: Default::default(),
            ppb: geo.pages_per_block,
        }
    }

    fn drop_copy(&mut self, lpn: u32) -> bool {
        match self.copies.remove(&lpn) {
            Some((ppn, home)) => {
                self.page_lpn.remove(&ppn);
                self.copies_per_die[home as usize] -= 1;
                true
            }
            None => false,
        }
    }

    /// Copies held now.
    pub(super) fn copies(&self) -> usize {
        self.copies.len()
    }

    /// Pages of the staging space.
    pub(super) fn capacity_pages(&self) -> u64 {
        self.planes
            .iter()
            .map(|p| (p.free.len() + p.used.len() + usize::from(p.active.is_some())) as u64)
            .sum::<u64>()
            * u64::from(self.ppb)
    }
}

impl Simulation<'_> {
    /// Updates the read's R-LRU list and decides where it is served.
    pub(super) fn hotr_route(&mut self, lpn: u32, home_die: usize, conflicted: bool) -> Route {
        // A copy on a die that is itself busy with a program or erase (staging copies being
        // programmed, reclamation) would not spare the read a wait: it stays home.
        let copy_busy = conflicted
            && self
                .hotr
                .as_ref()
                .and_then(|h| h.copies.get(&lpn))
                .is_some_and(|&(ppn, _)| {
                    let (running, queued) =
                        self.program_erase_ahead(self.geo.die_of(Ppn(ppn)).0 as usize);
                    running || queued
                });
        let Some(h) = self.hotr.as_mut() else {
            return Route::Home;
        };
        let m = &mut self.metrics.staging;
        if copy_busy {
            m.copy_busy += 1;
        }
        let (rlru, max_copies) = match &mut h.trigger {
            Trigger::ReadHot {
                rlru,
                max_copies_per_die,
            } => (rlru, *max_copies_per_die),
            Trigger::RefCount(_) => {
                if !conflicted {
                    return Route::Home;
                }
                match h.copies.get(&lpn) {
                    Some(_) if copy_busy => {}
                    Some(&(ppn, _)) => {
                        m.redirected += 1;
                        return Route::Copy(ppn);
                    }
                    None => m.misses += 1,
                }
                return Route::Home;
            }
        };
        if rlru[home_die].touch(lpn, false) {
            if !conflicted {
                return Route::Home;
            }
            match h.copies.get(&lpn) {
                Some(_) if copy_busy => return Route::Home,
                Some(&(ppn, _)) => {
                    m.redirected += 1;
                    return Route::Copy(ppn);
                }
                None => {}
            }
            m.hits_without_copy += 1;
            if h.copies_per_die[home_die] < max_copies {
                return Route::HomeThenCopy;
            }
            return Route::Home;
        }
        if conflicted {
            m.misses += 1;
        }
        if let Some(e) = rlru[home_die].insert(lpn, false) {
            if h.drop_copy(e.lpn) {
                m.copies_dropped += 1;
            }
        }
        Route::Home
    }

    /// A host write makes the page's copy stale and removes its entry.
    pub(super) fn hotr_write(&mut self, lpn: u32) {
        let Some(h) = self.hotr.as_mut() else { return };
        if h.drop_copy(lpn) {
            self.metrics.staging.copies_invalidated += 1;
        }
        let home = self.geo.die_of_plane(self.ftl.home_plane(lpn)).0 as usize;
        if let Trigger::ReadHot { rlru, .. } = &mut h.trigger {
            if let Some(list) = rlru.get_mut(home) {
                list.remove(lpn);
            }
        }
    }

    /// DedupHR: a content's reference count changed to `count`. At or above the threshold a
    /// content without a copy is copied (its data is in the controller with the write); at 1 or
    /// below its copy is invalidated.
    pub(super) fn staging_refcount(&mut self, cid: u32, count: u32) {
        let Some(h) = self.hotr.as_mut() else { return };
        let Trigger::RefCount(threshold) = h.trigger else {
            return;
        };
        if count <= 1 {
            if h.drop_copy(cid) {
                self.metrics.staging.copies_invalidated += 1;
            }
            return;
        }
        if count < threshold || h.copies.contains_key(&cid) || h.in_flight.contains(&cid) {
            return;
        }
        let ppn = self.ftl.map.ppn(cid);
        let plane = if ppn == NONE {
            self.ftl.home_plane(cid)
        } else {
            self.geo.plane_of(Ppn(ppn))
        };
        let home = self.geo.die_of_plane(plane).0;
        if self.stage_copy(cid, self.ftl.map.newest(cid), home) {
            if let Some(h) = self.hotr.as_mut() {
                h.in_flight.insert(cid);
            }
        }
    }

    /// Power loss: the Map_table, R-LRU lists and staging copies are gone (they are volatile
    /// or disposable); blocks that held copies must be erased before they are written again.
    pub(super) fn staging_power_loss(&mut self) {
        let Some(h) = self.hotr.as_mut() else { return };
        self.metrics.staging.copies_lost += h.copies.len() as u64;
        h.copies.clear();
        h.page_lpn.clear();
        h.in_flight.clear();
        h.copies_per_die.fill(0);
        h.lost_at = Some(self.now);
        if let Trigger::ReadHot { rlru, .. } = &mut h.trigger {
            rlru.iter_mut().for_each(LruBuffer::clear);
        }
        for p in &mut h.planes {
            if let Some((block, _)) = p.active.take() {
                p.used.push_back(block);
            }
        }
    }

    /// A staging page on a die other than `home_die`, the least loaded first; reclaims the
    /// oldest staging block (queuing its erase) when every eligible plane is full.
    fn staging_page(&mut self, home_die: u32) -> Option<(u32, u32)> {
        let h = self.hotr.as_mut()?;
        let dies = &self.dies;
        let eligible = |p: &StagingPlane| p.die != home_die;
        let pick = h
            .planes
            .iter()
            .enumerate()
            .filter(|(_, p)| eligible(p) && (p.active.is_some() || !p.free.is_empty()))
            .min_by_key(|(i, p)| (dies[p.die as usize].load(), *i))
            .map(|(i, _)| i);
        let Some(i) = pick else {
            let victim = h
                .planes
                .iter()
                .enumerate()
                .filter(|(_, p)| eligible(p) && !p.used.is_empty())
                .map(|(i, _)| i)
                .next()?;
            let block = h.planes[victim].used.pop_front().expect("non-empty");
            h.reclaiming.insert(block);
            let first = block * h.ppb;
            for ppn in first..first + h.ppb {
                if let Some(lpn) = h.page_lpn.get(&ppn).copied() {
                    h.drop_copy(lpn);
                    self.metrics.staging.copies_dropped += 1;
                }
            }
            let plane = h.planes[victim].plane;
            let mut op = self.blank_op(OpKind::Erase, Cause::Migration, plane);
            op.src = block;
            let die = op.die as usize;
            let id = self.new_op(op);
            self.enqueue(die, QueueKind::Internal, id);
            self.try_dispatch(die);
            return None;
        };
        let p = &mut h.planes[i];
        let (block, next) = match p.active {
            Some(a) => a,
            None => (p.free.pop_front().expect("checked"), 0),
        };
        p.active = if next + 1 == h.ppb {
            p.used.push_back(block);
            None
        } else {
            Some((block, next + 1))
        };
        Some((block * h.ppb + next, p.plane))
    }

    /// After a conflicted read served at home: program the page into staging (its data is in
    /// the controller, so no extra read).
    pub(super) fn hotr_copy(&mut self, read: &Op, home_die: u32) {
        let version = if read.ppn == NONE {
            0
        } else {
            self.ftl.map.held(read.ppn)
        };
        self.stage_copy(read.lpn, version, home_die);
    }

    /// Queues the program of `version` of `lpn` into a staging page off `home_die`; false if
    /// no staging page is free now.
    fn stage_copy(&mut self, lpn: u32, version: u32, home_die: u32) -> bool {
        let Some((ppn, plane)) = self.staging_page(home_die) else {
            return false;
        };
        let die = self.geo.die_of_plane(PlaneId(plane)).0 as usize;
        let h = self.hotr.as_mut().expect("staging_page found a page");
        if h.queued_copies[die] >= h.max_queued_copies {
            // The staging die is backlogged: skip the copy (the page stays unused until its
            // block is reclaimed).
            self.metrics.staging.copies_skipped += 1;
            return false;
        }
        h.queued_copies[die] += 1;
        let mut op = self.blank_op(OpKind::Program, Cause::Migration, plane);
        op.lpn = lpn;
        op.ppn = ppn;
        op.version = version;
        op.src = home_die;
        op.preallocated = true;
        op.erase_epoch = self.ftl.blocks[self.geo.block_of(Ppn(ppn)).0 as usize].erase_count;
        self.metrics.staging.migrations += 1;
        let die = op.die as usize;
        let id = self.new_op(op);
        // Internal work, so it stays ahead of any later reclamation erase of its block (a write
        // queue can be held up by a host write waiting for space).
        self.enqueue(die, QueueKind::Internal, id);
        self.try_dispatch(die);
        true
    }

    /// A staging copy is programmed: it becomes the page's copy unless the page changed since.
    pub(super) fn hotr_copy_done(&mut self, op: &Op) {
        self.ftl.map.programmed(op.ppn, op.version);
        let newest = self.ftl.map.newest(op.lpn);
        let count = self.dedup.as_ref().map_or(0, |d| d.count(op.lpn));
        let Some(h) = self.hotr.as_mut() else { return };
        h.queued_copies[op.die as usize] -= 1;
        let home = op.src as usize;
        let block = op.ppn / h.ppb;
        let erased = self.ftl.blocks[block as usize].erase_count != op.erase_epoch;
        let wanted = match &h.trigger {
            Trigger::ReadHot { rlru, .. } => rlru[home].contains(op.lpn),
            Trigger::RefCount(_) => h.in_flight.remove(&op.lpn) && count >= 2,
        };
        if newest != op.version
            || h.copies.contains_key(&op.lpn)
            || !wanted
            || h.reclaiming.contains(&block)
            || erased
            || h.lost_at.is_some_and(|t| op.queued_at <= t)
        {
            self.metrics.staging.migrations_discarded += 1;
            return;
        }
        h.copies.insert(op.lpn, (op.ppn, op.src));
        h.page_lpn.insert(op.ppn, op.lpn);
        h.copies_per_die[home] += 1;
        let m = &mut self.metrics.staging;
        m.peak_copies = m.peak_copies.max(h.copies.len() as u64);
    }

    /// A staging block was erased: it rejoins its plane's free staging blocks.
    pub(super) fn hotr_erase_done(&mut self, block: u32) {
        self.ftl.blocks[block as usize].erase_count += 1;
        self.metrics.staging.erases += 1;
        let plane = self.geo.plane_of_block(BlockId(block)).0;
        if let Some(h) = self.hotr.as_mut() {
            h.reclaiming.remove(&block);
            if let Some(p) = h.planes.iter_mut().find(|p| p.plane == plane) {
                p.free.push_back(block);
            }
        }
    }
}
