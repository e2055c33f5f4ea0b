//! TTFlash (hotr.txt's RAID-inside-the-SSD baseline): the data dies form groups of k+1 with
//! read reconstruction.
//!
//! * Writes are striped with buffering: every k host programs in a group add one parity
//!   program on the group's parity die for that stripe (rotating).
//! * A read whose die is running or has queued a program or erase is rebuilt from the other k
//!   dies of its group (k reconstruction reads); the page completes when all have.
//! * Parity pages are written but not mapped (space and programs are charged; their contents
//!   are not modelled) — see docs/schemes/ttflash.md.

use super::policy::{
    GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Route, Seam, WriteFanout,
};
use super::{Policies, Scheme};
use crate::config::{Config, RedundancyScheme};
use crate::flash::{DieId, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::sim::{Ctx, Op, SimError};
use crate::verify;
use rustc_hash::FxHashMap;

/// TTFlash: RAID-5 across dies; a read of a busy die is rebuilt from the others.
pub const TTFLASH: Scheme = Scheme {
    name: "ttflash",
    summary: "TTFlash: k+1 RAID-5 stripes across dies; a read of a busy die is rebuilt from parity",
    paper: "hotr.txt §IV (TTFlash, 4+1)",
    sets: &[
        ("redundancy.scheme", "\"ttflash\""),
        ("redundancy.ttflash_k", "4"),
    ],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.redundancy.scheme == RedundancyScheme::Ttflash),
    params: &[],
    install,
};

fn install(cfg: &Config, p: &mut Policies) {
    let k = cfg.redundancy.ttflash_k;
    let groups = crate::flash::Geometry::of(cfg).data_dies() / (k + 1);
    p.push(Box::new(TtFlash {
        k,
        group_writes: vec![0; groups as usize],
        pending: FxHashMap::default(),
    }));
}

/// The policy object.
#[derive(Debug)]
struct TtFlash {
    k: u32,
    /// Host programs started per group.
    group_writes: Vec<u64>,
    /// Rebuilt reads (by op id): reconstruction reads still outstanding.
    pending: FxHashMap<u32, u32>,
}

impl ReadRoute for TtFlash {
    /// Rebuilds a conflicted read from the other k dies of its group.
    fn route(
        &mut self,
        cx: &mut Ctx,
        op: &mut Op,
        home_die: usize,
        conflicted: bool,
    ) -> Result<Route, SimError> {
        if !conflicted {
            return Ok(Route::Queue);
        }
        if cx.verify() {
            // The stripe rebuilds the page's current contents: check them now.
            verify::check_read(cx.ftl_ref(), op.lpn, op.ppn, op.version, op.erase_epoch)?;
        }
        let k = self.k;
        let base = (home_die as u32 / (k + 1)) * (k + 1);
        let mut parent = op.clone();
        parent.ppn = NONE;
        parent.version = 0;
        parent.started = cx.now();
        let pid = cx.new_op(parent);
        self.pending.insert(pid, k);
        cx.metrics().redundancy.rebuilt += 1;
        for die in (base..base + k + 1).filter(|&d| d != home_die as u32) {
            let plane = cx.geo().die_plane(DieId(die));
            let mut child = cx.blank_op(OpKind::Read, Cause::Redundancy, plane.0);
            child.src = pid;
            child.snapshot = cx.dies()[die as usize].occupancy(cx.now());
            cx.metrics().redundancy.reconstruction_reads += 1;
            let id = cx.new_op(child);
            cx.enqueue(die as usize, QueueKind::Read, id);
            cx.dispatch(die as usize);
        }
        Ok(Route::Taken)
    }
}

impl WriteFanout for TtFlash {
    /// Every k host programs in a group add a parity program on the stripe's parity die.
    fn placed(&mut self, cx: &mut Ctx, id: u32) {
        let op = cx.op(id);
        if op.cause != Cause::User {
            return;
        }
        let k = self.k;
        let group = op.die / (k + 1);
        let n = &mut self.group_writes[group as usize];
        *n += 1;
        if *n % u64::from(k) != 0 {
            return;
        }
        let stripe = *n / u64::from(k);
        let parity_die = group * (k + 1) + (stripe % u64::from(k + 1)) as u32;
        let ppd = cx.geo().planes_per_die;
        let planes = &cx.ftl_ref().planes;
        let plane = (parity_die * ppd..(parity_die + 1) * ppd)
            .max_by_key(|&p| (planes[p as usize].free_blocks(), std::cmp::Reverse(p)))
            .expect("a die has planes");
        let op = cx.blank_op(OpKind::Program, Cause::Redundancy, plane);
        cx.metrics().redundancy.parity_programs += 1;
        let id = cx.new_op(op);
        cx.enqueue(parity_die as usize, QueueKind::Write, id);
        cx.dispatch(parity_die as usize);
    }
}

impl OwnedOps for TtFlash {
    fn done(&mut self, cx: &mut Ctx, op: &Op) -> Result<(), SimError> {
        match op.kind {
            OpKind::Program => cx.ftl().commit_unmapped(Ppn(op.ppn)),
            OpKind::Read => {
                let left = self.pending.get_mut(&op.src).expect("a rebuilt read");
                *left -= 1;
                if *left == 0 {
                    self.pending.remove(&op.src);
                    let parent = cx.op(op.src).clone();
                    cx.free_op(op.src);
                    cx.finish_read(parent);
                }
            }
            OpKind::Erase => unreachable!("TTFlash queues no erases of its own"),
        }
        Ok(())
    }
}

impl Lifecycle for TtFlash {
    fn seams(&self) -> &'static [Seam] {
        &[Seam::ReadRoute, Seam::Placed]
    }

    fn space_factor(&self) -> Option<f64> {
        let k = f64::from(self.k);
        Some((k + 1.0) / k)
    }
}

impl HostMap for TtFlash {}
impl GcRelocate for TtFlash {}
impl HostCache for TtFlash {}
