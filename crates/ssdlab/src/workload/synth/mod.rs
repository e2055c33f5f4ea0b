//! Seeded synthetic workloads: read/write mix, size distributions, arrival processes (Poisson,
//! constant, ON/OFF and b-model bursts, for all requests or for reads and writes apart),
//! footprint, Zipf popularity of reads and of writes, temporal locality (re-reads and reads
//! after writes at a stack-distance law), sequential runs and deduplicable content.
//!
//! Specs written before the burst, per-direction and locality keys existed produce the same
//! streams as they did: those keys draw nothing from the generator unless they are set.
//!
//! The file stays whole (past 500 lines) because the spec, the per-request state and the
//! iterator that draws from it share one order of random draws that old specs depend on;
//! arrival processes and spec parsing live in their own files.

mod arrivals;
mod envelope;
mod fresh;
mod residues;
mod side;
mod spec;

pub use arrivals::Process;
pub use envelope::{Envelope, Warp};
pub use residues::Residues;
pub use spec::MIN_BATCH_SHAPE;

use super::apportion;
use super::trace::TraceError;
use super::{IoOp, Request};
use fresh::Fresh;
use rand::distr::weighted::WeightedIndex;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution, Exp, LogNormal, Poisson, Zipf};
use side::{BatchLaw, Side};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

/// Inter-arrival distributions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps (Poisson arrivals) with this mean, µs.
    Exponential(f64),
    /// Constant gaps, µs.
    Constant(f64),
}

/// Request sizes in KiB with weights (none: uniform over the sizes).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sizes {
    /// Sizes, KiB.
    pub kib: Vec<u32>,
    /// Relative weights, one per size, or empty for equal weights.
    pub weights: Vec<f64>,
}

/// Keys set for one direction alone (`read_…`, `write_…`); `None` takes the spec's own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpSpec {
    /// Arrival process of this direction: setting it for either direction splits the stream
    /// into independent read and write processes, merged in time.
    pub arrivals: Option<Process>,
    /// Zipf exponent of this direction's popularity.
    pub zipf: Option<f64>,
    /// Pages this direction's popularity law ranges over (its hot set), GiB; at most
    /// `footprint_gib`.
    pub footprint_gib: Option<f64>,
    /// Size distribution of this direction.
    pub sizes: Option<Sizes>,
    /// Probability that a request of this direction continues where the previous one ended.
    pub seq: Option<f64>,
    /// Mean requests per arrival of this direction's process (a batch; setting it splits the
    /// stream like `arrivals`).
    pub batch: Option<f64>,
    /// Mean gap between the requests of one batch of this direction, µs.
    pub batch_us: Option<f64>,
    /// Gamma shape of this direction's batch-size law (`batch_shape`).
    pub batch_shape: Option<f64>,
    /// Activity envelope of this direction (setting it splits the stream like `arrivals`).
    pub envelope: Option<Envelope>,
    /// This direction's hot set, GiB (`hot_gib`).
    pub hot_gib: Option<f64>,
    /// Share of this direction's drawn pages that fall in its hot set (`hot_share`).
    pub hot_share: Option<f64>,
    /// How far this direction's hot set moves over the stream (`hot_drift`).
    pub hot_drift: Option<f64>,
    /// New pages of this direction drawn without replacement (`read_fresh=1`): a random
    /// order of as many units of its largest request as its footprint holds requests of its
    /// mean size, each new request anywhere in its own unit, so none touches a page an
    /// earlier one did (until all are drawn) and its only repeats are those `reread`,
    /// `raw`, `seq`, the riders and `rewrite` ask for (uniform popularity only; module
    /// `fresh`). With fresh reads, a re-read or read after write whose drawn distance reaches
    /// back past the first request recorded is a new read (otherwise it is clipped to the
    /// oldest one).
    pub fresh: bool,
    /// With `apart`, the start-page residues of this direction's half of the footprint
    /// (`read_start_residues`; the reads' half also holds the shared writes' pages): as
    /// `start_residues`, one law per half instead of one for both.
    pub start_residues: Option<Residues>,
}

/// A synthetic workload specification.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthSpec {
    /// Number of requests.
    pub requests: u64,
    /// Fraction of writes.
    pub write_ratio: f64,
    /// Request sizes in KiB.
    pub size_kib: Vec<u32>,
    /// Weights of `size_kib` (empty: chosen uniformly).
    pub size_weights: Vec<f64>,
    /// Mean gap and, without `burst`, the arrival process.
    pub arrivals: Arrivals,
    /// A bursty arrival process for all requests (`arrivals=onoff|bmodel`).
    pub burst: Option<Process>,
    /// Activity envelope of the whole stream (`envelope=w1|w2|…`): the relative request
    /// rate of each equal slice of the span (module `envelope`).
    pub envelope: Option<Envelope>,
    /// Mean requests per arrival of the process: each arrival brings a batch of a geometric
    /// number of requests (1 = no batches).
    pub batch: f64,
    /// Mean gap between the requests of one batch, µs (exponential; 0 = all at once).
    pub batch_us: f64,
    /// Gamma shape r of the batch-size law: a batch brings 1 + Poisson(G) requests, G gamma
    /// of shape r and mean `batch` − 1 (negative binomial). 1 = geometric; below 1 the sizes
    /// are heavier-tailed at the same mean: many single requests and a few very large
    /// batches, as real write bursts are (`trace stats`: runs as a request sees them).
    pub batch_shape: f64,
    /// Share of reads that arrive inside the batches of the write process instead of the
    /// read process (0 = none): reads and writes issued together, as a file system or a
    /// database mixes them within a burst. Setting it splits the stream.
    pub cobatch: f64,
    /// Probability that a read riding in a write batch reads back the start page of the latest
    /// write (a write read back at once, as a file system or database verifying or re-using
    /// what it just wrote); the other riders draw their page as any read. 0 = none.
    pub cobatch_raw: f64,
    /// With a write envelope: how the riders (`cobatch`) are shared among its slices, each
    /// slice's write arrivals carrying exactly its share, so riders land where the workload's
    /// reads near writes were rather than in proportion to the writes (`None`: riders are a
    /// constant share of the write process's arrivals).
    pub rider_envelope: Option<Envelope>,
    /// Address range touched, GiB.
    pub footprint_gib: f64,
    /// Zipf exponent over 4 KiB pages of the footprint (0 = uniform).
    pub zipf: f64,
    /// Probability that a request continues where the previous one ended.
    pub seq: f64,
    /// Share of writes drawn from the same hot set as reads (1 = one distribution for both).
    /// Below 1 the other writes hit a disjoint hot set, as in the papers' observation that most
    /// pages are read-only or write-only (hotr.txt §II: 9.6 % of pages are mixed).
    pub rw_mix: f64,
    /// The footprint in two halves (`apart=1`): reads and the writes of the shared share
    /// (`rw_mix`) draw their pages in the first, the other writes in the second, each
    /// direction's popularity scattered within its half. Without it both directions scatter
    /// over the whole footprint and `rw_mix` keeps only their *start* pages apart: the other
    /// pages of a multi-page write land anywhere, reads among them (msr_cut_thpt's 64 KiB
    /// writes made 7-10 % of a stand-in's reads read written pages, against 0 in the trace).
    /// A request that would run past its half starts earlier, so it ends at the half's end.
    pub apart: bool,
    /// Size of the hot set, GiB (0 = none): a share `hot_share` of the drawn requests fall in
    /// one contiguous range this large from the footprint's start (uniformly, each request
    /// aligned to its size), the others are drawn as without it (uniform or Zipf over the
    /// footprint). A hot set below the write buffers with cold writes over the drive is
    /// shadowgc.txt Fig. 1(a)'s shape: the written footprint grows, then levels.
    pub hot_gib: f64,
    /// Share of drawn pages that fall in the hot set.
    pub hot_share: f64,
    /// Recency: the hot set moves this many times its own size over the stream (0 = fixed),
    /// so recently written pages are the hot ones and the footprint keeps growing.
    pub hot_drift: f64,
    /// Keys of reads alone.
    pub read: OpSpec,
    /// Keys of writes alone.
    pub write: OpSpec,
    /// Probability that a read re-reads the start page of a recent read, `d` reads back with
    /// `d` log-normal of median `reread_dist` and shape `dist_sigma` (at most 65,536 back).
    pub reread: f64,
    /// Median distance of a re-read, in read requests back.
    pub reread_dist: f64,
    /// Share of the re-reads that start on the *last* page of the read they follow rather
    /// than on its start page: a read starting inside an earlier read's extent, as a stream
    /// whose stride falls short of its size picks up where it left off (financial1: 63.8 % of
    /// its reads, each page read about once more, not many times over).
    pub reread_inside: f64,
    /// Re-reads placed in time (0 = not: by `reread_dist`): `reread` is then the re-reads'
    /// share of the reads, and each first read is followed by a run of re-reads of its start
    /// page, each a gap g after the one before (log-normal, median this many µs, shape
    /// `reread_gap_sigma`) and each a read of its own. The read process brings only the first
    /// reads (a share `1 − reread` of the reads, less the riders), so `write_ratio` and the rate
    /// keep their meaning; re-reads come as soon after their first read as the trace's, which
    /// decides whether a scheme has a copy by then.
    pub reread_gap_us: f64,
    /// Shape (σ of the logarithm) of the re-read gap law.
    pub reread_gap_sigma: f64,
    /// With re-reads placed in time and a read envelope: how the re-reads are shared among
    /// its slices (each slice's first reads take that slice's share), so re-reads crowd where
    /// the workload's did rather than spread over every first read.
    pub reread_envelope: Option<Envelope>,
    /// Probability that a read goes to the start page of a recent write, `d` writes back
    /// (log-normal of median `raw_dist`, shape `dist_sigma`).
    pub raw: f64,
    /// Probability that a write starts on the start page of the write before it (a page
    /// written again at once, as a log or a metadata block is: every copy on one die).
    pub rewrite: f64,
    /// Gamma shape of the law of a run of writes to one page (`batch_shape`'s law, of mean
    /// 1 / (1 − `rewrite`)): 1 = each write re-writes on its own with probability `rewrite`
    /// (geometric runs); below 1 a few long runs of one page among many single writes.
    pub rewrite_shape: f64,
    /// Relative weights of a fresh start page's residue mod 16 (`w0|…|w15`; `None`: no
    /// preference): popularity draws are laid out so their start pages follow them (module
    /// `residues`).
    pub start_residues: Option<Residues>,
    /// Median distance of a read after write, in write requests back.
    pub raw_dist: f64,
    /// Shape (σ of the logarithm) of both distance laws.
    pub dist_sigma: f64,
    /// Probability that a write request carries shared content (a duplicate once its content
    /// has been written); 0 = writes carry no content fingerprint at all.
    pub dedup: f64,
    /// Zipf exponent over the pool of shared contents: how skewed reference counts are.
    pub dup_zipf: f64,
    /// Shared contents in the pool, as a fraction of the footprint's 4 KiB pages.
    pub dup_pool: f64,
    /// Probability that a read goes to where a recent write of shared content went (uniform
    /// over the last 65,536 such writes, so contents with more references get more reads, as
    /// deduphr.txt Fig. 4 observes); the other reads follow the address distribution.
    pub dup_reads: f64,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            requests: 100_000,
            write_ratio: 0.5,
            size_kib: vec![4],
            size_weights: Vec::new(),
            arrivals: Arrivals::Exponential(100.0),
            burst: None,
            envelope: None,
            batch: 1.0,
            batch_us: 0.0,
            batch_shape: 1.0,
            cobatch: 0.0,
            cobatch_raw: 0.0,
            rider_envelope: None,
            footprint_gib: 1.0,
            zipf: 0.0,
            seq: 0.0,
            rw_mix: 1.0,
            apart: false,
            hot_gib: 0.0,
            hot_share: 0.0,
            hot_drift: 0.0,
            read: OpSpec::default(),
            write: OpSpec::default(),
            reread: 0.0,
            reread_dist: 16.0,
            reread_inside: 0.0,
            reread_gap_us: 0.0,
            reread_gap_sigma: 1.0,
            reread_envelope: None,
            raw: 0.0,
            rewrite: 0.0,
            rewrite_shape: 1.0,
            start_residues: None,
            raw_dist: 16.0,
            dist_sigma: 1.0,
            dedup: 0.0,
            dup_zipf: 1.0,
            dup_pool: 0.01,
            dup_reads: 0.0,
            seed: 1,
        }
    }
}

/// Seed offsets of the generators of the arrival processes (apart from the main one).
const SEED_BURST: u64 = 0x6275_7273_7400_0000;
const SEED_READS: u64 = 0x7265_6164_7300_0000;
const SEED_WRITES: u64 = 0x7772_6974_6500_0000;
const SEED_RIDERS: u64 = 0x7269_6465_7273_0000;
const SEED_FRESH: [u64; 2] = [0x6672_6573_6800_0000, 0x6672_6573_6801_0000];

impl SynthSpec {
    /// Whether re-reads are placed in time (`reread_gap_us`) rather than by distance in reads.
    fn rereads_in_time(&self) -> bool {
        self.reread > 0.0 && self.reread_gap_us > 0.0
    }

    /// Whether reads and writes arrive as two processes (a direction has its own arrivals).
    pub fn split(&self) -> bool {
        self.cobatch > 0.0
            || self.rereads_in_time()
            || [&self.read, &self.write].iter().any(|o| {
                o.arrivals.is_some()
                    || o.batch.is_some()
                    || o.batch_us.is_some()
                    || o.batch_shape.is_some()
                    || o.envelope.is_some()
            })
    }

    /// The process of all requests (without a split).
    fn process(&self) -> Process {
        self.burst.unwrap_or(match self.arrivals {
            Arrivals::Exponential(_) => Process::Poisson,
            Arrivals::Constant(_) => Process::Constant,
        })
    }

    /// The one process of a stream that is not split.
    fn whole_side(&self) -> SideSpec {
        SideSpec {
            process: self.process(),
            batch: (self.batch, self.batch_shape),
            batch_us: self.batch_us,
            share: 1.0,
        }
    }

    /// The arrival processes with the key prefix of each: `read_` and `write_` of a split
    /// stream, or the whole stream's (no prefix).
    fn sides(&self) -> Vec<(&'static str, SideSpec)> {
        if self.split() {
            let [read, write] = self.split_sides();
            vec![("read_", read), ("write_", write)]
        } else {
            vec![("", self.whole_side())]
        }
    }

    /// Each arrival process with its key prefix (`read_`, `write_`, or none for the whole
    /// stream), mean batch and share of the requests.
    pub fn processes(&self) -> Vec<(&'static str, Process, f64, f64)> {
        self.sides()
            .into_iter()
            .map(|(k, s)| (k, s.process, s.batch.0, s.share))
            .collect()
    }

    /// The re-reads placed in time to share out: a share `reread` of the reads, among the
    /// `total` first reads the read process brings (none without re-reads in time or first
    /// reads); with a read envelope per slice of it, by `reread_envelope` (a slice without
    /// first reads hands its re-reads to the one before that has some, else after).
    fn chains(&self, total: u64) -> Chains {
        let n = self.requests as f64;
        let left = if self.rereads_in_time() && total > 0 {
            (n * (1.0 - self.write_ratio) * self.reread).round() as u64
        } else {
            0
        };
        let placed = self.read.envelope.as_ref().or(self.envelope.as_ref());
        let (firsts, mut lefts) = match (placed, &self.reread_envelope) {
            (Some(e), Some(r)) => (apportion(&e.weights, total), apportion(&r.weights, left)),
            _ => (vec![total], vec![left]),
        };
        for k in 0..lefts.len() {
            if firsts[k] == 0 && lefts[k] > 0 {
                let to = (0..k)
                    .rev()
                    .chain(k + 1..firsts.len())
                    .find(|&j| firsts[j] > 0)
                    .expect("some slice has first reads");
                lefts[to] += std::mem::take(&mut lefts[k]);
            }
        }
        Chains {
            exact: placed.is_some(),
            firsts,
            left: lefts,
            mean: (left > 0)
                .then(|| Poisson::new(left as f64 / total as f64).expect("a positive mean")),
        }
    }

    /// The two processes of a split stream, reads then writes. Co-batched reads move from the
    /// read process to the write process's batches; re-reads placed in time arrive on their
    /// own (their share of the reads is the rest).
    fn split_sides(&self) -> [SideSpec; 2] {
        let (w, c) = (self.write_ratio, self.cobatch);
        let timed = if self.rereads_in_time() {
            self.reread
        } else {
            0.0
        };
        let of = |op: &OpSpec, share: f64| SideSpec {
            process: op.arrivals.unwrap_or(self.process()),
            batch: (
                op.batch.unwrap_or(self.batch),
                op.batch_shape.unwrap_or(self.batch_shape),
            ),
            batch_us: op.batch_us.unwrap_or(self.batch_us),
            share,
        };
        [
            of(&self.read, (1.0 - w) * (1.0 - c - timed).max(0.0)),
            of(&self.write, w + c * (1.0 - w)),
        ]
    }

    /// The sizes of both directions (`size_kib` with its weights).
    fn sizes(&self) -> Sizes {
        Sizes {
            kib: self.size_kib.clone(),
            weights: self.size_weights.clone(),
        }
    }

    /// Sizes of direction `op` (0 reads, 1 writes).
    fn op_sizes(&self, op: usize) -> Sizes {
        let o = if op == 0 { &self.read } else { &self.write };
        o.sizes.clone().unwrap_or_else(|| self.sizes())
    }

    /// Where the footprint's pages are laid out: one residue law over the whole footprint,
    /// one per half with `apart` (reads' half first), or none.
    fn placement(&self, pages: u64) -> Option<residues::Placement> {
        let (r, w) = (&self.read.start_residues, &self.write.start_residues);
        if r.is_none() && w.is_none() {
            return self
                .start_residues
                .as_ref()
                .map(|l| residues::Placement::One(l.layout()));
        }
        Some(residues::Placement::Halves {
            half: (pages / 2).max(1),
            read: r.as_ref().map(Residues::layout),
            write: w.as_ref().map(Residues::layout),
        })
    }

    /// The request stream.
    ///
    /// # Errors
    /// The message of [`SynthSpec::validate`].
    pub fn generate(&self) -> Result<Synth, String> {
        self.validate()?;
        let pages = ((self.footprint_gib * 262_144.0) as u64).max(1);
        let layout = self.placement(pages);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let a = loop {
            let a = rng.random_range(1..pages.max(2)) | 1;
            if pages < 3 || gcd(a, pages) == 1 {
                break a;
            }
        };
        let pool = ((pages as f64 * self.dup_pool) as u64).max(1);
        let gap = self.mean_gap_us();
        let total_us = gap * self.requests as f64;
        let [read, write] = self.split_sides();
        // Reads a split stream's read process brings (with envelopes, exactly so many).
        let quota_reads = (self.requests as f64 * read.share).round() as u64;
        let chains = self.chains(quota_reads);
        let clock = if self.split() {
            let side = |p: &SideSpec, seed: u64| {
                (p.share > 0.0).then(|| {
                    Side::new(
                        p.process,
                        gap / p.share,
                        total_us,
                        p.batch,
                        p.batch_us,
                        self.seed ^ seed,
                    )
                })
            };
            // With envelopes, each process places exactly its share of the requests in each
            // slice: reads their rounded share, writes the rest but the re-reads placed in
            // time.
            let whole = self.envelope.as_ref();
            let envelope = |o: &'_ OpSpec| o.envelope.clone().or_else(|| whole.cloned());
            let mut writes = side(&write, SEED_WRITES).map(|mut s| {
                if let Some(e) = envelope(&self.write) {
                    let placed = self
                        .requests
                        .saturating_sub(quota_reads + chains.left.iter().sum::<u64>());
                    match &self.rider_envelope {
                        // Each slice's writes, and its riders on top.
                        Some(r) => {
                            let writes = ((self.requests as f64 * self.write_ratio).round() as u64)
                                .min(placed);
                            let riders = apportion(&r.weights, placed - writes);
                            let counts = apportion(&e.weights, writes)
                                .iter()
                                .zip(&riders)
                                .map(|(w, r)| w + r)
                                .collect();
                            s.place_counts(counts, Some(riders), total_us, self.seed ^ SEED_RIDERS);
                        }
                        None => s.place(&e, placed, total_us, self.seed ^ SEED_RIDERS),
                    }
                }
                s
            });
            let reads = side(&read, SEED_READS).map(|mut s| {
                if let Some(e) = envelope(&self.read) {
                    s.place(&e, quota_reads, total_us, self.seed ^ SEED_RIDERS);
                }
                s
            });
            // The reads riding in write batches: their share of the write process.
            let riders = self.cobatch * (1.0 - self.write_ratio);
            if let Some(s) = writes.as_mut().filter(|_| riders > 0.0) {
                s.reads = riders / write.share;
            }
            Clock::Split(Box::new([reads, writes]))
        } else if self.burst.is_some()
            || self.batch > 1.0
            || self.batch_us > 0.0
            || self.envelope.is_some()
        {
            let p = self.whole_side();
            let mut side = Side::new(
                p.process,
                gap,
                total_us,
                p.batch,
                p.batch_us,
                self.seed ^ SEED_BURST,
            );
            if let Some(e) = &self.envelope {
                side.place(e, self.requests, total_us, self.seed ^ SEED_RIDERS);
            }
            Clock::Burst(Box::new(side))
        } else {
            Clock::Legacy(match self.arrivals {
                Arrivals::Exponential(m) if m > 0.0 => {
                    Some(Exp::new(1.0 / m).expect("positive rate"))
                }
                _ => None,
            })
        };
        let halves = self.apart.then(|| {
            let half = (pages / 2).max(1);
            (half, coprime(a, half))
        });
        let dirs = [0, 1].map(|op| {
            let o = if op == 0 { &self.read } else { &self.write };
            let domain = o
                .footprint_gib
                .map_or(pages, |f| ((f * 262_144.0) as u64).clamp(1, pages));
            let s = o.zipf.unwrap_or(self.zipf);
            let sizes = self.op_sizes(op);
            let (hot_gib, hot_share, drift) = self.hot_of(o);
            let hot_pages = (hot_gib * 262_144.0) as u64;
            Direction {
                hot: (hot_pages > 0 && hot_share > 0.0).then(|| Hot {
                    pages: hot_pages.min(domain),
                    share: hot_share,
                    drift,
                }),
                domain,
                fresh: o.fresh.then(|| {
                    // Units of the direction's largest request in the space it scatters over.
                    let unit = u64::from(sizes.kib.iter().copied().max().unwrap_or(4)).div_ceil(4);
                    let units = (halves.map_or(pages, |h| h.0) / unit).max(1);
                    // As many new requests as the footprint holds at the mean size.
                    let requests = (domain as f64 / sizes.mean_pages()).round() as u64;
                    FreshDraw {
                        order: Fresh::new(requests.clamp(1, units), self.seed ^ SEED_FRESH[op]),
                        unit,
                        units,
                        mult: coprime(a, units),
                    }
                }),
                zipf: (s > 0.0).then(|| Zipf::new(domain as f64, s).expect("validated exponent")),
                weighted: (!sizes.weights.is_empty())
                    .then(|| WeightedIndex::new(&sizes.weights).expect("validated weights")),
                sizes: sizes.kib,
                seq: o.seq.unwrap_or(self.seq),
                next_page: 0,
                started: false,
                last_start: 0,
                recent: Ring::default(),
                ends: Ring::default(),
            }
        });
        let distance = |median: f64| {
            LogNormal::new(median.ln(), self.dist_sigma).expect("validated distance law")
        };
        Ok(Synth {
            pool,
            pool_zipf: (self.dedup > 0.0 && self.dup_zipf > 0.0)
                .then(|| Zipf::new(pool as f64, self.dup_zipf).expect("validated exponent")),
            unique_contents: 0,
            shared_writes: Ring::default(),
            clock,
            dirs,
            reread_law: if self.rereads_in_time() {
                LogNormal::new(self.reread_gap_us.ln(), self.reread_gap_sigma)
                    .expect("validated gap law")
            } else {
                distance(self.reread_dist)
            },
            due: BinaryHeap::new(),
            chains,
            span_us: total_us,
            reread_slice_us: self
                .reread_envelope
                .as_ref()
                .map(|e| total_us / e.weights.len() as f64),
            raw_law: distance(self.raw_dist),
            rewrite_law: (self.rewrite > 0.0 && self.rewrite_shape != 1.0)
                .then(|| BatchLaw::new(1.0 / (1.0 - self.rewrite), self.rewrite_shape)),
            spec: self.clone(),
            pages,
            span: layout.as_ref().map_or(pages, |l| l.span(pages)),
            layout,
            scramble: a,
            halves,
            rng,
            emitted: 0,
            now_us: 0.0,
            t0_us: None,
            next_page: 0,
        })
    }
}

/// What one arrival process of a spec draws: its process, mean batch, mean gap within a batch
/// and share of the request rate.
struct SideSpec {
    process: Process,
    /// Mean batch and the gamma shape of its law.
    batch: (f64, f64),
    batch_us: f64,
    share: f64,
}

/// Where arrival times come from.
enum Clock {
    /// Today's Poisson (`Some`) or constant gaps from the main generator.
    Legacy(Option<Exp<f64>>),
    /// One bursty process for all requests; directions drawn as before.
    Burst(Box<Side>),
    /// Reads and writes as two processes (`None`: that direction has no requests).
    Split(Box<[Option<Side>; 2]>),
}

/// A direction's hot set: `pages` consecutive pages from the footprint's start that take a
/// `share` of its draws and move `drift` times their size over the stream.
struct Hot {
    pages: u64,
    share: f64,
    drift: f64,
}

/// What the generator keeps for one direction.
struct Direction {
    domain: u64,
    fresh: Option<FreshDraw>,
    hot: Option<Hot>,
    zipf: Option<Zipf<f64>>,
    sizes: Vec<u32>,
    weighted: Option<WeightedIndex<f64>>,
    seq: f64,
    /// Split streams: where this direction's last request ended.
    next_page: u64,
    started: bool,
    /// Start page of this direction's last request.
    last_start: u64,
    /// Start pages of this direction's recent requests, kept only when re-reads or reads
    /// after writes are asked for.
    recent: Ring,
    /// Last pages of the same requests, kept only for re-reads inside (`reread_inside`).
    ends: Ring,
}

/// A direction's fresh draws (`fresh`): a random order of its footprint's units (its largest
/// request each), scattered over the `units` of the space it draws in by `mult`.
struct FreshDraw {
    order: Fresh,
    unit: u64,
    units: u64,
    mult: u64,
}

/// An odd multiplier near `a` with no factor in common with `n`: multiplying by it permutes
/// `0..n`.
fn coprime(a: u64, n: u64) -> u64 {
    let mut b = (a % n.max(1)) | 1;
    while n > 2 && gcd(b, n) != 1 {
        b += 2;
    }
    b
}

/// The last [`RING`] start pages recorded, the oldest overwritten first.
#[derive(Default)]
struct Ring {
    slots: Vec<u64>,
    seen: u64,
}

/// Draws of a re-read's gap before it is cut to what is left of the span.
const GAP_DRAWS: usize = 8;

/// Re-reads placed in time that may wait at once (24 B each).
const MAX_PENDING: usize = 1 << 20;

/// The re-reads placed in time still to share out among the first reads still to come.
struct Chains {
    /// The processes are placed: both counts are exact.
    exact: bool,
    /// First reads still to come, per slice of the read envelope with `reread_envelope`
    /// (else one count for the whole stream).
    firsts: Vec<u64>,
    /// Re-reads still to share out, as `firsts`.
    left: Vec<u64>,
    /// Re-reads per first read, without placement.
    mean: Option<Poisson<f64>>,
}

/// Start pages a ring keeps: how far back a re-read, a read after write or a read of shared
/// content can reach.
const RING: usize = 65_536;

impl Ring {
    fn push(&mut self, page: u64) {
        if self.slots.len() < RING {
            self.slots.push(page);
        } else {
            self.slots[(self.seen % RING as u64) as usize] = page;
        }
        self.seen += 1;
    }

    /// The page recorded `back` records ago (1 = the last), clipped to what the ring holds.
    fn back(&self, back: u64) -> u64 {
        let back = back.clamp(1, self.slots.len() as u64);
        self.slots[((self.seen - back) % RING as u64) as usize]
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The generator: an iterator of requests.
pub struct Synth {
    spec: SynthSpec,
    pages: u64,
    /// Where popularity draws land with `start_residues` or `read_`/`write_start_residues`
    /// (`None`: page k is page k).
    layout: Option<residues::Placement>,
    /// The pages addresses span: the footprint, laid out by `layout`.
    span: u64,
    pool: u64,
    pool_zipf: Option<Zipf<f64>>,
    unique_contents: u64,
    /// Start pages of recent shared-content writes.
    shared_writes: Ring,
    scramble: u64,
    /// With `apart`: the pages of a half and the multiplier that scatters ranks within it.
    halves: Option<(u64, u64)>,
    clock: Clock,
    /// Reads, writes.
    dirs: [Direction; 2],
    reread_law: LogNormal<f64>,
    raw_law: LogNormal<f64>,
    /// Runs of writes to one page, with `rewrite_shape` ≠ 1 (`None`: each write re-writes on
    /// its own with probability `rewrite`).
    rewrite_law: Option<BatchLaw>,
    /// Re-reads scheduled in time (`reread_gap_us`): (due in ns, page, re-reads of the page
    /// still to follow it), at most [`MAX_PENDING`] of them.
    due: BinaryHeap<Reverse<(u64, u64, u64)>>,
    /// How the re-reads placed in time are shared out among the first reads.
    chains: Chains,
    /// The stream's span (mean gap × requests), µs.
    span_us: f64,
    /// With `reread_envelope`: the width of its slices, µs (re-reads stay in their slice).
    reread_slice_us: Option<f64>,
    rng: ChaCha8Rng,
    emitted: u64,
    now_us: f64,
    /// First arrival of a bursty or split clock (times count from it).
    t0_us: Option<f64>,
    next_page: u64,
}

impl Synth {
    /// Writes the whole stream as MSR Cambridge CSV ([`crate::workload::write_msr_csv`]).
    ///
    /// # Errors
    /// I/O errors of `out`.
    pub fn write_msr_csv(self, out: &mut dyn Write) -> std::io::Result<u64> {
        crate::workload::write_msr_csv(self, out)
    }

    /// Writes the whole stream in FIU IODedup format (`ts_ns pid process lba sectors R|W major
    /// minor md5`), which keeps each write's content hash; reads get a zero hash.
    ///
    /// # Errors
    /// I/O errors of `out`.
    pub fn write_fiu(self, out: &mut dyn Write) -> std::io::Result<u64> {
        let mut n = 0;
        for r in self {
            let r = r.expect("the generator does not fail");
            let op = if r.op == IoOp::Read { "R" } else { "W" };
            writeln!(
                out,
                "{} 0 synth {} {} {op} 8 0 {:032x}",
                r.time_ns,
                r.offset_bytes / 512,
                r.size_bytes / 512,
                r.content.unwrap_or(0)
            )?;
            n += 1;
        }
        Ok(n)
    }
}

impl Iterator for Synth {
    type Item = Result<Request, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.emitted >= self.spec.requests {
            return None;
        }
        let split = matches!(self.clock, Clock::Split(_));
        let mut rider = false;
        let mut reread = None;
        let mut slice = None;
        let op = match &mut self.clock {
            Clock::Legacy(exp) => {
                if self.emitted > 0 {
                    self.now_us += match (self.spec.arrivals, exp) {
                        (_, Some(e)) => e.sample(&mut self.rng),
                        (Arrivals::Constant(g) | Arrivals::Exponential(g), None) => g,
                    };
                }
                None
            }
            Clock::Burst(side) => {
                let t = side.take();
                self.now_us = t - *self.t0_us.get_or_insert(t);
                None
            }
            Clock::Split(sides) => {
                let r = sides[0].as_mut().map(Side::peek);
                let w = sides[1].as_mut().map(Side::peek);
                let next = r.into_iter().chain(w).fold(f64::INFINITY, f64::min);
                // A re-read placed in time arrives on its own when it is due first, or once
                // placed processes have placed all theirs; with neither left the stream
                // ends (only short if more than `MAX_PENDING` re-reads were waiting at once).
                let t0 = self.t0_us.unwrap_or(0.0);
                match self.due.peek() {
                    None if next.is_infinite() => {
                        self.emitted = self.spec.requests;
                        return None;
                    }
                    Some(&Reverse((due_ns, page, more)))
                        if due_ns as f64 / 1e3 + t0 <= next || next.is_infinite() =>
                    {
                        self.due.pop();
                        self.now_us = due_ns as f64 / 1e3;
                        reread = Some((page, more));
                        Some(0)
                    }
                    _ => {
                        let op = match (r, w) {
                            (Some(r), Some(w)) if w < r => 1,
                            (Some(_), _) => 0,
                            _ => 1,
                        };
                        let side = sides[op].as_mut().expect("a direction with requests");
                        slice = side.slice();
                        let t = side.take();
                        self.now_us = t - *self.t0_us.get_or_insert(t);
                        rider = side.rider();
                        Some(if rider { 0 } else { op })
                    }
                }
            }
        };
        self.emitted += 1;
        let op = op.unwrap_or_else(|| usize::from(self.rng.random_bool(self.spec.write_ratio)));
        let io = if op == 1 { IoOp::Write } else { IoOp::Read };
        let dir = &self.dirs[op];
        let kib = match &dir.weighted {
            Some(w) => dir.sizes[w.sample(&mut self.rng)],
            None => dir.sizes[self.rng.random_range(0..dir.sizes.len())],
        };
        let size_pages = u64::from(kib).div_ceil(4);
        let continues = if split { dir.started } else { self.emitted > 1 };
        let previous_end = if split { dir.next_page } else { self.next_page };
        let read_back = if rider && self.spec.cobatch_raw > 0.0 {
            self.read_back()
        } else {
            None
        };
        let seq = self.dirs[op].seq;
        let start = if let Some(page) = read_back.or(reread.map(|r| r.0)) {
            page
        } else if io == IoOp::Write && self.spec.rewrite > 0.0 && self.rewrites() {
            self.dirs[1].last_start
        } else if continues && self.rng.random_bool(seq) {
            previous_end
        } else if let Some(page) = self.local(io) {
            page
        } else if io == IoOp::Read
            && self.spec.dup_reads > 0.0
            && !self.shared_writes.slots.is_empty()
            && self.rng.random_bool(self.spec.dup_reads)
        {
            self.shared_writes.slots[self.rng.random_range(0..self.shared_writes.slots.len())]
        } else {
            let dir = &mut self.dirs[op];
            let hot = dir.hot.as_ref().filter(|h| self.rng.random_bool(h.share));
            if let Some(h) = hot {
                // A contiguous range from the footprint's start, moved on by the drift, and
                // drawn in whole requests aligned to their size (no write straddles a page).
                let progress = (self.emitted - 1) as f64 / self.spec.requests as f64;
                let slots = (h.pages / size_pages).max(1);
                let base = (h.drift * h.pages as f64 * progress) as u64 / size_pages;
                let slot =
                    (base + self.rng.random_range(0..slots)) % (self.pages / size_pages).max(1);
                slot * size_pages
            } else {
                let rank = match (&mut dir.fresh, &dir.zipf) {
                    (Some(f), _) => f.order.next_page(),
                    (None, Some(z)) => z.sample(&mut self.rng) as u64 - 1,
                    (None, None) => self.rng.random_range(0..dir.domain),
                };
                // Writes outside the shared share of the mix use a disjoint hot set: their
                // ranks land half the footprint away from where the same ranks of reads land.
                let shift = if io == IoOp::Write
                    && self.spec.rw_mix < 1.0
                    && !self.rng.random_bool(self.spec.rw_mix)
                {
                    self.pages / 2
                } else {
                    0
                };
                // Scatter ranks over the footprint so hot pages are not neighbours (with
                // `apart`, over their half of it; fresh ones in whole units of the
                // direction's largest request, so no two share a page).
                let k = match (&dir.fresh, self.halves) {
                    (Some(f), halves) => {
                        // Anywhere in its unit, so smaller requests start on every residue.
                        let offset = self.rng.random_range(0..=f.unit.saturating_sub(size_pages));
                        let k = f.unit
                            * (u128::from(rank) * u128::from(f.mult) % u128::from(f.units)) as u64
                            + offset;
                        match halves {
                            Some((half, _)) => k + half.min(shift),
                            None => (k + shift) % self.pages,
                        }
                    }
                    (None, Some((half, a))) => {
                        // Whole requests inside the half: none runs into the other.
                        let k = (u128::from(rank) * u128::from(a) % u128::from(half)) as u64;
                        k.min(half.saturating_sub(size_pages)) + half.min(shift)
                    }
                    (None, None) => {
                        ((u128::from(rank) * u128::from(self.scramble) + u128::from(shift))
                            % u128::from(self.pages)) as u64
                    }
                };
                self.layout.as_ref().map_or(k, |l| l.page(k))
            }
        };
        let start = if start + size_pages > self.span {
            0
        } else {
            start
        };
        self.next_page = start + size_pages;
        let dir = &mut self.dirs[op];
        dir.next_page = start + size_pages;
        dir.started = true;
        dir.last_start = start;
        if (op == 0 && self.spec.reread > 0.0 && !self.spec.rereads_in_time())
            || (op == 1 && (self.spec.raw > 0.0 || self.spec.cobatch_raw > 0.0))
        {
            dir.recent.push(start);
            if op == 0 && self.spec.reread_inside > 0.0 {
                dir.ends.push(start + size_pages - 1);
            }
        }
        if io == IoOp::Read && self.spec.rereads_in_time() {
            let page = if self.inside() {
                start + size_pages - 1
            } else {
                start
            };
            match reread {
                Some((_, more)) => self.schedule_reread(page, more),
                None if !rider => {
                    let chain = self.chain(slice);
                    self.schedule_reread(page, chain);
                }
                None => {}
            }
        }
        let content = (io == IoOp::Write && self.spec.dedup > 0.0).then(|| self.content());
        if content.is_some_and(|c| c >> 127 == 1) {
            self.shared_writes.push(start);
        }
        Some(Ok(Request {
            time_ns: (self.now_us * 1e3).round() as u64,
            offset_bytes: start * 4096,
            size_bytes: u64::from(kib) * 1024,
            op: io,
            device: 0,
            content,
            flow: 0,
        }))
    }
}

impl Synth {
    /// Whether the write being drawn re-writes the start page of the write before it; a write
    /// that does not starts a new run of its page (drawn by `rewrite_law`).
    fn rewrites(&mut self) -> bool {
        let again = self.dirs[1].started
            && match self.rewrite_law.as_mut() {
                Some(law) => law.goes_on(&mut self.rng),
                None => self.rng.random_bool(self.spec.rewrite),
            };
        if !again {
            if let Some(law) = self.rewrite_law.as_mut() {
                law.start(&mut self.rng);
            }
        }
        again
    }

    /// A rider's read of the latest write's start page, drawn with probability `cobatch_raw`
    /// (`None`: not drawn, or nothing written yet).
    #[cold]
    fn read_back(&mut self) -> Option<u64> {
        let written = &self.dirs[1].recent;
        (!written.slots.is_empty() && self.rng.random_bool(self.spec.cobatch_raw))
            .then(|| written.back(1))
    }

    /// A read's page from temporal locality: a re-read of a recent read's start page or the
    /// start page of a recent write (`None`: neither drawn, or nothing recent yet). Draws
    /// nothing unless `reread` or `raw` is set.
    fn local(&mut self, io: IoOp) -> Option<u64> {
        let reread = if self.spec.rereads_in_time() {
            0.0
        } else {
            self.spec.reread
        };
        let raw = self.spec.raw;
        if io != IoOp::Read || reread + raw <= 0.0 {
            return None;
        }
        let u: f64 = self.rng.random();
        let d = if u < reread {
            0
        } else if u < reread + raw {
            1
        } else {
            return None;
        };
        if self.dirs[d].recent.slots.is_empty() {
            return None;
        }
        let law = if d == 0 {
            &self.reread_law
        } else {
            &self.raw_law
        };
        let back = law.sample(&mut self.rng).round().min(1e12) as u64;
        // Fresh reads repeat only at the distances drawn: one reaching back past the first
        // request recorded is a new read, not another read of the oldest page.
        if self.dirs[0].fresh.is_some() && back > self.dirs[d].recent.seen {
            return None;
        }
        let ring = if d == 0 && self.inside() {
            &self.dirs[0].ends
        } else {
            &self.dirs[d].recent
        };
        Some(ring.back(back))
    }

    /// Whether a re-read starts on the last page of the read it follows (`reread_inside`;
    /// nothing drawn unless set).
    fn inside(&mut self) -> bool {
        self.spec.reread_inside > 0.0 && self.rng.random_bool(self.spec.reread_inside)
    }
}

impl Synth {
    /// How many re-reads follow the first read just made, one after another: with placed
    /// processes, a share of the re-reads still to come drawn so that the first reads still
    /// to come take the rest (the last takes all), so every re-read comes; otherwise
    /// Poisson of the mean re-reads per first read.
    fn chain(&mut self, slice: Option<usize>) -> u64 {
        let c = &mut self.chains;
        if !c.exact {
            return c
                .mean
                .as_ref()
                .map_or(0, |p| p.sample(&mut self.rng) as u64);
        }
        let k = slice.unwrap_or(0).min(c.firsts.len() - 1);
        let n = if c.firsts[k] <= 1 {
            c.left[k]
        } else {
            Binomial::new(c.left[k], 1.0 / c.firsts[k] as f64)
                .expect("a probability")
                .sample(&mut self.rng)
        };
        c.firsts[k] = c.firsts[k].saturating_sub(1);
        c.left[k] -= n.min(c.left[k]);
        n
    }

    /// Schedules the first of `n` re-reads of `page` in a row, a drawn gap from now, the
    /// others following it (none while [`MAX_PENDING`] re-reads are waiting). The gap is
    /// drawn within what is left of the stream's span, as a trace shows only the re-reads
    /// that came before it ended (redrawn up to [`GAP_DRAWS`] times, then the rest of the span)
    /// — with `reread_envelope`, within what is left of the slice (then uniform within it).
    fn schedule_reread(&mut self, page: u64, n: u64) {
        if n > 0 && self.due.len() < MAX_PENDING {
            // With `reread_envelope` a re-read stays in the slice its first read is in (each
            // slice keeps exactly its count; re-reads placed at the slice's end would go to
            // the next, so the last resort is uniform within it).
            let slice_end = self.reread_slice_us.map(|w| {
                let at = self.now_us + self.t0_us.unwrap_or(0.0);
                (((at / w).floor() + 1.0) * w).min(self.span_us) - self.t0_us.unwrap_or(0.0)
            });
            let left_us = (slice_end.unwrap_or(self.span_us) - self.now_us).max(0.0);
            let gap_us = (0..GAP_DRAWS)
                .map(|_| self.reread_law.sample(&mut self.rng))
                .find(|g| *g <= left_us);
            let gap_us = match (gap_us, slice_end) {
                (Some(g), _) => g,
                (None, Some(_)) => left_us * self.rng.random::<f64>(),
                (None, None) => left_us,
            };
            let at = ((self.now_us + gap_us) * 1e3).round() as u64;
            self.due.push(Reverse((at, page, n - 1)));
        }
    }
}

impl Synth {
    /// Content of a write request: a member of the shared pool (rank drawn Zipf) with
    /// probability `dedup`, else new unique content. Page k of a request gets the fingerprint
    /// derived from its content and k (`dedup::page_fingerprint`), so two writes of one pool
    /// member share their pages' contents page by page.
    fn content(&mut self) -> u128 {
        const SHARED: u128 = 1 << 127;
        if self.rng.random_bool(self.spec.dedup) {
            let rank = match &self.pool_zipf {
                Some(z) => z.sample(&mut self.rng) as u64 - 1,
                None => self.rng.random_range(0..self.pool),
            };
            SHARED | (u128::from(self.spec.seed) << 64) | u128::from(rank)
        } else {
            self.unique_contents += 1;
            (u128::from(self.spec.seed) << 64) | u128::from(self.unique_contents)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_ratios_hold() {
        let spec: SynthSpec = "requests=20000,write_ratio=0.6,size_kib=4|8|16,iat_us=10,footprint_gib=1,zipf=0.9,seed=7".parse().unwrap();
        let a: Vec<_> = spec.generate().unwrap().map(Result::unwrap).collect();
        let b: Vec<_> = spec.generate().unwrap().map(Result::unwrap).collect();
        assert_eq!(a, b);
        let writes = a.iter().filter(|r| r.op == IoOp::Write).count() as f64 / a.len() as f64;
        assert!((writes - 0.6).abs() < 0.02, "{writes}");
        let mean_gap = a.last().unwrap().time_ns as f64 / (a.len() - 1) as f64 / 1e3;
        assert!((mean_gap - 10.0).abs() < 0.5, "{mean_gap}");
        assert!(a.iter().all(|r| r.offset_bytes + r.size_bytes <= 1 << 30));
    }

    #[test]
    fn rw_mix_separates_the_hot_sets_of_reads_and_writes() {
        let hot = |mix: f64| {
            let spec: SynthSpec = format!(
                "requests=40000,write_ratio=0.5,footprint_gib=0.1,zipf=1.1,rw_mix={mix},seed=3"
            )
            .parse()
            .unwrap();
            let (mut reads, mut writes) = (
                std::collections::HashMap::new(),
                std::collections::HashMap::new(),
            );
            for r in spec.generate().unwrap().map(Result::unwrap) {
                let m = if r.op == IoOp::Read {
                    &mut reads
                } else {
                    &mut writes
                };
                *m.entry(r.offset_bytes).or_insert(0u32) += 1;
            }
            let top = |m: &std::collections::HashMap<u64, u32>| {
                let mut v: Vec<_> = m.iter().map(|(k, c)| (*c, *k)).collect();
                v.sort_unstable_by(|a, b| b.cmp(a));
                v.into_iter()
                    .take(50)
                    .map(|(_, k)| k)
                    .collect::<std::collections::HashSet<_>>()
            };
            top(&reads).intersection(&top(&writes)).count()
        };
        assert!(hot(1.0) > 35, "one distribution: the hot pages are shared");
        assert!(hot(0.0) < 5, "disjoint hot sets");
    }

    /// `read_fresh` draws each page of the reads' footprint once before any again (uniform
    /// draws with replacement repeat some by chance): 20,000 reads over 16,384 pages repeat
    /// none in their first 16,384 and all of them in the rest; the re-reads asked for come
    /// only at the distance asked (500 reads), and one reaching back past the first read is a
    /// new read, not another read of the oldest page.
    #[test]
    fn fresh_reads_repeat_only_what_is_asked() {
        let starts = |spec: &str| -> Vec<u64> {
            let spec: SynthSpec = spec.parse().unwrap();
            assert_eq!(spec.to_string().parse::<SynthSpec>().unwrap(), spec);
            spec.generate()
                .unwrap()
                .map(Result::unwrap)
                .filter(|r| r.op == IoOp::Read)
                .map(|r| r.offset_bytes / 4096)
                .collect()
        };
        let base = "requests=20000,write_ratio=0,footprint_gib=0.0625,seed=5";
        let repeats = |pages: &[u64]| {
            let mut seen = std::collections::HashSet::new();
            pages.iter().filter(|p| !seen.insert(**p)).count()
        };
        let uniform = starts(base);
        assert!(repeats(&uniform[..16_384]) > 4_000, "{}", repeats(&uniform));
        let fresh = starts(&format!("{base},read_fresh=1"));
        assert_eq!(repeats(&fresh[..16_384]), 0);
        assert_eq!(repeats(&fresh), 20_000 - 16_384);
        // Mixed sizes: each new read takes a unit of the largest (16 KiB), so none starts
        // inside an earlier one's pages (4,096 units in a pass).
        let mixed: SynthSpec = format!("{base},read_fresh=1,read_size_kib=4|16")
            .parse()
            .unwrap();
        let mut touched = std::collections::HashSet::new();
        let mut odd = 0;
        for (i, r) in mixed.generate().unwrap().take(4_096).enumerate() {
            let r = r.unwrap();
            let p = r.offset_bytes / 4096;
            assert!(
                !touched.contains(&p),
                "read {i} starts on a page read before"
            );
            touched.extend(p..p + r.size_bytes / 4096);
            odd += p % 2;
        }
        // 4 KiB reads start anywhere in their unit: about a quarter of all reads on odd pages.
        assert!((800..1_250).contains(&odd), "{odd}");
        // Re-reads at 500 reads back: none nearer, and those drawn before 500 reads exist
        // are new reads.
        let rereads = starts(&format!(
            "{base},read_fresh=1,reread=0.3,reread_dist=500,dist_sigma=0.0001"
        ));
        let mut last = std::collections::HashMap::new();
        let mut nearest = u64::MAX;
        for (i, p) in rereads.iter().enumerate() {
            if let Some(j) = last.insert(*p, i as u64) {
                nearest = nearest.min(i as u64 - j);
            }
        }
        assert_eq!(nearest, 500);
        assert_eq!(repeats(&rereads[..500]), 0);
        let share = repeats(&rereads) as f64 / rereads.len() as f64;
        assert!((share - 0.3).abs() < 0.02, "{share}");
    }

    /// `reread_inside` moves a re-read from the first page of the read it follows to its last
    /// (a stream picking up where it left off), and draws nothing unless set.
    #[test]
    fn inside_rereads_start_on_the_last_page_of_the_read_they_follow() {
        let base = "requests=20000,write_ratio=0,size_kib=12,footprint_gib=1,read_fresh=1,reread=0.6,reread_dist=1,dist_sigma=0.0001,seed=3";
        let steps = |spec: &str| {
            let spec: SynthSpec = spec.parse().unwrap();
            assert_eq!(spec.to_string().parse::<SynthSpec>().unwrap(), spec);
            let pages: Vec<u64> = spec
                .generate()
                .unwrap()
                .map(|r| r.unwrap().offset_bytes / 4096)
                .collect();
            let step = |k: u64| pages.windows(2).filter(|w| w[1] == w[0] + k).count();
            let p = crate::workload::profile::profile(spec.generate().unwrap()).unwrap();
            (step(0), step(2), p.reuse.reread_inside_pct)
        };
        let (same, onward, inside) = steps(base);
        assert!((11_500..12_500).contains(&same), "{same}");
        assert_eq!((onward, inside), (0, 0.0));
        let (same, onward, inside) = steps(&format!("{base},reread_inside=1"));
        assert!((11_500..12_500).contains(&onward), "{onward}");
        assert_eq!(same, 0);
        assert!((inside - 60.0).abs() < 2.5, "{inside}");
        // Half of them inside: half the steps of each kind.
        let (same, onward, _) = steps(&format!("{base},reread_inside=0.5"));
        assert!((5_600..6_400).contains(&same) && (5_600..6_400).contains(&onward));
        assert_eq!(
            "requests=10,reread_inside=0.5"
                .parse::<SynthSpec>()
                .map(|s| s.notes()),
            Ok(vec!["reread_inside has no effect: reread = 0".to_string()])
        );
        let err = format!("{base},reread_inside=1.5")
            .parse::<SynthSpec>()
            .unwrap_err();
        assert!(err.contains("reread_inside"), "{err}");
    }

    /// Without `apart`, `rw_mix=0` keeps only start pages apart: the other pages of 64 KiB
    /// writes land among the reads' pages. With it no read touches a written page.
    #[test]
    fn apart_keeps_multi_page_writes_off_the_reads_pages() {
        let read_written = |extra: &str| {
            let spec: SynthSpec = format!(
                "requests=20000,write_ratio=0.3,write_size_kib=64,read_size_kib=4,footprint_gib=0.2,read_footprint_gib=0.02,write_footprint_gib=0.1,rw_mix=0,seed=2{extra}"
            )
            .parse()
            .unwrap();
            let mut written = std::collections::HashSet::new();
            let mut hits = 0;
            for r in spec.generate().unwrap().map(Result::unwrap) {
                let first = r.offset_bytes / 4096;
                let pages = first..first + r.size_bytes.div_ceil(4096);
                if r.op == IoOp::Write {
                    written.extend(pages);
                } else if pages.clone().any(|p| written.contains(&p)) {
                    hits += 1;
                }
            }
            hits
        };
        assert!(read_written("") > 500, "{}", read_written(""));
        assert_eq!(read_written(",apart=1"), 0);
    }

    #[test]
    fn unknown_key_and_bad_values_are_named() {
        assert!("requets=5"
            .parse::<SynthSpec>()
            .unwrap_err()
            .contains("requets"));
        assert!("write_ratio=2"
            .parse::<SynthSpec>()
            .unwrap_err()
            .contains("write_ratio"));
        for (spec, key) in [
            ("reread=0.2,reread_gap_us=-1", "reread_gap_us"),
            (
                "reread=0.2,reread_gap_us=10,reread_gap_sigma=11",
                "reread_gap_sigma",
            ),
            (
                "write_ratio=0.5,cobatch=0.5,reread=0.5,reread_gap_us=10",
                "reread + cobatch",
            ),
            (
                "reread=0.2,reread_envelope=1|2",
                "reread_gap_us must be > 0",
            ),
            (
                "reread=0.2,reread_gap_us=10,reread_envelope=1|2",
                "read_envelope (or envelope) must be set",
            ),
            (
                "reread=0.2,reread_gap_us=10,read_envelope=1|2|3,reread_envelope=1|2",
                "reread_envelope has 2 slices, the read envelope 3",
            ),
            ("rider_envelope=1|2", "cobatch must be > 0"),
            (
                "write_ratio=0.5,cobatch=0.2,rider_envelope=1|2",
                "write_envelope (or envelope) must be set",
            ),
            (
                "write_ratio=0.5,cobatch=0.2,write_envelope=1|2|3,rider_envelope=1|2",
                "rider_envelope has 2 slices, the write envelope 3",
            ),
            (
                "write_ratio=0.5,cobatch=0.2,write_envelope=1|0|3,rider_envelope=1|2|0",
                "slice 2 has riders but the write envelope has no writes there",
            ),
            (
                "batch=4,batch_shape=0",
                "batch_shape = 0: must be in [0.01, 1e6]",
            ),
            ("batch=4,batch_shape=-1", "batch_shape = -1: must be in"),
            ("batch=4,batch_shape=nan", "batch_shape = NaN: must be in"),
            ("batch_shape=0.5", "batch must be > 1 (it is 1)"),
            (
                "write_ratio=0.5,write_batch_shape=0.5",
                "write_batch_shape = 0.5: shapes a law of batch sizes, so write_batch must be > 1",
            ),
            (
                "start_residues=1|2|3",
                "start_residues: 3 weights, it takes 16",
            ),
            (
                "start_residues=0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0",
                "start_residues: every weight is 0",
            ),
            (
                "start_residues=1|1|1|1|1|1|1|1|1|1|1|1|1|1|1|x",
                "start_residues: `x` is not a weight",
            ),
            ("read_fresh=2", "read_fresh = 2: expected 0 or 1"),
            ("apart=yes", "apart = yes: expected 0 or 1"),
            (
                "read_fresh=1,zipf=0.8",
                "read_fresh = 1 draws each new page once, which needs uniform popularity, but this direction's zipf is 0.8",
            ),
            (
                "write_ratio=0.5,write_fresh=1,hot_gib=0.1,hot_share=0.5",
                "write_fresh = 1 draws each new page once, which needs uniform popularity, but this direction has a hot set",
            ),
            (
                "footprint_gib=1,read_footprint_gib=0.6,apart=1",
                "apart = 1 gives each direction half of footprint_gib = 1 (0.5 GiB), but read_footprint_gib is 0.6",
            ),
        ] {
            let e = spec.parse::<SynthSpec>().unwrap_err();
            assert!(e.contains(key), "{spec}: {e}");
        }
        let notes = "reread_gap_us=10".parse::<SynthSpec>().unwrap().notes();
        assert!(notes.iter().any(|n| n.contains("reread = 0")), "{notes:?}");
    }

    /// `start_residues` puts fresh start pages on the residues mod 16 it weighs (odd pages
    /// three times as often as even ones: 3/4 odd) without merging pages: a Zipf stream's
    /// distinct pages stay within 2 % of the stream without it, which starts half its requests
    /// on odd pages.
    #[test]
    fn start_residues_move_start_pages_and_keep_the_footprint() {
        let base = "requests=40000,write_ratio=0.3,zipf=0.8,footprint_gib=0.5,seed=3";
        let odd = std::iter::repeat_n("1|3", 8).collect::<Vec<_>>().join("|");
        let stats = |spec: &str| {
            let reqs: Vec<Request> = spec
                .parse::<SynthSpec>()
                .unwrap()
                .generate()
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let n = reqs.len() as f64;
            let odd = reqs
                .iter()
                .filter(|r| r.offset_bytes / 4096 % 2 == 1)
                .count() as f64
                / n;
            let pages: std::collections::HashSet<u64> =
                reqs.iter().map(|r| r.offset_bytes / 4096).collect();
            (odd, pages.len() as f64)
        };
        let (plain_odd, plain_pages) = stats(base);
        let (odd_share, pages) = stats(&format!("{base},start_residues={odd}"));
        assert!((plain_odd - 0.5).abs() < 0.02, "{plain_odd}");
        assert!((odd_share - 0.75).abs() < 0.02, "{odd_share}");
        assert!(
            (pages / plain_pages - 1.0).abs() < 0.02,
            "{pages} vs {plain_pages}"
        );
    }

    /// With `apart`, each half takes its direction's residue law: reads start 3/4 on odd pages,
    /// writes 1/4, no read touches a page a write outside the shared share wrote, and the
    /// keys need `apart` and no law for the whole footprint.
    #[test]
    fn each_half_takes_its_direction_s_start_residues() {
        let base = "requests=40000,write_ratio=0.4,footprint_gib=0.5,read_footprint_gib=0.25,write_footprint_gib=0.25,apart=1,rw_mix=0,seed=3";
        let law = |odd: &str| std::iter::repeat_n(odd, 8).collect::<Vec<_>>().join("|");
        let spec: SynthSpec = format!(
            "{base},read_start_residues={},write_start_residues={}",
            law("1|3"),
            law("3|1")
        )
        .parse()
        .unwrap();
        assert_eq!(spec.to_string().parse::<SynthSpec>().unwrap(), spec);
        let reqs: Vec<Request> = spec.generate().unwrap().map(Result::unwrap).collect();
        let odd = |op: IoOp| {
            let of: Vec<u64> = reqs
                .iter()
                .filter(|r| r.op == op)
                .map(|r| r.offset_bytes / 4096)
                .collect();
            of.iter().filter(|p| *p % 2 == 1).count() as f64 / of.len() as f64
        };
        let (r, w) = (odd(IoOp::Read), odd(IoOp::Write));
        assert!(
            (r - 0.75).abs() < 0.02 && (w - 0.25).abs() < 0.02,
            "{r} {w}"
        );
        let written: std::collections::HashSet<u64> = reqs
            .iter()
            .filter(|r| r.op == IoOp::Write)
            .flat_map(|r| r.offset_bytes / 4096..(r.offset_bytes + r.size_bytes) / 4096)
            .collect();
        assert!(reqs
            .iter()
            .filter(|r| r.op == IoOp::Read)
            .all(|r| !written.contains(&(r.offset_bytes / 4096))));
        let odd = law("1|3");
        for (extra, want) in [
            (String::new(), "needs apart=1"),
            (format!(",apart=1,start_residues={odd}"), "not both"),
        ] {
            let spec = format!("requests=10,footprint_gib=1{extra},read_start_residues={odd}");
            let err = spec.parse::<SynthSpec>().unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }

    /// Batch sizes of a stream whose batches arrive all at once (`batch_us` 0) and far apart:
    /// the requests sharing an arrival time.
    fn batch_sizes(spec: &str) -> Vec<f64> {
        let mut sizes: Vec<f64> = Vec::new();
        let mut last = None;
        for r in spec.parse::<SynthSpec>().unwrap().generate().unwrap() {
            let t = r.unwrap().time_ns;
            match sizes.last_mut() {
                Some(n) if last == Some(t) => *n += 1.0,
                _ => sizes.push(1.0),
            }
            last = Some(t);
        }
        sizes
    }

    /// `batch_shape` r draws batch sizes 1 + Poisson(G), G gamma of shape r and mean m − 1: the
    /// mean batch stays m and the batch a request sees, Σ n² / Σ n, is m + (m − 1)(1 + (m − 1)
    /// / r) / m (2m − 1 at r = 1, the geometric law, which `batch_shape=1` is byte for byte).
    #[test]
    fn batch_shape_keeps_the_mean_batch_and_fattens_its_tail() {
        let base = "requests=200000,write_ratio=1,iat_us=1000,batch=4,batch_us=0,seed=3";
        let stream = |s: &str| -> Vec<u64> {
            let spec = s.parse::<SynthSpec>().unwrap();
            spec.generate()
                .unwrap()
                .map(|r| r.unwrap().time_ns)
                .collect()
        };
        assert_eq!(stream(base), stream(&format!("{base},batch_shape=1")));
        let m = 4.0;
        for r in [1.0, 0.5, 0.2] {
            let sizes = batch_sizes(&format!("{base},batch_shape={r}"));
            let n: f64 = sizes.iter().sum();
            let mean = n / sizes.len() as f64;
            let seen = sizes.iter().map(|s| s * s).sum::<f64>() / n;
            let want = m + (m - 1.0) * (1.0 + (m - 1.0) / r) / m;
            assert!((mean - m).abs() < 0.05 * m, "shape {r}: mean batch {mean}");
            assert!(
                (seen - want).abs() < 0.1 * want,
                "shape {r}: batch seen {seen}, closed form {want}"
            );
        }
    }

    /// `rewrite` ρ: a write starts on the start page of the write before it with probability
    /// ρ (chance adds almost nothing over a GiB), counted as the profile counts re-writes.
    #[test]
    fn rewrites_start_where_the_write_before_started() {
        let base = "requests=100000,write_ratio=0.6,footprint_gib=1,size_kib=4|8,seed=5";
        for rho in [0.0, 0.3, 0.7] {
            let spec: SynthSpec = format!("{base},rewrite={rho}").parse().unwrap();
            let p = crate::workload::profile::profile(spec.generate().unwrap()).unwrap();
            let got = p.reuse.rewrite_pct;
            assert!((got - 100.0 * rho).abs() < 1.0, "rewrite {rho}: {got} %");
        }
        // Runs of writes to one page: geometric of mean m = 1 / (1 − ρ) (a write sees 2m − 1);
        // `rewrite_shape` r keeps the share and the mean run and lengthens the runs a write
        // sees to m + (m − 1)(1 + (m − 1) / r) / m.
        let m = 1.0 / (1.0 - 0.3);
        for r in [1.0, 0.2] {
            let spec: SynthSpec = format!("{base},rewrite=0.3,rewrite_shape={r}")
                .parse()
                .unwrap();
            let p = crate::workload::profile::profile(spec.generate().unwrap()).unwrap();
            let u = &p.reuse;
            let (mean, seen) = (
                u.rewrite_run_mean.unwrap(),
                u.rewrite_run_seen_mean.unwrap(),
            );
            let want = m + (m - 1.0) * (1.0 + (m - 1.0) / r) / m;
            assert!(
                (u.rewrite_pct - 30.0).abs() < 1.0,
                "shape {r}: {} %",
                u.rewrite_pct
            );
            assert!((mean - m).abs() < 0.03 * m, "shape {r}: mean run {mean}");
            assert!(
                (seen - want).abs() < 0.1 * want,
                "shape {r}: seen {seen}, closed form {want}"
            );
        }
        let notes = "write_ratio=0,rewrite=0.5"
            .parse::<SynthSpec>()
            .unwrap()
            .notes();
        assert!(
            notes.iter().any(|n| n.contains("rewrite has no effect")),
            "{notes:?}"
        );
    }

    #[test]
    fn duplicate_and_conflicting_keys_are_refused() {
        let e = "write_ratio=0.5,write_ratio=1"
            .parse::<SynthSpec>()
            .unwrap_err();
        assert!(e.contains("`write_ratio` is given twice"), "{e}");
        let e = "iat_us=10,rate_iops=5".parse::<SynthSpec>().unwrap_err();
        assert!(e.contains("one of iat_us and rate_iops"), "{e}");
        assert!("read_zipf=1,write_zipf=1".parse::<SynthSpec>().is_ok());
    }

    #[test]
    fn specs_that_would_take_forever_to_draw_are_refused() {
        // A batch larger than the stream, and ON/OFF periods far shorter than the gap between
        // arrivals (each arrival would draw ~1e10 periods): found by fuzz_synth.
        let e = "requests=300,read_arrivals=onoff,read_on_ms=2,read_off_ms=20,read_on_share=0.9,read_batch=9e18"
            .parse::<SynthSpec>()
            .and_then(|s| s.validate())
            .unwrap_err();
        assert!(
            e.contains("read_batch") && e.contains("at most the requests"),
            "{e}"
        );
        let e = "requests=300,iat_us=5e10,arrivals=onoff,on_ms=0.001,off_ms=0.001,on_share=0.9"
            .parse::<SynthSpec>()
            .and_then(|s| s.validate())
            .unwrap_err();
        assert!(e.contains("ON/OFF cycles per arrival"), "{e}");
    }

    #[test]
    fn synth_counts_must_be_whole_numbers() {
        for bad in [
            "requests=-5",
            "requests=nan",
            "requests=2.7",
            "seed=-1",
            "seed=inf",
        ] {
            let e = bad.parse::<SynthSpec>().unwrap_err();
            assert!(e.contains("whole number"), "{bad}: {e}");
        }
        let ok: SynthSpec = "requests=1e5,seed=3".parse().unwrap();
        assert_eq!((ok.requests, ok.seed), (100_000, 3));
    }

    #[test]
    fn synth_rates_and_spans_are_bounded() {
        for bad in ["rate_iops=-5", "rate_iops=0", "rate_iops=nan"] {
            let e = bad.parse::<SynthSpec>().unwrap_err();
            assert!(e.contains("rate_iops"), "{bad}: {e}");
        }
        let e = "iat_us=1e300".parse::<SynthSpec>().unwrap_err();
        assert!(e.contains("iat_us") && e.contains("span"), "{e}");
    }
}
