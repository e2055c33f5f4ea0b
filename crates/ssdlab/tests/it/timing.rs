//! Closed-form timing of the die/bus model: single reads, cache read pipelining, multi-plane
//! gangs, bus sharing between dies on one channel.

use crate::{config, run_recorded};
use ssdlab::config::Config;
use ssdlab::metrics::Summary;
use ssdlab::workload::trace::TraceError;
use ssdlab::workload::{IoOp, Request};

fn reads(
    offsets_pages: impl Iterator<Item = u64>,
    pages: u64,
    gap_ns: u64,
) -> Vec<Result<Request, TraceError>> {
    offsets_pages
        .enumerate()
        .map(|(i, p)| {
            Ok(Request {
                time_ns: i as u64 * gap_ns,
                offset_bytes: p * 4096,
                size_bytes: pages * 4096,
                op: IoOp::Read,
                device: 0,
                content: None,
                flow: 0,
            })
        })
        .collect()
}

fn run(cfg: &Config, reqs: Vec<Result<Request, TraceError>>) -> Summary {
    run_recorded(cfg, reqs).0
}

#[test]
fn isolated_read_costs_sense_plus_transfer() {
    let cfg = config("tiny", &["flash.command_us=2"]);
    let s = run(&cfg, reads(0..100, 1, 1_000_000));
    let expected = cfg.flash.command_us + cfg.flash.read_us + cfg.flash.transfer_us;
    assert!(
        (s.read.mean_us - expected).abs() < 1e-6,
        "{} vs {expected}",
        s.read.mean_us
    );
}

#[test]
fn cache_read_overlaps_sensing_with_transfer() {
    // 2000 reads arriving at once on one die: without cache read each takes sense + transfer,
    // with it the pipeline is limited by the slower stage.
    let slow_bus = ["flash.read_us=25", "flash.transfer_us=40"];
    let plain = run(&config("tiny", &slow_bus), reads(0..2000, 1, 0));
    let mut with_cache = slow_bus.to_vec();
    with_cache.push("flash.cache_read=true");
    let cached = run(&config("tiny", &with_cache), reads(0..2000, 1, 0));
    let per_read = |s: &Summary| s.simulated_s * 1e6 / 2000.0;
    assert!(
        (per_read(&plain) - 65.0).abs() < 0.1,
        "{}",
        per_read(&plain)
    );
    assert!(
        (per_read(&cached) - 40.0).abs() < 0.1,
        "{}",
        per_read(&cached)
    );
}

#[test]
fn multi_plane_read_senses_once_for_both_planes() {
    // Two planes, sequential fill: logical pages 2k and 2k+1 sit at the same offset of planes 0
    // and 1. An 8 KiB read of them is one multi-plane sense plus two transfers.
    let base = ["geometry.planes_per_die=2", "precondition.fill=1.0"];
    let single = run(
        &config("tiny", &base),
        reads((0..200).map(|i| 2 * i), 2, 1_000_000),
    );
    let mut mp = base.to_vec();
    mp.push("flash.multi_plane=true");
    let ganged = run(
        &config("tiny", &mp),
        reads((0..200).map(|i| 2 * i), 2, 1_000_000),
    );
    let cfg = config("tiny", &mp);
    let (r, x) = (cfg.flash.read_us, cfg.flash.transfer_us);
    assert!(
        (single.read.mean_us - 2.0 * (r + x)).abs() < 1e-6,
        "{}",
        single.read.mean_us
    );
    assert!(
        (ganged.read.mean_us - (r + 2.0 * x)).abs() < 1e-6,
        "{}",
        ganged.read.mean_us
    );
    // Each of the 200 reads is one multi-plane command; without it none is reported.
    assert_eq!(ganged.flash.multi_plane, [200, 0, 0]);
    assert_eq!(single.flash.multi_plane, [0, 0, 0]);
}

#[test]
fn dies_on_one_channel_share_the_bus() {
    // Two dies on one channel, reads of both at once: the second transfer waits for the first.
    let cfg = config(
        "tiny",
        &[
            "geometry.dies_per_chip=2",
            "flash.read_us=25",
            "flash.transfer_us=40",
        ],
    );
    // Static striping puts logical pages 0 and 1 on dies 0 and 1.
    let s = run(&cfg, reads([0u64, 1].into_iter(), 1, 0));
    assert!(
        (s.read.max_us - (25.0 + 80.0)).abs() < 0.2,
        "{}",
        s.read.max_us
    );
    assert!(
        (s.read_wait_us["bus"] - 20.0).abs() < 1e-6,
        "mean bus wait {}",
        s.read_wait_us["bus"]
    );
}

/// Host link time of `bytes` at `mb_s` MB/s, µs, rounded up to whole ns like the model.
fn link_us(bytes: f64, mb_s: f64) -> f64 {
    (bytes * 1e3 / mb_s).ceil() / 1e3
}

#[test]
fn host_link_presets_add_their_transfers_to_an_isolated_request() {
    // (preset, MB/s per direction from the line rate, submission and completion frame bytes)
    let pcie3 = 8e3 * 4.0 / 8.0 * 128.0 / 130.0 * 256.0 / 280.0;
    for (link, mb_s, sub, done) in [
        ("sata3", 600.0, 48.0, 8.0),
        ("sas12", 1200.0, 56.0, 52.0),
        ("pcie3x4", pcie3, 64.0, 20.0),
        ("pcie4x4", 2.0 * pcie3, 64.0, 20.0),
    ] {
        let cfg = config("tiny", &[&format!("host.link=\"{link}\"")]);
        let f = &cfg.flash;
        // Isolated one-page reads: command in, sense, page transfer, data and completion out.
        let s = run(&cfg, reads((0..50).map(|i| i * 4), 1, 1_000_000));
        let read = link_us(sub, mb_s) + f.read_us + f.transfer_us + link_us(4096.0 + done, mb_s);
        assert!(
            (s.read.mean_us - read).abs() < 1e-6,
            "{link}: read {} vs {read}",
            s.read.mean_us
        );
        let on_link = link_us(sub, mb_s) + link_us(4096.0 + done, mb_s);
        assert!((s.read_wait_us["host_link"] - on_link).abs() < 1e-6);
        // Isolated one-page writes: command and data in, program, completion out.
        let writes = (0..50)
            .map(|i| {
                Ok(Request {
                    time_ns: i * 1_000_000,
                    offset_bytes: i * 4096,
                    size_bytes: 4096,
                    op: IoOp::Write,
                    device: 0,
                    content: None,
                    flow: 0,
                })
            })
            .collect();
        let s = run(&cfg, writes);
        let write =
            link_us(sub + 4096.0, mb_s) + f.transfer_us + f.program_us + link_us(done, mb_s);
        assert!(
            (s.write.mean_us - write).abs() < 1e-6,
            "{link}: write {} vs {write}",
            s.write.mean_us
        );
    }
    let none = run(&config("tiny", &[]), reads(0..5, 1, 1_000_000));
    assert!(!none.read_wait_us.contains_key("host_link"));
}

#[test]
fn a_half_duplex_link_serialises_both_directions() {
    // 64 KiB reads and writes alternating every 100 us on fast flash: the link is the
    // bottleneck. On a half-duplex link read data waits behind write data and the other way
    // round; a full-duplex link of the same rate carries both at once.
    let mixed = || {
        (0..400u64)
            .map(|i| {
                Ok(Request {
                    time_ns: i * 100_000,
                    offset_bytes: (i % 64) * 65536,
                    size_bytes: 65536,
                    op: if i % 2 == 0 { IoOp::Read } else { IoOp::Write },
                    device: 0,
                    content: None,
                    flow: 0,
                })
            })
            .collect::<Vec<_>>()
    };
    let fast = [
        "flash.read_us=1",
        "flash.program_us=1",
        "flash.transfer_us=0.1",
    ];
    let with = |extra: &[&str]| {
        let sets: Vec<&str> = fast.iter().chain(extra).copied().collect();
        run(&config("tiny", &sets), mixed())
    };
    let half = with(&["host.link=\"sata3\""]);
    let full = with(&[
        "host.link=\"custom\"",
        "host.link_mb_s=600",
        "host.link_command_bytes=[48, 8]",
        "host.link_full_duplex=true",
    ]);
    assert!(
        half.all.mean_us > 1.5 * full.all.mean_us,
        "{} vs {}",
        half.all.mean_us,
        full.all.mean_us
    );
}

/// One-page writes of logical pages `single` every ms, then 100 8-KiB writes of page
/// pairs (2k, 2k+1: planes 0 and 1 under static striping) starting at page `from`; returns
/// the pairs' mean write latency.
fn pair_writes(rule: &str, single: &[u64], from: u64) -> f64 {
    let mut reqs: Vec<Result<Request, TraceError>> = single
        .iter()
        .enumerate()
        .map(|(i, &p)| crate::page_request(i as u64 * 1000, p, IoOp::Write, None))
        .collect();
    let start = single.len() as u64 * 1000 + 1000;
    for i in 0..100u64 {
        reqs.push(Ok(Request {
            time_ns: (start + i * 1000) * 1000,
            offset_bytes: (from + 2 * i) * 4096,
            size_bytes: 8192,
            op: IoOp::Write,
            device: 0,
            content: None,
            flow: 0,
        }));
    }
    let cfg = config(
        "tiny",
        &[
            "geometry.planes_per_die=2",
            "flash.multi_plane=true",
            &format!("flash.multi_plane_rule=\"{rule}\""),
        ],
    );
    let s = run(&cfg, reqs);
    let pairs = s.write.mean_us * s.write.count as f64
        - single.len() as f64 * (cfg.flash.transfer_us + cfg.flash.program_us);
    pairs / 100.0
}

#[test]
fn same_page_multi_plane_never_gangs_different_offsets() {
    let cfg = config("tiny", &[]);
    let (x, p) = (cfg.flash.transfer_us, cfg.flash.program_us);
    let ganged = 2.0 * x + p;
    let apart = 2.0 * (x + p);
    let near = |v: f64, want: f64| (v - want).abs() < 1.0;
    // Aligned planes: every rule gangs the pair.
    for rule in ["any", "same-page", "same-page-block-parity"] {
        assert!(near(pair_writes(rule, &[], 0), ganged), "{rule}");
    }
    // Plane 0 one page ahead (page 1000 is on plane 0): only `any` pairs different offsets.
    assert!(near(pair_writes("any", &[1000], 0), ganged));
    assert!(near(pair_writes("same-page", &[1000], 0), apart));
    assert!(near(
        pair_writes("same-page-block-parity", &[1000], 0),
        apart
    ));
    // Plane 0 a whole block ahead: same offsets, blocks of different parity.
    let block: Vec<u64> = (0..64).map(|i| 1000 + 2 * i).collect();
    assert!(near(pair_writes("same-page", &block, 0), ganged));
    assert!(near(
        pair_writes("same-page-block-parity", &block, 0),
        apart
    ));
}

#[test]
fn a_read_of_data_in_flight_is_served_by_the_controller_or_waits_for_flash() {
    // A write of page 5 at t = 0, a read of it 1 us later, on one idle die.
    let reqs = || {
        vec![
            crate::page_request(0, 5, IoOp::Write, None),
            crate::page_request(1, 5, IoOp::Read, None),
        ]
    };
    let controller = run(&config("tiny", &[]), reqs());
    assert!(
        controller.read.mean_us < 0.01,
        "{}",
        controller.read.mean_us
    );
    assert_eq!(controller.host_pages["read_from_write_buffer"], 1);
    let cfg = config("tiny", &["ftl.read_inflight=\"flash\""]);
    let flash = run(&cfg, reqs());
    let f = &cfg.flash;
    // The program (transfer + array) ends, then the read senses and transfers the new page.
    let want = f.transfer_us + f.program_us + f.read_us + f.transfer_us - 1.0;
    assert!(
        (flash.read.mean_us - want).abs() < 1e-6,
        "{} vs {want}",
        flash.read.mean_us
    );
    assert_eq!(flash.host_pages["read_after_write"], 1);
    assert_eq!(flash.host_pages["read_from_write_buffer"], 0);
    assert!(!controller.host_pages.contains_key("read_after_write"));
}

#[test]
fn a_foreground_clean_blocks_the_request_that_triggered_it_for_its_moves_and_erase() {
    // A full one-die drive and single-page writes 200 ms apart, each long done before the
    // next: in the foreground mode nothing cleans between them, and every clean runs whole
    // (moves, then erase) while the write that found the plane at its threshold waits. So
    // the writes' response times beyond one program add up exactly to the cleans.
    let sets = [
        "precondition.fill=1.0",
        "precondition.pattern=random",
        "ftl.over_provisioning=0.3",
    ];
    let writes = || {
        (0..400u64)
            .map(|i| {
                Ok(Request {
                    time_ns: i * 200_000_000,
                    offset_bytes: (i * 7 % 2000) * 4096,
                    size_bytes: 4096,
                    op: IoOp::Write,
                    device: 0,
                    content: None,
                    flow: 0,
                })
            })
            .collect()
    };
    let mut fg_sets = sets.to_vec();
    fg_sets.push("ftl.gc_mode=foreground");
    let cfg = config("tiny", &fg_sets);
    let (s, responses) = run_recorded(&cfg, writes());
    let f = &cfg.flash;
    let program = f.command_us + f.transfer_us + f.program_us;
    let moved = s.gc.pages_moved as f64;
    let cleans = moved * (f.command_us + f.read_us + f.transfer_us + program)
        + s.gc.count as f64 * (f.command_us + f.erase_us);
    let waited: f64 = responses.iter().map(|r| r - program).sum();
    assert!(s.gc.count >= 2 && moved > 0.0, "too few cleans: {:?}", s.gc);
    assert!(
        (waited - cleans).abs() < 1e-6 * responses.len() as f64,
        "writes waited {waited} us beyond their programs, the cleans take {cleans} us ({} cleans, {moved} moves)",
        s.gc.count
    );
    assert!(responses.iter().filter(|&&r| r > program + 1e-6).count() >= 2);
    assert!(s.scheme_metrics["gc_mode.foreground_held"] > 0.0);
    // In the background mode the drive cleans between the writes, so they never wait.
    let (b, background) = run_recorded(&config("tiny", &sets), writes());
    assert!(b.gc.count >= 2);
    assert!(background.iter().all(|r| (r - program).abs() < 1e-6));
}

#[test]
fn a_foreground_request_waits_for_one_clean_however_many_planes_need_one() {
    // One die of four planes, filled at random so every plane sits at its threshold, and
    // single-page writes far apart. DiskSim's element cleans one block, on one plane, per
    // request it serves (`ssd_clean_element_copyback` with one parallel unit), so no write
    // waits for more than one clean, however many planes need one; the cleans still add up
    // to what the writes waited.
    let sets = [
        "geometry.planes_per_die=4",
        "geometry.blocks_per_plane=32",
        "precondition.fill=1.0",
        "precondition.pattern=random",
        "ftl.over_provisioning=0.3",
        "ftl.gc_mode=foreground",
    ];
    let cfg = config("tiny", &sets);
    let writes = (0..600u64)
        .map(|i| {
            Ok(Request {
                time_ns: i * 500_000_000,
                offset_bytes: (i * 13 % 4000) * 4096,
                size_bytes: 4096,
                op: IoOp::Write,
                device: 0,
                content: None,
                flow: 0,
            })
        })
        .collect();
    let (s, responses) = run_recorded(&cfg, writes);
    let f = &cfg.flash;
    let program = f.command_us + f.transfer_us + f.program_us;
    let move_us = f.command_us + f.read_us + f.transfer_us + program;
    let one_clean = f64::from(cfg.geometry.pages_per_block) * move_us + f.command_us + f.erase_us;
    let waits: Vec<f64> = responses.iter().map(|r| r - program).collect();
    let cleans =
        s.gc.pages_moved as f64 * move_us + s.gc.count as f64 * (f.command_us + f.erase_us);
    assert!(s.gc.count >= 8, "too few cleans: {:?}", s.gc);
    assert!(
        (waits.iter().sum::<f64>() - cleans).abs() < 1e-6 * responses.len() as f64,
        "the writes' waits do not add up to the cleans"
    );
    let worst = waits.iter().cloned().fold(0.0, f64::max);
    assert!(
        worst <= one_clean + 1e-6,
        "a write waited {worst} us, more than one clean can take ({one_clean} us)"
    );
    // Cleans outnumber the writes that waited for one only if some write waited for two.
    let waited = waits.iter().filter(|&&w| w > 1e-6).count() as u64;
    assert_eq!(waited, s.gc.count, "one clean per waiting write");
}

#[test]
fn summary_pages_hold_no_data_cost_one_program_per_filled_block_and_shrink_the_logical_space() {
    // 70 single-page writes in order, far apart, on one plane of 8-page blocks with one
    // summary page: 7 data pages per block, so 10 blocks fill and 10 summary programs follow.
    let sets = ["geometry.pages_per_block=8", "ftl.summary_pages=1"];
    let cfg = config("tiny", &sets);
    assert_eq!(
        ssdlab::ftl::logical_pages(&cfg),
        ((1.0 - cfg.ftl.over_provisioning) * 64.0 * 7.0) as u32
    );
    let writes = (0..70u64)
        .map(|i| {
            Ok(Request {
                time_ns: i * 10_000_000,
                offset_bytes: i * 4096,
                size_bytes: 4096,
                op: IoOp::Write,
                device: 0,
                content: None,
                flow: 0,
            })
        })
        .collect();
    let (s, responses) = run_recorded(&cfg, writes);
    assert_eq!(s.summary_programs, 10);
    assert_eq!(s.flash.programs, 70 + 10);
    // Each summary program runs after the write that filled its block, never ahead of it,
    // and is done before the next write arrives.
    let f = &cfg.flash;
    let program = f.command_us + f.transfer_us + f.program_us;
    assert!(responses.iter().all(|r| (r - program).abs() < 1e-6));
    let e = ssdlab::config::ConfigBuilder::preset("tiny")
        .unwrap()
        .set("ftl.summary_pages=64")
        .unwrap()
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("ftl.summary_pages = 64"), "{e}");
}
