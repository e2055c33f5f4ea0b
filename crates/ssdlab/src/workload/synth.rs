//! Seeded synthetic workloads: read/write mix, size choices, Poisson or constant arrivals,
//! footprint, Zipf skew and sequential runs.

use super::trace::TraceError;
use super::{IoOp, Request};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Zipf};
use std::io::Write;
use std::str::FromStr;

/// Inter-arrival distributions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps (Poisson arrivals) with this mean, µs.
    Exponential(f64),
    /// Constant gaps, µs.
    Constant(f64),
}

/// A synthetic workload specification.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthSpec {
    /// Number of requests.
    pub requests: u64,
    /// Fraction of writes.
    pub write_ratio: f64,
    /// Request sizes in KiB, chosen uniformly.
    pub size_kib: Vec<u32>,
    /// Arrival process.
    pub arrivals: Arrivals,
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
            arrivals: Arrivals::Exponential(100.0),
            footprint_gib: 1.0,
            zipf: 0.0,
            seq: 0.0,
            rw_mix: 1.0,
            dedup: 0.0,
            dup_zipf: 1.0,
            dup_pool: 0.01,
            dup_reads: 0.0,
            seed: 1,
        }
    }
}

impl SynthSpec {
    /// Checks the spec; each message names the parameter.
    ///
    /// # Errors
    /// A message naming the first bad parameter.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.write_ratio) {
            return Err(format!(
                "write_ratio = {}: must be in [0, 1]",
                self.write_ratio
            ));
        }
        if self.size_kib.is_empty()
            || self
                .size_kib
                .iter()
                .any(|&s| s == 0 || s % 4 != 0 && s != 1 && s != 2)
        {
            return Err(format!(
                "size_kib = {:?}: sizes must be 1, 2 or multiples of 4 KiB, at least one",
                self.size_kib
            ));
        }
        let gap = match self.arrivals {
            Arrivals::Exponential(g) | Arrivals::Constant(g) => g,
        };
        if !(gap.is_finite() && gap >= 0.0) {
            return Err(format!("iat_us = {gap}: must be >= 0"));
        }
        // Arrival times are u64 nanoseconds: keep the nominal span (mean gap x requests) within
        // 1e18 ns (~32 years), a factor 18 below the limit for the tails of random gaps.
        if gap * self.requests as f64 > MAX_SPAN_US {
            return Err(format!(
                "iat_us = {gap:.3e}: {} requests at this mean gap span {:.3e} us, more than the {MAX_SPAN_US:.0e} us a run can represent",
                self.requests,
                gap * self.requests as f64
            ));
        }
        let max_kib = f64::from(*self.size_kib.iter().max().unwrap_or(&4));
        if !(self.footprint_gib.is_finite() && self.footprint_gib * 1024.0 * 1024.0 >= max_kib) {
            return Err(format!(
                "footprint_gib = {}: must hold at least one request",
                self.footprint_gib
            ));
        }
        if !(self.zipf.is_finite() && self.zipf >= 0.0) {
            return Err(format!("zipf = {}: must be >= 0", self.zipf));
        }
        if !(0.0..=1.0).contains(&self.seq) {
            return Err(format!("seq = {}: must be in [0, 1]", self.seq));
        }
        if !(0.0..=1.0).contains(&self.rw_mix) {
            return Err(format!("rw_mix = {}: must be in [0, 1]", self.rw_mix));
        }
        if !(0.0..=1.0).contains(&self.dedup) {
            return Err(format!("dedup = {}: must be in [0, 1]", self.dedup));
        }
        if !(self.dup_zipf.is_finite() && self.dup_zipf >= 0.0) {
            return Err(format!("dup_zipf = {}: must be >= 0", self.dup_zipf));
        }
        if !(0.0..=1.0).contains(&self.dup_reads) {
            return Err(format!("dup_reads = {}: must be in [0, 1]", self.dup_reads));
        }
        if !(self.dup_pool > 0.0 && self.dup_pool <= 1.0) {
            return Err(format!("dup_pool = {}: must be in (0, 1]", self.dup_pool));
        }
        Ok(())
    }

    /// The request stream.
    ///
    /// # Errors
    /// The message of [`SynthSpec::validate`].
    pub fn generate(&self) -> Result<Synth, String> {
        self.validate()?;
        let pages = ((self.footprint_gib * 262_144.0) as u64).max(1);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let a = loop {
            let a = rng.random_range(1..pages.max(2)) | 1;
            if pages < 3 || gcd(a, pages) == 1 {
                break a;
            }
        };
        let pool = ((pages as f64 * self.dup_pool) as u64).max(1);
        Ok(Synth {
            pool,
            pool_zipf: (self.dedup > 0.0 && self.dup_zipf > 0.0)
                .then(|| Zipf::new(pool as f64, self.dup_zipf).expect("validated exponent")),
            unique_contents: 0,
            shared_writes: Vec::new(),
            shared_seen: 0,
            zipf: (self.zipf > 0.0)
                .then(|| Zipf::new(pages as f64, self.zipf).expect("validated exponent")),
            exp: match self.arrivals {
                Arrivals::Exponential(m) if m > 0.0 => {
                    Some(Exp::new(1.0 / m).expect("positive rate"))
                }
                _ => None,
            },
            spec: self.clone(),
            pages,
            scramble: a,
            rng,
            emitted: 0,
            now_us: 0.0,
            next_page: 0,
        })
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl FromStr for SynthSpec {
    type Err = String;
    /// Parses `key=value,...` with keys requests, write_ratio, size_kib (`4|8|16`), iat_us,
    /// rate_iops, arrivals (`exp`/`const`), footprint_gib, zipf, seq, rw_mix, dedup, dup_zipf,
    /// dup_pool, dup_reads, seed.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut spec = SynthSpec::default();
        let mut gap = 100.0;
        let mut constant = false;
        for kv in s.split(',').filter(|kv| !kv.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("synthetic spec `{kv}`: expected key=value"))?;
            let num = |v: &str| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("synthetic spec {k}: expected a number, found `{v}`"))
            };
            // Counts and seeds: whole numbers (written as 100000 or 1e5), not negative, exact
            // in a double.
            let whole = |v: &str| {
                let x = num(v)?;
                if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 2f64.powi(53) {
                    Ok(x as u64)
                } else {
                    Err(format!(
                        "synthetic spec {k} = {}: expected a whole number >= 0",
                        v.trim()
                    ))
                }
            };
            match k.trim() {
                "requests" => spec.requests = whole(v)?,
                "write_ratio" => spec.write_ratio = num(v)?,
                "size_kib" => {
                    spec.size_kib = v
                        .split('|')
                        .map(|x| x.trim().parse().map_err(|_| format!("synthetic spec size_kib: expected sizes like 4|8|16, found `{v}`")))
                        .collect::<Result<_, _>>()?
                }
                "iat_us" => gap = num(v)?,
                "rate_iops" => {
                    let rate = num(v)?;
                    if !(rate.is_finite() && rate > 0.0) {
                        return Err(format!("synthetic spec rate_iops = {}: must be > 0", v.trim()));
                    }
                    gap = 1e6 / rate;
                }
                "arrivals" => constant = match v.trim() {
                    "exp" => false,
                    "const" => true,
                    _ => return Err(format!("synthetic spec arrivals: expected exp or const, found `{v}`")),
                },
                "footprint_gib" => spec.footprint_gib = num(v)?,
                "zipf" => spec.zipf = num(v)?,
                "seq" => spec.seq = num(v)?,
                "rw_mix" => spec.rw_mix = num(v)?,
                "dedup" => spec.dedup = num(v)?,
                "dup_zipf" => spec.dup_zipf = num(v)?,
                "dup_pool" => spec.dup_pool = num(v)?,
                "dup_reads" => spec.dup_reads = num(v)?,
                "seed" => spec.seed = whole(v)?,
                other => return Err(format!("synthetic spec: unknown key `{other}` (known: requests, write_ratio, size_kib, iat_us, rate_iops, arrivals, footprint_gib, zipf, seq, rw_mix, dedup, dup_zipf, dup_pool, dup_reads, seed)")),
            }
        }
        spec.arrivals = if constant {
            Arrivals::Constant(gap)
        } else {
            Arrivals::Exponential(gap)
        };
        spec.validate()?;
        Ok(spec)
    }
}

const SHARED_RING: usize = 65_536;

/// Longest nominal span of a synthetic workload, µs (1e18 ns: arrival times are u64 ns).
const MAX_SPAN_US: f64 = 1e15;

/// The generator: an iterator of requests.
pub struct Synth {
    spec: SynthSpec,
    pages: u64,
    pool: u64,
    pool_zipf: Option<Zipf<f64>>,
    unique_contents: u64,
    /// Start pages of recent shared-content writes (a ring of at most `SHARED_RING`).
    shared_writes: Vec<u64>,
    shared_seen: u64,
    scramble: u64,
    zipf: Option<Zipf<f64>>,
    exp: Option<Exp<f64>>,
    rng: ChaCha8Rng,
    emitted: u64,
    now_us: f64,
    next_page: u64,
}

impl Synth {
    /// Writes the whole stream as MSR Cambridge CSV (hostname `synth`, disk 0, response 0).
    ///
    /// # Errors
    /// I/O errors of `out`.
    pub fn write_msr_csv(self, out: &mut dyn Write) -> std::io::Result<u64> {
        let base: u64 = 128_166_372_000_000_000; // 2007-02-22, like the MSR traces
        let mut n = 0;
        for r in self {
            let r = r.expect("the generator does not fail");
            let op = if r.op == IoOp::Read { "Read" } else { "Write" };
            writeln!(
                out,
                "{},synth,0,{op},{},{},0",
                base + r.time_ns / 100,
                r.offset_bytes,
                r.size_bytes
            )?;
            n += 1;
        }
        Ok(n)
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
        if self.emitted > 0 {
            self.now_us += match (self.spec.arrivals, &self.exp) {
                (_, Some(e)) => e.sample(&mut self.rng),
                (Arrivals::Constant(g) | Arrivals::Exponential(g), None) => g,
            };
        }
        self.emitted += 1;
        let op = if self.rng.random_bool(self.spec.write_ratio) {
            IoOp::Write
        } else {
            IoOp::Read
        };
        let kib = self.spec.size_kib[self.rng.random_range(0..self.spec.size_kib.len())];
        let size_pages = u64::from(kib).div_ceil(4);
        let start = if self.emitted > 1 && self.rng.random_bool(self.spec.seq) {
            self.next_page
        } else if op == IoOp::Read
            && self.spec.dup_reads > 0.0
            && !self.shared_writes.is_empty()
            && self.rng.random_bool(self.spec.dup_reads)
        {
            self.shared_writes[self.rng.random_range(0..self.shared_writes.len())]
        } else {
            let rank = match &self.zipf {
                Some(z) => z.sample(&mut self.rng) as u64 - 1,
                None => self.rng.random_range(0..self.pages),
            };
            // Writes outside the shared share of the mix use a disjoint hot set: their ranks land
            // half the footprint away from where the same ranks of reads land.
            let shift = if op == IoOp::Write
                && self.spec.rw_mix < 1.0
                && !self.rng.random_bool(self.spec.rw_mix)
            {
                self.pages / 2
            } else {
                0
            };
            // Scatter ranks over the footprint so hot pages are not neighbours.
            ((u128::from(rank) * u128::from(self.scramble) + u128::from(shift))
                % u128::from(self.pages)) as u64
        };
        let start = if start + size_pages > self.pages {
            0
        } else {
            start
        };
        self.next_page = start + size_pages;
        let content = (op == IoOp::Write && self.spec.dedup > 0.0).then(|| self.content());
        if content.is_some_and(|c| c >> 127 == 1) {
            if self.shared_writes.len() < SHARED_RING {
                self.shared_writes.push(start);
            } else {
                self.shared_writes[(self.shared_seen % SHARED_RING as u64) as usize] = start;
            }
            self.shared_seen += 1;
        }
        Some(Ok(Request {
            time_ns: (self.now_us * 1e3).round() as u64,
            offset_bytes: start * 4096,
            size_bytes: u64::from(kib) * 1024,
            op,
            device: 0,
            content,
        }))
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
