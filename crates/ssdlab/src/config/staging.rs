//! `[staging]`: the staging space and its policy (HotR, DedupHR).

use super::*;

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

/// Where a blocked read goes when its page's staging copy is on a die that is itself running
/// or has queued a program or erase (HotR, DedupHR; the papers are silent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BusyCopy {
    /// Home: the copy would not spare the read a wait (ours, the rule before it was a
    /// setting).
    #[default]
    Home,
    /// The copy anyway, queued on the staging die behind its program or erase.
    Redirect,
    /// Whichever of the two dies has fewer programs and erases running or queued ahead of the
    /// read (home on a tie).
    LessWork,
}

impl BusyCopy {
    fn is_default(&self) -> bool {
        *self == BusyCopy::Home
    }
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
    /// A blocked read whose copy's die is busy with a program or erase: where it goes. Left
    /// out of the serialized config when `home`, so existing config hashes are unchanged.
    #[serde(default, skip_serializing_if = "BusyCopy::is_default")]
    pub busy_copy: BusyCopy,
}
