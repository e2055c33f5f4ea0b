//! What a scheme's policy object sees of the core while the core calls it.
//!
//! A policy reads the drive (geometry, dies, mapping), updates its own state and counters, and
//! asks the core for actions: queue an operation, dispatch a die, start GC, schedule a timer,
//! complete a page. Those actions are recorded and performed, in the order asked, as soon as
//! the policy returns — so a policy never re-enters the core (or another policy) while it is
//! being called, and the effects happen exactly where they would if the core did them inline.

use super::policy::{Policy, Route, Seam};
use super::{Event, Op, SimError, Simulation};
use crate::config::Config;
use crate::flash::{Geometry, PlaneId, Ppn};
use crate::ftl::Ftl;
use crate::metrics::Metrics;
use crate::sched::Die;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::time::SimTime;

/// Something a policy tells the other policies (through the core).
#[derive(Debug, Clone, Copy)]
pub enum Notice {
    /// A new version of this (FTL) logical page was accepted: copies of the old one are stale.
    Written(u32),
    /// The host wrote this host page (before any host cache or host-map layer).
    HostWritten(u32),
    /// This (FTL) logical page was trimmed: it holds no data any more.
    Trimmed(u32),
    /// A content's reference count changed to `count` (a layer sharing contents).
    RefCount {
        /// Content id.
        cid: u32,
        /// References left.
        count: u32,
    },
    /// GC queued the erase of this block.
    Erasing(u32),
}

/// An action a policy asked for.
#[derive(Debug)]
pub(super) enum Cmd {
    Enqueue(usize, QueueKind, u32),
    Dispatch(usize),
    StartGc(u32),
    At(SimTime, Event),
    PageDone(u32),
    FinishRead(Box<Op>),
    Store(u32, u32),
    Notify(Notice),
    Call(u8, u32, u32),
}

/// The core, as a policy sees it.
pub struct Ctx<'s, 'w> {
    pub(super) sim: &'s mut Simulation<'w>,
    pub(super) cmds: Vec<Cmd>,
    /// Index of the policy being called (ops it creates are routed back to it).
    pub(super) owner: u8,
}

impl<'s, 'w> Ctx<'s, 'w> {
    pub(super) fn new(sim: &'s mut Simulation<'w>, owner: u8) -> Self {
        Ctx {
            sim,
            cmds: Vec::new(),
            owner,
        }
    }

    /// Records an action (the first one of a call takes a spare list, if there is one).
    fn push(&mut self, c: Cmd) {
        if self.cmds.capacity() == 0 {
            if let Some(v) = self.sim.spare_cmds.pop() {
                self.cmds = v;
            }
        }
        self.cmds.push(c);
    }

    /// Simulated time now.
    pub fn now(&self) -> SimTime {
        self.sim.now
    }
    /// The run's configuration.
    pub fn cfg(&self) -> &Config {
        &self.sim.cfg
    }
    /// The drive's geometry.
    pub fn geo(&self) -> &Geometry {
        &self.sim.geo
    }
    /// Whether the run checks versions and invariants (`--verify`).
    pub fn verify(&self) -> bool {
        self.sim.opts.verify
    }
    /// The dies (state, queues, load).
    pub fn dies(&self) -> &[Die] {
        &self.sim.dies
    }
    /// The FTL.
    pub fn ftl(&mut self) -> &mut Ftl {
        &mut self.sim.ftl
    }
    /// The FTL, read-only.
    pub fn ftl_ref(&self) -> &Ftl {
        &self.sim.ftl
    }
    /// The run's counters.
    pub fn metrics(&mut self) -> &mut Metrics {
        &mut self.sim.metrics
    }
    /// The device buffer, if there is one.
    pub fn device_buffer(&mut self) -> Option<&mut crate::buffer::LruBuffer> {
        self.sim.buffer.as_mut()
    }
    /// Whether the workload is over (no request left to issue or complete).
    pub fn workload_done(&self) -> bool {
        self.sim.host.exhausted && self.sim.host.outstanding == 0
    }
    /// The newest version of `lpn` in a program in flight, if any.
    pub fn in_flight_version(&self, lpn: u32) -> Option<u32> {
        self.sim.ftl.map.in_flight_version(lpn)
    }

    /// References to content `cid`, when a host-page layer counts them.
    pub fn references(&self, cid: u32) -> Option<u32> {
        self.sim.policies.mapper()?.references(cid)
    }

    /// A queued or running operation.
    pub fn op(&self, id: u32) -> &Op {
        &self.sim.ops[id as usize]
    }
    /// A fresh operation owned by the calling policy (its completion comes back to it).
    pub fn blank_op(&self, kind: OpKind, cause: Cause, plane: u32) -> Op {
        let mut op = self.sim.blank_op(kind, cause, plane);
        op.owner = self.owner;
        op
    }
    /// Stores an operation; returns its id.
    pub fn new_op(&mut self, op: Op) -> u32 {
        self.sim.new_op(op)
    }
    /// Releases an operation the policy held (not queued).
    pub fn free_op(&mut self, id: u32) {
        self.sim.free_ops.push(id);
    }
    /// Points a read at another physical copy of its page; returns the copy's block.
    pub fn read_at(&self, op: &mut Op, ppn: u32) -> usize {
        self.sim.read_copy_at(op, ppn)
    }
    /// Whether `die` is running, or has queued ahead of a new read, a program or erase.
    pub fn program_erase_ahead(&self, die: usize) -> bool {
        let (running, queued) = self.sim.program_erase_ahead(die);
        running || queued
    }
    /// Programs and erases a read queued now on `die` would wait for (running and queued).
    pub fn program_erase_work(&self, die: usize) -> u32 {
        self.sim.program_erase_work(die)
    }
    /// Request `req` waits for `n` more pages.
    pub fn add_pages(&mut self, req: u32, n: u32) {
        self.sim.reqs[req as usize].pages_left += n;
        self.sim.host.pages_in_flight += u64::from(n);
    }
    /// A program of `version` of `lpn` is in flight: the controller holds its data.
    pub fn hold(&mut self, lpn: u32, version: u32) {
        self.sim.ftl.map.program_started(lpn, version);
    }
    /// The controller no longer holds the data of one program of `lpn`.
    pub fn release(&mut self, lpn: u32) {
        self.sim.pending_done(lpn);
    }
    /// Unmaps `lpn` (its page becomes invalid) and lets GC see the space; once the reads of it
    /// that waited for its program are queued, if some are.
    pub fn trim(&mut self, lpn: u32) {
        if let Some(plane) = self.sim.trim(lpn) {
            self.start_gc(plane);
        }
    }
    /// Whether the controller holds data of `lpn` in flight.
    pub fn held(&self, lpn: u32) -> bool {
        self.sim.ftl.map.in_flight(lpn)
    }

    /// Queues operation `id` on `die`.
    pub fn enqueue(&mut self, die: usize, q: QueueKind, id: u32) {
        self.push(Cmd::Enqueue(die, q, id));
    }
    /// Starts whatever `die` can start.
    pub fn dispatch(&mut self, die: usize) {
        self.push(Cmd::Dispatch(die));
    }
    /// Starts GC on `plane` if it needs it.
    pub fn start_gc(&mut self, plane: u32) {
        self.push(Cmd::StartGc(plane));
    }
    /// Calls the policy's `timer(a, b)` at `at`.
    pub fn timer(&mut self, at: SimTime, a: u32, b: u32) {
        let owner = self.owner;
        self.push(Cmd::At(at, Event::Timer { owner, a, b }));
    }
    /// Calls the policy's `timer(a, b)` now, in order with its other actions.
    pub fn call(&mut self, a: u32, b: u32) {
        self.push(Cmd::Call(self.owner, a, b));
    }
    /// One page of `req` is done at `at`.
    pub fn page_done_at(&mut self, at: SimTime, req: u32) {
        self.push(Cmd::At(at, Event::PageDone { req }));
    }
    /// One page of `req` is done after one DRAM access.
    pub fn page_done_from_dram(&mut self, req: u32) {
        let at = self.now() + self.cfg().buffer.dram_ns_per_page;
        self.page_done_at(at, req);
    }
    /// One page of `req` is done now.
    pub fn page_done(&mut self, req: u32) {
        self.push(Cmd::PageDone(req));
    }
    /// A host read page the policy served itself is done (verified and accounted like any).
    pub fn finish_read(&mut self, op: Op) {
        self.push(Cmd::FinishRead(Box::new(op)));
    }
    /// Stores a written page of `req` (device buffer or flash).
    pub fn store(&mut self, req: u32, lpn: u32) {
        self.push(Cmd::Store(req, lpn));
    }
    /// Tells every policy.
    pub fn notify(&mut self, n: Notice) {
        self.push(Cmd::Notify(n));
    }

    /// The plane of a physical page.
    pub fn plane_of(&self, ppn: u32) -> PlaneId {
        self.sim.geo.plane_of(Ppn(ppn))
    }
}

impl Simulation<'_> {
    /// Performs a policy's actions in order (and keeps the emptied list for reuse).
    pub(super) fn apply(&mut self, mut cmds: Vec<Cmd>) -> Result<(), SimError> {
        if cmds.is_empty() {
            if cmds.capacity() > 0 {
                self.spare_cmds.push(cmds);
            }
            return Ok(());
        }
        for c in cmds.drain(..) {
            match c {
                Cmd::Enqueue(die, q, id) => self.enqueue(die, q, id),
                Cmd::Dispatch(die) => self.try_dispatch(die),
                Cmd::StartGc(plane) => self.start_gc(plane),
                Cmd::At(at, ev) => self.schedule(at, ev),
                Cmd::PageDone(req) => self.page_done(req),
                Cmd::FinishRead(op) => self.finish_read(&op)?,
                Cmd::Store(req, lpn) => {
                    if let Some(die) = self.store_page(req, lpn) {
                        self.try_dispatch(die);
                    }
                }
                Cmd::Notify(n) => self.notify(n),
                Cmd::Call(owner, a, b) => self.on_timer(owner, a, b),
            }
        }
        self.spare_cmds.push(cmds);
        Ok(())
    }
}

/// `Op::owner` of an operation no policy owns.
pub(crate) const NO_OWNER: u8 = u8::MAX;

impl Simulation<'_> {
    /// Calls `f` on each policy object in order, performing what each asks for right after it
    /// returns; stops at the first `Some`.
    pub(super) fn each_policy<R>(
        &mut self,
        mut f: impl FnMut(&mut dyn Policy, &mut Ctx) -> Result<Option<R>, SimError>,
    ) -> Result<Option<R>, SimError> {
        for i in 0..self.policies.list.len() {
            if let Some(r) = self.with_policy(i as u8, &mut f)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// As [`Self::each_policy`], over the policies that use `seam` only.
    pub(super) fn at_seam<R>(
        &mut self,
        seam: Seam,
        mut f: impl FnMut(&mut dyn Policy, &mut Ctx) -> Result<Option<R>, SimError>,
    ) -> Result<Option<R>, SimError> {
        for k in 0..self.policies.by_seam[seam as usize].len() {
            let i = self.policies.by_seam[seam as usize][k];
            if let Some(r) = self.with_policy(i, &mut f)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// Calls `f` on policy `i`, then performs what it asked for.
    pub(super) fn with_policy<R>(
        &mut self,
        i: u8,
        f: impl FnOnce(&mut dyn Policy, &mut Ctx) -> Result<Option<R>, SimError>,
    ) -> Result<Option<R>, SimError> {
        let mut p = self.policies.list[i as usize]
            .take()
            .expect("a policy is never called while it is being called");
        let mut cx = Ctx::new(self, i);
        let out = f(p.as_mut(), &mut cx);
        let cmds = std::mem::take(&mut cx.cmds);
        self.policies.list[i as usize] = Some(p);
        self.apply(cmds)?;
        out
    }

    /// Keeps the first error of a step that cannot return one (the run stops after the event).
    pub(super) fn stash<T>(&mut self, r: Result<T, SimError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed.get_or_insert(e);
                None
            }
        }
    }

    /// Tells every policy `n`.
    pub(super) fn notify(&mut self, n: Notice) {
        let r = self.at_seam::<()>(Seam::of(n), |p, cx| {
            p.notice(cx, n);
            Ok(None)
        });
        self.stash(r);
    }

    /// Whether a scheme holds `die`'s programs and erases now.
    pub(super) fn gated(&self, die: usize) -> bool {
        self.policies
            .gate
            .as_ref()
            .is_some_and(|g| g.holds(die, self.now.ns()))
    }

    /// Program `id` was given its page: schemes may add work (mirror, parity, refresh timer).
    pub(super) fn program_placed(&mut self, id: u32) {
        let r = self.at_seam::<()>(Seam::Placed, |p, cx| p.placed(cx, id).map(|()| None));
        self.stash(r);
    }

    /// `die` is idle with nothing it may start.
    pub(super) fn die_idle(&mut self, die: usize) {
        let r = self.at_seam::<()>(Seam::Idle, |p, cx| {
            p.idle(cx, die);
            Ok(None)
        });
        self.stash(r);
    }

    /// A policy's timer fell due.
    pub(super) fn on_timer(&mut self, owner: u8, a: u32, b: u32) {
        let r = self.with_policy::<()>(owner, |p, cx| {
            p.timer(cx, a, b);
            Ok(None)
        });
        self.stash(r);
    }

    /// An operation a policy queued is done.
    pub(super) fn owned_done(&mut self, op: &Op) -> Result<(), SimError> {
        self.with_policy::<()>(op.owner, |p, cx| p.done(cx, op).map(|()| None))?;
        Ok(())
    }

    /// Where the schemes serve a host read: `false` if one took it over.
    pub(super) fn route_read(
        &mut self,
        op: &mut Op,
        home_die: usize,
        conflicted: bool,
    ) -> Result<bool, SimError> {
        let taken = self.at_seam(Seam::ReadRoute, |p, cx| {
            Ok(match p.route(cx, op, home_die, conflicted)? {
                Route::Queue => None,
                Route::QueueAndTell => {
                    op.owner = cx.owner;
                    None
                }
                Route::Taken => Some(()),
            })
        })?;
        Ok(taken.is_none())
    }
}
