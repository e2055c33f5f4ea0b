//! Die and channel handlers: dispatching queued operations, array phases, bus transfers and
//! completions.

use super::{Event, SimError, Simulation};
use crate::config::Allocation;
use crate::flash::{DieState, PlaneId, Ppn};
use crate::ftl::blocks::Stream;
use crate::sched::{Cause, Heads, OpClass, OpKind, QueueKind};
use crate::verify;

impl Simulation<'_> {
    /// Appends an operation to one of a die's queues.
    pub(super) fn enqueue(&mut self, die: usize, q: QueueKind, id: u32) {
        self.seq += 1;
        let entry = (self.seq, id);
        let pe = matches!(self.ops[id as usize].kind, OpKind::Program | OpKind::Erase);
        let queues = &mut self.dies[die].queues;
        if pe {
            queues.queued_program_erase += 1;
        }
        match q {
            QueueKind::Read => queues.reads.push_back(entry),
            QueueKind::Write => queues.writes.push_back(entry),
            QueueKind::Internal => queues.internal.push_back(entry),
        }
    }

    fn stream_of(cause: Cause) -> Stream {
        match cause {
            Cause::User => Stream::User,
            Cause::Gc => Stream::Gc,
        }
    }

    /// With dynamic allocation, a write whose plane has no free page is re-placed on a plane
    /// that has one (same die first, else the least-loaded die), so valid data drifting
    /// unevenly between planes cannot wedge a plane that GC can no longer clean.
    fn replace_blocked_write(&mut self, die: usize) {
        if self.cfg.ftl.allocation != Allocation::Dynamic {
            return;
        }
        let Some(&(_, id)) = self.dies[die].queues.writes.front() else {
            return;
        };
        if self
            .ftl
            .can_alloc(PlaneId(self.ops[id as usize].plane), Stream::User)
        {
            return;
        }
        let ppd = self.geo.planes_per_die;
        let usable = |p: u32| self.ftl.can_alloc(PlaneId(p), Stream::User);
        let same_die = (die as u32 * ppd..(die as u32 + 1) * ppd).find(|&p| usable(p));
        let target = same_die.or_else(|| {
            (0..self.geo.planes())
                .filter(|&p| usable(p))
                .min_by_key(|&p| (self.dies[(p / ppd) as usize].load(), p))
        });
        let Some(plane) = target else { return };
        self.ops[id as usize].plane = plane;
        let new_die = (plane / ppd) as usize;
        self.ops[id as usize].die = new_die as u32;
        if new_die != die {
            let q = &mut self.dies[die].queues;
            q.writes.pop_front();
            q.queued_program_erase -= 1;
            self.enqueue(new_die, QueueKind::Write, id);
            self.try_dispatch(new_die);
        }
    }

    /// Starts the next operation on an idle die, as the scheduling policy picks it.
    pub(super) fn try_dispatch(&mut self, die: usize) {
        while self.dies[die].state == DieState::Idle {
            self.replace_blocked_write(die);
            let q = &self.dies[die].queues;
            let write_head = q.writes.front().filter(|&&(_, id)| {
                let op = &self.ops[id as usize];
                self.ftl.can_alloc(PlaneId(op.plane), Stream::User)
            });
            let heads = Heads {
                read: q.reads.front().map(|e| e.0),
                write: write_head.map(|e| e.0),
                internal: q.internal.front().map(|e| e.0),
            };
            let Some(kind) = self.sched.pick(heads) else {
                return;
            };
            let queues = &mut self.dies[die].queues;
            let (_, id) = match kind {
                QueueKind::Read => queues.reads.pop_front(),
                QueueKind::Write => queues.writes.pop_front(),
                QueueKind::Internal => queues.internal.pop_front(),
            }
            .expect("picked queue has a head");
            if matches!(self.ops[id as usize].kind, OpKind::Program | OpKind::Erase) {
                queues.queued_program_erase -= 1;
            }
            self.start_op(die, id);
        }
    }

    fn start_op(&mut self, die: usize, id: u32) {
        let op = &self.ops[id as usize];
        let (kind, cause, plane) = (op.kind, op.cause, op.plane);
        if kind == OpKind::Read && cause == Cause::Gc && self.ftl.map.lpn(op.ppn) != op.lpn {
            // The host overwrote the page since GC queued its move: nothing to copy.
            self.free_ops.push(id);
            self.gc_move_done(plane);
            return;
        }
        if kind == OpKind::Read && cause == Cause::User {
            let occ = self.dies[die].occupancy(self.now);
            let snap = op.snapshot;
            for c in OpClass::ALL {
                self.metrics.read_wait_ns[c as usize] += occ[c as usize] - snap[c as usize];
            }
        }
        self.metrics.flash_op(cause, kind);
        let now = self.now;
        self.dies[die].occupy(id, OpClass::of(kind, cause), now);
        self.ops[id as usize].started = now;
        let t = self.timing;
        match kind {
            OpKind::Read => self.start_array(die, t.command_ns + t.read_ns),
            OpKind::Program => {
                let ppn = self
                    .ftl
                    .alloc(PlaneId(plane), Self::stream_of(cause), now)
                    .expect("dispatch checked that the stream can allocate");
                self.ops[id as usize].ppn = ppn.0;
                if self.ops[id as usize].transfer {
                    self.request_bus(die);
                } else {
                    self.start_array(die, t.command_ns + t.program_ns);
                }
                self.start_gc(plane);
            }
            OpKind::Erase => self.start_array(die, t.command_ns + t.erase_ns),
        }
    }

    fn start_array(&mut self, die: usize, duration_ns: u64) {
        let d = &mut self.dies[die];
        d.state = DieState::Array;
        let ev = Event::ArrayDone {
            die: die as u32,
            generation: d.generation,
        };
        self.schedule(self.now + duration_ns, ev);
    }

    fn request_bus(&mut self, die: usize) {
        let ch = self.geo.channel_of(crate::flash::DieId(die as u32)).0 as usize;
        if self.channels[ch].current.is_none() {
            self.start_transfer(die, ch);
        } else {
            self.dies[die].state = DieState::WaitBus;
            let op = self.dies[die].op as usize;
            self.ops[op].bus_wait_from = self.now;
            self.channels[ch]
                .waiters
                .push_back(crate::flash::DieId(die as u32));
        }
    }

    fn start_transfer(&mut self, die: usize, ch: usize) {
        let d = &mut self.dies[die];
        if d.state == DieState::WaitBus {
            let op = &mut self.ops[d.op as usize];
            op.bus_wait_ns += self.now.since(op.bus_wait_from);
        }
        d.state = DieState::Transfer;
        let c = &mut self.channels[ch];
        c.current = Some(crate::flash::DieId(die as u32));
        c.busy_ns += self.timing.transfer_ns;
        self.schedule(
            self.now + self.timing.transfer_ns,
            Event::BusDone { ch: ch as u32 },
        );
    }

    pub(super) fn on_array_done(&mut self, die: u32) -> Result<(), SimError> {
        let die = die as usize;
        let op = &self.ops[self.dies[die].op as usize];
        if op.kind == OpKind::Read && op.transfer {
            self.request_bus(die);
            Ok(())
        } else {
            self.complete(die)
        }
    }

    pub(super) fn on_bus_done(&mut self, ch: u32) -> Result<(), SimError> {
        let ch = ch as usize;
        let die = self.channels[ch]
            .current
            .take()
            .expect("a transfer was running")
            .0 as usize;
        // Hand the bus to the next waiting die before this one can queue new transfers.
        if let Some(next) = self.channels[ch].waiters.pop_front() {
            self.start_transfer(next.0 as usize, ch);
        }
        if self.ops[self.dies[die].op as usize].kind == OpKind::Program {
            let t = self.timing;
            self.start_array(die, t.command_ns + t.program_ns);
            Ok(())
        } else {
            self.complete(die)
        }
    }

    /// The die's current operation is finished: apply its effects and start the next one.
    fn complete(&mut self, die: usize) -> Result<(), SimError> {
        let id = self.dies[die].op;
        self.dies[die].release(self.now);
        let op = self.ops[id as usize].clone();
        self.free_ops.push(id);
        match (op.kind, op.cause) {
            (OpKind::Read, Cause::User) => {
                if self.opts.verify {
                    verify::check_read(&self.ftl, op.lpn, op.ppn, op.version, op.erase_epoch)?;
                }
                let total = self.now.since(op.started);
                self.metrics.read_pages_flash += 1;
                self.metrics.read_bus_wait_ns += op.bus_wait_ns;
                self.metrics.read_service_ns += total - op.bus_wait_ns;
                self.page_done(op.req);
            }
            (OpKind::Program, Cause::User) => {
                self.ftl.commit_write(Ppn(op.ppn), op.lpn, op.version);
                self.write_page_done(op.lpn, op.req)?;
            }
            (OpKind::Read, Cause::Gc) => self.gc_read_done(&op),
            (OpKind::Program, Cause::Gc) => {
                self.ftl.commit_move(Ppn(op.src), Ppn(op.ppn), op.lpn);
                self.metrics.gc_pages_moved += 1;
                self.gc_move_done(op.plane);
            }
            (OpKind::Erase, _) => self.gc_erase_done(op.plane)?,
        }
        self.try_dispatch(die);
        Ok(())
    }
}
