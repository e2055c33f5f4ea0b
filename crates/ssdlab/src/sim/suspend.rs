//! Program/erase suspension in the die model: phased P/E operations, suspension points,
//! serving reads while suspended, resuming (with page-buffer reload), and its metrics.

use super::{Event, Simulation};
use crate::config::{IpcRedo, SuspendPolicy};
use crate::ftl::mapping::NONE;
use crate::sched::suspend::{self, Phase, PhaseKind};
use crate::sched::DieState;
use crate::sched::{OpClass, OpKind};
use crate::time::SimTime;
use rand::Rng;
use std::collections::VecDeque;

/// A phased program or erase on a die (only with suspension on).
#[derive(Debug)]
pub(super) struct PeState {
    /// The operation (gang leader).
    pub(super) op: u32,
    /// Phases left; the first began at `seg_start` (unless suspended).
    phases: VecDeque<Phase>,
    seg_start: SimTime,
    /// A suspension point is scheduled.
    suspending: bool,
    /// Stopped; the die serves reads.
    suspended: bool,
    /// The die is re-sending the page over the bus before resuming.
    reloading: bool,
    pub(super) suspensions: u32,
    reads_served: u32,
}

impl Simulation<'_> {
    /// Array time of a program gang: fast mode only if every page goes to a fast block.
    pub(super) fn program_ns(&self, leader: u32) -> u64 {
        let fast = self.gang(leader).all(|m| {
            let ppn = self.ops[m as usize].ppn;
            ppn != NONE
                && self.ftl.blocks[self.geo.block_of(crate::flash::Ppn(ppn)).0 as usize].fast
        });
        if fast {
            self.timing.fast_program_ns
        } else {
            self.timing.program_ns
        }
    }

    pub(super) fn suspension_on(&self) -> bool {
        self.cfg.suspend.policy != SuspendPolicy::Off
    }

    /// Starts the array part of the die's program or erase: one phase when suspension is off,
    /// otherwise its ISPP / erase phases (or the rest of them after a bus reload).
    pub(super) fn start_pe_array(&mut self, die: usize) {
        let t = &self.timing;
        let leader = self.dies[die].op;
        let kind = self.ops[leader as usize].kind;
        if !self.suspension_on() {
            let array = if kind == OpKind::Program {
                self.program_ns(leader)
            } else {
                t.erase_ns
            };
            self.start_array(die, t.command_ns + array);
            return;
        }
        let pe = self.pe[die].get_or_insert_with(|| PeState {
            op: leader,
            phases: if kind == OpKind::Program {
                suspend::program_phases(t)
            } else {
                suspend::erase_phases(t)
            },
            seg_start: SimTime::ZERO,
            suspending: false,
            suspended: false,
            reloading: false,
            suspensions: 0,
            reads_served: 0,
        });
        pe.reloading = false;
        pe.seg_start = self.now;
        let total: u64 = pe.phases.iter().map(|p| p.ns).sum();
        self.start_array(die, total);
        self.consider_suspension(die);
    }

    /// A read is queued on a die running a phased program or erase: plan a suspension if the
    /// policy allows one now.
    pub(super) fn consider_suspension(&mut self, die: usize) {
        let Some(pe) = self.pe[die].as_ref() else {
            return;
        };
        let s = &self.cfg.suspend;
        let kind = self.ops[pe.op as usize].kind;
        if pe.suspending
            || pe.suspended
            || pe.reloading
            || self.dies[die].state != DieState::Array
            || self.dies[die].queues.reads.is_empty()
            || pe.suspensions >= s.max_suspensions_per_op
            || !suspend::allows(s.policy, kind)
        {
            return;
        }
        let elapsed = self.now.since(pe.seg_start);
        let (policy, redo_mode, vr) = (s.policy, s.ipc_redo, self.timing.voltage_reset_ns);
        let rng = &mut self.ipc_rng;
        let mut redo = |done: f64| redo_mode == IpcRedo::Always || rng.random::<f64>() >= done;
        let Some(plan) = suspend::plan(policy, &pe.phases, elapsed, vr, &mut redo) else {
            return;
        };
        let pe = self.pe[die].as_mut().expect("checked above");
        pe.phases = plan.remaining;
        pe.suspending = true;
        if plan.cancelled {
            self.metrics.pe.phases_cancelled += 1;
        }
        let d = &mut self.dies[die];
        d.generation += 1;
        let ev = Event::SuspendPoint {
            die: die as u32,
            generation: d.generation,
        };
        self.schedule(self.now + plan.delay_ns, ev);
    }

    /// The program or erase stops; the die turns to the queued reads.
    pub(super) fn on_suspend_point(&mut self, die: usize) {
        self.timeline_array_end(die, true);
        self.timeline_suspension(die, true);
        let pe = self.pe[die].as_mut().expect("a suspension was planned");
        pe.suspending = false;
        pe.suspended = true;
        pe.suspensions += 1;
        let first = pe.suspensions == 1;
        let kind = self.ops[pe.op as usize].kind;
        let m = &mut self.metrics.pe;
        m.suspensions += 1;
        if first {
            match kind {
                OpKind::Program => m.programs_suspended += 1,
                _ => m.erases_suspended += 1,
            }
        }
        let slot = usize::from(kind != OpKind::Program);
        for &(_, id) in self.dies[die].queues.reads.iter() {
            let wait = self.now.since(self.ops[id as usize].queued_at);
            m.reads_waited[slot] += 1;
            m.wait_ns[slot] += wait;
            m.wait_max_ns = m.wait_max_ns.max(wait);
        }
        self.dies[die].release(self.now);
        self.try_dispatch(die);
    }

    /// With a suspended operation on an idle die: whether to serve one more read (true) or
    /// resume it (false). `None` when nothing is suspended.
    pub(super) fn suspended_serves_read(&mut self, die: usize) -> Option<bool> {
        let pe = self.pe[die].as_mut().filter(|p| p.suspended)?;
        let max = self.cfg.suspend.max_reads_per_suspension;
        let more = !self.dies[die].queues.reads.is_empty() && (max == 0 || pe.reads_served < max);
        if more {
            pe.reads_served += 1;
        }
        Some(more)
    }

    /// Whether a read sensed on this die leaves through the cache register so the suspended
    /// operation can resume meanwhile (`suspend.resume_overlap`).
    pub(super) fn overlaps_resume(&self, die: usize) -> bool {
        self.cfg.suspend.resume_overlap && self.pe[die].as_ref().is_some_and(|p| p.suspended)
    }

    /// Resumes the suspended operation: reload the page buffer (programs), then the rest.
    /// Without `suspend.resume_overlap` it waits until the cache register's read page has left.
    pub(super) fn resume(&mut self, die: usize) {
        if self.dies[die].cache_op != NONE && !self.cfg.suspend.resume_overlap {
            return;
        }
        self.timeline_suspension(die, false);
        let t = &self.timing;
        let ideal = self.cfg.suspend.policy == SuspendPolicy::Ideal;
        let page_kept = self.cfg.suspend.shadow_buffer;
        let pe = self.pe[die]
            .as_mut()
            .expect("resume of a suspended operation");
        pe.suspended = false;
        pe.reads_served = 0;
        let (op, kind) = (pe.op, self.ops[pe.op as usize].kind);
        self.dies[die].occupy(op, OpClass::of(kind, self.ops[op as usize].cause), self.now);
        if kind == OpKind::Program && !ideal {
            if !page_kept {
                pe.reloading = true;
                self.request_bus(die, false);
                return;
            }
            pe.phases.push_front(Phase {
                kind: PhaseKind::Overhead,
                ns: t.buffer_reload_ns,
            });
        }
        self.start_pe_array(die);
    }

    /// The die's program or erase completed: account its effective against its nominal time.
    pub(super) fn pe_done(&mut self, die: usize, leader: u32) {
        let op = &self.ops[leader as usize];
        let t = &self.timing;
        let (array, transfer) = match op.kind {
            OpKind::Program => (
                self.program_ns(leader),
                if op.transfer {
                    u64::from(op.pages) * t.transfer_ns
                } else {
                    0
                },
            ),
            _ => (t.erase_ns, 0),
        };
        let nominal = t.command_ns + array + transfer;
        let effective = self.now.since(op.started);
        let suspended = self.pe[die].take().is_some_and(|p| p.suspensions > 0);
        let m = &mut self.metrics.pe;
        let slot = usize::from(op.kind != OpKind::Program);
        m.count[slot] += 1;
        m.nominal_ns[slot] += nominal;
        m.effective_ns[slot] += effective;
        if suspended {
            m.suspended_nominal_ns[slot] += nominal;
            m.suspended_effective_ns[slot] += effective;
        }
    }
}
