//! Command-line arguments.

use clap::{Args, Parser, Subcommand};
use ssdlab::workload::synth::{Arrivals, SynthSpec};
use std::path::PathBuf;

/// ssdlab: a trace-driven discrete-event NAND-flash SSD simulator.
#[derive(Parser, Debug)]
#[command(name = "ssdlab", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay a trace (or a synthetic workload) on a configured SSD and report.
    Run(Box<RunArgs>),
    /// Generate a synthetic workload as MSR Cambridge CSV.
    Synth(SynthArgs),
    /// Inspect traces.
    Trace {
        #[command(subcommand)]
        cmd: TraceCmd,
    },
    /// Inspect configurations.
    Config {
        #[command(subcommand)]
        cmd: ConfigCmd,
    },
    /// List the built-in presets (drives).
    Presets,
    /// List the schemes (policies) `--scheme` accepts, with what each sets.
    Schemes {
        /// Print the pair matrix (which pairs compose, which are refused and why) as Markdown.
        #[arg(long)]
        matrix: bool,
    },
    /// Declarative experiments: run, report, plan jobs, collect results.
    Experiment {
        #[command(subcommand)]
        cmd: crate::experiment::ExperimentCmd,
    },
    /// The life of one request in a `run --timeline` file: its waits, the flash operations
    /// that served it and what ran on their dies while it waited (`--slowest N` lists ids).
    Explain {
        /// A timeline written by `ssdlab run --timeline` (plain or `.gz`).
        timeline: PathBuf,
        /// The request's id (its order into the drive's queues, from 0; `--requests-out`'s
        /// `id` column).
        #[arg(required_unless_present = "slowest", conflicts_with = "slowest")]
        id: Option<u64>,
        /// List the N slowest requests in the file instead.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
        slowest: Option<u64>,
    },
    /// Run one job file written by `ssdlab experiment plan`.
    RunSpec(crate::experiment::RunSpecArgs),
    /// Headline metrics of two or more run summaries (`run --json`, or experiment results)
    /// side by side, with % differences against the first.
    Compare {
        /// Summaries; the first is the reference.
        #[arg(required = true, num_args = 2..)]
        files: Vec<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Requests, read %, mean size, footprint, duration, inter-arrival mean, and what decides
    /// interference: burstiness, popularity and reuse, page types, sizes, sequentiality.
    Stats(StatsArgs),
    /// Fit a synthetic stand-in to a trace: prints a `--synth` spec on one line (and the
    /// statistics it matches) that `run --synth`, `synth --spec` and experiments accept.
    Fit(FitArgs),
    /// Lengthen a trace by a block bootstrap of its own activity (busy periods or windows
    /// drawn with replacement, addresses shifted so the written footprint grows as the
    /// trace's own); writes MSR Cambridge CSV.
    Extend(ExtendArgs),
}

#[derive(Args, Debug)]
pub struct ExtendArgs {
    /// Trace file (plain or gzip; `-` reads standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Requests of the output.
    #[arg(long)]
    pub requests: u64,
    /// Seed of the block draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Blocks: busy periods (split at idle gaps) or fixed windows.
    #[arg(long, default_value = "busy", value_parser = ["busy", "window"])]
    pub block: String,
    /// A gap of at least this long ends a busy period (block busy), ms [default: 1].
    #[arg(long)]
    pub idle_ms: Option<f64>,
    /// Fewest requests of a busy block [default: 5 % of the trace, at least 16].
    #[arg(long)]
    pub min_block: Option<u64>,
    /// Window length (block window), ms.
    #[arg(long)]
    pub window_ms: Option<f64>,
    /// Output CSV (MSR Cambridge format).
    #[arg(long)]
    pub out: PathBuf,
}

impl ExtendArgs {
    /// The flags as an extend spec (`run --extend` syntax).
    pub fn spec(&self) -> String {
        let mut s = format!(
            "requests={},seed={},block={}",
            self.requests, self.seed, self.block
        );
        for (k, v) in [
            ("idle_ms", self.idle_ms.map(|x| x.to_string())),
            ("min_block", self.min_block.map(|x| x.to_string())),
            ("window_ms", self.window_ms.map(|x| x.to_string())),
        ] {
            if let Some(v) = v {
                s += &format!(",{k}={v}");
            }
        }
        s
    }
}

#[derive(Args, Debug)]
pub struct FitArgs {
    /// Trace file (plain or gzip; `-` reads standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Requests of the stand-in (default: the trace's count); the arrival process repeats
    /// over windows of the trace's duration.
    #[arg(long)]
    pub requests: Option<u64>,
    /// Seed of the stand-in.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Indirect-inference rounds (0: the direct estimates only).
    #[arg(long, default_value_t = 6)]
    pub rounds: usize,
    /// Also write the spec as TOML (`synth = "…"`, with the fit's evidence as comments).
    #[arg(long, value_name = "SPEC.toml")]
    pub out: Option<PathBuf>,
    /// Print JSON (the spec, the arrival choices, the residuals and the checks).
    #[arg(long)]
    pub json: bool,
    /// Print the spec even when the stand-in misses a first-order statistic of the trace or a
    /// process parameter is degenerate (marked as failed; the exit status is then 0).
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand, Debug)]
pub enum ConfigCmd {
    /// Print the fully resolved configuration as TOML (every key --set accepts).
    Show(ConfigArgs),
    /// Estimate a run's memory by part (what `--max-memory` is checked against).
    Memory(MemoryEstimateArgs),
}

#[derive(Args, Debug, Clone)]
pub struct MemoryEstimateArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Estimate a run with --verify or --full-versions (a version beside every mapping entry).
    #[arg(long)]
    pub verify: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ConfigArgs {
    /// Preset to start from (see `ssdlab presets`). The default, `hotr`, is a 40 GiB TLC drive
    /// from a paper (hotr.txt Table II), empty unless `precondition.*` is set; `tiny` is for
    /// tests.
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<String>,
    /// TOML file overlaid on the preset.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Scheme(s) to run, composed with `+` (e.g. hotr, hotr+ipc, sgc+ips); overrides a
    /// config file's `scheme`; `--set` still overrides its values. `ssdlab schemes` lists
    /// them with what they set: baseline, hotr, dedup, deduphr, rails, ttflash, ggc,
    /// greedy-delay, greedy-separation, zgc, hgc, dgc, sgc, gc-preempt, hvc, lvc, hire, rps,
    /// per, pe0, erase-suspend, ips, ipc, optimal.
    #[arg(long, value_name = "NAME[+NAME...]")]
    pub scheme: Option<String>,
    /// Override one key, e.g. --set ftl.gc_victim=cost-benefit (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Trace format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "msr", "spc", "fiu", "disksim", "flashnet", "blktrace", "vscsi", "vscsi-bin"])]
    pub format: String,
    /// blkparse events that become requests: D (dispatched, default), Q (queued) or C.
    #[arg(long, value_parser = ["Q", "D", "C"])]
    pub blk_action: Option<String>,
    /// Unit of DiskSim-style timestamps (default: ms with a decimal point, else ns).
    #[arg(long, value_parser = ["s", "ms", "us", "ns", "auto"])]
    pub time_unit: Option<String>,
    /// Use only the first N requests (after --skip).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Leave out the first N requests; times count from the first one kept (with --limit:
    /// any part of a trace, e.g. its second half).
    #[arg(long, default_value_t = 0)]
    pub skip: u64,
    /// Keep only requests of this disk number / ASU / device.
    #[arg(long)]
    pub device: Option<u32>,
    /// Skip malformed lines (they are counted) instead of stopping.
    #[arg(long)]
    pub lenient: bool,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Trace file (plain or gzip; `-` reads standard input).
    #[arg(required_unless_present = "synth", conflicts_with = "synth")]
    pub file: Option<PathBuf>,
    /// Profile a synthetic workload (the `--synth` syntax) instead of a trace.
    #[arg(long, value_name = "SPEC")]
    pub synth: Option<String>,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Also simulate the trace on this preset and report its idle fraction (time with no
    /// request outstanding, first arrival to last completion).
    #[arg(long)]
    pub preset: Option<String>,
    /// Overrides for the idle-fraction simulation (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "preset")]
    pub set: Vec<String>,
    /// Find the host.time_scale that brings the idle fraction to this percentage (e.g. 70).
    #[arg(long, requires = "preset")]
    pub target_idle: Option<f64>,
    /// Seed for the idle-fraction simulations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Trace file (plain or gzip; `-` reads standard input).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub trace_opts: TraceArgs,
    /// Lengthen the trace by a block bootstrap (`ssdlab trace extend`), e.g.
    /// requests=1e6,seed=2 (keys: requests, seed, block=busy|window, idle_ms, min_block,
    /// window_ms).
    #[arg(long, value_name = "SPEC", requires = "trace")]
    pub extend: Option<String>,
    /// Synthetic workload instead of a trace, e.g. requests=1e5,write_ratio=0.6,size_kib=4|8,iat_us=50,footprint_gib=4,zipf=0.9
    #[arg(long, value_name = "SPEC")]
    pub synth: Option<String>,
    /// One I/O flow (tenant) of several sharing the drive, each in its own logical space with
    /// its own results: NAME=trace:FILE or NAME=synth:SPEC (repeatable; instead of --trace or
    /// --synth). A config file's `[[flow]]` tables also set start_us and time_scale.
    #[arg(long, value_name = "NAME=trace:FILE|NAME=synth:SPEC", conflicts_with_all = ["trace", "synth"])]
    pub flow: Vec<String>,
    /// With several flows: also run each flow alone on the same drive and report each flow's
    /// slowdown (mean response time shared ÷ alone) and the run's fairness (smallest slowdown
    /// ÷ largest).
    #[arg(long)]
    pub alone: bool,
    /// Master seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Check read versions and mapping invariants during the run.
    #[arg(long)]
    pub verify: bool,
    /// Schedule every phase's event, also those the simulator leaves out while nothing can
    /// observe them: slower, same results (a cross-check of that optimisation).
    #[arg(long)]
    pub full_events: bool,
    /// Keep a version beside every mapping entry also without --verify: more memory, same
    /// results (a cross-check of the sparse version records).
    #[arg(long)]
    pub full_versions: bool,
    /// Simulate a power loss at this simulated time, µs: volatile replication state (HotR /
    /// DedupHR Map_table, R-LRU lists, staging copies) is lost and the run goes on.
    #[arg(long, value_name = "US", allow_negative_numbers = true)]
    pub power_loss_at: Option<f64>,
    /// Write the JSON summary here.
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Append the summary as one CSV row (columns: `source`, `seed`, then the JSON keys
    /// flattened with dots; CDFs left out); a new file gets the header.
    #[arg(long, value_name = "FILE.csv")]
    pub summary_csv: Option<PathBuf>,
    /// Write one CSV row per completed request (arrival, op, offset, size, response time and
    /// its parts; gzip when FILE ends in `.gz`), streamed as the run goes.
    #[arg(long, value_name = "FILE.csv[.gz]")]
    pub requests_out: Option<PathBuf>,
    /// Write the run's timeline as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev)
    /// opens: every flash operation on its die's track, bus transfers, requests with their
    /// waits (gzip when FILE ends in `.gz`), streamed as the run goes.
    #[arg(long, value_name = "FILE.json[.gz]")]
    pub timeline: Option<PathBuf>,
    #[command(flatten)]
    pub timeline_limits: crate::timeline_out::TimelineLimits,
    #[command(flatten)]
    pub memory: crate::memory_args::MemoryArgs,
    /// No banner, table or progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Output CSV (MSR Cambridge format).
    #[arg(long)]
    pub out: PathBuf,
    /// The whole workload as a `--synth` spec (every key, including bursts, per-direction
    /// popularity and locality; e.g. what `ssdlab trace fit` prints); the other workload
    /// options below are then refused.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["requests", "write_ratio", "size_kib", "iat_us", "rate_iops", "constant", "footprint_gib", "zipf", "seq", "rw_mix", "dedup", "dup_zipf", "dup_pool", "dup_reads", "seed"])]
    pub spec: Option<String>,
    /// Number of requests.
    #[arg(long, default_value_t = 100_000)]
    pub requests: u64,
    /// Fraction of writes.
    #[arg(long, default_value_t = 0.5)]
    pub write_ratio: f64,
    /// Request sizes in KiB, chosen uniformly (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "4")]
    pub size_kib: Vec<u32>,
    /// Mean inter-arrival gap, µs.
    #[arg(long, default_value_t = 100.0, conflicts_with = "rate_iops")]
    pub iat_us: f64,
    /// Arrival rate (alternative to --iat-us), requests per second.
    #[arg(long)]
    pub rate_iops: Option<f64>,
    /// Constant gaps instead of exponential (Poisson) ones.
    #[arg(long)]
    pub constant: bool,
    /// Address range, GiB.
    #[arg(long, default_value_t = 1.0)]
    pub footprint_gib: f64,
    /// Zipf exponent over 4 KiB pages (0 = uniform).
    #[arg(long, default_value_t = 0.0)]
    pub zipf: f64,
    /// Fraction of requests continuing the previous one.
    #[arg(long, default_value_t = 0.0)]
    pub seq: f64,
    /// Share of writes that hit the same hot pages as reads (below 1: disjoint hot sets).
    #[arg(long, default_value_t = 1.0)]
    pub rw_mix: f64,
    /// Probability that a write carries shared (deduplicable) content; above 0 the output is
    /// in FIU IODedup format, which keeps a content hash per request.
    #[arg(long, default_value_t = 0.0)]
    pub dedup: f64,
    /// Zipf exponent over the pool of shared contents.
    #[arg(long, default_value_t = 1.0)]
    pub dup_zipf: f64,
    /// Shared contents, as a fraction of the footprint's pages.
    #[arg(long, default_value_t = 0.01)]
    pub dup_pool: f64,
    /// Probability that a read goes where a recent shared-content write went.
    #[arg(long, default_value_t = 0.0)]
    pub dup_reads: f64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl SynthArgs {
    pub fn spec(&self) -> Result<SynthSpec, String> {
        if let Some(spec) = &self.spec {
            return spec.parse();
        }
        let gap = self.rate_iops.map_or(self.iat_us, |r| 1e6 / r);
        let spec = SynthSpec {
            requests: self.requests,
            write_ratio: self.write_ratio,
            size_kib: self.size_kib.clone(),
            arrivals: if self.constant {
                Arrivals::Constant(gap)
            } else {
                Arrivals::Exponential(gap)
            },
            footprint_gib: self.footprint_gib,
            zipf: self.zipf,
            seq: self.seq,
            rw_mix: self.rw_mix,
            dedup: self.dedup,
            dup_zipf: self.dup_zipf,
            dup_pool: self.dup_pool,
            dup_reads: self.dup_reads,
            seed: self.seed,
            ..SynthSpec::default()
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// Prints the keys of a synthetic spec that change nothing.
pub fn note_spec(spec: &SynthSpec) {
    for n in spec.notes() {
        eprintln!("warning: synthetic spec: {n}");
    }
}

impl TraceArgs {
    /// Refuses the options that read a trace when the workload is `--synth SPEC` (they would be
    /// ignored): its spec says how many requests and of what.
    pub fn refuse_with_synth(&self) -> anyhow::Result<()> {
        self.refuse_with("--synth")
    }

    /// Refuses the trace-reading flags given beside `what` (a source that reads no trace).
    ///
    /// # Errors
    /// The first such flag.
    pub fn refuse_with(&self, what: &str) -> anyhow::Result<()> {
        let set = [
            (
                "--limit",
                self.limit.is_some(),
                " (the spec's requests=N sets the count)",
            ),
            ("--device", self.device.is_some(), ""),
            ("--skip", self.skip > 0, ""),
            ("--format", self.format != "auto", ""),
            ("--time-unit", self.time_unit.is_some(), ""),
            ("--blk-action", self.blk_action.is_some(), ""),
            ("--lenient", self.lenient, ""),
        ];
        if let Some((flag, _, hint)) = set.iter().find(|s| s.1) {
            anyhow::bail!("{flag} reads a trace; it has no effect with {what}{hint}");
        }
        Ok(())
    }

    /// The reader's options these flags ask for.
    pub fn options(&self) -> anyhow::Result<ssdlab::workload::trace::TraceOptions> {
        if self.limit == Some(0) {
            anyhow::bail!("--limit 0: must be >= 1 (a run of no requests measures nothing)");
        }
        Ok(ssdlab::workload::trace::TraceOptions {
            format: match self.format.as_str() {
                "auto" => None,
                f => Some(f.parse().map_err(anyhow::Error::msg)?),
            },
            time_unit: self
                .time_unit
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(anyhow::Error::msg)?,
            limit: self.limit,
            skip: self.skip,
            device: self.device,
            lenient: self.lenient,
            blk_action: self
                .blk_action
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(anyhow::Error::msg)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn scheme_help_names_every_registered_scheme() {
        let mut cmd = super::Cli::command();
        let help = cmd
            .find_subcommand_mut("run")
            .expect("run exists")
            .render_long_help()
            .to_string()
            .replace(['\n', ' '], "");
        for s in ssdlab::schemes::SCHEMES {
            assert!(help.contains(s.name), "run --help does not name {}", s.name);
        }
    }
}
