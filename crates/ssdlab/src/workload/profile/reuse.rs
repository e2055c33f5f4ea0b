//! Popularity and reuse: per-page read and write counts, LRU stack distances of re-reads
//! (a Fenwick tree over read accesses marks each page's latest read), request-level re-reads
//! and reads after writes, page types, and the maximum-likelihood Zipf exponent.

use super::burst::RUN_GAP_NS;
use super::runs::{RunStats, Runs};
use hdrhistogram::Histogram;
use rustc_hash::FxHashMap;

/// Distinct 4 KiB pages a profile tracks before it refuses (32 GiB of footprint). A page takes
/// 33 B of hash table, and the table doubles as it grows, old and new side by side: about
/// 0.8 GiB at the cap (`ssdlab trace stats` of 1,000 writes of 1 GiB each peaks at the figure
/// docs/testing.md gives).
pub const MAX_PAGES: usize = 1 << 23;
/// Page accesses a profile walks before it refuses (bounds time and the 4 B per read access
/// of the stack-distance tree).
pub const MAX_PAGE_ACCESSES: u64 = 1 << 30;

/// What is known of one page.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PageInfo {
    pub reads: u32,
    pub writes: u32,
    /// 1-based position of its latest read among read page accesses (0: never read).
    last_read_pos: u32,
    /// 1-based index of the latest read request touching it.
    last_read_req: u32,
    /// 1-based index of the latest write request touching it.
    last_write_req: u32,
    /// Its latest access was a write.
    last_write: bool,
    /// The latest read touching it started on it (else it ran over it from a page before).
    last_read_started: bool,
}

/// A Fenwick tree over positions 1.. that grows at the end.
#[derive(Debug, Default)]
struct Fenwick(Vec<i32>);

impl Fenwick {
    fn prefix(&self, mut i: usize) -> i64 {
        let mut s = 0;
        while i > 0 {
            s += i64::from(self.0[i - 1]);
            i &= i - 1;
        }
        s
    }

    fn add(&mut self, mut i: usize, v: i32) {
        while i <= self.0.len() {
            self.0[i - 1] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Appends position `len + 1` holding `v`.
    fn push(&mut self, v: i32) {
        let i = self.0.len() + 1;
        let low = i & i.wrapping_neg();
        let covered = self.prefix(i - 1) - self.prefix(i - low);
        self.0.push(v + covered as i32);
    }
}

/// Running reuse accounting.
pub(crate) struct Reuse {
    pub pages: FxHashMap<u64, PageInfo>,
    marks: Fenwick,
    read_reqs: u32,
    write_reqs: u32,
    accesses: u64,
    pub rereads: u64,
    /// Of the re-reads, those whose first page the read that last touched it ran over from a
    /// page before (a read starting inside an earlier read's extent), the read before
    /// continued onward left out.
    pub rereads_inside: u64,
    /// Of the re-reads, those continuing the read before onward: sequential, starting in the
    /// page it ended in (a misaligned stream's shared page).
    pub rereads_onward: u64,
    pub read_after_write: u64,
    /// Write requests whose first page the write request just before wrote.
    pub rewrites: u64,
    /// Write requests less than 1 ms after the write before whose first page one of the 2nd
    /// to [`NEAR_WRITES`]th write requests before last wrote.
    pub near_rewrites: u64,
    /// Write requests less than 1 ms after the write before.
    pub writes_in_runs: u64,
    /// When the latest write arrived, ns.
    last_write_ns: Option<u64>,
    /// Runs of writes each re-writing the one before (a write that does not starts one).
    rewrite_runs: Runs,
    /// LRU stack distances of page re-reads (distinct pages read in between).
    pub stack: Histogram<u64>,
    /// Read requests between a re-reading request and the last read of its first page.
    pub reread_gap: Histogram<u64>,
    /// Time between a re-reading request and the last read of its first page, µs (at least
    /// 1), for re-reads at most [`TIMED_READS`] read requests back.
    pub reread_gap_us: Histogram<u64>,
    /// Arrival times of the last [`TIMED_READS`] read requests, µs, by request index.
    read_times: Vec<u64>,
    /// Write requests between a read after write and that write.
    pub raw_gap: Histogram<u64>,
    /// Page writes so far, and distinct pages written among them.
    pub page_writes: u64,
    pub written_pages: u64,
    /// Distinct pages written after every [`CURVE_STEP`] page writes.
    pub footprint_curve: Vec<u64>,
}

/// How many read requests back a re-read's time gap is measured (the reach of the
/// generator's re-reads, whose ring keeps as many reads).
pub const TIMED_READS: usize = 65_536;

/// Fewest runs of writes to one page whose lengths a profile reports.
const MIN_RUNS: u64 = 10;

/// The farthest write a near re-write re-writes (`rewrite_near_pct`): the 16th write request
/// before.
const NEAR_WRITES: u32 = 16;

/// Page writes between two points of the write-footprint curve.
pub const CURVE_STEP: u64 = 256;

/// Reuse accounting refused: the stream is beyond what a profile holds in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge(pub String);

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 50, 3).expect("valid bounds")
}

impl Default for Reuse {
    fn default() -> Self {
        Reuse {
            pages: FxHashMap::default(),
            marks: Fenwick::default(),
            read_reqs: 0,
            write_reqs: 0,
            accesses: 0,
            rereads: 0,
            rereads_inside: 0,
            rereads_onward: 0,
            read_after_write: 0,
            rewrites: 0,
            near_rewrites: 0,
            writes_in_runs: 0,
            last_write_ns: None,
            rewrite_runs: Runs::default(),
            stack: histogram(),
            reread_gap: histogram(),
            reread_gap_us: histogram(),
            read_times: Vec::new(),
            raw_gap: histogram(),
            page_writes: 0,
            written_pages: 0,
            footprint_curve: Vec::new(),
        }
    }
}

impl Reuse {
    fn info(&mut self, page: u64) -> Result<&mut PageInfo, TooLarge> {
        self.accesses += 1;
        if self.accesses > MAX_PAGE_ACCESSES {
            return Err(TooLarge(format!(
                "more than {MAX_PAGE_ACCESSES} page accesses; profile a prefix (--limit)"
            )));
        }
        if self.pages.len() >= MAX_PAGES && !self.pages.contains_key(&page) {
            return Err(TooLarge(format!(
                "more than {MAX_PAGES} distinct 4 KiB pages ({} GiB); profile a prefix (--limit)",
                MAX_PAGES >> 18
            )));
        }
        Ok(self.pages.entry(page).or_default())
    }

    /// A read request of pages `first..end` arriving at `t_us`; whether it re-reads its first
    /// page.
    /// `onward`: the read continues the read before (sequential) from a page past its first.
    pub(crate) fn read(
        &mut self,
        first: u64,
        end: u64,
        t_us: u64,
        onward: bool,
    ) -> Result<bool, TooLarge> {
        self.read_reqs += 1;
        let req = self.read_reqs;
        let writes = self.write_reqs;
        let slot = |r: u32| (r as usize - 1) % TIMED_READS;
        let mut reread = false;
        if let Some(p) = self.pages.get(&first) {
            if p.last_write {
                self.read_after_write += 1;
                record(&mut self.raw_gap, u64::from(writes - p.last_write_req + 1));
            } else if p.reads > 0 {
                reread = true;
                self.rereads += 1;
                if onward {
                    self.rereads_onward += 1;
                } else if !p.last_read_started {
                    self.rereads_inside += 1;
                }
                let back = req - p.last_read_req;
                record(&mut self.reread_gap, u64::from(back));
                if (back as usize) < TIMED_READS {
                    let then = self.read_times[slot(p.last_read_req)];
                    record(&mut self.reread_gap_us, t_us.saturating_sub(then).max(1));
                }
            }
        }
        if self.read_times.len() < TIMED_READS {
            self.read_times.push(t_us);
        } else {
            self.read_times[slot(req)] = t_us;
        }
        for page in first..end {
            let pos = self.marks.0.len() + 1;
            let info = *self.info(page)?;
            if info.last_read_pos > 0 {
                let last = info.last_read_pos as usize;
                let between = self.marks.prefix(pos - 1) - self.marks.prefix(last);
                record(&mut self.stack, between as u64);
                self.marks.add(last, -1);
            }
            self.marks.push(1);
            let p = self.pages.get_mut(&page).expect("just inserted");
            p.reads = p.reads.saturating_add(1);
            p.last_read_pos = pos as u32;
            p.last_read_req = req;
            p.last_write = false;
            p.last_read_started = page == first;
        }
        Ok(reread)
    }

    /// Runs of writes to one page (the run open at the end included): their mean length, the
    /// length of the run a write is in on average (Σ n² / Σ n) and the tail's standard error;
    /// `None` with fewer than [`MIN_RUNS`] runs.
    pub(crate) fn rewrite_runs(&self) -> Option<RunStats> {
        self.rewrite_runs.stats(MIN_RUNS)
    }

    /// A write request of pages `first..end`.
    pub(crate) fn write(&mut self, first: u64, end: u64, t_ns: u64) -> Result<(), TooLarge> {
        self.write_reqs += 1;
        let in_run = self
            .last_write_ns
            .replace(t_ns)
            .is_some_and(|t| t_ns.saturating_sub(t) < RUN_GAP_NS);
        self.writes_in_runs += u64::from(in_run);
        let req = self.write_reqs;
        let back = self
            .pages
            .get(&first)
            .filter(|p| p.writes > 0)
            .map(|p| req - p.last_write_req);
        if back == Some(1) {
            self.rewrites += 1;
        } else {
            self.rewrite_runs.close();
            if in_run && back.is_some_and(|d| d <= NEAR_WRITES) {
                self.near_rewrites += 1;
            }
        }
        self.rewrite_runs.extend();
        for page in first..end {
            let p = self.info(page)?;
            if p.writes == 0 {
                self.written_pages += 1;
            }
            self.page_writes += 1;
            if self.page_writes % CURVE_STEP == 0 {
                self.footprint_curve.push(self.written_pages);
            }
            let p = self.pages.get_mut(&page).expect("just looked up");
            p.writes = p.writes.saturating_add(1);
            p.last_write_req = req;
            p.last_write = true;
        }
        Ok(())
    }
}

fn record(h: &mut Histogram<u64>, v: u64) {
    h.saturating_record(v);
}

/// Maximum-likelihood exponent of a Zipf law p_k ∝ k^−s over `domain` ranks, given the
/// access counts of the pages seen (any order; ranks are given by sorting them). Searches
/// s in [0, 4] by golden section on the log-likelihood −s Σ c_k ln k − n ln H(domain, s).
pub fn zipf_mle(counts: &mut [u32], domain: u64) -> Option<f64> {
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let n: f64 = counts.iter().map(|&c| f64::from(c)).sum();
    if counts.len() < 2 || n < 2.0 {
        return None;
    }
    let domain = domain.max(counts.len() as u64);
    let a: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| f64::from(c) * ((i + 1) as f64).ln())
        .sum();
    let ll = |s: f64| -s * a - n * harmonic(domain, s).ln();
    let (mut lo, mut hi) = (0.0f64, 4.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (ll(x1), ll(x2));
    for _ in 0..80 {
        if f1 > f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            x1 = hi - g * (hi - lo);
            f1 = ll(x1);
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            x2 = lo + g * (hi - lo);
            f2 = ll(x2);
        }
    }
    Some((lo + hi) / 2.0)
}

/// H(n, s) = Σ_{k=1..n} k^−s: the first 10,000 terms exactly, the rest by the midpoint
/// integral (Euler–Maclaurin; relative error below 1e-9 there).
pub fn harmonic(n: u64, s: f64) -> f64 {
    const EXACT: u64 = 10_000;
    let head: f64 = (1..=n.min(EXACT)).map(|k| (k as f64).powf(-s)).sum();
    if n <= EXACT {
        return head;
    }
    let (a, b) = (EXACT as f64 + 0.5, n as f64 + 0.5);
    let tail = if (s - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
    };
    head + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Zipf};

    #[test]
    fn fenwick_push_keeps_prefix_sums() {
        let mut f = Fenwick::default();
        let vals = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1];
        for (i, v) in vals.iter().enumerate() {
            f.push(*v);
            if i == 4 {
                f.add(3, -1);
            }
        }
        let mut want = vals.to_vec();
        want[2] -= 1;
        for i in 0..=vals.len() {
            assert_eq!(
                f.prefix(i),
                want[..i].iter().map(|&v| i64::from(v)).sum::<i64>()
            );
        }
    }

    #[test]
    fn stack_distances_of_a_hand_built_stream() {
        // Reads of pages a b c a b b: re-reads of a (b, c between: 2), b (c, a: 2), b (0).
        let mut r = Reuse::default();
        for (t, p) in [1, 2, 3, 1, 2, 2].into_iter().enumerate() {
            r.read(p, p + 1, 10 * t as u64, false).unwrap();
        }
        assert_eq!(r.stack.len(), 3);
        assert_eq!(r.stack.max(), 2);
        assert_eq!(r.stack.min(), 0);
        assert_eq!(r.stack.count_at(2), 2);
        assert_eq!(r.rereads, 3);
        // Request gaps: a after 3 reads, b after 3, b after 1.
        assert_eq!(r.reread_gap.count_at(3), 2);
        assert_eq!(r.reread_gap.count_at(1), 1);
        // Time gaps (reads 10 µs apart): a after 30 µs, b after 30, b after 10.
        assert_eq!(r.reread_gap_us.count_at(30), 2);
        assert_eq!(r.reread_gap_us.count_at(10), 1);
    }

    #[test]
    fn reread_times_are_kept_as_far_back_as_the_generator_reaches() {
        let mut r = Reuse::default();
        r.read(0, 1, 0, false).unwrap();
        for p in 1..=TIMED_READS as u64 {
            r.read(p, p + 1, 2 * p, false).unwrap();
        }
        // Page 0 is now TIMED_READS + 1 reads back: a re-read, but not timed.
        r.read(0, 1, 1 << 20, false).unwrap();
        // Page TIMED_READS / 2, read at TIMED_READS µs: timed, with the slot it was kept in.
        let p = TIMED_READS as u64 / 2;
        r.read(p, p + 1, (1 << 20) + 1, false).unwrap();
        assert_eq!(r.rereads, 2);
        assert_eq!(r.reread_gap_us.len(), 1);
        let gap = r.reread_gap_us.max();
        assert!(
            r.reread_gap_us.equivalent(gap, (1 << 20) + 1 - 2 * p),
            "{gap}"
        );
    }

    #[test]
    fn reads_after_writes_are_told_from_rereads() {
        let mut r = Reuse::default();
        r.write(5, 6, 0).unwrap();
        r.write(6, 7, 0).unwrap();
        r.read(5, 6, 0, false).unwrap(); // after write, 2 writes back
        r.read(5, 6, 7, false).unwrap(); // re-read
        r.read(9, 10, 9, false).unwrap(); // first read
        assert_eq!((r.read_after_write, r.rereads), (1, 1));
        assert_eq!(r.raw_gap.count_at(2), 1);
    }

    #[test]
    fn zipf_mle_recovers_the_exponent() {
        for s in [0.6, 0.9, 1.2] {
            let z = Zipf::new(20_000.0, s).unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
            let mut counts = vec![0u32; 20_000];
            for _ in 0..400_000 {
                counts[z.sample(&mut rng) as usize - 1] += 1;
            }
            let mut seen: Vec<u32> = counts.into_iter().filter(|&c| c > 0).collect();
            let got = zipf_mle(&mut seen, 20_000).unwrap();
            assert!((got - s).abs() < 0.03, "s {s}: fitted {got}");
        }
    }

    #[test]
    fn harmonic_tail_matches_the_sum() {
        for s in [0.5, 1.0, 1.5] {
            let exact: f64 = (1..=50_000u64).map(|k| (k as f64).powf(-s)).sum();
            assert!((harmonic(50_000, s) / exact - 1.0).abs() < 1e-8, "{s}");
        }
    }
}
