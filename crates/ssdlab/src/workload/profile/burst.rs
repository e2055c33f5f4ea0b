//! Burstiness of an arrival stream, in one pass: counts in windows of fixed widths from the
//! first arrival, giving the index of dispersion of counts (IDC) at each width, the b-model
//! bias, a Hurst estimate (aggregated variance) and busy/idle periods at 1 ms.

use super::runs::Runs;
use serde::Serialize;
use std::collections::VecDeque;

/// Widths of the reported IDC, ms.
pub const IDC_SCALES_MS: [f64; 5] = [1.0, 10.0, 100.0, 1000.0, 10_000.0];

/// Dyadic widths for the b-model and Hurst estimates: 62.5 µs × 2^k.
const DYADIC_BASE_NS: u64 = 62_500;
const DYADIC_LEVELS: usize = 44;

/// Fewest windows a width needs before its statistics are reported (and fewest runs).
pub const MIN_WINDOWS: u64 = 10;

/// Arrivals less than this apart are one run (and their gap a short one), ns.
pub(crate) const RUN_GAP_NS: u64 = 1_000_000;

/// Counts of arrivals in consecutive windows of one width.
#[derive(Debug, Clone)]
pub(crate) struct Windows {
    width_ns: u64,
    /// The current window; the windows before it (empty ones included) are closed.
    bin: u64,
    count: u64,
    /// Closed windows with at least one arrival.
    nonempty: u64,
    sum: f64,
    sum_sq: f64,
}

impl Windows {
    fn new(width_ns: u64) -> Self {
        Windows {
            width_ns,
            bin: 0,
            count: 0,
            nonempty: 0,
            sum: 0.0,
            sum_sq: 0.0,
        }
    }

    fn close_until(&mut self, bin: u64) {
        if bin > self.bin {
            let c = self.count as f64;
            self.sum += c;
            self.sum_sq += c * c;
            self.nonempty += u64::from(self.count > 0);
            self.bin = bin;
            self.count = 0;
        }
    }

    fn add(&mut self, t_ns: u64) {
        self.close_until(t_ns / self.width_ns);
        self.count += 1;
    }

    /// Sums over the whole windows before `end_ns` (the stream's last arrival), the windows
    /// `0..end_ns / width`; the partial window holding `end_ns` is left out, as its count
    /// would stand for a shorter time.
    fn finish(&mut self, end_ns: u64) -> WindowSums {
        self.close_until(end_ns / self.width_ns);
        WindowSums {
            windows: self.bin,
            nonempty: self.nonempty,
            sum: self.sum,
            sum_sq: self.sum_sq,
        }
    }
}

/// Sums over all windows of one width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowSums {
    pub windows: u64,
    pub nonempty: u64,
    pub sum: f64,
    pub sum_sq: f64,
}

impl WindowSums {
    /// Index of dispersion: variance over mean of the counts (`None`: too few windows or no
    /// arrivals).
    pub fn idc(&self) -> Option<f64> {
        if self.windows < MIN_WINDOWS || self.sum <= 0.0 {
            return None;
        }
        let w = self.windows as f64;
        let mean = self.sum / w;
        Some(((self.sum_sq / w - mean * mean) / mean).max(0.0))
    }
}

/// Arrivals of one class (all, reads or writes) at every width.
#[derive(Debug, Clone)]
pub(crate) struct ClassWindows {
    idc: Vec<Windows>,
    dyadic: Vec<Windows>,
    prev_ns: Option<u64>,
    /// Gaps below 1 ms between consecutive arrivals of the class, ns.
    short_gaps: hdrhistogram::Histogram<u64>,
    /// Runs of arrivals less than 1 ms apart.
    runs: Runs,
}

impl Default for ClassWindows {
    fn default() -> Self {
        ClassWindows {
            idc: IDC_SCALES_MS
                .iter()
                .map(|ms| Windows::new((ms * 1e6) as u64))
                .collect(),
            dyadic: (0..DYADIC_LEVELS)
                .map(|k| Windows::new(DYADIC_BASE_NS << k))
                .collect(),
            prev_ns: None,
            short_gaps: hdrhistogram::Histogram::new_with_bounds(1, 1 << 50, 3)
                .expect("valid bounds"),
            runs: Runs::default(),
        }
    }
}

/// The burstiness of one class of requests.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ClassBurstiness {
    /// Requests of the class.
    pub requests: u64,
    /// IDC at each width of [`IDC_SCALES_MS`] (`null`: fewer than 10 windows or no requests).
    pub idc: Vec<Option<f64>>,
    /// Share of whole 1 ms windows without an arrival of the class, %.
    pub empty_1ms_pct: Option<f64>,
    /// Mean arrivals of the class per 1 ms window that has any (batching).
    pub per_busy_ms: Option<f64>,
    /// Median gap between consecutive arrivals of the class that are less than 1 ms apart, µs.
    pub short_gap_us: Option<f64>,
    /// Mean length of a run of arrivals less than 1 ms apart (`null`: fewer than 10 runs).
    pub run_mean: Option<f64>,
    /// Mean length of the run a request is in (Σ n² / Σ n over runs): beside `run_mean`, the
    /// tail of the run lengths. Geometric runs of mean m give 2m − 1.
    pub run_seen_mean: Option<f64>,
    /// Standard error of `run_seen_mean − run_mean` (the delete-one-run jackknife): large
    /// when a few long runs make the tail.
    pub run_excess_se: Option<f64>,
    /// b-model bias fitted to the decay of Σ n(n−1) over dyadic widths (0.5 = no bursts).
    pub bmodel_b: Option<f64>,
    /// Hurst exponent by aggregated variance (0.5 = short-range dependence only).
    pub hurst: Option<f64>,
}

impl ClassWindows {
    pub(crate) fn add(&mut self, t_ns: u64) {
        if let Some(prev) = self.prev_ns.replace(t_ns) {
            let gap = t_ns.saturating_sub(prev);
            if gap < RUN_GAP_NS {
                self.short_gaps.saturating_record(gap);
            } else {
                self.runs.close();
            }
        }
        self.runs.extend();
        for w in self.idc.iter_mut().chain(self.dyadic.iter_mut()) {
            w.add(t_ns);
        }
    }

    pub(crate) fn finish(&mut self, requests: u64, end_ns: u64) -> ClassBurstiness {
        let runs = self.runs.stats(MIN_WINDOWS);
        let (run_mean, run_seen_mean, run_excess_se) = (
            runs.map(|r| r.mean),
            runs.map(|r| r.seen),
            runs.map(|r| r.excess_se),
        );
        let sums: Vec<WindowSums> = self.idc.iter_mut().map(|w| w.finish(end_ns)).collect();
        let idc = sums.iter().map(WindowSums::idc).collect();
        let ms = sums[0];
        let empty_1ms_pct = (ms.windows >= MIN_WINDOWS)
            .then(|| 100.0 * (ms.windows - ms.nonempty) as f64 / ms.windows as f64);
        let per_busy_ms =
            (ms.windows >= MIN_WINDOWS && ms.nonempty > 0).then(|| ms.sum / ms.nonempty as f64);
        let short_gap_us = (!self.short_gaps.is_empty())
            .then(|| self.short_gaps.value_at_quantile(0.5) as f64 / 1e3);
        let levels: Vec<(f64, WindowSums)> = self
            .dyadic
            .iter_mut()
            .map(|w| ((w.width_ns as f64).log2(), w.finish(end_ns)))
            .collect();
        let (b, h) = dyadic_estimates(requests, &levels);
        ClassBurstiness {
            requests,
            idc,
            empty_1ms_pct,
            per_busy_ms,
            short_gap_us,
            run_mean,
            run_seen_mean,
            run_excess_se,
            bmodel_b: b,
            hurst: h,
        }
    }
}

/// Least-squares slope of y on x.
pub(crate) fn slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    (sxx > 0.0).then(|| sxy / sxx)
}

/// b-model bias and Hurst exponent from dyadic window sums (levels as (log2 width, sums)).
///
/// In a b-model cascade Σ_i p_i² over 2^k equal windows is q^k with q = b² + (1 − b)², and
/// Σ n_i(n_i − 1) / (N(N − 1)) estimates it without the Poisson noise of finite counts; the
/// slope of its log2 against log2 width is −log2 q. The aggregated-variance Hurst estimate
/// uses Var(count) / width² ∝ width^(2H − 2). Both use the widths with at least 8 windows and
/// one request per window on average.
fn dyadic_estimates(n: u64, levels: &[(f64, WindowSums)]) -> (Option<f64>, Option<f64>) {
    if n < 16 {
        return (None, None);
    }
    let nf = n as f64;
    let usable: Vec<&(f64, WindowSums)> = levels
        .iter()
        .filter(|(_, s)| s.windows >= 8 && nf / s.windows as f64 >= 1.0)
        .collect();
    let pairs: Vec<(f64, f64)> = usable
        .iter()
        .filter_map(|(lw, s)| {
            let ss = (s.sum_sq - s.sum) / (nf * (nf - 1.0));
            (ss > 0.0).then(|| (*lw, ss.log2()))
        })
        .collect();
    let b = slope(&pairs).map(|m| {
        let q = 2f64.powf(-m).clamp(0.5, 1.0);
        (1.0 + (2.0 * q - 1.0).max(0.0).sqrt()) / 2.0
    });
    let var: Vec<(f64, f64)> = usable
        .iter()
        .filter_map(|(lw, s)| {
            let w = s.windows as f64;
            let mean = s.sum / w;
            let v = s.sum_sq / w - mean * mean;
            (v > 0.0).then(|| (*lw, v.log2() - 2.0 * lw))
        })
        .collect();
    let h = slope(&var).map(|m| 1.0 + m / 2.0);
    (b, h)
}

/// Windows of [`Coupling`]: how long after a write a read still counts as near it, ms.
pub const NEAR_WRITE_MS: [f64; 2] = [1.0, 10.0];

/// How reads sit in time against writes: the share of reads whose latest earlier write (in
/// arrival order; the same instant counts) arrived at most 1 ms / 10 ms before them. A read
/// that close behind a write may find its die programming; independent read and write
/// processes put few reads there, bursts that carry both put many.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Coupling {
    /// Reads at most 1 ms after a write, % of reads (`null`: no reads or no writes).
    pub read_within_1ms_of_write_pct: Option<f64>,
    /// Reads at most 10 ms after a write, % of reads.
    pub read_within_10ms_of_write_pct: Option<f64>,
    /// Of the reads at most 1 ms after a write, the share whose start page a write of that
    /// millisecond wrote (a write read back at once), % (`null`: no such reads). Riders of a
    /// write burst that read what it wrote are served from the controller's copy; riders that
    /// read other pages may wait for the burst's programs.
    pub near_reads_of_written_pct: Option<f64>,
}

/// Writes of the last [`NEAR_WRITE_MS`]\[0\] a near read is checked against (the latest ones; a
/// burst of more writes than this within 1 ms checks only its latest).
const NEAR_WRITES_KEPT: usize = 256;

/// Running [`Coupling`] accounting.
#[derive(Debug, Clone, Default)]
pub(crate) struct CouplingCounter {
    last_write_ns: Option<u64>,
    reads: u64,
    writes: u64,
    near: [u64; 2],
    /// Near reads (1 ms) whose start page a write of that millisecond wrote.
    near_written: u64,
    /// The latest writes: arrival, first page, end page (exclusive).
    recent: VecDeque<(u64, u64, u64)>,
}

impl CouplingCounter {
    /// A request arriving at `t_ns` of pages `first..end`.
    pub(crate) fn add(&mut self, t_ns: u64, write: bool, first: u64, end: u64) {
        let window = (NEAR_WRITE_MS[0] * 1e6) as u64;
        while self
            .recent
            .front()
            .is_some_and(|w| t_ns.saturating_sub(w.0) > window)
        {
            self.recent.pop_front();
        }
        if write {
            self.writes += 1;
            self.last_write_ns = Some(t_ns);
            if self.recent.len() == NEAR_WRITES_KEPT {
                self.recent.pop_front();
            }
            self.recent.push_back((t_ns, first, end));
            return;
        }
        self.reads += 1;
        if let Some(w) = self.last_write_ns {
            let gap = t_ns.saturating_sub(w) as f64;
            for (n, ms) in self.near.iter_mut().zip(NEAR_WRITE_MS) {
                *n += u64::from(gap <= ms * 1e6);
            }
        }
        self.near_written += u64::from(self.recent.iter().any(|w| (w.1..w.2).contains(&first)));
    }

    pub(crate) fn finish(&self) -> Coupling {
        let share = |n: u64| {
            (self.reads > 0 && self.writes > 0).then(|| 100.0 * n as f64 / self.reads as f64)
        };
        Coupling {
            read_within_1ms_of_write_pct: share(self.near[0]),
            read_within_10ms_of_write_pct: share(self.near[1]),
            near_reads_of_written_pct: (self.near[0] > 0)
                .then(|| 100.0 * self.near_written as f64 / self.near[0] as f64),
        }
    }
}

/// Busy and idle periods of the arrival stream at 1 ms: a busy period is a run of 1 ms windows
/// each with at least one arrival; an idle period a run of empty ones.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct BusyIdle {
    /// Share of 1 ms windows with no arrival, %.
    pub idle_pct: f64,
    /// Busy periods.
    pub busy_periods: u64,
    /// Mean busy period, ms.
    pub mean_busy_ms: f64,
    /// Mean idle period, ms.
    pub mean_idle_ms: f64,
    /// Longest idle period, ms.
    pub max_idle_ms: f64,
}

/// Running busy/idle accounting at 1 ms.
#[derive(Debug, Clone, Default)]
pub(crate) struct BusyIdleCounter {
    started: bool,
    last_bin: u64,
    busy_windows: u64,
    busy_periods: u64,
    idle_windows: u64,
    idle_periods: u64,
    max_idle: u64,
}

impl BusyIdleCounter {
    pub(crate) fn add(&mut self, t_ns: u64) {
        let bin = t_ns / 1_000_000;
        if !self.started {
            self.started = true;
            self.busy_periods = 1;
            self.busy_windows = 1;
        } else if bin == self.last_bin + 1 {
            self.busy_windows += 1;
        } else if bin > self.last_bin + 1 {
            let idle = bin - self.last_bin - 1;
            self.idle_windows += idle;
            self.idle_periods += 1;
            self.max_idle = self.max_idle.max(idle);
            self.busy_periods += 1;
            self.busy_windows += 1;
        }
        self.last_bin = bin;
    }

    pub(crate) fn finish(&self) -> BusyIdle {
        let all = self.busy_windows + self.idle_windows;
        BusyIdle {
            idle_pct: if all > 0 {
                100.0 * self.idle_windows as f64 / all as f64
            } else {
                0.0
            },
            busy_periods: self.busy_periods,
            mean_busy_ms: ratio(self.busy_windows, self.busy_periods),
            mean_idle_ms: ratio(self.idle_windows, self.idle_periods),
            max_idle_ms: self.max_idle as f64,
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idc_of_known_counts() {
        // Windows of 1 ms: counts 2, 0, 4, 0, ... (alternating, 20 windows): mean 1.5 ... use
        // exact sums instead: counts 3 and 1 alternating give mean 2, variance 1, IDC 0.5.
        let mut w = Windows::new(1_000_000);
        for bin in 0..20u64 {
            for _ in 0..if bin % 2 == 0 { 3 } else { 1 } {
                w.add(bin * 1_000_000 + 10);
            }
        }
        w.add(20 * 1_000_000);
        let s = w.finish(20 * 1_000_000);
        assert_eq!(s.windows, 20);
        assert!((s.idc().unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn empty_windows_count() {
        // Arrivals at 0 and 9.5 ms, and the last at 10.2 ms: ten whole 1 ms windows, counts
        // 1,0,...,0,1 (the window of the last arrival is partial and left out).
        let mut w = Windows::new(1_000_000);
        w.add(0);
        w.add(9_500_000);
        w.add(10_200_000);
        let s = w.finish(10_200_000);
        assert_eq!((s.windows, s.sum, s.sum_sq), (10, 2.0, 2.0));
        // mean 0.2, variance 0.2 - 0.04 = 0.16, IDC 0.8
        assert!((s.idc().unwrap() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn busy_and_idle_periods_of_a_hand_built_stream() {
        let mut c = BusyIdleCounter::default();
        // busy 0-1 ms (2 windows), idle 2-4 (3), busy 5 (1), idle 6-9 (4), busy 10.
        for ms in [0.1, 0.5, 1.2, 5.5, 10.0] {
            c.add((ms * 1e6) as u64);
        }
        let b = c.finish();
        assert_eq!(b.busy_periods, 3);
        assert!((b.idle_pct - 7.0 / 11.0 * 100.0).abs() < 1e-9);
        assert!((b.mean_busy_ms - 4.0 / 3.0).abs() < 1e-12);
        assert!((b.mean_idle_ms - 3.5).abs() < 1e-12);
        assert_eq!(b.max_idle_ms, 4.0);
    }

    #[test]
    fn reads_near_writes_of_a_hand_built_stream() {
        let mut c = CouplingCounter::default();
        // r at 0 (no write yet), w at 1 ms, r at 1.5 ms (0.5 ms after), r at 2 ms (1 ms: near),
        // r at 8 ms (7 ms), w at 20 ms, r at 40 ms (20 ms). The write at 1 ms wrote pages
        // 10..12: of the two near reads, the one at 1.5 ms reads page 11 back, the other
        // page 5.
        for (ms, w, page) in [
            (0.0, false, 11),
            (1.0, true, 10),
            (1.5, false, 11),
            (2.0, false, 5),
            (8.0, false, 11),
            (20.0, true, 0),
            (40.0, false, 0),
        ] {
            let end = if w { page + 2 } else { page + 1 };
            c.add((ms * 1e6) as u64, w, page, end);
        }
        let k = c.finish();
        assert_eq!(k.read_within_1ms_of_write_pct, Some(40.0));
        assert_eq!(k.read_within_10ms_of_write_pct, Some(60.0));
        assert_eq!(k.near_reads_of_written_pct, Some(50.0));
        assert_eq!(CouplingCounter::default().finish(), Coupling::default());
    }

    #[test]
    fn the_slope_of_a_line() {
        let pts: Vec<(f64, f64)> = (0..5)
            .map(|x| (f64::from(x), 3.0 - 0.5 * f64::from(x)))
            .collect();
        assert!((slope(&pts).unwrap() + 0.5).abs() < 1e-12);
    }
}
