//! Host side: arrivals, splitting requests into pages, completions, the write-queue bound.

use super::{Event, Op, ReqState, SimError, Simulation};
use crate::config::{OutOfRange, ReadInflight};
use crate::flash::PlaneId;
use crate::ftl::alloc::AllocView;
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, OpKind, QueueKind};
use crate::schemes::{CacheRead, CacheWrite};
use crate::time::SimTime;
use crate::workload::trace::TraceError;
use crate::workload::{IoOp, Request};

/// An admitted request whose pages are not all issued yet (see `host.max_pages_in_flight`).
#[derive(Debug)]
pub(super) struct Backlog {
    req: u32,
    r: Request,
    /// First page and the next to issue (absolute page numbers), one past the last.
    first: u64,
    next: u64,
    end: u64,
    /// The host-map layer's mark taken before the first page.
    mark: Option<u64>,
    /// Some of its pages waited for the window (counted once).
    waited: bool,
}

/// Latest arrival time a run accepts, ns (~32 years): every later event is at most hours past
/// an arrival, so simulated time stays far below `u64::MAX` and never wraps.
const MAX_ARRIVAL_NS: f64 = 1e18;

impl Simulation<'_> {
    /// Pulls the next request from the workload and schedules its arrival.
    pub(super) fn fetch_next(&mut self) -> Result<(), SimError> {
        if self.host.next.is_some() || self.host.exhausted {
            return Ok(());
        }
        match self.workload.next() {
            None => self.host.exhausted = true,
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(r)) => {
                let at = if self.closed_loop() {
                    self.now
                } else {
                    let at_ns = (r.time_ns as f64 * self.cfg.host.time_scale).round();
                    if at_ns > MAX_ARRIVAL_NS {
                        return Err(SimError::TimeLimit {
                            request: self.host.issued,
                            at_ns,
                            limit: MAX_ARRIVAL_NS,
                        });
                    }
                    // Arrivals never go back in time; one that waited for the page window keeps
                    // its own arrival time.
                    SimTime(at_ns as u64).max(self.host.last_arrival)
                };
                self.host.last_arrival = at;
                self.host.next = Some((at, r));
                self.schedule_arrival();
            }
        }
        Ok(())
    }

    fn schedule_arrival(&mut self) {
        let Some((at, _)) = &self.host.next else {
            return;
        };
        if self.host.arrival_scheduled || !self.host.backlog.is_empty() {
            return;
        }
        if self.closed_loop() && self.host.outstanding >= self.cfg.host.queue_depth {
            return;
        }
        let at = (*at).max(self.now);
        self.host.arrival_scheduled = true;
        self.schedule(at, Event::Arrival);
    }

    /// The next request arrives: it crosses the host link first if there is one, then enters
    /// the drive ([`Self::accept`]).
    pub(super) fn on_arrival(&mut self) -> Result<(), SimError> {
        self.host.arrival_scheduled = false;
        let Some((at, r)) = self.host.next.take() else {
            return Ok(());
        };
        let arrival = if self.closed_loop() { self.now } else { at };
        self.check_range(&r, self.host.issued)?;
        self.admit();
        if let Some(link) = self.link.as_mut() {
            let data = if r.op == IoOp::Write { r.size_bytes } else { 0 };
            let there = link.submit(self.now, data);
            self.host.linking.push_back((arrival, r));
            self.schedule(there, Event::LinkIn);
        } else {
            self.accept(arrival, r)?;
        }
        self.fetch_next()
    }

    /// The oldest request on the host link has reached the drive.
    pub(super) fn on_link_in(&mut self) -> Result<(), SimError> {
        let (arrival, r) = self
            .host
            .linking
            .pop_front()
            .expect("a request on the link");
        if r.op == IoOp::Read {
            self.metrics.host_link_read_ns += self.now.since(arrival);
        }
        self.accept(arrival, r)
    }

    /// A request enters the drive's queues: a write the bounded write queue cannot take now
    /// (or that would overtake held writes) waits in arrival order; everything else is issued.
    fn accept(&mut self, arrival: SimTime, r: Request) -> Result<(), SimError> {
        if r.op == IoOp::Write && (!self.host.held.is_empty() || self.write_queue_full(&r)) {
            self.metrics.host_stalls += 1;
            self.host.held.push_back((arrival, r));
            Ok(())
        } else {
            self.issue(arrival, r)
        }
    }

    /// Whether write `r` does not fit the bounded write queue now (a write always fits an
    /// empty queue).
    fn write_queue_full(&self, r: &Request) -> bool {
        let bound = self.cfg.sched.max_outstanding_writes;
        if bound == 0 || self.host.outstanding_write_pages == 0 {
            return false;
        }
        self.host.outstanding_write_pages + self.pages_of(r) > bound
    }

    /// A request enters the drive: it is outstanding from now (ending an idle period).
    fn admit(&mut self) {
        if self.host.outstanding == 0 && self.host.issued > 0 {
            self.metrics.idle_ns += self.now.since(self.host.idle_since);
        }
        self.host.outstanding += 1;
        self.host.issued += 1;
    }

    fn pages_of(&self, r: &Request) -> u32 {
        let pages = self.page_range(r);
        (pages.end - pages.start) as u32
    }

    /// The host pages request `r` covers (the end saturates for bytes past 2^64, which
    /// [`Self::check_range`] refuses).
    fn page_range(&self, r: &Request) -> std::ops::Range<u64> {
        let ps = u64::from(self.geo.page_size_bytes);
        r.offset_bytes / ps..r.offset_bytes.saturating_add(r.size_bytes).div_ceil(ps)
    }

    /// Refuses request number `index` if it cannot be addressed; counts it if it reaches past
    /// the logical capacity and is folded onto it (`ftl.out_of_range = "wrap"`).
    fn check_range(&mut self, r: &Request, index: u64) -> Result<(), SimError> {
        let ps = u64::from(self.geo.page_size_bytes);
        let logical = u64::from(self.host_pages());
        // A request ending past 2^64 bytes cannot be addressed (readers refuse it; this guards
        // requests from other sources).
        let Some(end_bytes) = r.offset_bytes.checked_add(r.size_bytes) else {
            return Err(TraceError::OutOfRange {
                index,
                offset: r.offset_bytes,
                end: u64::MAX,
                capacity: logical * ps,
            }
            .into());
        };
        if end_bytes.div_ceil(ps) > logical {
            if self.cfg.ftl.out_of_range == OutOfRange::Error {
                return Err(TraceError::OutOfRange {
                    index,
                    offset: r.offset_bytes,
                    end: end_bytes,
                    capacity: logical * ps,
                }
                .into());
            }
            self.metrics.wrapped_requests += 1;
        }
        Ok(())
    }

    /// Admits request `r` (checked by [`Self::check_range`]) and queues its pages, as many as
    /// the page window takes.
    fn issue(&mut self, arrival: SimTime, r: Request) -> Result<(), SimError> {
        let std::ops::Range { start: first, end } = self.page_range(&r);
        let state = ReqState {
            arrival,
            pages_left: (end - first) as u32,
            read: r.op == IoOp::Read,
            bytes: r.size_bytes,
        };
        let req = match self.free_reqs.pop() {
            Some(i) => {
                self.reqs[i as usize] = state;
                i
            }
            None => {
                self.reqs.push(state);
                (self.reqs.len() - 1) as u32
            }
        };
        self.detail_admitted(req, &r, (end - first) as u32);
        let mut b = Backlog {
            req,
            r,
            first,
            next: first,
            end,
            mark: None,
            waited: false,
        };
        if self.host.backlog.is_empty() {
            if !self.issue_pages(&mut b)? {
                self.host.backlog.push_front(b);
            }
        } else {
            self.note_wait(&mut b);
            self.host.backlog.push_back(b);
        }
        Ok(())
    }

    /// Counts a request the first time some of its pages wait for the page window.
    fn note_wait(&mut self, b: &mut Backlog) {
        if !b.waited {
            b.waited = true;
            self.metrics.window_waits += 1;
        }
    }

    /// Queues the next pages of a request while the page window has room; returns whether all
    /// are queued (what is left must wait at the front of the backlog).
    fn issue_pages(&mut self, b: &mut Backlog) -> Result<bool, SimError> {
        let logical = u64::from(self.host_pages());
        let window = u64::from(self.cfg.host.max_pages_in_flight);
        let read = b.r.op == IoOp::Read;
        if b.next == b.first {
            b.mark = self.map_mark();
        }
        // Queue pages first, then dispatch, so the pages of one request can share a
        // multi-plane operation.
        let mut touched = std::mem::take(&mut self.touched_dies);
        while b.next < b.end && self.host.pages_in_flight < window {
            let page = b.next;
            b.next += 1;
            self.host.pages_in_flight += 1;
            let lpn = (page % logical) as u32;
            let die = if read {
                self.read_page(b.req, lpn)?
            } else {
                self.write_page(b.req, lpn, b.r.page_print(page - b.first))?
            };
            if let Some(d) = die.filter(|d| !touched.contains(d)) {
                touched.push(d);
            }
        }
        let done = b.next == b.end;
        if done {
            if let Some(before) = b.mark {
                self.map_request_done(read, b.end - b.first, before);
            }
        } else {
            self.note_wait(b);
        }
        for &d in &touched {
            self.try_dispatch(d);
        }
        touched.clear();
        self.touched_dies = touched;
        Ok(done)
    }

    /// Issues waiting pages while the page window has room; once none waits, the next
    /// request may arrive.
    pub(super) fn drain_backlog(&mut self) -> Result<(), SimError> {
        let window = u64::from(self.cfg.host.max_pages_in_flight);
        while self.host.pages_in_flight < window {
            let Some(mut b) = self.host.backlog.pop_front() else {
                break;
            };
            if !self.issue_pages(&mut b)? {
                self.host.backlog.push_front(b);
            }
        }
        if self.host.backlog.is_empty() {
            self.schedule_arrival();
        }
        Ok(())
    }

    pub(super) fn new_op(&mut self, op: Op) -> u32 {
        match self.free_ops.pop() {
            Some(i) => {
                self.ops[i as usize] = op;
                i
            }
            None => {
                self.ops.push(op);
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
            snapshot: Default::default(),
            started: SimTime::ZERO,
            bus_wait_from: SimTime::ZERO,
            bus_wait_ns: 0,
            next: NONE,
            pages: 1,
            level: crate::flash::Level::Normal,
            owner: super::ctx::NO_OWNER,
            dedicated: false,
            summary: false,
            placed: NONE,
            queued_at: SimTime::ZERO,
        }
    }

    /// Queues a read page; returns its die, or `None` if it was served without flash.
    fn read_page(&mut self, req: u32, lpn: u32) -> Result<Option<usize>, SimError> {
        self.metrics.read_pages += 1;
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
        self.read_mapped(req, lpn, host_lpn)
    }

    /// Queues the reads whose page's program finished meanwhile (`ftl.read_inflight = "flash"`).
    pub(super) fn queue_ready_reads(&mut self) -> Result<(), SimError> {
        for (req, lpn, host) in std::mem::take(&mut self.ready_reads) {
            if let Some(d) = self.read_mapped(req, lpn, host)? {
                self.try_dispatch(d);
            }
        }
        Ok(())
    }

    /// Queues a read page of logical page `lpn` (host page `host_lpn`); returns its die, or
    /// `None` if it was served without flash or waits for a program in flight.
    fn read_mapped(
        &mut self,
        req: u32,
        lpn: u32,
        host_lpn: u32,
    ) -> Result<Option<usize>, SimError> {
        if self.buffer_read_hit(req, lpn) {
            return Ok(None);
        }
        if self.pending_writes.contains_key(&lpn) {
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
        op.version = self.ftl.map.newest(lpn);
        op.level = if ppn == NONE {
            self.fill_level
        } else {
            self.ftl.blocks[self.geo.block_of(crate::flash::Ppn(ppn)).0 as usize].level
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
            self.metrics.read_pages_blocked += 1;
        }
        if !self.route_read(&mut op, home_die, running || queued)? {
            return Ok(None);
        }
        let die = op.die as usize;
        op.snapshot = self.dies[die].occupancy(self.now);
        let id = self.new_op(op);
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

    /// A host write of one page with fingerprint `print`: through the host-side layers (a
    /// cache, a page mapping) if schemes put any there, then stored. Returns the die it queued
    /// work on, if any.
    pub(super) fn write_page(
        &mut self,
        req: u32,
        lpn: u32,
        print: Option<u64>,
    ) -> Result<Option<usize>, SimError> {
        self.metrics.write_pages += 1;
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
        self.notify(super::Notice::Written(lpn));
        if self.buffer.is_some() {
            return self.buffer_write(req, lpn);
        }
        let level = self.level_for(None);
        Some(self.flash_write(req, lpn, version, level))
    }

    /// Queues the flash program of `version` of `lpn` at `level`; `req` (or `NONE`) completes
    /// when it is done. Returns its die.
    pub(super) fn flash_write(
        &mut self,
        req: u32,
        lpn: u32,
        version: u32,
        level: crate::flash::Level,
    ) -> usize {
        self.pending_add(lpn, version);
        self.host.outstanding_write_pages += 1;
        let view = AllocView {
            geo: &self.geo,
            dies: &self.dies,
            planes: &self.ftl.planes,
            blocks: &self.ftl.blocks,
            placed: &self.placed,
            gc_threshold: self.ftl.gc_threshold,
        };
        let plane = self.place.place(lpn, &view).0;
        self.placed[plane as usize] += 1;
        let mut op = self.blank_op(OpKind::Program, Cause::User, plane);
        op.placed = plane;
        op.lpn = lpn;
        op.version = version;
        op.req = req;
        op.level = level;
        let die = op.die as usize;
        let id = self.new_op(op);
        self.enqueue(die, QueueKind::Write, id);
        die
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
                    self.metrics.host_link_read_ns += out;
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
        let r = &self.reqs[req as usize];
        let (arrival, read, bytes) = (r.arrival, r.read, r.bytes);
        self.detail_done(req, arrival.ns(), read, bytes);
        self.free_reqs.push(req);
        self.metrics
            .request_done(read, self.now.since(arrival), self.now.ns());
        self.host.outstanding -= 1;
        if self.host.outstanding == 0 {
            self.host.idle_since = self.now;
        }
        if self.closed_loop() {
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
        while let Some((_, r)) = self.host.held.front() {
            if self.write_queue_full(r) {
                break;
            }
            let (arrival, r) = self.host.held.pop_front().expect("checked");
            self.issue(arrival, r)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::sim::RunOptions;

    /// Operation slots a run allocated (they are reused, never freed): its peak of work in
    /// flight.
    fn op_slots(window: u32) -> usize {
        let cfg = ConfigBuilder::preset("tiny")
            .unwrap()
            .set(&format!("host.max_pages_in_flight={window}"))
            .unwrap()
            .build()
            .unwrap();
        // One 4 MiB write: 1,024 pages on a one-die drive.
        let big = Request {
            time_ns: 0,
            offset_bytes: 0,
            size_bytes: 4 << 20,
            op: IoOp::Write,
            device: 0,
            content: None,
        };
        let mut it = std::iter::once(Ok(big));
        let opts = RunOptions {
            seed: 1,
            verify: true,
            ..Default::default()
        };
        let mut sim = Simulation::new(&cfg, opts, &mut it).unwrap();
        sim.replay().unwrap();
        assert_eq!(sim.metrics.requests, 1);
        assert_eq!(sim.host.pages_in_flight, 0);
        sim.ops.len()
    }

    #[test]
    fn page_window_bounds_the_work_a_huge_request_holds() {
        // Without a binding window every page of the request is queued at once.
        assert!(op_slots(crate::config::DEFAULT_PAGE_WINDOW) >= 1024);
        // With 32 pages in flight, slots stay below the window plus one block of GC moves
        // and its erase.
        let slots = op_slots(32);
        assert!(slots <= 32 + 64 + 1, "{slots}");
    }
}
