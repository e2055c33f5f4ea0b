//! TTFlash's parity bookkeeping: which stripe each data page belongs to, which FTL page holds
//! each stripe's parity, and when a parity page stops being needed.
//!
//! Parity pages get logical ids of their own, appended to the FTL's logical table (after the
//! host's pages and any dedup contents), so the FTL maps, validates, relocates and conserves
//! them like data. Stripes are logical: a GC move keeps a page's contents (and, GC being per
//! plane, its die), so under read-modify-write it changes no parity; under full-stripe
//! updates a moved page joins a new stripe like a host write (its old stripe loses it).

use crate::config::{Config, ParityUpdate};
use crate::flash::{Geometry, Level, Ppn};
use crate::ftl::mapping::NONE;
use crate::ftl::Ftl;
use crate::sched::Cause;
use crate::sim::{Ctx, Op, SimError};
use crate::verify::VerifyError;
use rustc_hash::FxHashMap;

/// The plane of `die` that parity page `id` is programmed on: parity ids are spread evenly
/// over the die's planes by a hash (GC keeps every plane's free blocks at the same level, so
/// "the plane with the most free blocks" would pick the first plane nearly always and fill it
/// up). Not `id % planes`: ids are handed out in the order stripes are first written, so with
/// k = 1 every parity page of one die would share the plane parity of its data page's index
/// and fill that plane (issue 33, N10).
pub(super) fn plane(geo: &Geometry, id: u32, die: u32) -> u32 {
    let ppd = geo.planes_per_die;
    die * ppd + (id.wrapping_mul(0x85EB_CA6B) >> 13) % ppd
}

/// One stripe, keyed by its parity page's logical id.
#[derive(Debug, Clone, Copy)]
struct Stripe {
    /// The die its parity is programmed on.
    die: u32,
    /// Full stripes: its data pages that are current.
    live: u32,
    /// Full stripes: all k pages placed and the parity program queued.
    closed: bool,
    /// Parity updates due and not yet programmed (a read-modify-write's read included).
    programs: u32,
}

/// The parity state of the drive.
#[derive(Debug)]
pub(super) struct Parity {
    k: u32,
    /// Data dies.
    dies: u32,
    rmw: bool,
    /// Parity id → stripe.
    stripes: FxHashMap<u32, Stripe>,
    /// Full stripes: data page → parity id of its stripe (`NONE`: in none).
    member: Vec<u32>,
    /// Full stripes, per group: the open stripe's parity id and pages placed in it.
    open: Vec<Option<(u32, u32)>>,
    /// Full stripes, per group: stripes closed so far (rotates the parity die).
    closed: Vec<u64>,
    /// Ids of dead stripes, reused before the logical table grows.
    free: Vec<u32>,
    /// Read-modify-write: static stripe index (`lpn / k`) → parity id.
    by_index: FxHashMap<u32, u32>,
    /// Every id ever handed to a parity page, dead stripes' included: a relocation of a parity
    /// page that finishes after its stripe died must not be taken for data.
    ids: rustc_hash::FxHashSet<u32>,
}

impl Parity {
    pub(super) fn new(cfg: &Config) -> Self {
        let k = cfg.redundancy.ttflash_k;
        let dies = crate::flash::Geometry::of(cfg).data_dies();
        let groups = dies / (k + 1);
        Parity {
            k,
            dies,
            rmw: cfg.redundancy.parity_update == ParityUpdate::ReadModifyWrite,
            stripes: FxHashMap::default(),
            member: Vec::new(),
            open: vec![None; groups as usize],
            closed: vec![0; groups as usize],
            free: Vec::new(),
            by_index: FxHashMap::default(),
            ids: rustc_hash::FxHashSet::default(),
        }
    }

    pub(super) fn read_modify_write(&self) -> bool {
        self.rmw
    }

    /// Whether `lpn` is or was a parity page (ids of dead stripes are kept for parity).
    pub(super) fn is_parity_id(&self, lpn: u32) -> bool {
        self.ids.contains(&lpn)
    }

    /// The die parity page `lpn` is programmed on.
    pub(super) fn die_of(&self, lpn: u32) -> u32 {
        self.stripes[&lpn].die
    }

    fn new_id(&mut self, cx: &mut Ctx, die: u32) -> Result<u32, SimError> {
        let id = match self.free.pop() {
            Some(id) => id,
            None => cx.ftl().map.push_logical()?,
        };
        self.ids.insert(id);
        self.stripes.insert(
            id,
            Stripe {
                die,
                live: 0,
                closed: false,
                programs: 0,
            },
        );
        Ok(id)
    }

    /// The static stripe of data page `lpn` (read-modify-write): its parity id and die,
    /// created on first use. The parity die is spread over all data dies by a hash of the
    /// stripe index (the index itself, and the group of the first page's die, correlate with
    /// the dies the striping puts pages on, which would load some dies twice as much as
    /// others), skipping `die`.
    fn static_stripe(&mut self, cx: &mut Ctx, lpn: u32, die: u32) -> Result<(u32, u32), SimError> {
        let index = lpn / self.k;
        if let Some(&id) = self.by_index.get(&index) {
            return Ok((id, self.stripes[&id].die));
        }
        let dies = self.dies;
        let mut parity_die = (index.wrapping_mul(0x9E37_79B9) >> 16) % dies;
        if parity_die == die {
            parity_die = (parity_die + 1) % dies;
        }
        let id = self.new_id(cx, parity_die)?;
        self.by_index.insert(index, id);
        Ok((id, parity_die))
    }

    /// Data page `lpn` (its current version) was placed on `die` by a host write or a GC
    /// move. Returns the parity page that is now due and its die, if any (the caller queues
    /// its update and says so with [`Parity::queued`]).
    pub(super) fn placed(
        &mut self,
        cx: &mut Ctx,
        lpn: u32,
        die: u32,
        cause: Cause,
    ) -> Result<Option<(u32, u32)>, SimError> {
        if self.rmw {
            if cause != Cause::User {
                return Ok(None);
            }
            return self.static_stripe(cx, lpn, die).map(Some);
        }
        self.left(cx, lpn);
        let group = (die / (self.k + 1)) as usize;
        let (id, placed) = match self.open[group] {
            Some(open) => open,
            None => (self.new_id(cx, 0)?, 0),
        };
        if self.member.len() <= lpn as usize {
            self.member.resize(lpn as usize + 1, NONE);
        }
        self.member[lpn as usize] = id;
        let stripe = self.stripes.get_mut(&id).expect("open stripe");
        stripe.live += 1;
        if placed + 1 < self.k {
            self.open[group] = Some((id, placed + 1));
            return Ok(None);
        }
        self.open[group] = None;
        let width = u64::from(self.k + 1);
        self.closed[group] += 1;
        stripe.die = group as u32 * (self.k + 1) + (self.closed[group] % width) as u32;
        stripe.closed = true;
        Ok(Some((id, stripe.die)))
    }

    /// An update of parity page `id` was queued.
    pub(super) fn queued(&mut self, id: u32) {
        self.stripes.get_mut(&id).expect("a stripe").programs += 1;
    }

    /// Full stripes: data page `lpn` is no longer current in its stripe (overwritten, moved
    /// to another stripe or trimmed); a closed stripe left with no current page loses its
    /// parity.
    pub(super) fn left(&mut self, cx: &mut Ctx, lpn: u32) {
        let Some(id) = self
            .member
            .get(lpn as usize)
            .copied()
            .filter(|&s| s != NONE)
        else {
            return;
        };
        self.member[lpn as usize] = NONE;
        let stripe = self.stripes.get_mut(&id).expect("member of a stripe");
        stripe.live -= 1;
        if stripe.live == 0 && stripe.closed && stripe.programs == 0 {
            self.kill(cx, id);
        }
    }

    /// Trims a dead stripe's parity page and frees its id.
    fn kill(&mut self, cx: &mut Ctx, id: u32) {
        cx.trim(id);
        self.stripes.remove(&id);
        self.free.push(id);
    }

    /// A parity program finished: it becomes the stripe's parity, unless the stripe died
    /// meanwhile (the page is then written but never valid).
    pub(super) fn programmed(&mut self, cx: &mut Ctx, op: &Op) {
        let id = op.lpn;
        cx.release(id);
        let stripe = self.stripes.get_mut(&id).expect("a stripe's parity");
        stripe.programs -= 1;
        let dead = !self.rmw && stripe.live == 0;
        let idle = stripe.programs == 0;
        if dead {
            cx.ftl().commit_unmapped(Ppn(op.ppn));
            if idle {
                self.kill(cx, id);
            }
        } else if let Some(old) = cx.ftl().commit_write(Ppn(op.ppn), id, op.version) {
            cx.start_gc(cx.plane_of(old.0).0);
        }
        cx.start_gc(op.plane);
    }

    /// Preconditioned data gets its parity now, written instantly like the fill: full
    /// stripes of k current pages per group in logical order (a remainder stays open), or the
    /// static stripes holding any written page.
    pub(super) fn start(&mut self, cx: &mut Ctx) -> Result<(), SimError> {
        let logical = cx.ftl_ref().map.logical_pages();
        let mut due: Vec<(u32, u32)> = Vec::new();
        for lpn in 0..logical {
            let ppn = cx.ftl_ref().map.ppn(lpn);
            if ppn == NONE {
                continue;
            }
            let die = cx.geo().die_of(Ppn(ppn)).0;
            // Consecutive pages share a static stripe: its parity is written once.
            if let Some(d) = self.placed(cx, lpn, die, Cause::User)? {
                if due.last() != Some(&d) {
                    due.push(d);
                }
            }
        }
        for (id, die) in due {
            let plane = plane(cx.geo(), id, die);
            cx.ftl()
                .instant_write_at(id, crate::flash::PlaneId(plane), Level::Normal)?;
        }
        Ok(())
    }

    /// `--verify`: every current data page is in exactly the stripe it is counted in; every
    /// closed stripe with a current page has exactly one valid parity page (the mapping), a
    /// dead stripe's id none.
    pub(super) fn check(&self, ftl: &Ftl) -> Result<(), VerifyError> {
        let fail = |m: String| Err(VerifyError(format!("TTFlash parity: {m}")));
        for (&id, s) in &self.stripes {
            if s.programs > 0 {
                return fail(format!(
                    "stripe {id}: {} parity programs never finished",
                    s.programs
                ));
            }
            let needed = if self.rmw {
                true
            } else {
                s.closed && s.live > 0
            };
            if needed && ftl.map.ppn(id) == NONE {
                return fail(format!(
                    "stripe {id} has current data but no valid parity page"
                ));
            }
        }
        for &id in &self.free {
            if ftl.map.ppn(id) != NONE {
                return fail(format!("dead stripe {id} still has a valid parity page"));
            }
        }
        if self.rmw {
            return Ok(());
        }
        let mut live: FxHashMap<u32, u32> = FxHashMap::default();
        for (lpn, &id) in self.member.iter().enumerate() {
            if id == NONE {
                continue;
            }
            if ftl.map.ppn(lpn as u32) == NONE {
                return fail(format!("lpn {lpn} counts in stripe {id} but holds no data"));
            }
            *live.entry(id).or_default() += 1;
        }
        for (&id, s) in &self.stripes {
            let counted = live.get(&id).copied().unwrap_or(0);
            if counted != s.live {
                return fail(format!(
                    "stripe {id} counts {} current pages, its members are {counted}",
                    s.live
                ));
            }
        }
        Ok(())
    }
}
