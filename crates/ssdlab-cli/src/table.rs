//! The human-readable summary printed by `ssdlab run`.

use ssdlab::config::{Config, RedundancyScheme, SuspendPolicy, VoltagePolicy};
use ssdlab::metrics::{LatencySummary, Summary};
use std::fmt::Write;

fn row(out: &mut String, name: &str, l: &LatencySummary) {
    let _ = writeln!(
        out,
        "{name:<6} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>11.1}",
        l.count, l.mean_us, l.p50_us, l.p95_us, l.p99_us, l.p99_9_us, l.max_us
    );
}

/// One row per I/O flow, with its run alone and slowdown when measured (`--alone`).
fn flows(o: &mut String, s: &Summary) {
    let name_w = s
        .flows
        .iter()
        .map(|f| f.name.len())
        .max()
        .unwrap_or(0)
        .max(4);
    let alone = s.flows.iter().any(|f| f.alone.is_some());
    let _ = write!(
        o,
        "\n{:<name_w$} {:>9} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>8} {:>8}",
        "flow",
        "requests",
        "read mean",
        "read p99",
        "write mean",
        "write p99",
        "blocked %",
        "IOPS",
        "rd MB/s",
        "wr MB/s"
    );
    let _ = writeln!(
        o,
        "{}",
        if alone {
            format!(" {:>10} {:>8}", "alone mean", "slowdown")
        } else {
            String::new()
        }
    );
    for f in &s.flows {
        let h = &f.host;
        let _ = write!(
            o,
            "{:<name_w$} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>9.2} {:>10.1} {:>8.2} {:>8.2}",
            f.name,
            f.requests,
            h.read.mean_us,
            h.read.p99_us,
            h.write.mean_us,
            h.write.p99_us,
            h.read_requests_blocked_pct,
            f.throughput.iops,
            f.throughput.read_mb_s,
            f.throughput.write_mb_s
        );
        let alone_cols = match (&f.alone, f.slowdown) {
            (Some(a), Some(x)) => format!(" {:>10.1} {x:>8.3}", a.all_mean_us),
            (Some(a), None) => format!(" {:>10.1} {:>8}", a.all_mean_us, "-"),
            (None, _) => String::new(),
        };
        let _ = writeln!(o, "{alone_cols}");
    }
    if let Some(f) = s.fairness {
        let _ = writeln!(o, "fairness (smallest slowdown / largest): {f:.3}");
    }
}

/// Renders the summary as a few aligned tables.
pub fn render(s: &Summary, cfg: &Config) -> String {
    let mut o = String::new();
    let g = &cfg.geometry;
    let _ = writeln!(
        o,
        "drive: {} ch x {} chips x {} dies x {} planes x {} blocks x {} pages of {} B, {:?}; scheme {}; sched {:?}",
        g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die, g.blocks_per_plane, g.pages_per_block,
        g.page_size_bytes, cfg.flash.cell, s.scheme, cfg.sched.policy
    );
    let _ = writeln!(o, "\nresponse time (us)  count       mean        p50        p95        p99      p99.9         max");
    row(&mut o, "all", &s.all);
    row(&mut o, "read", &s.read);
    row(&mut o, "write", &s.write);
    if !s.flows.is_empty() {
        flows(&mut o, s);
    }
    let _ = writeln!(
        o,
        "\nreads blocked by program/erase: {} pages ({:.2} %), {:.2} % of read requests; {:.2} % of read requests redirected",
        s.reads_blocked, s.reads_blocked_pct, s.read_requests_blocked_pct, s.read_requests_redirected_pct
    );
    let w = &s.read_wait_us;
    let extra = |key: &str, label: &str| {
        w.get(key)
            .map(|v| format!(" + {label} {v:.1}"))
            .unwrap_or_default()
    };
    let link = extra("mapping", "translation pages")
        + &extra("host_queue", "host queue")
        + &extra("host_link", "host link");
    let _ = writeln!(
        o,
        "mean read page (us): service {:.1} + bus {:.1} + behind reads {:.1} + user programs {:.1} + gc {:.1} + erases {:.1}{link}",
        w["service"], w["bus"], w["read"], w["user_program"], w["gc"], w["erase"]
    );
    let _ = writeln!(
        o,
        "flash: {} reads, {} programs, {} erases; write amplification {:.3}; gc {} jobs, {:.1} ms, {} pages moved",
        s.flash.reads, s.flash.programs, s.flash.erases, s.write_amplification, s.gc.count, s.gc.time_ms, s.gc.pages_moved
    );
    if s.flash.multi_plane.iter().any(|&n| n > 0) {
        let [r, p, e] = s.flash.multi_plane;
        let _ = writeln!(
            o,
            "multi-plane commands: {r} reads, {p} programs, {e} erases"
        );
    }
    let _ = writeln!(
        o,
        "wear: erases per block min {} / mean {:.2} / max {}",
        s.wear.erase_min, s.wear.erase_mean, s.wear.erase_max
    );
    if let Some(c) = &s.mapping_cache {
        let _ = writeln!(
            o,
            "mapping cache: {} entries, {:.2} % of read lookups hit; {} translation reads, {} write-backs ({} merge reads, {} programs)",
            c.entries, c.read_hit_pct, c.translation_reads, c.writebacks, c.merge_reads, c.translation_programs
        );
    }
    if s.window_waits > 0 {
        let _ = writeln!(
            o,
            "page window: {} requests waited for host.max_pages_in_flight = {} (their response times include the wait)",
            s.window_waits, cfg.host.max_pages_in_flight
        );
    }
    if s.fetch_waits > 0 {
        let _ = writeln!(
            o,
            "host queue: {} requests waited for host.max_requests_in_flight = {} (their response times include the wait)",
            s.fetch_waits, cfg.host.max_requests_in_flight
        );
    }
    if cfg.suspend.policy != SuspendPolicy::Off {
        let p = &s.pe;
        let _ = writeln!(
            o,
            "suspension: {:.2} % of programs and erases suspended; reads waited {:.2} us on average for a suspension point; suspended programs took {:.1} % longer",
            p.pe_suspended_pct, p.suspension_wait_us, p.suspended_program_increase_pct
        );
    }
    if cfg.buffer.device_pages > 0 {
        let b = &s.buffer;
        let _ = writeln!(
            o,
            "buffer: {:.2} % of read pages hit, {} write hits, {} clean and {} dirty evictions",
            b.read_hit_pct, b.write_hits, b.evictions_clean, b.evictions_dirty
        );
    }
    if cfg.voltage.policy != VoltagePolicy::Baseline {
        let v = &s.voltage;
        let _ = writeln!(
            o,
            "voltage: programs low/normal/high {}/{}/{}; wearing weight {:.2}",
            v.programs["low"], v.programs["normal"], v.programs["high"], v.wearing_weight
        );
    }
    if s.staging.capacity_pages > 0 {
        let st = &s.staging;
        let _ = writeln!(
            o,
            "staging: {} read pages redirected ({:.2} %), {} copies made, {} held at the end (peak {}), {} reads found their copy's die busy{}",
            st.redirected, st.redirected_pct, st.migrations, st.copies, st.peak_copies, st.copy_busy + st.busy_copy_redirected,
            if st.busy_copy_redirected > 0 {
                format!(" ({} redirected there all the same)", st.busy_copy_redirected)
            } else {
                String::new()
            }
        );
    }
    if let Some(d) = &s.dedup {
        let _ = writeln!(
            o,
            "dedup: {} of {} page writes were duplicates ({:.2} %); reads are {:.1} % of host requests, {:.1} % of those reaching flash",
            d.duplicate_pages, d.page_writes, d.dedup_ratio_pct, d.host_read_pct, d.flash_read_pct
        );
    }
    if let Some(sh) = &s.shadow {
        let _ = writeln!(
            o,
            "shadow ({}): write amplification {:.3} from flushes + {:.3} from GC; relocated valid/host/device/twin {}/{}/{}/{}; {} from the device buffer, {} separated, {} twins dropped, {} refresh jobs",
            sh.gc, sh.wa_flush, sh.wa_gc, sh.relocated["valid"], sh.relocated["host_shadow"], sh.relocated["device_shadow"], sh.relocated["twin_shadow"],
            sh.from_buffer, sh.separated, sh.twins_dropped, sh.refresh_jobs
        );
    }
    let r = &s.redundancy;
    if cfg.redundancy.scheme == RedundancyScheme::Rails {
        let _ = writeln!(
            o,
            "rails: {} read pages served by the mirror ({:.2} %), {} mirror programs, {} role switches",
            r.redirected, r.redirected_pct, r.mirror_programs, r.role_switches
        );
    }
    if cfg.redundancy.scheme == RedundancyScheme::Ttflash {
        let _ = writeln!(
            o,
            "ttflash: {} read pages rebuilt from parity ({:.2} %), {} reconstruction reads, {} parity programs",
            r.rebuilt, r.rebuilt_pct, r.reconstruction_reads, r.parity_programs
        );
    }
    if !s.scheme_metrics.is_empty() {
        let m: Vec<String> = s
            .scheme_metrics
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(o, "scheme metrics: {}", m.join(", "));
    }
    if let Some(c) = &s.trace {
        let _ = writeln!(
            o,
            "trace: {} lines, {} requests; skipped {} malformed, {} framing, {} zero-size, {} other devices{}; {} timestamps clamped",
            c.lines, c.requests, c.skipped_malformed, c.skipped_framing, c.skipped_zero_size, c.filtered_device, c.skip_note(), c.clamped_timestamps
        );
    }
    let _ = writeln!(
        o,
        "sim: {:.3} s simulated, {:.3} s wall (+ {:.3} s building and preconditioning the drive), {} events, {:.0} requests/s, {:.0} events/s{}",
        s.simulated_s,
        s.sim.wall_s,
        s.sim.precondition_wall_s,
        s.sim.events,
        s.sim.requests_per_s,
        s.sim.events_per_s,
        if s.verified { "; verify: passed" } else { "" }
    );
    o
}

/// The scheme registry as `ssdlab schemes` prints it: name and summary, then the paper it
/// follows, what it sets, contains and refuses.
pub fn schemes() -> String {
    let mut o = String::new();
    for s in ssdlab::schemes::SCHEMES {
        let _ = writeln!(o, "{:<18} {}", s.name, s.summary);
        let _ = writeln!(o, "{:<18}   follows: {}", "", s.paper);
        let mut sets: Vec<String> = s.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        sets.extend(
            s.params
                .iter()
                .map(|p| format!("{}.{}={} (parameter)", s.name, p.key, p.default)),
        );
        if !sets.is_empty() {
            let _ = writeln!(o, "{:<18}   sets: {}", "", sets.join(", "));
        }
        if !s.implies.is_empty() {
            let _ = writeln!(o, "{:<18}   contains: {}", "", s.implies.join(", "));
        }
    }
    o
}
