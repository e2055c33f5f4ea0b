//! The properties of a workload that decide interference inside an SSD, measured in one pass
//! over any request stream (a trace or a `--synth` spec): burstiness at several time scales,
//! popularity and reuse of read and written pages, page types, sizes and sequentiality.
//! docs/workloads.md defines each with its formula; `ssdlab trace stats` prints them and
//! `ssdlab trace fit` fits the generator to them.

mod activity;
mod burst;
mod reuse;
mod runs;

pub use burst::{BusyIdle, ClassBurstiness, Coupling, IDC_SCALES_MS, MIN_WINDOWS, NEAR_WRITE_MS};
pub use reuse::{harmonic, zipf_mle, TooLarge, MAX_PAGES, MAX_PAGE_ACCESSES, TIMED_READS};

use super::{IoOp, Request};
use activity::ActivityCounter;
pub use activity::Tenths;
use burst::{BusyIdleCounter, ClassWindows, CouplingCounter};
use hdrhistogram::Histogram;
use reuse::Reuse as ReuseCounter;
use serde::Serialize;
use std::collections::BTreeMap;

/// Burstiness of all requests, reads and writes.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Burstiness {
    /// Widths of the `idc` entries, ms.
    pub scales_ms: Vec<f64>,
    /// All requests.
    pub all: ClassBurstiness,
    /// Reads.
    pub read: ClassBurstiness,
    /// Writes.
    pub write: ClassBurstiness,
    /// Busy and idle periods of all arrivals at 1 ms.
    pub busy_idle: BusyIdle,
    /// Reads close behind writes.
    pub coupling: Coupling,
}

/// Popularity of one direction's pages.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Popularity {
    /// Page accesses (a request of k pages is k accesses).
    pub accesses: u64,
    /// Distinct pages accessed.
    pub pages: u64,
    /// Distinct pages accessed, GiB.
    pub footprint_gib: f64,
    /// Maximum-likelihood Zipf exponent of the per-page access counts over the pages seen.
    pub zipf: Option<f64>,
    /// Share of accesses that go to the hottest 1 % of the pages seen, %.
    pub top1_pct: f64,
}

/// Percentiles of a distance.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Percentiles {
    /// How many distances.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Percentiles {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: h.len(),
            p50: h.value_at_quantile(0.5) as f64,
            p90: h.value_at_quantile(0.9) as f64,
            p99: h.value_at_quantile(0.99) as f64,
        }
    }
}

/// Reuse of pages by reads.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Reuse {
    /// Read requests whose first page was read before and last accessed by a read, %.
    pub reread_pct: f64,
    /// Of the reads, re-reads (as `reread_pct` counts them) whose first page the read that
    /// last touched it ran over from a page before — a read starting inside an earlier read's
    /// extent (a stride below the size, interleaved streams), not a read of a page read
    /// before from its start — the read before continued onward left out, %.
    pub reread_inside_pct: f64,
    /// Of the reads, re-reads continuing the read before onward (sequential, starting in the
    /// page it ended in: a misaligned stream's shared page), %. The generator draws the first
    /// of these two (`reread_inside`), not this one.
    pub reread_onward_pct: f64,
    /// For those: read requests since that page was last read (1 = the previous read).
    pub reread_gap_requests: Percentiles,
    /// For those, when the page's last read is at most 65,536 read requests back: time since
    /// that read, µs (at least 1).
    pub reread_gap_us: Percentiles,
    /// LRU stack distance of page re-reads: distinct pages read since the page's last read.
    pub reread_stack_distance: Percentiles,
    /// Read page accesses that re-read a page, %.
    pub reread_page_pct: f64,
    /// Read requests whose first page was last accessed by a write, %.
    pub read_after_write_pct: f64,
    /// For those: write requests since that write (1 = the latest write).
    pub raw_gap_requests: Percentiles,
    /// Write requests whose first page the write request just before wrote, %: a page
    /// written again at once (a log or metadata block), every copy on one die.
    pub rewrite_pct: f64,
    /// Of the write requests arriving less than 1 ms after the write before, those whose
    /// first page was last written by one of the 2nd to 16th write requests before, %: a
    /// few pages written over and over, interleaved, inside a burst (financial1 30.9 %, its
    /// stand-in 7.7 %).
    pub rewrite_near_pct: f64,
    /// Runs of writes each re-writing the one before (a single write is a run of 1): mean
    /// length (`null` with fewer than 10 runs).
    pub rewrite_run_mean: Option<f64>,
    /// The length of the run of one page a write is in, on average (Σ n² / Σ n; geometric
    /// runs of mean m give 2m − 1).
    pub rewrite_run_seen_mean: Option<f64>,
    /// Standard error of `rewrite_run_seen_mean − rewrite_run_mean` (the delete-one-run
    /// jackknife).
    pub rewrite_run_excess_se: Option<f64>,
    /// How the written footprint grows with the writes (shadowgc.txt Fig. 1: "the cumulative
    /// number of written LBAs" against the writes): distinct pages written after 10 %, 20 %,
    /// … 100 % of the page writes, % of the final written footprint (to within 256 page
    /// writes). Linear growth gives 10, 20, … 100; a footprint reached early and then
    /// rewritten ("grows very slowly", Fig. 1(a)) gives values near 100 from the start. Empty
    /// without writes.
    pub write_footprint_growth_pct: Vec<f64>,
}

/// Pages by how they are accessed, % of distinct pages: strictly (only read, only written,
/// both) and by hotr.txt Fig. 1(c)'s rule (RI: more than 90 % of the page's accesses are
/// reads; WI: more than 90 % are writes; MIX: neither).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PageTypes {
    /// Only read.
    pub read_only_pct: f64,
    /// Only written.
    pub write_only_pct: f64,
    /// Both read and written.
    pub mixed_pct: f64,
    /// Read-intensive (hotr.txt: "the vast majority of the accesses (>90%) … are read").
    pub ri_pct: f64,
    /// Write-intensive (more than 90 % of the accesses are writes).
    pub wi_pct: f64,
    /// Neither (hotr.txt's MIX; "Only an average of 9.6% of the pages are mixed").
    pub mix_pct: f64,
}

/// One size of the empirical distribution.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SizeShare {
    /// Size rounded up to whole 4 KiB pages, KiB.
    pub kib: u32,
    /// Share of the direction's requests, %.
    pub pct: f64,
}

/// Empirical sizes of reads and writes (the 32 most common of each; `other_pct` the rest).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Sizes {
    /// Reads.
    pub read: Vec<SizeShare>,
    /// Reads of other sizes, %.
    pub read_other_pct: f64,
    /// Writes.
    pub write: Vec<SizeShare>,
    /// Writes of other sizes, %.
    pub write_other_pct: f64,
}

/// Requests that start where the previous one ended (byte or 4 KiB page), %.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Sequentiality {
    /// After the previous request of any direction.
    pub all_pct: f64,
    /// Reads after the previous read.
    pub read_pct: f64,
    /// Writes after the previous write.
    pub write_pct: f64,
}

/// Requests whose start page is r mod 16, for r = 0 … 15, % (empty without requests):
/// alignment (mqsim_tpcc's 8 KiB records off page alignment start 86 % of its requests on odd
/// pages; financial1's reads 85 %, its writes 51 %), which decides how a striped drive's dies
/// share the load.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StartResidues {
    /// All requests.
    pub all_pct: Vec<f64>,
    /// Reads.
    pub read_pct: Vec<f64>,
    /// Writes.
    pub write_pct: Vec<f64>,
}

/// The interference-relevant properties of a workload.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Profile {
    /// Requests.
    pub requests: u64,
    /// Share of writes, %.
    pub write_pct: f64,
    /// First to last arrival, s.
    pub duration_s: f64,
    /// Reads and writes in each tenth of that span.
    pub tenths: Tenths,
    /// Reads and writes in each of [`ACTIVITY_SLICES`] equal slices of the span (the activity
    /// envelope a fit may give its stand-in).
    #[serde(skip)]
    pub slices: Vec<[u64; 2]>,
    /// Re-reads (as `reuse.reread_pct` counts them) in each of those slices.
    #[serde(skip)]
    pub reread_slices: Vec<u64>,
    /// Arrivals in time.
    pub burstiness: Burstiness,
    /// Reads' pages.
    pub read_popularity: Popularity,
    /// Writes' pages.
    pub write_popularity: Popularity,
    /// Re-reads and reads after writes.
    pub reuse: Reuse,
    /// Read-only, write-only and mixed pages.
    pub page_types: PageTypes,
    /// Request sizes.
    pub sizes: Sizes,
    /// Sequential runs.
    pub sequentiality: Sequentiality,
    /// Where requests start within runs of 16 pages.
    pub start_residues: StartResidues,
    /// Why the page-level statistics (popularity, reuse, page types) were not computed
    /// (`None`: they were).
    pub page_level_skipped: Option<String>,
}

/// Slices of a profile's activity envelope.
pub const ACTIVITY_SLICES: usize = 100;

/// Most sizes listed per direction.
const SIZES_LISTED: usize = 32;

/// Accumulates a [`Profile`] one request at a time.
#[derive(Default)]
pub struct Profiler {
    first_ns: Option<u64>,
    last_ns: u64,
    classes: [ClassWindows; 3],
    /// Requests: all, reads, writes.
    counts: [u64; 3],
    busy: BusyIdleCounter,
    activity: ActivityCounter,
    /// Re-reads in time (counted as reads).
    reread_activity: ActivityCounter,
    coupling: CouplingCounter,
    /// Page-level accounting; emptied past its caps, `skipped` saying why.
    reuse: ReuseCounter,
    skipped: Option<String>,
    sizes: [BTreeMap<u32, u64>; 2],
    prev_end: Option<(u64, u64)>,
    prev_op_end: [Option<(u64, u64)>; 2],
    /// First page of the latest read.
    prev_read_first: Option<u64>,
    seq: [u64; 3],
    /// Reads and writes by start page mod 16.
    residues: [[u64; 16]; 2],
}

/// Whether a request at `offset` continues one that ended at `end` (byte, 4 KiB page).
fn continues(prev: Option<(u64, u64)>, offset: u64) -> bool {
    prev.is_some_and(|(bytes, page)| offset == bytes || offset / 4096 == page)
}

impl Profiler {
    /// Adds the next request (in arrival order). Past [`MAX_PAGES`] distinct pages or
    /// [`MAX_PAGE_ACCESSES`] accesses the page-level statistics (popularity, reuse, page
    /// types) are dropped and the profile says why; the others go on.
    pub fn add(&mut self, r: &Request) {
        let op = usize::from(r.op == IoOp::Write);
        self.first_ns.get_or_insert(r.time_ns);
        self.last_ns = self.last_ns.max(r.time_ns);
        self.classes[0].add(r.time_ns);
        self.classes[1 + op].add(r.time_ns);
        self.counts[0] += 1;
        self.counts[1 + op] += 1;
        self.busy.add(r.time_ns);
        self.activity.add(r.time_ns, op == 1);
        self.reread_activity.begin(r.time_ns);
        let first = r.offset_bytes / 4096;
        self.residues[op][(first % 16) as usize] += 1;
        let end_bytes = r.offset_bytes.saturating_add(r.size_bytes);
        let end = end_bytes.div_ceil(4096).max(first + 1);
        self.coupling.add(r.time_ns, op == 1, first, end);
        let kib = u32::try_from((end - first) * 4).unwrap_or(u32::MAX);
        *self.sizes[op].entry(kib).or_default() += 1;
        self.seq[0] += u64::from(continues(self.prev_end, r.offset_bytes));
        let continued = continues(self.prev_op_end[op], r.offset_bytes);
        self.seq[1 + op] += u64::from(continued);
        // A read continuing the read before from a page past that read's first.
        let onward = op == 0 && continued && self.prev_read_first != Some(first);
        if op == 0 {
            self.prev_read_first = Some(first);
        }
        self.prev_end = Some((end_bytes, end));
        self.prev_op_end[op] = Some((end_bytes, end));
        if self.skipped.is_none() {
            let done = match r.op {
                IoOp::Read => self.reuse.read(first, end, r.time_ns / 1000, onward),
                IoOp::Write => self.reuse.write(first, end, r.time_ns).map(|()| false),
            };
            if done == Ok(true) {
                self.reread_activity.add(r.time_ns, false);
            }
            if let Err(TooLarge(why)) = done {
                self.reuse = ReuseCounter::default();
                self.skipped = Some(why);
            }
        }
    }

    /// The profile of the requests added.
    pub fn finish(mut self) -> Profile {
        let reuse = &self.reuse;
        let [requests, reads, writes] = self.counts;
        let end = self.last_ns;
        let [all, read, write] = [0, 1, 2].map(|c| self.classes[c].finish(self.counts[c], end));
        let mut pop = [Popularity::default(), Popularity::default()];
        let mut types = [0u64; 3];
        // hotr.txt's RI, WI, MIX.
        let mut intensive = [0u64; 3];
        let mut counts: [Vec<u32>; 2] = Default::default();
        for p in reuse.pages.values() {
            match (p.reads > 0, p.writes > 0) {
                (true, false) => types[0] += 1,
                (false, true) => types[1] += 1,
                (true, true) => types[2] += 1,
                (false, false) => {}
            }
            let total = u64::from(p.reads) + u64::from(p.writes);
            if total > 0 {
                let class = if 10 * u64::from(p.reads) > 9 * total {
                    0
                } else if 10 * u64::from(p.writes) > 9 * total {
                    1
                } else {
                    2
                };
                intensive[class] += 1;
            }
            for (d, c) in [p.reads, p.writes].into_iter().enumerate() {
                if c > 0 {
                    counts[d].push(c);
                    pop[d].accesses += u64::from(c);
                }
            }
        }
        for d in 0..2 {
            let n = counts[d].len() as u64;
            pop[d].pages = n;
            pop[d].footprint_gib = n as f64 / 262_144.0;
            pop[d].zipf = zipf_mle(&mut counts[d], n);
            let top = (n as usize).div_ceil(100);
            let hot: u64 = counts[d].iter().take(top).map(|&c| u64::from(c)).sum();
            pop[d].top1_pct = pct(hot, pop[d].accesses);
        }
        let distinct = types.iter().sum();
        let [read_pop, write_pop] = pop;
        let [read_sizes, write_sizes] = [0, 1].map(|d| shares(&self.sizes[d]));
        let rewrite_runs = reuse.rewrite_runs();
        Profile {
            requests,
            write_pct: pct(writes, requests),
            duration_s: end.saturating_sub(self.first_ns.unwrap_or(0)) as f64 / 1e9,
            tenths: Tenths::of(&self.activity.slices(10, end)),
            slices: self.activity.slices(ACTIVITY_SLICES, end),
            reread_slices: self
                .reread_activity
                .slices(ACTIVITY_SLICES, end)
                .iter()
                .map(|s| s[0])
                .collect(),
            burstiness: Burstiness {
                scales_ms: IDC_SCALES_MS.to_vec(),
                all,
                read,
                write,
                busy_idle: self.busy.finish(),
                coupling: self.coupling.finish(),
            },
            reuse: Reuse {
                reread_pct: pct(reuse.rereads, reads),
                reread_inside_pct: pct(reuse.rereads_inside, reads),
                reread_onward_pct: pct(reuse.rereads_onward, reads),
                reread_gap_requests: Percentiles::of(&reuse.reread_gap),
                reread_gap_us: Percentiles::of(&reuse.reread_gap_us),
                reread_stack_distance: Percentiles::of(&reuse.stack),
                reread_page_pct: pct(reuse.stack.len(), read_pop.accesses),
                read_after_write_pct: pct(reuse.read_after_write, reads),
                raw_gap_requests: Percentiles::of(&reuse.raw_gap),
                rewrite_pct: pct(reuse.rewrites, writes),
                rewrite_near_pct: pct(reuse.near_rewrites, reuse.writes_in_runs),
                rewrite_run_mean: rewrite_runs.map(|r| r.mean),
                rewrite_run_seen_mean: rewrite_runs.map(|r| r.seen),
                rewrite_run_excess_se: rewrite_runs.map(|r| r.excess_se),
                write_footprint_growth_pct: footprint_growth(reuse),
            },
            read_popularity: read_pop,
            write_popularity: write_pop,
            page_types: PageTypes {
                read_only_pct: pct(types[0], distinct),
                write_only_pct: pct(types[1], distinct),
                mixed_pct: pct(types[2], distinct),
                ri_pct: pct(intensive[0], distinct),
                wi_pct: pct(intensive[1], distinct),
                mix_pct: pct(intensive[2], distinct),
            },
            sizes: Sizes {
                read: read_sizes.0,
                read_other_pct: read_sizes.1,
                write: write_sizes.0,
                write_other_pct: write_sizes.1,
            },
            page_level_skipped: self.skipped,
            sequentiality: Sequentiality {
                all_pct: pct(self.seq[0], requests.saturating_sub(1)),
                read_pct: pct(self.seq[1], reads.saturating_sub(1)),
                write_pct: pct(self.seq[2], writes.saturating_sub(1)),
            },
            start_residues: {
                let [r, w] = self.residues;
                let shares = |n: [u64; 16], of: u64| -> Vec<f64> {
                    if of == 0 {
                        Vec::new()
                    } else {
                        n.iter().map(|&k| pct(k, of)).collect()
                    }
                };
                StartResidues {
                    all_pct: shares(std::array::from_fn(|k| r[k] + w[k]), requests),
                    read_pct: shares(r, reads),
                    write_pct: shares(w, writes),
                }
            },
        }
    }
}

/// The most common sizes as shares (sorted by size) and the share of the others, %.
fn shares(counts: &BTreeMap<u32, u64>) -> (Vec<SizeShare>, f64) {
    let total: u64 = counts.values().sum();
    let mut by_count: Vec<(u32, u64)> = counts.iter().map(|(k, c)| (*k, *c)).collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let other: u64 = by_count.iter().skip(SIZES_LISTED).map(|x| x.1).sum();
    by_count.truncate(SIZES_LISTED);
    by_count.sort_unstable();
    (
        by_count
            .into_iter()
            .map(|(kib, c)| SizeShare {
                kib,
                pct: pct(c, total),
            })
            .collect(),
        pct(other, total),
    )
}

/// Written footprint after each tenth of the page writes, % of the final one.
fn footprint_growth(r: &reuse::Reuse) -> Vec<f64> {
    if r.written_pages == 0 {
        return Vec::new();
    }
    (1..=10)
        .map(|tenth| {
            let at = r.page_writes * tenth / 10;
            let step = (at / reuse::CURVE_STEP) as usize;
            let pages = if tenth == 10 {
                r.written_pages
            } else if step == 0 {
                // Before the first point: at most one new page per write.
                at.min(r.written_pages)
            } else {
                r.footprint_curve[step - 1]
            };
            pct(pages, r.written_pages)
        })
        .collect()
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// Profiles a whole stream.
///
/// # Errors
/// The stream's first error, as a message.
pub fn profile<E: std::fmt::Display>(
    requests: impl Iterator<Item = Result<Request, E>>,
) -> Result<Profile, String> {
    let mut p = Profiler::default();
    for r in requests {
        p.add(&r.map_err(|e| e.to_string())?);
    }
    Ok(p.finish())
}

#[cfg(test)]
mod tests;
