//! TTFlash (hotr.txt's RAID-inside-the-SSD baseline): the data dies form groups of k+1 with
//! read reconstruction.
//!
//! * Parity pages are FTL pages of their own (logical ids beyond the host's, see
//!   [`parity::Parity`]): valid while their stripe needs them, moved by GC like data, counted
//!   in every conservation check.
//! * `parity_update = "read-modify-write"` (default): data page `lpn` belongs to the static
//!   stripe `lpn / k`; every data program reads that stripe's parity (if written) and then
//!   programs its new version on the stripe's parity die.
//! * `parity_update = "stripe"`: every k data programs of a group — host writes and GC
//!   relocations alike (a moved page re-stripes) — form a stripe with one parity program on
//!   the stripe's parity die (rotating); a stripe's parity is trimmed when none of its pages is
//!   current any more.
//! * A read whose die is running or has queued a program or erase is rebuilt from the other k
//!   dies of its group (k reconstruction reads); the page completes when all have.
//! * Preconditioned data gets its parity at start, written instantly like the fill.

mod parity;

use super::{Policies, Scheme};
use crate::config::{Config, RedundancyScheme};
use crate::flash::DieId;
use crate::ftl::mapping::NONE;
use crate::ftl::Ftl;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::sim::memory::Tables;
use crate::sim::policy::{
    GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Route, Seam, WriteFanout,
};
use crate::sim::{Ctx, Notice, Op, SimError};
use crate::verify::{self, VerifyError};
use parity::Parity;
use rustc_hash::FxHashMap;

/// TTFlash: RAID-5 across dies; a read of a busy die is rebuilt from the others.
pub const TTFLASH: Scheme = Scheme {
    name: "ttflash",
    summary: "TTFlash: k+1 RAID-5 stripes across dies (mapped parity, read-modify-write by default); a read of a busy die is rebuilt from parity",
    paper: "hotr.txt §IV (TTFlash, 4+1); deduphr.txt Table 3 (frequent parity updates)",
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
    p.push(Box::new(TtFlash {
        k: cfg.redundancy.ttflash_k,
        pending: FxHashMap::default(),
        parity: Parity::new(cfg),
    }));
}

/// The policy object.
#[derive(Debug)]
struct TtFlash {
    k: u32,
    /// Rebuilt reads (by op id): reconstruction reads still outstanding.
    pending: FxHashMap<u32, u32>,
    parity: Parity,
}

impl TtFlash {
    /// Queues a program of the next version of parity page `lpn` on `die`.
    fn program_parity(cx: &mut Ctx, lpn: u32, die: u32) {
        let plane = parity::plane(cx.geo(), lpn, die);
        let mut op = cx.blank_op(OpKind::Program, Cause::Redundancy, plane);
        op.lpn = lpn;
        op.version = cx.ftl().map.next_version(lpn);
        // The controller holds the new parity until it is programmed.
        cx.hold(lpn, op.version);
        cx.metrics().redundancy.parity_programs += 1;
        let id = cx.new_op(op);
        cx.enqueue(die as usize, QueueKind::Write, id);
        cx.dispatch(die as usize);
    }

    /// Read-modify-write: reads the parity page `lpn` (its old version) if it has one, else
    /// programs it at once.
    fn update_parity(cx: &mut Ctx, lpn: u32, die: u32) {
        let ppn = cx.ftl_ref().map.ppn(lpn);
        if ppn == NONE {
            Self::program_parity(cx, lpn, die);
            return;
        }
        let plane = cx.plane_of(ppn).0;
        let mut op = cx.blank_op(OpKind::Read, Cause::Redundancy, plane);
        op.lpn = lpn;
        op.ppn = ppn;
        op.src = NONE;
        cx.metrics().redundancy.parity_reads += 1;
        let read_die = op.die as usize;
        let id = cx.new_op(op);
        cx.enqueue(read_die, QueueKind::Read, id);
        cx.dispatch(read_die);
    }
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
            cx.metrics().redundancy.reconstruction_reads += 1;
            let id = cx.new_op(child);
            cx.enqueue(die as usize, QueueKind::Read, id);
            cx.dispatch(die as usize);
        }
        Ok(Route::Taken)
    }
}

impl WriteFanout for TtFlash {
    /// A data program (host or GC) joins a stripe; the parity it makes due is queued.
    fn placed(&mut self, cx: &mut Ctx, id: u32) -> Result<(), SimError> {
        let op = cx.op(id);
        let (lpn, die, cause) = (op.lpn, op.die, op.cause);
        let rmw = self.parity.read_modify_write();
        // Read-modify-write updates parity on every host program; a full stripe takes the
        // current version of a page only (not one a newer write is replacing).
        let current = match cause {
            Cause::User => rmw || op.version == cx.ftl_ref().map.newest(lpn),
            // A relocation of the newest version (not of one a host write is replacing).
            Cause::Gc if op.version > 0 => op.version == cx.ftl_ref().map.newest(lpn),
            // A copy of the page GC read: it is still the mapped page and holds the newest.
            Cause::Gc => {
                let map = &cx.ftl_ref().map;
                map.lpn(op.src) == lpn && map.mapped_version(lpn) == map.newest(lpn)
            }
            _ => return Ok(()),
        };
        if !current || self.parity.is_parity_id(lpn) {
            return Ok(());
        }
        if let Some((parity_lpn, parity_die)) = self.parity.placed(cx, lpn, die, cause)? {
            self.parity.queued(parity_lpn);
            if rmw {
                Self::update_parity(cx, parity_lpn, parity_die);
            } else {
                Self::program_parity(cx, parity_lpn, parity_die);
            }
        }
        Ok(())
    }

    /// A trimmed page (a dead content under dedup) leaves its stripe.
    fn notice(&mut self, cx: &mut Ctx, n: Notice) {
        if let Notice::Trimmed(lpn) = n {
            self.parity.left(cx, lpn);
        }
    }
}

impl OwnedOps for TtFlash {
    fn done(&mut self, cx: &mut Ctx, op: &Op) -> Result<(), SimError> {
        match op.kind {
            OpKind::Program => self.parity.programmed(cx, op),
            // The old parity is in the controller: program the new one on the same die.
            OpKind::Read if op.src == NONE => {
                let die = self.parity.die_of(op.lpn);
                Self::program_parity(cx, op.lpn, die);
            }
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
    /// One parity id per stripe (an extra mapping entry, its stripe record ≤ 32 B and index
    /// entries), plus a stripe id per data page for full stripes.
    fn table_bytes(&self, cfg: &Config, t: &Tables) -> Option<(&'static str, u64)> {
        let stripes = t.logical / u64::from(cfg.redundancy.ttflash_k) + 1;
        Some(("parity tables", stripes * (8 + 32 + 16) + 4 * t.physical))
    }
    fn seams(&self) -> &'static [Seam] {
        &[Seam::ReadRoute, Seam::Placed, Seam::Trimmed]
    }

    fn start(&mut self, cx: &mut Ctx) -> Result<(), SimError> {
        self.parity.start(cx)
    }

    fn verify(&self, ftl: &Ftl) -> Result<(), VerifyError> {
        self.parity.check(ftl)
    }

    fn space_factor(&self) -> Option<f64> {
        let k = f64::from(self.k);
        Some((k + 1.0) / k)
    }
}

impl HostMap for TtFlash {}
impl GcRelocate for TtFlash {}
impl HostCache for TtFlash {}
