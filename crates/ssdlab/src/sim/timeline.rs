//! Feeding a timeline ([`crate::metrics::timeline`]): the few places that do, all no-ops
//! unless [`Simulation::on_timeline`] was called.
//!
//! A timeline needs every phase's start and end, so a run that writes one schedules every
//! event (`sim/elide.rs` off, as with `RunOptions::full_events`): the results are the same.

use super::{elide, Op, Simulation};
use crate::flash::{BlockId, Ppn};
use crate::ftl::mapping::NONE;
use crate::metrics::timeline::{Counter, FlashOp, Span, SpanKind, TimelineSink, Transfer};
use crate::sched::{Cause, OpKind};
use crate::time::SimTime;

/// What the simulation keeps while it writes a timeline.
pub(super) struct Tracking<'w> {
    sink: Box<dyn TimelineSink + 'w>,
    /// Per die: when its current array phase started.
    array_from: Vec<SimTime>,
    /// Per die: when its current suspension began.
    suspended_at: Vec<SimTime>,
}

fn kind_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::Read => "read",
        OpKind::Program => "program",
        OpKind::Erase => "erase",
    }
}

impl<'w> Simulation<'w> {
    /// Writes the run's flash operations, bus transfers and requests to `sink` as they happen.
    /// Requests carry their waits, so their records are gathered as for
    /// [`Simulation::on_request`].
    pub fn on_timeline(&mut self, sink: Box<dyn TimelineSink + 'w>) {
        let dies = self.geo.dies() as usize;
        self.elision = elide::Elision::new(self.geo.channels, false);
        self.timeline = Some(Box::new(Tracking {
            sink,
            array_from: vec![SimTime::ZERO; dies],
            suspended_at: vec![SimTime::ZERO; dies],
        }));
    }

    /// Whether per-request records are gathered (for a request log or a timeline).
    #[inline]
    pub(super) fn keeps_details(&self) -> bool {
        self.request_sink.is_some() || self.timeline.is_some()
    }

    /// The die's array phase starts now.
    #[inline(always)]
    pub(super) fn timeline_array_start(&mut self, die: usize) {
        if let Some(t) = self.timeline.as_mut() {
            t.array_from[die] = self.now;
        }
    }

    /// The die's array phase ends now: complete (`cut` false) or cut by a suspension.
    #[inline(always)]
    pub(super) fn timeline_array_end(&mut self, die: usize, cut: bool) {
        if self.timeline.is_some() {
            self.write_array_phase(die, cut);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_array_phase(&mut self, die: usize, cut: bool) {
        // Suspensions so far number the parts of the suspended operation (a cut is counted
        // after its part is written); reads served meanwhile are whole operations.
        let leader = self.dies[die].op;
        let n = self.pe[die]
            .as_ref()
            .filter(|p| p.op == leader)
            .map_or(0, |p| p.suspensions);
        let part = (n > 0 || cut).then_some((n, !cut));
        let t = self.timeline.as_ref().expect("checked");
        let (start_ns, end_ns) = (t.array_from[die].ns(), self.now.ns());
        let mut id = leader;
        while id != NONE {
            let op = &self.ops[id as usize];
            let e = self.flash_event(op, die, start_ns, end_ns, part);
            self.timeline.as_mut().expect("checked").sink.flash(&e);
            id = op.next;
        }
    }

    fn flash_event(
        &self,
        op: &Op,
        die: usize,
        start_ns: u64,
        end_ns: u64,
        part: Option<(u32, bool)>,
    ) -> FlashOp {
        let placed = op.ppn != NONE;
        let ppn = Ppn(op.ppn);
        let req = (op.cause == Cause::User && op.req != NONE)
            .then(|| self.details.get(op.req as usize).map(|d| d.id))
            .flatten();
        FlashOp {
            kind: kind_name(op.kind),
            cause: op.cause.name(),
            die: die as u32,
            plane: op.plane,
            block: if placed {
                Some(self.geo.block_in_plane(self.geo.block_of(ppn)))
            } else {
                // A GC erase names its victim through its job.
                (op.kind == OpKind::Erase && op.job != NONE).then(|| {
                    self.geo
                        .block_in_plane(BlockId(self.gc_jobs[op.job as usize].block))
                })
            },
            page: (placed && op.kind != OpKind::Erase).then(|| self.geo.page_in_block(ppn)),
            req,
            start_ns,
            end_ns,
            part,
        }
    }

    /// A bus transfer of the gang `leader` leads starts now and takes `duration` ns.
    #[inline(always)]
    pub(super) fn timeline_transfer(&mut self, die: usize, leader: u32, duration: u64) {
        if self.timeline.is_some() {
            self.write_transfer(die, leader, duration);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_transfer(&mut self, die: usize, leader: u32, duration: u64) {
        let t = self.timeline.as_mut().expect("checked");
        let op = &self.ops[leader as usize];
        t.sink.bus(&Transfer {
            die: die as u32,
            plane: op.plane,
            inward: op.kind != OpKind::Read,
            cause: op.cause.name(),
            start_ns: self.now.ns(),
            end_ns: self.now.ns() + duration,
        });
    }

    /// A completed request's record, for the timeline.
    #[cold]
    pub(super) fn timeline_request(&mut self, record: &crate::metrics::RequestRecord) {
        if let Some(t) = self.timeline.as_mut() {
            t.sink.request(record);
        }
    }

    /// GC job `job` (a copy of its state) ends now with the erase of its victim.
    #[inline(always)]
    pub(super) fn timeline_gc_done(&mut self, job: &super::GcJob) {
        if self.timeline.is_some() {
            self.write_gc_job(job);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_gc_job(&mut self, job: &super::GcJob) {
        let die = self.geo.die_of_plane(crate::flash::PlaneId(job.plane)).0;
        let span = Span {
            kind: if job.refresh {
                SpanKind::Refresh
            } else {
                SpanKind::GcJob
            },
            die,
            plane: job.plane,
            block: Some(self.geo.block_in_plane(BlockId(job.block))),
            start_ns: job.started.ns(),
            end_ns: self.now.ns(),
        };
        let t = self.timeline.as_mut().expect("checked");
        t.sink.span(&span);
        self.write_free(job.plane);
    }

    /// The plane's free blocks (as they are now), when a GC job starts or ends.
    #[inline(always)]
    pub(super) fn timeline_free(&mut self, plane: u32) {
        if self.timeline.is_some() {
            self.write_free(plane);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_free(&mut self, plane: u32) {
        let c = Counter::Free {
            die: self.geo.die_of_plane(crate::flash::PlaneId(plane)).0,
            plane,
            at_ns: self.now.ns(),
            blocks: self.ftl.planes[plane as usize].free_blocks(),
        };
        self.timeline.as_mut().expect("checked").sink.counter(&c);
    }

    /// The die's queues changed (an operation queued or started).
    #[inline(always)]
    pub(super) fn timeline_queue(&mut self, die: usize) {
        if self.timeline.is_some() {
            self.write_queue(die);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_queue(&mut self, die: usize) {
        let q = &self.dies[die].queues;
        let c = Counter::Queue {
            die: die as u32,
            at_ns: self.now.ns(),
            reads: q.reads.len() as u32,
            writes: q.writes.len() as u32,
            internal: q.internal.len() as u32,
        };
        self.timeline.as_mut().expect("checked").sink.counter(&c);
    }

    /// The die's program or erase is suspended now (`true`) or resumes now (`false`).
    #[inline(always)]
    pub(super) fn timeline_suspension(&mut self, die: usize, begins: bool) {
        if self.timeline.is_some() {
            self.write_suspension(die, begins);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_suspension(&mut self, die: usize, begins: bool) {
        let op = self.pe[die].as_ref().map_or(self.dies[die].op, |p| p.op);
        let plane = self.ops[op as usize].plane;
        let now = self.now;
        let t = self.timeline.as_mut().expect("checked");
        if begins {
            t.suspended_at[die] = now;
            return;
        }
        t.sink.span(&Span {
            kind: SpanKind::Suspended,
            die: die as u32,
            plane,
            block: None,
            start_ns: t.suspended_at[die].ns(),
            end_ns: now.ns(),
        });
    }
}
