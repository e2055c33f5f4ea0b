//! The `--synth` spec: its keys, their checks and the canonical one-line form
//! (`key=value,...`) that `ssdlab trace fit` prints and `--synth` reads back.
//!
//! Keys of the arrival process (`arrivals`, `on_ms`, `off_ms`, `on_share`, `b`, `span_s`), of
//! popularity (`zipf`, `footprint_gib`), of sizes (`size_kib`) and `seq` also take a `read_` or
//! `write_` prefix, which sets them for that direction alone. A prefixed arrival key splits the
//! stream: reads and writes then arrive as two independent processes, merged in time.
//!
//! Parsing, checking and printing stay together (past 500 lines): every key appears in all
//! three, and printing must parse back to the same spec.

use super::arrivals::Process;
use super::{Arrivals, Envelope, OpSpec, Sizes, SynthSpec};
use std::fmt;
use std::str::FromStr;

/// Longest nominal span of a synthetic workload, µs (1e18 ns: arrival times are u64 ns).
const MAX_SPAN_US: f64 = 1e15;

/// Keys that take a `read_` or `write_` prefix.
const PER_DIRECTION: [&str; 19] = [
    "envelope",
    "batch",
    "batch_us",
    "batch_shape",
    "arrivals",
    "on_ms",
    "off_ms",
    "on_share",
    "b",
    "span_s",
    "footprint_gib",
    "zipf",
    "size_kib",
    "seq",
    "hot_gib",
    "hot_share",
    "hot_drift",
    "fresh",
    "start_residues",
];

/// Every key `--synth` knows, for the message naming an unknown one.
const KNOWN: &str = "requests, write_ratio, size_kib, iat_us, rate_iops, arrivals, on_ms, off_ms, on_share, b, span_s, batch, batch_us, batch_shape, cobatch, cobatch_raw, rider_envelope, footprint_gib, zipf, seq, rw_mix, apart, hot_gib, hot_share, hot_drift, reread, reread_dist, reread_inside, reread_gap_us, reread_gap_sigma, reread_envelope, raw, raw_dist, rewrite, rewrite_shape, start_residues, dist_sigma, dedup, dup_zipf, dup_pool, dup_reads, envelope, seed (and read_/write_ before envelope, arrivals, on_ms, off_ms, on_share, b, span_s, batch, batch_us, batch_shape, footprint_gib, zipf, size_kib, seq, hot_gib, hot_share, hot_drift, fresh, start_residues)";

impl Sizes {
    /// Mean size in 4 KiB pages (each size rounded up to whole pages), by the weights.
    pub(super) fn mean_pages(&self) -> f64 {
        let pages = |k: &u32| f64::from(k.div_ceil(4));
        if self.weights.is_empty() {
            self.kib.iter().map(pages).sum::<f64>() / self.kib.len().max(1) as f64
        } else {
            let total: f64 = self.weights.iter().sum();
            self.kib
                .iter()
                .zip(&self.weights)
                .map(|(k, w)| pages(k) * w)
                .sum::<f64>()
                / total
        }
    }

    /// Checks sizes and weights; `key` names them in messages.
    fn validate(&self, key: &str) -> Result<(), String> {
        if self.kib.is_empty()
            || self
                .kib
                .iter()
                .any(|&s| s == 0 || s % 4 != 0 && s != 1 && s != 2)
        {
            return Err(format!(
                "{key} = {:?}: sizes must be 1, 2 or multiples of 4 KiB, at least one",
                self.kib
            ));
        }
        let max_kib = crate::workload::trace::MAX_REQUEST_BYTES / 1024;
        if let Some(&k) = self.kib.iter().find(|&&k| u64::from(k) > max_kib) {
            return Err(format!(
                "{key}: a size of {k} KiB is more than the {max_kib} KiB (1 GiB) a request may be, in a trace or a synthetic workload"
            ));
        }
        if !self.weights.is_empty()
            && (self.weights.len() != self.kib.len()
                || self.weights.iter().any(|w| !(w.is_finite() && *w > 0.0)))
        {
            return Err(format!(
                "{key}: every size needs a weight > 0 (4:0.6|8:0.4) or none does"
            ));
        }
        if !self.weights.iter().sum::<f64>().is_finite() {
            return Err(format!(
                "{key}: the weights add up to more than a number can hold; use relative weights like 4:0.6|8:0.4"
            ));
        }
        Ok(())
    }

    fn parse(key: &str, v: &str) -> Result<Sizes, String> {
        let bad = || {
            format!("synthetic spec {key}: expected sizes like 4|8|16 or 4:0.6|8:0.4, found `{v}`")
        };
        let mut s = Sizes::default();
        for part in v.split('|') {
            match part.split_once(':') {
                Some((k, w)) => {
                    s.kib.push(k.trim().parse().map_err(|_| bad())?);
                    s.weights.push(w.trim().parse().map_err(|_| bad())?);
                }
                None => s.kib.push(part.trim().parse().map_err(|_| bad())?),
            }
        }
        if !s.weights.is_empty() && s.weights.len() != s.kib.len() {
            return Err(bad());
        }
        Ok(s)
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.kib.iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            write!(f, "{k}")?;
            if let Some(w) = self.weights.get(i) {
                write!(f, ":{w}")?;
            }
        }
        Ok(())
    }
}

/// Largest change of a b-model side's rate its windows' whole numbers of requests may make
/// (a window of x mean gaps holds round(x) requests): 2 %, below which are windows of 25
/// gaps or more (and the spans `trace fit` writes, the trace's duration).
const MAX_BMODEL_RATE_CHANGE: f64 = 0.02;

/// `x` as a message shows it: in full, or in scientific notation when large.
fn shown(x: f64) -> String {
    if x.abs() >= 1e9 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Most ON/OFF cycles an arrival process may pass on average between two arrivals.
const MAX_CYCLES_PER_ARRIVAL: f64 = 1e6;

/// Largest address range a spec may span, GiB (1 EiB: its byte offsets stay far within u64).
const MAX_FOOTPRINT_GIB: f64 = 1_073_741_824.0;

impl SynthSpec {
    /// Checks the spec; each message names the parameter.
    ///
    /// # Errors
    /// A message naming the first bad parameter.
    pub fn validate(&self) -> Result<(), String> {
        if self.requests == 0 {
            return Err("requests = 0: a workload needs at least one request".into());
        }
        if !(0.0..=1.0).contains(&self.write_ratio) {
            return Err(format!(
                "write_ratio = {}: must be in [0, 1]",
                self.write_ratio
            ));
        }
        self.sizes().validate("size_kib")?;
        let gap = self.mean_gap_us();
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
        let max_kib = [&self.size_kib, &self.op_sizes(0).kib, &self.op_sizes(1).kib]
            .iter()
            .flat_map(|v| v.iter())
            .copied()
            .max()
            .unwrap_or(4);
        if self.footprint_gib > MAX_FOOTPRINT_GIB {
            return Err(format!(
                "footprint_gib = {}: must be at most {MAX_FOOTPRINT_GIB:e} (1 EiB; byte offsets are 64-bit)",
                self.footprint_gib
            ));
        }
        if !(self.footprint_gib.is_finite()
            && self.footprint_gib * 1024.0 * 1024.0 >= f64::from(max_kib))
        {
            return Err(format!(
                "footprint_gib = {}: must hold at least one request",
                self.footprint_gib
            ));
        }
        if !(self.zipf.is_finite() && self.zipf >= 0.0) {
            return Err(format!("zipf = {}: must be >= 0", self.zipf));
        }
        for (key, x) in [
            ("seq", self.seq),
            ("rw_mix", self.rw_mix),
            ("dedup", self.dedup),
            ("dup_reads", self.dup_reads),
            ("reread", self.reread),
            ("reread_inside", self.reread_inside),
            ("raw", self.raw),
            ("rewrite", self.rewrite),
            ("cobatch", self.cobatch),
            ("cobatch_raw", self.cobatch_raw),
        ] {
            if !(0.0..=1.0).contains(&x) {
                return Err(format!("{key} = {x}: must be in [0, 1]"));
            }
        }
        if self.cobatch > 0.0 && self.write_ratio <= 0.0 {
            return Err(format!(
                "cobatch = {}: reads ride in the batches of writes, so write_ratio must be > 0",
                self.cobatch
            ));
        }
        if self.cobatch_raw > 0.0 && self.cobatch <= 0.0 {
            return Err(format!(
                "cobatch_raw = {}: it is a share of the reads riding in write batches, so cobatch must be > 0",
                self.cobatch_raw
            ));
        }
        if self.reread + self.raw > 1.0 {
            return Err(format!(
                "reread + raw = {}: the two are shares of the reads and must add up to at most 1",
                self.reread + self.raw
            ));
        }
        if let Some(r) = &self.rider_envelope {
            if self.cobatch <= 0.0 {
                return Err(
                    "rider_envelope: it shares out the reads riding in write batches, so cobatch must be > 0"
                        .into(),
                );
            }
            let e = shared_over(
                ("rider_envelope", "riders"),
                r,
                "write",
                self.write.envelope.as_ref().or(self.envelope.as_ref()),
            )?;
            if let Some(k) =
                (0..e.weights.len()).find(|&k| r.weights[k] > 0.0 && e.weights[k] <= 0.0)
            {
                return Err(format!(
                    "rider_envelope: slice {} has riders but the write envelope has no writes there to carry them",
                    k + 1
                ));
            }
        }
        if let Some(r) = &self.reread_envelope {
            if !self.rereads_in_time() {
                return Err(
                    "reread_envelope: it shares out re-reads placed in time, so reread and reread_gap_us must be > 0"
                        .into(),
                );
            }
            shared_over(
                ("reread_envelope", "re-reads"),
                r,
                "read",
                self.read.envelope.as_ref().or(self.envelope.as_ref()),
            )?;
        }
        if self.reread_gap_us > 0.0 && self.reread + self.cobatch >= 1.0 {
            return Err(format!(
                "reread + cobatch = {}: with reread_gap_us set, the read process brings the reads that are neither re-reads nor riders, so the two must add up to less than 1",
                self.reread + self.cobatch
            ));
        }
        for (key, x) in [
            ("reread_dist", self.reread_dist),
            ("raw_dist", self.raw_dist),
        ] {
            if !(x.is_finite() && x >= 1.0) {
                return Err(format!("{key} = {x}: must be >= 1 (requests back)"));
            }
        }
        if !(self.reread_gap_us.is_finite() && self.reread_gap_us >= 0.0) {
            return Err(format!(
                "reread_gap_us = {}: must be >= 0 (µs; 0 = re-reads at a distance in reads)",
                self.reread_gap_us
            ));
        }
        if !(self.reread_gap_sigma.is_finite() && (0.0..=10.0).contains(&self.reread_gap_sigma)) {
            return Err(format!(
                "reread_gap_sigma = {}: must be in [0, 10]",
                self.reread_gap_sigma
            ));
        }
        if !(self.dist_sigma.is_finite() && (0.0..=10.0).contains(&self.dist_sigma)) {
            return Err(format!(
                "dist_sigma = {}: must be in [0, 10]",
                self.dist_sigma
            ));
        }
        if !(self.dup_zipf.is_finite() && self.dup_zipf >= 0.0) {
            return Err(format!("dup_zipf = {}: must be >= 0", self.dup_zipf));
        }
        if !(self.dup_pool > 0.0 && self.dup_pool <= 1.0) {
            return Err(format!("dup_pool = {}: must be in (0, 1]", self.dup_pool));
        }
        check_batch("", self.batch, self.batch_us, self.requests)?;
        shape_in_range(
            "rewrite_shape",
            self.rewrite_shape,
            "1 = each write re-writes on its own",
        )?;
        if self.rewrite_shape != 1.0 && !(self.rewrite > 0.0 && self.rewrite < 1.0) {
            return Err(format!(
                "rewrite_shape = {}: shapes the runs of re-writes, so rewrite must be in (0, 1) (it is {})",
                self.rewrite_shape, self.rewrite
            ));
        }
        // The whole stream's shape applies to every process whose batch is above 1.
        let widest = [self.read.batch, self.write.batch]
            .into_iter()
            .flatten()
            .fold(self.batch, f64::max);
        check_shape("", self.batch_shape, widest)?;
        self.check_times()?;
        if (self.batch > 1.0 || self.batch_us > 0.0) && gap <= 0.0 {
            return Err("iat_us = 0: batches need a mean gap > 0".into());
        }
        if let Some(p) = self.burst {
            p.validate("")?;
            if gap <= 0.0 {
                return Err(format!(
                    "iat_us = 0: arrivals = {} needs a mean gap > 0",
                    p.name()
                ));
            }
        }
        for (prefix, op) in [("read_", &self.read), ("write_", &self.write)] {
            op.validate(prefix, self.footprint_gib, self.requests)?;
            if let Some(shape) = op.batch_shape {
                check_shape(prefix, shape, op.batch.unwrap_or(self.batch))?;
            }
            self.check_hot(prefix, op)?;
            self.check_fresh(prefix, op)?;
            self.check_apart(prefix, op)?;
        }
        if self.split() && gap <= 0.0 {
            return Err(
                "iat_us = 0: separate read and write arrival processes need a mean gap > 0".into(),
            );
        }
        self.check_cycles()
    }

    /// An ON/OFF process draws its periods one by one until an arrival: refuses one whose
    /// mean gap between arrivals (batches) spans more than [`MAX_CYCLES_PER_ARRIVAL`] ON/OFF
    /// cycles, which would take that many draws per arrival.
    fn check_cycles(&self) -> Result<(), String> {
        let gap = self.mean_gap_us();
        for (prefix, side) in self.sides() {
            let (share, batch) = (side.share, side.batch.0);
            if let (Process::OnOff { on_ms, off_ms, .. }, true) = (side.process, share > 0.0) {
                let batch_gap_us = gap / share * batch;
                let cycles = batch_gap_us / ((on_ms + off_ms) * 1e3);
                if cycles > MAX_CYCLES_PER_ARRIVAL {
                    return Err(format!(
                        "{prefix}on_ms + {prefix}off_ms = {} ms against a mean gap of {batch_gap_us:.3e} us between this process's arrivals ({prefix}batch = {batch}): {cycles:.1e} ON/OFF cycles per arrival, more than {MAX_CYCLES_PER_ARRIVAL:e}; lengthen the periods or shorten the gap",
                        on_ms + off_ms
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every time-valued key (`batch_us`, `on_ms`, `off_ms`, `span_s`, with their `read_` and
    /// `write_` forms) within what arrival times (u64 ns) can hold over the run, and the
    /// processes' rates as given: an ON or OFF period's gaps at least 1 ns (finer ones collapse
    /// onto one time stamp), a b-model window holding nearly a whole number of mean gaps (it
    /// spreads a whole number of requests over each window: [`MAX_BMODEL_RATE_CHANGE`]).
    fn check_times(&self) -> Result<(), String> {
        let gap = self.mean_gap_us();
        let n = self.requests as f64;
        let too_long = |key: String, us: f64| {
            format!("{key}: {us:.3e} us, more than the {MAX_SPAN_US:.0e} us a run can represent")
        };
        for (prefix, side) in self.sides() {
            if side.batch_us * n > MAX_SPAN_US {
                return Err(too_long(
                    format!(
                        "{prefix}batch_us = {} over {} requests",
                        shown(side.batch_us),
                        self.requests
                    ),
                    side.batch_us * n,
                ));
            }
            if side.share <= 0.0 {
                continue;
            }
            let side_gap = gap / side.share * side.batch.0;
            match side.process {
                Process::OnOff {
                    on_ms,
                    off_ms,
                    on_share,
                } => {
                    let cycle_us = (on_ms + off_ms) * 1e3;
                    if cycle_us > MAX_SPAN_US {
                        return Err(too_long(
                            format!(
                                "{prefix}on_ms + {prefix}off_ms = {} ms",
                                shown(on_ms + off_ms)
                            ),
                            cycle_us,
                        ));
                    }
                    let p_on = on_ms / (on_ms + off_ms);
                    for (what, share, time) in
                        [("ON", on_share, p_on), ("OFF", 1.0 - on_share, 1.0 - p_on)]
                    {
                        if share > 0.0 && side_gap * time / share < 1e-3 {
                            return Err(format!(
                                "{prefix}on_ms = {}, {prefix}off_ms = {}, {prefix}on_share = {on_share}: the {what} periods' mean gap is {:.3e} us, below the 1 ns arrival times resolve (requests would pile onto one time stamp)",
                                shown(on_ms), shown(off_ms), side_gap * time / share
                            ));
                        }
                    }
                }
                Process::BModel {
                    span_s: Some(s), ..
                } => {
                    let span_us = s * 1e6;
                    if span_us > MAX_SPAN_US {
                        return Err(too_long(format!("{prefix}span_s = {}", shown(s)), span_us));
                    }
                    let per = span_us / side_gap;
                    let change = per.round().max(1.0) / per - 1.0;
                    if change.abs() > MAX_BMODEL_RATE_CHANGE {
                        return Err(format!(
                            "{prefix}span_s = {}: a b-model window spreads a whole number of requests, but this one holds {per:.3} mean gaps ({side_gap:.3e} us each), which would change the rate by {:+.1} % (more than {} %); use a window of a whole number of gaps, or at least 25",
                            shown(s), change * 100.0, MAX_BMODEL_RATE_CHANGE * 100.0
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Checks that a direction drawing fresh pages has uniform popularity: no Zipf exponent
    /// and no hot set (both repeat pages by design, which `fresh` leaves out).
    fn check_fresh(&self, prefix: &str, op: &OpSpec) -> Result<(), String> {
        if !op.fresh {
            return Ok(());
        }
        let zipf = op.zipf.unwrap_or(self.zipf);
        if zipf > 0.0 {
            return Err(format!(
                "{prefix}fresh = 1 draws each new page once, which needs uniform popularity, but this direction's zipf is {zipf}; set {prefix}zipf=0 or drop {prefix}fresh"
            ));
        }
        let (gib, share, _) = self.hot_of(op);
        if gib > 0.0 && share > 0.0 {
            return Err(format!(
                "{prefix}fresh = 1 draws each new page once, which needs uniform popularity, but this direction has a hot set (hot_gib = {gib}, hot_share = {share}); drop the hot set or {prefix}fresh"
            ));
        }
        Ok(())
    }

    /// Checks that with `apart` a direction's popularity fits in its half of the footprint
    /// and has no hot set (a hot set is a range from the footprint's start, in no half), and
    /// that a direction's own start residues have a half to lay out (`apart`, no
    /// `start_residues` for the whole footprint).
    fn check_apart(&self, prefix: &str, op: &OpSpec) -> Result<(), String> {
        if op.start_residues.is_some() && self.start_residues.is_some() {
            return Err(format!(
                "start_residues and {prefix}start_residues both set: one law for the whole footprint or one per half, not both"
            ));
        }
        if !self.apart {
            return match op.start_residues {
                Some(_) => Err(format!(
                    "{prefix}start_residues lays out its direction's half of the footprint, which needs apart=1"
                )),
                None => Ok(()),
            };
        }
        let half = self.footprint_gib / 2.0;
        let own = op.footprint_gib.unwrap_or(self.footprint_gib);
        if own > half * (1.0 + 1e-9) {
            return Err(format!(
                "apart = 1 gives each direction half of footprint_gib = {} ({half} GiB), but {prefix}footprint_gib is {own}; set {prefix}footprint_gib to at most {half}",
                self.footprint_gib
            ));
        }
        let (gib, share, _) = self.hot_of(op);
        if gib > 0.0 && share > 0.0 {
            return Err(format!(
                "apart = 1 puts each direction in its half of the footprint, but {prefix}hot set (hot_gib = {gib}) is a range from its start; drop one of them"
            ));
        }
        Ok(())
    }

    /// A direction's hot set as (GiB, share, drift): its own keys, else the spec's.
    pub(super) fn hot_of(&self, op: &OpSpec) -> (f64, f64, f64) {
        (
            op.hot_gib.unwrap_or(self.hot_gib),
            op.hot_share.unwrap_or(self.hot_share),
            op.hot_drift.unwrap_or(self.hot_drift),
        )
    }

    /// Checks one direction's hot set (its own keys or the spec's): a share in [0, 1], a size
    /// within the direction's footprint, a finite drift; each message names the key as given.
    fn check_hot(&self, prefix: &str, op: &OpSpec) -> Result<(), String> {
        let name = |key: &str, own: bool| {
            if own {
                format!("{prefix}{key}")
            } else {
                key.to_string()
            }
        };
        let (gib, share, drift) = self.hot_of(op);
        if !(0.0..=1.0).contains(&share) {
            return Err(format!(
                "{} = {share}: must be in [0, 1]",
                name("hot_share", op.hot_share.is_some())
            ));
        }
        let footprint = op.footprint_gib.unwrap_or(self.footprint_gib);
        if !(gib.is_finite() && gib >= 0.0 && gib <= footprint) {
            return Err(format!(
                "{} = {gib}: must be >= 0 and at most the direction's footprint ({footprint} GiB)",
                name("hot_gib", op.hot_gib.is_some())
            ));
        }
        if gib > 0.0 && gib * 262_144.0 < 1.0 {
            return Err(format!(
                "{} = {gib}: a hot set must hold at least one 4 KiB page",
                name("hot_gib", op.hot_gib.is_some())
            ));
        }
        if !(drift.is_finite() && (0.0..=1e9).contains(&drift)) {
            return Err(format!(
                "{} = {drift}: must be in [0, 1e9] (hot-set sizes moved over the stream)",
                name("hot_drift", op.hot_drift.is_some())
            ));
        }
        Ok(())
    }

    /// Keys the spec sets that change nothing (each note names the key and why), for the
    /// tools to print: a direction's keys when it has no requests, reuse and coupling keys
    /// without reads, the whole stream's arrival keys when each direction has its own.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let d = SynthSpec::default();
        let given = |op: &OpSpec| {
            [
                ("arrivals", op.arrivals.is_some()),
                ("zipf", op.zipf.is_some()),
                ("footprint_gib", op.footprint_gib.is_some()),
                ("size_kib", op.sizes.is_some()),
                ("seq", op.seq.is_some()),
                ("batch", op.batch.is_some()),
                ("batch_us", op.batch_us.is_some()),
                ("batch_shape", op.batch_shape.is_some()),
                ("fresh", op.fresh),
                ("start_residues", op.start_residues.is_some()),
            ]
            .into_iter()
            .filter(|k| k.1)
            .map(|k| k.0)
            .collect::<Vec<_>>()
        };
        for (prefix, op, none) in [
            ("read_", &self.read, self.write_ratio >= 1.0),
            ("write_", &self.write, self.write_ratio <= 0.0),
        ] {
            if none {
                for k in given(op) {
                    notes.push(format!(
                        "{prefix}{k} has no effect: write_ratio = {} leaves no {} requests",
                        self.write_ratio,
                        prefix.trim_end_matches('_')
                    ));
                }
            }
        }
        if self.write_ratio <= 0.0 && self.rewrite > 0.0 {
            notes.push("rewrite has no effect: write_ratio = 0 leaves no writes".into());
        }
        if self.write_ratio >= 1.0 {
            for (k, x) in [
                ("cobatch", self.cobatch),
                ("cobatch_raw", self.cobatch_raw),
                ("reread", self.reread),
                ("raw", self.raw),
                ("dup_reads", self.dup_reads),
            ] {
                if x > 0.0 {
                    notes.push(format!(
                        "{k} has no effect: write_ratio = 1 leaves no reads"
                    ));
                }
            }
        }
        // A hot-set key works only where both a size and a share are set.
        let hot = |op: &OpSpec| {
            let (gib, share, _) = self.hot_of(op);
            gib > 0.0 && share > 0.0
        };
        let sides = [("read_", &self.read), ("write_", &self.write)];
        for (key, whole, own) in [
            (
                "hot_gib",
                self.hot_gib,
                [self.read.hot_gib, self.write.hot_gib],
            ),
            (
                "hot_share",
                self.hot_share,
                [self.read.hot_share, self.write.hot_share],
            ),
            (
                "hot_drift",
                self.hot_drift,
                [self.read.hot_drift, self.write.hot_drift],
            ),
        ] {
            let idle = |i: usize| !hot(sides[i].1);
            if whole != 0.0 && (0..2).all(|i| own[i].is_some() || idle(i)) {
                notes.push(format!(
                    "{key} has no effect: no direction takes it with both hot_gib and hot_share > 0"
                ));
            }
            for i in 0..2 {
                if own[i].is_some() && idle(i) {
                    notes.push(format!(
                        "{}{key} has no effect: that direction's hot_gib or hot_share is 0",
                        sides[i].0
                    ));
                }
            }
        }
        if self.reread_gap_us > 0.0 && self.reread_dist != d.reread_dist {
            notes.push(format!(
                "reread_dist has no effect: reread_gap_us = {} places re-reads by time",
                self.reread_gap_us
            ));
        }
        if self.reread <= 0.0 {
            for (k, x, default) in [
                ("reread_gap_us", self.reread_gap_us, d.reread_gap_us),
                (
                    "reread_gap_sigma",
                    self.reread_gap_sigma,
                    d.reread_gap_sigma,
                ),
                ("reread_inside", self.reread_inside, d.reread_inside),
            ] {
                if x != default {
                    notes.push(format!("{k} has no effect: reread = 0"));
                }
            }
        }
        let own = |op: &OpSpec| op.arrivals.is_some();
        if self.split() && own(&self.read) && own(&self.write) && self.burst.is_some() {
            notes.push(
                "arrivals (and its on_ms, off_ms, on_share, b, span_s) has no effect: read_arrivals and write_arrivals give each direction its own process".into(),
            );
        }
        if self.read.batch.is_some() && self.write.batch.is_some() && self.batch != 1.0 {
            notes.push(
                "batch has no effect: read_batch and write_batch give each direction its own"
                    .into(),
            );
        }
        if self.read.batch_shape.is_some()
            && self.write.batch_shape.is_some()
            && self.batch_shape != 1.0
        {
            notes.push(
                "batch_shape has no effect: read_batch_shape and write_batch_shape give each direction its own".into(),
            );
        }
        if self.read.batch_us.is_some() && self.write.batch_us.is_some() && self.batch_us != 0.0 {
            notes.push(
                "batch_us has no effect: read_batch_us and write_batch_us give each direction its own".into(),
            );
        }
        notes
    }

    /// The spec's mean gap between requests, µs.
    pub fn mean_gap_us(&self) -> f64 {
        match self.arrivals {
            Arrivals::Exponential(g) | Arrivals::Constant(g) => g,
        }
    }
}

/// Smallest gamma shape of a batch-size law: below it nearly every batch is a single request
/// and the mean rests on batches of millions.
pub const MIN_BATCH_SHAPE: f64 = 0.01;

/// Largest gamma shape of a run law (far past it the law is Poisson's in all but name).
const MAX_SHAPE: f64 = 1e6;

/// Checks that `key`'s gamma shape is one a run law takes (`one` says what 1 means).
fn shape_in_range(key: &str, shape: f64, one: &str) -> Result<(), String> {
    if shape.is_finite() && (MIN_BATCH_SHAPE..=MAX_SHAPE).contains(&shape) {
        Ok(())
    } else {
        Err(format!(
            "{key} = {shape}: must be in [{MIN_BATCH_SHAPE}, {MAX_SHAPE:e}] ({one})"
        ))
    }
}

/// Checks the gamma shape of a batch-size law (`batch` its mean batch).
fn check_shape(prefix: &str, shape: f64, batch: f64) -> Result<(), String> {
    shape_in_range(
        &format!("{prefix}batch_shape"),
        shape,
        "1 = geometric batch sizes",
    )?;
    if shape != 1.0 && batch <= 1.0 {
        return Err(format!(
            "{prefix}batch_shape = {shape}: shapes a law of batch sizes, so {prefix}batch must be > 1 (it is {batch})"
        ));
    }
    Ok(())
}

/// Checks a mean batch size and the gap within batches.
fn check_batch(prefix: &str, batch: f64, batch_us: f64, requests: u64) -> Result<(), String> {
    if !(batch.is_finite() && batch >= 1.0) {
        return Err(format!(
            "{prefix}batch = {batch}: must be >= 1 (requests per arrival)"
        ));
    }
    if batch > (requests as f64).max(1.0) {
        return Err(format!(
            "{prefix}batch = {batch}: a mean batch must be at most the requests ({requests})"
        ));
    }
    if !(batch_us.is_finite() && batch_us >= 0.0) {
        return Err(format!("{prefix}batch_us = {batch_us}: must be >= 0"));
    }
    Ok(())
}

impl OpSpec {
    fn validate(&self, prefix: &str, footprint_gib: f64, requests: u64) -> Result<(), String> {
        check_batch(
            prefix,
            self.batch.unwrap_or(1.0),
            self.batch_us.unwrap_or(0.0),
            requests,
        )?;
        if let Some(p) = &self.arrivals {
            p.validate(prefix)?;
        }
        if let Some(z) = self.zipf {
            if !(z.is_finite() && z >= 0.0) {
                return Err(format!("{prefix}zipf = {z}: must be >= 0"));
            }
        }
        if let Some(f) = self.footprint_gib {
            if !(f.is_finite() && f * 262_144.0 >= 1.0 && f <= footprint_gib) {
                return Err(format!(
                    "{prefix}footprint_gib = {f}: must be at least one 4 KiB page and at most footprint_gib = {footprint_gib}"
                ));
            }
        }
        if let Some(s) = &self.sizes {
            s.validate(&format!("{prefix}size_kib"))?;
        }
        if let Some(s) = self.seq {
            if !(0.0..=1.0).contains(&s) {
                return Err(format!("{prefix}seq = {s}: must be in [0, 1]"));
            }
        }
        Ok(())
    }
}

/// Keys of one arrival process as written (before they are put together).
#[derive(Default)]
struct ProcessKeys {
    kind: Option<String>,
    on_ms: Option<f64>,
    off_ms: Option<f64>,
    on_share: Option<f64>,
    b: Option<f64>,
    span_s: Option<f64>,
}

impl ProcessKeys {
    /// The process these keys describe (`None` without an `arrivals` key).
    fn build(&self, prefix: &str) -> Result<Option<Process>, String> {
        let need = |x: Option<f64>, key: &str, kind: &str| {
            x.ok_or_else(|| format!("synthetic spec: {prefix}arrivals={kind} needs {prefix}{key}"))
        };
        let keys = [
            ("on_ms", self.on_ms),
            ("off_ms", self.off_ms),
            ("on_share", self.on_share),
            ("b", self.b),
            ("span_s", self.span_s),
        ];
        // The first key given that `kind` does not take.
        let stray = |takes: &[&str], kind: &str| {
            keys.iter()
                .find(|(k, v)| v.is_some() && !takes.contains(k))
                .map_or(Ok(()), |(k, _)| {
                    Err(format!(
                        "synthetic spec: {prefix}{k} does not apply to {prefix}arrivals={kind}"
                    ))
                })
        };
        let Some(kind) = self.kind.as_deref() else {
            return stray(&[], "exp (give an arrivals key)").map(|()| None);
        };
        let p = match kind {
            "exp" | "const" => {
                stray(&[], kind)?;
                if kind == "exp" {
                    Process::Poisson
                } else {
                    Process::Constant
                }
            }
            "onoff" => {
                stray(&["on_ms", "off_ms", "on_share"], kind)?;
                Process::OnOff {
                    on_ms: need(self.on_ms, "on_ms", kind)?,
                    off_ms: need(self.off_ms, "off_ms", kind)?,
                    on_share: need(self.on_share, "on_share", kind)?,
                }
            }
            "bmodel" => {
                stray(&["b", "span_s"], kind)?;
                Process::BModel {
                    b: need(self.b, "b", kind)?,
                    span_s: self.span_s,
                }
            }
            other => {
                return Err(format!(
                    "synthetic spec {prefix}arrivals: expected exp, const, onoff or bmodel, found `{other}`"
                ))
            }
        };
        Ok(Some(p))
    }
}

impl FromStr for SynthSpec {
    type Err = String;
    /// Parses `key=value,...`; the keys are listed in the module doc and docs/workloads.md.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut spec = SynthSpec::default();
        let mut gap = 100.0;
        let mut procs: [ProcessKeys; 3] = Default::default();
        let mut seen = std::collections::BTreeSet::new();
        for kv in s.split(',').filter(|kv| !kv.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("synthetic spec `{kv}`: expected key=value"))?;
            let k = k.trim();
            if !seen.insert(k) {
                return Err(format!(
                    "synthetic spec: key `{k}` is given twice; give each key once"
                ));
            }
            if seen.contains("iat_us") && seen.contains("rate_iops") {
                return Err(
                    "synthetic spec: give one of iat_us and rate_iops (both set the mean gap)"
                        .into(),
                );
            }
            let num = |v: &str| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("synthetic spec {k}: expected a number, found `{v}`"))
            };
            // Counts and seeds: whole numbers (written as 100000 or 1e5), not negative, exact
            // in a double.
            // Digits are read exactly (any u64); other notations (1e5) only below 2^53, where
            // a float still holds every whole number.
            let whole = |v: &str| {
                if let Ok(n) = v.trim().parse::<u64>() {
                    return Ok(n);
                }
                let x = num(v)?;
                if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) {
                    Ok(x as u64)
                } else {
                    Err(format!(
                        "synthetic spec {k} = {}: expected a whole number >= 0 (beyond 2^53 written in digits)",
                        v.trim()
                    ))
                }
            };
            let flag = |v: &str| match v.trim() {
                "1" => Ok(true),
                "0" => Ok(false),
                v => Err(format!("synthetic spec {k} = {v}: expected 0 or 1")),
            };
            let (slot, base) = match (k.strip_prefix("read_"), k.strip_prefix("write_")) {
                (Some(b), _) if PER_DIRECTION.contains(&b) => (1, b),
                (_, Some(b)) if PER_DIRECTION.contains(&b) => (2, b),
                _ => (0, k),
            };
            let op = match slot {
                1 => Some(&mut spec.read),
                2 => Some(&mut spec.write),
                _ => None,
            };
            let p = &mut procs[slot];
            match (base, op) {
                ("arrivals", _) => p.kind = Some(v.trim().to_string()),
                ("envelope", Some(op)) => op.envelope = Some(super::Envelope::parse(k, v)?),
                ("envelope", None) => spec.envelope = Some(super::Envelope::parse(k, v)?),
                ("on_ms", _) => p.on_ms = Some(num(v)?),
                ("off_ms", _) => p.off_ms = Some(num(v)?),
                ("on_share", _) => p.on_share = Some(num(v)?),
                ("b", _) => p.b = Some(num(v)?),
                ("span_s", _) => p.span_s = Some(num(v)?),
                ("zipf", Some(op)) => op.zipf = Some(num(v)?),
                ("footprint_gib", Some(op)) => op.footprint_gib = Some(num(v)?),
                ("size_kib", Some(op)) => op.sizes = Some(Sizes::parse(k, v)?),
                ("seq", Some(op)) => op.seq = Some(num(v)?),
                ("hot_gib", Some(op)) => op.hot_gib = Some(num(v)?),
                ("hot_share", Some(op)) => op.hot_share = Some(num(v)?),
                ("hot_drift", Some(op)) => op.hot_drift = Some(num(v)?),
                ("fresh", Some(op)) => op.fresh = flag(v)?,
                ("start_residues", Some(op)) => {
                    op.start_residues = Some(super::Residues::parse(k, v)?);
                }
                ("hot_gib", None) => spec.hot_gib = num(v)?,
                ("hot_share", None) => spec.hot_share = num(v)?,
                ("hot_drift", None) => spec.hot_drift = num(v)?,
                ("batch", Some(op)) => op.batch = Some(num(v)?),
                ("batch_us", Some(op)) => op.batch_us = Some(num(v)?),
                ("batch_shape", Some(op)) => op.batch_shape = Some(num(v)?),
                ("batch_shape", None) => spec.batch_shape = num(v)?,
                ("batch", None) => spec.batch = num(v)?,
                ("batch_us", None) => spec.batch_us = num(v)?,
                ("cobatch", None) => spec.cobatch = num(v)?,
                ("cobatch_raw", None) => spec.cobatch_raw = num(v)?,
                ("requests", None) => spec.requests = whole(v)?,
                ("write_ratio", None) => spec.write_ratio = num(v)?,
                ("size_kib", None) => {
                    let s = Sizes::parse(k, v)?;
                    spec.size_kib = s.kib;
                    spec.size_weights = s.weights;
                }
                ("iat_us", None) => gap = num(v)?,
                ("rate_iops", None) => {
                    let rate = num(v)?;
                    if !(rate.is_finite() && rate > 0.0) {
                        return Err(format!(
                            "synthetic spec rate_iops = {}: must be > 0",
                            v.trim()
                        ));
                    }
                    gap = 1e6 / rate;
                }
                ("footprint_gib", None) => spec.footprint_gib = num(v)?,
                ("zipf", None) => spec.zipf = num(v)?,
                ("seq", None) => spec.seq = num(v)?,
                ("rw_mix", None) => spec.rw_mix = num(v)?,
                ("apart", None) => spec.apart = flag(v)?,
                ("reread", None) => spec.reread = num(v)?,
                ("reread_dist", None) => spec.reread_dist = num(v)?,
                ("reread_inside", None) => spec.reread_inside = num(v)?,
                ("reread_gap_us", None) => spec.reread_gap_us = num(v)?,
                ("reread_gap_sigma", None) => spec.reread_gap_sigma = num(v)?,
                ("reread_envelope", None) => {
                    spec.reread_envelope = Some(super::Envelope::parse(k, v)?);
                }
                ("rider_envelope", None) => {
                    spec.rider_envelope = Some(super::Envelope::parse(k, v)?);
                }
                ("raw", None) => spec.raw = num(v)?,
                ("rewrite", None) => spec.rewrite = num(v)?,
                ("rewrite_shape", None) => spec.rewrite_shape = num(v)?,
                ("start_residues", None) => {
                    spec.start_residues = Some(super::Residues::parse(k, v)?);
                }
                ("raw_dist", None) => spec.raw_dist = num(v)?,
                ("dist_sigma", None) => spec.dist_sigma = num(v)?,
                ("dedup", None) => spec.dedup = num(v)?,
                ("dup_zipf", None) => spec.dup_zipf = num(v)?,
                ("dup_pool", None) => spec.dup_pool = num(v)?,
                ("dup_reads", None) => spec.dup_reads = num(v)?,
                ("seed", None) => spec.seed = whole(v)?,
                _ => {
                    return Err(format!(
                        "synthetic spec: unknown key `{k}` (known: {KNOWN})"
                    ))
                }
            }
        }
        let global = procs[0].build("")?;
        spec.arrivals = if global == Some(Process::Constant) {
            Arrivals::Constant(gap)
        } else {
            Arrivals::Exponential(gap)
        };
        spec.burst = global.filter(|p| !matches!(p, Process::Poisson | Process::Constant));
        spec.read.arrivals = procs[1].build("read_")?;
        spec.write.arrivals = procs[2].build("write_")?;
        spec.validate()?;
        Ok(spec)
    }
}

/// Writes a process's keys with `prefix`.
fn write_process(f: &mut fmt::Formatter<'_>, prefix: &str, p: &Process) -> fmt::Result {
    write!(f, ",{prefix}arrivals={}", p.name())?;
    match *p {
        Process::Poisson | Process::Constant => Ok(()),
        Process::OnOff {
            on_ms,
            off_ms,
            on_share,
        } => write!(
            f,
            ",{prefix}on_ms={on_ms},{prefix}off_ms={off_ms},{prefix}on_share={on_share}"
        ),
        Process::BModel { b, span_s } => {
            write!(f, ",{prefix}b={b}")?;
            match span_s {
                Some(s) => write!(f, ",{prefix}span_s={s}"),
                None => Ok(()),
            }
        }
    }
}

/// The canonical spec: every key that differs from its default (and always requests,
/// write_ratio, size_kib, iat_us, footprint_gib and seed), in a fixed order; it parses back
/// to the same spec.
impl fmt::Display for SynthSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = SynthSpec::default();
        let sizes = self.sizes();
        write!(
            f,
            "requests={},write_ratio={},size_kib={sizes},iat_us={}",
            self.requests,
            self.write_ratio,
            self.mean_gap_us()
        )?;
        match (&self.burst, self.arrivals) {
            (Some(p), _) => write_process(f, "", p)?,
            (None, Arrivals::Constant(_)) => f.write_str(",arrivals=const")?,
            (None, Arrivals::Exponential(_)) => {}
        }
        for (key, x, default) in [
            ("batch", self.batch, d.batch),
            ("batch_us", self.batch_us, d.batch_us),
            ("batch_shape", self.batch_shape, d.batch_shape),
        ] {
            if x != default {
                write!(f, ",{key}={x}")?;
            }
        }
        if let Some(e) = &self.envelope {
            write!(f, ",envelope={e}")?;
        }
        write!(f, ",footprint_gib={}", self.footprint_gib)?;
        if self.apart {
            write!(f, ",apart=1")?;
        }
        for (key, x, default) in [
            ("zipf", self.zipf, d.zipf),
            ("seq", self.seq, d.seq),
            ("rw_mix", self.rw_mix, d.rw_mix),
            ("hot_gib", self.hot_gib, d.hot_gib),
            ("hot_share", self.hot_share, d.hot_share),
            ("hot_drift", self.hot_drift, d.hot_drift),
            ("cobatch", self.cobatch, d.cobatch),
            ("cobatch_raw", self.cobatch_raw, d.cobatch_raw),
        ] {
            if x != default {
                write!(f, ",{key}={x}")?;
            }
        }
        for (prefix, op) in [("read_", &self.read), ("write_", &self.write)] {
            if let Some(p) = &op.arrivals {
                write_process(f, prefix, p)?;
            }
            if let Some(x) = op.batch {
                write!(f, ",{prefix}batch={x}")?;
            }
            if let Some(x) = op.batch_us {
                write!(f, ",{prefix}batch_us={x}")?;
            }
            if let Some(x) = op.batch_shape {
                write!(f, ",{prefix}batch_shape={x}")?;
            }
            if let Some(e) = &op.envelope {
                write!(f, ",{prefix}envelope={e}")?;
            }
            if let Some(z) = op.zipf {
                write!(f, ",{prefix}zipf={z}")?;
            }
            if let Some(x) = op.footprint_gib {
                write!(f, ",{prefix}footprint_gib={x}")?;
            }
            if let Some(s) = &op.sizes {
                write!(f, ",{prefix}size_kib={s}")?;
            }
            if let Some(s) = op.seq {
                write!(f, ",{prefix}seq={s}")?;
            }
            if op.fresh {
                write!(f, ",{prefix}fresh=1")?;
            }
            if let Some(r) = &op.start_residues {
                write!(f, ",{prefix}start_residues={r}")?;
            }
            for (key, x) in [
                ("hot_gib", op.hot_gib),
                ("hot_share", op.hot_share),
                ("hot_drift", op.hot_drift),
            ] {
                if let Some(x) = x {
                    write!(f, ",{prefix}{key}={x}")?;
                }
            }
        }
        for (key, x, default) in [
            ("reread", self.reread, d.reread),
            ("reread_dist", self.reread_dist, d.reread_dist),
            ("reread_inside", self.reread_inside, d.reread_inside),
            ("reread_gap_us", self.reread_gap_us, d.reread_gap_us),
            (
                "reread_gap_sigma",
                self.reread_gap_sigma,
                d.reread_gap_sigma,
            ),
            ("raw", self.raw, d.raw),
            ("raw_dist", self.raw_dist, d.raw_dist),
            ("rewrite", self.rewrite, d.rewrite),
            ("rewrite_shape", self.rewrite_shape, d.rewrite_shape),
            ("dist_sigma", self.dist_sigma, d.dist_sigma),
            ("dedup", self.dedup, d.dedup),
            ("dup_zipf", self.dup_zipf, d.dup_zipf),
            ("dup_pool", self.dup_pool, d.dup_pool),
            ("dup_reads", self.dup_reads, d.dup_reads),
        ] {
            if x != default {
                write!(f, ",{key}={x}")?;
            }
        }
        if let Some(e) = &self.reread_envelope {
            write!(f, ",reread_envelope={e}")?;
        }
        if let Some(e) = &self.rider_envelope {
            write!(f, ",rider_envelope={e}")?;
        }
        if let Some(r) = &self.start_residues {
            write!(f, ",start_residues={r}")?;
        }
        write!(f, ",seed={}", self.seed)
    }
}
/// The envelope `e` of key `key` shares out `what` among the slices of the `dir` direction's
/// envelope `placed`: that envelope, or why there is none to share over (not set, or of
/// another slice count).
fn shared_over<'a>(
    (key, what): (&str, &str),
    e: &Envelope,
    dir: &str,
    placed: Option<&'a Envelope>,
) -> Result<&'a Envelope, String> {
    let placed = placed.ok_or_else(|| {
        format!(
            "{key}: it shares {what} among the slices of the {dir} envelope, so {dir}_envelope (or envelope) must be set"
        )
    })?;
    if placed.weights.len() != e.weights.len() {
        return Err(format!(
            "{key} has {} slices, the {dir} envelope {}: they must match",
            e.weights.len(),
            placed.weights.len()
        ));
    }
    Ok(placed)
}
