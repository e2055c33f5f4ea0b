//! A run's timeline as Chrome trace-event JSON (the format Perfetto, ui.perfetto.dev, opens):
//! one process per channel with one track per die (per plane when multi-plane operations are
//! on), every flash array operation as a complete event (`ph: "X"`), the parts of an operation
//! cut by suspension in a category of their own, bus transfers in theirs, and every host
//! request as an async span from arrival to completion on a "host" process, with its waits.
//!
//! Written as the run goes (nothing is kept per event), bounded by a window of simulated time
//! and a maximum number of events; what was left out is counted in the file's `metadata`.
//!
//! Past 500 lines, it stays whole: the records the simulation hands over and the one writer
//! that turns each into a line of the format are a single contract with Perfetto's importer
//! (names, categories, ids, tracks); apart, a record's field and the line that writes it
//! would drift.

use super::RequestRecord;
use serde::Serialize;
use std::io::{self, Write};

/// Where the tracks are: the drive's shape.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Channels (one process each).
    pub channels: u32,
    /// Dies on each channel.
    pub dies_per_channel: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// One track per plane instead of per die (multi-plane operations on).
    pub plane_tracks: bool,
}

impl Layout {
    /// The tracks of the drive `cfg` describes.
    pub fn of(cfg: &crate::config::Config) -> Self {
        let geo = crate::flash::Geometry::of(cfg);
        Layout {
            channels: geo.channels,
            dies_per_channel: geo.dies_per_channel(),
            planes_per_die: geo.planes_per_die,
            plane_tracks: cfg.flash.multi_plane,
        }
    }
}

/// Limits of what is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Keep only events that overlap this span of simulated time, ns (`None`: all).
    pub window_ns: Option<(u64, u64)>,
    /// Write at most this many events (`None`: no limit); the rest are counted.
    pub max_events: Option<u64>,
}

/// One flash array operation, or one part of an operation cut by suspension.
#[derive(Debug, Clone, Copy)]
pub struct FlashOp {
    /// `read`, `program` or `erase`.
    pub kind: &'static str,
    /// Why it ran (`user`, `gc`, `migration`, `redundancy`, `mapping`).
    pub cause: &'static str,
    /// Die (global index) and plane (global index).
    pub die: u32,
    /// Global plane index.
    pub plane: u32,
    /// Block within its plane and page within its block (`None` when it has none).
    pub block: Option<u32>,
    /// Page within the block (erases: none).
    pub page: Option<u32>,
    /// The host request it serves (its id: arrival order from 0), for host operations.
    pub req: Option<u64>,
    /// Start and end, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// For a part of a suspended operation: its number from 0 and whether it is the last.
    pub part: Option<(u32, bool)>,
}

/// Counts of a finished timeline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimelineCounts {
    /// Events written (without the track names).
    pub written: u64,
    /// Events inside the window left out past `max_events`.
    pub dropped: u64,
}

/// What a simulation tells a timeline (implemented by [`Timeline`], and by a borrow of one).
pub trait TimelineSink {
    /// A flash array operation, or a part of one cut by suspension.
    fn flash(&mut self, op: &FlashOp);
    /// A bus transfer of one die's operation, `inward` before a program.
    fn bus(&mut self, t: &Transfer);
    /// A completed host request.
    fn request(&mut self, r: &RequestRecord);
    /// A span of time a die spent in one state (a GC job, a suspension).
    fn span(&mut self, s: &Span);
    /// A die's queue lengths (`queue`) or a plane's free blocks (`free`), from `at_ns` on.
    fn counter(&mut self, c: &Counter);
}

/// What a [`Span`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// A GC job: victim chosen → erased.
    GcJob,
    /// A scheme's refresh of a block (relocated and erased like a GC job).
    Refresh,
    /// A program or erase suspended: suspend point → resume.
    Suspended,
}

/// A span of time on one die.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// What it is.
    pub kind: SpanKind,
    /// Die (global index).
    pub die: u32,
    /// Global plane index.
    pub plane: u32,
    /// The victim block within its plane (GC and refresh).
    pub block: Option<u32>,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// A counter's new values.
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    /// A die's queued operations by queue, from `at_ns`.
    Queue {
        /// Die (global index).
        die: u32,
        /// When.
        at_ns: u64,
        /// Queued host reads, writes (programs) and internal work.
        reads: u32,
        /// Queued writes.
        writes: u32,
        /// Queued internal operations (GC, erases, a scheme's own).
        internal: u32,
    },
    /// A plane's free blocks, from `at_ns`.
    Free {
        /// Die (global index).
        die: u32,
        /// Global plane index.
        plane: u32,
        /// When.
        at_ns: u64,
        /// Free blocks.
        blocks: u32,
    },
}

/// A bus transfer.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    /// The die (global index) and the plane of the operation it serves.
    pub die: u32,
    /// Global plane index.
    pub plane: u32,
    /// Into the die (a program's data) or out of it (a read's).
    pub inward: bool,
    /// The operation's cause.
    pub cause: &'static str,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

impl<T: TimelineSink + ?Sized> TimelineSink for &mut T {
    fn flash(&mut self, op: &FlashOp) {
        (**self).flash(op);
    }
    fn bus(&mut self, t: &Transfer) {
        (**self).bus(t);
    }
    fn request(&mut self, r: &RequestRecord) {
        (**self).request(r);
    }
    fn span(&mut self, s: &Span) {
        (**self).span(s);
    }
    fn counter(&mut self, c: &Counter) {
        (**self).counter(c);
    }
}

/// The timeline being written.
pub struct Timeline<W: Write> {
    out: W,
    layout: Layout,
    limits: Limits,
    counts: TimelineCounts,
    first: bool,
    error: Option<io::Error>,
    /// Ids of the async spans written (GC jobs, suspensions).
    spans: u64,
    /// With several I/O flows: the flows met so far, in that order; flow `i`'s requests are
    /// drawn under a process of their own after the host's.
    flows: Vec<String>,
}

/// One trace event; `ts` and `dur` in ns, written as µs with three decimals (exact).
struct Event<'a, A: Serialize> {
    name: &'a str,
    cat: &'static str,
    ph: &'static str,
    ts: u64,
    dur: Option<u64>,
    pid: u32,
    tid: u32,
    id: Option<u64>,
    args: A,
}

/// Writes ns as µs with three decimals.
fn micros(out: &mut impl Write, ns: u64) -> io::Result<()> {
    write!(out, "{}.{:03}", ns / 1000, ns % 1000)
}

#[derive(Serialize)]
struct FlashArgs {
    cause: &'static str,
    plane: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    req: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    part: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last: Option<bool>,
}

#[derive(Serialize)]
struct Named<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct Sorted {
    sort_index: u32,
}

impl<W: Write> Timeline<W> {
    /// Starts the file on `out`: the header and the names of every track.
    ///
    /// # Errors
    /// Writing to `out`.
    pub fn new(out: W, layout: Layout, limits: Limits) -> io::Result<Self> {
        let mut t = Timeline {
            out,
            layout,
            limits,
            counts: TimelineCounts::default(),
            first: true,
            error: None,
            spans: 0,
            flows: Vec::new(),
        };
        t.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        for ch in 0..layout.channels {
            t.meta(
                "process_name",
                ch,
                0,
                &Named {
                    name: &format!("channel {ch}"),
                },
            )?;
            t.meta("process_sort_index", ch, 0, &Sorted { sort_index: ch })?;
            for d in 0..layout.dies_per_channel {
                let die = ch * layout.dies_per_channel + d;
                if layout.plane_tracks {
                    for p in 0..layout.planes_per_die {
                        let plane = die * layout.planes_per_die + p;
                        let name = format!("die {die} plane {plane}");
                        t.meta("thread_name", ch, plane, &Named { name: &name })?;
                    }
                } else {
                    t.meta(
                        "thread_name",
                        ch,
                        die,
                        &Named {
                            name: &format!("die {die}"),
                        },
                    )?;
                }
            }
        }
        let host = layout.channels;
        t.meta(
            "process_name",
            host,
            0,
            &Named {
                name: "host requests",
            },
        )?;
        t.meta("process_sort_index", host, 0, &Sorted { sort_index: host })?;
        Ok(t)
    }

    /// The process of I/O flow `flow`'s requests, named when first met.
    fn flow_process(&mut self, flow: &str) -> u32 {
        let host = self.layout.channels;
        if let Some(i) = self.flows.iter().position(|f| f == flow) {
            return host + 1 + i as u32;
        }
        self.flows.push(flow.to_string());
        let pid = host + self.flows.len() as u32;
        let name = format!("host requests: flow {flow}");
        let written = self
            .meta("process_name", pid, 0, &Named { name: &name })
            .and_then(|()| self.meta("process_sort_index", pid, 0, &Sorted { sort_index: pid }));
        if let Err(e) = written {
            self.error.get_or_insert(e);
        }
        pid
    }

    fn meta<A: Serialize>(&mut self, name: &str, pid: u32, tid: u32, args: &A) -> io::Result<()> {
        let e = Event {
            name,
            cat: "__metadata",
            ph: "M",
            ts: 0,
            dur: None,
            pid,
            tid,
            id: None,
            args,
        };
        self.put(&e)
    }

    fn put<A: Serialize>(&mut self, e: &Event<'_, A>) -> io::Result<()> {
        let out = &mut self.out;
        if !std::mem::take(&mut self.first) {
            out.write_all(b",\n")?;
        }
        out.write_all(b"{\"name\":")?;
        serde_json::to_writer(&mut *out, e.name)?;
        write!(out, ",\"cat\":\"{}\",\"ph\":\"{}\",\"ts\":", e.cat, e.ph)?;
        micros(out, e.ts)?;
        if let Some(d) = e.dur {
            out.write_all(b",\"dur\":")?;
            micros(out, d)?;
        }
        write!(out, ",\"pid\":{},\"tid\":{}", e.pid, e.tid)?;
        if let Some(id) = e.id {
            write!(out, ",\"id2\":{{\"local\":{id}}}")?;
        }
        out.write_all(b",\"args\":")?;
        serde_json::to_writer(&mut *out, &e.args)?;
        out.write_all(b"}")
    }

    /// Whether an event over [start, end] is kept; counts it either way.
    fn admit(&mut self, start_ns: u64, end_ns: u64) -> bool {
        if let Some((lo, hi)) = self.limits.window_ns {
            if end_ns < lo || start_ns > hi {
                return false;
            }
        }
        if self
            .limits
            .max_events
            .is_some_and(|m| self.counts.written >= m)
        {
            self.counts.dropped += 1;
            return false;
        }
        self.counts.written += 1;
        true
    }

    /// Keeps the first write error; later events are skipped and `finish` returns it.
    fn emit<A: Serialize>(&mut self, e: &Event<'_, A>) {
        if self.error.is_none() {
            if let Err(err) = self.put(e) {
                self.error = Some(err);
            }
        }
    }

    fn track(&self, die: u32, plane: u32) -> (u32, u32) {
        let ch = die / self.layout.dies_per_channel.max(1);
        (ch, if self.layout.plane_tracks { plane } else { die })
    }

    /// A complete event (`X`) over `span` (start, end, ns) on the track of `die` / `plane`,
    /// if kept.
    fn complete<A: Serialize>(
        &mut self,
        (name, cat): (&str, &'static str),
        (die, plane): (u32, u32),
        (start_ns, end_ns): (u64, u64),
        args: A,
    ) {
        if !self.admit(start_ns, end_ns) {
            return;
        }
        let (pid, tid) = self.track(die, plane);
        let e = Event {
            name,
            cat,
            ph: "X",
            ts: start_ns,
            dur: Some(end_ns - start_ns),
            pid,
            tid,
            id: None,
            args,
        };
        self.emit(&e);
    }

    /// A counter event (`C`) at `at_ns` on the track of `die` / `plane`, if kept.
    fn count<A: Serialize>(
        &mut self,
        (name, cat): (&str, &'static str),
        (die, plane): (u32, u32),
        at_ns: u64,
        args: A,
    ) {
        if !self.admit(at_ns, at_ns) {
            return;
        }
        let (pid, tid) = self.track(die, plane);
        let e = Event {
            name,
            cat,
            ph: "C",
            ts: at_ns,
            dur: None,
            pid,
            tid,
            id: None,
            args,
        };
        self.emit(&e);
    }

    /// Ends the file (with what was left out in its `metadata`) and returns the writer and
    /// the counts.
    ///
    /// # Errors
    /// The first write error of the run, or of the end.
    pub fn finish(mut self) -> io::Result<(W, TimelineCounts)> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        write!(
            self.out,
            "\n],\"metadata\":{{\"ssdlab_events_written\":{},\"ssdlab_events_dropped\":{}}}}}\n",
            self.counts.written, self.counts.dropped
        )?;
        self.out.flush()?;
        Ok((self.out, self.counts))
    }
}

impl<W: Write> TimelineSink for Timeline<W> {
    /// A flash array operation (or part of one).
    fn flash(&mut self, op: &FlashOp) {
        let cat = if op.part.is_some() {
            "flash.suspended"
        } else {
            "flash"
        };
        let args = FlashArgs {
            cause: op.cause,
            plane: op.plane,
            block: op.block,
            page: op.page,
            req: op.req,
            part: op.part.map(|p| p.0),
            last: op.part.map(|p| p.1),
        };
        let span = (op.start_ns, op.end_ns);
        self.complete((op.kind, cat), (op.die, op.plane), span, args);
    }

    /// A bus transfer of a die's operation (`in` before a program, `out` after a read).
    fn bus(&mut self, t: &Transfer) {
        #[derive(Serialize)]
        struct BusArgs {
            cause: &'static str,
        }
        let name = if t.inward {
            "transfer in"
        } else {
            "transfer out"
        };
        let args = BusArgs { cause: t.cause };
        self.complete(
            (name, "bus"),
            (t.die, t.plane),
            (t.start_ns, t.end_ns),
            args,
        );
    }

    /// A completed host request: an async span from arrival to completion, its record's
    /// parts (waits by cause, summed over its pages) in the opening event's `args`; its id is
    /// process-local (`id2.local`), so Perfetto draws the spans under the host process.
    fn request(&mut self, r: &RequestRecord) {
        let start = (r.arrival_us * 1e3).round() as u64;
        let end = ((r.arrival_us + r.response_us) * 1e3).round() as u64;
        if !self.admit(start, end) {
            return;
        }
        let name = if r.op == 'R' { "read" } else { "write" };
        let pid = match &r.flow {
            Some(flow) => self.flow_process(flow),
            None => self.layout.channels,
        };
        let id = Some(r.id);
        let open = Event {
            name,
            cat: "request",
            ph: "b",
            ts: start,
            dur: None,
            pid,
            tid: 0,
            id,
            args: r,
        };
        self.emit(&open);
        let close = Event {
            name,
            cat: "request",
            ph: "e",
            ts: end,
            dur: None,
            pid,
            tid: 0,
            id,
            args: Named { name },
        };
        self.emit(&close);
    }

    fn span(&mut self, s: &Span) {
        if !self.admit(s.start_ns, s.end_ns) {
            return;
        }
        #[derive(Serialize)]
        struct SpanArgs {
            plane: u32,
            #[serde(skip_serializing_if = "Option::is_none")]
            block: Option<u32>,
        }
        let (pid, _) = self.track(s.die, s.plane);
        let (cat, what) = match s.kind {
            SpanKind::GcJob => ("gc", "GC"),
            SpanKind::Refresh => ("gc", "refresh"),
            SpanKind::Suspended => ("suspension", "suspended"),
        };
        // Async spans of one name share a track: one per die and kind.
        let name = format!("{what} die {}", s.die);
        self.spans += 1;
        let id = Some(self.spans);
        let args = SpanArgs {
            plane: s.plane,
            block: s.block,
        };
        for (ph, ts) in [("b", s.start_ns), ("e", s.end_ns)] {
            let e = Event {
                name: &name,
                cat,
                ph,
                ts,
                dur: None,
                pid,
                tid: 0,
                id,
                args: &args,
            };
            self.emit(&e);
        }
    }

    fn counter(&mut self, c: &Counter) {
        #[derive(Serialize)]
        struct Queued {
            reads: u32,
            writes: u32,
            internal: u32,
        }
        #[derive(Serialize)]
        struct Free {
            blocks: u32,
        }
        match *c {
            Counter::Queue {
                die,
                at_ns,
                reads,
                writes,
                internal,
            } => {
                let name = format!("queue die {die}");
                let track = (die, die * self.layout.planes_per_die);
                let args = Queued {
                    reads,
                    writes,
                    internal,
                };
                self.count((&name, "queue"), track, at_ns, args);
            }
            Counter::Free {
                die,
                plane,
                at_ns,
                blocks,
            } => {
                let name = format!("free blocks plane {plane}");
                self.count((&name, "free"), (die, plane), at_ns, Free { blocks });
            }
        }
    }
}
