//! Preemptible GC, as MQSim models it: GC work on a die yields to queued host work until a
//! plane of the die falls to a hard floor of free blocks; from then on GC goes first.
//!
//! This file is the whole scheme: its registry entry, its parameter and its policy object
//! (the worked example of `docs/extending.md`).

use super::{GcExec, GcView, Param, Policies, Scheme};
use crate::config::{Config, GcMode};
use crate::sched::Heads;

/// MQSim-style preemptible GC.
pub const GC_PREEMPT: Scheme = Scheme {
    name: "gc-preempt",
    summary: "preemptible GC: GC (and other internal work) yields to queued host I/O until a plane falls to hard_floor free blocks, then runs first",
    paper: "MQSim (Tavakkol et al., FAST 2018) Preemptible_GC_Enabled / GC_Hard_Threshold",
    sets: &[("ftl.gc_mode", "\"preemptive\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.ftl.gc_mode == GcMode::Preemptive),
    params: &[Param {
        key: "hard_floor",
        default: 0.005,
        min: 0.0,
        max_exclusive: 1.0,
        doc: "free blocks per plane, as a fraction of its blocks (rounded up, at least 1), at or below which GC stops yielding; default: MQSim's ssdconfig.xml GC_Hard_Threshold = 0.005",
    }],
    install,
};

fn install(cfg: &Config, p: &mut Policies) {
    let fraction = cfg.param(GC_PREEMPT.name, "hard_floor");
    let blocks = f64::from(cfg.geometry.blocks_per_plane);
    p.gc_exec = Some(Box::new(Preemptible {
        floor_blocks: ((fraction * blocks).ceil() as u32).max(1),
        ..Preemptible::default()
    }));
}

/// The policy object.
#[derive(Debug, Clone, Copy, Default)]
struct Preemptible {
    floor_blocks: u32,
    /// Dispatches where queued internal work was held back for host work.
    deferred: u64,
    /// Dispatches where internal work went first because a plane was at the floor.
    urgent: u64,
}

impl GcExec for Preemptible {
    fn gate(&mut self, heads: Heads, die: GcView) -> Heads {
        if heads.internal.is_none() || !heads.host_waits() {
            return heads;
        }
        if die.min_free_blocks <= self.floor_blocks {
            // Urgent: internal work first.
            self.urgent += 1;
            heads.without_host()
        } else {
            self.deferred += 1;
            Heads {
                internal: None,
                ..heads
            }
        }
    }

    fn metrics(&self) -> Vec<(String, f64)> {
        vec![
            ("gc-preempt.deferred".into(), self.deferred as f64),
            ("gc-preempt.urgent".into(), self.urgent as f64),
            (
                "gc-preempt.floor_blocks".into(),
                f64::from(self.floor_blocks),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_yields_above_the_floor_and_leads_at_it() {
        let free = |min_free_blocks| GcView {
            min_free_blocks,
            collecting: true,
            chip_gc_queued: false,
        };
        let mut p = Preemptible {
            floor_blocks: 2,
            ..Preemptible::default()
        };
        let all = Heads {
            read: Some(5),
            write: Some(6),
            internal: Some(1),
        };
        let relaxed = p.gate(all, free(3));
        assert_eq!(
            (relaxed.read, relaxed.write, relaxed.internal),
            (Some(5), Some(6), None)
        );
        let urgent = p.gate(all, free(2));
        assert_eq!(
            (urgent.read, urgent.write, urgent.internal),
            (None, None, Some(1))
        );
        let gc_only = Heads {
            internal: Some(1),
            ..Heads::default()
        };
        assert_eq!(p.gate(gc_only, free(9)).internal, Some(1));
        let host_only = Heads {
            read: Some(3),
            ..Heads::default()
        };
        assert_eq!(p.gate(host_only, free(0)).read, Some(3));
        assert_eq!((p.deferred, p.urgent), (1, 1));
    }
}
