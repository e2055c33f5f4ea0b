//! `[voltage]`: program-level (threshold-voltage) policies: HVC, LVC, HIRE.

use super::*;

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
    /// HIRE: GC moves a page at the level of its hotness field's class (ours; hire.txt keeps
    /// the field but does not say GC reads it); false: at its victim's level, with one GC
    /// stream per plane. Left out of the serialized config at `true`.
    #[serde(default = "super::yes", skip_serializing_if = "super::is_true")]
    pub gc_relevel: bool,
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
