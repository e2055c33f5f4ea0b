//! Garbage collection as timed internal work: victim page reads, relocation programs, erase.

use super::{GcJob, Op, SimError, Simulation};
use crate::flash::{BlockId, PlaneId};
use crate::sched::{Cause, OpKind, QueueKind};
use crate::verify;

impl Simulation<'_> {
    /// Starts GC on `plane` if it is at its free-block threshold and not already collecting.
    pub(super) fn start_gc(&mut self, plane: u32) {
        if !self.ftl.needs_gc(PlaneId(plane)) {
            return;
        }
        let Some(victim) = self.ftl.claim_victim(PlaneId(plane), self.now) else {
            return;
        };
        self.metrics.gc_count += 1;
        self.gc_jobs[plane as usize] = GcJob {
            block: victim.0,
            pending_moves: 0,
            started: self.now,
        };
        let moves: Vec<_> = self.ftl.valid_pages(victim).collect();
        let die = self.geo.die_of_plane(PlaneId(plane)).0 as usize;
        let copyback = self.cfg.flash.copyback;
        let level = self.ftl.blocks[victim.0 as usize].level;
        for (ppn, lpn) in moves {
            let mut op = self.blank_op(OpKind::Read, Cause::Gc, plane);
            op.ppn = ppn.0;
            op.lpn = lpn;
            op.transfer = !copyback;
            op.level = level;
            let id = self.new_op(op);
            self.enqueue(die, QueueKind::Internal, id);
            self.gc_jobs[plane as usize].pending_moves += 1;
        }
        if self.gc_jobs[plane as usize].pending_moves == 0 {
            self.enqueue_erase(plane);
        }
        self.try_dispatch(die);
    }

    /// A GC page read finished: queue the program of its copy.
    pub(super) fn gc_read_done(&mut self, read: &Op) {
        let mut op = self.blank_op(OpKind::Program, Cause::Gc, read.plane);
        op.src = read.ppn;
        op.lpn = read.lpn;
        op.transfer = read.transfer;
        op.level = read.level;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Internal, id);
    }

    /// One relocation of the plane's GC job is finished (or was found unnecessary).
    pub(super) fn gc_move_done(&mut self, plane: u32) {
        let job = &mut self.gc_jobs[plane as usize];
        job.pending_moves -= 1;
        if job.pending_moves == 0 {
            self.enqueue_erase(plane);
        }
    }

    fn enqueue_erase(&mut self, plane: u32) {
        let op = self.blank_op(OpKind::Erase, Cause::Gc, plane);
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Internal, id);
        self.mirror_erase(self.gc_jobs[plane as usize].block);
    }

    /// The victim is erased: it rejoins the free pool and GC on the plane may start again.
    pub(super) fn gc_erase_done(&mut self, plane: u32) -> Result<(), SimError> {
        let job = self.gc_jobs[plane as usize];
        if self.opts.verify {
            verify::check_erasable(&self.ftl, BlockId(job.block))?;
        }
        let level = self.ftl.blocks[job.block as usize].level;
        self.metrics.levels.erases[level as usize] += 1;
        self.ftl.erase(BlockId(job.block));
        self.metrics.gc_time_ns += self.now.since(job.started);
        self.start_gc(plane);
        Ok(())
    }
}
