//! The mapping cache's flash work (`ftl.mapping_cache_*`): a host read or write whose entry
//! is not cached waits for a read of its translation page (one read serves every page waiting
//! on it); a dirty eviction writes its translation page back by a read of the page (to merge
//! the entries not cached) and a program of the new version (with `ftl.mapping_writeback =
//! "never"`, MQSim's behaviour, the read only: the page is then held for good). The bookkeeping is
//! `ftl::cmt::MappingCache`. Every translation page is mapped from the start of the run
//! (`Ftl::start_mapping_cache`) and stays mapped (GC moves it, nothing trims it), so there is
//! always a page to read. With `sched.mapping_reads_first` translation reads go ahead of the
//! die's other queued work, as MQSim's transaction scheduler serves them.

use super::{Op, SimError, Simulation};
use crate::config::MappingWriteback;
use crate::flash::Ppn;
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpClass, OpKind, QueueKind};
use crate::time::SimTime;
use rustc_hash::FxHashMap;

/// Marks a translation read that merges a write-back (in `Op::src`); a load has `NONE`.
const MERGE: u32 = 0;

/// Age key of a translation read moved ahead of its die's queue (`sched.mapping_reads_first`):
/// older than any operation queued (their keys count from 1).
pub(super) const AHEAD: u64 = 0;

/// Work waiting for its entry to arrive from flash.
#[derive(Debug, Clone, Copy)]
pub(super) enum Waiter {
    /// A host read page: (request, logical page, host page), waiting since.
    Read(u32, u32, u32, SimTime),
    /// A host write's program, created and not yet queued.
    Write(u32),
}

/// Translation pages in flight.
#[derive(Debug, Default)]
pub(super) struct CacheFlash {
    /// Per translation page being loaded: the work waiting for it.
    loading: FxHashMap<u32, Vec<Waiter>>,
    /// Per translation page: its write-backs in flight (the controller holds the page's
    /// content until their programs end, so a miss on it needs no flash read).
    writing: FxHashMap<u32, u32>,
}

impl Simulation<'_> {
    /// Looks `lpn` up for host work `w`: `true` if the work may go on now, `false` if it waits
    /// for a translation read (queued here unless one is in flight).
    pub(super) fn cache_lookup(&mut self, lpn: u32, w: Waiter) -> bool {
        let write = matches!(w, Waiter::Write(_));
        let Some(c) = self.ftl.cmt.as_mut() else {
            return true;
        };
        if c.touch(lpn, write) {
            return true;
        }
        let t = c.page_of(lpn);
        let tlpn = c.lpn_of_page(t);
        // The controller holds a page being written back: no read (none is loading it then).
        if !self.cache_flash.loading.contains_key(&t) && self.cache_flash.writing.contains_key(&t) {
            self.cache_entry_arrived(lpn);
            self.metrics.cache_flash.filled += 1;
            return true;
        }
        match self.cache_flash.loading.get_mut(&t) {
            Some(list) => list.push(w),
            None => {
                self.cache_flash.loading.insert(t, vec![w]);
                self.metrics.cache_flash.loads += 1;
                self.queue_translation_read(tlpn, NONE);
            }
        }
        false
    }

    /// Queues a read of the translation page stored as logical page `tlpn` (`purpose`: `NONE`
    /// for a load, [`MERGE`] for a write-back).
    fn queue_translation_read(&mut self, tlpn: u32, purpose: u32) {
        let ppn = self.ftl.map.ppn(tlpn);
        let plane = self.geo.plane_of(Ppn(ppn)).0;
        let mut op = self.blank_op(OpKind::Read, Cause::Mapping, plane);
        op.lpn = tlpn;
        op.ppn = ppn;
        op.src = purpose;
        op.level = self.ftl.block_level(self.geo.block_of(Ppn(ppn)));
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Read, id);
        if self.cfg.sched.mapping_reads_first {
            self.move_ahead(die);
        }
        self.try_dispatch(die);
    }

    /// Moves the read just queued on `die` ahead of every queued operation but the translation
    /// reads moved ahead before it (`sched.mapping_reads_first`): it takes the queue's first
    /// place after them and the lowest age key, [`AHEAD`], so the die's scheduler takes it first
    /// and urgent GC lets it pass (`Simulation::gate_gc`).
    fn move_ahead(&mut self, die: usize) {
        self.dies[die].queues.reads.move_last_ahead(AHEAD);
    }

    /// Queues the program of a new version of the translation page stored as `tlpn`.
    fn queue_translation_program(&mut self, tlpn: u32) {
        let version = self.ftl.map.next_version(tlpn);
        self.ftl.map.program_started(tlpn, version);
        let mut op = self.placed_write(tlpn, Cause::Mapping);
        op.lpn = tlpn;
        op.version = version;
        op.level = self.level_for(None);
        self.metrics.cache_flash.programs += 1;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Write, id);
        self.try_dispatch(die);
    }

    /// Starts the write-backs dirty evictions made due.
    pub(super) fn write_back_due(&mut self) {
        loop {
            let map = &self.ftl.map;
            let Some(c) = self.ftl.cmt.as_mut() else {
                return;
            };
            let Some(t) = c.take_due() else {
                return;
            };
            c.write_back(t, |l| map.ppn(l));
            let tlpn = c.lpn_of_page(t);
            *self.cache_flash.writing.entry(t).or_insert(0) += 1;
            self.metrics.cache_flash.merge_reads += 1;
            self.queue_translation_read(tlpn, MERGE);
        }
    }

    /// A translation read is done: a merge goes on to its program; a load caches the entries
    /// waiting on it and lets their work go on.
    pub(super) fn translation_read_done(&mut self, op: &Op) -> Result<(), SimError> {
        if op.src == MERGE {
            // Held for good: the page stays in `writing`, so misses on it read nothing.
            if self.cfg.ftl.mapping_writeback == MappingWriteback::Programmed {
                self.queue_translation_program(op.lpn);
            }
            return Ok(());
        }
        let Some(t) = self.ftl.cmt.as_ref().map(|c| c.page_stored_as(op.lpn)) else {
            return Ok(());
        };
        for w in self.cache_flash.loading.remove(&t).unwrap_or_default() {
            match w {
                Waiter::Read(req, lpn, host, since) => {
                    self.cache_entry_arrived(lpn);
                    let waited = self.now.since(since);
                    self.count_req(req, |m| m.read_wait_ns[OpClass::Mapping as usize] += waited);
                    if let Some(d) = self.detail(req) {
                        d.wait_ns[OpClass::Mapping as usize] += waited;
                    }
                    if let Some(die) = self.read_mapped(req, lpn, host)? {
                        self.try_dispatch(die);
                    }
                }
                Waiter::Write(id) => {
                    self.cache_entry_arrived(self.ops[id as usize].lpn);
                    let die = self.ops[id as usize].die as usize;
                    self.enqueue(die, QueueKind::Write, id);
                    self.try_dispatch(die);
                }
            }
        }
        Ok(())
    }

    fn cache_entry_arrived(&mut self, lpn: u32) {
        let map = &self.ftl.map;
        if let Some(c) = self.ftl.cmt.as_mut() {
            c.insert_clean(lpn, |l| map.ppn(l));
        }
    }

    /// A translation program is done: the new version becomes the page's mapping.
    pub(super) fn translation_program_done(&mut self, op: &Op) {
        let old = self.ftl.commit_write(Ppn(op.ppn), op.lpn, op.version);
        self.pending_done(op.lpn);
        self.start_gc(op.plane);
        if let Some(old) = old {
            self.start_gc(self.geo.plane_of(old).0);
        }
        if let Some(t) = self.ftl.cmt.as_ref().map(|c| c.page_stored_as(op.lpn)) {
            if let Some(n) = self.cache_flash.writing.get_mut(&t) {
                *n -= 1;
                if *n == 0 {
                    self.cache_flash.writing.remove(&t);
                }
            }
        }
    }
}
