//! The policy slots schemes fill. The core calls these traits at its decision points and
//! names no scheme; a slot left empty means the core's default behaviour.

use super::Scheme;
use crate::config::Config;
use crate::sched::Heads;

/// How GC work shares a die with host work (MQSim's GC execution modes).
pub trait GcExec: Send {
    /// The queue heads the die's scheduler may choose from, given the fewest free blocks
    /// among the die's planes. Hiding a head defers that queue; the default (no `GcExec`)
    /// hides nothing, so GC runs as ordinary queued work.
    fn gate(&mut self, heads: Heads, min_free_blocks: u32) -> Heads;
    /// Counters for the run's `scheme_metrics`, keyed `<scheme>.<counter>`.
    fn metrics(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
}

/// The policy objects of the schemes in force.
#[derive(Default)]
pub struct Policies {
    /// GC execution mode; `None`: background GC, queued like any other work.
    pub gc_exec: Option<Box<dyn GcExec>>,
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies")
            .field("gc_exec", &self.gc_exec.is_some())
            .finish()
    }
}

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
        p
    }
}
