//! The staging space of HotR (hotr.txt) and DedupHR (deduphr.txt): hot-read pages copied to a staging space; a read
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

use super::policy::{
    GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Route, Seam, WriteFanout,
};
use super::Policies;
use crate::buffer::LruBuffer;
use crate::config::{Config, StagingDesign, StagingPolicy};
use crate::flash::{BlockId, Geometry, PlaneId, Ppn};
use crate::ftl::mapping::NONE;
use crate::metrics::{Metrics, Summary};
use crate::sched::OpKind;
use crate::sim::{Ctx, Notice, Op, SimError};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

mod copies;

/// Installs the staging space with the trigger `cfg.staging.policy` names (HotR or DedupHR).
pub(super) fn install(cfg: &Config, p: &mut Policies) {
    p.push(Box::new(Staging::new(cfg, &Geometry::of(cfg))));
}

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

/// HotR / DedupHR state: the policy object.
#[derive(Debug)]
struct Staging {
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
    /// Physical space over that of the same drive without the staging space.
    space_factor: f64,
}

impl Staging {
    fn new(cfg: &Config, geo: &Geometry) -> Self {
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
        let staging = crate::ftl::staging_blocks(cfg, geo).len() as f64;
        let space_factor = match cfg.staging.design {
            StagingDesign::ExtraChip => f64::from(geo.pages()) / f64::from(geo.data_pages()),
            _ => 1.0 + staging * f64::from(geo.pages_per_block) / f64::from(geo.pages()),
        };
        Staging {
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
            space_factor,
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

    /// Pages of the staging space.
    fn capacity_pages(&self) -> u64 {
        self.planes
            .iter()
            .map(|p| (p.free.len() + p.used.len() + usize::from(p.active.is_some())) as u64)
            .sum::<u64>()
            * u64::from(self.ppb)
    }
}

impl ReadRoute for Staging {
    /// Updates the read's R-LRU list and decides where it is served.
    fn route(
        &mut self,
        cx: &mut Ctx,
        op: &mut Op,
        home_die: usize,
        conflicted: bool,
    ) -> Result<Route, SimError> {
        let lpn = op.lpn;
        // A copy on a die that is itself busy with a program or erase (staging copies being
        // programmed, reclamation) would not spare the read a wait: it stays home.
        let copy_busy = conflicted
            && self.copies.get(&lpn).is_some_and(|&(ppn, _)| {
                cx.program_erase_ahead(cx.geo().die_of(Ppn(ppn)).0 as usize)
            });
        let m = &mut cx.metrics().staging;
        Ok(match self.decide(m, lpn, home_die, conflicted, copy_busy) {
            Decision::Home => Route::Queue,
            Decision::HomeThenCopy => Route::QueueAndTell,
            Decision::Copy(copy) => {
                let block = cx.read_at(op, copy);
                op.level = cx.ftl_ref().blocks[block].level;
                Route::Queue
            }
        })
    }

    /// After a conflicted read served at home: program the page into staging (its data is in
    /// the controller, so no extra read).
    fn served(&mut self, cx: &mut Ctx, read: &Op) {
        let home = cx.geo().die_of_plane(PlaneId(read.plane)).0;
        let version = if read.ppn == NONE {
            0
        } else {
            cx.ftl_ref().map.held(read.ppn)
        };
        self.stage_copy(cx, read.lpn, version, home);
    }
}

/// Where a host read page goes.
enum Decision {
    /// Its home location.
    Home,
    /// Its home location, then copy it to staging.
    HomeThenCopy,
    /// The staging copy at this physical page.
    Copy(u32),
}

impl Staging {
    /// Where a read goes; updates the R-LRU list.
    fn decide(
        &mut self,
        m: &mut crate::metrics::StagingMetrics,
        lpn: u32,
        home_die: usize,
        conflicted: bool,
        copy_busy: bool,
    ) -> Decision {
        if copy_busy {
            m.copy_busy += 1;
        }
        let (rlru, max_copies) = match &mut self.trigger {
            Trigger::ReadHot {
                rlru,
                max_copies_per_die,
            } => (rlru, *max_copies_per_die),
            Trigger::RefCount(_) => {
                if !conflicted {
                    return Decision::Home;
                }
                match self.copies.get(&lpn) {
                    Some(_) if copy_busy => {}
                    Some(&(ppn, _)) => {
                        m.redirected += 1;
                        return Decision::Copy(ppn);
                    }
                    None => m.misses += 1,
                }
                return Decision::Home;
            }
        };
        if rlru[home_die].touch(lpn, false) {
            if !conflicted {
                return Decision::Home;
            }
            match self.copies.get(&lpn) {
                Some(_) if copy_busy => return Decision::Home,
                Some(&(ppn, _)) => {
                    m.redirected += 1;
                    return Decision::Copy(ppn);
                }
                None => {}
            }
            m.hits_without_copy += 1;
            if self.copies_per_die[home_die] < max_copies {
                return Decision::HomeThenCopy;
            }
            return Decision::Home;
        }
        if conflicted {
            m.misses += 1;
        }
        if let Some(e) = rlru[home_die].insert(lpn, false) {
            if self.drop_copy(e.lpn) {
                m.copies_dropped += 1;
            }
        }
        Decision::Home
    }

    /// A host write makes the page's copy stale and removes its entry.
    fn written(&mut self, cx: &mut Ctx, lpn: u32) {
        if self.drop_copy(lpn) {
            cx.metrics().staging.copies_invalidated += 1;
        }
        let home = cx.geo().die_of_plane(cx.ftl_ref().home_plane(lpn)).0 as usize;
        if let Trigger::ReadHot { rlru, .. } = &mut self.trigger {
            if let Some(list) = rlru.get_mut(home) {
                list.remove(lpn);
            }
        }
    }

    /// DedupHR: a content's reference count changed to `count`. At or above the threshold a
    /// content without a copy is copied (its data is in the controller with the write); at 1 or
    /// below its copy is invalidated.
    fn refcount(&mut self, cx: &mut Ctx, cid: u32, count: u32) {
        let Trigger::RefCount(threshold) = self.trigger else {
            return;
        };
        if count <= 1 {
            if self.drop_copy(cid) {
                cx.metrics().staging.copies_invalidated += 1;
            }
            return;
        }
        if count < threshold || self.copies.contains_key(&cid) || self.in_flight.contains(&cid) {
            return;
        }
        let ppn = cx.ftl_ref().map.ppn(cid);
        let plane = if ppn == NONE {
            cx.ftl_ref().home_plane(cid)
        } else {
            cx.plane_of(ppn)
        };
        let home = cx.geo().die_of_plane(plane).0;
        let version = cx.ftl_ref().map.newest(cid);
        if self.stage_copy(cx, cid, version, home) {
            self.in_flight.insert(cid);
        }
    }
}

impl WriteFanout for Staging {
    fn notice(&mut self, cx: &mut Ctx, n: Notice) {
        match n {
            Notice::Written(lpn) => self.written(cx, lpn),
            Notice::RefCount { cid, count } => self.refcount(cx, cid, count),
            Notice::Erasing(_) => {}
        }
    }
}

impl OwnedOps for Staging {
    fn done(&mut self, cx: &mut Ctx, op: &Op) -> Result<(), SimError> {
        match op.kind {
            OpKind::Program => self.copy_done(cx, op),
            OpKind::Erase => self.erase_done(cx, op.src),
            OpKind::Read => unreachable!("copies program data already in the controller"),
        }
        Ok(())
    }
}

impl Lifecycle for Staging {
    fn seams(&self) -> &'static [Seam] {
        &[Seam::ReadRoute, Seam::Written, Seam::RefCount]
    }

    /// Power loss: the Map_table, R-LRU lists and staging copies are gone (they are volatile
    /// or disposable); blocks that held copies must be erased before they are written again.
    fn power_loss(&mut self, cx: &mut Ctx) {
        cx.metrics().staging.copies_lost += self.copies.len() as u64;
        self.copies.clear();
        self.page_lpn.clear();
        self.in_flight.clear();
        self.copies_per_die.fill(0);
        self.lost_at = Some(cx.now());
        if let Trigger::ReadHot { rlru, .. } = &mut self.trigger {
            rlru.iter_mut().for_each(LruBuffer::clear);
        }
        for p in &mut self.planes {
            if let Some((block, _)) = p.active.take() {
                p.used.push_back(block);
            }
        }
    }

    fn space_factor(&self) -> Option<f64> {
        Some(self.space_factor)
    }

    fn report(&self, m: &Metrics, s: &mut Summary) {
        s.staging = crate::metrics::summary_staging(
            &m.staging,
            m.read_pages,
            self.copies.len() as u64,
            self.capacity_pages(),
        );
    }
}

impl HostMap for Staging {}
impl GcRelocate for Staging {}
impl HostCache for Staging {}
