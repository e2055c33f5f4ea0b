//! Rails (mirrored chips) and TTFlash (RAID-5 inside the SSD with read reconstruction), the
//! redundancy baselines of hotr.txt.
//!
//! * Rails: the second half of the channels mirrors the first page for page: a program placed
//!   at `ppn` on the primary half is also made at `ppn + half` (a redundancy program, queued at
//!   once, so both replicas are written in parallel), and every erase of a primary block erases
//!   its twin. A read goes to the replica whose die is not busy with a program or erase, and to
//!   the less loaded one otherwise; a twin is used only once its program of the current version
//!   has completed. With role switching (`redundancy.rails_switch_us`) the halves alternate
//!   periods: the read set starts no program or erase, reads go to it when it holds the
//!   current version, and a host write completes when the primary has it.
//! * TTFlash: the data dies form groups of k+1. Writes are striped with buffering: every k host
//!   programs in a group add one parity program on the group's parity die for that stripe
//!   (rotating). A read whose die is running or has queued a program or erase is rebuilt from
//!   the other k dies of its group (k reconstruction reads); the page completes when all have.
//!   Parity pages are written but not mapped (space and programs are charged; their contents
//!   are not modelled) — see docs/schemes/ttflash.md.

use super::{Op, Simulation};
use crate::config::RedundancyScheme;
use crate::flash::{BlockId, DieId, Ppn};
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::verify;

/// Per-run redundancy state.
#[derive(Debug, Default)]
pub(super) struct Redundancy {
    /// Rails: logical page held by each mirror page (`NONE` if none yet or erased).
    twin_lpn: Vec<u32>,
    /// TTFlash: host programs started per group.
    group_writes: Vec<u64>,
    /// Rails role switching: a `RailsSwitch` event is pending.
    switch_pending: bool,
}

impl Redundancy {
    /// The state for `cfg`'s scheme. Rails: the drive was preconditioned mirrored, so every
    /// page the fill left valid on the primary half is also on its twin.
    pub(super) fn new(
        cfg: &crate::config::Config,
        geo: &crate::flash::Geometry,
        ftl: &mut crate::ftl::Ftl,
    ) -> Self {
        match cfg.redundancy.scheme {
            RedundancyScheme::None => Redundancy::default(),
            RedundancyScheme::Rails => {
                let half = geo.data_pages();
                let twin_lpn = (0..half)
                    .map(|ppn| {
                        let lpn = ftl.map.lpn(ppn);
                        if lpn != NONE {
                            ftl.map.programmed(ppn + half, ftl.map.held(ppn));
                        }
                        lpn
                    })
                    .collect();
                Redundancy {
                    twin_lpn,
                    ..Redundancy::default()
                }
            }
            RedundancyScheme::Ttflash => Redundancy {
                group_writes: vec![0; (geo.data_dies() / (cfg.redundancy.ttflash_k + 1)) as usize],
                ..Redundancy::default()
            },
        }
    }
}

impl Simulation<'_> {
    /// After a host or GC program was placed: Rails mirrors it; TTFlash counts the stripe.
    pub(super) fn redundancy_after_program(&mut self, id: u32) {
        let op = &self.ops[id as usize];
        if op.preallocated || !matches!(op.cause, Cause::User | Cause::Gc) {
            return;
        }
        match self.cfg.redundancy.scheme {
            RedundancyScheme::None => {}
            RedundancyScheme::Rails => self.mirror_program(id),
            RedundancyScheme::Ttflash if op.cause == Cause::User => self.stripe_write(op.die),
            RedundancyScheme::Ttflash => {}
        }
    }

    fn mirror_program(&mut self, id: u32) {
        let src = self.ops[id as usize].clone();
        let twin = src.ppn + self.geo.data_pages();
        let plane = self.geo.plane_of(Ppn(twin)).0;
        let mut op = self.blank_op(OpKind::Program, Cause::Redundancy, plane);
        op.ppn = twin;
        op.preallocated = true;
        op.lpn = src.lpn;
        op.level = src.level;
        op.transfer = true;
        op.version = if src.cause == Cause::Gc {
            self.ftl.map.held(src.src)
        } else {
            src.version
        };
        // With role switching the host write is done when the primary has it; the mirror
        // catches up in its next write period.
        if self.cfg.redundancy.rails_switch_us == 0 {
            op.req = src.req;
            if src.req != NONE {
                self.reqs[src.req as usize].pages_left += 1;
            }
        }
        self.metrics.redundancy.mirror_programs += 1;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Write, id);
        self.try_dispatch(die);
    }

    /// Rails role switching: the period length in ns (0 = off).
    fn switch_period_ns(&self) -> u64 {
        self.cfg.redundancy.rails_switch_us.saturating_mul(1000)
    }

    /// Rails role switching: whether the primary half (rather than the mirror) takes programs
    /// and erases now.
    fn primary_writes(&self) -> bool {
        (self.now.ns() / self.switch_period_ns()) % 2 == 0
    }

    /// Rails role switching: whether `die` is in the read set now, so it starts no program or
    /// erase.
    pub(super) fn rails_gated(&self, die: usize) -> bool {
        if self.switch_period_ns() == 0 {
            return false;
        }
        let primary = (die as u32) < self.geo.data_dies();
        primary != self.primary_writes()
    }

    /// Rails role switching: a die of the read set holding programs or erases wakes up at the
    /// next switch.
    pub(super) fn rails_wake(&mut self, die: usize) {
        if self.redundancy.switch_pending
            || !self.rails_gated(die)
            || self.dies[die].queues.queued_program_erase == 0
        {
            return;
        }
        let period = self.switch_period_ns();
        let at = (self.now.ns() / period + 1).saturating_mul(period);
        self.redundancy.switch_pending = true;
        self.schedule(crate::time::SimTime(at), super::Event::RailsSwitch);
    }

    /// Rails role switching: the roles swap; the new write set starts its held work.
    pub(super) fn on_rails_switch(&mut self) {
        self.redundancy.switch_pending = false;
        self.metrics.redundancy.role_switches += 1;
        for die in 0..self.dies.len() {
            self.try_dispatch(die);
        }
    }

    /// Rails: erasing a primary block erases its twin too.
    pub(super) fn mirror_erase(&mut self, block: u32) {
        if self.cfg.redundancy.scheme != RedundancyScheme::Rails {
            return;
        }
        let twin = block + self.geo.data_pages() / self.geo.pages_per_block;
        let plane = self.geo.plane_of_block(BlockId(twin)).0;
        let mut op = self.blank_op(OpKind::Erase, Cause::Redundancy, plane);
        op.src = twin;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Internal, id);
        self.try_dispatch(die);
    }

    fn stripe_write(&mut self, die: u32) {
        let k = self.cfg.redundancy.ttflash_k;
        let group = die / (k + 1);
        let n = &mut self.redundancy.group_writes[group as usize];
        *n += 1;
        if *n % u64::from(k) != 0 {
            return;
        }
        let stripe = *n / u64::from(k);
        let parity_die = group * (k + 1) + (stripe % u64::from(k + 1)) as u32;
        let ppd = self.geo.planes_per_die;
        let plane = (parity_die * ppd..(parity_die + 1) * ppd)
            .max_by_key(|&p| {
                (
                    self.ftl.planes[p as usize].free_blocks(),
                    std::cmp::Reverse(p),
                )
            })
            .expect("a die has planes");
        let op = self.blank_op(OpKind::Program, Cause::Redundancy, plane);
        self.metrics.redundancy.parity_programs += 1;
        let id = self.new_op(op);
        self.enqueue(parity_die as usize, QueueKind::Write, id);
        self.try_dispatch(parity_die as usize);
    }

    /// Rails: the replica a read goes to. Returns the twin page if it should serve the read.
    pub(super) fn rails_route(
        &mut self,
        lpn: u32,
        ppn: u32,
        home_die: usize,
        conflicted: bool,
    ) -> Option<u32> {
        if self.cfg.redundancy.scheme != RedundancyScheme::Rails || ppn == NONE {
            return None;
        }
        let twin = ppn + self.geo.data_pages();
        let current = self.redundancy.twin_lpn[(twin - self.geo.data_pages()) as usize] == lpn
            && self.ftl.map.held(twin) == self.ftl.map.held(ppn);
        if !current {
            return None;
        }
        let twin_die = self.geo.die_of(Ppn(twin)).0 as usize;
        let (running, queued) = self.program_erase_ahead(twin_die);
        let twin_busy = running || queued;
        let use_twin = if self.switch_period_ns() > 0 {
            // Reads go to the read set when it holds the current version.
            self.primary_writes()
        } else if conflicted {
            !twin_busy
        } else {
            !twin_busy && self.dies[twin_die].load() < self.dies[home_die].load()
        };
        if use_twin {
            self.metrics.redundancy.redirected += 1;
        }
        use_twin.then_some(twin)
    }

    /// TTFlash: rebuilds a conflicted read from the other k dies of its group. Returns whether
    /// it did (the read page then completes when the reconstruction reads have).
    pub(super) fn ttflash_rebuild(
        &mut self,
        mut parent: Op,
        home_die: usize,
        conflicted: bool,
    ) -> Result<bool, super::SimError> {
        if self.cfg.redundancy.scheme != RedundancyScheme::Ttflash || !conflicted {
            return Ok(false);
        }
        if self.opts.verify {
            // The stripe rebuilds the page's current contents: check them now.
            verify::check_read(
                &self.ftl,
                parent.lpn,
                parent.ppn,
                parent.version,
                parent.erase_epoch,
            )?;
        }
        let k = self.cfg.redundancy.ttflash_k;
        let base = (home_die as u32 / (k + 1)) * (k + 1);
        parent.ppn = NONE;
        parent.version = 0;
        parent.pending = k;
        parent.started = self.now;
        let pid = self.new_op(parent);
        self.metrics.redundancy.rebuilt += 1;
        for die in (base..base + k + 1).filter(|&d| d != home_die as u32) {
            let plane = self.geo.die_plane(DieId(die));
            let mut child = self.blank_op(OpKind::Read, Cause::Redundancy, plane.0);
            child.src = pid;
            child.snapshot = self.dies[die as usize].occupancy(self.now);
            self.metrics.redundancy.reconstruction_reads += 1;
            let id = self.new_op(child);
            self.enqueue(die as usize, QueueKind::Read, id);
            self.try_dispatch(die as usize);
        }
        Ok(true)
    }

    /// A redundancy operation finished.
    pub(super) fn redundancy_done(&mut self, op: &Op) -> Result<(), super::SimError> {
        match op.kind {
            OpKind::Program if op.preallocated => {
                self.ftl.map.programmed(op.ppn, op.version);
                let i = (op.ppn - self.geo.data_pages()) as usize;
                self.redundancy.twin_lpn[i] = op.lpn;
                if op.req != NONE {
                    self.page_done(op.req);
                }
            }
            OpKind::Program => self.ftl.commit_unmapped(Ppn(op.ppn)),
            OpKind::Erase => {
                self.ftl.blocks[op.src as usize].erase_count += 1;
                let first = (op.src * self.geo.pages_per_block - self.geo.data_pages()) as usize;
                self.redundancy.twin_lpn[first..first + self.geo.pages_per_block as usize]
                    .fill(NONE);
            }
            OpKind::Read => {
                let parent = &mut self.ops[op.src as usize];
                parent.pending -= 1;
                if parent.pending == 0 {
                    let parent = parent.clone();
                    self.free_ops.push(op.src);
                    self.finish_read(&parent)?;
                }
            }
        }
        Ok(())
    }
}
