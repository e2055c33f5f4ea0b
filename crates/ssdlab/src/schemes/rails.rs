//! Rails (hotr.txt's mirrored-chips baseline): the second half of the channels mirrors the
//! first page for page.
//!
//! * A program placed at `ppn` on the primary half is also made at `ppn + half` (a redundancy
//!   program, queued at once, so both replicas are written in parallel); every GC erase of a
//!   primary block erases its twin.
//! * A read goes to the replica whose die is not busy with a program or erase, and to the less
//!   loaded one otherwise; a twin is used only once its program of the current version has
//!   completed. Each data placed on the primary half gets a stamp; a twin page is current while
//!   it holds the stamp of the data on its partner.
//! * With role switching (`redundancy.rails_switch_us`) the halves alternate periods: the read
//!   set starts no program or erase, reads go to it when it holds the current version, and a
//!   host write completes when the primary has it.

use super::{Policies, Scheme};
use crate::config::{Config, RedundancyScheme};
use crate::flash::{BlockId, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::sim::memory::Tables;
use crate::sim::policy::{
    DieGate, GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Route, Seam,
    WriteFanout,
};
use crate::sim::{Ctx, Notice, Op, SimError};
use crate::time::SimTime;

/// Rails: mirrored halves; a read goes to the replica not busy with a program or erase.
pub const RAILS: Scheme = Scheme {
    name: "rails",
    summary: "Rails: the second half of the channels mirrors the first; reads go to the replica not programming",
    paper: "hotr.txt §IV (Rails, 4+4)",
    sets: &[("redundancy.scheme", "\"rails\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.redundancy.scheme == RedundancyScheme::Rails),
    params: &[],
    install,
};

fn install(cfg: &Config, p: &mut Policies) {
    let period_ns = cfg.redundancy.rails_switch_us.saturating_mul(1000);
    let geo = crate::flash::Geometry::of(cfg);
    let read_set = (period_ns > 0).then_some(ReadSet {
        period_ns,
        data_dies: geo.data_dies(),
    });
    if let Some(gate) = read_set {
        p.gate = Some(Box::new(gate));
    }
    p.push(Box::new(Rails {
        period_ns,
        read_set,
        space_factor: f64::from(geo.pages()) / f64::from(geo.data_pages()),
        primary: Vec::new(),
        twin: Vec::new(),
        stamp: 0,
        switch_pending: false,
    }));
}

/// Role switching: which half takes programs and erases now.
#[derive(Debug, Clone, Copy)]
struct ReadSet {
    period_ns: u64,
    data_dies: u32,
}

/// Whether the primary half (rather than the mirror) takes programs and erases at `now_ns`.
fn primary_writes(period_ns: u64, now_ns: u64) -> bool {
    (now_ns / period_ns) % 2 == 0
}

impl DieGate for ReadSet {
    fn holds(&self, die: usize, now_ns: u64) -> bool {
        let primary = (die as u32) < self.data_dies;
        primary != primary_writes(self.period_ns, now_ns)
    }
}

/// The policy object.
#[derive(Debug)]
struct Rails {
    /// Role-switching period, ns (0 = off).
    period_ns: u64,
    /// The die gate installed with role switching (the same halves and period).
    read_set: Option<ReadSet>,
    /// Physical pages (both halves) over data pages.
    space_factor: f64,
    /// Per primary page, the stamp of the data last placed on it.
    primary: Vec<u32>,
    /// Per primary page, the stamp of the data its twin holds (0: none yet, or erased).
    twin: Vec<u32>,
    /// The last stamp given.
    stamp: u32,
    /// A role switch is scheduled.
    switch_pending: bool,
}

impl Rails {
    fn gated(&self, die: usize, now_ns: u64) -> bool {
        self.read_set.is_some_and(|r| r.holds(die, now_ns))
    }
}

impl Lifecycle for Rails {
    /// Two stamps per primary page (4 B per physical page).
    fn table_bytes(&self, _cfg: &Config, t: &Tables) -> Option<(&'static str, u64)> {
        Some(("mirror stamps", 4 * t.physical))
    }
    fn seams(&self) -> &'static [Seam] {
        &[Seam::ReadRoute, Seam::Placed, Seam::Erasing, Seam::Idle]
    }

    /// The drive was preconditioned mirrored: every page the fill left valid on the primary
    /// half is also on its twin (stamp 1).
    fn start(&mut self, cx: &mut Ctx) -> Result<(), SimError> {
        let half = cx.geo().data_pages();
        let map = &mut cx.ftl().map;
        self.primary = (0..half)
            .map(|ppn| {
                let valid = map.lpn(ppn) != NONE;
                if valid {
                    map.programmed(ppn + half, map.verify_version(ppn));
                }
                u32::from(valid)
            })
            .collect();
        self.twin.clone_from(&self.primary);
        self.stamp = 1;
        Ok(())
    }

    fn space_factor(&self) -> Option<f64> {
        Some(self.space_factor)
    }
}

impl ReadRoute for Rails {
    fn route(
        &mut self,
        cx: &mut Ctx,
        op: &mut Op,
        home_die: usize,
        conflicted: bool,
    ) -> Result<Route, SimError> {
        if op.ppn == NONE {
            return Ok(Route::Queue);
        }
        let twin = op.ppn + cx.geo().data_pages();
        let stamp = self.twin[op.ppn as usize];
        if stamp == 0 || stamp != self.primary[op.ppn as usize] {
            return Ok(Route::Queue);
        }
        let twin_die = cx.geo().die_of(Ppn(twin)).0 as usize;
        let twin_busy = cx.program_erase_ahead(twin_die);
        let use_twin = if self.period_ns > 0 {
            // Reads go to the read set when it holds the current version.
            primary_writes(self.period_ns, cx.now().ns())
        } else if conflicted {
            !twin_busy
        } else {
            !twin_busy && cx.dies()[twin_die].load() < cx.dies()[home_die].load()
        };
        if use_twin {
            cx.metrics().redundancy.redirected += 1;
            // The twin was programmed at the primary's level: keep it.
            cx.read_at(op, twin);
        }
        Ok(Route::Queue)
    }
}

impl WriteFanout for Rails {
    /// A host or GC program placed on the primary half is mirrored at once.
    fn placed(&mut self, cx: &mut Ctx, id: u32) -> Result<(), SimError> {
        let src = cx.op(id).clone();
        if !matches!(src.cause, Cause::User | Cause::Gc) {
            return Ok(());
        }
        let twin = src.ppn + cx.geo().data_pages();
        let plane = cx.plane_of(twin).0;
        let mut op = cx.blank_op(OpKind::Program, Cause::Redundancy, plane);
        op.ppn = twin;
        op.lpn = src.lpn;
        op.level = src.level;
        op.transfer = true;
        op.version = if src.cause == Cause::Gc {
            cx.ftl_ref().map.verify_version(src.src)
        } else {
            src.version
        };
        // Stamps wrap after 2^32 placements, skipping 0; a twin can hold an old stamp only
        // until its block's erase, far sooner.
        self.stamp = self.stamp.checked_add(1).unwrap_or(1);
        self.primary[src.ppn as usize] = self.stamp;
        op.src = self.stamp;
        // With role switching the host write is done when the primary has it; the mirror
        // catches up in its next write period.
        if self.period_ns == 0 {
            op.req = src.req;
            if src.req != NONE {
                cx.add_pages(src.req, 1);
            }
        }
        cx.metrics().redundancy.mirror_programs += 1;
        let die = op.die as usize;
        let id = cx.new_op(op);
        cx.enqueue(die, QueueKind::Write, id);
        cx.dispatch(die);
        Ok(())
    }

    /// Erasing a primary block erases its twin too.
    fn notice(&mut self, cx: &mut Ctx, n: Notice) {
        let Notice::Erasing(block) = n else { return };
        let g = cx.geo();
        let twin = block + g.data_pages() / g.pages_per_block;
        let plane = g.plane_of_block(BlockId(twin)).0;
        let mut op = cx.blank_op(OpKind::Erase, Cause::Redundancy, plane);
        op.src = twin;
        let die = op.die as usize;
        let id = cx.new_op(op);
        cx.enqueue(die, QueueKind::Internal, id);
        cx.dispatch(die);
    }
}

impl OwnedOps for Rails {
    fn done(&mut self, cx: &mut Ctx, op: &Op) -> Result<(), SimError> {
        let g = cx.geo();
        let (half, ppb) = (g.data_pages(), g.pages_per_block);
        match op.kind {
            OpKind::Program => {
                cx.ftl().map.programmed(op.ppn, op.version);
                self.twin[(op.ppn - half) as usize] = op.src;
                if op.req != NONE {
                    cx.page_done(op.req);
                }
            }
            OpKind::Erase => {
                cx.ftl().blocks[op.src as usize].erase_count += 1;
                let first = (op.src * ppb - half) as usize;
                self.twin[first..first + ppb as usize].fill(0);
            }
            OpKind::Read => unreachable!("Rails queues no reads of its own"),
        }
        Ok(())
    }

    /// Role switching: the roles swap; the new write set starts its held work.
    fn timer(&mut self, cx: &mut Ctx, _a: u32, _b: u32) {
        self.switch_pending = false;
        cx.metrics().redundancy.role_switches += 1;
        for die in 0..cx.dies().len() {
            cx.dispatch(die);
        }
    }

    /// Role switching: a die of the read set holding programs or erases wakes up at the next
    /// switch.
    fn idle(&mut self, cx: &mut Ctx, die: usize) {
        if self.switch_pending
            || !self.gated(die, cx.now().ns())
            || cx.dies()[die].queues.queued_program_erase == 0
        {
            return;
        }
        let period = self.period_ns;
        let at = (cx.now().ns() / period + 1).saturating_mul(period);
        self.switch_pending = true;
        cx.timer(SimTime(at), 0, 0);
    }
}

impl HostMap for Rails {}
impl GcRelocate for Rails {}
impl HostCache for Rails {}
