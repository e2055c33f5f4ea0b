//! Host side, page by page: host reads and writes through the schemes' caches and host maps,
//! their flash operations, completions and the write-queue bound's release (admission is in
//! `admit.rs`).

use super::policy::{CacheRead, CacheWrite};
use super::{Event, Op, SimError, Simulation};
use crate::config::ReadInflight;
use crate::flash::PlaneId;
use crate::ftl::alloc::AllocView;
use crate::ftl::blocks::Stream;
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::time::SimTime;

impl Simulation<'_> {
    pub(super) fn new_op(&mut self, op: Op) -> u32 {
        match self.free_ops.pop() {
            Some(i) => {
                self.ops[i as usize] = op;
                i
            }
            None => {
                self.ops.push(op);
                self.read_snapshots.push(Default::default());
                (self.ops.len() - 1) as u32
            }
        }
    }

    pub(super) fn blank_op(&self, kind: OpKind, cause: Cause, plane: u32) -> Op {
        Op {
            kind,
            cause,
            die: self.geo.die_of_plane(PlaneId(plane)).0,
            plane,
            lpn: NONE,
            ppn: NONE,
            src: NONE,
            version: 0,
            erase_epoch: 0,
            req: NONE,
            transfer: true,
            started: SimTime::ZERO,
            bus_wait_from: SimTime::ZERO,
            bus_wait_ns: 0,
            next: NONE,
            pages: 1,
            level: crate::flash::Level::Normal,
            owner: super::ctx::NO_OWNER,
            dedicated: false,
            summary: false,
            job: NONE,
            placed: NONE,
            pick_at_start: false,
            background: 0,
            queued_at: SimTime::ZERO,
        }
    }

    /// Queues a read page; returns its die, or `None` if it was served without flash.
    pub(super) fn read_page(&mut self, req: u32, lpn: u32) -> Result<Option<usize>, SimError> {
        self.count_req(req, |m| m.read_pages += 1);
        match self.cache_read(req, lpn) {
            CacheRead::Miss => {}
            CacheRead::Hit => return Ok(None),
            CacheRead::MissWritingBack(old) => {
                if let Some(d) = self.store_page(req, old) {
                    self.try_dispatch(d);
                }
            }
        }
        let host_lpn = lpn;
        let lpn = self.map_read(lpn)?;
        if !self.cache_lookup(lpn, super::cmt::Waiter::Read(req, lpn, host_lpn, self.now)) {
            return Ok(None);
        }
        self.read_mapped(req, lpn, host_lpn)
    }

    /// Queues the reads whose page's program finished meanwhile (`ftl.read_inflight = "flash"`).
    pub(super) fn queue_ready_reads(&mut self) -> Result<(), SimError> {
        for (req, lpn, host) in std::mem::take(&mut self.ready_reads) {
            // A read of data its host page no longer holds is not one a scheme may redirect
            // or copy under that host page (a staging space keyed by host page).
            let route = self.map_holds(host, lpn);
            if let Some(d) = self.read_routed(req, lpn, host, route)? {
                self.try_dispatch(d);
            }
        }
        for lpn in std::mem::take(&mut self.trims_after_reads) {
            if let Some(plane) = self.trim(lpn) {
                self.start_gc(plane);
            }
        }
        Ok(())
    }

    /// Unmaps `lpn` for a layer that dropped it (a deduplicated content's last reference
    /// went); returns the plane of the page it freed, for GC to look at. Deferred while reads
    /// of `lpn` whose program just finished wait to be queued.
    pub(super) fn trim(&mut self, lpn: u32) -> Option<u32> {
        if self.ready_reads.iter().any(|r| r.1 == lpn) {
            self.trims_after_reads.push(lpn);
            return None;
        }
        let old = self.ftl.trim(lpn)?;
        Some(self.geo.plane_of(old).0)
    }

    /// Queues a read page of logical page `lpn` (host page `host_lpn`); returns its die, or
    /// `None` if it was served without flash or waits for a program in flight.
    pub(super) fn read_mapped(
        &mut self,
        req: u32,
        lpn: u32,
        host_lpn: u32,
    ) -> Result<Option<usize>, SimError> {
        self.read_routed(req, lpn, host_lpn, true)
    }

    /// [`Self::read_mapped`]; `route`: whether the schemes may route the read.
    fn read_routed(
        &mut self,
        req: u32,
        lpn: u32,
        host_lpn: u32,
        route: bool,
    ) -> Result<Option<usize>, SimError> {
        if self.buffer_read_hit(req, lpn) {
            return Ok(None);
        }
        if self.ftl.map.in_flight(lpn) {
            if self.cfg.ftl.read_inflight == ReadInflight::Flash {
                // Read from flash once the program is done.
                self.metrics.read_pages_after_write += 1;
                self.reads_after_write
                    .entry(lpn)
                    .or_default()
                    .push((req, host_lpn));
                return Ok(None);
            }
            // The controller still holds the data of a write in flight: no flash read.
            self.metrics.read_pages_from_write_buffer += 1;
            self.page_done(req);
            return Ok(None);
        }
        let ppn = self.ftl.map.ppn(lpn);
        let plane = if ppn == NONE {
            self.ftl.home_plane(lpn).0
        } else {
            self.geo.plane_of(crate::flash::Ppn(ppn)).0
        };
        let mut op = self.blank_op(OpKind::Read, Cause::User, plane);
        op.lpn = lpn;
        op.ppn = ppn;
        op.src = host_lpn;
        op.req = req;
        op.version = self.ftl.map.read_version(lpn);
        op.level = if ppn == NONE {
            self.fill_level
        } else {
            self.ftl
                .block_level(self.geo.block_of(crate::flash::Ppn(ppn)))
        };
        if ppn != NONE && self.opts.verify {
            op.erase_epoch =
                self.ftl.blocks[self.geo.block_of(crate::flash::Ppn(ppn)).0 as usize].erase_count;
        }
        let home_die = op.die as usize;
        let (running, queued) = self.program_erase_ahead(home_die);
        if running {
            self.metrics.pe.reads_found_running += 1;
        }
        if running || queued {
            self.count_req(req, |m| m.read_pages_blocked += 1);
            self.reqs[req as usize].blocked = true;
        }
        if route && !self.route_read(&mut op, home_die, running || queued)? {
            self.reqs[req as usize].redirected = true;
            return Ok(None);
        }
        if op.ppn != ppn {
            self.reqs[req as usize].redirected = true;
        }
        let die = op.die as usize;
        let id = self.new_op(op);
        self.read_snapshots[id as usize] = self.dies[die].occupancy(self.now);
        self.enqueue(die, QueueKind::Read, id);
        Ok(Some(die))
    }

    /// Points a read at another physical copy of its page (a staged copy, a mirror twin);
    /// returns the copy's block.
    pub(super) fn read_copy_at(&self, op: &mut Op, ppn: u32) -> usize {
        let block = self.geo.block_of(crate::flash::Ppn(ppn)).0 as usize;
        op.ppn = ppn;
        op.plane = self.geo.plane_of(crate::flash::Ppn(ppn)).0;
        op.die = self.geo.die_of_plane(PlaneId(op.plane)).0;
        op.erase_epoch = self.ftl.blocks[block].erase_count;
        block
    }

    /// Whether a read queued now finds its die running a program or erase, and whether (under
    /// a policy that queues reads behind them) one is queued ahead of it. Either makes the read
    /// "blocked".
    pub(super) fn program_erase_ahead(&self, die: usize) -> (bool, bool) {
        let d = &self.dies[die];
        let running = d.busy_with().is_some()
            && matches!(
                self.ops[d.op as usize].kind,
                OpKind::Program | OpKind::Erase
            );
        // Programs and erases a scheme holds back on the die do not hold reads up.
        let queued = self.sched.read_queues_behind_program_erase()
            && d.queues.queued_program_erase > 0
            && !self.gated(die);
        (running, queued)
    }

    /// Programs and erases a read queued now on `die` would wait for: the one running and,
    /// under a policy that queues reads behind them, those queued.
    pub(super) fn program_erase_work(&self, die: usize) -> u32 {
        let (running, queued) = self.program_erase_ahead(die);
        u32::from(running)
            + if queued {
                self.dies[die].queues.queued_program_erase
            } else {
                0
            }
    }

    /// A host write of one page with fingerprint `print`: through the host-side layers (a
    /// cache, a page mapping) if schemes put any there, then stored. Returns the die it queued
    /// work on, if any.
    pub(super) fn write_page(
        &mut self,
        req: u32,
        lpn: u32,
        print: Option<u64>,
    ) -> Result<Option<usize>, SimError> {
        self.count_req(req, |m| m.write_pages += 1);
        self.notify(super::Notice::HostWritten(lpn));
        match self.cache_write(req, lpn) {
            CacheWrite::Through => {}
            CacheWrite::Absorbed => return Ok(None),
            CacheWrite::WriteBack(old) => return Ok(self.store_page(req, old)),
        }
        let Some(lpn) = self.map_write(req, lpn, print)? else {
            return Ok(None);
        };
        Ok(self.store_page(req, lpn))
    }

    /// Stores a written page: into the device buffer if there is one (flushing what it
    /// evicts), else straight to flash. Returns the die it queued work on, if any.
    pub(super) fn store_page(&mut self, req: u32, lpn: u32) -> Option<usize> {
        let version = self.ftl.map.next_version(lpn);
        // The program's completion compares with the version the current page holds.
        self.ftl.map.prefetch_mapped(lpn);
        self.notify(super::Notice::Written(lpn));
        if self.buffer.is_some() {
            return self.buffer_write(req, lpn);
        }
        let level = self.level_for(None);
        Some(self.flash_write(req, lpn, version, level, 0))
    }

    /// Queues the flash program of `version` of `lpn` at `level`; `req` (or `NONE`) completes
    /// when it is done; `background`: the units of a background flush (0: not one), counted
    /// against `buffer.flush_backlog_pages` until then.
    /// Returns its die.
    pub(super) fn flash_write(
        &mut self,
        req: u32,
        lpn: u32,
        version: u32,
        level: crate::flash::Level,
        background: u32,
    ) -> usize {
        self.ftl.map.program_started(lpn, version);
        self.host.outstanding_write_pages += 1;
        let mut op = self.placed_write(lpn, Cause::User);
        op.lpn = lpn;
        op.version = version;
        op.req = req;
        op.level = level;
        op.background = background;
        let die = op.die as usize;
        let id = self.new_op(op);
        if self.cache_lookup(lpn, super::cmt::Waiter::Write(id)) {
            self.enqueue(die, QueueKind::Write, id);
        }
        die
    }

    /// A program of `lpn` on the plane the placement policy gives it now, counted as placed
    /// there until it takes its page; or, with a policy that picks when the write starts, on
    /// the plane striping gives it (same die), to be picked then.
    pub(super) fn placed_write(&mut self, lpn: u32, cause: Cause) -> Op {
        if self.place.at_start() {
            let mut op = self.blank_op(OpKind::Program, cause, self.ftl.home_plane(lpn).0);
            op.pick_at_start = true;
            return op;
        }
        let plane = self.place_now(lpn).0;
        self.placed[plane as usize] += 1;
        let mut op = self.blank_op(OpKind::Program, cause, plane);
        op.placed = plane;
        op
    }

    /// The plane the placement policy gives a write of `lpn` now.
    #[inline(always)]
    pub(super) fn place_now(&mut self, lpn: u32) -> PlaneId {
        let view = AllocView {
            geo: &self.geo,
            dies: &self.dies,
            planes: &self.ftl.planes,
            blocks: &self.ftl.blocks,
            placed: &self.placed,
            gc_threshold: self.ftl.gc_threshold,
            map: &self.ftl.map,
            user_slot: self.ftl.flow_stream(Stream::USER, lpn).slot(false),
        };
        self.place.place(lpn, &view)
    }

    /// One page of a request finished; the request completes with its last page.
    pub(super) fn page_done(&mut self, req: u32) {
        self.host.pages_in_flight -= 1;
        let r = &mut self.reqs[req as usize];
        r.pages_left -= 1;
        if r.pages_left > 0 {
            return;
        }
        let (read, bytes) = (r.read, r.bytes);
        match self.link.as_mut() {
            Some(link) => {
                let there = link.complete(self.now, if read { bytes } else { 0 });
                let out = there.since(self.now);
                if read {
                    self.count_req(req, |m| m.host_link_read_ns += out);
                }
                if let Some(d) = self.detail(req) {
                    d.link_out_ns = out;
                }
                self.schedule(there, Event::LinkOut { req });
            }
            None => self.finish_request(req),
        }
    }

    /// Request `req` is done: its response time is measured now.
    #[inline]
    pub(super) fn finish_request(&mut self, req: u32) {
        let r = self.reqs[req as usize];
        let (arrival, read, bytes) = (r.arrival, r.read, r.bytes);
        self.detail_done(req, arrival.ns(), read, bytes);
        let (latency, now) = (self.now.since(arrival), self.now.ns());
        self.count_req(req, |m| {
            if read {
                m.read_requests_blocked += u64::from(r.blocked);
                m.read_requests_redirected += u64::from(r.redirected);
            }
            m.request_done(read, bytes, latency, now);
        });
        self.free_reqs.push(req);
        self.host.outstanding -= 1;
        if self.host.outstanding == 0 {
            self.host.idle_since = self.now;
        }
        if let Some(n) = self.host.flow_outstanding.get_mut(usize::from(r.flow)) {
            // Its flow's queue, and the drive, have room for one more.
            *n -= 1;
            self.schedule_arrival();
        } else if self.closed_loop() || self.cfg.host.max_requests_in_flight > 0 {
            self.schedule_arrival();
        }
    }

    /// A user write page finished programming.
    pub(super) fn write_page_done(&mut self, lpn: u32, req: u32) -> Result<(), SimError> {
        self.pending_done(lpn);
        self.host.outstanding_write_pages -= 1;
        self.map_programmed(lpn);
        if req != NONE {
            self.page_done(req);
        }
        let was_full = self.host.held.len() >= super::admit::MAX_HELD_WRITES;
        while let Some((_, r)) = self.host.held.front() {
            if self.write_queue_full(r) {
                break;
            }
            let (arrival, r) = self.host.held.pop_front().expect("checked");
            self.issue(arrival, r)?;
        }
        if was_full && self.host.held.len() < super::admit::MAX_HELD_WRITES {
            self.schedule_arrival();
        }
        Ok(())
    }
}
