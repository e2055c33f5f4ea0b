//! The device buffer on the host path and the threshold-voltage level of every program: hits
//! served from DRAM, evictions classified and flushed, levels chosen by the level slot; its
//! power-loss protection at a restart.

use super::{Event, SimError, Simulation};
use crate::buffer::{Evicted, Hotness};
use crate::config::RewriteWhen;
use crate::flash::{Level, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, QueueKind};

impl Simulation<'_> {
    /// The level a page is programmed with, given its hotness class when it left the buffer.
    pub(super) fn level_for(&self, class: Option<Hotness>) -> Level {
        self.policies.level_for(class)
    }

    /// Completes a page of `req` after one DRAM access (a buffer hit).
    pub(super) fn complete_from_dram(&mut self, req: u32) {
        let at = self.now + self.cfg.buffer.dram_ns_per_page;
        self.schedule(at, Event::PageDone { req });
    }

    /// A host read that hits the buffer is served from DRAM.
    /// A write buffer (`buffer.cache_reads = false`) serves it without counting it as a use.
    pub(super) fn buffer_read_hit(&mut self, req: u32, lpn: u32) -> bool {
        let cache_reads = self.cfg.buffer.cache_reads;
        let hit = self
            .buffer
            .as_mut()
            .is_some_and(|b| b.read_hit(lpn, cache_reads));
        if hit {
            self.metrics.buffer.read_hits += 1;
            self.complete_from_dram(req);
        }
        hit
    }

    /// A page read from flash for the host enters the buffer (clean), unless the buffer holds
    /// written pages only.
    pub(super) fn buffer_fill(&mut self, lpn: u32) {
        if !self.cfg.buffer.cache_reads {
            return;
        }
        let Some(b) = self.buffer.as_mut() else {
            return;
        };
        if b.touch(lpn, false) {
            return;
        }
        if let Some(e) = b.insert(lpn, false) {
            if let Some(die) = self.evicted(e, NONE) {
                self.try_dispatch(die);
            }
        }
    }

    /// A host write into the buffer. It completes at DRAM speed unless it evicts a dirty page,
    /// in which case it waits for that page's program (the buffer has no room until then).
    pub(super) fn buffer_write(&mut self, req: u32, lpn: u32) -> Option<usize> {
        if self.cfg.buffer.flush_backlog_pages > 0 {
            return self.destage_write(req, lpn, self.destage.host_sectors);
        }
        let b = self.buffer.as_mut().expect("buffer configured");
        if b.touch(lpn, true) {
            self.metrics.buffer.write_hits += 1;
            self.complete_from_dram(req);
            return None;
        }
        match b.insert(lpn, true) {
            Some(e) if e.dirty => self.evicted(e, req),
            Some(e) => {
                self.complete_from_dram(req);
                self.evicted(e, NONE)
            }
            None => {
                self.complete_from_dram(req);
                None
            }
        }
    }

    /// A page left the buffer: classify it; flush it if dirty (completing `req`; in the
    /// background under `buffer.flush_backlog_pages`) unless the host-side cache drops it;
    /// rewrite it at the high level if it is clean and the level slot asks for it. Returns the
    /// die it queued work on.
    pub(super) fn evicted(&mut self, e: Evicted, req: u32) -> Option<usize> {
        let class = e.hotness(self.cfg.voltage.hot_threshold);
        self.metrics.buffer.evictions[usize::from(e.dirty)] += 1;
        self.metrics.buffer.classes[class as usize] += 1;
        let level = self.policies.classified(e.lpn, class);
        if e.dirty && self.cache_drops(e.lpn, req) {
            return None;
        }
        if e.dirty {
            if self.cfg.buffer.flush_backlog_pages > 0 {
                let units = self.flush_units(e.sectors);
                return Some(self.background_flush(e.lpn, level, units));
            }
            let version = self.ftl.map.newest(e.lpn);
            return Some(self.flash_write(req, e.lpn, version, level, 0));
        }
        let rewrite = self
            .policies
            .level
            .as_ref()
            .is_some_and(|l| l.rewrite_clean(class));
        let ppn = self.ftl.map.ppn(e.lpn);
        if !rewrite || self.ftl.map.in_flight(e.lpn) {
            return None;
        }
        // A never-written page holds pre-existing data at the fill level (see `read_page`).
        let level = if ppn == NONE {
            self.fill_level
        } else {
            self.ftl.block_level(self.geo.block_of(Ppn(ppn)))
        };
        if level == Level::High {
            return None;
        }
        // The data is in DRAM: a program only, at the high level; it moves the page like GC does.
        // Placed like a host write (counted as placed, or a burst of rewrites overshoots a
        // plane's share).
        let mut op = self.placed_write(e.lpn, Cause::Migration);
        let idle = self.cfg.voltage.rewrite_when == RewriteWhen::Idle;
        let die = op.die as usize;
        if idle && self.idle_work[die].len() >= self.cfg.voltage.rewrite_backlog_pages as usize {
            if op.placed != NONE {
                self.placed[op.placed as usize] -= 1;
            }
            self.metrics.buffer.rewrites_skipped += 1;
            return None;
        }
        op.lpn = e.lpn;
        op.src = ppn;
        op.level = Level::High;
        self.metrics.buffer.rewrites += 1;
        let id = self.new_op(op);
        if idle {
            // Started only when the die would otherwise idle (`start_idle_work`).
            self.idle_work[die].push_back(id);
        } else {
            self.enqueue(die, QueueKind::Write, id);
        }
        Some(die)
    }

    /// The die has nothing it may start: the oldest rewrite it holds back for idle time whose
    /// page is still where it was enters its write queue, if the die may program it now.
    /// Rewrites of pages that changed or moved meanwhile are dropped. True if one was queued.
    pub(super) fn start_idle_work(&mut self, die: usize) -> bool {
        while let Some(&id) = self.idle_work[die].front() {
            let op = &self.ops[id as usize];
            if self.ftl.map.is_at(op.lpn, op.src) && !self.ftl.map.in_flight(op.lpn) {
                if self.gated(die) || !self.program_ready(die, id) {
                    return false;
                }
                self.idle_work[die].pop_front();
                self.enqueue(die, QueueKind::Write, id);
                return true;
            }
            self.idle_work[die].pop_front();
            self.drop_idle_op(id);
            self.metrics.buffer.rewrites_stale += 1;
        }
        false
    }

    /// The run is over: rewrites still held for idle time are not programmed.
    pub(super) fn drop_unfinished_idle_work(&mut self) {
        for die in 0..self.idle_work.len() {
            while let Some(id) = self.idle_work[die].pop_front() {
                self.drop_idle_op(id);
                self.metrics.buffer.rewrites_unfinished += 1;
            }
        }
    }

    /// Frees a held-back rewrite that will not be programmed.
    fn drop_idle_op(&mut self, id: u32) {
        self.unplace(id);
        self.free_ops.push(id);
    }

    /// Simulated power loss and restart: the schemes lose their volatile state, the device
    /// buffer is flushed by its power-loss protection, then the schemes restart.
    pub(super) fn on_power_loss(&mut self) -> Result<(), SimError> {
        self.metrics.staging.power_losses += 1;
        let map = &self.ftl.map;
        if let Some(c) = self.ftl.cmt.as_mut() {
            c.power_loss(|l| map.ppn(l));
        }
        // Rewrites held back for idle time were only in DRAM: the pages stay where they are.
        for die in 0..self.idle_work.len() {
            while let Some(id) = self.idle_work[die].pop_front() {
                self.drop_idle_op(id);
                self.metrics.buffer.rewrites_stale += 1;
            }
        }
        self.each_policy::<()>(|p, cx| {
            p.power_loss(cx);
            Ok(None)
        })?;
        let dirty = self
            .buffer
            .as_ref()
            .map(|b| b.dirty_pages())
            .unwrap_or_default();
        let mut touched = Vec::new();
        for lpn in dirty {
            self.buffer.as_mut().expect("listed").clean(lpn);
            self.metrics.buffer.restart_flushes += 1;
            let version = self.ftl.map.newest(lpn);
            touched.push(self.flash_write(NONE, lpn, version, crate::flash::Level::Normal, 0));
        }
        self.each_policy::<()>(|p, cx| {
            p.restarted(cx);
            Ok(None)
        })?;
        touched.sort_unstable();
        touched.dedup();
        for die in touched {
            self.try_dispatch(die);
        }
        for p in 0..self.geo.planes() {
            self.start_gc(p);
        }
        Ok(())
    }
}
