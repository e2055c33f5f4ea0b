//! Dispatching: picking the next operation of an idle die, forming multi-plane gangs, and
//! starting the operation.
//!
//! About 550 lines, kept whole: every function here decides, for one die at one instant, what
//! may start next (GC gating, foreground cleans, write re-placement, gangs, the late plane
//! pick), and they read and change the same queues and die state in one order that the
//! results depend on; phases and completions are in `phases.rs`, suspension in `suspend.rs`.

use super::{ForegroundDie, Op, Simulation};
use crate::config::{Allocation, MultiPlaneRule};
use crate::flash::{DieId, Geometry, PlaneId, Ppn};
use crate::ftl::blocks::Stream;
use crate::ftl::mapping::NONE;
use crate::sched::{Cause, Heads, OpClass, OpKind, QueueKind};
use crate::sched::{ClassQueue, Die, DieState};

/// How far down a queue multi-plane gang formation looks for partners.
const GANG_SCAN: usize = 32;

impl Simulation<'_> {
    /// Appends an operation to one of a die's queues.
    pub(super) fn enqueue(&mut self, die: usize, q: QueueKind, id: u32) {
        self.seq += 1;
        let class = self.priority_class(id);
        let entry = (self.seq, id);
        self.ops[id as usize].queued_at = self.now;
        let pe = matches!(self.ops[id as usize].kind, OpKind::Program | OpKind::Erase);
        if pe {
            self.dies[die].queues.queued_program_erase += 1;
        }
        // The internal queue has one lane: the class is ignored there.
        self.queue_of_mut(die, q).push_back(entry, class);
        self.timeline_queue(die);
    }

    /// The priority class (0 urgent … 3 low) whose die queue operation `id` joins with
    /// `sched.flow_priority`: its request's flow's; an operation of no request (a flush of
    /// buffered data, a translation read) is of the high class, as MQSim queues a transaction
    /// of undefined priority. 0 without it (one queue).
    fn priority_class(&self, id: u32) -> usize {
        if self.flow_class.is_empty() {
            return 0;
        }
        let op = &self.ops[id as usize];
        if op.cause == Cause::User && op.req != NONE {
            usize::from(self.flow_class[usize::from(self.reqs[op.req as usize].flow)])
        } else {
            1
        }
    }

    /// The write stream of a program: host and migration data at its level, GC keeping the
    /// level of the block it moves from; in its page's flow's blocks when flows have blocks
    /// of their own.
    #[inline(always)]
    pub(super) fn stream_of(&self, op: &Op) -> Stream {
        let stream = match op.cause {
            Cause::User | Cause::Migration | Cause::Redundancy | Cause::Mapping => {
                Stream::user(op.level)
            }
            Cause::Gc if op.dedicated => Stream::dedicated(op.level),
            Cause::Gc => Stream::gc(op.level),
        };
        self.ftl.flow_stream(stream, op.lpn)
    }

    /// With dynamic allocation, a write whose plane has no free page is re-placed on a plane
    /// that has one (same die first, else the least-loaded die), so valid data drifting
    /// unevenly between planes cannot wedge a plane that GC can no longer clean. When the die
    /// would otherwise idle (`idle`), no plane has a page now and no GC job runs anywhere to
    /// free one, it goes to the plane with the fewest valid pages if that has fewer than its
    /// own: GC can free pages there, and foreground GC cleans a die only once host work waits
    /// on it (without this a run stalled with a third of the drive free: a proptest case,
    /// a scheme's six open blocks per plane on two one-plane dies).
    /// Returns whether it moved one.
    fn replace_blocked_write(&mut self, die: usize, idle: bool) -> bool {
        if self.cfg.ftl.allocation != Allocation::Dynamic {
            return false;
        }
        let Some(&(_, id)) = self.dies[die].queues.writes.front() else {
            return false;
        };
        let stream = self.stream_of(&self.ops[id as usize]);
        if self
            .ftl
            .can_alloc(PlaneId(self.ops[id as usize].plane), stream)
        {
            return false;
        }
        let ppd = self.geo.planes_per_die;
        let usable = |p: u32| self.ftl.can_alloc(PlaneId(p), stream);
        let same_die = self
            .geo
            .planes_of_die(DieId(die as u32))
            .find(|&p| usable(p));
        let here = self.ops[id as usize].plane;
        let valid = |p: u32| self.ftl.planes[p as usize].valid;
        let target = same_die
            .or_else(|| {
                (0..self.geo.data_planes())
                    .filter(|&p| usable(p))
                    .min_by_key(|&p| (self.dies[(p / ppd) as usize].load(), p))
            })
            .or_else(|| {
                let cleaning = || self.ftl.planes.iter().any(|p| p.gc_jobs > 0);
                (idle && !cleaning())
                    .then(|| (0..self.geo.data_planes()).min_by_key(|&p| (valid(p), p)))
                    .flatten()
                    .filter(|&p| valid(p) < valid(here))
            });
        let Some(plane) = target else { return false };
        self.ops[id as usize].plane = plane;
        let new_die = (plane / ppd) as usize;
        self.ops[id as usize].die = new_die as u32;
        if new_die != die {
            let q = &mut self.dies[die].queues;
            q.writes.pop_front();
            q.queued_program_erase -= 1;
            self.enqueue(new_die, QueueKind::Write, id);
            self.try_dispatch(new_die);
        }
        true
    }

    /// Whether the die may start this (program) operation now: its plane must have a free page
    /// and, with cache read, the die's registers must not hold a page still to be sent.
    pub(super) fn program_ready(&self, die: usize, id: u32) -> bool {
        let op = &self.ops[id as usize];
        let stream = self.stream_of(op);
        let ready = |plane: u32| self.ftl.can_alloc(PlaneId(plane), stream);
        self.dies[die].cache_op == NONE
            && (op.ppn != NONE
                || ready(op.plane)
                || (op.pick_at_start && self.geo.planes_of_die(DieId(die as u32)).any(ready)))
    }

    /// The summary pages of a block whose last data page was just allocated are queued as
    /// programs of their own, with the cause of the data that filled the block.
    fn queue_summary(&mut self, die: usize, cause: Cause) {
        while let Some(pages) = self.ftl.take_summary() {
            let block = self.geo.block_of(Ppn(pages.start));
            let level = self.ftl.block_level(block);
            let plane = self.geo.plane_of(Ppn(pages.start)).0;
            for p in pages {
                let mut op = self.blank_op(OpKind::Program, cause, plane);
                op.ppn = p;
                op.level = level;
                op.summary = true;
                let id = self.new_op(op);
                // Internal: behind a host write that waits for GC it could hold the block
                // back from being full, hence from being a victim.
                self.enqueue(die, QueueKind::Internal, id);
            }
        }
    }

    /// Gives write `id`, about to start `alone` (not in a multi-plane gang), the plane the
    /// placement policy picks now — kept on its queued plane if the pick has no page for it.
    fn pick_plane(&mut self, id: u32, alone: bool) {
        self.ops[id as usize].pick_at_start = false;
        if !alone {
            return;
        }
        let op = &self.ops[id as usize];
        let (lpn, stream, die) = (op.lpn, self.stream_of(op), op.die as usize);
        let pick = self.place_now(lpn).0;
        let ready = |plane: u32| self.ftl.can_alloc(PlaneId(plane), stream);
        let plane = if self.geo.die_of_plane(PlaneId(pick)).0 as usize == die && ready(pick) {
            Some(pick)
        } else {
            // Dispatch found a plane of the die with a page: the first.
            self.geo
                .planes_of_die(DieId(die as u32))
                .find(|&p| ready(p))
        };
        if let Some(p) = plane {
            self.ops[id as usize].plane = p;
        }
    }

    /// Program `id` no longer counts as placed on its plane (it took its page, or was dropped).
    pub(super) fn unplace(&mut self, id: u32) {
        let placed = std::mem::replace(&mut self.ops[id as usize].placed, NONE);
        if placed != NONE {
            self.placed[placed as usize] -= 1;
        }
    }

    /// Whether host reads or writes are queued on `die`.
    pub(super) fn host_work_queued(&self, die: usize) -> bool {
        let q = &self.dies[die].queues;
        !q.reads.is_empty() || !q.writes.is_empty()
    }

    /// Lets the GC execution policy, if a scheme installed one, hide queue heads. Whatever
    /// it says, an erase never overtakes a user read queued before it: that read may be of
    /// the victim block, whose valid pages were remapped after it was queued.
    fn gate_gc(&mut self, die: usize, heads: Heads) -> Heads {
        let Some(gc) = self.policies.gc_exec.as_mut() else {
            return heads;
        };
        let planes = die_planes(&self.ftl, &self.geo, die);
        let view = crate::sched::gc_exec::GcView {
            min_free_blocks: planes.iter().map(|p| p.free_blocks()).min().unwrap_or(0),
            collecting: planes.iter().any(|p| p.gc_jobs > 0),
            chip_gc_queued: gc.chip_scope() && chip_gc_queued(&self.dies, &self.geo, die),
        };
        let mut gated = gc.gate(heads, view);
        // A translation read moved ahead (`sched.mapping_reads_first`) is not held back: MQSim
        // serves its mapping reads before it looks at GC (`TSU_OutOfOrder::service_read_transaction`).
        if heads.read == Some(super::cmt::AHEAD) {
            gated.read = heads.read;
        }
        let erase_head = self.dies[die]
            .queues
            .internal
            .front()
            .is_some_and(|&(_, id)| self.ops[id as usize].kind == OpKind::Erase);
        match (heads.read, gated.internal) {
            (Some(read), Some(internal)) if erase_head && read < internal => heads,
            _ => gated,
        }
    }

    /// Foreground GC (DiskSim's `ssd_clean_element_copyback` with one parallel unit per
    /// element): while host work waits on `die`, one clean — one victim block, every move then
    /// the erase — on the first plane at its threshold, taken round robin from the plane after
    /// the last one cleaned; none while a clean is in progress there, and none again until the
    /// die has started host work since the last one, so cleans of several planes never stack in
    /// front of one request.
    fn foreground_clean(&mut self, die: usize) {
        // Host work first since the last clean — unless it cannot start: no read waits and the
        // write it would take next has no page to go to (a plane out of space waits for the
        // clean).
        if self.foreground[die].owed && !self.host_writes_blocked(die) {
            return;
        }
        if die_planes(&self.ftl, &self.geo, die)
            .iter()
            .any(|p| p.gc_jobs > 0)
        {
            return;
        }
        let ppd = self.geo.planes_per_die;
        let first = die as u32 * ppd;
        for k in 0..ppd {
            let offset = (self.foreground[die].next + k) % ppd;
            let plane = first + offset;
            self.begin_gc(plane);
            if self.ftl.planes[plane as usize].gc_jobs > 0 {
                self.foreground[die] = ForegroundDie {
                    next: (offset + 1) % ppd,
                    owed: true,
                };
                return;
            }
        }
    }

    /// Whether the die's host work cannot start for want of space: no read is queued and the
    /// write it would take next has no page to go to.
    fn host_writes_blocked(&self, die: usize) -> bool {
        let q = &self.dies[die].queues;
        q.reads.is_empty()
            && q.writes
                .front()
                .is_some_and(|&(_, id)| !self.program_ready(die, id))
    }

    /// Whether GC holds host work chip-wide ([`GcExec::chip_scope`]).
    ///
    /// [`GcExec::chip_scope`]: crate::sched::gc_exec::GcExec::chip_scope
    fn chip_gc_holds(&self) -> bool {
        self.policies
            .gc_exec
            .as_ref()
            .is_some_and(|g| g.chip_scope())
    }

    /// Starts the next operation on an idle die, as the scheduling policy picks it. When GC
    /// holds host work chip-wide ([`GcExec::chip_scope`]) and this drains the chip's GC work,
    /// the chip's other idle dies are dispatched too (their host work was held for it).
    ///
    /// [`GcExec::chip_scope`]: crate::sched::gc_exec::GcExec::chip_scope
    pub(super) fn try_dispatch(&mut self, die: usize) {
        if !self.chip_gc_holds() {
            return self.dispatch_die(die);
        }
        let held = chip_gc_queued(&self.dies, &self.geo, die);
        self.dispatch_die(die);
        if held && !chip_gc_queued(&self.dies, &self.geo, die) {
            for sibling in chip_dies(&self.geo, die) {
                if sibling != die && self.dies[sibling].state == DieState::Idle {
                    self.dispatch_die(sibling);
                }
            }
        }
    }

    fn dispatch_die(&mut self, die: usize) {
        if !self.foreground.is_empty() && self.host_work_queued(die) {
            self.foreground_clean(die);
        }
        if self.dies[die].state != DieState::Idle {
            self.consider_suspension(die);
        }
        while self.dies[die].state == DieState::Idle {
            match self.suspended_serves_read(die) {
                Some(true) => {
                    let (_, id) = self.dies[die]
                        .queues
                        .reads
                        .pop_front()
                        .expect("a read is queued");
                    self.start_op(die, id);
                    continue;
                }
                Some(false) => {
                    self.resume(die);
                    return;
                }
                None => {}
            }
            self.replace_blocked_write(die, false);
            // Re-placing a write dispatches its new die, which may re-place one onto this die
            // and start it: look again before picking.
            if self.dies[die].state != DieState::Idle {
                return;
            }
            let Some(kind) = self.pick(die) else {
                if self.start_idle_work(die) {
                    continue;
                }
                // The die would idle with the next write blocked too (several flushed or
                // written back at once onto a full plane): nothing may wake it, so re-place
                // that one as well.
                if self.replace_blocked_write(die, true) {
                    continue;
                }
                self.die_idle(die);
                return;
            };
            let (_, id) = self
                .queue_of_mut(die, kind)
                .pop_front()
                .expect("picked queue has a head");
            if self.skip_stale_gc_read(id) {
                continue;
            }
            if self.cfg.flash.multi_plane {
                self.form_gang(die, kind, id);
            }
            let queued_pe = self
                .gang(id)
                .filter(|&m| self.ops[m as usize].kind != OpKind::Read)
                .count() as u32;
            self.dies[die].queues.queued_program_erase -= queued_pe;
            self.start_op(die, id);
        }
    }

    /// The queue idle `die` serves next, as the scheduling policy picks among the heads that
    /// can start now (a program needs a page, a gated die starts no program or erase).
    ///
    /// Whether a head can start costs an allocation check, so without a GC execution policy
    /// only the head the scheduler picks is checked: if it cannot start, it is hidden and the
    /// scheduler picks again. The same head results, because a scheduler's pick does not change
    /// when heads it did not pick are hidden ([`crate::sched::Schedule::pick`]). A GC execution
    /// policy's gate looks at every head, so with one all are checked first.
    fn pick(&mut self, die: usize) -> Option<QueueKind> {
        let q = &self.dies[die].queues;
        let (write, internal) = (q.writes.front().copied(), q.internal.front().copied());
        let age = |e: (u64, u32)| e.0;
        // A queue's age is its oldest operation's (`ClassQueue::oldest`), the head it serves
        // its priority classes' choice.
        let write_age = q.writes.oldest();
        let mut heads = Heads {
            read: q.reads.oldest(),
            write: write.and(write_age),
            internal: internal.map(age),
        };
        if self.policies.gc_exec.is_some() {
            heads.write = write.filter(|&e| self.can_start(die, e.1)).and(write_age);
            heads.internal = internal.filter(|&e| self.can_start(die, e.1)).map(age);
            let gated = self.gate_gc(die, heads);
            return self.sched.pick(gated);
        }
        loop {
            match self.sched.pick(heads)? {
                QueueKind::Write if !self.can_start(die, write.expect("picked").1) => {
                    heads.write = None;
                }
                QueueKind::Internal if !self.can_start(die, internal.expect("picked").1) => {
                    heads.internal = None;
                }
                kind => return Some(kind),
            }
        }
    }

    /// Whether queued operation `id` can start on `die` now.
    fn can_start(&self, die: usize, id: u32) -> bool {
        let op = &self.ops[id as usize];
        op.kind == OpKind::Read
            || (!self.gated(die) && (op.kind != OpKind::Program || self.program_ready(die, id)))
    }

    /// A GC read whose page the host overwrote since GC queued it has nothing to copy.
    fn skip_stale_gc_read(&mut self, id: u32) -> bool {
        let op = &self.ops[id as usize];
        if op.kind == OpKind::Read && op.cause == Cause::Gc && self.ftl.map.lpn(op.ppn) != op.lpn {
            let job = op.job;
            self.free_ops.push(id);
            self.gc_move_done(job);
            return true;
        }
        false
    }

    /// Members of the gang led by `id` (just `id` for a single-plane operation).
    pub(super) fn gang(&self, id: u32) -> impl Iterator<Item = u32> + use<'_> {
        let ops = &self.ops;
        std::iter::successors(Some(id), move |&m| {
            Some(ops[m as usize].next).filter(|&n| n != NONE)
        })
    }

    /// Where a read or program goes in its plane: (block number within the plane, page
    /// offset); a program not yet given a page, where its stream's next page would be.
    fn target(&self, op: &Op) -> Option<(u32, u32)> {
        if op.ppn != NONE {
            let block = self.geo.block_in_plane(self.geo.block_of(Ppn(op.ppn)));
            return Some((block, self.geo.page_in_block(Ppn(op.ppn))));
        }
        match op.kind {
            OpKind::Program => self.ftl.next_page(PlaneId(op.plane), self.stream_of(op)),
            _ => None,
        }
    }

    /// Pulls queued operations of the same kind and cause on other planes of the die into a
    /// multi-plane gang led by `leader`, under `flash.multi_plane_rule`: reads always share the
    /// page offset (the data is where it is); programs share the offset of the page each would
    /// be given, unless the rule is `any`; `same-page-block-parity` also matches block parity.
    // Kept out of `dispatch_die`: drives without multi-plane commands never call it, and
    // inlined it cost them 1.1-1.4 % more instructions per replay (callgrind).
    #[inline(never)]
    fn form_gang(&mut self, die: usize, q: QueueKind, leader: u32) {
        let lead = &self.ops[leader as usize];
        // A write whose plane is picked as it starts has none to align yet.
        if lead.kind == OpKind::Erase
            || (lead.kind == OpKind::Read && lead.ppn == NONE)
            || lead.pick_at_start
        {
            return;
        }
        let (kind, cause) = (lead.kind, lead.cause);
        let rule = self.cfg.flash.multi_plane_rule;
        let lead_at = self.target(lead);
        let aligned = |at: Option<(u32, u32)>| match (rule, at, lead_at) {
            (MultiPlaneRule::Any, _, _) if kind == OpKind::Program => true,
            (MultiPlaneRule::SamePageBlockParity, Some((b, p)), Some((lb, lp))) => {
                p == lp && b % 2 == lb % 2
            }
            (_, Some((_, p)), Some((_, lp))) => p == lp,
            _ => false,
        };
        let mut planes = vec![lead.plane];
        let mut members = Vec::new();
        let queue = self.queue_of(die, q);
        for (i, &(_, id)) in queue.iter().enumerate().take(GANG_SCAN) {
            if planes.len() as u32 == self.geo.planes_per_die {
                break;
            }
            let op = &self.ops[id as usize];
            let fits = op.kind == kind
                && op.cause == cause
                && !op.pick_at_start
                && !planes.contains(&op.plane)
                && match kind {
                    OpKind::Read => {
                        op.ppn != NONE
                            && aligned(self.target(op))
                            && (cause == Cause::User || self.ftl.map.lpn(op.ppn) == op.lpn)
                    }
                    _ => self.program_ready(die, id) && aligned(self.target(op)),
                };
            if fits {
                planes.push(op.plane);
                members.push(i);
            }
        }
        let mut last = leader;
        for (removed, i) in members.into_iter().enumerate() {
            let (_, id) = self
                .queue_of_mut(die, q)
                .remove(i - removed)
                .expect("index from the scan");
            self.ops[last as usize].next = id;
            last = id;
        }
        self.ops[leader as usize].pages = planes.len() as u32;
    }

    fn queue_of(&self, die: usize, q: QueueKind) -> &ClassQueue {
        let qs = &self.dies[die].queues;
        match q {
            QueueKind::Read => &qs.reads,
            QueueKind::Write => &qs.writes,
            QueueKind::Internal => &qs.internal,
        }
    }

    fn queue_of_mut(&mut self, die: usize, q: QueueKind) -> &mut ClassQueue {
        let qs = &mut self.dies[die].queues;
        match q {
            QueueKind::Read => &mut qs.reads,
            QueueKind::Write => &mut qs.writes,
            QueueKind::Internal => &mut qs.internal,
        }
    }

    /// Starts an operation (or gang) on an idle die: per-page bookkeeping for every member, then
    /// one array phase or bus transfer for the whole gang.
    fn start_op(&mut self, die: usize, leader: u32) {
        let now = self.now;
        let mut id = leader;
        while id != NONE {
            if self.ops[id as usize].pick_at_start {
                // A multi-plane gang keeps the planes it was formed on.
                let alone = id == leader && self.ops[id as usize].next == NONE;
                self.pick_plane(id, alone);
            }
            let op = &mut self.ops[id as usize];
            op.started = now;
            let (kind, cause, plane, next) = (op.kind, op.cause, op.plane, op.next);
            if kind == OpKind::Read && cause == Cause::User {
                let occupancy = self.dies[die].occupancy(now);
                let (req, snapshot) = (op.req, self.read_snapshots[id as usize]);
                let mut waited = [0; OpClass::COUNT];
                for c in OpClass::ALL {
                    let i = c as usize;
                    waited[i] = occupancy[i] - snapshot[i];
                }
                // While its chip's GC holds host work (`GcExec::chip_scope`) the die may sit
                // idle, integrating nothing: the queued time no class covers waited for that GC.
                if self.chip_gc_holds() {
                    let busy: u64 = waited.iter().sum();
                    let queued = now.since(self.ops[id as usize].queued_at);
                    waited[OpClass::Gc as usize] += queued.saturating_sub(busy);
                }
                self.count_req(req, |m| {
                    for (sum, w) in m.read_wait_ns.iter_mut().zip(waited) {
                        *sum += w;
                    }
                });
                if let Some(d) = self.detail(req) {
                    for (sum, w) in d.wait_ns.iter_mut().zip(waited) {
                        *sum += w;
                    }
                }
            }
            if cause == Cause::User {
                if let Some(f) = self.foreground.get_mut(die) {
                    f.owed = false;
                }
            }
            // A program queued with its page (a scheme's copy or mirror) keeps it.
            if kind == OpKind::Program && self.ops[id as usize].ppn == NONE {
                let stream = self.stream_of(&self.ops[id as usize]);
                let ppn = self
                    .ftl
                    .alloc(PlaneId(plane), stream, now)
                    .expect("dispatch checked that the stream can allocate");
                self.ops[id as usize].ppn = ppn.0;
                self.unplace(id);
                if self.geo.page_in_block(ppn) == 0 {
                    self.block_opened(self.geo.block_of(ppn).0);
                }
                self.queue_summary(die, cause);
            }
            if kind == OpKind::Program {
                let lpn = self.ops[id as usize].lpn;
                if cause == Cause::User {
                    // Its arrival looked the entry up, so it is likely cached: fetch what the
                    // completion will invalidate.
                    self.ftl.prefetch_overwrite(lpn);
                } else {
                    // Its completion looks the logical page up: start fetching the entry now.
                    self.ftl.map.prefetch(lpn);
                }
            }
            self.metrics.flash_op(cause, kind);
            id = next;
        }
        let lead = &self.ops[leader as usize];
        let (kind, cause, transfer) = (lead.kind, lead.cause, lead.transfer);
        if lead.pages > 1 {
            self.metrics.multi_plane[kind as usize] += 1;
        }
        self.dies[die].occupy(leader, OpClass::of(kind, cause), now);
        self.timeline_queue(die);
        let t = &self.timing;
        match kind {
            OpKind::Read => {
                let sense = self
                    .gang(leader)
                    .map(|m| t.level_read_ns[self.ops[m as usize].level as usize])
                    .max()
                    .unwrap_or(t.read_ns);
                let array = t.command_ns + sense;
                if !self.elide_read_sense(die, array) {
                    self.start_array(die, array);
                }
            }
            OpKind::Program if transfer => self.request_bus(die, false),
            OpKind::Program | OpKind::Erase => self.start_pe_array(die),
        }
        if kind == OpKind::Program {
            let mut id = leader;
            while id != NONE {
                self.start_gc(self.ops[id as usize].plane);
                self.program_placed(id);
                id = self.ops[id as usize].next;
            }
        }
    }
}

/// The dies of `die`'s chip.
fn chip_dies(geo: &Geometry, die: usize) -> std::ops::Range<usize> {
    let per = geo.dies_per_chip as usize;
    let first = die / per * per;
    first..first + per
}

/// Whether internal (GC) work is queued on any die of `die`'s chip.
fn chip_gc_queued(dies: &[Die], geo: &Geometry, die: usize) -> bool {
    chip_dies(geo, die).any(|d| !dies[d].queues.internal.is_empty())
}

/// The FTL state of `die`'s planes (a function of the two fields, so a caller may hold other
/// parts of the simulation meanwhile).
fn die_planes<'a>(
    ftl: &'a crate::ftl::Ftl,
    geo: &crate::flash::Geometry,
    die: usize,
) -> &'a [crate::ftl::blocks::PlaneInfo] {
    let planes = geo.planes_of_die(DieId(die as u32));
    &ftl.planes[planes.start as usize..planes.end as usize]
}
