//! `[dedup]`: inline deduplication.

use super::*;

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
    pub(super) fn is_off(&self) -> bool {
        *self == DedupConfig::default()
    }
}
