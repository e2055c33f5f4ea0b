//! The options that bound a timeline, shared by `run --timeline` and `experiment timeline`.

use clap::Args;

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
