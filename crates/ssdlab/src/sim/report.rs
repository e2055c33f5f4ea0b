//! The run's summary: the core's measurements, then each scheme's own sections.

use super::Simulation;
use crate::metrics::{pct, FlowSummary, HostView, Summary};

impl Simulation<'_> {
    /// Space cost: physical space over that of the same drive without the schemes' extra
    /// space, and the mean latency weighted by it.
    fn cost(&self, mean_us: f64) -> crate::metrics::CostSummary {
        let factor = self
            .policies
            .list
            .iter()
            .flatten()
            .find_map(|p| p.space_factor())
            .unwrap_or(1.0);
        crate::metrics::CostSummary {
            space_factor: factor,
            cost_latency_us: (mean_us * factor * 1e6).round() / 1e6,
        }
    }

    /// Wear weight of one erase per level: the level's summed state voltages over the normal's.
    fn wear_weights(&self) -> [f64; 3] {
        let v = &self.cfg.voltage;
        let sum = |x: &Vec<f64>| x.iter().sum::<f64>();
        let normal = sum(&v.normal_volts);
        [sum(&v.low_volts) / normal, 1.0, sum(&v.high_volts) / normal]
    }

    /// The summary of the run (`wall_s`: wall-clock time of the replay).
    pub(super) fn summary(&self, wall_s: f64) -> Summary {
        let m = &self.metrics;
        let mut flash = Summary::flash_counts(m);
        let mapping_cache = self.ftl.cmt.as_ref().map(|c| {
            crate::metrics::summary_mapping_cache(
                c,
                &m.cache_flash,
                self.ftl.map.all_logical_pages() - self.ftl.map.logical_pages(),
            )
        });
        if mapping_cache.is_none() {
            // Without a mapping cache its class never occurs: left out.
            flash.by_cause.remove(crate::sched::Cause::Mapping.name());
        }
        // A read's wait on the host side: for the drive's fetch limit or its flow's queue depth.
        let host_parts = [
            self.link.is_some(),
            self.cfg.host.max_requests_in_flight > 0
                || self.opts.flows.iter().any(|f| f.queue_depth > 0),
        ];
        let mapping = mapping_cache.is_some();
        let HostView {
            all,
            read,
            write,
            mut host_pages,
            reads_blocked,
            reads_blocked_pct,
            read_requests_blocked_pct,
            read_requests_redirected_pct,
            read_wait_us,
        } = HostView::of(&m.host, host_parts, mapping);
        let all_mean = all.mean_us;
        let erases: Vec<u32> = self.ftl.blocks.iter().map(|b| b.erase_count).collect();
        host_pages.insert("read_from_write_buffer", m.read_pages_from_write_buffer);
        if self.cfg.ftl.read_inflight == crate::config::ReadInflight::Flash {
            host_pages.insert("read_after_write", m.read_pages_after_write);
        }
        let wa = if m.host.write_pages == 0 {
            0.0
        } else {
            flash.programs as f64 / m.host.write_pages as f64
        };
        let mut s = Summary {
            tool: format!("ssdlab {}", env!("CARGO_PKG_VERSION")),
            config_hash: self.cfg.hash(),
            seed: self.opts.seed,
            scheme: self.cfg.scheme.clone(),
            verified: self.opts.verify,
            requests: m.host.requests,
            simulated_s: m.host.end_ns as f64 / 1e9,
            all,
            read,
            write,
            host_pages,
            reads_blocked,
            reads_blocked_pct,
            read_requests_blocked_pct,
            read_requests_redirected_pct,
            read_wait_us,
            write_amplification: (wa * 1e6).round() / 1e6,
            flash,
            gc: crate::metrics::summary_gc(m),
            wear: crate::metrics::summary_wear(&erases, m.static_wl_runs),
            host_stalls: m.host_stalls,
            window_waits: m.window_waits,
            fetch_waits: m.fetch_waits,
            wrapped_requests: m.wrapped_requests,
            wrapped_pct: pct(m.wrapped_requests, m.host.requests),
            pre_processed_pages: m.pre_processed_pages,
            summary_programs: m.summary_programs,
            mapping_cache,
            pe: crate::metrics::summary_pe(&m.pe),
            buffer: crate::metrics::summary_buffer(&m.buffer, m.host.read_pages),
            voltage: crate::metrics::summary_voltage(
                &m.levels,
                self.wear_weights(),
                self.cfg.voltage.split_fill_wear,
            ),
            staging: crate::metrics::summary_staging(&m.staging, m.host.read_pages, 0, 0),
            dedup: None,
            shadow: None,
            redundancy: crate::metrics::summary_redundancy(&m.redundancy, m.host.read_pages),
            cost: self.cost(all_mean),
            idle_pct: pct(m.idle_ns, m.host.end_ns),
            scheme_metrics: self
                .policies
                .gc_exec
                .as_ref()
                .map(|g| g.metrics().into_iter().collect())
                .unwrap_or_default(),
            trace: None,
            fairness: None,
            flows: self
                .flows
                .iter()
                .map(|f| FlowSummary::of(&f.name, &f.metrics, host_parts, mapping))
                .collect(),
            sim: crate::metrics::summary_perf(
                wall_s,
                self.precondition_wall_s,
                self.events_handled,
                m.host.requests,
            ),
        };
        for p in self.policies.list.iter().flatten() {
            p.report(m, &mut s);
        }
        s
    }
}
