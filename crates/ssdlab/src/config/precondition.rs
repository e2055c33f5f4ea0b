//! `[precondition]`: how the drive is filled before the trace, and pre-processing.

use super::*;

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
    /// A random subset placed straight into the steady state of uniform random writes: full
    /// blocks whose valid counts follow the mean-field law of the GC victim rule (Van Houdt,
    /// SIGMETRICS 2013; MQSim's preconditioning), the free pool one block above the GC
    /// threshold. `overwrite` does not apply; built at block level (`method = "direct"`).
    SteadyState,
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
