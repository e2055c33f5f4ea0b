//! The host-side buffer and ShadowGC (shadowgc.txt): the host's page cache in front of the
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
//! * Restart (`Event::PowerLoss`): the host buffer is lost (the host's loss), the device buffer
//!   is flushed by its power-loss protection, shadow states return to valid, and every fast
//!   block holding valid data is refreshed.

use super::{Event, Simulation};
use crate::flash::{BlockId, Level, Ppn};
use crate::ftl::blocks::BlockState;
use crate::ftl::mapping::NONE;
use crate::sched::QueueKind;

/// Shadow state of a valid page: index into `ShadowMetrics::relocated`.
pub(super) fn state_index(host_dirty: bool, device_dirty: bool) -> usize {
    usize::from(host_dirty) + 2 * usize::from(device_dirty)
}

impl Simulation<'_> {
    /// A host read that hits the host buffer is served from host DRAM; a miss enters it clean
    /// (a dirty page it evicts is written to the device as part of this request).
    pub(super) fn host_read(&mut self, req: u32, lpn: u32) -> (bool, Option<usize>) {
        let Some(hb) = self.host_buffer.as_mut() else {
            return (false, None);
        };
        if hb.touch(lpn, false) {
            self.metrics.shadow.host_read_hits += 1;
            self.complete_from_dram(req);
            return (true, None);
        }
        match hb.insert(lpn, false) {
            Some(e) if e.dirty => {
                self.reqs[req as usize].pages_left += 1;
                (false, self.host_evicted(req, e.lpn))
            }
            _ => (false, None),
        }
    }

    /// A host write into the host buffer: done at DRAM speed unless it evicts a dirty page,
    /// whose device write it then waits for.
    pub(super) fn host_write(&mut self, req: u32, lpn: u32) -> Option<usize> {
        let hb = self.host_buffer.as_mut().expect("host buffer configured");
        let evicted = if hb.touch(lpn, true) {
            self.metrics.shadow.host_write_hits += 1;
            None
        } else {
            hb.insert(lpn, true)
        };
        self.ftl.set_zombie(lpn, true);
        match evicted {
            Some(e) if e.dirty => self.host_evicted(req, e.lpn),
            _ => {
                self.complete_from_dram(req);
                None
            }
        }
    }

    /// The host buffer wrote back `lpn`: it is the device's write now (completing `req`).
    fn host_evicted(&mut self, req: u32, lpn: u32) -> Option<usize> {
        self.metrics.shadow.host_flushes += 1;
        self.ftl.set_zombie(lpn, false);
        self.twin_dropped.remove(&lpn);
        self.store_page(req, lpn)
    }

    /// Whether the device buffer drops this evicted dirty page as a twin-shadow (completing
    /// `req` at DRAM speed) instead of flushing it.
    pub(super) fn drop_twin(&mut self, lpn: u32, req: u32) -> bool {
        if !(self.cfg.shadow.gc.drops_twins() && self.ftl.is_zombie(lpn)) {
            return false;
        }
        self.metrics.shadow.twins_dropped += 1;
        self.twin_dropped.insert(lpn);
        if req != NONE {
            self.complete_from_dram(req);
        }
        true
    }

    /// How GC relocates a valid page: counts its shadow state; returns whether its data is
    /// taken from the device buffer (clearing the dirty bit there) and whether it goes to the
    /// dedicated blocks.
    pub(super) fn gc_relocation(&mut self, lpn: u32, refresh: bool) -> (bool, bool) {
        let host = self.ftl.is_zombie(lpn);
        let device = self.buffer.as_ref().is_some_and(|b| b.is_dirty(lpn));
        self.metrics.shadow.relocated[state_index(host, device)] += 1;
        let v = self.cfg.shadow.gc;
        let from_buffer = v.from_buffer() && device;
        if from_buffer {
            self.buffer.as_mut().expect("dirty in it").clean(lpn);
            self.metrics.shadow.from_buffer += 1;
        }
        // Refresh reprograms normally.
        let separate = v.separates() && host && !refresh;
        if separate {
            self.metrics.shadow.separated += 1;
        }
        (from_buffer, separate)
    }

    /// A fast block was opened: its refresh falls due after T − D.
    pub(super) fn schedule_refresh(&mut self, ppn: u32) {
        let block = self.geo.block_of(Ppn(ppn)).0 as usize;
        let b = &self.ftl.blocks[block];
        if !b.fast || ppn % self.geo.pages_per_block != 0 {
            return;
        }
        let s = &self.cfg.shadow;
        let after = ((s.fast_retention_h - s.power_off_h) * 3.6e12).round() as u64;
        let epoch = b.erase_count;
        self.schedule(
            self.now + after,
            Event::RefreshDue {
                block: block as u32,
                epoch,
            },
        );
    }

    /// A fast block's refresh is due: if it still holds valid data, relocate it (a GC job on
    /// its plane, as soon as the plane's current job ends). A block still being written is
    /// closed first (its unwritten pages are given up until the erase).
    pub(super) fn on_refresh_due(&mut self, block: u32, epoch: u32) {
        // Refresh is background work of a drive in service: once the workload is over, a timer
        // falling due does not extend the run.
        if self.host.exhausted && self.host.outstanding == 0 {
            return;
        }
        let b = &self.ftl.blocks[block as usize];
        if b.erase_count != epoch || b.valid == 0 || b.state == BlockState::Victim {
            return;
        }
        if b.state == BlockState::Active && !self.ftl.close_block(BlockId(block)) {
            // A program into it is in flight: look again in a millisecond.
            let at = self.now + 1_000_000;
            self.schedule(at, Event::RefreshDue { block, epoch });
            return;
        }
        let plane = self.geo.plane_of_block(BlockId(block)).0;
        self.refresh_pending[plane as usize].push(block);
        self.start_gc(plane);
    }

    /// A refresh waiting on `plane`, claimed as its next GC victim.
    pub(super) fn claim_refresh(&mut self, plane: u32) -> Option<BlockId> {
        if self.ftl.planes[plane as usize].gc_running {
            return None;
        }
        // Blocks erased or emptied since they fell due need no refresh.
        while let Some(block) = self.refresh_pending[plane as usize].pop() {
            if self.ftl.claim_block(BlockId(block)) {
                return Some(BlockId(block));
            }
        }
        None
    }

    /// A GC read's relocation program is ready once ECC has decoded the page.
    pub(super) fn queue_relocation(&mut self, id: u32, decode: bool) {
        let ecc = (self.cfg.shadow.ecc_decode_us * 1e3).round() as u64;
        if decode && ecc > 0 {
            self.schedule(self.now + ecc, Event::EccDone { op: id });
            return;
        }
        self.on_ecc_done(id);
    }

    /// A relocation program enters its die's internal queue.
    pub(super) fn on_ecc_done(&mut self, id: u32) {
        let die = self.ops[id as usize].die as usize;
        self.enqueue(die, QueueKind::Internal, id);
        self.try_dispatch(die);
    }

    /// Restart: host buffer lost, device buffer flushed, shadows back to valid, fast blocks
    /// refreshed.
    pub(super) fn shadow_restart(&mut self) {
        if let Some(hb) = self.host_buffer.as_mut() {
            self.metrics.shadow.host_pages_lost += hb.dirty_pages().len() as u64;
            hb.clear();
            self.ftl.clear_zombies();
        }
        // A dropped twin's newest device version existed only in the host copy just lost: the
        // newest the device still has is on flash or in a program in flight.
        let mut lost: Vec<u32> = self.twin_dropped.drain().collect();
        lost.sort_unstable();
        for lpn in lost {
            self.metrics.shadow.twin_versions_lost += 1;
            let in_flight = self.pending_writes.get(&lpn).map_or(0, |p| p.1);
            let held = self.ftl.map.mapped_version(lpn).max(in_flight);
            self.ftl.map.set_newest(lpn, held);
        }
        let dirty = self
            .buffer
            .as_ref()
            .map(|b| b.dirty_pages())
            .unwrap_or_default();
        let mut touched = Vec::new();
        for lpn in dirty {
            self.buffer.as_mut().expect("listed").clean(lpn);
            self.metrics.shadow.restart_flushes += 1;
            let version = self.ftl.map.newest(lpn);
            touched.push(self.flash_write(NONE, lpn, version, Level::Normal));
        }
        for block in 0..self.ftl.blocks.len() {
            let b = &self.ftl.blocks[block];
            if b.fast && b.valid > 0 {
                let epoch = b.erase_count;
                self.on_refresh_due(block as u32, epoch);
            }
        }
        touched.sort_unstable();
        touched.dedup();
        for die in touched {
            self.try_dispatch(die);
        }
        for p in 0..self.geo.planes() {
            self.start_gc(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::PlaneId;
    use crate::ftl::blocks::Stream;
    use crate::sim::RunOptions;
    use crate::time::SimTime;
    use crate::workload::Requests;

    fn config(gc: &str) -> crate::config::Config {
        let mut b = ConfigBuilder::preset("tiny").unwrap();
        for s in [
            "buffer.host_pages=2",
            "buffer.device_pages=2",
            "flash.program_us=600",
            "precondition.fill=0.5",
            &format!("shadow.gc={gc}"),
            "shadow.fast_retention_h=1",
            "shadow.power_off_h=0.5",
        ] {
            b = b.set(s).unwrap();
        }
        b.build().unwrap()
    }

    fn state(sim: &Simulation<'_>, lpn: u32) -> usize {
        state_index(
            sim.ftl.is_zombie(lpn),
            sim.buffer.as_ref().unwrap().is_dirty(lpn),
        )
    }

    const VALID: usize = 0;
    const HOST: usize = 1;
    const DEVICE: usize = 2;
    const TWIN: usize = 3;

    /// A request slot for calls that complete a page.
    fn req(sim: &mut Simulation<'_>) -> u32 {
        sim.reqs.push(super::super::ReqState {
            arrival: SimTime::ZERO,
            pages_left: 100,
            read: false,
        });
        (sim.reqs.len() - 1) as u32
    }

    #[test]
    fn every_transition_of_fig_5() {
        let cfg = config("sgc");
        let mut none = std::iter::empty();
        let w: &mut Requests = &mut none;
        let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
        let r = req(&mut sim);
        let a = (0..8).find(|&l| sim.ftl.map.ppn(l) != NONE).unwrap();
        let (b, c, d) = (a + 1, a + 2, a + 3);
        let block = sim.geo.block_of(Ppn(sim.ftl.map.ppn(a))).0 as usize;
        let zombies = sim.ftl.blocks[block].zombies;
        assert_eq!(state(&sim, a), VALID, "preconditioned: a valid flash page");
        // Valid → host-shadow: the host writes the page into its buffer (LRU of 2).
        sim.host_write(r, a);
        assert_eq!(state(&sim, a), HOST);
        assert_eq!(sim.ftl.blocks[block].zombies, zombies + 1);
        // Host-shadow → device-shadow: the host buffer writes it back to the device buffer.
        sim.host_write(r, b);
        sim.host_write(r, c);
        assert_eq!(state(&sim, a), DEVICE);
        assert!(!sim.ftl.is_zombie(a));
        // Device-shadow → twin-shadow: the host writes it again (b goes to the device).
        sim.host_write(r, a);
        assert_eq!(state(&sim, a), TWIN);
        // A twin evicted from the device buffer is dropped, not flushed: c enters the device
        // buffer and pushes a out; no program is queued for a.
        sim.host_write(r, d);
        assert_eq!(sim.metrics.shadow.twins_dropped, 1);
        assert!(sim.twin_dropped.contains(&a));
        assert!(!sim.pending_writes.contains_key(&a));
        assert_eq!(state(&sim, a), HOST);
        // A restart: every state returns to valid; the device buffer (b, c) is flushed; a's
        // dropped version died with the host copy.
        sim.shadow_restart();
        for lpn in [a, b, c, d] {
            assert_eq!(state(&sim, lpn), VALID, "lpn {lpn}");
        }
        assert!(sim.host_buffer.as_ref().unwrap().is_empty());
        assert!(sim.ftl.blocks.iter().all(|b| b.zombies == 0));
        let m = &sim.metrics.shadow;
        assert_eq!(
            (m.host_pages_lost, m.twin_versions_lost, m.restart_flushes),
            (2, 1, 2)
        );
        assert_eq!(sim.ftl.map.newest(a), sim.ftl.map.mapped_version(a));
    }

    #[test]
    fn dgc_flushes_what_sgc_drops() {
        let cfg = config("dgc");
        let mut none = std::iter::empty();
        let w: &mut Requests = &mut none;
        let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
        let r = req(&mut sim);
        // Make page 0 a twin, then push it out of the device buffer.
        sim.host_write(r, 0);
        sim.host_write(r, 1);
        sim.host_write(r, 2); // 0 → device buffer
        sim.host_write(r, 0); // 1 → device buffer; 0 is a twin
        sim.host_write(r, 3); // 2 → device buffer: evicts 0 from it
        assert_eq!(sim.metrics.shadow.twins_dropped, 0);
        assert!(sim.pending_writes.contains_key(&0), "DGC flushes the twin");
    }

    #[test]
    fn fast_blocks_program_fast_and_fall_due_for_refresh_after_t_minus_d() {
        let cfg = config("hgc");
        let mut none = std::iter::empty();
        let w: &mut Requests = &mut none;
        let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
        let ppn = sim
            .ftl
            .alloc(PlaneId(0), Stream::shadow(Level::Normal), SimTime::ZERO)
            .unwrap();
        let block = sim.geo.block_of(ppn).0;
        assert!(sim.ftl.blocks[block as usize].fast);
        let mut op = sim.blank_op(crate::sched::OpKind::Program, crate::sched::Cause::Gc, 0);
        op.ppn = ppn.0;
        op.shadow = true;
        let id = sim.new_op(op);
        assert_eq!(sim.program_ns(id), 300_000);
        sim.schedule_refresh(ppn.0);
        let (at, ev) = sim.events.pop().unwrap();
        assert_eq!(at.ns(), 1_800_000_000_000, "T − D = 0.5 h");
        assert!(matches!(ev, Event::RefreshDue { block: b, epoch: 0 } if b == block));
        // A normal GC block programs at the normal time and is never refreshed.
        let normal = sim
            .ftl
            .alloc(PlaneId(0), Stream::GC, SimTime::ZERO)
            .unwrap();
        let mut op = sim.blank_op(crate::sched::OpKind::Program, crate::sched::Cause::Gc, 0);
        op.ppn = normal.0;
        let id = sim.new_op(op);
        assert_eq!(sim.program_ns(id), 600_000);
        sim.schedule_refresh(normal.0);
        assert!(sim.events.pop().is_none());
    }
}
