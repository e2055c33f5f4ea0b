//! Timelines the CLI writes (`run --timeline`, `experiment timeline`): the options that bound
//! them, opening the file for a drive, and finishing it with a line saying what was written.

use anyhow::{Context, Result};
use clap::Args;
use ssdlab::config::Config;
use ssdlab::files::Streamed;
use ssdlab::metrics::timeline::{Layout, Timeline};
use std::path::Path;

/// Opens `path` (plain or `.gz`) for the timeline of a run on the drive `cfg` describes;
/// fails at once when it cannot be written.
pub fn open(cfg: &Config, limits: &TimelineLimits, path: &Path) -> Result<Timeline<Streamed>> {
    let what = || format!("cannot write {}", path.display());
    let out = Streamed::create(path).with_context(what)?;
    Timeline::new(out, Layout::of(cfg), limits.limits()).with_context(what)
}

/// Ends the file and puts it in place; unless `quiet`, says how many events it holds.
pub fn finish(t: Timeline<Streamed>, path: &Path, quiet: bool) -> Result<()> {
    let what = || format!("writing {}", path.display());
    let (file, counts) = t.finish().with_context(what)?;
    file.finish().with_context(what)?;
    if !quiet {
        let dropped = if counts.dropped > 0 {
            format!(
                " ({} more left out by --timeline-max-events)",
                counts.dropped
            )
        } else {
            String::new()
        };
        eprintln!(
            "wrote a timeline of {} events to {}{dropped}",
            counts.written,
            path.display()
        );
    }
    Ok(())
}

/// What a timeline keeps (`run --timeline`, `experiment timeline`).
#[derive(Args, Debug)]
pub struct TimelineLimits {
    /// Keep only the timeline events that overlap this span of simulated time, µs.
    #[arg(long, value_name = "START..END", value_parser = parse_window)]
    pub timeline_window: Option<(f64, f64)>,
    /// Write at most N timeline events; the file's metadata counts those left out.
    #[arg(long, value_name = "N")]
    pub timeline_max_events: Option<u64>,
}

impl TimelineLimits {
    /// The limits in the library's terms.
    pub fn limits(&self) -> ssdlab::metrics::timeline::Limits {
        ssdlab::metrics::timeline::Limits {
            window_ns: self
                .timeline_window
                .map(|(s, e)| ((s * 1e3).round() as u64, (e * 1e3).round() as u64)),
            max_events: self.timeline_max_events,
        }
    }
}

/// `START..END` in µs: two numbers, 0 <= START < END.
fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected START..END in microseconds, e.g. 1000..2500"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("{s:?}: {v:?} is not a time >= 0 in microseconds"))
    };
    let (a, b) = (num(a)?, num(b)?);
    if a >= b {
        return Err(format!("{s:?}: START must be below END"));
    }
    Ok((a, b))
}
