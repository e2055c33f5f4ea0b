//! `ssdlab trace stats`, `ssdlab trace fit` and `ssdlab trace extend`.

use crate::args::{ExtendArgs, FitArgs, StatsArgs};
use anyhow::{Context, Result};
use ssdlab::experiment::WorkloadRef;
use ssdlab::workload::extend::{ExtendSpec, Extended};
use ssdlab::workload::fit::{self, FitOptions};
use ssdlab::workload::profile::{Percentiles, Profile, SizeShare};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::trace::{self, TraceReader, TraceStats};
use std::fmt::Write as _;
use std::path::Path;

/// Idle fraction of the trace on a drive, and the time scale reaching a target, as JSON.
fn idle_report(a: &StatsArgs) -> Result<Option<serde_json::Value>> {
    let Some(preset) = &a.preset else {
        return Ok(None);
    };
    ssdlab::calibrate::check(preset, &a.set)?;
    let source = match (&a.file, &a.synth) {
        (Some(path), _) => WorkloadRef::Trace {
            path: path.clone(),
            format: (a.trace.format != "auto").then(|| a.trace.format.clone()),
            limit: a.trace.limit,
            skip: a.trace.skip,
            device: a.trace.device,
            extend: None,
        },
        (None, Some(spec)) => WorkloadRef::Synth { spec: spec.clone() },
        (None, None) => anyhow::bail!("give a trace file or --synth SPEC"),
    };
    if let Some(target) = a.target_idle.filter(|t| !(0.0..100.0).contains(t)) {
        let shown = if target.abs() < 1e6 {
            target.to_string()
        } else {
            format!("{target:e}")
        };
        anyhow::bail!(
            "--target-idle {shown}: must be a percentage in [0, 100) (the idle share of the run's time)"
        );
    }
    let idle = ssdlab::calibrate::idle_pct(preset, &a.set, &source, a.seed)?;
    let mut v = serde_json::json!({ "preset": preset, "sets": a.set, "idle_pct": idle });
    if let Some(target) = a.target_idle {
        let (best, probes) =
            ssdlab::calibrate::scale_for_idle(preset, &a.set, &source, a.seed, target)?;
        v["time_scale_for_target"] = serde_json::json!({
            "time_scale": best.value, "idle_pct": best.metric, "target_pct": target
        });
        let pairs: Vec<(f64, f64)> = probes.iter().map(|p| (p.value, p.metric)).collect();
        v["probes"] = serde_json::json!(pairs);
    }
    Ok(Some(v))
}

/// The statistics of the trace or synthetic spec `a` names.
fn summary(
    file: Option<&Path>,
    synth: Option<&str>,
    a: &crate::args::TraceArgs,
) -> Result<TraceStats> {
    match (file, synth) {
        (Some(path), _) => {
            let reader = TraceReader::open(path, a.options()?)?;
            Ok(trace::stats(reader)?)
        }
        (None, Some(spec)) => {
            a.refuse_with_synth()?;
            let spec: SynthSpec = spec
                .parse()
                .map_err(anyhow::Error::msg)
                .context("--synth")?;
            crate::args::note_spec(&spec);
            let gen = spec.generate().map_err(anyhow::Error::msg)?;
            Ok(trace::summarise(gen, "synthetic".into())?)
        }
        (None, None) => anyhow::bail!("give a trace file or --synth SPEC"),
    }
}

pub fn stats(a: StatsArgs) -> Result<()> {
    let s = summary(a.file.as_deref(), a.synth.as_deref(), &a.trace)?;
    let idle = idle_report(&a)?;
    if a.json {
        let mut v = serde_json::to_value(&s)?;
        if let Some(idle) = idle {
            v["idle"] = idle;
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let mut o = String::new();
    let name = a.file.as_ref().map_or_else(
        || format!("synthetic: {}", a.synth.as_deref().unwrap_or("")),
        |p| p.display().to_string(),
    );
    writeln!(o, "trace              {name}")?;
    writeln!(o, "format             {}", s.format)?;
    writeln!(o, "requests           {}", s.requests)?;
    writeln!(o, "read %             {:.2}", s.read_pct)?;
    writeln!(o, "mean size          {:.0} B", s.mean_size_bytes)?;
    writeln!(
        o,
        "footprint          {:.3} GiB (distinct 4 KiB blocks)",
        s.footprint_bytes as f64 / 1073741824.0
    )?;
    writeln!(
        o,
        "address span       {} .. {} B",
        s.min_offset_bytes, s.max_end_bytes
    )?;
    writeln!(o, "duration           {:.3} s", s.duration_s)?;
    writeln!(o, "inter-arrival mean {:.3} us", s.mean_interarrival_us)?;
    let c = &s.counts;
    writeln!(
        o,
        "skipped lines      {} framing, {} malformed, {} zero-size, {} other devices{}; {} timestamps clamped",
        c.skipped_framing, c.skipped_malformed, c.skipped_zero_size, c.filtered_device, c.skip_note(), c.clamped_timestamps
    )?;
    write_profile(&mut o, &s.profile)?;
    if let Some(idle) = &idle {
        writeln!(
            o,
            "idle ({})      {:.2} % at time_scale 1",
            idle["preset"].as_str().unwrap_or(""),
            idle["idle_pct"].as_f64().unwrap_or(0.0)
        )?;
        if let Some(best) = idle.get("time_scale_for_target") {
            writeln!(
                o,
                "time_scale         {:.6} gives {:.2} % idle (target {:.2} %); use --set host.time_scale={:.6}",
                best["time_scale"].as_f64().unwrap_or(0.0),
                best["idle_pct"].as_f64().unwrap_or(0.0),
                a.target_idle.unwrap_or(0.0),
                best["time_scale"].as_f64().unwrap_or(0.0)
            )?;
        }
    }
    out!("{o}");
    Ok(())
}

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

fn pcts(p: &Percentiles) -> String {
    if p.count == 0 {
        "-".into()
    } else {
        format!("{}/{}/{}", p.p50, p.p90, p.p99)
    }
}

fn sizes(v: &[SizeShare], other: f64) -> String {
    let mut parts: Vec<String> = v
        .iter()
        .filter(|s| s.pct >= 0.5)
        .map(|s| format!("{}:{:.1}", s.kib, s.pct))
        .collect();
    let small: f64 = v.iter().filter(|s| s.pct < 0.5).map(|s| s.pct).sum::<f64>() + other;
    if small > 0.0 {
        parts.push(format!("other:{small:.1}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

/// The interference-relevant statistics as text (docs/workloads.md defines each).
fn write_profile(o: &mut String, p: &Profile) -> Result<()> {
    if let Some(why) = &p.page_level_skipped {
        writeln!(o, "page statistics    not computed: {why}")?;
    }
    let b = &p.burstiness;
    let scales: Vec<String> = b
        .scales_ms
        .iter()
        .map(|ms| {
            if *ms >= 1000.0 {
                format!("{} s", ms / 1000.0)
            } else {
                format!("{ms} ms")
            }
        })
        .collect();
    writeln!(
        o,
        "burstiness         IDC at {}; empty 1 ms windows; b-model b; Hurst H; runs (< 1 ms apart): mean, as a request sees them (± the excess's standard error)",
        scales.join(" / ")
    )?;
    for (name, c) in [("all", &b.all), ("read", &b.read), ("write", &b.write)] {
        let idc: Vec<String> = c.idc.iter().map(|i| opt(*i, 2)).collect();
        writeln!(
            o,
            "  {name:<6} {:>8} req  IDC {}  empty {} %  b {}  H {}  runs {} / {} (± {})",
            c.requests,
            idc.join(" / "),
            opt(c.empty_1ms_pct, 1),
            opt(c.bmodel_b, 3),
            opt(c.hurst, 2),
            opt(c.run_mean, 2),
            opt(c.run_seen_mean, 2),
            opt(c.run_excess_se, 2)
        )?;
    }
    let bi = &b.busy_idle;
    writeln!(
        o,
        "busy/idle (1 ms)   idle {:.1} % of windows; {} busy periods, mean {:.2} ms; mean idle {:.2} ms, longest {:.0} ms",
        bi.idle_pct, bi.busy_periods, bi.mean_busy_ms, bi.mean_idle_ms, bi.max_idle_ms
    )?;
    let k = &b.coupling;
    writeln!(
        o,
        "reads near writes  {} % within 1 ms, {} % within 10 ms after a write; {} % of those within 1 ms read a page written then",
        opt(k.read_within_1ms_of_write_pct, 2),
        opt(k.read_within_10ms_of_write_pct, 2),
        opt(k.near_reads_of_written_pct, 1)
    )?;
    // Past the profile's page cap these are not measured (not zero): one line says so.
    if p.page_level_skipped.is_none() {
        write_page_level(o, p)?;
    } else {
        writeln!(
            o,
            "pages, re-reads, reads after writes, page types: not measured (see page statistics above)"
        )?;
    }
    writeln!(
        o,
        "read sizes (KiB:%) {}",
        sizes(&p.sizes.read, p.sizes.read_other_pct)
    )?;
    writeln!(
        o,
        "write sizes        {}",
        sizes(&p.sizes.write, p.sizes.write_other_pct)
    )?;
    let q = &p.sequentiality;
    writeln!(
        o,
        "sequential         {:.1} % of requests, {:.1} % of reads after reads, {:.1} % of writes after writes",
        q.all_pct, q.read_pct, q.write_pct
    )?;
    let r = &p.start_residues;
    for (name, shares) in [
        ("all", &r.all_pct),
        ("read", &r.read_pct),
        ("write", &r.write_pct),
    ] {
        if !shares.is_empty() {
            let s: Vec<String> = shares.iter().map(|x| format!("{x:.1}")).collect();
            writeln!(o, "start pages mod 16 (%), {name:<5} {}", s.join(" "))?;
        }
    }
    Ok(())
}

/// Popularity, reuse and page types (measured below the profile's page cap).
fn write_page_level(o: &mut String, p: &Profile) -> Result<()> {
    for (name, q) in [("read", &p.read_popularity), ("write", &p.write_popularity)] {
        writeln!(
            o,
            "{name:<5} pages        {} ({:.4} GiB) from {} accesses; Zipf {}; hottest 1 % get {:.1} %",
            q.pages,
            q.footprint_gib,
            q.accesses,
            opt(q.zipf, 3),
            q.top1_pct
        )?;
    }
    let u = &p.reuse;
    writeln!(
        o,
        "re-reads           {:.1} % of reads ({:.1} start inside an earlier read, {:.1} continue the read before; gap p50/p90/p99 {} reads, {} µs); {:.1} % of read pages, stack distance {} pages",
        u.reread_pct,
        u.reread_inside_pct,
        u.reread_onward_pct,
        pcts(&u.reread_gap_requests),
        pcts(&u.reread_gap_us),
        u.reread_page_pct,
        pcts(&u.reread_stack_distance)
    )?;
    writeln!(
        o,
        "reads after writes {:.1} % of reads (gap p50/p90/p99 {} writes)",
        u.read_after_write_pct,
        pcts(&u.raw_gap_requests)
    )?;
    writeln!(
        o,
        "re-writes          {:.1} % of writes start on a page the write before wrote; runs of one page {} (as a write sees them {} ± {})",
        u.rewrite_pct,
        opt(u.rewrite_run_mean, 2),
        opt(u.rewrite_run_seen_mean, 2),
        opt(u.rewrite_run_excess_se, 2)
    )?;
    writeln!(
        o,
        "near re-writes     {:.1} % of writes under 1 ms after the write before start on a page one of the 2nd-16th writes before wrote",
        u.rewrite_near_pct
    )?;
    if !u.write_footprint_growth_pct.is_empty() {
        let g: Vec<String> = u
            .write_footprint_growth_pct
            .iter()
            .map(|x| format!("{x:.0}"))
            .collect();
        writeln!(
            o,
            "write footprint    % of its final size after each tenth of the writes: {}",
            g.join(" ")
        )?;
    }
    let t = &p.page_types;
    writeln!(
        o,
        "page types         read-only {:.1} %, write-only {:.1} %, mixed {:.1} %; hotr.txt's >90 % rule: RI {:.1} %, WI {:.1} %, MIX {:.1} %",
        t.read_only_pct, t.write_only_pct, t.mixed_pct, t.ri_pct, t.wi_pct, t.mix_pct
    )?;
    Ok(())
}

pub fn fit(a: FitArgs) -> Result<()> {
    if let Some(out) = &a.out {
        crate::output::check_distinct(&[("TRACE", &a.file)], &[("--out", out)])?;
    }
    let s = summary(Some(&a.file), None, &a.trace)?;
    let opts = FitOptions {
        requests: a.requests,
        seed: a.seed,
        rounds: a.rounds,
    };
    let topts = a.trace.options()?;
    let open = || TraceReader::open(&a.file, topts.clone()).map_err(|e| e.to_string());
    // Standard input cannot be read again.
    let again = (a.file != Path::new("-")).then_some(&open as &dyn Fn() -> _);
    let (f, choice) = fit::fit_workload(&s.profile, again, &opts)
        .with_context(|| format!("fitting {}", a.file.display()))?;
    match (&choice.enveloped, &choice.enveloped_misses) {
        (true, Ok(n)) => eprintln!(
            "fitted with activity envelopes ({n} of {} checks missed; without them {})",
            f.checks.len(),
            choice.plain_misses
        ),
        (false, Ok(n)) => eprintln!(
            "fitted without activity envelopes ({} checks missed; with them {n})",
            choice.plain_misses
        ),
        (false, Err(why)) if choice.plain_misses > 0 => eprintln!(
            "fitted without activity envelopes ({} checks missed; with them: {why})",
            choice.plain_misses
        ),
        _ => {}
    }
    let failed = f.failure().unwrap_or_default();
    if !failed.is_empty() && !a.force {
        eprint!("{}", checks_table(&f)?);
        let stdin = if a.file == Path::new("-") {
            " (read from standard input, the trace could not be read again for activity envelopes: give the file)"
        } else {
            ""
        };
        anyhow::bail!(
            "{}: {failed}{stdin}; no spec printed (--force prints it anyway, marked as failed)",
            a.file.display()
        );
    }
    if let Some(out) = &a.out {
        let mut t = format!(
            "# ssdlab trace fit {} ({} start, round {} of {}; seed {})\n",
            a.file.display(),
            f.popularity,
            f.round,
            a.rounds,
            a.seed
        );
        if !failed.is_empty() {
            writeln!(t, "# FAILED (printed with --force): {failed}")?;
        }
        t.push_str("# statistic: trace -> stand-in\n");
        for r in &f.residuals {
            writeln!(t, "#   {}: {:.4} -> {:.4}", r.statistic, r.target, r.fitted)?;
        }
        writeln!(t, "synth = {}", toml::Value::String(f.spec.clone()))?;
        crate::output::write_whole(out, t.as_bytes())?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&f)?);
        return Ok(());
    }
    let mut o = String::new();
    writeln!(o, "{}", f.spec)?;
    let mut e = String::new();
    if !failed.is_empty() {
        writeln!(e, "FAILED (printed with --force): {failed}")?;
    }
    for c in &f.arrivals {
        let cands: Vec<String> = c
            .rms_log_idc
            .iter()
            .map(|(n, x)| format!("{n} {x:.3}"))
            .collect();
        writeln!(
            e,
            "{} arrivals: {} (RMS error of ln IDC: {})",
            c.direction,
            c.chosen,
            cands.join(", ")
        )?;
    }
    writeln!(
        e,
        "statistic                                   trace    stand-in   ({} start, round {} of {})",
        f.popularity, f.round, a.rounds
    )?;
    for r in &f.residuals {
        writeln!(
            e,
            "  {:<40} {:>9.4} {:>10.4}",
            r.statistic, r.target, r.fitted
        )?;
    }
    e.push_str(&checks_table(&f)?);
    out!("{o}");
    eprint!("{e}");
    Ok(())
}

/// The fit's checks, one per line with its verdict, then the overall verdict.
fn checks_table(f: &fit::Fit) -> Result<String> {
    let mut e = String::new();
    writeln!(
        e,
        "check                                                  trace   stand-in  bound           verdict"
    )?;
    for c in &f.checks {
        writeln!(
            e,
            "  {:<50} {:>9} {:>10}  {:<15} {}",
            c.statistic,
            fit::shown(c.trace),
            fit::shown(c.stand_in),
            c.bound,
            if c.ok { "ok" } else { "MISSED" }
        )?;
    }
    let missed = f.misses().len();
    writeln!(
        e,
        "overall: {}",
        if missed == 0 {
            "every check met".to_string()
        } else {
            format!("{missed} of {} checks missed", f.checks.len())
        }
    )?;
    Ok(e)
}

/// `ssdlab trace extend`: the block bootstrap written as MSR Cambridge CSV.
pub fn extend(a: ExtendArgs) -> Result<()> {
    crate::output::check_distinct(&[("TRACE", &a.file)], &[("--out", &a.out)])?;
    let spec: ExtendSpec = a.spec().parse().map_err(anyhow::Error::msg)?;
    let ext = Extended::open(&a.file, a.trace.options()?, &spec)
        .with_context(|| format!("extending {}", a.file.display()))?;
    let (blocks, source) = (ext.blocks(), ext.source_requests());
    let n = crate::output::write_streamed(&a.out, |w| ssdlab::workload::write_msr_csv(ext, w))?;
    eprintln!(
        "wrote {n} requests to {} (MSR Cambridge CSV): {spec}, {blocks} blocks of {source} source requests",
        a.out.display()
    );
    Ok(())
}
