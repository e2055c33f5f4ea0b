//! Events left out while nothing can observe them, with results identical to scheduling them.
//!
//! A flash operation moves through two timed phases, each ending in an event: a program's bus
//! transfer (`BusDone`) then its array phase (`ArrayDone`); a read's sensing (`ArrayDone`) then
//! its transfer (`BusDone`). When the second phase would start the moment the first ends, its
//! end is known when the first starts, and the first phase's event can be left out:
//! - a **program** on an idle channel schedules its completion when its transfer starts and
//!   leaves out the transfer's `BusDone`;
//! - a **read** whose channel will be free when its page is sensed schedules its transfer's
//!   `BusDone` when sensing starts and leaves out the `ArrayDone`.
//!
//! Identity rests on the queue's tie order: events at the same time run in the order they were
//! scheduled. The left-out event reserves its sequence number when it would have been scheduled,
//! and the early event is queued under that number, which orders it exactly as the real one
//! (scheduled while the left-out event ran) against every event scheduled before or after the
//! left-out event's place in the order (its *slot*). Three things would see the difference,
//! and any one brings the left-out event back into the queue under its reserved number and
//! drops the early one (its die's generation moves on), so the run goes on exactly as without
//! elision:
//! - another die asking for the channel before the slot (a program's bus is still busy; a
//!   read's may be taken first);
//! - an event scheduled for the early event's time before the slot (it must run first, as it
//!   would have been scheduled first), including a left-out event and an early event whose
//!   slot comes first;
//! - a second operation left out on the same channel (one at a time per channel).
//!
//! Suspension, cache reads and the resume overlap act between the phases, so with any of them
//! on nothing is left out. After the slot the channel's state (free after a program's transfer,
//! carrying a read's page) is set lazily, when the channel is next asked for.
//! `RunOptions::full_events` schedules every event (same results; for cross-checking).

use super::{Event, Simulation};
use crate::sched::DieState;
use crate::time::SimTime;

/// An operation whose first phase's event is left out.
#[derive(Debug, Clone, Copy)]
enum Left {
    /// A program whose transfer's `BusDone` at `end` is left out.
    Program { die: u32, end: SimTime, seq: u64 },
    /// A read whose `ArrayDone` at `sensed` is left out; its transfer then takes `bus_ns`.
    Read {
        die: u32,
        sensed: SimTime,
        seq: u64,
        bus_ns: u64,
    },
}

impl Left {
    /// The left-out event's place in the order.
    fn slot(&self) -> (SimTime, u64) {
        match *self {
            Left::Program { end, seq, .. } => (end, seq),
            Left::Read { sensed, seq, .. } => (sensed, seq),
        }
    }
}

/// Buckets of [`Elision::early`], a counting filter of early events' times.
const BUCKETS: usize = 64;

/// The filter bucket of time `t` (a multiplicative hash: event times share low bits).
fn bucket(t: u64) -> usize {
    (t.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// Per channel, the operation whose first event is left out, if any.
#[derive(Debug)]
pub(super) struct Elision {
    on: bool,
    left: Vec<Option<Left>>,
    /// Per channel, the time of the early event (`u64::MAX`: none).
    early_at: Vec<u64>,
    /// Early events per bucket of their times: a scheduled event whose bucket is empty
    /// shares its time with none, so most need no scan of `early_at`.
    early: [u32; BUCKETS],
    /// Per channel, when its last transfer (with a `BusDone` event) ends.
    free_at: Vec<SimTime>,
}

impl Elision {
    /// `on`: whether events may be left out at all (not with `RunOptions::full_events`, nor
    /// with suspension or cache reads, which act between an operation's phases).
    pub(super) fn new(channels: u32, on: bool) -> Self {
        let n = channels as usize;
        Elision {
            on,
            left: vec![None; n],
            early_at: vec![u64::MAX; n],
            early: [0; BUCKETS],
            free_at: vec![SimTime::ZERO; n],
        }
    }

    fn put(&mut self, ch: usize, left: Left, early: SimTime) {
        self.left[ch] = Some(left);
        self.early_at[ch] = early.ns();
        self.early[bucket(early.ns())] += 1;
    }

    fn take(&mut self, ch: usize) -> Option<Left> {
        let left = self.left[ch].take();
        if left.is_some() {
            self.early[bucket(self.early_at[ch])] -= 1;
            self.early_at[ch] = u64::MAX;
        }
        left
    }

    /// A transfer with a `BusDone` event holds channel `ch` until `end`.
    pub(super) fn busy_until(&mut self, ch: usize, end: SimTime) {
        self.free_at[ch] = end;
    }
}

impl Simulation<'_> {
    /// Settles every operation left out whose early event is at `at` and for which `yields`
    /// holds (most times have none: the filter answers without a scan).
    fn settle_early_at(&mut self, at: SimTime, yields: impl Fn(&Left) -> bool) {
        if self.elision.early[bucket(at.ns())] == 0 {
            return;
        }
        for ch in 0..self.elision.early_at.len() {
            if self.elision.early_at[ch] == at.ns()
                && self.elision.left[ch].is_some_and(|l| yields(&l))
            {
                self.settle(ch);
            }
        }
    }

    /// Leaves out the first event of the operation `die` runs on channel `ch`: `early`, at
    /// `early_at`, takes the left-out event's number; `left` records the rest. Another early
    /// event at `early_at` comes before this one (its number is reserved now, later than theirs)
    /// exactly when its slot does; one whose slot is later must give way, and so must one at
    /// the left-out event's own time (it is scheduled all the same, as far as early events
    /// are concerned).
    fn leave_out(
        &mut self,
        die: usize,
        ch: usize,
        early_at: SimTime,
        early: fn(u32, u32) -> Event,
        left: impl FnOnce(u64) -> Left,
    ) {
        let seq = self.events.reserve();
        let left = left(seq);
        let slot = left.slot().0;
        self.settle_early_at(early_at, |l| l.slot().0 > slot);
        self.check_elided(slot);
        let d = &mut self.dies[die];
        d.state = DieState::Array;
        self.events
            .push_reserved(early_at, seq, early(die as u32, d.generation));
        self.elision.put(ch, left, early_at);
    }

    /// The program `die` starts moving its pages over idle channel `ch` now, for `duration`
    /// ns: if it can, schedules its completion and leaves out its `BusDone`. Returns whether
    /// it did.
    pub(super) fn elide_program_transfer(&mut self, die: usize, ch: usize, duration: u64) -> bool {
        if !self.elision.on || !self.channels[ch].waiters.is_empty() {
            return false;
        }
        let end = self.now + duration;
        let leader = self.dies[die].op;
        let done = end + self.timing.command_ns + self.program_ns(leader);
        let early = |die, generation| Event::ElidedDone { die, generation };
        let d = die as u32;
        self.leave_out(die, ch, done, early, |seq| Left::Program {
            die: d,
            end,
            seq,
        });
        true
    }

    /// The read `die` runs starts sensing now for `sense_ns`: if its channel will be free
    /// when the page is sensed, schedules the end of its transfer and leaves out its
    /// `ArrayDone`. Returns whether it did.
    pub(super) fn elide_read_sense(&mut self, die: usize, sense_ns: u64) -> bool {
        if !self.elision.on {
            return false;
        }
        let leader = self.dies[die].op;
        if !self.ops[leader as usize].transfer {
            return false;
        }
        let ch = self.channel_of(die);
        let sensed = self.now + sense_ns;
        if self.elision.left[ch].is_some_and(|l| self.passed(&l)) {
            self.settle(ch);
        }
        let c = &self.channels[ch];
        if self.elision.left[ch].is_some()
            || !c.waiters.is_empty()
            || (c.current.is_some() && self.elision.free_at[ch] > sensed)
        {
            return false;
        }
        let bus_ns = self.transfer_ns(leader);
        let early = |die, generation| Event::ElidedBus { die, generation };
        let d = die as u32;
        let left = |seq| Left::Read {
            die: d,
            sensed,
            seq,
            bus_ns,
        };
        self.leave_out(die, ch, sensed + bus_ns, early, left);
        true
    }

    /// Something is about to use channel `ch`: an operation left out on it gets the state it
    /// has by now (see the module's note).
    pub(super) fn settle_channel(&mut self, ch: usize) {
        if self.elision.left[ch].is_some() {
            self.settle(ch);
        }
    }

    /// Whether the event being handled comes after `left`'s left-out one. At the slot itself
    /// runs only the early event (the slot's number is its own), which comes after it.
    fn passed(&self, left: &Left) -> bool {
        (self.now, self.cur_seq) >= left.slot()
    }

    fn settle(&mut self, ch: usize) {
        let Some(left) = self.elision.take(ch) else {
            return;
        };
        if self.passed(&left) {
            return self.enter_second_phase(ch, left);
        }
        match left {
            Left::Program { die, end, seq } => {
                let d = &mut self.dies[die as usize];
                d.generation += 1;
                d.state = DieState::Transfer;
                // The transfer holds the channel until its `BusDone` again: a read sensed
                // before then must not be left out on it.
                self.elision.busy_until(ch, end);
                self.events
                    .push_reserved(end, seq, Event::BusDone { ch: ch as u32 });
            }
            Left::Read {
                die, sensed, seq, ..
            } => {
                let d = &mut self.dies[die as usize];
                d.generation += 1;
                let ev = Event::ArrayDone {
                    die,
                    generation: d.generation,
                };
                self.events.push_reserved(sensed, seq, ev);
            }
        }
    }

    /// The channel state once the left-out event would have run: free after a program's
    /// transfer, carrying a read's page.
    fn enter_second_phase(&mut self, ch: usize, left: Left) {
        match left {
            Left::Program { .. } => self.channels[ch].current = None,
            Left::Read { die, bus_ns, .. } => {
                let c = &mut self.channels[ch];
                c.current = Some((crate::flash::DieId(die), false));
                c.busy_ns += bus_ns;
                let (sensed, _) = left.slot();
                self.elision.busy_until(ch, sensed + bus_ns);
                self.dies[die as usize].state = DieState::Transfer;
            }
        }
    }

    /// The transfer of a read whose `ArrayDone` was left out has ended.
    pub(super) fn on_elided_bus(&mut self, die: u32) -> Result<(), super::SimError> {
        let ch = self.channel_of(die as usize);
        if let Some(left @ Left::Read { die: d, .. }) = self.elision.left[ch] {
            if d == die {
                self.elision.take(ch);
                self.enter_second_phase(ch, left);
            }
        }
        self.on_bus_done(ch as u32)
    }

    /// An event is about to be scheduled at `at`: an early event at the same time whose slot
    /// is still ahead must give way to its left-out event (see the module's note).
    #[inline]
    pub(super) fn check_elided(&mut self, at: SimTime) {
        self.settle_early_at(at, |_| true);
    }
}
