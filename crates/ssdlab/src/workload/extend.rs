//! `trace extend`: a real trace lengthened by a block bootstrap of its own activity.
//!
//! The trace is cut into blocks — busy periods (runs of requests whose gaps stay below
//! `idle_ms`, merged until a block holds `min_block` requests, and cut anyway at four times
//! that where the trace never idles) or fixed windows of `window_ms`
//! (empty ones included, so idle time is drawn too) — and blocks are drawn with replacement
//! until `requests` requests are out. Inside a block everything is the trace's own: gaps,
//! addresses, sizes, directions, so re-reads, reads after writes and bursts inside a block are
//! kept. A busy block brings the idle time that followed it in the trace (busy period and
//! idle period together, a cycle of the trace's activity), so a burst keeps the time the trace
//! gave the drive to drain it.
//!
//! Addresses are remapped per copy ("epoch") so the footprint (distinct pages read or
//! written) grows as the trace's own does, while the pages the trace keeps coming back to stay
//! where they are. Epoch 0 is the trace's own addresses. In an epoch `e > 0`, a block's own
//! requests — those whose first page the trace first touched in that block — move to a fresh
//! region past the end of the trace's span, one region per epoch, each as large as the trace's
//! distinct pages (plus its largest request): a page goes to the slot of its rank in the order
//! the trace first touched its pages, so pages first touched together (sequential runs) stay
//! together, re-reads inside the block find the page again, and the address space grows with
//! the data added (an epoch's region holds the pages of the blocks drawn into it). A request's pages take the slots from its first page's on. Revisits of
//! pages an earlier block first touched (the trace's lasting hot set) keep their addresses in
//! every epoch.
//!
//! The footprint's target after `n` requests is the trace's distinct pages after `n`
//! requests, and past the trace's length its growth over its second half continued linearly.
//! A block drawn while the output's footprint is behind the target goes to the lowest epoch it
//! has not been drawn in (new pages); otherwise to the latest epoch it was drawn in (a repeat,
//! with its re-reads), or, never drawn, the latest epoch.
//!
//! Memory: 24 bytes per request and about 30 per distinct page of the source, plus one bit per
//! page of each epoch; it does not grow with the output, which is streamed. Content
//! fingerprints (FIU IODedup) are not carried: an extended trace has none.

use super::trace::{TraceError, TraceOptions, TraceReader};
use super::{IoOp, Request, Requests};
use crate::rng::Rngs;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt;
use std::str::FromStr;

/// Page size of the footprint accounting, bytes.
const PAGE: u64 = 4096;
/// Most distinct pages of a source (512 GiB of 4 KiB pages).
pub const MAX_SOURCE_PAGES: usize = 1 << 27;
/// Most memory for the marks of the output's distinct pages (one bit per page of an epoch).
const MAX_MARK_BYTES: u64 = 1 << 30;
/// Most source requests held (24 bytes each: 2.4 GB).
pub const MAX_SOURCE_REQUESTS: usize = 100_000_000;
/// Most blocks (fixed windows over a long trace).
const MAX_BLOCKS: u64 = 1 << 24;

/// How the trace is cut into blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlockRule {
    /// Busy periods split at gaps of at least `idle_ms`, merged to `min_block` requests.
    Busy {
        /// Gap that ends a busy period, ms.
        idle_ms: f64,
        /// Fewest requests of a block (`None`: 5 % of the trace, at least 16); a block with
        /// four times as many ends without an idle gap.
        min_block: Option<u64>,
    },
    /// Fixed windows of this length, ms.
    Window {
        /// Window length, ms.
        window_ms: f64,
    },
}

/// An extension: `requests=N[,seed=S][,block=busy|window][,idle_ms=X][,min_block=K][,window_ms=W]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtendSpec {
    /// Requests of the output.
    pub requests: u64,
    /// Seed of the block draws.
    pub seed: u64,
    /// How blocks are cut.
    pub block: BlockRule,
}

impl FromStr for ExtendSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (mut requests, mut seed, mut kind) = (None, 1, "busy".to_string());
        let (mut idle_ms, mut min_block, mut window_ms) = (None, None, None);
        let mut seen = FxHashSet::default();
        for kv in s.split(',').filter(|kv| !kv.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("extend spec `{kv}`: expected key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            if !seen.insert(k.to_string()) {
                return Err(format!("extend spec: key `{k}` is given twice"));
            }
            // Digits (any u64), or another notation (1e6) of a whole number below 2^53.
            let whole = |v: &str| {
                match (v.parse::<u64>(), v.parse::<f64>()) {
                (Ok(n), _) => Ok(n),
                (_, Ok(x)) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) => Ok(x as u64),
                _ => Err(format!(
                    "extend spec {k} = {v}: expected a whole number >= 0 (beyond 2^53 written in digits)"
                )),
            }
            };
            let ms = |v: &str| match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 && x <= 1e12 => Ok(x),
                _ => Err(format!(
                    "extend spec {k} = {v}: expected a time in ms, > 0 and at most 1e12"
                )),
            };
            match k {
                "requests" => requests = Some(whole(v)?),
                "seed" => seed = whole(v)?,
                "block" if v == "busy" || v == "window" => kind = v.to_string(),
                "block" => {
                    return Err(format!(
                        "extend spec block = {v}: expected `busy` or `window`"
                    ))
                }
                "idle_ms" => idle_ms = Some(ms(v)?),
                "window_ms" => window_ms = Some(ms(v)?),
                "min_block" => match whole(v)? {
                    0 => return Err("extend spec min_block = 0: expected at least 1".into()),
                    n => min_block = Some(n),
                },
                _ => {
                    return Err(format!(
                        "extend spec: unknown key `{k}` (known: requests, seed, block, idle_ms, min_block, window_ms)"
                    ))
                }
            }
        }
        let requests = requests.ok_or("extend spec: `requests` is required")?;
        if requests == 0 {
            return Err("extend spec requests = 0: expected at least 1".into());
        }
        let block = if kind == "window" {
            if idle_ms.is_some() || min_block.is_some() {
                return Err(
                    "extend spec: idle_ms and min_block belong to block=busy, not block=window"
                        .into(),
                );
            }
            BlockRule::Window {
                window_ms: window_ms.ok_or("extend spec block=window: `window_ms` is required")?,
            }
        } else {
            if window_ms.is_some() {
                return Err("extend spec: window_ms belongs to block=window".into());
            }
            BlockRule::Busy {
                idle_ms: idle_ms.unwrap_or(1.0),
                min_block,
            }
        };
        Ok(ExtendSpec {
            requests,
            seed,
            block,
        })
    }
}

impl fmt::Display for ExtendSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "requests={},seed={}", self.requests, self.seed)?;
        match self.block {
            BlockRule::Busy { idle_ms, min_block } => {
                write!(f, ",block=busy,idle_ms={idle_ms}")?;
                if let Some(k) = min_block {
                    write!(f, ",min_block={k}")?;
                }
                Ok(())
            }
            BlockRule::Window { window_ms } => write!(f, ",block=window,window_ms={window_ms}"),
        }
    }
}

/// One source request, compactly: time from its block's start, address, size, direction.
#[derive(Debug, Clone, Copy)]
struct Rec {
    dt_ns: u64,
    offset: u64,
    size: u32,
    write: bool,
    /// The request's first page was first touched in this block (not a revisit of an
    /// earlier block's page).
    own: bool,
}

/// A block: requests `start..start + len` of the source, the first `lead_ns` after the
/// block's start; the next block starts `dur_ns` after this one's start.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    len: usize,
    lead_ns: u64,
    dur_ns: u64,
}

/// The extended stream (an iterator of requests).
pub struct Extended {
    recs: Vec<Rec>,
    blocks: Vec<Block>,
    /// The source's distinct pages at each block end: (requests so far, pages).
    curve: Vec<(u64, u64)>,
    /// Growth of the source's footprint per request over its second half.
    tail_rate: f64,
    /// Of each source page, the block that first touched it and its rank in order of first
    /// touch: in epoch `e > 0` a moved page of rank `k` lands on page
    /// `end_page + (e - 1) * stride + k`.
    rank: FxHashMap<u64, (u32, u32)>,
    end_page: u64,
    /// Pages of an epoch past the first: the source's distinct pages and its largest request.
    stride: u64,
    requests: u64,
    rng: ChaCha8Rng,
    emitted: u64,
    /// The output's distinct pages: one bit per page of each epoch (epoch 0 by rank), and
    /// their count.
    marks: Vec<Vec<u64>>,
    touched: u64,
    /// Epochs each block has been drawn in.
    drawn: FxHashMap<usize, Vec<u32>>,
    epochs: u32,
    /// Current block, its epoch and its next request.
    cur: Option<(usize, u32, usize)>,
    /// Start of the current block in output time, plus `t0_ns`.
    base_ns: u64,
    /// Output time 0: the first request's time from its block's start.
    t0_ns: Option<u64>,
}

impl Extended {
    /// Reads `source` whole and prepares the extension.
    ///
    /// # Errors
    /// The source fails, is empty or too large, or the blocks are too many.
    pub fn new(source: &mut Requests, spec: &ExtendSpec) -> Result<Self, TraceError> {
        let fail = |why: String| TraceError::Extend { why };
        // Read whole, times absolute; made relative to each block's start below, in place.
        let mut recs: Vec<Rec> = Vec::new();
        for r in source {
            let r = r?;
            if recs.len() >= MAX_SOURCE_REQUESTS {
                return Err(fail(format!(
                    "the source holds more than {MAX_SOURCE_REQUESTS} requests (24 bytes each are held); extend a prefix (--limit)"
                )));
            }
            let size = u32::try_from(r.size_bytes).expect("trace sizes are at most 1 GiB");
            recs.push(Rec {
                dt_ns: r.time_ns,
                offset: r.offset_bytes,
                size,
                write: r.op == IoOp::Write,
                own: false,
            });
        }
        if recs.is_empty() {
            return Err(fail("the source has no requests".into()));
        }
        let n = recs.len();
        let blocks = cut(&recs, spec.block).map_err(fail)?;
        // Footprint curve of the source, its address span, and the block that first touched
        // each page (a request is a block's own when its first page is).
        let mut seen: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
        let mut widest = 0;
        let (mut curve, mut end_page, mut half_pages, mut bi) = (Vec::new(), 0u64, 0u64, 0);
        for (i, r) in recs.iter_mut().enumerate() {
            let (first, last) = (r.offset / PAGE, (r.offset + u64::from(r.size) - 1) / PAGE);
            end_page = end_page.max(last + 1);
            let block = u32::try_from(bi).expect("at most 2^24 blocks");
            widest = widest.max(last - first + 1);
            for p in first..=last {
                let rank = seen.len() as u32;
                seen.entry(p).or_insert((block, rank));
            }
            r.own = seen[&first].0 == block;
            if seen.len() > MAX_SOURCE_PAGES {
                return Err(fail(format!(
                    "the source touches more than {MAX_SOURCE_PAGES} distinct 4 KiB pages; extend a prefix (--limit)"
                )));
            }
            if i + 1 == n / 2 {
                half_pages = seen.len() as u64;
            }
            while bi < blocks.len() && blocks[bi].start + blocks[bi].len <= i + 1 {
                curve.push(((i + 1) as u64, seen.len() as u64));
                bi += 1;
            }
        }
        curve.dedup_by_key(|c| c.0);
        let tail_rate = (seen.len() as u64 - half_pages) as f64 / (n - n / 2) as f64;
        for b in blocks.iter().filter(|b| b.len > 0) {
            let t_first = recs[b.start].dt_ns;
            for r in &mut recs[b.start..b.start + b.len] {
                r.dt_ns = b.lead_ns + (r.dt_ns - t_first);
            }
        }
        Ok(Extended {
            recs,
            blocks,
            curve,
            tail_rate,
            stride: seen.len() as u64 + widest,
            rank: seen,
            end_page,
            requests: spec.requests,
            rng: Rngs::new(spec.seed).stream("extend"),
            emitted: 0,
            marks: Vec::new(),
            touched: 0,
            drawn: FxHashMap::default(),
            epochs: 1,
            cur: None,
            base_ns: 0,
            t0_ns: None,
        })
    }

    /// The extension of the trace at `path`, read with `options`.
    ///
    /// # Errors
    /// As [`TraceReader::open`] and [`Extended::new`].
    pub fn open(
        path: &std::path::Path,
        options: TraceOptions,
        spec: &ExtendSpec,
    ) -> Result<Self, TraceError> {
        Self::new(&mut TraceReader::open(path, options)?, spec)
    }

    /// Blocks the source was cut into.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Requests read from the source.
    pub fn source_requests(&self) -> usize {
        self.recs.len()
    }

    /// Marks slot `k` of `epoch` as touched (counting it the first time).
    fn mark(&mut self, epoch: u32, k: u64) {
        let e = epoch as usize;
        if self.marks.len() <= e {
            let words = self.stride.div_ceil(64) as usize;
            self.marks.resize_with(e + 1, || vec![0; words]);
        }
        let (w, bit) = ((k / 64) as usize, 1u64 << (k % 64));
        if self.marks[e][w] & bit == 0 {
            self.marks[e][w] |= bit;
            self.touched += 1;
        }
    }

    /// The footprint the output should have after `n` requests, pages.
    fn target(&self, n: u64) -> f64 {
        let (len, total) = *self.curve.last().expect("a block at least");
        if n >= len {
            return total as f64 + self.tail_rate * (n - len) as f64;
        }
        let i = self.curve.partition_point(|&(k, _)| k <= n);
        let (k0, p0) = if i == 0 { (0, 0) } else { self.curve[i - 1] };
        let (k1, p1) = self.curve[i];
        p0 as f64 + (p1 - p0) as f64 * (n - k0) as f64 / (k1 - k0) as f64
    }

    /// Draws blocks until one holds requests (a drawn empty window adds its idle time) and
    /// chooses its epoch.
    fn draw(&mut self) -> (usize, u32) {
        let b = loop {
            let b = self.rng.random_range(0..self.blocks.len());
            if self.blocks[b].len > 0 {
                break b;
            }
            self.base_ns = self.base_ns.saturating_add(self.blocks[b].dur_ns);
        };
        let behind = (self.touched as f64) < self.target(self.emitted);
        let seen = self.drawn.entry(b).or_default();
        let epoch = if behind {
            (0..).find(|e| !seen.contains(e)).expect("a free epoch")
        } else {
            seen.iter().copied().max().unwrap_or(self.epochs - 1)
        };
        if !seen.contains(&epoch) {
            seen.push(epoch);
        }
        self.epochs = self.epochs.max(epoch + 1);
        (b, epoch)
    }
}

/// The blocks of `recs` (times absolute) under `rule`.
fn cut(recs: &[Rec], rule: BlockRule) -> Result<Vec<Block>, String> {
    let t = |i: usize| recs[i].dt_ns;
    let n = recs.len();
    let mut blocks = Vec::new();
    match rule {
        BlockRule::Busy { idle_ms, min_block } => {
            let idle_ns = (idle_ms * 1e6) as u64;
            let min = min_block.unwrap_or(((n as u64) / 20).max(16)) as usize;
            let mut start = 0;
            for i in 1..=n {
                let len = i - start;
                if i == n || t(i) - t(i - 1) >= idle_ns && len >= min || len >= 4 * min {
                    // A block runs to the next block's first request: its busy period and the
                    // idle time the trace gave the drive after it.
                    let end = if i < n { t(i) } else { t(i - 1) };
                    blocks.push(Block {
                        start,
                        len,
                        lead_ns: 0,
                        dur_ns: end - t(start),
                    });
                    start = i;
                }
            }
            // The last block's idle time: the mean of the others'.
            if blocks.len() > 1 {
                let idle = |b: &Block| b.dur_ns - (t(b.start + b.len - 1) - t(b.start));
                let k = blocks.len() - 1;
                let mean = blocks[..k].iter().map(idle).sum::<u64>() / k as u64;
                blocks[k].dur_ns += mean;
            }
        }
        BlockRule::Window { window_ms } => {
            let w = ((window_ms * 1e6) as u64).max(1);
            let (t0, t_end) = (t(0), t(n - 1));
            let windows = (t_end - t0) / w + 1;
            if windows > MAX_BLOCKS {
                return Err(format!(
                    "window_ms = {window_ms} cuts the trace into {windows} windows, more than {MAX_BLOCKS}; use longer windows"
                ));
            }
            let mut i = 0;
            for k in 0..windows {
                let (start, from) = (i, t0 + k * w);
                while i < n && t(i) < from + w {
                    i += 1;
                }
                let lead = if i > start { t(start) - from } else { 0 };
                blocks.push(Block {
                    start,
                    len: i - start,
                    lead_ns: lead,
                    dur_ns: w,
                });
            }
        }
    }
    Ok(blocks)
}

impl Iterator for Extended {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.emitted >= self.requests {
            return None;
        }
        let (b, epoch, i) = match self.cur {
            Some((b, e, i)) if i < self.blocks[b].len => (b, e, i),
            Some((b, ..)) => {
                self.base_ns = self.base_ns.saturating_add(self.blocks[b].dur_ns);
                let (b, e) = self.draw();
                (b, e, 0)
            }
            None => {
                let (b, e) = self.draw();
                (b, e, 0)
            }
        };
        self.cur = Some((b, epoch, i + 1));
        let r = self.recs[self.blocks[b].start + i];
        let t0 = *self.t0_ns.get_or_insert(self.base_ns + r.dt_ns);
        let (first, last) = (r.offset / PAGE, (r.offset + u64::from(r.size) - 1) / PAGE);
        let offset = if epoch == 0 || !r.own {
            for q in first..=last {
                self.mark(0, u64::from(self.rank[&q].1));
            }
            r.offset
        } else {
            // The request's pages take the slots from its first page's rank on.
            let k = u64::from(self.rank[&first].1);
            let page = u64::from(epoch - 1)
                .checked_mul(self.stride)
                .and_then(|x| x.checked_add(self.end_page + k));
            let end = page
                .and_then(|p| p.checked_mul(PAGE))
                .and_then(|b| b.checked_add(r.offset % PAGE + u64::from(r.size)));
            let Some(end) = end else {
                self.emitted = self.requests;
                return Some(Err(TraceError::Extend {
                    why: "the added data's addresses pass 2^64 bytes".into(),
                }));
            };
            for j in 0..=last - first {
                self.mark(epoch, k + j);
            }
            end - u64::from(r.size)
        };
        if self.marks.len() as u64 * self.stride / 8 > MAX_MARK_BYTES {
            self.emitted = self.requests;
            return Some(Err(TraceError::Extend {
                why: format!(
                    "the extension needs {} copies of the trace's footprint, more than its {MAX_MARK_BYTES}-byte page marks hold; extend to fewer requests",
                    self.marks.len()
                ),
            }));
        }
        self.emitted += 1;
        Some(Ok(Request {
            time_ns: self.base_ns.saturating_add(r.dt_ns) - t0,
            offset_bytes: offset,
            size_bytes: u64::from(r.size),
            op: if r.write { IoOp::Write } else { IoOp::Read },
            device: 0,
            content: None,
            flow: 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::profile::profile;
    use crate::workload::trace::{TraceOptions, TraceReader};

    fn source(name: &str) -> Vec<Request> {
        let path = format!(
            "{}/../../testdata/traces/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        TraceReader::open(path.as_ref(), TraceOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn extend(src: &[Request], spec: &str) -> Vec<Request> {
        let mut it = src.iter().cloned().map(Ok);
        Extended::new(&mut it, &spec.parse().unwrap())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn written_pages(reqs: &[Request]) -> usize {
        let mut s = FxHashSet::default();
        for r in reqs.iter().filter(|r| r.op == IoOp::Write) {
            s.extend(r.offset_bytes / PAGE..=(r.offset_bytes + r.size_bytes - 1) / PAGE);
        }
        s.len()
    }

    fn req(t_us: u64, op: IoOp, page: u64) -> Request {
        Request {
            time_ns: t_us * 1000,
            offset_bytes: page * PAGE,
            size_bytes: PAGE,
            op,
            device: 0,
            content: None,
            flow: 0,
        }
    }

    #[test]
    fn specs_parse_print_and_refuse_with_the_key() {
        let s: ExtendSpec = "requests=100,seed=3,block=window,window_ms=50"
            .parse()
            .unwrap();
        assert_eq!(s.to_string().parse::<ExtendSpec>().unwrap(), s);
        let d: ExtendSpec = "requests=5e0".parse().unwrap();
        assert_eq!(d.to_string(), "requests=5,seed=1,block=busy,idle_ms=1");
        for (bad, says) in [
            ("seed=2", "`requests` is required"),
            ("requests=0", "requests = 0"),
            ("requests=5,block=runs", "block = runs"),
            ("requests=5,block=window", "`window_ms` is required"),
            (
                "requests=5,window_ms=3",
                "window_ms belongs to block=window",
            ),
            (
                "requests=5,block=window,window_ms=3,idle_ms=1",
                "belong to block=busy",
            ),
            ("requests=5,idle_ms=-1", "idle_ms = -1"),
            ("requests=5,min_block=0", "min_block = 0"),
            ("requests=1.5", "requests = 1.5: expected a whole number"),
            ("requests=5,requests=6", "given twice"),
            ("requests=5,size=4", "unknown key `size`"),
            ("requests", "expected key=value"),
        ] {
            let e = bad.parse::<ExtendSpec>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn an_extension_keeps_count_mix_and_the_gaps_inside_blocks() {
        let src = source("msr_hm_0.csv");
        for spec in [
            "requests=40000,seed=2",
            "requests=40000,seed=2,block=window,window_ms=2000",
        ] {
            let out = extend(&src, spec);
            assert_eq!(out.len(), 40_000, "{spec}");
            assert!(out.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
            assert_eq!(out[0].time_ns, 0);
            let (a, b) = (
                profile(src.iter().cloned().map(Ok::<_, String>)),
                profile(out.iter().cloned().map(Ok::<_, String>)),
            );
            let (a, b) = (a.unwrap(), b.unwrap());
            assert!(
                (a.write_pct - b.write_pct).abs() < 3.0,
                "{spec}: {} vs {}",
                a.write_pct,
                b.write_pct
            );
            // Duration scales with the requests (blocks keep their own time).
            let scale = b.duration_s / a.duration_s / (40_000.0 / src.len() as f64);
            assert!(
                (0.8..1.25).contains(&scale),
                "{spec}: duration scale {scale}"
            );
            // Every gap of the output is a gap of the source (inside a block) or a block
            // boundary's: the gaps between consecutive source requests of one block are kept.
            let src_gaps: FxHashSet<u64> = src
                .windows(2)
                .map(|w| w[1].time_ns - w[0].time_ns)
                .collect();
            let kept = out
                .windows(2)
                .filter(|w| src_gaps.contains(&(w[1].time_ns - w[0].time_ns)))
                .count();
            assert!(
                kept as f64 > 0.97 * out.len() as f64,
                "{spec}: {kept} gaps kept"
            );
            // Re-reads are kept about as often (they live inside blocks).
            let (ra, rb) = (a.reuse.reread_pct, b.reuse.reread_pct);
            assert!(
                (ra - rb).abs() < 0.35 * ra.max(5.0),
                "{spec}: re-reads {ra} vs {rb}"
            );
        }
    }

    #[test]
    fn the_written_footprint_follows_the_sources_growth() {
        // Every write a new page: the footprint grows with the requests, past the source.
        let linear: Vec<Request> = (0..2000).map(|i| req(i * 10, IoOp::Write, i)).collect();
        let out = extend(&linear, "requests=8000,min_block=50");
        let pages = written_pages(&out);
        assert!((7000..=9000).contains(&pages), "linear: {pages} pages");
        // The address space grows with the data added (epoch regions partly filled: a block
        // drawn k times reaches epoch k - 1), not by copies of the whole span.
        let end = out
            .iter()
            .map(|r| r.offset_bytes + r.size_bytes)
            .max()
            .unwrap();
        assert!(end <= 2 * pages as u64 * PAGE, "linear: ends at {end}");
        // Writes over 100 pages again and again: the footprint stays the source's.
        let reused: Vec<Request> = (0..2000)
            .map(|i| req(i * 10, IoOp::Write, i % 100))
            .collect();
        assert_eq!(
            written_pages(&extend(&reused, "requests=8000,min_block=50")),
            100
        );
        // Reads over 50 pages again and again: the addresses stay the source's.
        let reads: Vec<Request> = (0..500)
            .map(|i| req(i * 10, IoOp::Read, 7 * (i % 50)))
            .collect();
        let out = extend(&reads, "requests=3000,min_block=20");
        assert!(out.iter().all(|r| r.offset_bytes < 350 * PAGE));
    }

    #[test]
    fn revisits_of_an_earlier_blocks_pages_keep_their_address() {
        // Page 0 is written first, then read between writes of new pages: the footprint
        // grows, so copies go to new epochs, but the reads of page 0 outside the first block
        // are revisits and stay at page 0 (the first block of 25 owns page 0: its copies move).
        let src: Vec<Request> = (0..2000)
            .map(|i| match i {
                0 => req(0, IoOp::Write, 0),
                i if i % 2 == 1 => req(i * 10, IoOp::Read, 0),
                i => req(i * 10, IoOp::Write, i),
            })
            .collect();
        let out = extend(&src, "requests=10000,min_block=20");
        assert!(written_pages(&out) > 4000, "the footprint grows");
        let reads: Vec<&Request> = out.iter().filter(|r| r.op == IoOp::Read).collect();
        let home = reads.iter().filter(|r| r.offset_bytes == 0).count();
        assert!(
            home as f64 > 0.9 * reads.len() as f64,
            "{home} of {}",
            reads.len()
        );
    }

    #[test]
    fn the_same_seed_repeats_and_another_differs() {
        let src = source("financial1_10k.disksim");
        let a = extend(&src, "requests=5000,seed=4");
        assert_eq!(a, extend(&src, "requests=5000,seed=4"));
        assert_ne!(a, extend(&src, "requests=5000,seed=5"));
    }

    #[test]
    fn hostile_sources_and_windows_get_a_clear_error() {
        let src: Vec<Request> = (0..10).map(|i| req(i * 1_000_000, IoOp::Read, i)).collect();
        let mut it = src.iter().cloned().map(Ok);
        let spec = "requests=5,block=window,window_ms=0.000001"
            .parse()
            .unwrap();
        let e = Extended::new(&mut it, &spec).err().unwrap().to_string();
        assert!(e.contains("windows, more than"), "{e}");
        let mut none = std::iter::empty();
        let e = Extended::new(&mut none, &"requests=5".parse().unwrap());
        assert!(e.err().unwrap().to_string().contains("no requests"));
        // Addresses at the top of the space: the second epoch cannot be placed.
        let top: Vec<Request> = (0..100)
            .map(|i| Request {
                offset_bytes: u64::MAX - (1 << 20) + i * PAGE,
                ..req(i * 10, IoOp::Write, 0)
            })
            .collect();
        let mut it = top.iter().cloned().map(Ok);
        let out: Vec<_> = Extended::new(&mut it, &"requests=1000,min_block=10".parse().unwrap())
            .unwrap()
            .collect();
        let e = out.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(e.contains("pass 2^64"), "{e}");
    }
}
