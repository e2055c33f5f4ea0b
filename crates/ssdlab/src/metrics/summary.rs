//! The JSON summary of a run. Keys are part of the interface scripts depend on.
//!
//! Past 500 lines, it stays whole: every key of that interface is declared here, one struct
//! per section with the function that fills it, so the interface reads as one document and a
//! renamed key shows in one diff.

use super::{Metrics, RequestMetrics};
use crate::sched::{Cause, OpClass, OpKind};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// Response-time statistics of one request class, µs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySummary {
    /// Requests.
    pub count: u64,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 97th percentile.
    pub p97_us: f64,
    /// 98th percentile.
    pub p98_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.5th percentile.
    pub p99_5_us: f64,
    /// 99.9th percentile.
    pub p99_9_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// CDF points `[latency_us, cumulative fraction]` at the 1st..100th percentiles and the tail.
    pub cdf: Vec<[f64; 2]>,
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 1e3 * 1000.0).round() / 1000.0
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl LatencySummary {
    /// Statistics of a histogram of nanoseconds (percentiles to hdrhistogram's 3 significant
    /// digits) with the exact sum of its values for the mean.
    pub fn of(h: &Histogram<u64>, sum_ns: u128) -> Self {
        let q = |p: f64| {
            if h.is_empty() {
                0.0
            } else {
                us(h.value_at_quantile(p))
            }
        };
        let mut cdf = Vec::new();
        if !h.is_empty() {
            let quantiles = (1..=99)
                .map(|i| f64::from(i) / 100.0)
                .chain([0.995, 0.999, 1.0]);
            for p in quantiles {
                let v = us(h.value_at_quantile(p));
                if cdf.last().is_none_or(|l: &[f64; 2]| l[0] != v) {
                    cdf.push([v, p]);
                } else if let Some(l) = cdf.last_mut() {
                    l[1] = p;
                }
            }
        }
        LatencySummary {
            count: h.len(),
            mean_us: if h.is_empty() {
                0.0
            } else {
                round6(sum_ns as f64 / h.len() as f64 / 1e3)
            },
            p50_us: q(0.5),
            p95_us: q(0.95),
            p97_us: q(0.97),
            p98_us: q(0.98),
            p99_us: q(0.99),
            p99_5_us: q(0.995),
            p99_9_us: q(0.999),
            max_us: if h.is_empty() { 0.0 } else { us(h.max()) },
            cdf,
        }
    }
}

/// What the host sees of a set of requests (the run's, or one flow's): the summary's
/// response-time and read-wait keys, computed one way for both.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HostView {
    /// All requests.
    pub all: LatencySummary,
    /// Read requests.
    pub read: LatencySummary,
    /// Write requests.
    pub write: LatencySummary,
    /// Host pages by kind.
    pub host_pages: BTreeMap<&'static str, u64>,
    /// Read pages blocked by a program or erase.
    pub reads_blocked: u64,
    /// `reads_blocked` as % of host read pages.
    pub reads_blocked_pct: f64,
    /// Read requests with a page blocked, % of read requests.
    pub read_requests_blocked_pct: f64,
    /// Read requests with a page served elsewhere than at home, % of read requests.
    pub read_requests_redirected_pct: f64,
    /// Mean read page's time by part, µs (per page served by flash).
    pub read_wait_us: BTreeMap<&'static str, f64>,
}

impl HostView {
    /// The view of `m`; `host_parts` adds the host-side parts of a read's time the run models
    /// (`host_link`, `host_queue`), `mapping` the mapping cache's wait class.
    pub fn of(m: &RequestMetrics, host_parts: [bool; 2], mapping: bool) -> Self {
        let flash_pages = m.read_pages_flash.max(1) as f64;
        let per_page = |ns: u64| round6(ns as f64 / flash_pages / 1e3);
        let mut wait = BTreeMap::new();
        wait.insert("service", per_page(m.read_service_ns));
        wait.insert("bus", per_page(m.read_bus_wait_ns));
        for c in OpClass::ALL {
            if c != OpClass::Mapping || mapping {
                wait.insert(c.name(), per_page(m.read_wait_ns[c as usize]));
            }
        }
        // A read request's time on the host link, and its wait on the host side for the drive
        // to take it, shared over its pages like the other parts.
        if host_parts[0] {
            wait.insert("host_link", per_page(m.host_link_read_ns));
        }
        if host_parts[1] {
            wait.insert("host_queue", per_page(m.host_queue_read_ns));
        }
        let [all, read, write] = m.latency_sum_ns;
        let read = LatencySummary::of(&m.read, read);
        HostView {
            all: LatencySummary::of(&m.all(), all),
            write: LatencySummary::of(&m.write, write),
            host_pages: [("read", m.read_pages), ("write", m.write_pages)]
                .into_iter()
                .collect(),
            reads_blocked: m.read_pages_blocked,
            reads_blocked_pct: pct(m.read_pages_blocked, m.read_pages),
            read_requests_blocked_pct: pct(m.read_requests_blocked, read.count),
            read_requests_redirected_pct: pct(m.read_requests_redirected, read.count),
            read,
            read_wait_us: wait,
        }
    }
}

/// One I/O flow's part of a run with several (`flows` in the summary).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowSummary {
    /// The flow's name.
    pub name: String,
    /// Requests completed.
    pub requests: u64,
    /// From the flow's first arrival to its last completion, s.
    pub simulated_s: f64,
    /// Response times and read waits, as the run's.
    #[serde(flatten)]
    pub host: HostView,
    /// Throughput over `simulated_s`.
    pub throughput: Throughput,
    /// The flow's mean response times when it runs alone on the same drive (`--alone`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alone: Option<AloneSummary>,
    /// Mean response time shared ÷ alone (`--alone`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
}

/// A flow's mean response times in a run of its own on the same drive, µs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AloneSummary {
    /// All requests.
    pub all_mean_us: f64,
    /// Reads.
    pub read_mean_us: f64,
    /// Writes.
    pub write_mean_us: f64,
}

/// Completed work per second.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Throughput {
    /// Requests per second.
    pub iops: f64,
    /// Bytes read, MB/s (10^6 bytes per second).
    pub read_mb_s: f64,
    /// Bytes written, MB/s.
    pub write_mb_s: f64,
}

impl FlowSummary {
    /// Flow `name`'s summary from its metrics (`host_parts`, `mapping`: as [`HostView::of`]).
    pub fn of(name: &str, m: &RequestMetrics, host_parts: [bool; 2], mapping: bool) -> Self {
        let span_ns = m.end_ns.saturating_sub(m.first_arrival_ns.unwrap_or(0));
        let per_s = |x: f64| {
            if span_ns == 0 {
                0.0
            } else {
                round6(x / (span_ns as f64 / 1e9))
            }
        };
        FlowSummary {
            name: name.to_string(),
            requests: m.requests,
            simulated_s: span_ns as f64 / 1e9,
            host: HostView::of(m, host_parts, mapping),
            throughput: Throughput {
                iops: per_s(m.requests as f64),
                read_mb_s: per_s(m.bytes[0] as f64 / 1e6),
                write_mb_s: per_s(m.bytes[1] as f64 / 1e6),
            },
            alone: None,
            slowdown: None,
        }
    }
}

impl Summary {
    /// Adds what each flow does alone (`alone[i]`: the run of flow `i` by itself on the same
    /// drive): each flow's `slowdown`, its mean response time shared ÷ alone, and the run's
    /// `fairness`, the smallest slowdown ÷ the largest (1: every flow slowed alike), as MQSim
    /// (Tavakkol et al., FAST '18) and FLIN (Tavakkol et al., ISCA '18) define them. A flow
    /// with no requests, or none alone, has no slowdown, and then the run no fairness.
    pub fn add_alone(&mut self, alone: &[Summary]) {
        for (f, a) in self.flows.iter_mut().zip(alone) {
            f.alone = Some(AloneSummary {
                all_mean_us: a.all.mean_us,
                read_mean_us: a.read.mean_us,
                write_mean_us: a.write.mean_us,
            });
            f.slowdown = (a.all.mean_us > 0.0 && f.requests > 0)
                .then(|| round6(f.host.all.mean_us / a.all.mean_us));
        }
        let slowdowns: Option<Vec<f64>> = self.flows.iter().map(|f| f.slowdown).collect();
        self.fairness = slowdowns.filter(|s| !s.is_empty()).map(|s| {
            let (lo, hi) = s.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            });
            round6(lo / hi)
        });
    }
}

/// `n / d` in percent, rounded to 4 decimals (0 when `d` is 0).
pub fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        (1e6 * n as f64 / d as f64).round() / 1e4
    }
}

/// Flash operation counts.
#[derive(Debug, Clone, Serialize)]
pub struct FlashCounts {
    /// Page reads.
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// The same by cause (`user`, `gc`, …).
    pub by_cause: BTreeMap<&'static str, [u64; 3]>,
    /// Multi-plane commands (two or more planes of a die at once) as reads, programs, erases;
    /// left out when there are none (`flash.multi_plane` off).
    #[serde(skip_serializing_if = "none_multi_plane")]
    pub multi_plane: [u64; 3],
}

fn none_multi_plane(v: &[u64; 3]) -> bool {
    v.iter().all(|&n| n == 0)
}

/// GC statistics.
#[derive(Debug, Clone, Serialize)]
pub struct GcSummary {
    /// GC jobs (victims cleaned).
    pub count: u64,
    /// Accumulated GC time (victim chosen → erased), ms.
    pub time_ms: f64,
    /// Valid pages relocated.
    pub pages_moved: u64,
    /// Most GC jobs one plane ran at once (`ftl.gc_jobs_per_plane`; left out when at most 1).
    #[serde(skip_serializing_if = "at_most_one")]
    pub max_concurrent: u32,
}

fn at_most_one(n: &u32) -> bool {
    *n <= 1
}

/// Erase-count spread over all blocks (preconditioning included).
#[derive(Debug, Clone, Serialize)]
pub struct WearSummary {
    /// Least-erased block.
    pub erase_min: u32,
    /// Mean erases per block.
    pub erase_mean: f64,
    /// Most-erased block.
    pub erase_max: u32,
    /// Static wear-levelling jobs (`ftl.static_wl_threshold`; their moves and erases count
    /// under `gc`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub static_wl_runs: u64,
}

/// Simulator performance (wall-clock: excluded from determinism comparisons).
#[derive(Debug, Clone, Serialize)]
pub struct SimPerf {
    /// Wall time of the timed run, s (preconditioning excluded).
    pub wall_s: f64,
    /// Wall time of preconditioning, s.
    pub precondition_wall_s: f64,
    /// Events processed.
    pub events: u64,
    /// Host requests per wall-clock second.
    pub requests_per_s: f64,
    /// Events per wall-clock second.
    pub events_per_s: f64,
}

/// The summary of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Tool and version.
    pub tool: String,
    /// Hash of the resolved configuration.
    pub config_hash: String,
    /// Master seed.
    pub seed: u64,
    /// Scheme.
    pub scheme: String,
    /// Whether `--verify` checks ran (and passed, since the run finished).
    pub verified: bool,
    /// Requests completed.
    pub requests: u64,
    /// Simulated time until the last completion, s.
    pub simulated_s: f64,
    /// All requests.
    pub all: LatencySummary,
    /// Read requests.
    pub read: LatencySummary,
    /// Write requests.
    pub write: LatencySummary,
    /// Host page counts.
    pub host_pages: BTreeMap<&'static str, u64>,
    /// Read pages blocked by a program/erase on their die (running or queued ahead).
    pub reads_blocked: u64,
    /// `reads_blocked` as % of host read pages.
    pub reads_blocked_pct: f64,
    /// Read requests with at least one page blocked, as % of read requests (the papers'
    /// "read requests are blocked", hotr.txt §II).
    pub read_requests_blocked_pct: f64,
    /// Read requests with at least one page served from another copy (a staged copy, a
    /// mirror) or rebuilt by a scheme instead of waiting at home, as % of read requests.
    pub read_requests_redirected_pct: f64,
    /// Mean time per flash-served read page, µs, by where it went: own service (sense +
    /// transfer), bus wait, and waiting in the die queue behind reads, user programs, GC, erases;
    /// with a host link (`host.link`), `host_link`: read requests' time on the link (command,
    /// data and completion, with queueing) over the same pages; with
    /// `host.max_requests_in_flight`, `host_queue`: read requests' wait on the host side for
    /// the drive to take them, likewise.
    pub read_wait_us: BTreeMap<&'static str, f64>,
    /// Flash programs / host page writes.
    pub write_amplification: f64,
    /// Flash operations.
    pub flash: FlashCounts,
    /// Garbage collection.
    pub gc: GcSummary,
    /// Wear.
    pub wear: WearSummary,
    /// Host requests held back by the write-queue bound.
    pub host_stalls: u64,
    /// Requests some of whose pages waited for the page window (`host.max_pages_in_flight`;
    /// left out when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub window_waits: u64,
    /// Requests that waited on the host side because the drive held
    /// `host.max_requests_in_flight` requests (left out when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fetch_waits: u64,
    /// Requests with pages beyond the drive's logical capacity, folded onto it
    /// (`ftl.out_of_range = "wrap"`; left out when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wrapped_requests: u64,
    /// The same as % of requests (left out when none).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub wrapped_pct: f64,
    /// Pages the workload reads before writing them, programmed before the run at their
    /// level (`precondition.pre_process`; left out without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_processed_pages: Option<u64>,
    /// Block summary pages programmed (`ftl.summary_pages`; among `flash.programs`, left out
    /// when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summary_programs: u64,
    /// The cached mapping table (`ftl.mapping_cache_*`; left out without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_cache: Option<MappingCacheSummary>,
    /// Programs, erases and their suspension.
    pub pe: PeSummary,
    /// % of the simulated span (first arrival → last completion) with no request outstanding.
    pub idle_pct: f64,
    /// Device buffer (zeros without one).
    pub buffer: BufferSummary,
    /// Threshold-voltage levels and wear (hire.txt).
    pub voltage: VoltageSummary,
    /// HotR / DedupHR staging (zeros without a staging space).
    pub staging: StagingSummary,
    /// The dedup layer (left out when dedup is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedup: Option<DedupSummary>,
    /// Host buffer and ShadowGC (left out without a host buffer or GC variant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowSummary>,
    /// Rails / TTFlash (zeros without them).
    pub redundancy: RedundancySummary,
    /// Extra physical space of the scheme and the cost-latency product.
    pub cost: CostSummary,
    /// Per-scheme metrics (empty for the baseline).
    pub scheme_metrics: BTreeMap<String, f64>,
    /// What the trace reader skipped or adjusted (absent for synthetic workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::workload::trace::TraceCounts>,
    /// With several I/O flows run alone too (`--alone`): the smallest flow slowdown ÷ the
    /// largest ([`Summary::add_alone`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness: Option<f64>,
    /// Each I/O flow's own results, in the order the flows were given (absent when the run
    /// has one flow).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSummary>,
    /// Simulator performance.
    pub sim: SimPerf,
}

impl Summary {
    /// The flash operation counts of a run.
    pub fn flash_counts(m: &Metrics) -> FlashCounts {
        FlashCounts {
            reads: m.flash_total(OpKind::Read),
            programs: m.flash_total(OpKind::Program),
            erases: m.flash_total(OpKind::Erase),
            by_cause: Cause::ALL
                .iter()
                .map(|c| (c.name(), m.flash[*c as usize]))
                .collect(),
            multi_plane: m.multi_plane,
        }
    }

    /// The summary as pretty JSON with the wall-clock `sim` section removed: identical bytes
    /// for identical config, workload and seed.
    pub fn deterministic_json(&self) -> String {
        let v = serde_json::to_value(self).expect("summary serialises");
        serde_json::to_string_pretty(&deterministic(&v)).expect("summary serialises")
    }
}

/// A summary as JSON without its wall-clock `sim` section: what two runs of one config,
/// workload and seed agree on.
pub fn deterministic(summary: &serde_json::Value) -> serde_json::Value {
    let mut v = summary.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("sim");
    }
    v
}

/// Program/erase latency and suspension statistics.
#[derive(Debug, Clone, Serialize)]
pub struct PeSummary {
    /// Program operations (multi-plane gangs count once).
    pub programs: u64,
    /// Erase operations.
    pub erases: u64,
    /// Programs suspended at least once.
    pub programs_suspended: u64,
    /// As % of programs.
    pub programs_suspended_pct: f64,
    /// Erases suspended at least once.
    pub erases_suspended: u64,
    /// As % of erases.
    pub erases_suspended_pct: f64,
    /// Programs and erases suspended, as % of all programs and erases.
    pub pe_suspended_pct: f64,
    /// Suspensions in total.
    pub suspensions: u64,
    /// IPC program phases cancelled mid-way.
    pub phases_cancelled: u64,
    /// Mean nominal program time (command + transfer + array), µs.
    pub program_nominal_us: f64,
    /// Mean effective program time (start on the die → done, including suspensions), µs.
    pub program_effective_us: f64,
    /// Effective over nominal program time of suspended programs, % increase.
    pub suspended_program_increase_pct: f64,
    /// Mean nominal erase time, µs.
    pub erase_nominal_us: f64,
    /// Mean effective erase time, µs.
    pub erase_effective_us: f64,
    /// Effective over nominal erase time of suspended erases, % increase.
    pub suspended_erase_increase_pct: f64,
    /// Read pages that found their die running a program or erase.
    pub reads_found_running: u64,
    /// Read pages that waited for a suspension point.
    pub reads_waited_for_suspension: u64,
    /// Their mean wait from queueing to the suspension point (extra read latency), µs.
    pub suspension_wait_us: f64,
    /// The same for suspensions of programs only (pe-suspension.txt eq. 1), µs.
    pub program_suspension_wait_us: f64,
    /// The same for suspensions of erases only, µs.
    pub erase_suspension_wait_us: f64,
    /// The longest such wait, µs.
    pub suspension_wait_max_us: f64,
}

fn ratio_pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        round6(100.0 * part as f64 / whole as f64)
    }
}

fn mean_us(sum_ns: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        round6(sum_ns as f64 / n as f64 / 1e3)
    }
}

fn increase_pct(effective: u64, nominal: u64) -> f64 {
    if nominal == 0 {
        0.0
    } else {
        round6(100.0 * (effective as f64 / nominal as f64 - 1.0))
    }
}

/// Program/erase part of the summary.
pub fn summary_pe(m: &super::PeMetrics) -> PeSummary {
    PeSummary {
        programs: m.count[0],
        erases: m.count[1],
        programs_suspended: m.programs_suspended,
        programs_suspended_pct: ratio_pct(m.programs_suspended, m.count[0]),
        erases_suspended: m.erases_suspended,
        erases_suspended_pct: ratio_pct(m.erases_suspended, m.count[1]),
        pe_suspended_pct: ratio_pct(
            m.programs_suspended + m.erases_suspended,
            m.count[0] + m.count[1],
        ),
        suspensions: m.suspensions,
        phases_cancelled: m.phases_cancelled,
        program_nominal_us: mean_us(m.nominal_ns[0], m.count[0]),
        program_effective_us: mean_us(m.effective_ns[0], m.count[0]),
        suspended_program_increase_pct: increase_pct(
            m.suspended_effective_ns[0],
            m.suspended_nominal_ns[0],
        ),
        erase_nominal_us: mean_us(m.nominal_ns[1], m.count[1]),
        erase_effective_us: mean_us(m.effective_ns[1], m.count[1]),
        suspended_erase_increase_pct: increase_pct(
            m.suspended_effective_ns[1],
            m.suspended_nominal_ns[1],
        ),
        reads_found_running: m.reads_found_running,
        reads_waited_for_suspension: m.reads_waited[0] + m.reads_waited[1],
        suspension_wait_us: mean_us(
            m.wait_ns[0] + m.wait_ns[1],
            m.reads_waited[0] + m.reads_waited[1],
        ),
        program_suspension_wait_us: mean_us(m.wait_ns[0], m.reads_waited[0]),
        erase_suspension_wait_us: mean_us(m.wait_ns[1], m.reads_waited[1]),
        suspension_wait_max_us: round6(m.wait_max_ns as f64 / 1e3),
    }
}

/// Device buffer statistics.
#[derive(Debug, Clone, Serialize)]
pub struct BufferSummary {
    /// Host read pages served by the buffer.
    pub read_hits: u64,
    /// As % of host read pages.
    pub read_hit_pct: f64,
    /// Host write pages that updated a cached page.
    pub write_hits: u64,
    /// Clean pages evicted.
    pub evictions_clean: u64,
    /// Dirty pages evicted (each one flash program).
    pub evictions_dirty: u64,
    /// Evicted pages classed read-hot, write-hot and mixed.
    pub evicted_by_class: BTreeMap<&'static str, u64>,
    /// Clean read-hot pages reprogrammed at the high level (HIRE).
    pub rewrites: u64,
    /// Rewrites dropped before their program (the page changed or moved meanwhile).
    #[serde(skip_serializing_if = "is_zero")]
    pub rewrites_stale: u64,
    /// Rewrites not made because the die's idle-time backlog was full.
    #[serde(skip_serializing_if = "is_zero")]
    pub rewrites_skipped: u64,
    /// Rewrites still held for idle time when the run ended, not programmed (the die never
    /// had idle time it could program them in).
    #[serde(skip_serializing_if = "is_zero")]
    pub rewrites_unfinished: u64,
    /// Flushes run behind the writes that caused them (`buffer.flush_backlog_pages`: dirty
    /// evictions and eager flushes; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub background_flushes: u64,
    /// Of those, eager flushes of pages written for the first time in their period
    /// (`buffer.eager_flush_period_ms`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub eager_flushes: u64,
    /// Host write pages that waited for the flushes in flight to fall below the bound (left out
    /// when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub back_pressure_waits: u64,
}

/// Threshold-voltage levels and wear.
#[derive(Debug, Clone, Serialize)]
pub struct VoltageSummary {
    /// Page programs by level.
    pub programs: BTreeMap<&'static str, u64>,
    /// Share of programmed pages by level, %.
    pub program_share_pct: BTreeMap<&'static str, f64>,
    /// Host read pages served by flash, by the level of the page.
    pub read_pages: BTreeMap<&'static str, u64>,
    /// Their mean latency (queued on the die → done), µs.
    pub read_us: BTreeMap<&'static str, f64>,
    /// Block erases by the level the block was programmed at.
    pub erases: BTreeMap<&'static str, u64>,
    /// Wear weight of one erase by level: sum of the level's state voltages over the normal
    /// level's (hire.txt §2.1: wear is proportional to the threshold voltages).
    pub weight_per_erase: BTreeMap<&'static str, f64>,
    /// Total wearing weight of the run's erases.
    pub wearing_weight: f64,
    /// GC relocations programmed at another level than their victim's block (HIRE re-decides
    /// a moved page's level from its hotness field).
    #[serde(skip_serializing_if = "is_zero")]
    pub gc_relevelled: u64,
    /// Erases and wearing weight of the blocks first programmed during the run, apart from
    /// those that held preconditioned data (`voltage.split_fill_wear`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_blocks: Option<RunBlockWear>,
}

/// Wear of the blocks programmed during the run (preconditioned blocks left out).
#[derive(Debug, Clone, Serialize)]
pub struct RunBlockWear {
    /// Their erases by level.
    pub erases: BTreeMap<&'static str, u64>,
    /// Their wearing weight.
    pub wearing_weight: f64,
    /// Erases of blocks that held preconditioned data (all levels).
    pub fill_block_erases: u64,
}

/// HotR statistics.
#[derive(Debug, Clone, Serialize)]
pub struct StagingSummary {
    /// Conflicted read pages served from staging.
    pub redirected: u64,
    /// As % of host read pages.
    pub redirected_pct: f64,
    /// Conflicted read pages whose R-LRU entry had no copy yet.
    pub hits_without_copy: u64,
    /// Conflicted read pages without an R-LRU entry.
    pub misses: u64,
    /// Copies programmed into staging (migration programs).
    pub migrations: u64,
    /// Copies discarded on completion (the page changed meanwhile).
    pub migrations_discarded: u64,
    /// Copies invalidated by host writes.
    pub copies_invalidated: u64,
    /// Copies dropped by R-LRU evictions and staging reclamation.
    pub copies_dropped: u64,
    /// Staging blocks erased.
    pub erases: u64,
    /// Copies held at the end.
    pub copies: u64,
    /// Most copies held at once.
    pub peak_copies: u64,
    /// Conflicted reads with a copy whose die was busy with a program or erase too (served
    /// home).
    pub copy_busy: u64,
    /// Conflicted reads redirected to a copy whose die was busy too, as `staging.busy_copy`
    /// allows (counted in `redirected`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub busy_copy_redirected: u64,
    /// Copies not made because the staging die had `staging.max_queued_copies` queued.
    pub copies_skipped: u64,
    /// Simulated power losses (left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub power_losses: u64,
    /// Copies lost with the power (left out when no power loss).
    #[serde(skip_serializing_if = "is_zero")]
    pub copies_lost: u64,
    /// Staging space, pages.
    pub capacity_pages: u64,
}

/// Space cost of a scheme (hotr.txt §IV: cost-latency product).
#[derive(Debug, Clone, Serialize)]
pub struct CostSummary {
    /// Physical space relative to the same drive without the scheme's extra space.
    pub space_factor: f64,
    /// Mean response time × space factor, µs (normalise both to the baseline for the product).
    pub cost_latency_us: f64,
}

/// Rails / TTFlash statistics.
#[derive(Debug, Clone, Serialize)]
pub struct RedundancySummary {
    /// Rails: read pages served by the mirror.
    pub redirected: u64,
    /// As % of host read pages.
    pub redirected_pct: f64,
    /// Rails: mirror programs.
    pub mirror_programs: u64,
    /// Rails role switching: role swaps that released held programs or erases.
    pub role_switches: u64,
    /// TTFlash: read pages rebuilt from their stripe.
    pub rebuilt: u64,
    /// As % of host read pages.
    pub rebuilt_pct: f64,
    /// TTFlash: reconstruction reads.
    pub reconstruction_reads: u64,
    /// TTFlash: parity programs.
    pub parity_programs: u64,
    /// TTFlash: reads of the old parity (read-modify-write updates).
    pub parity_reads: u64,
}

/// The cached mapping table: its size, lookups and flash work.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MappingCacheSummary {
    /// Entries it holds at most.
    pub entries: u32,
    /// Entries per translation page.
    pub entries_per_page: u32,
    /// Translation pages (logical pages of the mapping stored in flash).
    pub translation_pages: u32,
    /// Host read pages whose entry was cached / not.
    pub read_hits: u64,
    /// …
    pub read_misses: u64,
    /// % of host read lookups that hit.
    pub read_hit_pct: f64,
    /// Host write pages whose entry was cached / not.
    pub write_hits: u64,
    /// …
    pub write_misses: u64,
    /// Misses served without a flash read (translation page held by the
    /// controller for its program in flight).
    pub filled_without_read: u64,
    /// Translation reads loading entries (one serves every miss waiting on the page).
    pub translation_reads: u64,
    /// Dirty evictions, each a write-back of its translation page.
    pub writebacks: u64,
    /// Dirty entries cleaned by write-backs besides the evicted ones.
    pub entries_written_back: u64,
    /// Translation reads merging a write-back with the entries not cached.
    pub merge_reads: u64,
    /// Translation page programs.
    pub translation_programs: u64,
    /// Dirty entries a power loss took (rebuilt from the pages' spare areas on restart).
    pub lost_dirty_at_power_loss: u64,
}

/// The mapping cache's section from its counters and the simulator's flash work.
pub fn summary_mapping_cache(
    c: &crate::ftl::cmt::MappingCache,
    f: &super::CacheFlashCounts,
    translation_pages: u32,
) -> MappingCacheSummary {
    let k = &c.counts;
    MappingCacheSummary {
        entries: c.capacity(),
        entries_per_page: c.per_page(),
        translation_pages,
        read_hits: k.read_hits,
        read_misses: k.read_misses,
        read_hit_pct: ratio_pct(k.read_hits, k.read_hits + k.read_misses),
        write_hits: k.write_hits,
        write_misses: k.write_misses,
        filled_without_read: f.filled,
        translation_reads: f.loads,
        writebacks: k.writebacks,
        entries_written_back: k.entries_written_back,
        merge_reads: f.merge_reads,
        translation_programs: f.programs,
        lost_dirty_at_power_loss: k.lost_dirty,
    }
}

/// Rails / TTFlash part of the summary.
pub fn summary_redundancy(m: &super::RedundancyMetrics, host_read_pages: u64) -> RedundancySummary {
    RedundancySummary {
        redirected: m.redirected,
        redirected_pct: ratio_pct(m.redirected, host_read_pages),
        mirror_programs: m.mirror_programs,
        role_switches: m.role_switches,
        rebuilt: m.rebuilt,
        rebuilt_pct: ratio_pct(m.rebuilt, host_read_pages),
        reconstruction_reads: m.reconstruction_reads,
        parity_programs: m.parity_programs,
        parity_reads: m.parity_reads,
    }
}

/// HotR part of the summary.
pub fn summary_staging(
    m: &super::StagingMetrics,
    host_read_pages: u64,
    copies: u64,
    capacity_pages: u64,
) -> StagingSummary {
    StagingSummary {
        redirected: m.redirected,
        redirected_pct: ratio_pct(m.redirected, host_read_pages),
        hits_without_copy: m.hits_without_copy,
        misses: m.misses,
        migrations: m.migrations,
        migrations_discarded: m.migrations_discarded,
        copies_invalidated: m.copies_invalidated,
        copies_dropped: m.copies_dropped,
        erases: m.erases,
        copies,
        peak_copies: m.peak_copies,
        copy_busy: m.copy_busy,
        busy_copy_redirected: m.busy_copy_redirected,
        copies_skipped: m.copies_skipped,
        power_losses: m.power_losses,
        copies_lost: m.copies_lost,
        capacity_pages,
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// Host buffer and ShadowGC statistics (shadowgc.txt Figs. 6–8).
#[derive(Debug, Clone, Serialize)]
pub struct ShadowSummary {
    /// GC variant.
    pub gc: String,
    /// Write amplification from buffer flushes: host-data programs / host page writes.
    pub wa_flush: f64,
    /// Write amplification from GC: relocation programs (GC and refresh) / host page writes.
    pub wa_gc: f64,
    /// Host read pages served by the host buffer.
    pub host_read_hits: u64,
    /// Host write pages absorbed by the host buffer.
    pub host_write_hits: u64,
    /// Dirty pages the host buffer evicted (device writes).
    pub host_flushes: u64,
    /// GC relocations by state (`valid`, `host_shadow`, `device_shadow`, `twin_shadow`).
    pub relocated: BTreeMap<&'static str, u64>,
    /// The same as % of relocations (Fig. 8).
    pub relocated_pct: BTreeMap<&'static str, f64>,
    /// Relocations taken from the device buffer.
    pub from_buffer: u64,
    /// Relocations into dedicated blocks.
    pub separated: u64,
    /// Twin-shadows the device buffer dropped.
    pub twins_dropped: u64,
    /// Refresh jobs of fast-mode blocks.
    pub refresh_jobs: u64,
    /// Pages relocated by refresh.
    pub refresh_pages: u64,
    /// Refresh programs as % of all flash programs.
    pub refresh_pct: f64,
    /// Dirty host-buffer pages lost in a restart.
    pub host_pages_lost: u64,
    /// Dropped twin versions lost with the host copy at a restart.
    pub twin_versions_lost: u64,
    /// Dirty device-buffer pages flushed at a restart.
    pub restart_flushes: u64,
}

/// ShadowGC part of the summary.
pub fn summary_shadow(
    gc: &str,
    m: &super::ShadowMetrics,
    restart_flushes: u64,
    host_page_writes: u64,
    user_programs: u64,
    gc_programs: u64,
    programs: u64,
) -> ShadowSummary {
    const STATES: [&str; 4] = ["valid", "host_shadow", "device_shadow", "twin_shadow"];
    let total: u64 = m.relocated.iter().sum();
    let per = |x: u64| {
        if host_page_writes == 0 {
            0.0
        } else {
            round6(x as f64 / host_page_writes as f64)
        }
    };
    ShadowSummary {
        gc: gc.to_string(),
        wa_flush: per(user_programs),
        wa_gc: per(gc_programs),
        host_read_hits: m.host_read_hits,
        host_write_hits: m.host_write_hits,
        host_flushes: m.host_flushes,
        relocated: STATES.iter().copied().zip(m.relocated).collect(),
        relocated_pct: STATES
            .iter()
            .zip(m.relocated)
            .map(|(&k, v)| (k, ratio_pct(v, total)))
            .collect(),
        from_buffer: m.from_buffer,
        separated: m.separated,
        twins_dropped: m.twins_dropped,
        refresh_jobs: m.refresh_jobs,
        refresh_pages: m.refresh_pages,
        refresh_pct: ratio_pct(m.refresh_pages, programs),
        host_pages_lost: m.host_pages_lost,
        twin_versions_lost: m.twin_versions_lost,
        restart_flushes,
    }
}

/// Dedup statistics (deduphr.txt Table 2, Fig. 11).
#[derive(Debug, Clone, Serialize)]
pub struct DedupSummary {
    /// Host page writes.
    pub page_writes: u64,
    /// Of them, duplicates of live content: flash programs saved.
    pub duplicate_pages: u64,
    /// Duplicate page writes / page writes, %.
    pub dedup_ratio_pct: f64,
    /// Contents live at the end.
    pub live_contents: u64,
    /// Most contents live at once.
    pub peak_contents: u64,
    /// Contents whose last reference went (trimmed in the FTL).
    pub contents_dropped: u64,
    /// Host read pages by the reference count of the content read (`1`, `2`, `3-5`, `>5`), %
    /// (deduphr.txt Fig. 4).
    pub reads_by_refcount_pct: BTreeMap<&'static str, f64>,
    /// Live contents at the end by reference count, same buckets, %.
    pub contents_by_refcount_pct: BTreeMap<&'static str, f64>,
    /// Read requests as % of host requests.
    pub host_read_pct: f64,
    /// Read requests as % of the requests reaching flash (write requests whose every page was a
    /// duplicate do not).
    pub flash_read_pct: f64,
}

/// Dedup part of the summary.
pub fn summary_dedup(
    s: &crate::dedup::DedupStats,
    m: &super::DedupMetrics,
    live: u64,
    contents: [u64; 4],
) -> DedupSummary {
    const BUCKETS: [&str; 4] = ["1", "2", "3-5", ">5"];
    let pct = |b: [u64; 4]| {
        let total = b.iter().sum();
        BUCKETS
            .iter()
            .zip(b)
            .map(|(&k, v)| (k, ratio_pct(v, total)))
            .collect()
    };
    DedupSummary {
        reads_by_refcount_pct: pct(s.reads_by_refcount),
        contents_by_refcount_pct: pct(contents),
        page_writes: s.page_writes,
        duplicate_pages: s.duplicate_pages,
        dedup_ratio_pct: ratio_pct(s.duplicate_pages, s.page_writes),
        live_contents: live,
        peak_contents: s.peak_contents,
        contents_dropped: s.contents_dropped,
        host_read_pct: ratio_pct(m.read_requests, m.read_requests + m.write_requests),
        flash_read_pct: ratio_pct(m.read_requests, m.read_requests + m.write_requests_to_flash),
    }
}

/// Buffer part of the summary.
pub fn summary_buffer(m: &super::BufferMetrics, host_read_pages: u64) -> BufferSummary {
    BufferSummary {
        read_hits: m.read_hits,
        read_hit_pct: ratio_pct(m.read_hits, host_read_pages),
        write_hits: m.write_hits,
        evictions_clean: m.evictions[0],
        evictions_dirty: m.evictions[1],
        evicted_by_class: [
            ("read_hot", m.classes[0]),
            ("write_hot", m.classes[1]),
            ("mixed", m.classes[2]),
        ]
        .into_iter()
        .collect(),
        rewrites: m.rewrites,
        rewrites_stale: m.rewrites_stale,
        rewrites_unfinished: m.rewrites_unfinished,
        rewrites_skipped: m.rewrites_skipped,
        background_flushes: m.background_flushes,
        eager_flushes: m.eager_flushes,
        back_pressure_waits: m.back_pressure_waits,
    }
}

/// Voltage part of the summary; `weights` are the per-erase wear weights (low, normal, high).
pub fn summary_voltage(
    m: &super::LevelMetrics,
    weights: [f64; 3],
    split_fill: bool,
) -> VoltageSummary {
    use crate::flash::Level;
    let by = |a: &[u64; 3]| {
        Level::ALL
            .iter()
            .map(|l| (l.name(), a[*l as usize]))
            .collect()
    };
    let total: u64 = m.programs.iter().sum();
    let weight = |erases: &[u64; 3]| -> f64 {
        Level::ALL
            .iter()
            .map(|l| erases[*l as usize] as f64 * weights[*l as usize])
            .sum()
    };
    VoltageSummary {
        programs: by(&m.programs),
        program_share_pct: Level::ALL
            .iter()
            .map(|l| (l.name(), ratio_pct(m.programs[*l as usize], total)))
            .collect(),
        read_pages: by(&m.read_pages),
        read_us: Level::ALL
            .iter()
            .map(|l| {
                (
                    l.name(),
                    mean_us(m.read_ns[*l as usize], m.read_pages[*l as usize]),
                )
            })
            .collect(),
        erases: by(&m.erases),
        weight_per_erase: Level::ALL
            .iter()
            .map(|l| (l.name(), round6(weights[*l as usize])))
            .collect(),
        wearing_weight: round6(weight(&m.erases)),
        gc_relevelled: m.relevelled,
        run_blocks: split_fill.then(|| {
            let run: [u64; 3] = std::array::from_fn(|l| m.erases[l] - m.fill_erases[l]);
            RunBlockWear {
                erases: by(&run),
                wearing_weight: round6(weight(&run)),
                fill_block_erases: m.fill_erases.iter().sum(),
            }
        }),
    }
}

/// GC part of the summary.
pub fn summary_gc(m: &Metrics) -> GcSummary {
    GcSummary {
        count: m.gc_count,
        time_ms: round6(m.gc_time_ns as f64 / 1e6),
        pages_moved: m.gc_pages_moved,
        max_concurrent: m.gc_max_concurrent,
    }
}

/// Wear part of the summary from per-block erase counts.
pub fn summary_wear(erases: &[u32], static_wl_runs: u64) -> WearSummary {
    let n = erases.len().max(1) as f64;
    WearSummary {
        erase_min: erases.iter().copied().min().unwrap_or(0),
        erase_mean: round6(erases.iter().map(|&e| f64::from(e)).sum::<f64>() / n),
        erase_max: erases.iter().copied().max().unwrap_or(0),
        static_wl_runs,
    }
}

/// Performance part of the summary.
pub fn summary_perf(wall_s: f64, precondition_wall_s: f64, events: u64, requests: u64) -> SimPerf {
    let w = wall_s.max(1e-9);
    SimPerf {
        wall_s,
        precondition_wall_s,
        events,
        requests_per_s: requests as f64 / w,
        events_per_s: events as f64 / w,
    }
}
