//! Property tests: on tiny geometries under random workloads with GC, the verified run never
//! fails (reads return the newest version, mapping is a bijection, pages are conserved), and
//! the read-wait attribution adds up to the measured read-page time. Runs of several I/O
//! flows hold them too, and their flows' results add up to the run's.

use proptest::prelude::*;
use ssdlab::config::ConfigBuilder;
use ssdlab::sim::{RunOptions, SimError, Simulation};
use ssdlab::workload::flows::{FlowSpec, Merged, Priority};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::Requests;

/// A tiny drive with GC pressure: `planes` × `dies` of `blocks` × `ppb` pages, 40 % OP.
fn tiny_drive(planes: u32, dies: u32, blocks: u32, ppb: u32) -> ConfigBuilder {
    ConfigBuilder::preset("tiny")
        .unwrap()
        .set(&format!("geometry.planes_per_die={planes}"))
        .unwrap()
        .set(&format!("geometry.dies_per_chip={dies}"))
        .unwrap()
        .set(&format!("geometry.blocks_per_plane={blocks}"))
        .unwrap()
        .set(&format!("geometry.pages_per_block={ppb}"))
        .unwrap()
        .set("ftl.over_provisioning=0.4")
        .unwrap()
        .set("ftl.gc_threshold=0.1")
        .unwrap()
}

/// 1,500 requests of 4–16 KiB, Zipf 0.7, over 60 % of `pages` 4 KiB pages.
fn small_mix(write_ratio: f64, pages: u32, seed: u64) -> SynthSpec {
    SynthSpec {
        requests: 1500,
        write_ratio,
        size_kib: vec![4, 8, 16],
        arrivals: ssdlab::workload::synth::Arrivals::Exponential(120.0),
        footprint_gib: f64::from(pages) * 4.0 * 0.6 / 1024.0 / 1024.0,
        zipf: 0.7,
        seq: 0.2,
        seed,
        ..SynthSpec::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::env_or("SSDLAB_PROPTEST_CASES", 32), ..ProptestConfig::default() })]

    #[test]
    fn verified_runs_hold_invariants(
        seed in 0u64..1000,
        planes in 1u32..3,
        dies in 1u32..3,
        blocks in 12u32..40,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.2f64..0.95,
        fill in 0.0f64..0.95,
        victim in prop::sample::select(vec!["greedy", "cost-benefit", "random"]),
        alloc in prop::sample::select(vec!["static", "dynamic"]),
        policy in prop::sample::select(vec!["fifo", "rps"]),
        copyback in any::<bool>(),
        multi_plane in any::<bool>(),
        cache_read in any::<bool>(),
        suspend in prop::sample::select(vec!["off", "erase", "ips", "ipc", "ideal"]),
        voltage in prop::sample::select(vec!["baseline", "hvc", "lvc", "hire"]),
        buffer in prop::sample::select(vec![0u32, 4, 32]),
        rewrite in any::<bool>(),
        staging in prop::sample::select(vec!["none", "extra-chip", "reserved-blocks"]),
        shadow in any::<bool>(),
        overlap in any::<bool>(),
        bound in prop::sample::select(vec![0u32, 4, 64]),
        rule in prop::sample::select(vec!["same-page", "same-page-block-parity", "any"]),
        read_inflight in prop::sample::select(vec!["controller", "flash"]),
        link in prop::sample::select(vec!["none", "sata3", "pcie3x4"]),
        summary_pages in prop::sample::select(vec![0u32, 0, 1]),
        plane_choice in prop::sample::select(vec!["static", "most-free"]),
        gc_blocks in prop::sample::select(vec!["separate", "shared"]),
        mapping_cache in prop::sample::select(vec![0u32, 0, 1, 16]),
        backlog in prop::sample::select(vec![0u32, 0, 1, 4]),
        sectors in any::<bool>(),
        eager in any::<bool>(),
        static_wl in prop::sample::select(vec![0u32, 0, 2]),
        gc_jobs in prop::sample::select(vec![1u32, 1, 3]),
        gc_mode in prop::sample::select(vec!["background", "urgent", "urgent-chip", "preemptive", "foreground"]),
        gc_start in prop::sample::select(vec!["any-write", "new-block"]),
        fetch in prop::sample::select(vec![0u32, 0, 1, 8]),
        pre_process in any::<bool>(),
        mapping_first in any::<bool>(),
        writeback in prop::sample::select(vec!["programmed", "never"]),
        busy_copy in prop::sample::select(vec!["home", "redirect", "less-work"]),
        gc_relevel in any::<bool>(),
        flows in prop::sample::select(vec![1usize, 1, 2, 3]),
        arbitration in prop::sample::select(vec!["fifo", "round-robin", "weighted-round-robin"]),
        flow_depth in prop::sample::select(vec![0u32, 1, 4]),
        confine in any::<bool>(),
        flow_priority in any::<bool>(),
        flow_blocks in prop::sample::select(vec!["shared", "own"]),
    ) {
        // Combinations validation refuses are turned into their nearest allowed one, so most
        // cases run (refused ones prove nothing): most-free plane choice needs static
        // allocation; no mapping cache or summary pages with staging; a flush backlog needs a
        // device buffer; no static wear levelling with foreground GC. No mapping cache with
        // HIRE either: its six open blocks per plane plus a write-back per write (a cache of
        // one entry) use up these tiny planes, which the run reports as a stall (as it should;
        // seed 1, 1 plane, 2 dies, 23 blocks of 4 pages, dynamic allocation, fill 0.086).
        let device_pages = if voltage == "hire" { buffer.max(4) } else { buffer };
        let plane_choice = if alloc == "static" { plane_choice } else { "static" };
        let mapping_cache = if staging == "none" && voltage != "hire" { mapping_cache } else { 0 };
        let summary_pages = if staging == "none" { summary_pages } else { 0 };
        let backlog = if device_pages > 0 { backlog } else { 0 };
        let static_wl = if gc_mode == "foreground" { 0 } else { static_wl };
        let cfg = tiny_drive(planes, dies, blocks, ppb)
            .set(&format!("flash.multi_plane_rule={rule}")).unwrap()
            .set(&format!("ftl.read_inflight={read_inflight}")).unwrap()
            .set(&format!("host.link={link}")).unwrap()
            .set(&format!("ftl.gc_victim={victim}")).unwrap()
            .set(&format!("ftl.allocation={alloc}")).unwrap()
            .set(&format!("ftl.summary_pages={summary_pages}")).unwrap()
            .set(&format!("ftl.plane_choice={plane_choice}")).unwrap()
            .set(&format!("ftl.gc_blocks={gc_blocks}")).unwrap()
            .set(&format!("ftl.mapping_cache_entries={mapping_cache}")).unwrap()
            .set(&format!("buffer.flush_backlog_pages={backlog}")).unwrap()
            .set(&format!("buffer.flush_backlog_unit={}", if sectors && backlog > 0 { "sector" } else { "page" })).unwrap()
            .set(&format!("sched.mapping_reads_first={mapping_first}")).unwrap()
            .set(&format!("ftl.mapping_writeback={writeback}")).unwrap()
            .set(&format!("ftl.static_wl_threshold={static_wl}")).unwrap()
            .set(&format!("buffer.eager_flush_period_ms={}", if eager && backlog > 0 { 0.5 } else { 0.0 })).unwrap()
            .set(&format!("ftl.gc_jobs_per_plane={gc_jobs}")).unwrap()
            .set(&format!("ftl.gc_mode={gc_mode}")).unwrap()
            .set(&format!("ftl.gc_start={gc_start}")).unwrap()
            .set(&format!("host.max_requests_in_flight={fetch}")).unwrap()
            .set(&format!("sched.policy={policy}")).unwrap()
            .set(&format!("sched.max_outstanding_writes={bound}")).unwrap()
            .set(&format!("flash.copyback={copyback}")).unwrap()
            .set(&format!("flash.multi_plane={multi_plane}")).unwrap()
            .set(&format!("flash.cache_read={cache_read}")).unwrap()
            .set(&format!("suspend.policy={suspend}")).unwrap()
            .set(&format!("voltage.policy={voltage}")).unwrap()
            .set(&format!("staging.design={staging}")).unwrap()
            .set("staging.reserved_blocks_per_plane=2").unwrap()
            .set("staging.hot_fraction=0.5").unwrap()
            .set(&format!("staging.busy_copy={busy_copy}")).unwrap()
            .set(&format!("voltage.gc_relevel={gc_relevel}")).unwrap()
            .set(&format!("voltage.rewrite_clean_read_hot={rewrite}")).unwrap()
            .set(&format!("buffer.device_pages={device_pages}")).unwrap()
            .set(&format!("suspend.shadow_buffer={shadow}")).unwrap()
            .set(&format!("suspend.resume_overlap={}", overlap && shadow && suspend != "off")).unwrap()
            .set(&format!("precondition.fill={fill}")).unwrap()
            .set("precondition.pattern=random").unwrap()
            .set(&format!("precondition.pre_process={pre_process}")).unwrap()
            .set(&format!("host.arbitration={arbitration}")).unwrap()
            .set(&format!("sched.flow_priority={flow_priority}")).unwrap()
            .set(&format!("ftl.flow_blocks={flow_blocks}")).unwrap()
            .build();
        // HIRE keeps up to six blocks open per plane; tiny geometries may not fit it.
        let Ok(cfg) = cfg else { return Ok(()) };
        // One workload, or the same number of requests in 2 or 3 I/O flows with their own
        // seeds, each in its own share of the logical space.
        let spec = small_mix(write_ratio, planes * dies * blocks * ppb, seed);
        let flow_specs: Vec<FlowSpec> = (0..flows)
            .map(|k| FlowSpec {
                synth: Some(SynthSpec { requests: 1500 / flows as u64, seed: seed + k as u64, ..spec.clone() }.to_string()),
                // Each flow in another priority class; the first held to `flow_depth` requests
                // and, where placement follows striping, confined to the first die.
                priority: [Priority::High, Priority::Low, Priority::Urgent][k],
                queue_depth: if k == 0 { flow_depth } else { 0 },
                dies: if k == 0 && confine && alloc == "static" && plane_choice == "static" { vec![0] } else { vec![] },
                ..FlowSpec::named(&format!("f{k}"))
            })
            .collect();
        let workload = || -> Box<Requests<'static>> {
            if flows == 1 {
                Box::new(spec.generate().unwrap())
            } else {
                Box::new(Merged::open(&flow_specs).unwrap())
            }
        };
        let (mut gen, mut pre) = (workload(), workload());
        let opts = RunOptions { seed, verify: true, flows: flow_specs.clone(), ..Default::default() };
        // Pre-processing may find no room on a tiny drive filled high: a clear refusal, not a
        // wrong state.
        // Flows with blocks of their own may not fit a tiny plane: refused by name.
        let sim = match Simulation::build(&cfg, opts.clone(), &mut *gen, Some(&mut *pre), &|_, _| {}) {
            Err(SimError::Precondition(_)) if pre_process => return Ok(()),
            Err(SimError::Flows(e)) if e.contains("ftl.flow_blocks") => return Ok(()),
            r => r.unwrap(),
        };
        let s = sim.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Every event scheduled (nothing left out: sim/elide.rs) gives the same run.
        let (mut gen, mut pre) = (workload(), workload());
        let full = RunOptions { full_events: true, ..opts };
        let f = Simulation::build(&cfg, full, &mut *gen, Some(&mut *pre), &|_, _| {}).unwrap().run().unwrap();
        prop_assert_eq!(crate::without_wall_clock(&s), crate::without_wall_clock(&f));
        prop_assert_eq!(s.requests, 1500);
        // The flows' results add up to the run's.
        if flows > 1 {
            prop_assert_eq!(s.flows.len(), flows);
            let sum = |f: &dyn Fn(&ssdlab::metrics::FlowSummary) -> u64| s.flows.iter().map(f).sum::<u64>();
            prop_assert_eq!(sum(&|f| f.requests), s.requests);
            prop_assert_eq!(sum(&|f| f.host.read.count), s.read.count);
            prop_assert_eq!(sum(&|f| f.host.host_pages["read"]), s.host_pages["read"]);
            prop_assert_eq!(sum(&|f| f.host.host_pages["write"]), s.host_pages["write"]);
            prop_assert_eq!(sum(&|f| f.host.reads_blocked), s.reads_blocked);
            let mean = s.flows.iter().map(|f| f.host.all.mean_us * f.requests as f64).sum::<f64>() / 1500.0;
            prop_assert!((mean - s.all.mean_us).abs() <= 1e-3 * s.all.mean_us.max(1.0), "{} vs {}", mean, s.all.mean_us);
        } else {
            prop_assert!(s.flows.is_empty());
        }
        prop_assert!(buffer > 0 || voltage == "hire" || s.write_amplification >= 1.0 || s.host_pages["write"] == 0);
        // Every program is a host page flushed (all of them without a buffer), a GC move or a
        // migration; with a buffer, overwrites in DRAM and unflushed dirty pages save programs.
        // Summary pages are programmed with the cause of the data that filled their block.
        // Translation pages of a mapping cache are programmed as its write-backs (summary
        // pages of the blocks they fill count under their cause too).
        let translation = s.mapping_cache.as_ref().map_or(0, |c| c.translation_programs);
        prop_assert!(s.flash.by_cause.get("mapping").map_or(0, |c| c[1]) >= translation);
        let rest = s.gc.pages_moved + s.flash.by_cause["migration"][1] + translation;
        if buffer == 0 && voltage != "hire" {
            prop_assert_eq!(s.flash.programs, s.host_pages["write"] + rest + s.summary_programs);
        } else {
            let flushed = s.flash.by_cause["user"][1];
            prop_assert!(s.flash.programs >= flushed + rest);
            prop_assert!(s.flash.programs <= flushed + rest + s.summary_programs);
        }
        prop_assert!(s.staging.redirected <= s.host_pages["read"]);
        prop_assert!(s.flash.by_cause["user"][1] <= s.host_pages["write"] + s.summary_programs);
        prop_assert!(summary_pages > 0 || s.summary_programs == 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Dedup under GC, overwrites, HotR or DedupHR staging, a fingerprinting delay and a power
    /// loss: reads return the content last written, counts match the pages pointing at each
    /// content, and every unique page write is one program.
    #[test]
    fn dedup_runs_hold_invariants(
        seed in 0u64..1000,
        planes in 1u32..3,
        dies in 1u32..3,
        blocks in 16u32..40,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.3f64..0.95,
        fill in 0.0f64..0.95,
        dedup in 0.1f64..0.9,
        pool in prop::sample::select(vec![0.005f64, 0.05, 0.3]),
        staging in prop::sample::select(vec!["none", "extra-chip", "reserved-blocks"]),
        policy in prop::sample::select(vec!["hotr", "deduphr"]),
        threshold in 2u32..5,
        fingerprint_ns in prop::sample::select(vec![0u64, 3000]),
        suspend in prop::sample::select(vec!["off", "ips"]),
        power_loss in prop::option::of(0u64..200_000_000),
        busy_copy in prop::sample::select(vec!["home", "redirect", "less-work"]),
    ) {
        let policy = if staging == "none" { "hotr" } else { policy };
        let cfg = tiny_drive(planes, dies, blocks, ppb)
            .set(&format!("suspend.policy={suspend}")).unwrap()
            .set(&format!("staging.design={staging}")).unwrap()
            .set(&format!("staging.policy={policy}")).unwrap()
            .set(&format!("staging.refcount_threshold={threshold}")).unwrap()
            .set("staging.reserved_blocks_per_plane=2").unwrap()
            .set("staging.hot_fraction=0.5").unwrap()
            .set(&format!("staging.busy_copy={busy_copy}")).unwrap()
            .set("dedup.enabled=true").unwrap()
            .set(&format!("dedup.fingerprint_ns={fingerprint_ns}")).unwrap()
            .set(&format!("precondition.fill={fill}")).unwrap()
            .set("precondition.pattern=random").unwrap()
            .build().unwrap();
        let spec = SynthSpec {
            dedup,
            dup_pool: pool,
            ..small_mix(write_ratio, planes * dies * blocks * ppb, seed)
        };
        let mut gen = spec.generate().unwrap();
        let opts = RunOptions { seed, verify: true, power_loss_at_ns: power_loss, ..Default::default() };
        let s = Simulation::new(&cfg, opts, &mut gen).unwrap().run()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(s.requests, 1500);
        let d = s.dedup.as_ref().unwrap();
        prop_assert_eq!(d.page_writes, s.host_pages["write"]);
        prop_assert_eq!(s.flash.by_cause["user"][1], d.page_writes - d.duplicate_pages);
        prop_assert_eq!(s.flash.programs, s.flash.by_cause["user"][1] + s.gc.pages_moved + s.flash.by_cause["migration"][1]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Host and device buffers under every ShadowGC variant, ECC delay, short refresh periods
    /// and a restart: the verified run holds every invariant (zombie counts per block included).
    #[test]
    fn shadow_runs_hold_invariants(
        seed in 0u64..1000,
        planes in 1u32..3,
        blocks in 24u32..48,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.3f64..0.95,
        fill in 0.0f64..0.95,
        gc in prop::sample::select(vec!["ggc", "greedy-delay", "greedy-separation", "zgc", "hgc", "dgc", "sgc"]),
        host in prop::sample::select(vec![1u32, 8, 64]),
        device in prop::sample::select(vec![1u32, 8, 64]),
        ecc in prop::sample::select(vec![0.0f64, 20.0]),
        retention_h in prop::sample::select(vec![0.0002f64, 168.0]),
        policy in prop::sample::select(vec!["fifo", "rps"]),
        power_loss in prop::option::of(0u64..200_000_000),
    ) {
        let cfg = tiny_drive(planes, 1, blocks, ppb)
            .set(&format!("sched.policy={policy}")).unwrap()
            .set(&format!("shadow.gc={gc}")).unwrap()
            .set(&format!("shadow.ecc_decode_us={ecc}")).unwrap()
            .set(&format!("shadow.fast_retention_h={retention_h}")).unwrap()
            .set("shadow.power_off_h=0.0001").unwrap()
            .set(&format!("buffer.host_pages={host}")).unwrap()
            .set(&format!("buffer.device_pages={device}")).unwrap()
            .set(&format!("precondition.fill={fill}")).unwrap()
            .set("precondition.pattern=random").unwrap()
            .build().unwrap();
        let spec = small_mix(write_ratio, planes * blocks * ppb, seed);
        let mut gen = spec.generate().unwrap();
        let opts = RunOptions { seed, verify: true, power_loss_at_ns: power_loss, ..Default::default() };
        let s = Simulation::new(&cfg, opts, &mut gen).unwrap().run()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(s.requests, 1500);
        prop_assert_eq!(s.flash.programs, s.flash.by_cause["user"][1] + s.flash.by_cause["gc"][1]);
    }
}

#[test]
fn read_wait_attribution_adds_up_to_read_page_latency() {
    // Single-page reads on one die: a request's latency is its page's latency, so the mean of
    // the attribution components must equal the mean read response time — with a mapping
    // cache too, whose misses wait for their translation page first, and with a limit on the
    // requests the drive holds, whose waits on the host side are a class of their own, and
    // with GC holding host work chip-wide (`urgent-chip` on two dies of a chip), where a die
    // sits idle while its sibling's GC goes first: time that waited for GC.
    for (cache, fetch, chip_gc) in [
        ("0", "0", false),
        ("64", "0", false),
        ("0", "2", false),
        ("0", "0", true),
    ] {
        let mut sets = vec![
            "precondition.fill=0.9".to_string(),
            format!("ftl.mapping_cache_entries={cache}"),
            format!("host.max_requests_in_flight={fetch}"),
        ];
        if chip_gc {
            sets.push("geometry.dies_per_chip=2".into());
            sets.push("ftl.gc_mode=\"urgent-chip\"".into());
        }
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let cfg = crate::config("tiny", &sets);
        let s = crate::run_synth(
            &cfg,
            "requests=30000,write_ratio=0.4,size_kib=4,iat_us=400,footprint_gib=0.012,seed=5",
            1,
            true,
        );
        assert!(s.gc.count > 0);
        let parts: f64 = s.read_wait_us.values().sum();
        let flash_reads = (s.host_pages["read"] - s.host_pages["read_from_write_buffer"]) as f64;
        let mean_flash_read = s.read.mean_us * s.read.count as f64 / flash_reads;
        assert!(
            (parts - mean_flash_read).abs() / mean_flash_read < 1e-4,
            "cache {cache}, fetch {fetch}, chip GC {chip_gc}: components {parts} vs measured {mean_flash_read}"
        );
        assert!(s.read_wait_us["gc"] > 0.0 && s.read_wait_us["user_program"] > 0.0);
        assert_eq!(
            cache != "0",
            s.read_wait_us.get("mapping").is_some_and(|&w| w > 0.0)
        );
        assert_eq!(
            fetch != "0",
            s.read_wait_us.get("host_queue").is_some_and(|&w| w > 0.0)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A mapping cache under GC, overwrites and a power loss: every update of the mapping is in
    /// a dirty cached entry or in its translation page (checked with the run's `--verify`), and
    /// a power loss takes at most the cache's dirty entries.
    #[test]
    fn mapping_cache_runs_hold_invariants(
        seed in 0u64..1000,
        planes in 1u32..3,
        dies in 1u32..3,
        blocks in 16u32..40,
        ppb in prop::sample::select(vec![4u32, 8, 16]),
        write_ratio in 0.2f64..0.95,
        fill in 0.0f64..0.95,
        entries in prop::sample::select(vec![1u32, 4, 64]),
        gc_mode in prop::sample::select(vec!["background", "urgent", "urgent-chip", "foreground"]),
        power_loss in prop::option::of(0u64..200_000_000),
    ) {
        let cfg = tiny_drive(planes, dies, blocks, ppb)
            .set(&format!("ftl.mapping_cache_entries={entries}")).unwrap()
            .set(&format!("ftl.gc_mode={gc_mode}")).unwrap()
            .set(&format!("precondition.fill={fill}")).unwrap()
            .set("precondition.pattern=random").unwrap()
            .build().unwrap();
        let spec = small_mix(write_ratio, planes * dies * blocks * ppb, seed);
        let mut gen = spec.generate().unwrap();
        let opts = RunOptions { seed, verify: true, power_loss_at_ns: power_loss, ..Default::default() };
        let s = Simulation::new(&cfg, opts, &mut gen).unwrap().run()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(s.requests, 1500);
        let c = s.mapping_cache.unwrap();
        prop_assert!(c.lost_dirty_at_power_loss <= u64::from(entries));
        prop_assert!(power_loss.is_some() || c.lost_dirty_at_power_loss == 0);
        prop_assert_eq!(c.read_hits + c.read_misses, s.host_pages["read"]);
        prop_assert_eq!(c.write_hits + c.write_misses, s.host_pages["write"]);
    }
}

/// Regression (found by the property test, issue 3): GC found no victim while the blocks with
/// invalid pages were still being programmed, and nothing restarted it when they settled, so
/// writes waited forever for a free block.
#[test]
fn r3_gc_restarts_when_written_blocks_settle() {
    let sets = [
        "geometry.planes_per_die=1",
        "geometry.dies_per_chip=2",
        "geometry.blocks_per_plane=12",
        "geometry.pages_per_block=4",
        "ftl.over_provisioning=0.4",
        "ftl.gc_threshold=0.1",
        "ftl.gc_victim=cost-benefit",
        "ftl.allocation=dynamic",
        "flash.cache_read=true",
        "suspend.policy=erase",
        "suspend.shadow_buffer=false",
        "precondition.fill=0.2764161547671197",
        "precondition.pattern=random",
    ];
    let cfg = crate::config("tiny", &sets);
    let spec = "requests=1500,write_ratio=0.5832023380047007,size_kib=4|8|16,iat_us=120,footprint_gib=0.000219726562,zipf=0.7,seq=0.2,seed=576";
    let s = crate::run_synth(&cfg, spec, 576, true);
    assert_eq!(s.requests, 1500);
}

/// Regression (found by the property test, issues 5/9): with cache read, finishing a cached
/// read could resume a suspended erase before the die's waiting read took the cache register,
/// which then moved the erase into the register and left two array operations on one die.
#[test]
fn r5_cache_register_is_refilled_before_new_work_is_dispatched() {
    let sets = [
        "geometry.planes_per_die=2",
        "geometry.dies_per_chip=2",
        "geometry.blocks_per_plane=37",
        "geometry.pages_per_block=8",
        "ftl.over_provisioning=0.4",
        "ftl.gc_threshold=0.1",
        "ftl.gc_victim=random",
        "ftl.allocation=dynamic",
        "sched.max_outstanding_writes=64",
        "flash.cache_read=true",
        "suspend.policy=ipc",
        "voltage.policy=hire",
        "voltage.rewrite_clean_read_hot=true",
        "buffer.device_pages=4",
        "precondition.fill=0.6961951936166437",
        "precondition.pattern=random",
    ];
    let cfg = crate::config("tiny", &sets);
    let spec = "requests=1500,write_ratio=0.5158068305990197,size_kib=4|8|16,iat_us=120,footprint_gib=0.0027099609375,zipf=0.7,seq=0.2,seed=835";
    let s = crate::run_synth(&cfg, spec, 835, true);
    assert_eq!(s.requests, 1500);
}

/// Regression (property test, issue 3): re-placing a blocked write onto another die dispatched
/// that die, which re-placed a write back and started it here; the outer dispatch then started
/// a second operation on the same die and one read was lost.
#[test]
fn r3_write_replacement_cannot_double_dispatch_a_die() {
    let sets = [
        "geometry.planes_per_die=1",
        "geometry.dies_per_chip=2",
        "geometry.blocks_per_plane=26",
        "geometry.pages_per_block=16",
        "ftl.over_provisioning=0.4",
        "ftl.gc_threshold=0.1",
        "ftl.allocation=dynamic",
        "sched.policy=rps",
        "sched.max_outstanding_writes=64",
        "flash.copyback=true",
        "flash.cache_read=true",
        "suspend.policy=erase",
        "voltage.policy=hire",
        "voltage.rewrite_clean_read_hot=true",
        "buffer.device_pages=4",
        "staging.design=extra-chip",
        "staging.hot_fraction=0.5",
        "precondition.fill=0.5962271732384072",
        "precondition.pattern=random",
    ];
    let cfg = crate::config("tiny", &sets);
    let spec = "requests=1500,write_ratio=0.5474917797946783,size_kib=4|8|16,iat_us=120,footprint_gib=0.001904296875,zipf=0.7,seq=0.2,seed=172";
    assert_eq!(crate::run_synth(&cfg, spec, 172, true).requests, 1500);
}

/// Regression (property test, issue 6): a staging copy program queued behind a host write
/// waiting for space was overtaken by the reclamation erase of its block, then programmed into
/// the erased block and later overwritten by a new copy, leaving a stale copy mapped.
#[test]
fn r6_staging_copies_are_programmed_before_their_block_is_reclaimed() {
    let sets = [
        "geometry.planes_per_die=1",
        "geometry.dies_per_chip=2",
        "geometry.blocks_per_plane=15",
        "geometry.pages_per_block=4",
        "ftl.over_provisioning=0.4",
        "ftl.gc_threshold=0.1",
        "sched.max_outstanding_writes=64",
        "suspend.policy=erase",
        "staging.design=reserved-blocks",
        "staging.reserved_blocks_per_plane=2",
        "staging.hot_fraction=0.5",
        "precondition.fill=0.24227522858769562",
        "precondition.pattern=random",
    ];
    let cfg = crate::config("tiny", &sets);
    let spec = "requests=1500,write_ratio=0.22636055560222143,size_kib=4|8|16,iat_us=120,footprint_gib=0.000549316406,zipf=0.7,seq=0.2,seed=143";
    let s = crate::run_synth(&cfg, spec, 143, true);
    // Copies were made, reclaimed and looked up (on two dies the copy's die is often busy
    // too, so most conflicted reads with a copy stay home).
    let st = &s.staging;
    assert!(
        st.erases > 0 && st.migrations > 0 && st.redirected + st.copy_busy > 0,
        "{st:?}"
    );
}

/// Regression (property test, issue 8): DGC took version 10 of a page from the device buffer
/// while the write-back of version 9 was being programmed; version 9 landed first, the
/// relocation then found its source remapped and was discarded, and version 10 was lost.
/// A relocation of buffer data now commits like a host write.
#[test]
fn r8_a_merged_relocation_wins_over_an_older_write_back() {
    let sets = [
        "geometry.planes_per_die=2",
        "geometry.blocks_per_plane=47",
        "geometry.pages_per_block=4",
        "ftl.over_provisioning=0.4",
        "ftl.gc_threshold=0.1",
        "shadow.gc=dgc",
        "shadow.fast_retention_h=0.0002",
        "shadow.power_off_h=0.0001",
        "buffer.host_pages=64",
        "buffer.device_pages=8",
        "precondition.fill=0.1785010091921244",
        "precondition.pattern=random",
    ];
    let cfg = crate::config("tiny", &sets);
    let spec = "requests=1500,write_ratio=0.6539247040685254,size_kib=4|8|16,iat_us=120,footprint_gib=0.0008605957031249999,zipf=0.7,seq=0.2,seed=241";
    let s = crate::run_synth(&cfg, spec, 241, true);
    assert!(s.shadow.as_ref().unwrap().from_buffer > 0);
}

/// Regression (property test, issue 8): a restart rolled a dropped twin's page back to the
/// version on flash while a newer write-back of it was still being programmed; that program
/// then landed a version above the rolled-back newest one. The rollback now takes the newest
/// version in flight into account.
#[test]
fn r8_a_dropped_twin_rolls_back_to_the_version_in_flight() {
    let cfg = tiny_drive(1, 1, 36, 4)
        .set("shadow.gc=sgc")
        .unwrap()
        .set("shadow.fast_retention_h=0.0002")
        .unwrap()
        .set("shadow.power_off_h=0.0001")
        .unwrap()
        .set("buffer.host_pages=64")
        .unwrap()
        .set("buffer.device_pages=1")
        .unwrap()
        .set("precondition.fill=0")
        .unwrap()
        .build()
        .unwrap();
    let spec = small_mix(0.8813304009454599, 36 * 4, 139);
    let mut gen = spec.generate().unwrap();
    let opts = RunOptions {
        seed: 139,
        verify: true,
        power_loss_at_ns: Some(103_108_541),
        ..Default::default()
    };
    let s = Simulation::new(&cfg, opts, &mut gen)
        .unwrap()
        .run()
        .unwrap();
    assert!(s.shadow.as_ref().unwrap().twin_versions_lost > 0);
}
