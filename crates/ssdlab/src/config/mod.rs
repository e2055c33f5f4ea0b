//! Configuration: a raw serde layer merged from preset, file and `--set` overrides, then
//! validated into a [`Config`] with every value resolved (no `Option`s).
//!
//! Every key, its unit, default and source is documented in `docs/config.md`.

mod flash;
mod params;
mod presets;
mod validate;

use flash::RawFlash;
pub use flash::{
    FlashConfig, IpcRedo, MultiPlaneRule, PeIdealization, SuspendConfig, SuspendPolicy,
};

pub use validate::gc_threshold_blocks;

pub use presets::{preset_names, Preset, PRESETS};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// A configuration problem, naming the key and the constraint it breaks.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The preset name is not one of [`preset_names`].
    #[error("unknown preset `{0}` (known: {known})", known = preset_names().join(", "))]
    UnknownPreset(String),
    /// A config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// TOML syntax error or unknown/mistyped key.
    #[error("{origin}: {message}")]
    Parse {
        /// Where the text came from (preset, file or `--set`).
        origin: String,
        /// What the parser said, naming the key.
        message: String,
    },
    /// An unknown scheme, a pair that cannot run together, a requested scheme that the
    /// resolved values turn off, or a bad scheme parameter.
    #[error("{0}")]
    Scheme(String),
    /// A `--set` argument is not `key=value`.
    #[error(
        "override `{0}` (--set, or a `set` entry): expected key=value, e.g. ftl.gc_threshold=0.1"
    )]
    BadSet(String),
    /// Values that parse but cannot work together; one line per violation.
    #[error("invalid configuration:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

/// Physical organisation of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent channels (buses).
    pub channels: u32,
    /// Chips sharing each channel's bus.
    pub chips_per_channel: u32,
    /// Dies per chip; a die runs one array operation at a time.
    pub dies_per_chip: u32,
    /// Planes per die (each with its own blocks and active blocks).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Bytes per flash page (the mapping unit).
    pub page_size_bytes: u32,
}

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
}

fn one_job() -> u32 {
    1
}

fn is_one_job(n: &u32) -> bool {
    *n == 1
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

/// How preconditioning writes the logical space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FillPattern {
    /// Logical pages 0, 1, 2, … in order.
    Sequential,
    /// A random subset, then random overwrites of it.
    Random,
    /// Logical pages in order, then the first `overwrite` × filled pages again in order: the
    /// old copies leave whole blocks invalid (SNIA PTS's sequential 2× fill at `overwrite` 1).
    SequentialRewrite,
}

/// Preconditioning before measurement (instantaneous, not timed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// Fraction of the logical space written before the trace starts.
    pub fill: f64,
    /// Order of the fill.
    pub pattern: FillPattern,
    /// For `random` and `sequential-rewrite`: extra writes as a fraction of the filled pages.
    pub overwrite: f64,
    /// How the filled state is produced.
    pub method: FillMethod,
    /// SSDSim's pre-processing: after the fill, every page the workload reads before writing
    /// it is programmed (again), untimed, at the level the level policy picks for it. Needs
    /// the workload twice (a file or a synthetic spec). Left out of the serialized config at
    /// `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pre_process: bool,
}

/// How preconditioning produces the filled state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FillMethod {
    /// Built plane by plane from block-level counts, in parallel; every page's identity is
    /// assigned at the end (same law as `simulated` for the block state, see `ftl::direct`).
    Direct,
    /// Every write and GC move applied to the mapping one page at a time.
    Simulated,
}

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
}

/// Host replay modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostMode {
    /// Requests arrive at their (scaled) trace timestamps.
    Open,
    /// Timestamps ignored; `queue_depth` requests kept outstanding.
    Closed,
}

/// Host settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Open- or closed-loop replay.
    pub mode: HostMode,
    /// Outstanding requests in closed-loop mode.
    pub queue_depth: u32,
    /// Multiplies every inter-arrival time (0.5 halves them).
    pub time_scale: f64,
    /// Host pages the controller works on at once (the page window): the pages of admitted
    /// requests not yet done. A request's pages beyond it are issued, in order, as earlier
    /// pages finish, and later requests wait behind it, so a huge request costs memory for the
    /// window, not for all its pages. A simulator resource bound, not a device property: the
    /// default (2^20 pages, 4 GiB of 4 KiB pages) never binds on the bundled traces or the
    /// committed experiments (checked by re-running them) and bounds in-flight state to about
    /// 200 MiB. Left out of the serialized config at its default.
    #[serde(default = "default_window", skip_serializing_if = "is_default_window")]
    pub max_pages_in_flight: u32,
    /// The host interface whose transfers are charged to every request (`none`: none, the
    /// default). See [`HostLink`] and `sim::link`. Left out of the serialized config when
    /// `none`.
    #[serde(default, skip_serializing_if = "HostLink::is_none")]
    pub link: HostLink,
    /// `link = "custom"`: data rate per direction, MB/s (10^6 bytes per second).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub link_mb_s: f64,
    /// `link = "custom"`: bytes of one command's submission (host to device) and of its
    /// completion (device to host).
    #[serde(default, skip_serializing_if = "is_zero_pair")]
    pub link_command_bytes: [u32; 2],
    /// `link = "custom"`: both directions at once (PCIe, SAS) or one at a time (SATA).
    #[serde(default, skip_serializing_if = "is_false")]
    pub link_full_duplex: bool,
    /// Fixed time per request at the interface (command processing, interrupt), µs, added to
    /// every link's transfers; 0 by default (no source gives one value for all controllers).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub link_command_us: f64,
}

/// Host interfaces (`host.link`). Data rates are per direction after line encoding; command
/// sizes are the protocol's command and completion frames (sources in docs/config.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostLink {
    /// No interface: a request enters the drive at its arrival and is done with its last page.
    #[default]
    None,
    /// SATA 3.x, 6 Gb/s, 8b/10b: 600 MB/s, half duplex.
    Sata3,
    /// SAS-3, 12 Gb/s, 8b/10b: 1,200 MB/s per direction, full duplex.
    Sas12,
    /// PCIe 3.0 x4 (NVMe): 8 GT/s × 4 × 128b/130b, 256-B payloads with 24 B of TLP overhead:
    /// 3,600 MB/s per direction, full duplex.
    Pcie3x4,
    /// PCIe 4.0 x4 (NVMe): twice PCIe 3.0 x4: 7,201 MB/s per direction, full duplex.
    Pcie4x4,
    /// `link_mb_s`, `link_command_bytes`, `link_full_duplex`.
    Custom,
}

impl HostLink {
    fn is_none(&self) -> bool {
        *self == HostLink::None
    }
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_zero_pair(v: &[u32; 2]) -> bool {
    *v == [0, 0]
}

pub(crate) fn is_false(v: &bool) -> bool {
    !*v
}

/// Default page window, pages.
pub const DEFAULT_PAGE_WINDOW: u32 = 1 << 20;

fn default_window() -> u32 {
    DEFAULT_PAGE_WINDOW
}

fn is_default_window(v: &u32) -> bool {
    *v == DEFAULT_PAGE_WINDOW
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    geometry: GeometryConfig,
    flash: RawFlash,
    ftl: FtlConfig,
    precondition: PreconditionConfig,
    sched: SchedConfig,
    suspend: SuspendConfig,
    buffer: BufferConfig,
    voltage: VoltageConfig,
    staging: StagingConfig,
    #[serde(default)]
    dedup: DedupConfig,
    #[serde(default)]
    shadow: ShadowConfig,
    redundancy: RedundancyConfig,
    host: HostConfig,
}

/// Redundancy schemes that trade space for read latency (hotr.txt's baselines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedundancyScheme {
    /// No redundancy.
    None,
    /// Rails: the second half of the channels mirrors the first; every program is made on both
    /// replicas and a read goes to the replica not busy with a program or erase.
    Rails,
    /// TTFlash: groups of k+1 dies form RAID-5 stripes with rotating parity; a read whose die is
    /// busy with a program or erase is rebuilt from the other k dies.
    Ttflash,
}

/// Rails / TTFlash settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedundancyConfig {
    /// Scheme.
    pub scheme: RedundancyScheme,
    /// TTFlash data dies per stripe (k of k+1).
    pub ttflash_k: u32,
    /// TTFlash: how parity follows the data.
    pub parity_update: ParityUpdate,
    /// Rails role switching: each half of the mirror takes programs and erases only in every
    /// other period of this length and serves reads in the others (0 = off: both replicas are
    /// written at once). Left out of the serialized config when 0, so existing config hashes
    /// are unchanged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rails_switch_us: u64,
}

/// How TTFlash keeps parity current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParityUpdate {
    /// Every data program reads its static stripe's parity and programs the new parity
    /// (deduphr.txt Table 3 and §5: TTFlash "incurs frequent parity updates").
    #[default]
    ReadModifyWrite,
    /// Log-structured full stripes: every k data programs of a group (host writes and GC
    /// relocations) form a stripe with one parity program; a stripe's parity is invalid once
    /// none of its data pages is current.
    Stripe,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// GC variants of shadowgc.txt: how victims are chosen and how valid pages with dirty copies
/// in the write buffers ("shadows"; host-side ones are "zombies") are relocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShadowGc {
    /// GGC: greedy, shadows treated as any valid page (the baseline).
    #[default]
    Ggc,
    /// Greedy with delay: a block's zombie pages count against it as victim.
    GreedyDelay,
    /// Greedy victims; zombie pages relocated into dedicated blocks.
    GreedySeparation,
    /// ZGC (zombie-aware GC): separation and delay.
    Zgc,
    /// HGC: host-shadows (and twins) relocated into dedicated blocks in fast program mode.
    Hgc,
    /// DGC: device-shadows (and twins) taken from the device buffer (no flash read, no ECC),
    /// clearing their dirty bit.
    Dgc,
    /// SGC (ShadowGC): HGC and DGC together.
    Sgc,
}

impl ShadowGc {
    /// Zombie pages count against a block as GC victim.
    pub fn delays(self) -> bool {
        matches!(self, ShadowGc::GreedyDelay | ShadowGc::Zgc)
    }
    /// Host-shadow (zombie) pages are relocated into dedicated blocks.
    pub fn separates(self) -> bool {
        matches!(
            self,
            ShadowGc::GreedySeparation | ShadowGc::Zgc | ShadowGc::Hgc | ShadowGc::Sgc
        )
    }
    /// The dedicated blocks are programmed in fast mode.
    pub fn fast(self) -> bool {
        matches!(self, ShadowGc::Hgc | ShadowGc::Sgc)
    }
    /// Device-shadow pages are taken from the device buffer.
    pub fn from_buffer(self) -> bool {
        matches!(self, ShadowGc::Dgc | ShadowGc::Sgc)
    }
    /// The device tracks host-shadows and drops a twin-shadow its buffer evicts (Fig. 5).
    pub fn drops_twins(self) -> bool {
        matches!(self, ShadowGc::Hgc | ShadowGc::Sgc)
    }
}

/// ShadowGC and its baselines (shadowgc.txt §3–4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowConfig {
    /// GC variant.
    pub gc: ShadowGc,
    /// Program time in fast mode, µs (shadowgc.txt §4.1: 300 against 600 µs normal).
    pub fast_program_us: f64,
    /// Retention time T of fast-mode pages, hours (ours: the paper gives no value).
    pub fast_retention_h: f64,
    /// Longest expected power-off D, hours; fast blocks are refreshed every T − D (ours).
    pub power_off_h: f64,
    /// ECC decode time of a page read from flash by GC, µs (ours: the paper gives none);
    /// pages taken from the device buffer skip it.
    pub ecc_decode_us: f64,
}

impl Default for ShadowConfig {
    fn default() -> Self {
        ShadowConfig {
            gc: ShadowGc::Ggc,
            fast_program_us: 300.0,
            fast_retention_h: 168.0,
            power_off_h: 48.0,
            ecc_decode_us: 0.0,
        }
    }
}

impl ShadowConfig {
    /// The defaults: left out of the serialized config so existing hashes are unchanged.
    fn is_default(&self) -> bool {
        *self == ShadowConfig::default()
    }
}

fn default_refcount_threshold() -> u32 {
    3
}

fn is_default_refcount_threshold(v: &u32) -> bool {
    *v == default_refcount_threshold()
}

fn default_max_queued_copies() -> u32 {
    64
}

fn is_default_max_queued_copies(v: &u32) -> bool {
    *v == default_max_queued_copies()
}

/// Inline deduplication above the FTL (deduphr.txt §2.2, §3.3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DedupConfig {
    /// Deduplicate written pages by content fingerprint.
    pub enabled: bool,
    /// Time to fingerprint one written page, ns, before the dedup decision (0: deduphr.txt's
    /// evaluation replays traces with precomputed MD5s and charges no hashing time).
    #[serde(default)]
    pub fingerprint_ns: u64,
}

impl DedupConfig {
    /// Off with no cost: left out of the serialized config so existing hashes are unchanged.
    fn is_off(&self) -> bool {
        *self == DedupConfig::default()
    }
}

/// Where HotR keeps copies of hot read pages (hotr.txt §III).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagingDesign {
    /// No staging space: reads are always served at home.
    None,
    /// A dedicated extra chip: one more channel of the geometry's shape, outside the logical capacity.
    ExtraChip,
    /// `reserved_blocks_per_plane` blocks of every plane, taken from over-provisioning.
    ReservedBlocks,
}

/// What puts a page into the staging space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagingPolicy {
    /// HotR (hotr.txt): a read of a page in its chip's R-LRU list copies it.
    #[default]
    Hotr,
    /// DedupHR (deduphr.txt): a content whose reference count reaches
    /// `refcount_threshold` is copied on the write path; needs `dedup.enabled`.
    Deduphr,
}

impl StagingPolicy {
    fn is_default(&self) -> bool {
        *self == StagingPolicy::Hotr
    }
}

/// Which R-LRU hits copy a page into staging (HotR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopyOn {
    /// Any read of a page with an R-LRU entry (hotr.txt §III.B: popular pages "are
    /// concurrently migrated" when requested).
    #[default]
    Hit,
    /// Only a read that is blocked by a program or erase and has an entry (the workflow of
    /// hotr.txt §III.C read alone).
    ConflictedHit,
}

/// What HotR's R-LRU lists and copies are keyed by under inline dedup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagingKey {
    /// The host's logical page (deduphr.txt §4.1: HotR's identification "is based on logical
    /// block addresses"): two addresses holding the same content are two hot-read candidates.
    #[default]
    Lba,
    /// The content id below the dedup layer (re-reads of shared content count together).
    Content,
}

/// HotR / DedupHR: staging space and hot-read identification (hotr.txt §III, deduphr.txt §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagingConfig {
    /// Staging design (`none` disables HotR and DedupHR).
    pub design: StagingDesign,
    /// Which pages are staged: HotR's read hotness or DedupHR's reference counts. Left out of
    /// the serialized config when `hotr`, so existing config hashes are unchanged.
    #[serde(default, skip_serializing_if = "StagingPolicy::is_default")]
    pub policy: StagingPolicy,
    /// DedupHR: a content is staged when its reference count reaches this (deduphr.txt §3.3:
    /// "e.g. 3", the default of its evaluation) and unstaged when it falls back to 1.
    #[serde(
        default = "default_refcount_threshold",
        skip_serializing_if = "is_default_refcount_threshold"
    )]
    pub refcount_threshold: u32,
    /// Most copy programs queued or running per staging die; further copies are skipped
    /// (ours: the papers are silent; it bounds the controller's copy backlog).
    #[serde(
        default = "default_max_queued_copies",
        skip_serializing_if = "is_default_max_queued_copies"
    )]
    pub max_queued_copies: u32,
    /// Blocks reserved per plane with `reserved-blocks`.
    pub reserved_blocks_per_plane: u32,
    /// HotR's hot set: this share of the distinct pages read so far (per chip) may hold a
    /// staging copy, and each chip's R-LRU list holds that many entries (hotr.txt §IV: "10%
    /// hot read data pages are migrated").
    pub hot_fraction: f64,
    /// HotR: which R-LRU hits copy the page.
    pub copy_on: CopyOn,
    /// HotR under inline dedup: key the R-LRU and copies by host page or by content.
    pub key: StagingKey,
}

/// The device-side DRAM buffer (LRU, write-back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    /// Capacity in pages (0 = no buffer: writes go straight to flash).
    pub device_pages: u32,
    /// Host-side page cache (the file system's, LRU write-back) in front of the device, pages
    /// (0 = none). Left out of the serialized config when 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub host_pages: u32,
    /// DRAM access time per page, ns (shadowgc.txt §4.1: 20 ns).
    pub dram_ns_per_page: u64,
    /// Whether the buffers also cache pages read from flash (a read/write cache: hire.txt §3.1
    /// counts read references of cached pages) or hold written pages only (the write buffers
    /// of shadowgc.txt; a read of a buffered page is still served from DRAM). Left out of the
    /// serialized config when true, so existing config hashes are unchanged.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub cache_reads: bool,
}

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

/// How pages are assigned threshold-voltage levels (hire.txt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VoltagePolicy {
    /// Every page at the normal level.
    Baseline,
    /// High Voltage Controller: every page at the high level.
    Hvc,
    /// Low Voltage Controller: every page at the low level.
    Lvc,
    /// HIRE: the buffer classes each evicted page read-hot (high), write-hot (low) or mixed (normal).
    Hire,
}

/// Threshold-voltage levels and the policy choosing them (hire.txt §3, Table 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoltageConfig {
    /// Policy.
    pub policy: VoltagePolicy,
    /// w: an evicted page is read-hot if C_r/(C_r+C_w) > w, write-hot if C_w/(C_r+C_w) > w.
    pub hot_threshold: f64,
    /// HIRE: a clean read-hot page evicted from the buffer that is not already high is
    /// reprogrammed at the high level (a migration); without it only written pages change level.
    pub rewrite_clean_read_hot: bool,
    /// When such a rewrite is programmed. Left out of the serialized config at `idle`.
    #[serde(default, skip_serializing_if = "RewriteWhen::is_idle")]
    pub rewrite_when: RewriteWhen,
    /// Rewrites a die may hold back for its idle time (each holds a page of controller DRAM);
    /// a rewrite due while the die already holds that many is skipped. Left out of the
    /// serialized config at 32.
    #[serde(
        default = "default_rewrite_backlog",
        skip_serializing_if = "is_default_rewrite_backlog"
    )]
    pub rewrite_backlog_pages: u32,
    /// Report the erases and wearing weight of the blocks programmed during the run apart from
    /// those of blocks that held preconditioned data (`voltage.run_blocks` in the summary).
    /// Left out of the serialized config at `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub split_fill_wear: bool,
    /// Sensing time at the high level as a multiple of `flash.read_us` (the normal level's).
    pub high_read_factor: f64,
    /// Read transfer time at the high level as a multiple of `flash.transfer_us`.
    pub high_transfer_factor: f64,
    /// Sensing time at the low level as a multiple of `flash.read_us`.
    pub low_read_factor: f64,
    /// Read transfer time at the low level as a multiple of `flash.transfer_us`.
    pub low_transfer_factor: f64,
    /// Threshold voltages of the four MLC states at the high level, V.
    pub high_volts: Vec<f64>,
    /// At the normal level, V.
    pub normal_volts: Vec<f64>,
    /// At the low level, V.
    pub low_volts: Vec<f64>,
}

/// When HIRE's rewrite of a clean read-hot page is programmed (`voltage.rewrite_when`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewriteWhen {
    /// Held back until its die has nothing else it may start (idle-time work); a program
    /// suspension policy may suspend it like any program once it runs.
    #[default]
    Idle,
    /// Queued at once with the host writes of its die.
    Queued,
}

impl RewriteWhen {
    fn is_idle(&self) -> bool {
        *self == RewriteWhen::Idle
    }
}

fn default_rewrite_backlog() -> u32 {
    32
}

fn is_default_rewrite_backlog(n: &u32) -> bool {
    *n == default_rewrite_backlog()
}

/// A validated, fully resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// The schemes in force, derived from the resolved values (see [`crate::schemes::label`]):
    /// their canonical composed name, e.g. `hotr+ipc`, or `baseline`.
    pub scheme: String,
    /// Geometry.
    pub geometry: GeometryConfig,
    /// Flash timing.
    pub flash: FlashConfig,
    /// FTL.
    pub ftl: FtlConfig,
    /// Preconditioning.
    pub precondition: PreconditionConfig,
    /// Scheduling.
    pub sched: SchedConfig,
    /// Program/erase suspension.
    pub suspend: SuspendConfig,
    /// Device DRAM buffer.
    pub buffer: BufferConfig,
    /// Threshold-voltage levels.
    pub voltage: VoltageConfig,
    /// HotR / DedupHR staging space.
    pub staging: StagingConfig,
    /// Inline deduplication.
    #[serde(skip_serializing_if = "DedupConfig::is_off")]
    pub dedup: DedupConfig,
    /// ShadowGC and its GC baselines.
    #[serde(skip_serializing_if = "ShadowConfig::is_default")]
    pub shadow: ShadowConfig,
    /// Rails / TTFlash.
    pub redundancy: RedundancyConfig,
    /// Host.
    pub host: HostConfig,
    /// Parameters of the schemes in force that own some (`[<scheme>]` tables), every one
    /// resolved to its value.
    #[serde(flatten)]
    pub params: SchemeParams,
}

/// Scheme parameters: scheme name → key → value.
pub type SchemeParams = std::collections::BTreeMap<String, std::collections::BTreeMap<String, f64>>;

/// Builds a [`Config`] from a preset, optional config files and `key=value` overrides.
///
/// Layers, lowest first: the built-in defaults, the preset (the drive), the settings of the
/// requested schemes (`scheme` key), then config files and `--set` overrides in order.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    /// Defaults and preset.
    base: toml::Table,
    /// Config files and overrides, including the `scheme` key.
    user: toml::Table,
}

impl ConfigBuilder {
    /// Starts from the named preset.
    ///
    /// # Errors
    /// [`ConfigError::UnknownPreset`] if the name is not a preset.
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        let preset = PRESETS
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ConfigError::UnknownPreset(name.to_string()))?;
        let mut base = parse_table(presets::DEFAULT_TOML, "built-in defaults")?;
        merge(
            &mut base,
            parse_table(preset.toml, &format!("preset {name}"))?,
        );
        Ok(ConfigBuilder {
            base,
            user: toml::Table::new(),
        })
    }

    /// Overlays a TOML document (e.g. a `--config` file's contents).
    ///
    /// # Errors
    /// [`ConfigError::Parse`] on TOML syntax errors.
    pub fn overlay_toml(mut self, text: &str, origin: &str) -> Result<Self, ConfigError> {
        merge(&mut self.user, parse_table(text, origin)?);
        Ok(self)
    }

    /// Overlays a TOML file.
    ///
    /// # Errors
    /// [`ConfigError::Io`] or [`ConfigError::Parse`].
    pub fn overlay_file(self, path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = crate::files::read_text(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        self.overlay_toml(&text, &path.display().to_string())
    }

    /// Selects schemes by name (`hotr`, `hotr+ipc`; see `ssdlab schemes`), replacing any
    /// selection made before.
    pub fn scheme(mut self, spec: &str) -> Self {
        self.user
            .insert("scheme".into(), toml::Value::String(spec.to_string()));
        self
    }

    /// Applies one `dotted.key=value` override; the value is read as TOML, else as a string.
    ///
    /// # Errors
    /// [`ConfigError::BadSet`] when there is no `=` or the key is empty.
    pub fn set(mut self, assignment: &str) -> Result<Self, ConfigError> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::BadSet(assignment.to_string()))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(ConfigError::BadSet(assignment.to_string()));
        }
        let value = value.trim();
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        let mut node = &mut self.user;
        let parts: Vec<&str> = key.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            let entry = node
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            node = match entry {
                toml::Value::Table(t) => t,
                _ => {
                    return Err(ConfigError::BadSet(format!(
                        "{assignment} ({part} is not a table)"
                    )))
                }
            };
        }
        node.insert(parts[parts.len() - 1].to_string(), parsed);
        Ok(self)
    }

    /// The configuration of `preset`, then `scheme` (if any), then each `key=value` of
    /// `sets` in order: what a run, an experiment point or the Python API name.
    ///
    /// # Errors
    /// As [`ConfigBuilder::preset`], [`ConfigBuilder::set`] and [`ConfigBuilder::build`].
    pub fn resolve(
        preset: &str,
        scheme: Option<&str>,
        sets: &[String],
    ) -> Result<Config, ConfigError> {
        let mut b = ConfigBuilder::preset(preset)?;
        if let Some(s) = scheme {
            b = b.scheme(s);
        }
        for s in sets {
            b = b.set(s)?;
        }
        b.build()
    }

    /// Parses and validates the merged configuration.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] for unknown keys or wrong types (the key is named),
    /// [`ConfigError::Scheme`] for unknown or incompatible schemes,
    /// [`ConfigError::Invalid`] listing every violated constraint.
    pub fn build(self) -> Result<Config, ConfigError> {
        self.build_noting().map(|(cfg, _)| cfg)
    }

    /// As [`ConfigBuilder::build`], with the keys the user set that have no effect in this
    /// configuration (a feature's parameter while the feature is off), one note each.
    ///
    /// # Errors
    /// As [`ConfigBuilder::build`].
    pub fn build_noting(self) -> Result<(Config, Vec<String>), ConfigError> {
        let (user_keys, base) = (self.user.clone(), self.base.clone());
        let cfg = self.build_inner()?;
        let notes = inert_keys(&user_keys, &base, &cfg);
        Ok((cfg, notes))
    }

    fn build_inner(self) -> Result<Config, ConfigError> {
        let ConfigBuilder {
            base: mut table,
            mut user,
        } = self;
        let requested = match user.remove("scheme") {
            None => Vec::new(),
            Some(toml::Value::String(spec)) => {
                crate::schemes::parse(&spec).map_err(|e| ConfigError::Scheme(e.0))?
            }
            Some(v) => {
                return Err(ConfigError::Scheme(format!(
                    "scheme = {v}: expected a string such as \"hotr\" or \"hotr+ipc\""
                )))
            }
        };
        merge(&mut table, crate::schemes::settings(&requested));
        merge(&mut table, user);
        let params = params::take(&mut table);
        let text = toml::to_string(&table).map_err(|e| ConfigError::Parse {
            origin: "merged configuration".into(),
            message: e.to_string(),
        })?;
        let raw: RawConfig = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            origin: "configuration".into(),
            message: at_key(&text, &e),
        })?;
        let mut cfg = validate::resolve(raw).map_err(|e| with_schemes(e, &requested))?;
        params::finish(&mut cfg, &requested, params)?;
        Ok(cfg)
    }
}

/// A deserialisation error of the merged configuration `text` told by the dotted key it is
/// about (`staging.policy = "none": unknown variant …`), not by a line of a document the user
/// never wrote.
fn at_key(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(start) = e.span().map(|s| s.start) else {
        return message.to_string();
    };
    let before = &text[..start.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let section = before[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']')).then(|| l.trim_matches(['[', ']']).to_string())
    });
    match line.split_once('=') {
        Some((key, value)) => {
            let key = key.trim();
            let dotted = section.map_or(key.to_string(), |s| format!("{s}.{key}"));
            format!("{dotted} = {}: {message}", value.trim())
        }
        None => message.to_string(),
    }
}

/// Keys set in `user` (config files and `--set`) to a value other than the preset's that `cfg`
/// does not use: the parameters of a feature that is off (a full dump of `config show` sets
/// every key to its value and is not noted). Each note names the key and the setting that
/// turns it on.
fn inert_keys(user: &toml::Table, base: &toml::Table, cfg: &Config) -> Vec<String> {
    // Every `section.key` the user set to a value the preset does not have.
    let mut changed = Vec::new();
    for (section, v) in user {
        let (Some(t), preset) = (
            v.as_table(),
            base.get(section).and_then(toml::Value::as_table),
        ) else {
            continue;
        };
        for (k, v) in t {
            if preset.and_then(|p| p.get(k)) != Some(v) {
                changed.push(format!("{section}.{k}"));
            }
        }
    }
    let r = &cfg.redundancy.scheme;
    // (the feature is off, the keys of its parameters, what turns it on)
    type Rule<'a> = (bool, &'a dyn Fn(&str) -> bool, &'a str);
    let rules: [Rule; 5] = [
        (
            *r != RedundancyScheme::Ttflash,
            &|k| matches!(k, "redundancy.ttflash_k" | "redundancy.parity_update"),
            "TTFlash is off (redundancy.scheme = \"ttflash\" or --scheme ttflash turns it on)",
        ),
        (
            *r != RedundancyScheme::Rails,
            &|k| k == "redundancy.rails_switch_us",
            "Rails is off (redundancy.scheme = \"rails\" or --scheme rails turns it on)",
        ),
        (
            cfg.suspend.policy == SuspendPolicy::Off,
            &|k| k.starts_with("suspend.") && k != "suspend.policy",
            "suspension is off (suspend.policy or a P/E-suspension scheme turns it on)",
        ),
        (
            cfg.host.mode == HostMode::Open,
            &|k| k == "host.queue_depth",
            "host.mode = \"open\" replays the timestamps (host.mode = \"closed\" keeps queue_depth requests outstanding)",
        ),
        (
            cfg.host.link == HostLink::None,
            &|k| {
                matches!(
                    k,
                    "host.link_mb_s" | "host.link_command_bytes" | "host.link_full_duplex"
                )
            },
            "host.link = \"none\" charges no transfers (host.link = \"custom\" uses these)",
        ),
    ];
    rules
        .iter()
        .filter(|(off, _, _)| *off)
        .flat_map(|(_, applies, why)| {
            changed
                .iter()
                .filter(|k| applies(k))
                .map(move |k| format!("{k} has no effect: {why}"))
        })
        .collect()
}

/// Names the requested schemes under a list of violations, so a user sees which scheme brought
/// the values in.
fn with_schemes(e: ConfigError, requested: &[&crate::schemes::Scheme]) -> ConfigError {
    match e {
        ConfigError::Invalid(mut lines) if !requested.is_empty() => {
            lines.push(format!(
                "(with --scheme {}; `ssdlab schemes` lists what each scheme sets and needs)",
                crate::schemes::join(requested)
            ));
            ConfigError::Invalid(lines)
        }
        e => e,
    }
}

impl Config {
    /// Loads a preset with no overrides.
    ///
    /// # Errors
    /// As [`ConfigBuilder::preset`] and [`ConfigBuilder::build`].
    pub fn preset(name: &str) -> Result<Config, ConfigError> {
        ConfigBuilder::preset(name)?.build()
    }

    /// The fully resolved configuration as TOML (every key `--set` accepts).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a validated config always serialises")
    }

    /// The resolved configuration with every key, defaults included (what `config show`
    /// prints). [`Config::to_toml`] leaves some defaults out so that config hashes stay stable
    /// as keys are added; both load back to the same config.
    pub fn to_toml_full(&self) -> String {
        let mut full = parse_table(presets::DEFAULT_TOML, "built-in defaults")
            .expect("the built-in defaults parse");
        let own = parse_table(&self.to_toml(), "resolved configuration")
            .expect("a serialised config parses");
        merge(&mut full, own);
        toml::to_string(&full).expect("a TOML table serialises")
    }

    /// The schemes in force (parsed from [`Config::scheme`]).
    pub fn schemes(&self) -> Vec<&'static crate::schemes::Scheme> {
        self.scheme
            .split('+')
            .filter_map(crate::schemes::find)
            .collect()
    }

    /// A scheme parameter's resolved value.
    ///
    /// # Panics
    /// If the scheme is not in force or does not declare `key` (a bug in the scheme).
    pub fn param(&self, scheme: &str, key: &str) -> f64 {
        self.params
            .get(scheme)
            .and_then(|t| t.get(key))
            .copied()
            .unwrap_or_else(|| panic!("scheme {scheme} has no resolved parameter {key}"))
    }

    /// A stable hash of the resolved configuration (first 16 hex digits of SHA-256 of its TOML).
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.to_toml().as_bytes());
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn parse_table(text: &str, origin: &str) -> Result<toml::Table, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })
}

/// Deep-merges `over` into `base`: tables merge key by key, other values replace.
pub(crate) fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates() {
        for p in PRESETS {
            let c = Config::preset(p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(c.flash.read_us > 0.0);
        }
    }

    #[test]
    fn shown_config_reloads_to_the_same_config() {
        let c = ConfigBuilder::preset("hotr")
            .unwrap()
            .set("ftl.gc_victim=cost-benefit")
            .unwrap()
            .build()
            .unwrap();
        let again = ConfigBuilder::preset("tiny")
            .unwrap()
            .overlay_toml(&c.to_toml(), "shown")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(c, again);
        assert_eq!(c.hash(), again.hash());
    }

    #[test]
    fn parameters_of_features_that_are_off_are_noted() {
        let notes = |sets: &[&str], scheme: Option<&str>| {
            let mut b = ConfigBuilder::preset("tiny").unwrap();
            if let Some(s) = scheme {
                b = b.scheme(s);
            }
            for s in sets {
                b = b.set(s).unwrap();
            }
            b.build_noting().unwrap().1
        };
        let off = notes(
            &[
                "redundancy.ttflash_k=7",
                "suspend.max_suspensions_per_op=1",
                "host.queue_depth=1",
                "host.link_mb_s=0",
            ],
            None,
        );
        assert_eq!(off.len(), 4, "{off:?}");
        assert!(off[0].starts_with("redundancy.ttflash_k has no effect"));
        assert!(notes(
            &["geometry.channels=2", "redundancy.ttflash_k=1"],
            Some("ttflash")
        )
        .is_empty());
        assert!(notes(&["host.mode=\"closed\"", "host.queue_depth=4"], None).is_empty());
        assert!(notes(&["suspend.max_suspensions_per_op=1"], Some("ips")).is_empty());
    }

    #[test]
    fn a_bad_value_is_told_by_its_key() {
        let e = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("staging.policy=\"none\"")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("staging.policy = \"none\": unknown variant `none`"),
            "{e}"
        );
        assert!(!e.contains("line"), "{e}");
        let e = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("flash.program_us=abc")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("flash.program_us = \"abc\": invalid type"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let err = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("ftl.gc_thresh=0.1")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(err.contains("gc_thresh"), "{err}");
    }

    #[test]
    fn cell_type_sets_timings_unless_overridden() {
        let c = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("flash.cell=qlc")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!((c.flash.read_us, c.flash.program_us), (140.0, 3000.0));
        let c = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("flash.cell=qlc")
            .unwrap()
            .set("flash.read_us=99")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(c.flash.read_us, 99.0);
    }
}
