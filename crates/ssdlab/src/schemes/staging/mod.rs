//! The staging space of HotR (hotr.txt) and DedupHR (deduphr.txt): hot-read pages copied to a staging space; a read
//! that would wait behind a program or erase on its chip is served from the copy instead. The
//! two differ only in what triggers a copy ([`Trigger`]).
//!
//! * R-LRU ([`hot::HotSet`]): per data die, an LRU list of recently read pages. Its size is the
//!   die's hot set: `hot_fraction` of the distinct pages first read on it so far; a copy exists
//!   only for a page with an entry, so at most that share of the read pages is staged.
//! * Conflict: the read's home die is running, or has queued ahead of it, a program or erase
//!   (the same test as `reads_blocked`).
//! * Every read of a page without an entry files one (evicting the list's LRU entry and its
//!   copy). A read that hits an entry without a copy is served at home and then copied to
//!   staging (a migration program, data from the controller) — on any hit by default, only on
//!   a conflicted hit with `copy_on = "conflicted-hit"`. A conflicted read whose entry has a
//!   copy is served from staging.
//! * Under dedup the lists and copies are keyed by host page (`key = "lba"`, deduphr.txt §4.1)
//!   or by content id (`key = "content"`); a copy holds the content the key mapped to.
//! * A host write invalidates the page's copy and removes its entry. When the staging space
//!   is full, its oldest block is erased and the copies in it dropped (copies are disposable:
//!   home always has the data).
//! * DedupHR: below the dedup layer pages are content ids. A duplicate write that leaves a
//!   content's reference count at or above the threshold copies it to staging on the write path
//!   (the data is in the controller: no flash read) unless it has a copy or one in flight; the
//!   Map_table is `copies`. A conflicted read with a copy is redirected.
//!   When the count falls to 1 (or the content dies) the copy is invalidated.
//! * Power loss (`Event::PowerLoss`): the Map_table, the R-LRU lists and every staging copy are
//!   lost; blocks holding copies are erased before reuse; reads keep going home.

use super::Policies;
use crate::config::{BusyCopy, Config, StagingDesign, StagingPolicy};
use crate::flash::{BlockId, Geometry, PlaneId, Ppn};
use crate::ftl::mapping::NONE;
use crate::ftl::Ftl;
use crate::metrics::{Metrics, Summary};
use crate::sched::OpKind;
use crate::sim::memory::{Tables, LRU_BYTES_PER_PAGE, RECORD_BYTES};
use crate::sim::policy::{
    GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Route, Seam, WriteFanout,
};
use crate::sim::{Ctx, Notice, Op, SimError};
use crate::verify::VerifyError;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

mod copies;
mod hot;

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

/// A copy in the making.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InFlight {
    /// The home read of FTL page `lpn`, whose data (`version`) the copy will take, is in
    /// flight; the page is pinned ([`crate::ftl::Mapping::pin`]) while the entry lasts.
    Reading { lpn: u32, version: u32 },
    /// Being programmed into this staging page.
    Programming(u32),
}

/// What puts a page into staging.
#[derive(Debug)]
enum Trigger {
    /// HotR: the R-LRU lists.
    ReadHot(hot::HotSet),
    /// DedupHR: a content's reference count reaching this.
    RefCount(u32),
}

/// HotR / DedupHR state: the policy object.
#[derive(Debug)]
struct Staging {
    trigger: Trigger,
    /// Key (the FTL page — a content id under dedup — or HotR's host page) → staging ppn: the
    /// Map_table.
    copies: FxHashMap<u32, u32>,
    /// Key → its copy in the making (a key written meanwhile is no longer here).
    in_flight: FxHashMap<u32, InFlight>,
    /// Copy programs queued or running, per die.
    queued_copies: Vec<u32>,
    max_queued_copies: u32,
    /// Where a blocked read goes when its copy's die is busy too.
    busy_copy: BusyCopy,
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
        let trigger = match cfg.staging.policy {
            StagingPolicy::Hotr => Trigger::ReadHot(hot::HotSet::new(cfg, geo.data_dies())),
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
            in_flight: Default::default(),
            queued_copies: vec![0; geo.dies() as usize],
            max_queued_copies: cfg.staging.max_queued_copies,
            busy_copy: cfg.staging.busy_copy,
            lost_at: None,
            planes,
            page_lpn: FxHashMap::default(),
            reclaiming: Default::default(),
            ppb: geo.pages_per_block,
            space_factor,
        }
    }

    /// The key a user read is filed under.
    fn key_of(&self, read: &Op) -> u32 {
        match &self.trigger {
            Trigger::ReadHot(h) if h.by_lba => read.src,
            _ => read.lpn,
        }
    }

    fn drop_copy(&mut self, lpn: u32) -> bool {
        match self.copies.remove(&lpn) {
            Some(ppn) => {
                self.page_lpn.remove(&ppn);
                true
            }
            None => false,
        }
    }

    /// Drops `key`'s copy in the making, if any (its read's pin with it; a copy being
    /// programmed keeps its pin until done).
    fn forget(&mut self, cx: &mut Ctx, key: u32) {
        if let Some(InFlight::Reading { lpn, .. }) = self.in_flight.remove(&key) {
            cx.ftl().map.unpin(lpn);
        }
    }

    /// HotR keyed by host page under dedup.
    fn keyed_by_lba(&self) -> bool {
        matches!(&self.trigger, Trigger::ReadHot(h) if h.by_lba)
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
        let key = self.key_of(op);
        // A copy on a die that is itself busy with a program or erase (staging copies being
        // programmed, reclamation): `staging.busy_copy` says whether the read still goes there.
        let copy_die = conflicted
            .then(|| self.copies.get(&key))
            .flatten()
            .map(|&ppn| cx.geo().die_of(Ppn(ppn)).0 as usize);
        let busy = match copy_die.filter(|&d| cx.program_erase_ahead(d)) {
            None => Busy::No,
            Some(d) => match self.busy_copy {
                BusyCopy::Home => Busy::Home,
                BusyCopy::Redirect => Busy::Copy,
                BusyCopy::LessWork
                    if cx.program_erase_work(d) < cx.program_erase_work(home_die) =>
                {
                    Busy::Copy
                }
                BusyCopy::LessWork => Busy::Home,
            },
        };
        let m = &mut cx.metrics().staging;
        Ok(match self.decide(m, key, home_die, conflicted, busy) {
            Decision::Home => Route::Queue,
            Decision::HomeThenCopy => {
                // The version the read returns: the mapped one (no write of the page is in
                // flight or buffered, or the read would not reach flash).
                let map = &mut cx.ftl().map;
                map.pin(op.lpn);
                let version = map.mapped_version(op.lpn);
                let reading = InFlight::Reading {
                    lpn: op.lpn,
                    version,
                };
                self.in_flight.insert(key, reading);
                Route::QueueAndTell
            }
            Decision::Copy(copy) => {
                let block = cx.read_at(op, copy);
                op.level = cx
                    .ftl_ref()
                    .block_level(crate::flash::BlockId(block as u32));
                Route::Queue
            }
        })
    }

    /// After a conflicted read served at home: program the page into staging (its data is in
    /// the controller, so no extra read).
    fn served(&mut self, cx: &mut Ctx, read: &Op) {
        let home = cx.geo().die_of_plane(PlaneId(read.plane)).0;
        let key = self.key_of(read);
        // Not if the key was written while the read was in flight (the data read is stale),
        // nor for an older read of the key than the one that asked for the copy.
        if let Some(&InFlight::Reading { lpn, version }) = self.in_flight.get(&key) {
            if lpn == read.lpn {
                // The entry's pin passes to the copy.
                self.in_flight.remove(&key);
                self.stage_copy(cx, key, lpn, version, home);
            }
        }
    }
}

/// Whether a blocked read's copy is on a die busy with a program or erase, and if so where
/// `staging.busy_copy` sends the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    /// Not busy (or no copy, or the read is not blocked).
    No,
    /// Busy: the read stays home.
    Home,
    /// Busy: the read goes to the copy all the same.
    Copy,
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
    /// Where a read of `key` goes; updates the R-LRU lists.
    fn decide(
        &mut self,
        m: &mut crate::metrics::StagingMetrics,
        key: u32,
        home_die: usize,
        conflicted: bool,
        busy: Busy,
    ) -> Decision {
        let copy_busy = busy == Busy::Home;
        match busy {
            Busy::No => {}
            Busy::Home => m.copy_busy += 1,
            Busy::Copy => m.busy_copy_redirected += 1,
        }
        let copy = self.copies.get(&key).copied();
        let hot = match &mut self.trigger {
            Trigger::ReadHot(hot) => hot,
            Trigger::RefCount(_) => {
                return match copy {
                    _ if !conflicted => Decision::Home,
                    Some(_) if copy_busy => Decision::Home,
                    Some(ppn) => {
                        m.redirected += 1;
                        Decision::Copy(ppn)
                    }
                    None => {
                        m.misses += 1;
                        Decision::Home
                    }
                };
            }
        };
        hot.observe(key, home_die);
        if !hot.touch(key) {
            if conflicted {
                m.misses += 1;
            }
            if let Some(evicted) = hot.insert(key, home_die) {
                if self.drop_copy(evicted) {
                    m.copies_dropped += 1;
                }
            }
            return Decision::Home;
        }
        match copy {
            Some(ppn) if conflicted && !copy_busy => {
                m.redirected += 1;
                return Decision::Copy(ppn);
            }
            Some(_) => return Decision::Home,
            None => {}
        }
        if conflicted {
            m.hits_without_copy += 1;
        }
        // Copies stay within the hot set: only a page with an entry has one, and each list
        // holds at most its chip's share of the distinct pages read.
        let wanted = conflicted || hot.any_hit;
        if wanted && !self.in_flight.contains_key(&key) {
            return Decision::HomeThenCopy;
        }
        Decision::Home
    }

    /// A write of `key` makes its copy stale and removes its entry.
    fn written(&mut self, cx: &mut Ctx, key: u32) {
        self.forget(cx, key);
        if self.drop_copy(key) {
            cx.metrics().staging.copies_invalidated += 1;
        }
        if let Trigger::ReadHot(hot) = &mut self.trigger {
            hot.remove(key);
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
        if count < threshold || self.copies.contains_key(&cid) || self.in_flight.contains_key(&cid)
        {
            return;
        }
        let ppn = cx.ftl_ref().map.ppn(cid);
        let plane = if ppn == NONE {
            cx.ftl_ref().home_plane(cid)
        } else {
            cx.plane_of(ppn)
        };
        let home = cx.geo().die_of_plane(plane).0;
        let map = &mut cx.ftl().map;
        map.pin(cid);
        let version = map.newest(cid);
        self.stage_copy(cx, cid, cid, version, home);
    }
}

impl WriteFanout for Staging {
    fn notice(&mut self, cx: &mut Ctx, n: Notice) {
        match n {
            // Host-page keys see host writes; page keys see the FTL page's new versions.
            Notice::HostWritten(lpn) if self.keyed_by_lba() => self.written(cx, lpn),
            Notice::Written(lpn) if !self.keyed_by_lba() => self.written(cx, lpn),
            Notice::HostWritten(_) | Notice::Written(_) => {}
            Notice::RefCount { cid, count } => self.refcount(cx, cid, count),
            Notice::Erasing(_) | Notice::Trimmed(_) => {}
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
    /// The hot set's two bits per logical page, the R-LRU lists (at most `hot_fraction` of
    /// the pages), per staging page a copy entry, its reverse entry and an in-flight entry
    /// (16 B each at the hash maps' worst load), and a mapping record pinning the page of each
    /// copy program queued (a read's pin is counted with the pages in flight).
    fn table_bytes(&self, cfg: &Config, t: &Tables) -> Option<(&'static str, u64)> {
        let geo = Geometry::of(cfg);
        let staging = match cfg.staging.design {
            StagingDesign::None => 0,
            StagingDesign::ExtraChip => t.physical / u64::from(geo.channels),
            StagingDesign::ReservedBlocks => {
                u64::from(cfg.staging.reserved_blocks_per_plane)
                    * u64::from(geo.planes())
                    * u64::from(geo.pages_per_block)
            }
        };
        let rlru = (cfg.staging.hot_fraction * t.logical as f64) as u64 * LRU_BYTES_PER_PAGE;
        let pins = u64::from(geo.dies()) * u64::from(cfg.staging.max_queued_copies) * RECORD_BYTES;
        Some(("staging tables", t.logical / 4 + rlru + 48 * staging + pins))
    }
    fn seams(&self) -> &'static [Seam] {
        &[
            Seam::ReadRoute,
            Seam::Written,
            Seam::HostWritten,
            Seam::RefCount,
        ]
    }

    /// Power loss: the Map_table, R-LRU lists and staging copies are gone (they are volatile
    /// or disposable); blocks that held copies must be erased before they are written again.
    fn power_loss(&mut self, cx: &mut Ctx) {
        cx.metrics().staging.copies_lost += self.copies.len() as u64;
        self.copies.clear();
        self.page_lpn.clear();
        let keys: Vec<u32> = self.in_flight.keys().copied().collect();
        for key in keys {
            self.forget(cx, key);
        }
        self.lost_at = Some(cx.now());
        if let Trigger::ReadHot(hot) = &mut self.trigger {
            hot.clear();
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

    /// Every pin of the mapping is one of a copy in the making: a home read's entry or a copy
    /// program queued or running.
    fn verify(&self, ftl: &Ftl) -> Result<(), VerifyError> {
        let reading = self
            .in_flight
            .values()
            .filter(|f| matches!(f, InFlight::Reading { .. }))
            .count() as u64;
        let programs: u64 = self.queued_copies.iter().map(|&n| u64::from(n)).sum();
        let pins = ftl.map.pins();
        if pins != reading + programs {
            return Err(VerifyError(format!(
                "staging: {pins} mapping pins, but {reading} home reads and {programs} copy programs hold one"
            )));
        }
        Ok(())
    }

    fn report(&self, m: &Metrics, s: &mut Summary) {
        s.staging = crate::metrics::summary_staging(
            &m.staging,
            m.host.read_pages,
            self.copies.len() as u64,
            self.capacity_pages(),
        );
    }
}

impl HostMap for Staging {}
impl GcRelocate for Staging {}
impl HostCache for Staging {}
