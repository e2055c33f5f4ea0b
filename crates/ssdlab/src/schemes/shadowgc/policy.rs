//! The ShadowGC family's policy object (shadowgc.txt): the host's page cache in front of the
//! device, shadow states of valid flash pages, the GC variants' relocation paths, fast-mode
//! blocks and their refresh, and a system restart.
//!
//! * Host buffer: LRU write-back. A host write dirties its page there (completing at DRAM
//!   speed); evicting a dirty page is the device's write, and the request that caused the
//!   eviction waits for it (as a page-cache writer waits for reclaim). A read hit is served at
//!   DRAM speed; a miss goes to the device and enters the cache clean when issued.
//! * Shadow states are derived, not stored twice: a valid flash page of logical page l is
//!   host-shadow if l is dirty in the host buffer (the FTL keeps that bit per page and a zombie
//!   count per block, as if the host piggybacked it on its commands), device-shadow if dirty in
//!   the device buffer, twin-shadow if both, valid otherwise.
//! * Under HGC/SGC the device buffer drops a twin-shadow it evicts (Fig. 5): the host holds a
//!   newer copy. If a restart then loses the host copy, the device serves the older flash
//!   version (counted as `twin_versions_lost`).
//! * Restart (power loss): the host buffer is lost (the host's loss), shadow states return to
//!   valid, and (once the core has queued the device buffer's flush, its power-loss
//!   protection) every fast block holding valid data is refreshed.
//! * Fast blocks (HGC, SGC) fall due for refresh T − D after they are opened; a refresh is a GC
//!   job on the block's plane that reprograms normally.

use crate::buffer::LruBuffer;
use crate::config::{Config, ShadowGc};
use crate::flash::{BlockId, Level};
use crate::ftl::blocks::{BlockState, Stream};
use crate::ftl::mapping::NONE;
use crate::metrics::{Metrics, Summary};
use crate::sim::memory::{Tables, LRU_BYTES_PER_PAGE, RECORD_BYTES};
use crate::sim::policy::{
    CacheRead, CacheWrite, GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute,
    Relocation, Seam, WriteFanout,
};
use crate::sim::Ctx;
use rustc_hash::FxHashSet;

/// Shadow state of a valid page: index into `ShadowMetrics::relocated`.
pub(super) fn state_index(host_dirty: bool, device_dirty: bool) -> usize {
    usize::from(host_dirty) + 2 * usize::from(device_dirty)
}

/// The policy object.
#[derive(Debug)]
pub(super) struct Shadow {
    variant: ShadowGc,
    /// The host's page cache, if configured.
    host: Option<LruBuffer>,
    /// Pages whose device-buffer copy was dropped as a twin-shadow (the host holds newer data).
    twin_dropped: FxHashSet<u32>,
    /// Per plane: fast blocks whose refresh is due, waiting for the plane's GC to be free.
    refresh_pending: Vec<Vec<u32>>,
    /// A fast block falls due for refresh this long after it is opened (T − D), ns.
    refresh_after_ns: u64,
}

impl Shadow {
    pub(super) fn new(cfg: &Config) -> Self {
        let s = &cfg.shadow;
        Shadow {
            variant: s.gc,
            host: (cfg.buffer.host_pages > 0).then(|| LruBuffer::new(cfg.buffer.host_pages)),
            twin_dropped: FxHashSet::default(),
            refresh_pending: vec![Vec::new(); crate::flash::Geometry::of(cfg).planes() as usize],
            refresh_after_ns: ((s.fast_retention_h - s.power_off_h) * 3.6e12).round() as u64,
        }
    }

    /// The host buffer wrote back `lpn`: it is the device's write now.
    fn host_evicted(&mut self, cx: &mut Ctx, lpn: u32) {
        cx.metrics().shadow.host_flushes += 1;
        cx.ftl().set_zombie(lpn, false);
        self.twin_dropped.remove(&lpn);
    }

    /// A fast block's refresh is due: if it still holds valid data, relocate it (a GC job on
    /// its plane, as soon as the plane's current job ends). A block still being written is
    /// closed first (its unwritten pages are given up until the erase).
    fn refresh_due(&mut self, cx: &mut Ctx, block: u32, epoch: u32) {
        // Refresh is background work of a drive in service: once the workload is over, a timer
        // falling due does not extend the run.
        if cx.workload_done() {
            return;
        }
        let b = &cx.ftl_ref().blocks[block as usize];
        if b.erase_count != epoch || b.valid == 0 || b.state == BlockState::Victim {
            return;
        }
        if b.state == BlockState::Active && !cx.ftl().close_block(BlockId(block)) {
            // A program into it is in flight: look again in a millisecond.
            cx.timer(cx.now() + 1_000_000, block, epoch);
            return;
        }
        let plane = cx.geo().plane_of_block(BlockId(block)).0;
        self.refresh_pending[plane as usize].push(block);
        cx.start_gc(plane);
    }
}

impl HostCache for Shadow {
    /// A host read that hits the host buffer is served from host DRAM; a miss enters it clean
    /// (a dirty page it evicts is written to the device as part of this request) unless the
    /// buffers hold written pages only (`buffer.cache_reads = false`).
    fn cache_read(&mut self, cx: &mut Ctx, req: u32, lpn: u32) -> CacheRead {
        let cache_reads = cx.cfg().buffer.cache_reads;
        let Some(hb) = self.host.as_mut() else {
            return CacheRead::Miss;
        };
        if hb.read_hit(lpn, cache_reads) {
            cx.metrics().shadow.host_read_hits += 1;
            cx.page_done_from_dram(req);
            return CacheRead::Hit;
        }
        if !cache_reads {
            return CacheRead::Miss;
        }
        match hb.insert(lpn, false) {
            Some(e) if e.dirty => {
                cx.add_pages(req, 1);
                self.host_evicted(cx, e.lpn);
                CacheRead::MissWritingBack(e.lpn)
            }
            _ => CacheRead::Miss,
        }
    }

    /// A host write into the host buffer: done at DRAM speed unless it evicts a dirty page,
    /// whose device write it then waits for.
    fn cache_write(&mut self, cx: &mut Ctx, req: u32, lpn: u32) -> CacheWrite {
        let Some(hb) = self.host.as_mut() else {
            return CacheWrite::Through;
        };
        let evicted = if hb.touch(lpn, true) {
            cx.metrics().shadow.host_write_hits += 1;
            None
        } else {
            hb.insert(lpn, true)
        };
        cx.ftl().set_zombie(lpn, true);
        match evicted {
            Some(e) if e.dirty => {
                self.host_evicted(cx, e.lpn);
                CacheWrite::WriteBack(e.lpn)
            }
            _ => {
                cx.page_done_from_dram(req);
                CacheWrite::Absorbed
            }
        }
    }

    /// Under HGC/SGC the device buffer drops an evicted twin-shadow (the host holds newer
    /// data), completing `req` at DRAM speed.
    fn drop_evicted(&mut self, cx: &mut Ctx, lpn: u32, req: u32) -> bool {
        if !(self.variant.drops_twins() && cx.ftl_ref().is_zombie(lpn)) {
            return false;
        }
        cx.metrics().shadow.twins_dropped += 1;
        self.twin_dropped.insert(lpn);
        if req != NONE {
            cx.page_done_from_dram(req);
        }
        true
    }
}

impl GcRelocate for Shadow {
    /// Counts the page's shadow state; takes a device-shadow's data from the device buffer
    /// (DGC, SGC), and sends a host-shadow to the dedicated blocks (separating variants).
    fn relocation(&mut self, cx: &mut Ctx, lpn: u32, refresh: bool) -> Relocation {
        let host = cx.ftl_ref().is_zombie(lpn);
        let device = cx.device_buffer().is_some_and(|b| b.is_dirty(lpn));
        cx.metrics().shadow.relocated[state_index(host, device)] += 1;
        let from_buffer = self.variant.from_buffer() && device;
        if from_buffer {
            cx.device_buffer().expect("dirty in it").clean(lpn);
            cx.metrics().shadow.from_buffer += 1;
        }
        // Refresh reprograms normally.
        let dedicated = self.variant.separates() && host && !refresh;
        if dedicated {
            cx.metrics().shadow.separated += 1;
        }
        Relocation {
            from_buffer,
            dedicated,
        }
    }

    /// A refresh waiting on `plane`, claimed as its next GC victim.
    fn claim_refresh(&mut self, cx: &mut Ctx, plane: u32) -> Option<u32> {
        let pending = &mut self.refresh_pending[plane as usize];
        if pending.is_empty() || cx.ftl_ref().planes[plane as usize].gc_jobs > 0 {
            return None;
        }
        // Blocks erased or emptied since they fell due need no refresh.
        while let Some(block) = pending.pop() {
            if cx.ftl().claim_block(BlockId(block)) {
                let valid = u64::from(cx.ftl_ref().blocks[block as usize].valid);
                let m = &mut cx.metrics().shadow;
                m.refresh_jobs += 1;
                m.refresh_pages += valid;
                return Some(block);
            }
        }
        None
    }
}

impl WriteFanout for Shadow {
    /// A fast block was opened: its refresh falls due after T − D.
    fn block_opened(&mut self, cx: &mut Ctx, block: u32) {
        let b = &cx.ftl_ref().blocks[block as usize];
        if !b.fast {
            return;
        }
        let epoch = b.erase_count;
        cx.timer(cx.now() + self.refresh_after_ns, block, epoch);
    }
}

impl OwnedOps for Shadow {
    fn timer(&mut self, cx: &mut Ctx, block: u32, epoch: u32) {
        self.refresh_due(cx, block, epoch);
    }
}

impl Lifecycle for Shadow {
    /// The host buffer (an LRU entry per page), the FTL's zombie bit per logical page, and
    /// the twin-dropped set (at most one entry per device-buffer page, with the mapping record
    /// that keeps the dropped version).
    fn table_bytes(&self, cfg: &Config, t: &Tables) -> Option<(&'static str, u64)> {
        let host = u64::from(cfg.buffer.host_pages) * LRU_BYTES_PER_PAGE;
        let twins = u64::from(cfg.buffer.device_pages) * (16 + RECORD_BYTES);
        Some(("host buffer and zombie bits", host + t.logical / 8 + twins))
    }
    fn seams(&self) -> &'static [Seam] {
        &[Seam::Relocate, Seam::ClaimRefresh, Seam::BlockOpened]
    }

    fn extra_streams(&self, fill: Level) -> Vec<Stream> {
        // Separation keeps a dedicated GC block open per plane in service.
        if self.variant.separates() {
            vec![Stream::dedicated(fill)]
        } else {
            Vec::new()
        }
    }

    /// The host buffer is lost with the host; shadows return to valid. A dropped twin's newest
    /// device version existed only in the host copy just lost: the newest the device still has
    /// is on flash or in a program in flight.
    fn power_loss(&mut self, cx: &mut Ctx) {
        if let Some(hb) = self.host.as_mut() {
            cx.metrics().shadow.host_pages_lost += hb.dirty_pages().len() as u64;
            hb.clear();
            cx.ftl().clear_zombies();
        }
        let mut lost: Vec<u32> = self.twin_dropped.drain().collect();
        lost.sort_unstable();
        for lpn in lost {
            cx.metrics().shadow.twin_versions_lost += 1;
            let in_flight = cx.in_flight_version(lpn).unwrap_or(0);
            let map = &mut cx.ftl().map;
            let held = map.mapped_version(lpn).max(in_flight);
            map.set_newest(lpn, held);
        }
    }

    /// After the restart's buffer flush is queued: every fast block holding valid data is
    /// refreshed.
    fn restarted(&mut self, cx: &mut Ctx) {
        for block in 0..cx.ftl_ref().blocks.len() {
            let b = &cx.ftl_ref().blocks[block];
            if b.fast && b.valid > 0 {
                let epoch = b.erase_count;
                cx.call(block as u32, epoch);
            }
        }
    }

    fn holds_newer(&self, lpn: u32) -> bool {
        self.twin_dropped.contains(&lpn)
    }

    fn report(&self, m: &Metrics, s: &mut Summary) {
        let by_cause = |c: &str| s.flash.by_cause.get(c).map_or(0, |c| c[1]);
        s.shadow = Some(crate::metrics::summary_shadow(
            &format!("{:?}", self.variant).to_lowercase(),
            &m.shadow,
            m.buffer.restart_flushes,
            m.host.write_pages,
            by_cause("user"),
            by_cause("gc"),
            s.flash.programs,
        ));
    }
}

impl ReadRoute for Shadow {}
impl HostMap for Shadow {}
