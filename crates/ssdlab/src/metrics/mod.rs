//! Counters and latency histograms of one run, and the JSON summary built from them.

mod requests;
mod summary;
pub mod timeline;

pub(crate) use requests::RequestDetail;
pub use requests::{RequestRecord, RequestSink};

pub use summary::{
    deterministic, pct, summary_buffer, summary_dedup, summary_gc, summary_mapping_cache,
    summary_pe, summary_perf, summary_redundancy, summary_shadow, summary_staging, summary_voltage,
    summary_wear, AloneSummary, BufferSummary, CostSummary, DedupSummary, FlowSummary, HostView,
    LatencySummary, PeSummary, RedundancySummary, RunBlockWear, StagingSummary, Summary,
    Throughput, VoltageSummary,
};

use crate::sched::{Cause, OpClass, OpKind};
use hdrhistogram::Histogram;

/// Program/erase accounting (slot 0 = programs, 1 = erases; one entry per array operation,
/// a multi-plane gang counting once).
#[derive(Debug, Clone, Default)]
pub struct PeMetrics {
    /// Operations completed.
    pub count: [u64; 2],
    /// Sum of nominal times (command + transfer + array), ns.
    pub nominal_ns: [u64; 2],
    /// Sum of effective times (start on the die → done), ns.
    pub effective_ns: [u64; 2],
    /// The same two sums over suspended operations only.
    pub suspended_nominal_ns: [u64; 2],
    /// Effective time of suspended operations, ns.
    pub suspended_effective_ns: [u64; 2],
    /// Programs suspended at least once.
    pub programs_suspended: u64,
    /// Erases suspended at least once.
    pub erases_suspended: u64,
    /// Suspensions in total.
    pub suspensions: u64,
    /// IPC program phases cancelled mid-way.
    pub phases_cancelled: u64,
    /// Read pages that waited for a suspension point (slot 0: of a program, 1: of an erase).
    pub reads_waited: [u64; 2],
    /// Their summed wait from queueing to the suspension point, ns.
    pub wait_ns: [u64; 2],
    /// The longest such wait, ns.
    pub wait_max_ns: u64,
    /// Read pages that found their die running a program or erase.
    pub reads_found_running: u64,
}

/// Device buffer accounting.
#[derive(Debug, Clone, Default)]
pub struct BufferMetrics {
    /// Host read pages served by the buffer.
    pub read_hits: u64,
    /// Host write pages that updated a cached page.
    pub write_hits: u64,
    /// Evictions: `[clean, dirty]`.
    pub evictions: [u64; 2],
    /// Evicted pages by hotness: `[read-hot, write-hot, mixed]`.
    pub classes: [u64; 3],
    /// Clean read-hot pages reprogrammed at the high level (HIRE).
    pub rewrites: u64,
    /// Of those, dropped before their program because the page changed or moved meanwhile.
    pub rewrites_stale: u64,
    /// Rewrites not made because their die's idle-time backlog was full.
    pub rewrites_skipped: u64,
    /// Rewrites still held for idle time when the run ended (not programmed).
    pub rewrites_unfinished: u64,
    /// Dirty pages flushed at a restart (power-loss protection).
    pub restart_flushes: u64,
    /// Flushes run in the background (`buffer.flush_backlog_pages`): evictions and eager ones.
    pub background_flushes: u64,
    /// Of those, eager flushes of pages first written in their period.
    pub eager_flushes: u64,
    /// Host write pages that waited for the flushes to fall below the bound.
    pub back_pressure_waits: u64,
}

/// HotR accounting.
#[derive(Debug, Clone, Default)]
pub struct StagingMetrics {
    /// Conflicted read pages served from a staging copy.
    pub redirected: u64,
    /// Conflicted read pages whose R-LRU entry had no copy yet.
    pub hits_without_copy: u64,
    /// Conflicted read pages with no R-LRU entry.
    pub misses: u64,
    /// Copies programmed into staging.
    pub migrations: u64,
    /// Copies programmed but discarded (the page changed, or was copied, meanwhile).
    pub migrations_discarded: u64,
    /// Copies invalidated by host writes.
    pub copies_invalidated: u64,
    /// Copies dropped by R-LRU evictions or staging reclamation.
    pub copies_dropped: u64,
    /// Staging blocks erased to reclaim space.
    pub erases: u64,
    /// Most copies held at once.
    pub peak_copies: u64,
    /// Simulated power losses.
    pub power_losses: u64,
    /// Copies lost with the power.
    pub copies_lost: u64,
    /// Conflicted reads whose copy's die was busy with a program or erase too (served home).
    pub copy_busy: u64,
    /// Conflicted reads redirected to a copy whose die was busy too (`staging.busy_copy`).
    pub busy_copy_redirected: u64,
    /// Copies not made because the staging die had `max_queued_copies` queued.
    pub copies_skipped: u64,
}

/// Host buffer and ShadowGC accounting (shadowgc.txt).
#[derive(Debug, Clone, Default)]
pub struct ShadowMetrics {
    /// Host read pages served by the host buffer.
    pub host_read_hits: u64,
    /// Host write pages absorbed by a page already in the host buffer.
    pub host_write_hits: u64,
    /// Dirty pages the host buffer evicted: the device's writes.
    pub host_flushes: u64,
    /// GC relocations by the page's state: `[valid, host-shadow, device-shadow, twin-shadow]`.
    pub relocated: [u64; 4],
    /// Relocations whose data came from the device buffer (no flash read, no ECC).
    pub from_buffer: u64,
    /// Relocations into dedicated (shadow) blocks.
    pub separated: u64,
    /// Twin-shadow pages the device buffer evicted without a program.
    pub twins_dropped: u64,
    /// Dirty host-buffer pages lost in a restart (the host's loss).
    pub host_pages_lost: u64,
    /// Pages whose newest device version was a dropped twin-shadow whose host copy died in a
    /// restart: the device serves the older version from flash.
    pub twin_versions_lost: u64,
    /// Refresh jobs of fast-mode blocks.
    pub refresh_jobs: u64,
    /// Pages relocated by refresh.
    pub refresh_pages: u64,
}

/// Dedup-layer request accounting (deduphr.txt Fig. 11).
#[derive(Debug, Clone, Default)]
pub struct DedupMetrics {
    /// Host read requests.
    pub read_requests: u64,
    /// Host write requests.
    pub write_requests: u64,
    /// Host write requests with at least one page that reached flash (not a duplicate).
    pub write_requests_to_flash: u64,
}

/// Rails / TTFlash accounting.
#[derive(Debug, Clone, Default)]
pub struct RedundancyMetrics {
    /// Rails: read pages served by the mirror.
    pub redirected: u64,
    /// Rails: mirror programs.
    pub mirror_programs: u64,
    /// Rails role switching: role swaps.
    pub role_switches: u64,
    /// TTFlash: read pages rebuilt from their stripe.
    pub rebuilt: u64,
    /// TTFlash: reconstruction reads issued.
    pub reconstruction_reads: u64,
    /// TTFlash: parity programs.
    pub parity_programs: u64,
    /// TTFlash: reads of the old parity before a read-modify-write update.
    pub parity_reads: u64,
}

/// Accounting by threshold-voltage level (`[low, normal, high]`).
#[derive(Debug, Clone, Default)]
pub struct LevelMetrics {
    /// Page programs (all causes).
    pub programs: [u64; 3],
    /// Block erases, by the level the block was programmed at.
    pub erases: [u64; 3],
    /// Of those, erases of blocks that held preconditioned data.
    pub fill_erases: [u64; 3],
    /// GC relocations programmed at another level than their victim's (HIRE's hotness field).
    pub relevelled: u64,
    /// Host read pages served by flash.
    pub read_pages: [u64; 3],
    /// Their summed latency (queued → done), ns.
    pub read_ns: [u64; 3],
}

/// The mapping cache's flash work.
#[derive(Debug, Clone, Copy, Default)]
pub struct CacheFlashCounts {
    /// Translation reads for misses.
    pub loads: u64,
    /// Translation reads merging a write-back with the entries not cached.
    pub merge_reads: u64,
    /// Translation programs (write-backs).
    pub programs: u64,
    /// Misses served without a flash read (page held by the controller for its program).
    pub filled: u64,
}

/// Everything measured during a run (preconditioning excluded).
#[derive(Debug, Clone)]
pub struct Metrics {
    /// What the host sees of the run as a whole (each flow's own: `Simulation::flows`).
    pub host: RequestMetrics,
    /// Read pages served from the controller's pending-write data (no flash read).
    pub read_pages_from_write_buffer: u64,
    /// Flash operations by cause and kind: `flash[cause][kind]`, kinds read/program/erase.
    pub flash: [[u64; 3]; Cause::ALL.len()],
    /// GC jobs started.
    pub gc_count: u64,
    /// Sum of GC job durations (victim chosen → erase done), ns.
    pub gc_time_ns: u64,
    /// Valid pages GC relocated.
    pub gc_pages_moved: u64,
    /// Most GC jobs one plane ran at once.
    pub gc_max_concurrent: u32,
    /// Multi-plane commands (gangs of two or more pages) by kind: reads, programs, erases.
    pub multi_plane: [u64; 3],
    /// Program/erase and suspension accounting.
    pub pe: PeMetrics,
    /// Device buffer.
    pub buffer: BufferMetrics,
    /// By threshold-voltage level.
    pub levels: LevelMetrics,
    /// HotR.
    pub staging: StagingMetrics,
    /// Dedup requests.
    pub dedup: DedupMetrics,
    /// Host buffer and ShadowGC.
    pub shadow: ShadowMetrics,
    /// Rails / TTFlash.
    pub redundancy: RedundancyMetrics,
    /// Time with no host request outstanding, between the first arrival and the last completion, ns.
    pub idle_ns: u64,
    /// Requests the host had to hold back because the write queue was full.
    pub host_stalls: u64,
    /// Requests some of whose pages waited for the page window.
    pub window_waits: u64,
    /// Requests that waited on the host side for `host.max_requests_in_flight`.
    pub fetch_waits: u64,
    /// Requests with pages beyond the logical capacity, folded onto it (`ftl.out_of_range`).
    pub wrapped_requests: u64,
    /// Pages written by pre-processing before the run (`precondition.pre_process`).
    pub pre_processed_pages: Option<u64>,
    /// Host read pages that waited for their page's program to finish, then read flash.
    pub read_pages_after_write: u64,
    /// Block summary pages programmed (`ftl.summary_pages`).
    pub summary_programs: u64,
    /// Static wear-levelling jobs started (`ftl.static_wl_threshold`).
    pub static_wl_runs: u64,
    /// The mapping cache's flash work (`ftl.mapping_cache_*`).
    pub cache_flash: CacheFlashCounts,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            host: RequestMetrics::default(),
            read_pages_from_write_buffer: 0,
            flash: [[0; 3]; Cause::ALL.len()],
            gc_count: 0,
            gc_time_ns: 0,
            gc_pages_moved: 0,
            gc_max_concurrent: 0,
            multi_plane: [0; 3],
            pe: PeMetrics::default(),
            buffer: BufferMetrics::default(),
            levels: LevelMetrics::default(),
            staging: StagingMetrics::default(),
            dedup: DedupMetrics::default(),
            shadow: ShadowMetrics::default(),
            redundancy: RedundancyMetrics::default(),
            idle_ns: 0,
            host_stalls: 0,
            window_waits: 0,
            fetch_waits: 0,
            wrapped_requests: 0,
            pre_processed_pages: None,
            read_pages_after_write: 0,
            summary_programs: 0,
            static_wl_runs: 0,
            cache_flash: CacheFlashCounts::default(),
        }
    }
}

impl Metrics {
    /// Counts one flash operation.
    pub fn flash_op(&mut self, cause: Cause, kind: OpKind) {
        self.flash[cause as usize][kind as usize] += 1;
    }

    /// Total flash operations of `kind` over all causes.
    pub fn flash_total(&self, kind: OpKind) -> u64 {
        self.flash.iter().map(|k| k[kind as usize]).sum()
    }
}

/// What the host sees of its requests: response times, and where their read pages waited.
/// Kept for the run as a whole and, with several I/O flows, for each flow.
#[derive(Debug, Clone)]
pub struct RequestMetrics {
    /// Response times of read requests, ns.
    pub read: Histogram<u64>,
    /// Response times of write requests, ns.
    pub write: Histogram<u64>,
    /// Host read pages.
    pub read_pages: u64,
    /// Host write pages.
    pub write_pages: u64,
    /// Bytes of completed read and write requests.
    pub bytes: [u64; 2],
    /// Read pages that found their die running, or queued ahead of them, a program or erase.
    pub read_pages_blocked: u64,
    /// Read requests with at least one page blocked (as `read_pages_blocked`).
    pub read_requests_blocked: u64,
    /// Read requests with at least one page served from another copy than its home page or
    /// rebuilt by a scheme, instead of queueing at home.
    pub read_requests_redirected: u64,
    /// Read-page time waiting in the die queue behind each class of work, ns (summed).
    pub read_wait_ns: [u64; OpClass::COUNT],
    /// Read-page time in its own sense + transfer, ns (summed).
    pub read_service_ns: u64,
    /// Read-page time holding the die while waiting for the channel bus, ns (summed).
    pub read_bus_wait_ns: u64,
    /// Read pages measured for wait attribution (served by flash).
    pub read_pages_flash: u64,
    /// Time read requests waited on the host side for `host.max_requests_in_flight`, ns.
    pub host_queue_read_ns: u64,
    /// Time read requests spent on the host link (queueing and transfer, both ways), ns.
    pub host_link_read_ns: u64,
    /// Exact sums of response times (all, read, write), ns: means are not histogram-rounded.
    pub latency_sum_ns: [u128; 3],
    /// Requests completed.
    pub requests: u64,
    /// Arrival of the first request, ns (`None` before one arrives).
    pub first_arrival_ns: Option<u64>,
    /// Time of the last completion, ns.
    pub end_ns: u64,
}

impl Default for RequestMetrics {
    fn default() -> Self {
        // 1 ns .. u64::MAX ns at 3 significant digits: every latency the u64 clock can hold
        // is recorded as it is (none is clipped; values below 10^15 ns fall in the same
        // buckets as with a smaller range, so percentiles are unchanged).
        let h = || Histogram::new_with_bounds(1, u64::MAX, 3).expect("valid bounds and precision");
        RequestMetrics {
            read: h(),
            write: h(),
            read_pages: 0,
            write_pages: 0,
            bytes: [0; 2],
            read_pages_blocked: 0,
            read_requests_blocked: 0,
            read_requests_redirected: 0,
            read_wait_ns: [0; OpClass::COUNT],
            read_service_ns: 0,
            read_bus_wait_ns: 0,
            read_pages_flash: 0,
            host_queue_read_ns: 0,
            host_link_read_ns: 0,
            latency_sum_ns: [0; 3],
            requests: 0,
            first_arrival_ns: None,
            end_ns: 0,
        }
    }
}

impl RequestMetrics {
    /// Response times of all requests, ns: the read and write histograms merged (one record
    /// per request during the run instead of two).
    pub fn all(&self) -> Histogram<u64> {
        let mut all = self.read.clone();
        all.add(&self.write)
            .expect("the histograms share their bounds and precision");
        all
    }

    /// Records a completed request of `bytes` bytes.
    #[inline]
    pub fn request_done(&mut self, is_read: bool, bytes: u64, latency_ns: u64, now_ns: u64) {
        let v = latency_ns.max(1);
        // The histograms span the whole u64 range: saturation cannot happen. All requests'
        // histogram is made from these two at the end ([`RequestMetrics::all`]).
        self.latency_sum_ns[0] += u128::from(latency_ns);
        if is_read {
            self.read.saturating_record(v);
            self.latency_sum_ns[1] += u128::from(latency_ns);
        } else {
            self.write.saturating_record(v);
            self.latency_sum_ns[2] += u128::from(latency_ns);
        }
        self.bytes[usize::from(!is_read)] += bytes;
        self.requests += 1;
        self.end_ns = self.end_ns.max(now_ns);
    }
}

/// A numeric value at a dotted path of a run summary's JSON (`read.mean_us`, `flash.erases`);
/// in a list of named objects a part names its element (`flows.reader.read.mean_us`).
pub fn metric(summary: &serde_json::Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(summary, |v, k| match v {
            serde_json::Value::Array(items) => items
                .iter()
                .find(|i| i.get("name").and_then(serde_json::Value::as_str) == Some(k)),
            _ => v.get(k),
        })?
        .as_f64()
}

#[cfg(test)]
mod metric_tests {
    #[test]
    fn a_path_names_a_flow_of_the_list() {
        let s = serde_json::json!({"read": {"mean_us": 3.0},
            "flows": [{"name": "a", "read": {"mean_us": 1.0}}, {"name": "b", "read": {"mean_us": 2.0}}]});
        assert_eq!(super::metric(&s, "read.mean_us"), Some(3.0));
        assert_eq!(super::metric(&s, "flows.b.read.mean_us"), Some(2.0));
        assert_eq!(super::metric(&s, "flows.c.read.mean_us"), None);
    }
}
