//! `ssdlab`: the command-line front end. All modelling lives in the `ssdlab` library.

/// Writes to stdout, returning an error instead of panicking when stdout is gone (`| head`).
/// Defined before the modules, which use it too.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*)?
    }};
}

/// `out!` with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)?
    }};
}

mod args;
mod compare;
mod experiment;
mod explain;
mod memory_args;
mod output;
mod requests_out;
mod summary_csv;
mod table;
mod timeline_out;
mod trace_cmd;

use anyhow::{Context, Result};
use args::{Cli, Command, ConfigArgs, ConfigCmd, RunArgs, SynthArgs, TraceCmd};
use clap::Parser;
use ssdlab::config::{Config, ConfigBuilder, PRESETS};
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::extend::{ExtendSpec, Extended};
use ssdlab::workload::flows::{FlowSpec, Merged};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::TraceReader;
use ssdlab::workload::Requests;
use std::io::{IsTerminal, Write};

fn main() {
    let cli = Cli::parse();
    // Killed by SIGINT or SIGTERM: the outputs being written keep their previous content and
    // leave no temporary file (exit status 130, as after an interrupt).
    let _ = ctrlc::set_handler(|| {
        ssdlab::files::remove_temporaries();
        std::process::exit(130);
    });
    if let Err(e) = dispatch(cli) {
        // A reader that stopped reading (`ssdlab trace stats … | head -1`) is not an error.
        let gone = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if gone {
            std::process::exit(0);
        }
        eprintln!("error: {}", message(&e));
        std::process::exit(2);
    }
}

/// The error and its causes, each once: a cause whose text the message already carries (a
/// library error that prints its I/O cause) is not repeated.
fn message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(a) => run(*a),
        Command::Synth(a) => synth(a),
        Command::Trace {
            cmd: TraceCmd::Stats(a),
        } => trace_cmd::stats(a),
        Command::Trace {
            cmd: TraceCmd::Fit(a),
        } => trace_cmd::fit(a),
        Command::Trace {
            cmd: TraceCmd::Extend(a),
        } => trace_cmd::extend(a),
        Command::Config {
            cmd: ConfigCmd::Show(a),
        } => {
            out!("{}", build_config(&a)?.to_toml_full());
            Ok(())
        }
        Command::Config {
            cmd: ConfigCmd::Memory(a),
        } => {
            let e = ssdlab::schemes::memory_estimate(&build_config(&a.config)?, a.verify);
            for (what, bytes) in &e.parts {
                outln!("{:>12}  {what}", ssdlab::sim::memory::mib(*bytes));
            }
            outln!("{:>12}  total", ssdlab::sim::memory::mib(e.total()));
            Ok(())
        }
        Command::Experiment { cmd } => experiment::dispatch(cmd),
        Command::RunSpec(a) => experiment::run_spec(a),
        Command::Explain {
            timeline,
            id,
            slowest,
        } => {
            out!(
                "{}",
                match (id, slowest) {
                    (Some(id), _) => explain::explain(&timeline, id)?,
                    (None, n) => explain::slowest(&timeline, n.unwrap_or(10) as usize)?,
                }
            );
            Ok(())
        }
        Command::Compare { files, json } => {
            out!("{}", compare::compare(&files, json)?);
            Ok(())
        }
        Command::Schemes { matrix } => {
            if matrix {
                out!("{}", ssdlab::schemes::matrix_markdown());
            } else {
                out!("{}", table::schemes());
            }
            Ok(())
        }
        Command::Presets => {
            for p in PRESETS {
                outln!("{:<18} {}", p.name, p.summary);
            }
            Ok(())
        }
    }
}

/// The preset without `--preset`.
const DEFAULT_PRESET: &str = "hotr";

/// The drive `a` describes (a config file's `[[flow]]` tables are a run's workload: noted).
fn build_config(a: &ConfigArgs) -> Result<Config> {
    let (cfg, flows) = build_config_flows(a)?;
    if let (false, Some(file)) = (flows.is_empty(), &a.config) {
        eprintln!(
            "note: the {} [[flow]] tables of {} describe a run's workload, not the drive",
            flows.len(),
            file.display()
        );
    }
    Ok(cfg)
}

/// The drive `a` describes and the I/O flows its config file declares.
fn build_config_flows(a: &ConfigArgs) -> Result<(Config, Vec<FlowSpec>)> {
    let preset = a.preset.as_deref().unwrap_or(DEFAULT_PRESET);
    let (b, flows) = builder(a, preset)?;
    let (cfg, notes) = b.build_noting()?;
    for n in notes {
        eprintln!("warning: {n}");
    }
    // A config file that sets everything a preset sets leaves --preset without effect.
    if let (Some(p), Some(file)) = (&a.preset, &a.config) {
        let other = if p == "tiny" { "hotr" } else { "tiny" };
        if builder(a, other)?
            .0
            .build()
            .is_ok_and(|c| c.hash() == cfg.hash())
        {
            eprintln!(
                "warning: --preset {p} has no effect: {} sets every key a preset sets (it was written by `config show`?)",
                file.display()
            );
        }
    }
    Ok((cfg, flows))
}

/// The builder of `a`'s drive on `preset`, and the flows its config file declares (trace
/// paths relative to the working directory, as `--trace` takes them).
fn builder(a: &ConfigArgs, preset: &str) -> Result<(ConfigBuilder, Vec<FlowSpec>)> {
    let mut b = ConfigBuilder::preset(preset)?;
    let mut flows = Vec::new();
    if let Some(path) = &a.config {
        b = b.overlay_file(path)?;
        if let Some(v) = b.take_flows() {
            flows = FlowSpec::from_toml(v, &path.display().to_string())?;
        }
    }
    if let Some(s) = &a.scheme {
        b = b.scheme(s);
    }
    for s in &a.set {
        b = b.set(s)?;
    }
    Ok((b, flows))
}

fn run(a: RunArgs) -> Result<()> {
    let (cfg, mut flows) = build_config_flows(&a.config)?;
    if !a.flow.is_empty() {
        if !flows.is_empty() {
            anyhow::bail!(
                "--flow: the config file declares [[flow]] tables too; give the flows in one place"
            );
        }
        flows = a
            .flow
            .iter()
            .map(|f| FlowSpec::from_arg(f).map_err(anyhow::Error::msg))
            .collect::<Result<_>>()?;
        FlowSpec::check_all(&flows).map_err(anyhow::Error::msg)?;
    }
    if !flows.is_empty() {
        for (flag, set) in [
            ("--trace", a.trace.is_some()),
            ("--synth", a.synth.is_some()),
            ("--extend", a.extend.is_some()),
        ] {
            if set {
                anyhow::bail!("{flag}: the run's workload is its flows ([[flow]] tables or --flow); give a flow's source there");
            }
        }
        a.trace_opts
            .refuse_with("flows (a flow's own keys set its trace's options)")?;
    }
    if a.alone && flows.len() < 2 {
        anyhow::bail!("--alone measures each flow's slowdown beside the others: give two or more flows ([[flow]] tables or --flow)");
    }
    let mut inputs: Vec<(&str, &std::path::Path)> = Vec::new();
    inputs.extend(a.trace.as_deref().map(|p| ("--trace", p)));
    inputs.extend(a.config.config.as_deref().map(|p| ("--config", p)));
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--json", a.json.as_deref()),
        ("--requests-out", a.requests_out.as_deref()),
        ("--summary-csv", a.summary_csv.as_deref()),
        ("--timeline", a.timeline.as_deref()),
    ]
    .into_iter()
    .filter_map(|(o, p)| p.map(|p| (o, p)))
    .collect();
    output::check_distinct(&inputs, &outputs)?;
    // Fail on an unwritable output before simulating, not after.
    let json_out = a.json.as_deref().map(output::create).transpose()?;
    if let Some(path) = &a.summary_csv {
        summary_csv::check(path)?;
    }
    let mut requests_out = a
        .requests_out
        .as_deref()
        .map(requests_out::RequestsOut::create)
        .transpose()?;
    if a.timeline.is_none() {
        for (set, flag) in [
            (
                a.timeline_limits.timeline_window.is_some(),
                "--timeline-window",
            ),
            (
                a.timeline_limits.timeline_max_events.is_some(),
                "--timeline-max-events",
            ),
        ] {
            if set {
                anyhow::bail!("{flag} limits a timeline: give --timeline FILE too");
            }
        }
    }
    let mut timeline = match a.timeline.as_deref() {
        Some(path) => Some(timeline_out::open(&cfg, &a.timeline_limits, path)?),
        None => None,
    };
    let power_loss_at_ns = match a.power_loss_at {
        Some(us) if !(us.is_finite() && us >= 0.0) => {
            anyhow::bail!("--power-loss-at {us}: must be a time >= 0 in microseconds")
        }
        us => us.map(|us| (us * 1e3).round() as u64),
    };
    let opts = RunOptions {
        seed: a.seed,
        verify: a.verify,
        power_loss_at_ns,
        max_memory_bytes: a.memory.limit()?,
        full_events: a.full_events,
        full_versions: a.full_versions,
        flows: flows.clone(),
    };
    let mut reader: Option<TraceReader> = None;
    let mut extended: Option<Extended> = None;
    let mut merged: Option<Merged> = None;
    let mut synth;
    let carries_content;
    // precondition.pre_process reads the workload once before the run.
    let mut pre_pass: Option<Box<Requests>> = None;
    let (workload, source, total): (&mut Requests, String, Total) = match (&a.trace, &a.synth) {
        (None, None) if !flows.is_empty() => {
            if cfg.precondition.pre_process {
                pre_pass = Some(Box::new(Merged::open(&flows)?));
            }
            // A trace may be FIU IODedup's (its format is known once opened).
            carries_content = flows.iter().any(|f| {
                f.trace.is_some()
                    || f.synth
                        .as_deref()
                        .and_then(|s| s.parse::<SynthSpec>().ok())
                        .is_some_and(|s| s.dedup > 0.0)
            });
            let m = merged.insert(Merged::open(&flows)?);
            let source = flows
                .iter()
                .map(FlowSpec::arg)
                .collect::<Vec<_>>()
                .join(", ");
            (m, format!("flows: {source}"), Total::Unknown)
        }
        (Some(path), None) if a.extend.is_some() => {
            let spec: ExtendSpec = a
                .extend
                .as_deref()
                .unwrap_or_default()
                .parse()
                .map_err(anyhow::Error::msg)
                .context("--extend")?;
            let open = || -> Result<Extended> {
                Ok(Extended::open(path, a.trace_opts.options()?, &spec)?)
            };
            if cfg.precondition.pre_process {
                if path.as_os_str() == "-" {
                    anyhow::bail!("--extend with precondition.pre_process reads the trace twice: give a file, not standard input");
                }
                pre_pass = Some(Box::new(open()?));
            }
            carries_content = false;
            (
                extended.insert(open()?),
                format!("{} extended: {spec}", path.display()),
                Total::Requests(spec.requests),
            )
        }
        (Some(path), None) => {
            if cfg.precondition.pre_process && path.as_os_str() != "-" {
                pre_pass = Some(Box::new(TraceReader::open(path, a.trace_opts.options()?)?));
            }
            let r = reader.insert(TraceReader::open(path, a.trace_opts.options()?)?);
            let src = format!("{} ({})", path.display(), r.format().name());
            carries_content = r.format() == ssdlab::workload::trace::Format::Fiu;
            let size = std::fs::metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            let total = match (a.trace_opts.limit, size) {
                (Some(n), _) => Total::Requests(n),
                (None, Some(bytes)) => Total::Bytes(bytes, r.consumed()),
                (None, None) => Total::Unknown,
            };
            (r, src, total)
        }
        (None, Some(spec)) => {
            a.trace_opts.refuse_with_synth()?;
            let spec: SynthSpec = spec
                .parse()
                .map_err(anyhow::Error::msg)
                .context("--synth")?;
            args::note_spec(&spec);
            synth = spec.generate().map_err(anyhow::Error::msg)?;
            if cfg.precondition.pre_process {
                pre_pass = Some(Box::new(spec.generate().map_err(anyhow::Error::msg)?));
            }
            carries_content = spec.dedup > 0.0;
            (
                &mut synth,
                format!("synthetic: {}", a.synth.as_deref().unwrap_or_default()),
                Total::Requests(spec.requests),
            )
        }
        _ => anyhow::bail!(
            "give exactly one of --trace FILE, --synth SPEC or flows (--flow, [[flow]] tables)"
        ),
    };
    if !a.quiet {
        eprintln!(
            "ssdlab {} | config {} | seed {} | {source}",
            env!("CARGO_PKG_VERSION"),
            cfg.hash(),
            a.seed
        );
    }
    let show = !a.quiet && std::io::stderr().is_terminal();
    let fill_bar = if show {
        indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "preconditioning {bar:30} {percent:>3}% of {len} pages, {elapsed} (ETA {eta})",
            )
            .expect("valid template"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let alone_opts = a.alone.then(|| opts.clone());
    let mut sim = Simulation::build(
        &cfg,
        opts,
        workload,
        pre_pass.as_deref_mut(),
        &|done, total| {
            fill_bar.set_length(total);
            fill_bar.set_position(done);
        },
    )?;
    fill_bar.finish_and_clear();
    let bar = show.then(|| total.bar());
    if let Some(b) = bar.clone() {
        sim.on_progress(Box::new(move |n| total.update(&b, n)));
    }
    if let Some(out) = requests_out.as_mut() {
        sim.on_request(Box::new(|r| out.write(r)));
    }
    if let Some(t) = timeline.as_mut() {
        sim.on_timeline(Box::new(t));
    }
    let mut summary = sim.run()?;
    if let (Some(t), Some(path)) = (timeline, a.timeline.as_deref()) {
        timeline_out::finish(t, path, a.quiet)?;
    }
    if let Some(out) = requests_out {
        let path = out.path().display().to_string();
        let rows = out.finish()?;
        if !a.quiet {
            eprintln!("wrote {rows} request records to {path}");
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(opts) = alone_opts {
        if !a.quiet {
            eprintln!("running each of the {} flows alone", flows.len());
        }
        let alone =
            ssdlab::experiment::run_alone(&cfg, &opts, &flows).map_err(anyhow::Error::msg)?;
        summary.add_alone(&alone);
    }
    summary.trace = reader.map(|r| r.counts);
    if summary.wrapped_requests > 0 {
        eprintln!(
            "warning: {} of {} requests ({:.2} %) reach beyond the drive's {:.3} GiB of logical space and were folded onto it (ftl.out_of_range = \"wrap\"); choose a larger drive (--preset) or ftl.out_of_range = \"error\"",
            summary.wrapped_requests,
            summary.requests,
            100.0 * summary.wrapped_requests as f64 / summary.requests.max(1) as f64,
            ssdlab::ftl::logical_pages(&cfg) as f64 * f64::from(cfg.geometry.page_size_bytes)
                / f64::from(1u32 << 30)
        );
    }
    if summary.dedup.is_some() && !carries_content {
        eprintln!(
            "warning: deduplication is on but the workload carries no content fingerprints (only FIU IODedup traces and --synth with dedup > 0 do): every page write counts as new content"
        );
    }
    if let Some(w) = summary.trace.as_ref().and_then(|c| c.gap_warning()) {
        eprintln!(
            "warning: {}: {w}",
            a.trace
                .as_deref()
                .unwrap_or(std::path::Path::new("-"))
                .display()
        );
    }
    if !a.quiet {
        out!("{}", table::render(&summary, &cfg));
    }
    if let Some(mut out) = json_out {
        let text = serde_json::to_string_pretty(&summary)? + "\n";
        out.write_all(text.as_bytes())
            .with_context(|| format!("writing {}", out.path().display()))?;
        output::commit(out)?;
    }
    if let Some(path) = &a.summary_csv {
        let extra = [("source", source.clone()), ("seed", a.seed.to_string())];
        summary_csv::append(path, &serde_json::to_string(&summary)?, &extra)?;
    }
    Ok(())
}

/// What the replay's progress is measured against.
enum Total {
    /// Requests (synthetic workloads, `--limit`).
    Requests(u64),
    /// Bytes of the trace file, and the reader's count of bytes taken.
    Bytes(u64, std::sync::Arc<std::sync::atomic::AtomicU64>),
    /// A pipe or stdin: no total.
    Unknown,
}

impl Total {
    fn bar(&self) -> indicatif::ProgressBar {
        let (len, template) = match self {
            Total::Requests(n) => (
                Some(*n),
                "replay {bar:30} {percent:>3}% of {len} requests, {elapsed} (ETA {eta})",
            ),
            Total::Bytes(n, _) => (
                Some(*n),
                "replay {bar:30} {percent:>3}% of the trace ({msg} requests), {elapsed} (ETA {eta})",
            ),
            Total::Unknown => (None, "{spinner} replay {elapsed}: {msg} requests done"),
        };
        let b = match len {
            Some(n) => indicatif::ProgressBar::new(n),
            None => indicatif::ProgressBar::new_spinner(),
        };
        b.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
        b
    }

    /// `done` requests are complete.
    fn update(&self, b: &indicatif::ProgressBar, done: u64) {
        match self {
            Total::Requests(_) => b.set_position(done),
            Total::Bytes(_, read) => {
                b.set_position(read.load(std::sync::atomic::Ordering::Relaxed));
                b.set_message(done.to_string());
            }
            Total::Unknown => b.set_message(done.to_string()),
        }
    }
}

fn synth(a: SynthArgs) -> Result<()> {
    output::check_distinct(&[], &[("--out", &a.out)])?;
    let spec = a.spec().map_err(anyhow::Error::msg)?;
    args::note_spec(&spec);
    let gen = spec.generate().map_err(anyhow::Error::msg)?;
    let (n, format) = if spec.dedup > 0.0 {
        (
            output::write_streamed(&a.out, |w| gen.write_fiu(w))?,
            "FIU IODedup",
        )
    } else {
        (
            output::write_streamed(&a.out, |w| gen.write_msr_csv(w))?,
            "MSR Cambridge CSV",
        )
    };
    eprintln!("wrote {n} requests to {} ({format})", a.out.display());
    Ok(())
}
