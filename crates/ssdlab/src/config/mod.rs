//! Configuration: a raw serde layer merged from preset, file and `--set` overrides, then
//! validated into a [`Config`] with every value resolved (no `Option`s).
//!
//! Every key, its unit, default and source is documented in `docs/config.md`.
//!
//! One file per section (`[geometry]` in geometry.rs, …, `[voltage]` in voltage.rs; flash.rs
//! holds `[flash]` and `[suspend]`), the builder in builder.rs, the checks in validate.rs.
//! The sections that schemes turn on (redundancy, shadow, dedup, staging, buffer, voltage) are
//! files here like the drive's, not beside their schemes: a section is typed configuration that
//! validation reads, and the configuration sits below the schemes in the layers
//! (docs/extending.md), so it names none of them.

mod buffer;
mod builder;
mod dedup;
mod flash;
mod ftl;
mod geometry;
mod host;
mod precondition;
mod presets;
mod redundancy;
mod sched;
mod shadow;
mod staging;
mod validate;
mod voltage;

pub use buffer::*;
pub use builder::*;
pub use dedup::*;
pub use ftl::*;
pub use geometry::*;
pub use host::*;
pub use precondition::*;
pub use redundancy::*;
pub use sched::*;
pub use shadow::*;
pub use staging::*;
pub use voltage::*;

use flash::RawFlash;
pub use flash::{
    CellType, FlashConfig, IpcRedo, MultiPlaneRule, PeIdealization, SuspendConfig, SuspendPolicy,
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

impl Config {
    /// Whether a plane's logical data fits beside the GC reserve and the open blocks of
    /// `flows` I/O flows with blocks of their own (`ftl.flow_blocks = "own"`): validation
    /// checks one; a run with several flows checks them all. The error names the keys.
    ///
    /// # Errors
    /// The message validation gives, naming the flows.
    pub fn plane_room(&self, flows: u32) -> Result<(), String> {
        validate::plane_room(
            (
                &self.geometry,
                &self.ftl,
                &self.voltage,
                &self.shadow,
                &self.staging,
            ),
            flows,
        )
    }

    /// Logical capacity in pages: data pages × (1 − over-provisioning), rounded down, where the
    /// data pages are the physical ones less each block's summary pages. A dedicated staging
    /// chip is outside it (it is an extra channel); Rails' mirror half holds no data of its
    /// own; reserved staging blocks come from the over-provisioning.
    pub fn logical_pages(&self) -> u32 {
        let g = &self.geometry;
        let data_channels = if self.redundancy.scheme == RedundancyScheme::Rails {
            g.channels / 2
        } else {
            g.channels
        };
        let data_pages = u64::from(data_channels)
            * u64::from(g.chips_per_channel)
            * u64::from(g.dies_per_chip)
            * u64::from(g.planes_per_die)
            * u64::from(g.blocks_per_plane)
            * u64::from(g.pages_per_block);
        let data_ppb = g.pages_per_block.saturating_sub(self.ftl.summary_pages);
        let physical = data_pages / u64::from(g.pages_per_block.max(1)) * u64::from(data_ppb);
        // TTFlash spends one page of every k+1 on parity.
        let data_share = match self.redundancy.scheme {
            RedundancyScheme::Ttflash => {
                f64::from(self.redundancy.ttflash_k) / f64::from(self.redundancy.ttflash_k + 1)
            }
            _ => 1.0,
        };
        ((1.0 - self.ftl.over_provisioning) * data_share * physical as f64).floor() as u32
    }

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

// Defaults and skip tests the sections' serde attributes name.

fn one_job() -> u32 {
    1
}

fn is_one_job(n: &u32) -> bool {
    *n == 1
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_zero_pair(v: &[u32; 2]) -> bool {
    *v == [0, 0]
}

fn default_window() -> u32 {
    DEFAULT_PAGE_WINDOW
}

fn is_default_window(v: &u32) -> bool {
    *v == DEFAULT_PAGE_WINDOW
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
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

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

fn default_rewrite_backlog() -> u32 {
    32
}

fn is_default_rewrite_backlog(n: &u32) -> bool {
    *n == default_rewrite_backlog()
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
    fn settings_added_with_their_old_behaviour_as_default_keep_config_hashes() {
        let with = |sets: &[&str]| {
            let mut b = ConfigBuilder::preset("hotr").unwrap();
            for s in sets {
                b = b.set(s).unwrap();
            }
            b.build().unwrap()
        };
        let plain = with(&[]);
        assert!(!plain.to_toml().contains("busy_copy"));
        assert_eq!(plain.hash(), with(&["staging.busy_copy=home"]).hash());
        assert_ne!(plain.hash(), with(&["staging.busy_copy=redirect"]).hash());
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
