//! Per-die scheduling: queues of user reads, user writes and internal work, and the policy that
//! picks what an idle die runs next.

mod classes;
mod die;
pub mod gc_exec;
pub mod suspend;

pub use classes::ClassQueue;
pub use die::{Channel, Die, DieState};

use crate::config::SchedPolicy;

/// Kinds of flash operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Page read: sense, then transfer out.
    Read,
    /// Page program: transfer in, then program.
    Program,
    /// Block erase.
    Erase,
}

/// Why an operation is done; flash counters are kept per cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Host I/O.
    User,
    /// Garbage collection.
    Gc,
    /// Moving data to where a scheme wants it (e.g. HIRE's rewrite of read-hot pages).
    Migration,
    /// Redundancy: Rails mirror programs and erases, TTFlash parity programs and rebuild reads.
    Redundancy,
    /// The mapping cache's translation-page reads and programs (`ftl.mapping_cache_*`).
    Mapping,
}

impl Cause {
    /// All causes, in report order.
    pub const ALL: [Cause; 5] = [
        Cause::User,
        Cause::Gc,
        Cause::Migration,
        Cause::Redundancy,
        Cause::Mapping,
    ];
    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Cause::User => "user",
            Cause::Gc => "gc",
            Cause::Migration => "migration",
            Cause::Redundancy => "redundancy",
            Cause::Mapping => "mapping",
        }
    }
}

/// Classes of die occupancy, the categories of read-wait attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    /// Another user read.
    UserRead = 0,
    /// A user program.
    UserProgram = 1,
    /// GC page reads and programs.
    Gc = 2,
    /// Block erases.
    Erase = 3,
    /// Migration reads and programs.
    Migration = 4,
    /// Redundancy reads and programs (mirror, parity, rebuild).
    Redundancy = 5,
    /// Translation-page reads and programs of the mapping cache.
    Mapping = 6,
}

impl OpClass {
    /// Number of classes.
    pub const COUNT: usize = 7;
    /// All classes, in report order.
    pub const ALL: [OpClass; 7] = [
        OpClass::UserRead,
        OpClass::UserProgram,
        OpClass::Gc,
        OpClass::Erase,
        OpClass::Migration,
        OpClass::Redundancy,
        OpClass::Mapping,
    ];
    /// The class of an operation.
    pub fn of(kind: OpKind, cause: Cause) -> OpClass {
        match (kind, cause) {
            (OpKind::Erase, _) => OpClass::Erase,
            (OpKind::Read, Cause::User) => OpClass::UserRead,
            (OpKind::Program, Cause::User) => OpClass::UserProgram,
            (_, Cause::Gc) => OpClass::Gc,
            (_, Cause::Migration) => OpClass::Migration,
            (_, Cause::Redundancy) => OpClass::Redundancy,
            (_, Cause::Mapping) => OpClass::Mapping,
        }
    }
    /// Name used in `read_wait_us`.
    pub fn name(self) -> &'static str {
        match self {
            OpClass::UserRead => "read",
            OpClass::UserProgram => "user_program",
            OpClass::Gc => "gc",
            OpClass::Erase => "erase",
            OpClass::Migration => "migration",
            OpClass::Redundancy => "redundancy",
            OpClass::Mapping => "mapping",
        }
    }
    /// True for programs and erases: the work a read is "blocked" behind.
    pub fn is_program_or_erase(kind: OpKind) -> bool {
        matches!(kind, OpKind::Program | OpKind::Erase)
    }
}

/// Which of a die's queues to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// User reads.
    Read,
    /// User writes.
    Write,
    /// Internal work (GC and, later, migration, parity, refresh).
    Internal,
}

/// The three queues of a die. Each entry is `(enqueue sequence number, op index)`.
#[derive(Debug, Default)]
pub struct DieQueues {
    /// User reads.
    pub reads: ClassQueue,
    /// User writes.
    pub writes: ClassQueue,
    /// Internal work (one lane).
    pub internal: ClassQueue,
    /// Programs and erases queued (in `writes` and `internal`).
    pub queued_program_erase: u32,
}

/// The sequence numbers at the heads of the queues a die may serve now.
#[derive(Debug, Clone, Copy, Default)]
pub struct Heads {
    /// Oldest queued read.
    pub read: Option<u64>,
    /// Oldest queued write, if it can be placed now.
    pub write: Option<u64>,
    /// Oldest internal operation.
    pub internal: Option<u64>,
}

impl Heads {
    /// Whether host work (a read or a write) is waiting.
    pub fn host_waits(&self) -> bool {
        self.read.is_some() || self.write.is_some()
    }

    /// These heads with the host work hidden: the die serves internal work or nothing.
    pub fn without_host(self) -> Heads {
        Heads {
            read: None,
            write: None,
            ..self
        }
    }
}

/// A per-die scheduling policy.
pub trait Schedule: Send {
    /// The queue an idle die serves next, or `None` to stay idle. Hiding a head the pick did
    /// not choose must not change it (dispatch checks only the chosen head can start, and
    /// picks again without it if not: `sim/die.rs`).
    fn pick(&self, heads: Heads) -> Option<QueueKind>;
    /// Whether a newly queued read waits behind programs/erases already queued on its die.
    fn read_queues_behind_program_erase(&self) -> bool;
}

/// Oldest first, whatever the kind.
#[derive(Debug, Default)]
pub struct Fifo;

/// Reads before queued writes and internal work; never preempts a running operation.
#[derive(Debug, Default)]
pub struct Rps;

/// The queue whose head is oldest (sequence numbers are unique; `None` is no head). Written
/// as plain comparisons: it runs once per operation started.
fn oldest(read: Option<u64>, write: Option<u64>, internal: Option<u64>) -> Option<QueueKind> {
    let key = |s: Option<u64>| s.unwrap_or(u64::MAX);
    let (r, w, i) = (key(read), key(write), key(internal));
    let first = r.min(w).min(i);
    if first == u64::MAX {
        None
    } else if first == r {
        Some(QueueKind::Read)
    } else if first == w {
        Some(QueueKind::Write)
    } else {
        Some(QueueKind::Internal)
    }
}

impl Schedule for Fifo {
    fn pick(&self, h: Heads) -> Option<QueueKind> {
        oldest(h.read, h.write, h.internal)
    }
    fn read_queues_behind_program_erase(&self) -> bool {
        true
    }
}

impl Schedule for Rps {
    fn pick(&self, h: Heads) -> Option<QueueKind> {
        if h.read.is_some() {
            return Some(QueueKind::Read);
        }
        oldest(None, h.write, h.internal)
    }
    fn read_queues_behind_program_erase(&self) -> bool {
        false
    }
}

/// The policy object for a config value.
pub fn policy(p: SchedPolicy) -> Box<dyn Schedule> {
    match p {
        SchedPolicy::Fifo => Box::new(Fifo),
        SchedPolicy::Rps => Box::new(Rps),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_takes_oldest_rps_takes_reads() {
        let h = Heads {
            read: Some(9),
            write: Some(3),
            internal: Some(5),
        };
        assert_eq!(Fifo.pick(h), Some(QueueKind::Write));
        assert_eq!(Rps.pick(h), Some(QueueKind::Read));
        let h = Heads {
            read: None,
            write: None,
            internal: Some(5),
        };
        assert_eq!(Rps.pick(h), Some(QueueKind::Internal));
        assert_eq!(Fifo.pick(Heads::default()), None);
    }
}
