//! Events left out while nothing can observe them (`sim/elide.rs`) change nothing: every run
//! gives the same summary as with every event scheduled (`RunOptions::full_events`).

use proptest::prelude::*;
use ssdlab::config::{Config, ConfigBuilder};
use ssdlab::sim::{RunOptions, SimError, Simulation};
use ssdlab::workload::synth::{Arrivals, SynthSpec};

/// The `--verify` run's summary as JSON without its wall-clock part, and the number of events
/// handled.
pub fn try_run(
    cfg: &Config,
    spec: &SynthSpec,
    seed: u64,
    full_events: bool,
) -> Result<(serde_json::Value, u64), SimError> {
    try_run_flows(cfg, spec, seed, full_events, 1)
}

/// [`try_run`] with `spec`'s requests as `flows` I/O flows ([`crate::flows_of`]).
pub fn try_run_flows(
    cfg: &Config,
    spec: &SynthSpec,
    seed: u64,
    full_events: bool,
    flows: usize,
) -> Result<(serde_json::Value, u64), SimError> {
    let flows = crate::flows_of(spec, flows);
    let mut gen = crate::open(spec, &flows);
    let opts = RunOptions {
        seed,
        verify: true,
        full_events,
        flows,
        ..Default::default()
    };
    let s = Simulation::new(cfg, opts, &mut *gen)?.run()?;
    Ok((crate::without_wall_clock(&s), s.sim.events))
}

fn run(cfg: &Config, spec: &SynthSpec, seed: u64, full_events: bool) -> (serde_json::Value, u64) {
    try_run(cfg, spec, seed, full_events).unwrap()
}

/// `requests` of 4–16 KiB over 60 % of a drive of `pages` 4 KiB pages, `iat_us` apart.
fn mix(requests: u64, write_ratio: f64, pages: u32, iat_us: f64, seed: u64) -> SynthSpec {
    SynthSpec {
        requests,
        write_ratio,
        size_kib: vec![4, 8, 16],
        arrivals: Arrivals::Exponential(iat_us),
        footprint_gib: f64::from(pages) * 4.0 * 0.6 / 1024.0 / 1024.0,
        zipf: 0.7,
        seq: 0.2,
        seed,
        ..SynthSpec::default()
    }
}

#[test]
fn an_idle_channel_takes_one_event_per_operation() {
    // One-page requests far apart on one die per channel: every program's transfer and every
    // read's sensing is uncontended.
    let cfg = ConfigBuilder::preset("tiny")
        .unwrap()
        .set("geometry.channels=4")
        .unwrap()
        .build()
        .unwrap();
    let spec = SynthSpec {
        size_kib: vec![4],
        ..mix(400, 0.5, 4 * 64 * 64, 2000.0, 1)
    };
    let (elided, few) = run(&cfg, &spec, 1, false);
    let (full, all) = run(&cfg, &spec, 1, true);
    assert_eq!(elided, full);
    let ops =
        elided["flash"]["reads"].as_u64().unwrap() + elided["flash"]["programs"].as_u64().unwrap();
    // Full: an arrival per request plus two events per read or program; elided: one.
    assert_eq!(
        all - few,
        ops,
        "{all} events with every phase, {few} elided"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Contended channels (up to 4 dies each), multi-plane gangs, GC priorities, a mapping
    /// cache, a host link and a device buffer: leaving events out never changes a summary.
    #[test]
    fn elided_runs_match_full_ones(
        seed in 0u64..1000,
        channels in 1u32..4,
        chips in 1u32..3,
        dies in 1u32..3,
        planes in 1u32..3,
        blocks in 16u32..40,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.2f64..0.9,
        fill in 0.0f64..0.9,
        iat_us in prop::sample::select(vec![15.0f64, 60.0, 300.0]),
        multi_plane in any::<bool>(),
        pe in prop::sample::select(vec!["none", "per", "pe0"]),
        gc_mode in prop::sample::select(vec!["background", "urgent", "urgent-chip", "preemptive", "foreground"]),
        mapping_cache in prop::sample::select(vec![0u32, 0, 16]),
        link in prop::sample::select(vec!["none", "sata3"]),
        buffer in prop::sample::select(vec![0u32, 0, 32]),
        fetch in prop::sample::select(vec![0u32, 0, 4]),
        policy in prop::sample::select(vec!["fifo", "rps"]),
        mapping_first in any::<bool>(),
        writeback in prop::sample::select(vec!["programmed", "never"]),
    ) {
        let cfg = ConfigBuilder::preset("tiny").unwrap()
            .set(&format!("geometry.channels={channels}")).unwrap()
            .set(&format!("geometry.chips_per_channel={chips}")).unwrap()
            .set(&format!("geometry.dies_per_chip={dies}")).unwrap()
            .set(&format!("geometry.planes_per_die={planes}")).unwrap()
            .set(&format!("geometry.blocks_per_plane={blocks}")).unwrap()
            .set(&format!("geometry.pages_per_block={ppb}")).unwrap()
            .set("ftl.over_provisioning=0.4").unwrap()
            .set("ftl.gc_threshold=0.1").unwrap()
            .set(&format!("flash.multi_plane={multi_plane}")).unwrap()
            .set(&format!("flash.pe_idealization={pe}")).unwrap()
            .set(&format!("ftl.gc_mode={gc_mode}")).unwrap()
            .set(&format!("ftl.mapping_cache_entries={mapping_cache}")).unwrap()
            .set(&format!("host.link={link}")).unwrap()
            .set(&format!("buffer.device_pages={buffer}")).unwrap()
            .set(&format!("host.max_requests_in_flight={fetch}")).unwrap()
            .set(&format!("sched.policy={policy}")).unwrap()
            .set(&format!("sched.mapping_reads_first={mapping_first}")).unwrap()
            .set(&format!("ftl.mapping_writeback={writeback}")).unwrap()
            .set(&format!("precondition.fill={fill}")).unwrap()
            .set("precondition.pattern=random").unwrap()
            .build().unwrap();
        let pages = channels * chips * dies * planes * blocks * ppb;
        let spec = mix(1500, write_ratio, pages, iat_us, seed);
        let (elided, few) = run(&cfg, &spec, seed, false);
        let (full, all) = run(&cfg, &spec, seed, true);
        prop_assert_eq!(elided, full);
        prop_assert!(few <= all);
    }
}
