//! Garbage collection as timed internal work: victim page reads, relocation programs, erase.

use super::policy::{Relocation, Seam};
use super::{Event, GcJob, Op, SimError, Simulation};
use crate::flash::{BlockId, PlaneId, Ppn};
use crate::sched::{Cause, OpKind, QueueKind};
use crate::verify;

impl Simulation<'_> {
    /// Starts GC on `plane` if it is at its free-block threshold and not already collecting. In
    /// the foreground mode a clean starts only when a request waits on the die, one at a time
    /// (`foreground_clean`), so this does nothing there.
    pub(super) fn start_gc(&mut self, plane: u32) {
        if self.foreground.is_empty() {
            self.begin_gc(plane);
        }
    }

    /// Starts GC on `plane` if it is at its free-block threshold and not already collecting.
    pub(super) fn begin_gc(&mut self, plane: u32) {
        let refresh = self.claim_refresh(plane);
        let victim = match refresh {
            Some(b) => BlockId(b),
            None => {
                if !self.ftl.may_start_gc(PlaneId(plane)) {
                    return;
                }
                let Some(v) = self.ftl.claim_victim(PlaneId(plane), self.now) else {
                    return;
                };
                self.metrics.gc_count += 1;
                v
            }
        };
        self.start_job(plane, victim, refresh.is_some());
    }

    /// Static wear levelling (`ftl.static_wl_threshold`, MQSim's
    /// `GC_and_WL_Unit_Base::run_static_wearleveling`), checked when a block of `plane` is
    /// erased: once the plane's most erased block and its least erased full block (the first of
    /// them) differ by the threshold, that block is collected like a GC victim, so its cold
    /// data moves and it rejoins the pool; not while GC runs on the plane.
    /// MQSim compares against the least erased block of any state and skips the run when it
    /// cannot collect that one (an open block, say), which can stop levelling for good; free
    /// and open blocks are left out here instead.
    fn static_wear_levelling(&mut self, plane: u32) {
        let threshold = self.cfg.ftl.static_wl_threshold;
        if threshold == 0 {
            return;
        }
        let first = self.geo.first_block(PlaneId(plane)).0 as usize;
        let blocks = &self.ftl.blocks[first..first + self.geo.blocks_per_plane as usize];
        let (mut coldest, mut min, mut max) = (None, u32::MAX, 0);
        for (i, b) in blocks.iter().enumerate() {
            max = max.max(b.erase_count);
            if b.state == crate::ftl::blocks::BlockState::Full && b.erase_count < min {
                (coldest, min) = (Some(i), b.erase_count);
            }
        }
        let Some(coldest) = coldest.filter(|_| max - min >= threshold) else {
            return;
        };
        if !self.ftl.claim_full_block(BlockId((first + coldest) as u32)) {
            return;
        }
        self.metrics.static_wl_runs += 1;
        self.start_job(plane, BlockId((first + coldest) as u32), false);
    }

    /// Starts a job collecting `victim` on `plane` (`refresh`: a scheme's refresh, not GC).
    fn start_job(&mut self, plane: u32, victim: BlockId, refresh: bool) {
        let state = GcJob {
            plane,
            block: victim.0,
            pending_moves: 0,
            started: self.now,
            refresh,
        };
        self.timeline_free(plane);
        let running = self.ftl.planes[plane as usize].gc_jobs;
        self.metrics.gc_max_concurrent = self.metrics.gc_max_concurrent.max(running);
        let job = match self.free_jobs.pop() {
            Some(j) => {
                self.gc_jobs[j as usize] = state;
                j
            }
            None => {
                self.gc_jobs.push(state);
                (self.gc_jobs.len() - 1) as u32
            }
        };
        // The victim's valid pages, into a buffer kept across victims (one allocation per run).
        let mut moves = std::mem::take(&mut self.gc_moves);
        moves.clear();
        moves.extend(self.ftl.valid_pages(victim));
        let die = self.geo.die_of_plane(PlaneId(plane)).0 as usize;
        let copyback = self.cfg.flash.copyback;
        let level = self.ftl.block_level(victim);
        for &(ppn, lpn) in &moves {
            let Relocation {
                from_buffer,
                dedicated,
            } = self.relocation(lpn, refresh);
            let kind = if from_buffer {
                OpKind::Program
            } else {
                OpKind::Read
            };
            let mut op = self.blank_op(kind, Cause::Gc, plane);
            op.lpn = lpn;
            op.level = self
                .policies
                .level
                .as_ref()
                .map_or(level, |l| l.relocation_level(lpn, level));
            if op.level != level {
                self.metrics.levels.relevelled += 1;
            }
            op.dedicated = dedicated;
            op.job = job;
            if from_buffer {
                // The data comes from the device buffer (merged with its write-back): a
                // program only, of the buffer's newer version. Reads meanwhile are served
                // from the controller.
                op.src = ppn.0;
                op.version = self.ftl.map.newest(lpn);
                self.ftl.map.program_started(lpn, op.version);
            } else {
                op.ppn = ppn.0;
                op.transfer = !copyback;
            }
            let id = self.new_op(op);
            self.enqueue(die, QueueKind::Internal, id);
            self.gc_jobs[job as usize].pending_moves += 1;
        }
        self.gc_moves = moves;
        if self.gc_jobs[job as usize].pending_moves == 0 {
            self.enqueue_erase(job);
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
        op.dedicated = read.dedicated;
        op.job = read.job;
        let id = self.new_op(op);
        // A page that left the chip is ECC-decoded first (copy-back keeps it on the chip).
        self.queue_relocation(id, read.transfer);
    }

    /// A GC relocation program finished: the copy becomes the mapping if the page did not
    /// change meanwhile. A program of data from the device buffer carries its version and is
    /// committed like a host write.
    pub(super) fn gc_program_done(&mut self, op: &Op) {
        if op.version > 0 {
            // The buffer's data is a host version, not a copy of the victim's page: like a
            // host write it wins unless a newer version is already mapped (a write-back of an
            // older version may have landed since the victim was chosen).
            self.ftl.commit_write(Ppn(op.ppn), op.lpn, op.version);
            self.pending_done(op.lpn);
        } else {
            self.ftl.commit_move(Ppn(op.src), Ppn(op.ppn), op.lpn);
        }
        self.metrics.gc_pages_moved += 1;
        self.gc_move_done(op.job);
    }

    /// One relocation of GC job `job` is finished (or was found unnecessary).
    pub(super) fn gc_move_done(&mut self, job: u32) {
        let j = &mut self.gc_jobs[job as usize];
        j.pending_moves -= 1;
        if j.pending_moves == 0 {
            self.enqueue_erase(job);
        }
    }

    fn enqueue_erase(&mut self, job: u32) {
        let GcJob { plane, block, .. } = self.gc_jobs[job as usize];
        let mut op = self.blank_op(OpKind::Erase, Cause::Gc, plane);
        op.job = job;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Internal, id);
        self.notify(super::Notice::Erasing(block));
    }

    /// The victim of GC job `job_id` is erased: it rejoins the free pool and GC on the plane
    /// may start again.
    pub(super) fn gc_erase_done(&mut self, job_id: u32) -> Result<(), SimError> {
        let job = self.gc_jobs[job_id as usize];
        self.free_jobs.push(job_id);
        let plane = job.plane;
        if self.opts.verify {
            verify::check_erasable(&self.ftl, BlockId(job.block))?;
        }
        let level = self.ftl.block_level(BlockId(job.block));
        self.metrics.levels.erases[level as usize] += 1;
        if let Some(fill) = self.fill_blocks.get_mut(job.block as usize) {
            if std::mem::take(fill) {
                self.metrics.levels.fill_erases[level as usize] += 1;
            }
        }
        self.ftl.erase(BlockId(job.block));
        if !job.refresh {
            self.metrics.gc_time_ns += self.now.since(job.started);
        }
        self.timeline_gc_done(&job);
        self.static_wear_levelling(plane);
        self.start_gc(plane);
        Ok(())
    }

    /// A block due for refresh that a scheme claims as the plane's next GC victim.
    fn claim_refresh(&mut self, plane: u32) -> Option<u32> {
        let r = self.at_seam(Seam::ClaimRefresh, |p, cx| Ok(p.claim_refresh(cx, plane)));
        self.stash(r).flatten()
    }

    /// How the schemes relocate `lpn` (the default: read it, program it with other GC data).
    fn relocation(&mut self, lpn: u32, refresh: bool) -> Relocation {
        let r = self.at_seam(Seam::Relocate, |p, cx| {
            let r = p.relocation(cx, lpn, refresh);
            Ok((r.from_buffer || r.dedicated).then_some(r))
        });
        self.stash(r).flatten().unwrap_or_default()
    }

    /// A GC read's relocation program is ready once ECC has decoded the page.
    pub(super) fn queue_relocation(&mut self, id: u32, decode: bool) {
        let ecc = self.timing.ecc_decode_ns;
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
}
