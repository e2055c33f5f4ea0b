//! Writing copies into the staging space, reclaiming its blocks, and what a finished copy
//! program or reclamation erase changes.

use super::{InFlight, Staging, StagingPlane, Trigger};
use crate::flash::{BlockId, PlaneId, Ppn};
use crate::sched::{Cause, OpKind, QueueKind};
use crate::sim::{Ctx, Op};

impl Staging {
    /// A staging page on a die other than `home_die`, the least loaded first; reclaims the
    /// oldest staging block (queuing its erase) when every eligible plane is full.
    fn staging_page(&mut self, cx: &mut Ctx, home_die: u32) -> Option<(u32, u32)> {
        let dies = cx.dies();
        let eligible = |p: &StagingPlane| p.die != home_die;
        let pick = self
            .planes
            .iter()
            .enumerate()
            .filter(|(_, p)| eligible(p) && (p.active.is_some() || !p.free.is_empty()))
            .min_by_key(|(i, p)| (dies[p.die as usize].load(), *i))
            .map(|(i, _)| i);
        let Some(i) = pick else {
            let victim = self
                .planes
                .iter()
                .position(|p| eligible(p) && !p.used.is_empty())?;
            self.reclaim(cx, victim);
            return None;
        };
        let p = &mut self.planes[i];
        let (block, next) = match p.active {
            Some(a) => a,
            None => (p.free.pop_front().expect("checked"), 0),
        };
        p.active = if next + 1 == self.ppb {
            p.used.push_back(block);
            None
        } else {
            Some((block, next + 1))
        };
        Some((block * self.ppb + next, p.plane))
    }

    /// Erases the oldest used staging block of plane `victim`, dropping the copies in it.
    fn reclaim(&mut self, cx: &mut Ctx, victim: usize) {
        let block = self.planes[victim].used.pop_front().expect("non-empty");
        self.reclaiming.insert(block);
        let first = block * self.ppb;
        for ppn in first..first + self.ppb {
            if let Some(lpn) = self.page_lpn.get(&ppn).copied() {
                self.drop_copy(lpn);
                cx.metrics().staging.copies_dropped += 1;
            }
        }
        let mut op = cx.blank_op(OpKind::Erase, Cause::Migration, self.planes[victim].plane);
        op.src = block;
        let die = op.die as usize;
        let id = cx.new_op(op);
        cx.enqueue(die, QueueKind::Internal, id);
        cx.dispatch(die);
    }

    /// Queues the program of `version` of page `lpn` as the copy filed under `key` into a
    /// staging page off `home_die`, unless no staging page is free now. The caller pinned
    /// `lpn`; the program keeps the pin until done (no program: unpinned here).
    pub(super) fn stage_copy(
        &mut self,
        cx: &mut Ctx,
        key: u32,
        lpn: u32,
        version: u32,
        home_die: u32,
    ) {
        let Some((ppn, plane)) = self.staging_page(cx, home_die) else {
            cx.ftl().map.unpin(lpn);
            return;
        };
        let die = cx.geo().die_of_plane(PlaneId(plane)).0 as usize;
        if self.queued_copies[die] >= self.max_queued_copies {
            // The staging die is backlogged: skip the copy (the page stays unused until its
            // block is reclaimed).
            cx.metrics().staging.copies_skipped += 1;
            cx.ftl().map.unpin(lpn);
            return;
        }
        self.queued_copies[die] += 1;
        self.in_flight.insert(key, InFlight::Programming(ppn));
        let mut op = cx.blank_op(OpKind::Program, Cause::Migration, plane);
        op.lpn = lpn;
        op.ppn = ppn;
        op.version = version;
        op.src = key;
        op.erase_epoch = cx.ftl_ref().blocks[cx.geo().block_of(Ppn(ppn)).0 as usize].erase_count;
        cx.metrics().staging.migrations += 1;
        let die = op.die as usize;
        let id = cx.new_op(op);
        // Internal work, so it stays ahead of any later reclamation erase of its block (a write
        // queue can be held up by a host write waiting for space).
        cx.enqueue(die, QueueKind::Internal, id);
        cx.dispatch(die);
    }

    /// A staging copy is programmed: it becomes the page's copy unless the page changed since.
    pub(super) fn copy_done(&mut self, cx: &mut Ctx, op: &Op) {
        cx.metrics().levels.programs[op.level as usize] += 1;
        let map = &mut cx.ftl().map;
        map.programmed(op.ppn, op.version);
        let newest = map.newest(op.lpn);
        map.unpin(op.lpn);
        let count = cx.references(op.lpn).unwrap_or(0);
        self.queued_copies[op.die as usize] -= 1;
        let block = op.ppn / self.ppb;
        let erased = cx.ftl_ref().blocks[block as usize].erase_count != op.erase_epoch;
        let key = op.src;
        // The copy in flight for its key is this one (the key was not written meanwhile).
        let current = self.in_flight.get(&key) == Some(&InFlight::Programming(op.ppn));
        if current {
            self.in_flight.remove(&key);
        }
        let wanted = current
            && match &self.trigger {
                Trigger::ReadHot(hot) => hot.contains(key),
                Trigger::RefCount(_) => count >= 2,
            };
        if newest != op.version
            || self.copies.contains_key(&key)
            || !wanted
            || self.reclaiming.contains(&block)
            || erased
            || self.lost_at.is_some_and(|t| op.queued_at <= t)
        {
            cx.metrics().staging.migrations_discarded += 1;
            return;
        }
        self.copies.insert(key, op.ppn);
        self.page_lpn.insert(op.ppn, key);
        let m = &mut cx.metrics().staging;
        m.peak_copies = m.peak_copies.max(self.copies.len() as u64);
    }

    /// A staging block was erased: it rejoins its plane's free staging blocks.
    pub(super) fn erase_done(&mut self, cx: &mut Ctx, block: u32) {
        cx.ftl().blocks[block as usize].erase_count += 1;
        cx.metrics().staging.erases += 1;
        let plane = cx.geo().plane_of_block(BlockId(block)).0;
        self.reclaiming.remove(&block);
        if let Some(p) = self.planes.iter_mut().find(|p| p.plane == plane) {
            p.free.push_back(block);
        }
    }
}
