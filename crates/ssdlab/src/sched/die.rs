//! Dynamic state of dies and channels.
//!
//! A die runs one operation at a time. While it does, it accumulates *occupancy* per class of
//! work (user reads, user programs, GC, erases, …); a read that waits in the die's queue takes a
//! snapshot of these counters when it is queued and another when it starts, and the difference
//! is exactly how long it waited behind each class. Interference is thus attributed at the
//! source, not estimated afterwards.

use super::{DieQueues, OpClass};
use crate::flash::DieId;
use crate::time::SimTime;
use std::collections::VecDeque;

/// What a die is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DieState {
    /// Nothing; the scheduler may start the next operation.
    Idle,
    /// An array phase (sense, program, erase) is running.
    Array,
    /// Holding a page in its register, waiting for the channel bus.
    WaitBus,
    /// Moving a page over the channel bus.
    Transfer,
}

/// One die: its current operation, its queues and its occupancy counters.
#[derive(Debug)]
pub struct Die {
    /// Current state.
    pub state: DieState,
    /// Index of the operation in progress (meaningful unless `Idle`).
    pub op: u32,
    /// Bumped whenever a scheduled array completion must be ignored (cancelled phase).
    pub generation: u32,
    /// Queued operations.
    pub queues: DieQueues,
    /// With cache read: the read whose page sits in the cache register, waiting for or on the
    /// bus (`u32::MAX` = none).
    pub cache_op: u32,
    /// With cache read: the current read has sensed its page and waits for the cache register.
    pub cache_waiting: bool,
    occupied_ns: [u64; OpClass::COUNT],
    class: OpClass,
    since: SimTime,
}

impl Default for Die {
    fn default() -> Self {
        Die {
            state: DieState::Idle,
            op: u32::MAX,
            generation: 0,
            queues: DieQueues::default(),
            cache_op: u32::MAX,
            cache_waiting: false,
            occupied_ns: [0; OpClass::COUNT],
            class: OpClass::UserRead,
            since: SimTime::ZERO,
        }
    }
}

impl Die {
    /// Marks the die occupied by an operation of `class` from `now` (state `Array` until the
    /// caller says otherwise).
    pub fn occupy(&mut self, op: u32, class: OpClass, now: SimTime) {
        debug_assert_eq!(
            self.state,
            DieState::Idle,
            "a die runs one operation at a time"
        );
        self.state = DieState::Array;
        self.op = op;
        self.class = class;
        self.since = now;
    }

    /// Ends the current occupancy at `now` and makes the die idle.
    pub fn release(&mut self, now: SimTime) {
        self.occupied_ns[self.class as usize] += now.since(self.since);
        self.state = DieState::Idle;
        self.op = u32::MAX;
    }

    /// Occupancy per class up to `now`, including the operation in progress.
    pub fn occupancy(&self, now: SimTime) -> [u64; OpClass::COUNT] {
        let mut occ = self.occupied_ns;
        if self.state != DieState::Idle {
            occ[self.class as usize] += now.since(self.since);
        }
        occ
    }

    /// Queued operations plus the one running: the load dynamic allocation balances.
    pub fn load(&self) -> u32 {
        let q = &self.queues;
        (q.reads.len() + q.writes.len() + q.internal.len()) as u32
            + u32::from(self.state != DieState::Idle)
    }

    /// Class of the operation in progress, if any.
    pub fn busy_with(&self) -> Option<OpClass> {
        (self.state != DieState::Idle).then_some(self.class)
    }
}

/// A channel bus: one transfer at a time, waiting dies served first come, first served. Each
/// entry says whether the transfer is of the die's cache register (cache read) or of its
/// current operation.
#[derive(Debug, Default)]
pub struct Channel {
    /// The die whose pages are on the bus.
    pub current: Option<(DieId, bool)>,
    /// Dies holding pages (or waiting to send them), in request order.
    pub waiters: VecDeque<(DieId, bool)>,
    /// Total time the bus carried data.
    pub busy_ns: u64,
}
