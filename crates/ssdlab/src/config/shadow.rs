//! `[shadow]`: ShadowGC's GC variants and the fast program mode's retention.

use super::*;

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
    pub(super) fn is_default(&self) -> bool {
        *self == ShadowConfig::default()
    }
}
