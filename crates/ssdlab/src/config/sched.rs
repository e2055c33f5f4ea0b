//! `[sched]`: the per-die scheduling policy and the controller's write-queue bound.

use super::*;

/// Per-die scheduling policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedPolicy {
    /// Oldest operation first, whatever its kind.
    Fifo,
    /// Read-priority scheduling: queued reads go before queued writes and internal work.
    Rps,
}

/// Scheduling settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedConfig {
    /// Policy choosing the next operation on an idle die.
    pub policy: SchedPolicy,
    /// Bound on outstanding page writes in the controller's write queue (device-wide); 0 = none.
    pub max_outstanding_writes: u32,
    /// Translation reads of the mapping cache go ahead of everything else queued on their
    /// die, urgent GC included (MQSim's transaction scheduler serves its mapping-read queue
    /// first). Left out of the serialized config when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mapping_reads_first: bool,
    /// Each die's user reads and user writes wait in one queue per NVMe priority class of
    /// their I/O flow, urgent first and the others by weighted round robin with
    /// `host.arbitration_weights` (MQSim's `TSU_Priority_OutOfOrder`). Left out of the
    /// serialized config when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub flow_priority: bool,
}
