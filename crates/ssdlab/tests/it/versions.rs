//! Sparse version records (`ftl/mapping.rs`, the default without `--verify`) change nothing:
//! every run gives the same summary as with a version beside every mapping entry
//! (`RunOptions::full_versions`).

use proptest::prelude::*;
use ssdlab::config::Config;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::synth::{Arrivals, SynthSpec};

/// The summary as JSON without its wall-clock part (a power loss at `power_loss_at_ns`).
fn run(
    cfg: &Config,
    spec: &SynthSpec,
    seed: u64,
    power_loss_at_ns: Option<u64>,
    full_versions: bool,
) -> serde_json::Value {
    let mut gen = spec.generate().unwrap();
    let opts = RunOptions {
        seed,
        full_versions,
        power_loss_at_ns,
        ..Default::default()
    };
    summary(cfg, &mut gen, opts)
}

/// The summary as JSON without its wall-clock part.
fn summary(
    cfg: &Config,
    gen: &mut impl Iterator<
        Item = Result<ssdlab::workload::Request, ssdlab::workload::trace::TraceError>,
    >,
    opts: RunOptions,
) -> serde_json::Value {
    let s = Simulation::new(cfg, opts, gen).unwrap().run().unwrap();
    crate::without_wall_clock(&s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Writes of one page finishing out of order on contended dies, GC moving pages while they
    /// are rewritten, a device buffer (flushed on eviction or in the background, merged with
    /// GC), reads waiting for programs, a mapping cache's translation pages, deduplication's
    /// trims and a power loss: the same summary with sparse and full version tables.
    #[test]
    fn sparse_versions_match_full_ones(
        seed in 0u64..1000,
        channels in 1u32..3,
        dies in 1u32..3,
        planes in 1u32..3,
        blocks in 16u32..40,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.3f64..0.95,
        fill in 0.0f64..0.9,
        iat_us in prop::sample::select(vec![5.0f64, 30.0, 200.0]),
        zipf in prop::sample::select(vec![0.0f64, 0.99]),
        gc_mode in prop::sample::select(vec!["background", "urgent", "preemptive", "foreground"]),
        mapping_cache in prop::sample::select(vec![0u32, 0, 16]),
        buffer in prop::sample::select(vec![0u32, 0, 32]),
        backlog in prop::sample::select(vec![0u32, 4]),
        read_inflight in prop::sample::select(vec!["controller", "flash"]),
        dedup in any::<bool>(),
        power_loss in any::<bool>(),
    ) {
        // Deduplication runs without a device buffer or a mapping cache.
        let dedup = dedup && buffer == 0 && mapping_cache == 0;
        let sets = [
            format!("geometry.channels={channels}"),
            format!("geometry.dies_per_chip={dies}"),
            format!("geometry.planes_per_die={planes}"),
            format!("geometry.blocks_per_plane={blocks}"),
            format!("geometry.pages_per_block={ppb}"),
            "ftl.over_provisioning=0.4".into(),
            "ftl.gc_threshold=0.1".into(),
            format!("ftl.gc_mode={gc_mode}"),
            format!("ftl.mapping_cache_entries={mapping_cache}"),
            format!("ftl.read_inflight={read_inflight}"),
            format!("buffer.device_pages={buffer}"),
            format!("buffer.flush_backlog_pages={}", if buffer > 0 { backlog } else { 0 }),
            format!("dedup.enabled={dedup}"),
            format!("precondition.fill={fill}"),
            "precondition.pattern=random".into(),
        ];
        let cfg = crate::config("tiny", &sets.iter().map(String::as_str).collect::<Vec<_>>());
        let pages = channels * dies * planes * blocks * ppb;
        let spec = SynthSpec {
            requests: 1500,
            write_ratio,
            size_kib: vec![4, 8, 16],
            arrivals: Arrivals::Exponential(iat_us),
            footprint_gib: f64::from(pages) * 4.0 * 0.5 / 1024.0 / 1024.0,
            zipf,
            dedup: if dedup { 0.5 } else { 0.0 },
            seed,
            ..SynthSpec::default()
        };
        let at = power_loss.then_some(iat_us as u64 * 700_000);
        prop_assert_eq!(run(&cfg, &spec, seed, at, false), run(&cfg, &spec, seed, at, true));
    }
}

#[test]
fn a_workload_of_rewrites_gives_the_same_summary() {
    // Two pages rewritten back to back on a busy drive: many programs of one page in flight
    // at once, finishing out of order across dies.
    let cfg = crate::config("tiny", &["geometry.channels=4"]);
    let spec = SynthSpec {
        requests: 3000,
        write_ratio: 0.9,
        size_kib: vec![4],
        arrivals: Arrivals::Exponential(2.0),
        footprint_gib: 8.0 / 1024.0 / 1024.0,
        seed: 7,
        ..SynthSpec::default()
    };
    let sparse = run(&cfg, &spec, 1, None, false);
    assert_eq!(sparse, run(&cfg, &spec, 1, None, true));
    assert!(sparse["flash"]["programs"].as_u64().unwrap() > 2500);
}

/// The settings of scheme `k` of [`schemes_match_with_sparse_versions`] on a drive of
/// `channels` channels (`variant` picks among its options), and whether its workload carries
/// duplicate content.
fn scheme_sets(k: u32, variant: u32, channels: u32) -> (Vec<String>, bool) {
    let sets = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match k {
        0 => (
            sets(&[
                "staging.design=extra-chip",
                ["staging.hot_fraction=1", "staging.hot_fraction=0.25"][variant as usize % 2],
            ]),
            false,
        ),
        1 => (
            sets(&[
                "staging.design=reserved-blocks",
                "staging.reserved_blocks_per_plane=2",
                "staging.max_queued_copies=1",
            ]),
            false,
        ),
        2 => (
            sets(&[
                "dedup.enabled=true",
                "staging.design=extra-chip",
                "staging.policy=deduphr",
            ]),
            true,
        ),
        3 => (
            sets(&[
                "dedup.enabled=true",
                "staging.design=extra-chip",
                "staging.hot_fraction=1",
                ["staging.key=lba", "staging.key=content"][variant as usize % 2],
            ]),
            true,
        ),
        4 => {
            let switch = ["0", "300"][variant as usize % 2];
            (
                vec![
                    "redundancy.scheme=rails".into(),
                    format!("redundancy.rails_switch_us={switch}"),
                    format!("geometry.channels={}", 2 * channels),
                ],
                false,
            )
        }
        5 => (
            vec![
                "redundancy.scheme=ttflash".into(),
                "redundancy.ttflash_k=2".into(),
                "geometry.channels=3".into(),
                format!(
                    "redundancy.parity_update={}",
                    ["read-modify-write", "stripe"][variant as usize % 2]
                ),
            ],
            false,
        ),
        _ => (
            vec![
                "buffer.host_pages=32".into(),
                "buffer.device_pages=16".into(),
                format!(
                    "shadow.gc={}",
                    ["sgc", "hgc", "dgc", "zgc"][variant as usize % 4]
                ),
            ],
            false,
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]

    /// The schemes that keep versions of pages past their programs (HotR's and DedupHR's
    /// staged copies, Rails' twins, TTFlash's parity of current versions, ShadowGC's dropped
    /// twins set back at a power loss) give the same summary with sparse and full version
    /// tables.
    #[test]
    fn schemes_match_with_sparse_versions(
        seed in 0u64..1000,
        scheme in 0u32..7,
        variant in 0u32..4,
        channels in 1u32..3,
        blocks in 24u32..48,
        ppb in prop::sample::select(vec![8u32, 16]),
        write_ratio in 0.2f64..0.8,
        fill in 0.5f64..0.9,
        iat_us in prop::sample::select(vec![5.0f64, 30.0, 200.0]),
        power_loss in any::<bool>(),
    ) {
        let (mut sets, dedup) = scheme_sets(scheme, variant, channels);
        if !sets.iter().any(|s| s.starts_with("geometry.channels")) {
            sets.push(format!("geometry.channels={channels}"));
        }
        sets.extend([
            format!("geometry.blocks_per_plane={blocks}"),
            format!("geometry.pages_per_block={ppb}"),
            "ftl.over_provisioning=0.4".into(),
            format!("precondition.fill={fill}"),
            "precondition.pattern=random".into(),
        ]);
        let cfg = crate::config("tiny", &sets.iter().map(String::as_str).collect::<Vec<_>>());
        let spec = SynthSpec {
            requests: 1500,
            write_ratio,
            size_kib: vec![4, 8],
            arrivals: Arrivals::Exponential(iat_us),
            footprint_gib: f64::from(channels * blocks * ppb) * 4.0 * 0.3 / 1024.0 / 1024.0,
            zipf: 0.99,
            dedup: if dedup { 0.5 } else { 0.0 },
            seed,
            ..SynthSpec::default()
        };
        let at = power_loss.then_some(iat_us as u64 * 700_000);
        // The full-table run is a `--verify` run: it also checks every read's version, the
        // mapping, and that the schemes release the pages they pin.
        let verified = RunOptions {
            seed,
            verify: true,
            power_loss_at_ns: at,
            ..Default::default()
        };
        let mut full = summary(&cfg, &mut spec.generate().unwrap(), verified);
        prop_assert_eq!(full["verified"].take(), serde_json::Value::Bool(true));
        let mut sparse = run(&cfg, &spec, seed, at, false);
        sparse["verified"].take();
        prop_assert_eq!(sparse, full);
    }
}
