//! Array phases, bus transfers (with optional cache read) and completions.

use super::{Event, Op, SimError, Simulation};
use crate::flash::{ChannelId, DieId, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::DieState;
use crate::sched::{Cause, OpKind};
use crate::verify;

impl Simulation<'_> {
    pub(super) fn start_array(&mut self, die: usize, duration_ns: u64) {
        self.timeline_array_start(die);
        let d = &mut self.dies[die];
        d.state = DieState::Array;
        let ev = Event::ArrayDone {
            die: die as u32,
            generation: d.generation,
        };
        self.schedule(self.now + duration_ns, ev);
    }

    /// Bus time of the pages of the gang `leader` leads.
    pub(super) fn transfer_ns(&self, leader: u32) -> u64 {
        let t = &self.timing;
        if self.ops[leader as usize].kind == OpKind::Read {
            self.gang(leader)
                .map(|m| t.level_transfer_ns[self.ops[m as usize].level as usize])
                .sum()
        } else {
            u64::from(self.ops[leader as usize].pages) * t.transfer_ns
        }
    }

    pub(super) fn channel_of(&self, die: usize) -> usize {
        let ChannelId(ch) = self.geo.channel_of(DieId(die as u32));
        ch as usize
    }

    /// Asks for the die's channel to move the pages of its current operation (or, with `cache`,
    /// of the operation parked in its cache register).
    pub(super) fn request_bus(&mut self, die: usize, cache: bool) {
        let ch = self.channel_of(die);
        self.settle_channel(ch);
        if self.channels[ch].current.is_none() {
            self.start_transfer(die, ch, cache);
        } else {
            if !cache {
                self.dies[die].state = DieState::WaitBus;
            }
            self.channels[ch]
                .waiters
                .push_back((DieId(die as u32), cache));
        }
    }

    fn start_transfer(&mut self, die: usize, ch: usize, cache: bool) {
        let d = &mut self.dies[die];
        let leader = if cache { d.cache_op } else { d.op };
        if !cache {
            d.state = DieState::Transfer;
        }
        let waited = self.now.since(self.ops[leader as usize].bus_wait_from);
        let mut m = leader;
        while m != NONE {
            let op = &mut self.ops[m as usize];
            op.bus_wait_ns += waited;
            m = op.next;
        }
        let duration = self.transfer_ns(leader);
        self.timeline_transfer(die, leader, duration);
        let c = &mut self.channels[ch];
        c.current = Some((DieId(die as u32), cache));
        c.busy_ns += duration;
        let program = self.ops[leader as usize].kind == OpKind::Program;
        if !(program && self.elide_program_transfer(die, ch, duration)) {
            self.elision.busy_until(ch, self.now + duration);
            self.schedule(self.now + duration, Event::BusDone { ch: ch as u32 });
        }
    }

    pub(super) fn on_array_done(&mut self, die: u32) -> Result<(), SimError> {
        let die = die as usize;
        self.timeline_array_end(die, false);
        let leader = self.dies[die].op;
        let op = &mut self.ops[leader as usize];
        if op.kind != OpKind::Read || !op.transfer {
            return self.complete(die);
        }
        op.bus_wait_from = self.now;
        if !self.cfg.flash.cache_read && !self.overlaps_resume(die) {
            self.request_bus(die, false);
        } else if self.dies[die].cache_op == NONE {
            self.move_to_cache(die);
            self.try_dispatch(die);
        } else {
            // The cache register still holds the previous page: the die waits with this one.
            self.dies[die].state = DieState::WaitBus;
            self.dies[die].cache_waiting = true;
        }
        Ok(())
    }

    /// Cache read: the sensed page moves to the cache register and the die is free for its next
    /// array operation while the page goes out over the bus.
    fn move_to_cache(&mut self, die: usize) {
        let d = &mut self.dies[die];
        d.cache_op = d.op;
        d.release(self.now);
        self.request_bus(die, true);
    }

    pub(super) fn on_bus_done(&mut self, ch: u32) -> Result<(), SimError> {
        let ch = ch as usize;
        let (DieId(die), cache) = self.channels[ch]
            .current
            .take()
            .expect("a transfer was running");
        let die = die as usize;
        // Hand the bus to the next waiting die before this one can queue new transfers.
        if let Some((next, next_cache)) = self.channels[ch].waiters.pop_front() {
            self.start_transfer(next.0 as usize, ch, next_cache);
        }
        if cache {
            let leader = std::mem::replace(&mut self.dies[die].cache_op, NONE);
            // The die's waiting read takes the freed register before anything the finished read
            // triggers can dispatch new work on this die.
            if std::mem::take(&mut self.dies[die].cache_waiting) {
                self.move_to_cache(die);
            }
            self.finish_gang(leader)?;
            self.try_dispatch(die);
            return Ok(());
        }
        if self.ops[self.dies[die].op as usize].kind == OpKind::Program {
            self.start_pe_array(die);
            Ok(())
        } else {
            self.complete(die)
        }
    }

    /// The die's current operation is finished: apply its effects and start the next one.
    fn complete(&mut self, die: usize) -> Result<(), SimError> {
        let leader = self.dies[die].op;
        if self.ops[leader as usize].kind != OpKind::Read {
            self.pe_done(die, leader);
        }
        self.dies[die].release(self.now);
        self.finish_gang(leader)?;
        self.try_dispatch(die);
        Ok(())
    }

    fn finish_gang(&mut self, leader: u32) -> Result<(), SimError> {
        let mut id = leader;
        while id != NONE {
            let op = self.ops[id as usize].clone();
            self.free_ops.push(id);
            self.finish_one(&op)?;
            id = op.next;
        }
        Ok(())
    }

    /// A host read page is done: verify, account, feed the buffer, tell the policy that asked,
    /// complete.
    pub(super) fn finish_read(&mut self, op: &Op) -> Result<(), SimError> {
        if self.opts.verify {
            verify::check_read(&self.ftl, op.lpn, op.ppn, op.version, op.erase_epoch)?;
        }
        let total = self.now.since(op.started);
        let lv = &mut self.metrics.levels;
        lv.read_pages[op.level as usize] += 1;
        lv.read_ns[op.level as usize] += self.now.since(op.queued_at);
        self.buffer_fill(op.lpn);
        if op.owner != super::ctx::NO_OWNER {
            let r = self.with_policy::<()>(op.owner, |p, cx| {
                p.served(cx, op);
                Ok(None)
            });
            self.stash(r);
        }
        self.count_req(op.req, |m| {
            m.read_pages_flash += 1;
            m.read_bus_wait_ns += op.bus_wait_ns;
            m.read_service_ns += total - op.bus_wait_ns;
        });
        if let Some(d) = self.detail(op.req) {
            d.flash_pages += 1;
            d.bus_ns += op.bus_wait_ns;
            d.service_ns += total - op.bus_wait_ns;
        }
        self.page_done(op.req);
        Ok(())
    }

    fn finish_one(&mut self, op: &Op) -> Result<(), SimError> {
        match (op.kind, op.cause) {
            (OpKind::Read, Cause::User) => self.finish_read(op)?,
            _ if op.owner != super::ctx::NO_OWNER => self.owned_done(op)?,
            (OpKind::Program, _) if op.summary => {
                self.metrics.levels.programs[op.level as usize] += 1;
                self.metrics.summary_programs += 1;
                self.ftl.commit_unmapped(Ppn(op.ppn));
                // The block may now be full and a victim for a plane waiting for GC.
                self.start_gc(op.plane);
            }
            (OpKind::Program, Cause::Migration) => {
                self.metrics.levels.programs[op.level as usize] += 1;
                if op.src == NONE {
                    self.ftl.commit_materialize(Ppn(op.ppn), op.lpn);
                } else {
                    self.ftl.commit_move(Ppn(op.src), Ppn(op.ppn), op.lpn);
                    self.start_gc(self.geo.plane_of(Ppn(op.src)).0);
                }
            }
            (OpKind::Read, Cause::Migration) => {
                unreachable!("migrations program data already in DRAM")
            }
            (OpKind::Program, Cause::User) => {
                self.metrics.levels.programs[op.level as usize] += 1;
                let old = self.ftl.commit_write(Ppn(op.ppn), op.lpn, op.version);
                // The block just settled and the overwritten page's block may now be victims
                // for a plane that is waiting for GC.
                self.start_gc(op.plane);
                if let Some(old) = old {
                    self.start_gc(self.geo.plane_of(old).0);
                }
                self.write_page_done(op.lpn, op.req)?;
                if op.background > 0 {
                    self.background_flush_done(op.background);
                }
            }
            (OpKind::Read, Cause::Gc) => self.gc_read_done(op),
            (OpKind::Program, Cause::Gc) => {
                self.metrics.levels.programs[op.level as usize] += 1;
                self.gc_program_done(op);
            }
            (OpKind::Erase, Cause::Gc) => self.gc_erase_done(op.job)?,
            (OpKind::Read, Cause::Mapping) => self.translation_read_done(op)?,
            (OpKind::Program, Cause::Mapping) => {
                self.metrics.levels.programs[op.level as usize] += 1;
                self.translation_program_done(op);
            }
            (_, Cause::Redundancy) | (OpKind::Erase, _) => {
                unreachable!("only policies queue redundancy work and non-GC erases")
            }
        }
        Ok(())
    }
}
