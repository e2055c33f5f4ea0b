//! `[ftl]`: over-provisioning, GC (victim choice, execution mode, jobs per plane), allocation
//! and striping, reads of data in flight, addresses beyond the drive.

use super::*;

/// GC victim selection policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcVictim {
    /// Fewest valid pages.
    Greedy,
    /// Maximise age × (1 − u) / 2u (Kawaguchi et al. 1995).
    CostBenefit,
    /// Uniformly random among full blocks (seeded).
    Random,
    /// Randomized greedy (d-choices, Van Houdt SIGMETRICS 2013; MQSim's `RGA`): the block with
    /// the fewest valid pages among d blocks of the plane drawn uniformly without replacement
    /// (seeded), d = ⌊log2 blocks per plane⌋ as MQSim sets `rga_set_size`; no victim when none
    /// drawn is a full block with an invalid page (MQSim then skips the collection too).
    Rga,
}

impl GcVictim {
    /// The `d` of the d-choices rule whose mean-field steady state stands for this policy on a
    /// plane of `blocks_per_plane` blocks (`ftl::steady`): random selection is `d = 1`, greedy
    /// `d = 30` (MQSim's preconditioning, after Van Houdt 2013), randomized greedy its own `d`
    /// ([`GcVictim::rga_d`]); cost-benefit has no such model.
    pub fn mean_field_d(self, blocks_per_plane: u32) -> Option<i32> {
        match self {
            GcVictim::Greedy => Some(30),
            GcVictim::Random => Some(1),
            GcVictim::Rga => Some(Self::rga_d(blocks_per_plane) as i32),
            GcVictim::CostBenefit => None,
        }
    }

    /// Blocks randomized greedy draws on a plane of `blocks_per_plane` blocks: ⌊log2⌋ of it, at
    /// least 1 (MQSim's `GC_and_WL_Unit_Page_Level` constructor: `rga_set_size`).
    pub fn rga_d(blocks_per_plane: u32) -> u32 {
        blocks_per_plane.max(2).ilog2()
    }
}

/// Where writes of a logical page go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// Plane fixed by the logical page number, striped in `stripe_order`.
    Static,
    /// Least-busy die first, then the plane with most free blocks.
    Dynamic,
}

/// One dimension of the striping order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StripeDim {
    /// Channel index.
    Channel,
    /// Chip index within a channel.
    Chip,
    /// Die index within a chip.
    Die,
    /// Plane index within a die.
    Plane,
}

/// What to do with trace addresses beyond the logical capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutOfRange {
    /// Take the logical page number modulo the capacity.
    Wrap,
    /// Stop the run with an error naming the request.
    Error,
}

/// FTL settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Fraction of physical pages hidden from the host.
    pub over_provisioning: f64,
    /// GC runs on a plane when its free blocks fall to this fraction of its blocks (at least 2 blocks).
    pub gc_threshold: f64,
    /// Victim selection policy.
    pub gc_victim: GcVictim,
    /// Write allocation policy.
    pub allocation: Allocation,
    /// Order in which consecutive logical pages stripe over the dimensions (first varies fastest).
    pub stripe_order: [StripeDim; 4],
    /// Handling of addresses beyond the logical capacity.
    pub out_of_range: OutOfRange,
    /// Where a read of data still being programmed is served. Left out of the serialized
    /// config at `controller`.
    #[serde(default, skip_serializing_if = "ReadInflight::is_controller")]
    pub read_inflight: ReadInflight,
    /// How GC work shares its die with host work. Left out of the serialized config at
    /// `background`.
    #[serde(default, skip_serializing_if = "GcMode::is_background")]
    pub gc_mode: GcMode,
    /// Pages at the end of every block the FTL writes a summary of the block into, once its
    /// data pages are written (DiskSim's SSD model: 1); never valid data. Left out of the
    /// serialized config at 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub summary_pages: u32,
    /// The plane a host write takes within the die static striping gives it. Left out of the
    /// serialized config at `static`.
    #[serde(default, skip_serializing_if = "PlaneChoice::is_static")]
    pub plane_choice: PlaneChoice,
    /// GC jobs a plane may run at once (each its own victim; MQSim allows several). Left out
    /// of the serialized config at 1.
    #[serde(default = "one_job", skip_serializing_if = "is_one_job")]
    pub gc_jobs_per_plane: u32,
    /// Where GC relocations are written: blocks of their own, or the host's open block of the
    /// plane. Left out of the serialized config at `separate`.
    #[serde(default, skip_serializing_if = "GcBlocks::is_separate")]
    pub gc_blocks: GcBlocks,
    /// When a plane at its threshold starts a further GC job while one runs. Left out of the
    /// serialized config at `any-write`.
    #[serde(default, skip_serializing_if = "GcStart::is_any_write")]
    pub gc_start: GcStart,
    /// Entries of a cached mapping table (DFTL, MQSim's CMT): the mapping lives in translation
    /// pages in flash and this many entries in DRAM; 0 (the default): the whole mapping in
    /// DRAM. Left out of the serialized config at 0.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub mapping_cache_entries: u64,
    /// The same cache sized in bytes (MQSim's `CMT_Capacity`), divided by MQSim's cached-entry
    /// size; set this or `mapping_cache_entries`. Left out of the serialized config at 0.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub mapping_cache_bytes: u64,
    /// Static wear levelling: when a plane's most and least erased blocks differ by this many
    /// erases, its least erased block is collected so its cold data moves (MQSim's
    /// `Static_Wearleveling_Threshold`); 0 (the default): off. Left out of the serialized config
    /// at 0.
    #[serde(default, skip_serializing_if = "super::is_zero_u32")]
    pub static_wl_threshold: u32,
    /// Whether a dirty translation page's write-back is programmed (a real controller) or, as
    /// in MQSim, read to merge and then never programmed. Left out of the serialized config at
    /// `programmed`.
    #[serde(default, skip_serializing_if = "MappingWriteback::is_programmed")]
    pub mapping_writeback: MappingWriteback,
    /// Whether I/O flows share each plane's open blocks or each flow writes (and GC relocates)
    /// into blocks of its own, as MQSim's per-stream write frontiers do. Left out of the
    /// serialized config at `shared`.
    #[serde(default, skip_serializing_if = "FlowBlocks::is_shared")]
    pub flow_blocks: FlowBlocks,
}

/// Where I/O flows' pages are written (`ftl.flow_blocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowBlocks {
    /// Every flow's pages go into the same open blocks of a plane (a drive that does not
    /// tell its tenants apart).
    #[default]
    Shared,
    /// Each flow has host and GC write streams of its own on every plane, so no block holds
    /// two flows' pages (MQSim's `Data_wf[stream_id]` and `GC_wf[stream_id]`; NVMe streams).
    Own,
}

impl FlowBlocks {
    fn is_shared(&self) -> bool {
        *self == FlowBlocks::Shared
    }
}

/// What becomes of a dirty translation page's write-back (`ftl.mapping_writeback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingWriteback {
    /// A read of the page (merging the entries not cached), then a program of its new version.
    #[default]
    Programmed,
    /// The read, and no program: the controller holds the page for good, so later misses on it
    /// read nothing. MQSim's behaviour: its transaction schedulers never serve the
    /// mapping-write queue (`TSU_OutOfOrder::service_write_transaction`), and a page waiting
    /// there stays in `DepartingMappingEntries`.
    Never,
}

impl MappingWriteback {
    fn is_programmed(&self) -> bool {
        *self == MappingWriteback::Programmed
    }
}

/// Where GC writes the pages it relocates (`ftl.gc_blocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcBlocks {
    /// An open block per plane for GC relocations, apart from host data (hot/cold separation;
    /// MQSim's GC writes to its own stream).
    #[default]
    Separate,
    /// Into the plane's one open block, shared with host writes (DiskSim's SSD model:
    /// `ssd_move_page` writes to the plane's active page).
    Shared,
}

impl GcBlocks {
    fn is_separate(&self) -> bool {
        *self == GcBlocks::Separate
    }
}

/// When a plane at its GC threshold starts a further GC job (`ftl.gc_start`; matters with
/// `gc_jobs_per_plane` above 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcStart {
    /// At any write or completion on the plane, up to `gc_jobs_per_plane` jobs.
    #[default]
    AnyWrite,
    /// Only when the plane has taken a block from its free pool since it last checked
    /// (MQSim: `Check_gc_required` runs when a write frontier block fills,
    /// `Flash_Block_Manager.cpp`); the first job starts whenever needed.
    NewBlock,
}

impl GcStart {
    fn is_any_write(&self) -> bool {
        *self == GcStart::AnyWrite
    }
}

/// The plane of a host write within its die (`ftl.plane_choice`, static allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaneChoice {
    /// The plane striping gives the logical page.
    #[default]
    Static,
    /// The plane of the die with the most free pages (DiskSim's SSD model), among those
    /// holding less than their share of the logical data.
    MostFree,
}

impl PlaneChoice {
    fn is_static(&self) -> bool {
        *self == PlaneChoice::Static
    }
}

/// How GC work shares its die with host work (`ftl.gc_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// GC reads, programs and erases are queued on the die as internal work and served by the
    /// die's scheduler like any other operation.
    #[default]
    Background,
    /// GC work on a die goes before host work queued there (MQSim without preemptible GC).
    Urgent,
    /// GC work queued on any die of a chip goes before the host work of every die of that
    /// chip (MQSim's transaction scheduler, which queues and prioritises per chip).
    UrgentChip,
    /// GC work yields to queued host work until a plane of the die falls to a hard floor of
    /// free blocks (MQSim's preemptible GC; the `gc-preempt` scheme, whose `hard_floor` it
    /// uses).
    Preemptive,
    /// A plane cleans only when a request waits on its die, and the clean runs as one unit:
    /// no host operation starts on the die until its erase is done (DiskSim's SSD model).
    Foreground,
}

impl GcMode {
    fn is_background(&self) -> bool {
        *self == GcMode::Background
    }
}

/// Where a read of a page whose program is still in flight is served (`ftl.read_inflight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadInflight {
    /// By the controller, which still holds the data: no flash time (most controllers).
    #[default]
    Controller,
    /// From flash once the program is done: the read waits for it, then reads the new page
    /// (DiskSim's SSD model, which keeps no data in flight).
    Flash,
}

impl ReadInflight {
    fn is_controller(&self) -> bool {
        *self == ReadInflight::Controller
    }
}
