//! Human axis labels for summary metrics: a table from metric path to words and unit, so a
//! figure says "mean read latency (µs)" rather than `read.mean_us`.

/// Words and unit of the latency statistic `stat` (`mean_us`, `p99_9_us`, …).
fn latency_stat(stat: &str) -> Option<String> {
    let s = stat.strip_suffix("_us")?;
    Some(match s {
        "mean" => "mean".to_string(),
        "max" => "maximum".to_string(),
        "p50" => "median".to_string(),
        _ => format!("{}th-percentile", s.strip_prefix('p')?.replace('_', ".")),
    })
}

/// The label of a summary metric, with its unit in parentheses; the path itself for metrics
/// the table does not know.
pub fn metric_label(path: &str) -> String {
    let fixed = match path {
        "write_amplification" => Some("write amplification"),
        "reads_blocked_pct" => Some("read pages blocked by a program or erase (%)"),
        "read_requests_blocked_pct" => {
            Some("read requests with a page blocked by a program or erase (%)")
        }
        "read_requests_redirected_pct" => {
            Some("read requests with a page served from a copy or rebuilt (%)")
        }
        "cost.cost_latency_us" => Some("mean response time × space factor (µs)"),
        "gc.time_ms" => Some("total GC time (ms)"),
        "flash.erases" => Some("erases"),
        "staging.redirected_pct" => Some("reads redirected to a copy (% of read pages)"),
        "redundancy.redirected_pct" => Some("reads rebuilt or redirected (% of read pages)"),
        "shadow.wa_gc" => Some("write amplification from GC"),
        "shadow.wa_flush" => Some("write amplification from buffer flushes"),
        "shadow.refresh_pct" => Some("refresh programs (% of programs)"),
        "voltage.wearing_weight" => Some("wearing weight of the erases"),
        "voltage.run_blocks.wearing_weight" => {
            Some("wearing weight of erases of blocks programmed in the run")
        }
        "dedup.dedup_ratio_pct" => Some("duplicate page writes (%)"),
        "dedup.host_read_pct" => Some("reads (% of host requests)"),
        "dedup.flash_read_pct" => Some("reads (% of requests reaching flash)"),
        "pe.pe_suspended_pct" => Some("programs and erases suspended (%)"),
        "pe.erases_suspended_pct" => Some("erases suspended (%)"),
        "pe.suspended_program_increase_pct" => Some("suspended programs' time increase (%)"),
        "pe.suspended_erase_increase_pct" => Some("suspended erases' time increase (%)"),
        _ => None,
    };
    if let Some(l) = fixed {
        return l.to_string();
    }
    // An I/O flow's metric: the flow named, then its metric's label.
    if let Some((flow, rest)) = path.strip_prefix("flows.").and_then(|p| p.split_once('.')) {
        let what = match rest {
            "slowdown" => "slowdown, mean response time shared ÷ alone".to_string(),
            other => metric_label(other),
        };
        return format!("{flow}: {what}");
    }
    if path == "fairness" {
        return "fairness, smallest flow slowdown ÷ largest".to_string();
    }
    if let Some(kind) = path.strip_prefix("shadow.relocated_pct.") {
        return format!("relocations of {} pages (%)", kind.replace('_', " "));
    }
    if let Some(bucket) = path.strip_prefix("dedup.reads_by_refcount_pct.") {
        return format!("reads of contents with {bucket} references (%)");
    }
    if let Some(bucket) = path.strip_prefix("dedup.contents_by_refcount_pct.") {
        return format!("contents with {bucket} references (%)");
    }
    if let Some((class, stat)) = path.split_once('.') {
        let what = match class {
            "all" => Some("response time"),
            "read" => Some("read latency"),
            "write" => Some("write latency"),
            _ => None,
        };
        if let (Some(what), Some(stat)) = (what, latency_stat(stat)) {
            return format!("{stat} {what} (µs)");
        }
    }
    path.to_string()
}

/// The label without its unit (for "normalised to …" and "% below …").
pub fn metric_words(path: &str) -> String {
    let l = metric_label(path);
    match l.rfind(" (") {
        Some(i) if l.ends_with(')') => l[..i].to_string(),
        _ => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_get_words_and_units() {
        assert_eq!(metric_label("read.mean_us"), "mean read latency (µs)");
        assert_eq!(
            metric_label("all.p99_9_us"),
            "99.9th-percentile response time (µs)"
        );
        assert_eq!(metric_label("write.p50_us"), "median write latency (µs)");
        assert_eq!(metric_words("read.mean_us"), "mean read latency");
        assert_eq!(metric_words("write_amplification"), "write amplification");
        assert_eq!(
            metric_label("shadow.relocated_pct.twin_shadow"),
            "relocations of twin shadow pages (%)"
        );
        assert_eq!(metric_label("something.new"), "something.new");
        assert_eq!(
            metric_label("flows.search.read.mean_us"),
            "search: mean read latency (µs)"
        );
        assert_eq!(
            metric_words("flows.search.slowdown"),
            "search: slowdown, mean response time shared ÷ alone"
        );
    }

    #[test]
    fn every_metric_of_the_committed_experiments_has_a_label() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut specs = vec![];
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            specs.push(p.join("experiment.toml"));
            specs.push(p.join("fig7/experiment.toml"));
        }
        let mut seen = 0;
        for spec in specs.iter().filter(|p| p.exists()) {
            let text = std::fs::read_to_string(spec).unwrap();
            let doc: toml::Value = toml::from_str(&text).unwrap();
            let Some(figs) = doc.get("figure").and_then(|f| f.as_array()) else {
                continue;
            };
            for f in figs {
                let (kind, m) = (f["kind"].as_str().unwrap(), f["metric"].as_str().unwrap());
                if matches!(kind, "bars" | "sweep") {
                    seen += 1;
                    assert_ne!(metric_label(m), m, "{}: {m} has no label", spec.display());
                }
            }
        }
        assert!(seen > 50, "{seen}");
    }
}
