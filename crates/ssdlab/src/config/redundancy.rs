//! `[redundancy]`: mirrored (Rails) and parity (TTFlash) redundancy across dies.

use super::*;

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
