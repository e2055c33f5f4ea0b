//! Building a simulation with the policies of its schemes: the core ([`Simulation::assemble`])
//! takes the filled policy slots, and this layer — which holds the registry — fills them for
//! the schemes a config has in force, so the core never names a scheme.

use super::Scheme;
use crate::config::Config;
use crate::sim::memory::MemoryEstimate;
use crate::sim::policy::Policies;
use crate::sim::{RunOptions, SimError, Simulation};
use crate::workload::Requests;

impl Policies {
    /// Lets every scheme in force in `cfg` (and every scheme those contain) install its
    /// policies.
    pub fn for_config(cfg: &Config) -> Policies {
        let mut p = Policies::default();
        let mut done: Vec<&str> = Vec::new();
        let mut visit = |s: &Scheme, p: &mut Policies| {
            if !done.contains(&s.name) {
                done.push(s.name);
                (s.install)(cfg, p);
            }
        };
        for s in cfg.schemes() {
            for inner in s.implies.iter().filter_map(|n| super::find(n)) {
                visit(inner, &mut p);
            }
            visit(s, &mut p);
        }
        if p.gc_exec.is_none() {
            p.gc_exec = crate::sched::gc_exec::policy(cfg);
        }
        for (i, policy) in p.list.iter().flatten().enumerate() {
            for &seam in policy.seams() {
                p.by_seam[seam as usize].push(i as u8);
            }
        }
        p
    }
}

/// The memory a run of `cfg` needs, by part (its schemes' tables included).
pub fn memory_estimate(cfg: &Config, full_versions: bool) -> MemoryEstimate {
    crate::sim::memory::estimate_with(cfg, &Policies::for_config(cfg), full_versions)
}

impl<'w> Simulation<'w> {
    /// Builds the drive, preconditions it and prepares to replay `workload`.
    ///
    /// # Errors
    /// [`SimError::Precondition`] if the fill cannot be placed.
    pub fn new(
        cfg: &Config,
        opts: RunOptions,
        workload: &'w mut Requests<'w>,
    ) -> Result<Self, SimError> {
        Self::with_fill_progress(cfg, opts, workload, &|_, _| {})
    }

    /// [`Simulation::new`], telling `progress` how far preconditioning is (pages done, pages
    /// in total).
    ///
    /// # Errors
    /// [`SimError::Precondition`] if the fill cannot be placed.
    pub fn with_fill_progress(
        cfg: &Config,
        opts: RunOptions,
        workload: &'w mut Requests<'w>,
        progress: crate::ftl::precondition::FillProgress,
    ) -> Result<Self, SimError> {
        Self::build(cfg, opts, workload, None, progress)
    }

    /// [`Simulation::with_fill_progress`] with a second pass over the same workload, which
    /// `precondition.pre_process` reads before the run (`None`: the workload can be read only
    /// once, and pre-processing is refused).
    ///
    /// # Errors
    /// As [`Simulation::assemble`].
    pub fn build(
        cfg: &Config,
        opts: RunOptions,
        workload: &'w mut Requests<'w>,
        pre_pass: Option<&mut Requests>,
        progress: crate::ftl::precondition::FillProgress,
    ) -> Result<Self, SimError> {
        Self::assemble(
            cfg,
            opts,
            workload,
            pre_pass,
            progress,
            Policies::for_config(cfg),
        )
    }
}
