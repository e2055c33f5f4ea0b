//! The core's GC execution modes that are not a scheme's (`ftl.gc_mode`): `background` needs
//! no policy object (GC is ordinary queued work), `preemptive` is the `gc-preempt` scheme's.

use crate::config::{Config, GcMode};
use crate::sched::Heads;

/// What a [`GcExec`] sees of a die when it gates its queues.
#[derive(Debug, Clone, Copy, Default)]
pub struct GcView {
    /// The fewest free blocks among the die's planes.
    pub min_free_blocks: u32,
    /// Whether a GC job is in progress on one of the die's planes (victim chosen, not yet
    /// erased), whether or not its work is queued at this moment.
    pub collecting: bool,
    /// Whether internal (GC) work is queued on any die of the die's chip, this one included.
    pub chip_gc_queued: bool,
}

/// How GC work shares a die with host work (`ftl.gc_mode`; MQSim's and DiskSim's GC
/// execution modes).
pub trait GcExec: Send {
    /// The queue heads the die's scheduler may choose from. Hiding a head defers that queue;
    /// the default (no `GcExec`) hides nothing, so GC runs as ordinary queued work.
    fn gate(&mut self, heads: Heads, die: GcView) -> Heads;
    /// Whether a plane's GC waits to start until host work is queued on its die (GC in the
    /// foreground of a request, as DiskSim's SSD model cleans).
    fn waits_for_host(&self) -> bool {
        false
    }
    /// Whether the gate looks at the whole chip ([`GcView::chip_gc_queued`]): the core then
    /// dispatches a chip's other idle dies when its GC work drains.
    fn chip_scope(&self) -> bool {
        false
    }
    /// Counters for the run's `scheme_metrics`, keyed `<scheme>.<counter>`.
    fn metrics(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
}

/// MQSim without preemptible GC: GC work queued on a die (with `chip`, on any die of its
/// chip, as MQSim's per-chip transaction queues give it: `TSU_OutOfOrder::service_*_transaction`)
/// goes before the host work queued there.
#[derive(Debug, Clone, Copy, Default)]
struct Urgent {
    chip: bool,
    /// Dispatches where GC work went first while host work waited.
    first: u64,
}

impl GcExec for Urgent {
    fn gate(&mut self, heads: Heads, die: GcView) -> Heads {
        let gc_waits = if self.chip {
            die.chip_gc_queued
        } else {
            heads.internal.is_some()
        };
        if !gc_waits || !heads.host_waits() {
            return heads;
        }
        self.first += 1;
        heads.without_host()
    }

    fn chip_scope(&self) -> bool {
        self.chip
    }

    fn metrics(&self) -> Vec<(String, f64)> {
        vec![("gc_mode.urgent_first".into(), self.first as f64)]
    }
}

/// DiskSim's SSD model: a die cleans only when a request waits on it, one clean per request it
/// starts (the core picks the plane), and the clean (every move, then the erase) runs as one
/// unit: no host operation starts on the die while a GC job is in progress there.
#[derive(Debug, Clone, Copy, Default)]
struct Foreground {
    /// Dispatches where waiting host work was held back by a clean in progress.
    held: u64,
}

impl GcExec for Foreground {
    fn gate(&mut self, heads: Heads, die: GcView) -> Heads {
        if !die.collecting || !heads.host_waits() {
            return heads;
        }
        self.held += 1;
        heads.without_host()
    }

    fn waits_for_host(&self) -> bool {
        true
    }

    fn metrics(&self) -> Vec<(String, f64)> {
        vec![("gc_mode.foreground_held".into(), self.held as f64)]
    }
}

/// The policy object of `cfg`'s GC mode, when the core provides it.
pub fn policy(cfg: &Config) -> Option<Box<dyn GcExec>> {
    match cfg.ftl.gc_mode {
        GcMode::Urgent => Some(Box::new(Urgent::default())),
        GcMode::UrgentChip => Some(Box::new(Urgent {
            chip: true,
            first: 0,
        })),
        GcMode::Foreground => Some(Box::new(Foreground::default())),
        GcMode::Background | GcMode::Preemptive => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urgent_gc_hides_host_work_only_while_gc_waits() {
        let mut u = Urgent::default();
        let all = Heads {
            read: Some(1),
            write: Some(2),
            internal: Some(3),
        };
        let g = u.gate(all, GcView::default());
        assert_eq!((g.read, g.write, g.internal), (None, None, Some(3)));
        let host = Heads {
            internal: None,
            ..all
        };
        let g = u.gate(host, GcView::default());
        assert_eq!((g.read, g.write), (Some(1), Some(2)));
        assert_eq!(u.first, 1);
    }

    #[test]
    fn chip_scoped_urgent_gc_holds_a_die_while_its_sibling_has_gc_queued() {
        let mut u = Urgent {
            chip: true,
            first: 0,
        };
        let host = Heads {
            read: Some(1),
            write: Some(2),
            internal: None,
        };
        let sibling_gc = GcView {
            chip_gc_queued: true,
            ..GcView::default()
        };
        let g = u.gate(host, sibling_gc);
        assert_eq!((g.read, g.write, g.internal), (None, None, None));
        let g = u.gate(host, GcView::default());
        assert_eq!((g.read, g.write), (Some(1), Some(2)));
        assert!(u.chip_scope() && u.first == 1);
        // Die scope looks at the die's own queue only.
        let mut d = Urgent::default();
        let g = d.gate(host, sibling_gc);
        assert_eq!((g.read, g.write), (Some(1), Some(2)));
    }

    #[test]
    fn a_foreground_clean_holds_host_work_until_it_ends() {
        let mut f = Foreground::default();
        let host = Heads {
            read: Some(1),
            write: Some(2),
            internal: None,
        };
        let busy = GcView {
            collecting: true,
            ..GcView::default()
        };
        // Between its operations (a GC read's page being decoded) the clean still holds the
        // die: nothing starts.
        let g = f.gate(host, busy);
        assert_eq!((g.read, g.write, g.internal), (None, None, None));
        let g = f.gate(host, GcView::default());
        assert_eq!((g.read, g.write), (Some(1), Some(2)));
        assert!(f.waits_for_host() && f.held == 1);
    }
}
