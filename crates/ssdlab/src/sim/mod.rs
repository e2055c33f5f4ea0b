//! The simulation: one value owning every component, one event dispatcher.
//!
//! Components hold no pointers to each other; handlers in this module (split by concern into
//! `host`, `die`, `gc`, `phases`, `elide` and the rest) read and update them and push new events.
//!
//! About 510 lines, kept whole: the `Simulation` value (its fields, each documented), the event
//! types and the event loop with its end-of-run checks are the one place every handler meets;
//! the handlers themselves live in the submodules.

mod admit;
mod arbiter;
mod buffered;
mod build;
mod cmt;
mod ctx;
mod destage;
mod die;
mod elide;
mod flows;
mod gc;
mod host;
mod hostmap;
mod link;
pub mod memory;
mod phases;
pub mod policy;
mod preprocess;
#[cfg(test)]
mod probe;
mod report;
mod reqlog;
mod suspend;
mod timeline;

pub use ctx::{Ctx, Notice};

use crate::config::{Config, HostMode};
use crate::engine::EventQueue;
use crate::flash::{Geometry, Timing};
use crate::ftl::alloc::{self, WritePlace};
use crate::ftl::precondition::PreconditionError;
use crate::ftl::Ftl;
use crate::metrics::{Metrics, Summary};
use crate::rng::Rngs;
use crate::sched::{self, Cause, OpClass, OpKind, Schedule};
use crate::sched::{Channel, Die};
use crate::time::SimTime;
use crate::verify::{self, VerifyError};
use crate::workload::trace::TraceError;
use crate::workload::Requests;
use rustc_hash::FxHashMap;
use std::time::Instant;
use thiserror::Error;

/// Why a run stopped early.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// The workload could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A correctness check failed (`--verify`): a bug in the model, please report it.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// Preconditioning could not place the data.
    #[error(transparent)]
    Precondition(#[from] PreconditionError),
    /// The drive's tables do not fit in memory.
    #[error(transparent)]
    OutOfMemory(#[from] crate::ftl::mapping::OutOfMemory),
    /// A request arrives later than simulated time can represent.
    #[error("request {request} arrives at {at_ns:.4e} ns (its trace time x host.time_scale), beyond the {limit:.0e} ns a run can represent; check the trace's timestamps or lower host.time_scale")]
    TimeLimit {
        /// 0-based request index.
        request: u64,
        /// Its arrival time, ns.
        at_ns: f64,
        /// The limit, ns.
        limit: f64,
    },
    /// The run would need more memory than allowed.
    #[error("this run needs about {} ({estimate}), more than the {} allowed (--max-memory; default {:.0} % of the memory available); use a smaller drive (geometry.*), lower host.max_pages_in_flight, or raise --max-memory", memory::mib(.estimate.total()), memory::mib(*.limit), memory::DEFAULT_SHARE * 100.0)]
    MemoryLimit {
        /// Allowed bytes.
        limit: u64,
        /// The estimate by part.
        estimate: memory::MemoryEstimate,
    },
    /// The per-request records could not be written.
    #[error("cannot write the per-request records: {0}")]
    RequestLog(std::io::Error),
    /// The run's I/O flows cannot be replayed as configured.
    #[error("{0}")]
    Flows(String),
    /// Pre-processing (`precondition.pre_process`) could not be done.
    #[error("precondition.pre_process: {0}")]
    PreProcess(String),
    /// Requests remain but nothing can make progress (e.g. a plane full of valid data).
    #[error("simulation stalled at t = {time_us:.3} us with {outstanding} requests outstanding: no event can make progress (is a plane full of valid data? raise ftl.over_provisioning)")]
    Stalled {
        /// Simulated time.
        time_us: f64,
        /// Requests not completed.
        outstanding: u32,
    },
    /// Every request completed but the drive stopped with work it can never start (writes a
    /// device buffer flushed, GC moves): checked at the end of every run.
    #[error("the drive wedged at t = {time_us:.3} us: every request completed, but {what} and no event can make progress (a plane full of valid data? raise ftl.over_provisioning); the results would leave that work out")]
    Wedged {
        /// Simulated time.
        time_us: f64,
        /// What was left.
        what: String,
    },
}

/// Options of one run that are not part of the drive's configuration.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Master seed; every random stream is derived from it by name.
    pub seed: u64,
    /// Check versions on every read and the mapping invariants at every erase and at the end.
    pub verify: bool,
    /// Simulate a power loss at this time, ns (volatile replication state is lost).
    pub power_loss_at_ns: Option<u64>,
    /// Schedule every phase's event, including those left out while nothing can observe
    /// them (`sim/elide.rs`): slower, same results; for cross-checking.
    pub full_events: bool,
    /// Keep a version beside every mapping entry even without `verify` (`ftl/mapping.rs`):
    /// more memory, same results; for cross-checking.
    pub full_versions: bool,
    /// Refuse to start a run whose estimated memory ([`crate::schemes::memory_estimate`]) exceeds this many
    /// bytes (`None`: no limit).
    pub max_memory_bytes: Option<u64>,
    /// The run's I/O flows, in the order of [`crate::workload::Request::flow`] (none or one:
    /// the workload is one flow; see `sim/flows.rs`): their names, priority classes and queue
    /// depths.
    pub flows: Vec<crate::workload::flows::FlowSpec>,
}

impl RunOptions {
    /// Whether the mapping keeps full version tables: `verify` checks versions,
    /// `full_versions` asks for them.
    pub fn keeps_full_versions(&self) -> bool {
        self.verify || self.full_versions
    }
}

/// Typed events. Array completions carry the die's generation so a cancelled phase's
/// completion is recognised and ignored.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// The host's next request arrives.
    Arrival,
    /// The array phase of a die's current operation ends.
    ArrayDone { die: u32, generation: u32 },
    /// A program's array phase ends, scheduled when its bus transfer started (its `BusDone`
    /// left out: `sim/elide.rs`); ignored without a trace once that is undone.
    ElidedDone { die: u32, generation: u32 },
    /// A read's transfer ends, scheduled when its sensing started (its `ArrayDone` left out:
    /// `sim/elide.rs`); ignored without a trace once that is undone.
    ElidedBus { die: u32, generation: u32 },
    /// The page on a channel's bus has been transferred.
    BusDone { ch: u32 },
    /// A program or erase reaches the point where it yields to reads.
    SuspendPoint { die: u32, generation: u32 },
    /// A page served by the device buffer is done (after the DRAM access).
    PageDone { req: u32 },
    /// A scheme's timer (see `Ctx::timer`).
    Timer { owner: u8, a: u32, b: u32 },
    /// Simulated power loss.
    PowerLoss,
    /// A GC read's page has been ECC-decoded: its relocation program can be queued.
    EccDone { op: u32 },
    /// The oldest request on the host link has reached the drive.
    LinkIn,
    /// With several I/O flows: the drive may take waiting requests from the flows' queues.
    Fetch,
    /// A finished request's completion has reached the host.
    LinkOut { req: u32 },
}

/// A flash operation, queued on or running on a die.
#[derive(Debug, Clone)]
pub struct Op {
    pub(crate) kind: OpKind,
    pub(crate) cause: Cause,
    pub(crate) die: u32,
    pub(crate) plane: u32,
    pub(crate) lpn: u32,
    /// Read source or program destination (`NONE` for reads of never-written pages, and for
    /// programs until they are given a page; a program queued with one keeps it).
    pub(crate) ppn: u32,
    /// GC move source; user reads: the host page (before a host-map layer maps it); the
    /// scheme's own use for operations a scheme queued.
    pub(crate) src: u32,
    /// Programs: version written. User reads: newest version at arrival (the least acceptable).
    pub(crate) version: u32,
    /// Erase count of the read page's block when the read was queued (it must not change).
    pub(crate) erase_epoch: u32,
    pub(crate) req: u32,
    pub(crate) transfer: bool,
    pub(crate) started: SimTime,
    bus_wait_from: SimTime,
    bus_wait_ns: u64,
    /// Next member of a multi-plane gang (`NONE` = last); the die holds the leader.
    next: u32,
    /// Pages in the gang this op leads (1 for a single-plane operation).
    pages: u32,
    /// When it entered its die queue.
    pub(crate) queued_at: SimTime,
    /// Threshold-voltage level: of the page read, or to program with.
    pub(crate) level: crate::flash::Level,
    /// The policy told of its completion (`ctx::NO_OWNER`: none).
    pub(crate) owner: u8,
    /// GC: relocate into the plane's dedicated GC blocks (a scheme's choice).
    dedicated: bool,
    /// A block's summary page (`ftl.summary_pages`): written, never valid.
    summary: bool,
    /// GC reads, programs and erases: the job (index into `gc_jobs`) they belong to.
    job: u32,
    /// A host write counted in `placed` on this plane until it takes its page (`NONE`: not
    /// counted; the op's own plane may change before then, as dynamic allocation re-places it).
    placed: u32,
    /// A write whose plane the placement policy picks when it starts (`WritePlace::at_start`);
    /// until then it waits on its striped plane's die.
    pick_at_start: bool,
    /// A flush running in the background (`buffer.flush_backlog_pages`): the units it counts
    /// against the bound until it is done (0: not such a flush).
    background: u32,
}

/// A host request in flight.
#[derive(Debug, Clone, Copy)]
struct ReqState {
    arrival: SimTime,
    pages_left: u32,
    read: bool,
    /// Request size, bytes (a read's data crosses the host link).
    bytes: u64,
    /// A read page of it was blocked by a program or erase.
    blocked: bool,
    /// A read page of it was served from another copy or rebuilt instead of waiting at home.
    redirected: bool,
    /// Its I/O flow.
    flow: u16,
}

/// A die's foreground-GC state.
#[derive(Debug, Clone, Copy, Default)]
struct ForegroundDie {
    /// The plane (offset within the die) the next clean looks at first.
    next: u32,
    /// A clean has run since the die last started host work: the next one waits for host
    /// work to start (one clean per request, as DiskSim cleans).
    owed: bool,
}

/// A GC job: one victim of one plane.
#[derive(Debug, Clone, Copy, Default)]
struct GcJob {
    plane: u32,
    block: u32,
    pending_moves: u32,
    started: SimTime,
    /// A refresh of a fast-mode block (relocations reprogram normally).
    refresh: bool,
}

/// The host side of the replay.
#[derive(Debug, Default)]
struct HostState {
    /// The next request (arrival time already scaled).
    next: Option<(SimTime, crate::workload::Request)>,
    arrival_scheduled: bool,
    /// The next request found the drive holding `host.max_requests_in_flight` requests.
    fetch_held: bool,
    /// Write requests the bounded write queue holds back, in arrival order (with their arrival
    /// times); reads pass them.
    held: std::collections::VecDeque<(SimTime, crate::workload::Request)>,
    /// Admitted requests with pages still to issue when the page window is full, in order
    /// (while any waits, no further request arrives).
    backlog: std::collections::VecDeque<admit::Backlog>,
    /// Host pages issued and not yet done (bounded by `host.max_pages_in_flight`).
    pages_in_flight: u64,
    /// Arrival time of the latest request fetched.
    last_arrival: SimTime,
    /// Requests crossing the host link to the drive, in order (with their arrival times and
    /// when they left the host queue).
    linking: std::collections::VecDeque<(SimTime, SimTime, crate::workload::Request)>,
    exhausted: bool,
    outstanding: u32,
    outstanding_write_pages: u32,
    issued: u64,
    /// When the last outstanding request completed.
    idle_since: SimTime,
    /// With several I/O flows (`sim/arbiter.rs`): each flow's queue of arrived requests (with
    /// their arrival times) the drive has not taken, their number, the requests of each flow
    /// the drive holds, the arbiter, and whether a fetch is scheduled.
    queues: Vec<std::collections::VecDeque<(SimTime, crate::workload::Request)>>,
    queued: usize,
    flow_outstanding: Vec<u32>,
    arbiter: Option<arbiter::Arbiter>,
    fetch_scheduled: bool,
}

/// Progress callback: called with the number of completed requests now and then.
pub type Progress<'p> = Box<dyn FnMut(u64) + 'p>;

/// One simulated SSD replaying one workload.
pub struct Simulation<'w> {
    cfg: Config,
    /// Logical pages the host addresses without a host-map layer: the FTL's table as built,
    /// not the ids a policy appends later for pages of its own (parity), which host writes
    /// must not reach.
    host_logical: u32,
    opts: RunOptions,
    geo: Geometry,
    timing: Timing,
    now: SimTime,
    events: EventQueue<Event>,
    /// Sequence number of the event being handled (its place among same-time events).
    cur_seq: u64,
    /// Operations whose first phase's event is left out (`sim/elide.rs`).
    elision: elide::Elision,
    events_handled: u64,
    dies: Vec<Die>,
    channels: Vec<Channel>,
    ops: Vec<Op>,
    /// Per operation slot: its die's occupancy counters when the user read in it was queued
    /// (its wait by class is the difference when it starts). Beside `ops`, not in `Op`, so
    /// the copy of a completed `Op` stays small.
    read_snapshots: Vec<[u64; OpClass::COUNT]>,
    free_ops: Vec<u32>,
    reqs: Vec<ReqState>,
    free_reqs: Vec<u32>,
    ftl: Ftl,
    place: Box<dyn WritePlace>,
    sched: Box<dyn Schedule>,
    /// Policy objects of the schemes in force.
    policies: policy::Policies,
    /// GC jobs in progress (slots reused through `free_jobs`).
    gc_jobs: Vec<GcJob>,
    free_jobs: Vec<u32>,
    /// Scratch list of a new victim's valid pages (physical, logical), reused across victims.
    gc_moves: Vec<(crate::flash::Ppn, u32)>,
    /// Per die: the phased program/erase in progress or suspended (suspension on only).
    pe: Vec<Option<suspend::PeState>>,
    ipc_rng: rand_chacha::ChaCha8Rng,
    /// The device DRAM buffer, if configured.
    buffer: Option<crate::buffer::LruBuffer>,
    /// Level of data written before the trace (preconditioning, never-written pages).
    fill_level: crate::flash::Level,
    /// Scratch list of dies a request queued work on.
    touched_dies: Vec<usize>,
    seq: u64,
    host: HostState,
    metrics: Metrics,
    /// Per I/O flow, with several (`sim/flows.rs`).
    flows: Vec<flows::FlowState>,
    /// Where each flow's logical space lies.
    spaces: flows::Spaces,
    /// With `sched.flow_priority`: each flow's priority class (0 urgent … 3 low), by flow
    /// index (empty: the dies keep one queue per direction).
    flow_class: Vec<u8>,
    workload: &'w mut Requests<'w>,
    progress: Option<Progress<'w>>,
    precondition_wall_s: f64,
    /// An error met where it could not be returned; the run stops after the current event.
    failed: Option<SimError>,
    /// Emptied action lists of policy calls, for reuse.
    spare_cmds: Vec<Vec<ctx::Cmd>>,
    /// The host interface, if one is modelled.
    link: Option<link::Link>,
    /// `ftl.read_inflight = "flash"`: host reads (request, host page) waiting for the program
    /// in flight of a logical page.
    reads_after_write: FxHashMap<u32, Vec<(u32, u32)>>,
    /// Reads whose page's program finished: (request, logical page, host page), to queue.
    ready_reads: Vec<(u32, u32, u32)>,
    /// Logical pages a layer trimmed while reads of them were ready: trimmed once those are
    /// queued (they read the data where the program put it, queued before any erase of it).
    trims_after_reads: Vec<u32>,
    /// Per die, when GC starts only while host work waits on the die (the GC execution policy
    /// says so: `ftl.gc_mode = "foreground"`); empty otherwise, so its emptiness is the mode.
    foreground: Vec<ForegroundDie>,
    /// Per plane: host writes placed there that have not taken their page yet.
    placed: Vec<u32>,
    /// Per die: programs held back until the die would otherwise idle (a level policy's
    /// rewrites of clean pages).
    idle_work: Vec<std::collections::VecDeque<u32>>,
    /// Per block, with `voltage.split_fill_wear`: it holds preconditioned data (until erased).
    fill_blocks: Vec<bool>,
    /// Where per-request records go, if asked for ([`Simulation::on_request`]).
    request_sink: Option<crate::metrics::RequestSink<'w>>,
    /// Per request slot, while records are asked for: what its record needs.
    details: Vec<crate::metrics::RequestDetail>,
    /// Requests issued so far while records are gathered: the next one's id.
    issued: u64,
    /// The timeline being written, if asked for ([`Simulation::on_timeline`]).
    timeline: Option<Box<timeline::Tracking<'w>>>,
    /// The mapping cache's translation pages in flight.
    cache_flash: cmt::CacheFlash,
    /// The destage buffer's flushes in flight and the writes waiting for them
    /// (`buffer.flush_backlog_pages`).
    destage: destage::Destage,
}

impl<'w> Simulation<'w> {
    /// Calls `f` with the number of completed requests every 64 Ki events.
    pub fn on_progress(&mut self, f: Progress<'w>) {
        self.progress = Some(f);
    }

    /// Calls `f` with the record of every completed request, in completion order; an error it
    /// returns stops the run ([`SimError::RequestLog`]).
    pub fn on_request(&mut self, f: crate::metrics::RequestSink<'w>) {
        self.request_sink = Some(f);
    }

    /// Replays the whole workload and returns the summary.
    ///
    /// # Errors
    /// Trace errors, verification failures, or a stall.
    pub fn run(mut self) -> Result<Summary, SimError> {
        let started = Instant::now();
        self.replay()?;
        Ok(self.summary(started.elapsed().as_secs_f64()))
    }

    /// The event loop of [`Simulation::run`], then the end-of-run checks.
    fn replay(&mut self) -> Result<(), SimError> {
        for p in 0..self.geo.planes() {
            self.start_gc(p);
        }
        if let Some(t) = self.opts.power_loss_at_ns {
            self.schedule(SimTime(t), Event::PowerLoss);
        }
        self.fetch_next()?;
        while let Some((t, seq, ev)) = self.events.pop_keyed() {
            if let Event::ElidedDone { die, generation } | Event::ElidedBus { die, generation } = ev
            {
                if self.dies[die as usize].generation != generation {
                    continue;
                }
            }
            self.now = t;
            self.cur_seq = seq;
            self.events_handled += 1;
            match ev {
                Event::Arrival => self.on_arrival()?,
                Event::ArrayDone { die, generation } => {
                    if self.dies[die as usize].generation == generation {
                        self.on_array_done(die)?;
                    }
                }
                Event::ElidedDone { die, .. } => self.on_array_done(die)?,
                Event::ElidedBus { die, .. } => self.on_elided_bus(die)?,
                Event::BusDone { ch } => self.on_bus_done(ch)?,
                Event::PageDone { req } => self.page_done(req),
                Event::Timer { owner, a, b } => self.on_timer(owner, a, b),
                Event::PowerLoss => self.on_power_loss()?,
                Event::EccDone { op } => self.on_ecc_done(op),
                Event::LinkIn => self.on_link_in()?,
                Event::Fetch => self.on_fetch()?,
                Event::LinkOut { req } => self.finish_request(req),
                Event::SuspendPoint { die, generation } => {
                    if self.dies[die as usize].generation == generation {
                        self.on_suspend_point(die as usize);
                    }
                }
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if !self.ready_reads.is_empty() {
                self.queue_ready_reads()?;
            }
            if self.ftl.cmt.as_ref().is_some_and(|c| c.has_due()) {
                self.write_back_due();
            }
            if !self.host.backlog.is_empty() {
                self.drain_backlog()?;
            }
            if self.events_handled & 0xFFFF == 0 {
                if let Some(f) = self.progress.as_mut() {
                    f(self.metrics.host.requests);
                }
            }
        }
        if self.host.outstanding > 0
            || self.host.next.is_some()
            || self.host.queued > 0
            || !self.host.held.is_empty()
            || !self.host.backlog.is_empty()
            || !self.host.linking.is_empty()
        {
            return Err(SimError::Stalled {
                time_us: self.now.as_us(),
                outstanding: self.host.outstanding,
            });
        }
        self.drop_unfinished_idle_work();
        self.check_drained()?;
        if self.opts.verify {
            let (map, buffer, policies) = (&self.ftl.map, &self.buffer, &self.policies);
            let newer = |lpn: u32| {
                map.in_flight(lpn)
                    || buffer.as_ref().is_some_and(|b| b.is_dirty(lpn))
                    || policies.list.iter().flatten().any(|p| p.holds_newer(lpn))
            };
            verify::check_ftl(&self.ftl, &newer)?;
            self.check_partitions()?;
            for p in self.policies.list.iter().flatten() {
                p.verify(&self.ftl)?;
            }
            let map = &self.ftl.map;
            if let Some(lpn) = self
                .ftl
                .cmt
                .as_ref()
                .and_then(|c| c.lost_update(|l| map.ppn(l)))
            {
                return Err(VerifyError(format!(
                    "mapping cache: logical page {lpn} is at physical page {} but neither a dirty cached entry nor its translation page says so",
                    map.ppn(lpn)
                ))
                .into());
            }
        }
        Ok(())
    }

    /// The end-of-run checks every run makes (cheap; `--verify` adds the rest): no die holds
    /// queued work, and every placed host write took its page (or its count would bias
    /// `most-free`).
    fn check_drained(&self) -> Result<(), SimError> {
        let wedged = |what: String| SimError::Wedged {
            time_us: self.now.as_us(),
            what,
        };
        if let Some((die, d)) = self.dies.iter().enumerate().find(|(_, d)| {
            let q = &d.queues;
            !q.reads.is_empty() || !q.writes.is_empty() || !q.internal.is_empty()
        }) {
            let q = &d.queues;
            return Err(wedged(format!(
                "die {die} still holds {} reads, {} writes and {} internal operations",
                q.reads.len(),
                q.writes.len(),
                q.internal.len()
            )));
        }
        if let Some(p) = self.placed.iter().position(|&n| n != 0) {
            return Err(wedged(format!(
                "plane {p} still counts {} host writes as placed",
                self.placed[p]
            )));
        }
        Ok(())
    }

    /// One in-flight program of `lpn` is done.
    fn pending_done(&mut self, lpn: u32) {
        if !self.ftl.map.program_done(lpn) || self.reads_after_write.is_empty() {
            return;
        }
        if let Some(waiting) = self.reads_after_write.remove(&lpn) {
            let ready = waiting.into_iter().map(|(req, host)| (req, lpn, host));
            self.ready_reads.extend(ready);
        }
    }

    /// Inlined with [`EventQueue::push`] so the event goes from registers into the queue: an
    /// out-of-line call receives it through memory, stored field by field and reloaded whole
    /// (a store-forwarding stall per event).
    #[inline(always)]
    fn schedule(&mut self, at: SimTime, ev: Event) {
        self.check_elided(at);
        self.events.push(at, ev);
    }

    fn closed_loop(&self) -> bool {
        self.cfg.host.mode == HostMode::Closed
    }
}
