//! Declarative experiments: workloads × variants × a parameter grid, each point a full run.
//!
//! An experiment file (`experiments/<name>/experiment.toml`) names the workloads (trace files or
//! synthetic specs), the preset and overrides, the variants (schemes or policy settings), a grid
//! of config keys to sweep, the baseline variant metrics are normalised to, and the figures to
//! draw, optionally with the paper's reported values beside them.

mod alone;
pub mod calibrate;
mod point;
mod runner;
mod spec;

pub use alone::run_alone;
pub use point::{JobSpec, Point, PointResult, WorkloadRef};
pub use runner::{
    collect, load_results, lock, plan, run_job, run_points, DirLock, Loaded, PointOutcome,
    RESULTS_DIR,
};
pub(crate) use spec::{grid_label, slug};
pub use spec::{
    CalibrateSpec, DecompositionSpec, ExperimentSpec, FigureKind, FigureSpec, PaperDecomposition,
    VariantSpec, WorkloadSpec, MAX_POINTS,
};

use thiserror::Error;

/// Problems with an experiment definition or its files.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The experiment file is malformed (the message names the key).
    #[error("{path}: {message}")]
    Spec {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A point's configuration is invalid.
    #[error("point {point}: {source}")]
    Config {
        /// Point id.
        point: String,
        /// The config error.
        source: crate::config::ConfigError,
    },
    /// Another `ssdlab` process holds the experiment directory.
    #[error("{path}: another ssdlab process is running or collecting this experiment; wait for it to finish (the lock goes with that process)")]
    Locked {
        /// The lock file.
        path: String,
    },
    /// A point's run failed.
    #[error("point {point}: {message}")]
    Run {
        /// Point id.
        point: String,
        /// What failed.
        message: String,
    },
}

pub(crate) fn io_err(
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |source| ExperimentError::Io {
        path: path.display().to_string(),
        source,
    }
}
