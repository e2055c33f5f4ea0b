//! Every scheme of the registry, alone or with a second one, on drawn geometries (several dies
//! per chip and chips per channel, so channels are shared), loads from idle to saturated,
//! fills and start patterns, mapping caches, device buffers and both places a read of a page
//! being written may be served from: the verified run holds every invariant, leaving
//! events out (`sim/elide.rs`) gives the whole summary of the run with every event, and so
//! does writing a timeline, whose file shows every operation once (`timeline.rs`); the same
//! requests as 2 or 4 I/O flows in other priority classes, under each arbitration and with the
//! dies' queues per priority class or not, hold all of it.
//!
//! `SSDLAB_PROPTEST_CASES` sets the number of cases (CI runs the default; a campaign runs
//! thousands, with other seeds through `PROPTEST_RNG_SEED`: docs/testing.md).

use proptest::prelude::*;
use ssdlab::config::ConfigBuilder;
use ssdlab::schemes::SCHEMES;
use ssdlab::sim::SimError;
use ssdlab::workload::synth::{Arrivals, SynthSpec};

use crate::env_or;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: env_or("SSDLAB_PROPTEST_CASES", 48),
        max_global_rejects: 100_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_scheme_holds_invariants_and_elision_changes_nothing(
        seed in 0u64..10_000,
        first in 0..SCHEMES.len(),
        second in prop::option::weighted(0.4, 0..SCHEMES.len()),
        channels in 1u32..3,
        chips in 1u32..3,
        dies in 1u32..4,
        planes in 1u32..3,
        blocks in 24u32..56,
        ppb in prop::sample::select(vec![8u32, 16, 32]),
        op in prop::sample::select(vec![0.2f64, 0.3, 0.4]),
        write_ratio in prop::sample::select(vec![0.0f64, 0.3, 0.7, 1.0]),
        iat_us in prop::sample::select(vec![3.0f64, 15.0, 60.0, 500.0]),
        fill in prop::sample::select(vec![0.0f64, 0.5, 0.9]),
        pattern in prop::sample::select(vec!["random", "steady-state"]),
        mapping_cache in prop::sample::select(vec![0u32, 0, 16, 64]),
        buffer in prop::sample::select(vec![0u32, 0, 32]),
        read_inflight in prop::sample::select(vec!["controller", "flash"]),
        dedup in prop::sample::select(vec![0.0f64, 0.5]),
        multi_plane in any::<bool>(),
        gc_mode in prop::sample::select(vec!["background", "urgent", "urgent-chip", "preemptive"]),
        flows in prop::sample::select(vec![1usize, 1, 2, 4]),
        arbitration in prop::sample::select(vec!["fifo", "round-robin", "weighted-round-robin"]),
        fetch in prop::sample::select(vec![0u32, 0, 2, 16]),
        flow_priority in any::<bool>(),
        flow_blocks in prop::sample::select(vec!["shared", "own"]),
    ) {
        let mut spec_name = SCHEMES[first].name.to_string();
        if let Some(s) = second.filter(|&s| s != first) {
            spec_name = format!("{spec_name}+{}", SCHEMES[s].name);
        }
        // Rails mirrors the first half of the channels onto the second; TTFlash stripes the
        // dies k + 1 at a time.
        let channels = if spec_name.contains("rails") { 2 } else { channels };
        let all_dies = channels * chips * dies;
        let k = (2..=4).rev().find(|k| all_dies % (k + 1) == 0).unwrap_or(1);
        let build = |mapping_cache: u32, buffer: u32| {
            let mut b = ConfigBuilder::preset("tiny").unwrap()
                .set(&format!("geometry.channels={channels}")).unwrap()
                .set(&format!("geometry.chips_per_channel={chips}")).unwrap()
                .set(&format!("geometry.dies_per_chip={dies}")).unwrap()
                .set(&format!("geometry.planes_per_die={planes}")).unwrap()
                .set(&format!("geometry.blocks_per_plane={blocks}")).unwrap()
                .set(&format!("geometry.pages_per_block={ppb}")).unwrap()
                .set(&format!("ftl.over_provisioning={op}")).unwrap()
                .set(&format!("ftl.mapping_cache_entries={mapping_cache}")).unwrap()
                .set(&format!("ftl.read_inflight={read_inflight}")).unwrap()
                .set(&format!("ftl.gc_mode={gc_mode}")).unwrap()
                .set(&format!("buffer.device_pages={buffer}")).unwrap()
                .set(&format!("flash.multi_plane={multi_plane}")).unwrap()
                .set(&format!("precondition.fill={fill}")).unwrap()
                .set(&format!("precondition.pattern={pattern}")).unwrap()
                .set(&format!("host.arbitration={arbitration}")).unwrap()
                .set(&format!("host.max_requests_in_flight={fetch}")).unwrap()
                .set(&format!("sched.flow_priority={flow_priority}")).unwrap()
                .set(&format!("ftl.flow_blocks={flow_blocks}")).unwrap();
            if spec_name.contains("ttflash") {
                b = b.set(&format!("redundancy.ttflash_k={k}")).unwrap();
            }
            b.scheme(&spec_name).build()
        };
        // A combination validation refuses (with a message naming both settings) is turned
        // into its nearest allowed one: no mapping cache (not modelled with dedup, staging or
        // redundancy), a device buffer (HIRE's hotness, two ShadowGC variants), none (dedup).
        let cfg = [(mapping_cache, buffer), (0, buffer), (mapping_cache, 32), (0, 32), (0, 0)]
            .into_iter()
            .find_map(|(m, b)| build(m, b).ok());
        // What is still refused (a plane too small for the over-provisioning) proves nothing
        // here; proptest fails the test if too many cases are.
        prop_assume!(cfg.is_some());
        let cfg = cfg.unwrap();
        // TTFlash under dedup on these small drives queues parity programs faster than they
        // run (nothing holds the host back for them) until dead stripes' parity fills the
        // planes and the run stops with the drive wedged or stalled, as it reports: an open
        // defect (issue 49's closing note), left out here until it is fixed.
        prop_assume!(!(spec_name.contains("ttflash") && spec_name.contains("dedup")));
        let pages = channels * chips * dies * planes * blocks * ppb;
        let spec = SynthSpec {
            requests: 1200,
            write_ratio,
            size_kib: vec![4, 8, 16],
            arrivals: Arrivals::Exponential(iat_us),
            footprint_gib: f64::from(pages) * 4.0 * 0.5 / 1024.0 / 1024.0,
            zipf: 0.8,
            seq: 0.2,
            dedup,
            seed,
            ..SynthSpec::default()
        };
        let what = format!("{spec_name} on {channels}x{chips}x{dies}x{planes}x{blocks}x{ppb}, {flows} flows ({flow_blocks} blocks)");
        let run = |full| crate::elision::try_run_flows(&cfg, &spec, seed, full, flows).map(|r| r.0);
        let elided = match run(false) {
            // A drive too small for a scheme's open blocks (or each flow's) is refused when it
            // is built.
            Err(SimError::Precondition(_) | SimError::PreProcess(_)) => return Ok(()),
            Err(SimError::Flows(e)) if e.contains("ftl.flow_blocks") => return Ok(()),
            r => r.map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?,
        };
        let full = run(true)
            .map_err(|e| TestCaseError::fail(format!("{what} with every event: {e}")))?;
        prop_assert_eq!(&elided["requests"], &serde_json::json!(1200));
        prop_assert_eq!(&elided, &full, "{}", what);
        // Writing a timeline changes nothing, and the file shows every operation once.
        let (traced, file, _) = crate::timeline::run_flows_with_timeline(
            &cfg, &spec, seed, ssdlab::metrics::timeline::Limits::default(), flows,
        )
        .map_err(|e| TestCaseError::fail(format!("{what} with a timeline: {e}")))?;
        prop_assert_eq!(&elided, &traced, "{} with a timeline", what);
        crate::timeline::check(&traced, &file, planes)
            .map_err(|e| TestCaseError::fail(format!("{what}'s timeline: {e}")))?;
    }
}
