//! Tests of the profile on hand-built streams with known answers.
use super::*;

fn req(t_us: u64, op: IoOp, page: u64, pages: u64) -> Request {
    req_bytes(t_us, op, page * 4096, pages * 4096)
}

/// A request at any byte offset and size (misaligned ones included).
fn req_bytes(t_us: u64, op: IoOp, offset_bytes: u64, size_bytes: u64) -> Request {
    Request {
        time_ns: t_us * 1000,
        offset_bytes,
        size_bytes,
        op,
        device: 0,
        content: None,
        flow: 0,
    }
}

#[test]
fn page_types_sizes_and_sequentiality_of_a_hand_built_stream() {
    use IoOp::{Read as R, Write as W};
    let reqs = [
        req(0, W, 0, 2),   // pages 0,1 written
        req(10, R, 2, 1),  // page 2 read; continues the write (all)
        req(20, R, 0, 1),  // page 0: read after write
        req(30, W, 10, 1), // page 10 written
        req(40, R, 1, 2),  // pages 1,2: read after write (page 1 last written)
    ];
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    // Pages: 0 mixed, 1 mixed, 2 read-only, 10 write-only.
    assert_eq!(p.page_types.mixed_pct, 50.0);
    assert_eq!(p.page_types.read_only_pct, 25.0);
    assert_eq!(p.page_types.write_only_pct, 25.0);
    // One write and one read each: pages 0 and 1 are MIX by hotr.txt's rule too.
    assert_eq!(p.page_types.mix_pct, 50.0);
    assert_eq!((p.page_types.ri_pct, p.page_types.wi_pct), (25.0, 25.0));
    assert_eq!(p.sequentiality.all_pct, 25.0);
    assert_eq!(p.sequentiality.read_pct, 50.0); // page 0 then pages 1-2
    assert_eq!(p.write_pct, 40.0);
    let read_kib: Vec<u32> = p.sizes.read.iter().map(|s| s.kib).collect();
    assert_eq!(read_kib, [4, 8]);
    assert!((p.reuse.read_after_write_pct - 200.0 / 3.0).abs() < 1e-9);
    assert_eq!(p.reuse.reread_pct, 0.0);
    // Page 2 re-read by the last request with pages 0 and 1 read in between: distance 2.
    assert_eq!(p.reuse.reread_stack_distance.count, 1);
    assert_eq!(p.reuse.reread_stack_distance.p50, 2.0);
    assert_eq!(p.read_popularity.pages, 3);
    assert_eq!(p.write_popularity.pages, 3);
}

#[test]
fn write_footprint_growth_tells_linear_from_reused_footprints() {
    use IoOp::Write as W;
    // 10,240 writes of new pages: the footprint grows linearly.
    let linear = profile((0..10_240).map(|i| Ok::<_, String>(req(i, W, i, 1)))).unwrap();
    let g = &linear.reuse.write_footprint_growth_pct;
    assert_eq!(g.len(), 10);
    for (i, x) in g.iter().enumerate() {
        assert!((x - 10.0 * (i + 1) as f64).abs() < 1e-9, "{g:?}");
    }
    // 10,240 writes cycling over 512 pages: the whole footprint within the first tenth.
    let reused = profile((0..10_240).map(|i| Ok::<_, String>(req(i, W, i % 512, 1)))).unwrap();
    assert!(reused
        .reuse
        .write_footprint_growth_pct
        .iter()
        .all(|&x| x == 100.0));
    let reads = profile([Ok::<_, String>(req(0, IoOp::Read, 0, 1))].into_iter()).unwrap();
    assert!(reads.reuse.write_footprint_growth_pct.is_empty());
}

#[test]
fn hotr_page_classes_use_the_ninety_percent_rule() {
    use IoOp::{Read as R, Write as W};
    // Page 0: 19 reads, 1 write (95 % reads: RI, though strictly mixed). Page 1: 9 reads,
    // 1 write (90 %, not above: MIX). Page 2: 1 read, 10 writes (91 % writes: WI).
    let mut reqs = vec![req(0, W, 0, 1), req(1, W, 1, 1), req(2, R, 2, 1)];
    reqs.extend((0..19).map(|i| req(10 + i, R, 0, 1)));
    reqs.extend((0..9).map(|i| req(40 + i, R, 1, 1)));
    reqs.extend((0..10).map(|i| req(60 + i, W, 2, 1)));
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    let t = &p.page_types;
    assert_eq!(t.mixed_pct, 100.0);
    let third = 100.0 / 3.0;
    assert!([t.ri_pct, t.wi_pct, t.mix_pct]
        .iter()
        .all(|x| (x - third).abs() < 1e-9));
}

#[test]
fn a_poisson_stream_has_unit_dispersion_and_no_bias() {
    let spec: crate::workload::synth::SynthSpec =
        "requests=200000,iat_us=100,write_ratio=0.5,footprint_gib=1"
            .parse()
            .unwrap();
    let p = profile(spec.generate().unwrap()).unwrap();
    for idc in p.burstiness.all.idc.iter().flatten() {
        assert!((idc - 1.0).abs() < 0.25, "{idc}");
    }
    let b = p.burstiness.all.bmodel_b.unwrap();
    assert!(b < 0.56, "{b}");
    let h = p.burstiness.all.hurst.unwrap();
    assert!((h - 0.5).abs() < 0.1, "{h}");
}

/// Runs are arrivals less than 1 ms apart: ten runs of 1, 1, 1, 1, 1, 1, 1, 2, 2 and 9
/// requests (20 in all) have a mean of 2 and a run-as-a-request-sees-it of
/// (7 + 4 + 4 + 81) / 20 = 4.8.
#[test]
fn runs_and_the_run_a_request_sees() {
    let mut reqs = Vec::new();
    let mut t = 0;
    for n in [1, 1, 1, 1, 1, 1, 1, 2, 2, 9] {
        for _ in 0..n {
            reqs.push(req(t, IoOp::Write, 0, 1));
            t += 999; // just under a millisecond apart within a run
        }
        t += 5_000;
    }
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    let w = &p.burstiness.write;
    assert_eq!(w.run_mean, Some(2.0));
    assert!((w.run_seen_mean.unwrap() - 4.8).abs() < 1e-12, "{w:?}");
    assert_eq!(p.burstiness.read.run_mean, None);
}

/// A re-write is a write whose first page the write just before wrote: of four writes after
/// the first, the second (page 1, inside the 2-page write of pages 0-1) and the fourth (page
/// 5 again) are; a read in between does not break the pair.
#[test]
fn rewrites_are_writes_of_a_page_the_write_before_wrote() {
    use IoOp::{Read as R, Write as W};
    let reqs = [
        req(0, W, 0, 2),
        req(10, W, 1, 1),
        req(20, W, 5, 1),
        req(25, R, 5, 1),
        req(30, W, 5, 1),
        req(40, W, 0, 1),
    ];
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    assert_eq!(p.reuse.rewrite_pct, 40.0);
    // Runs of writes to one page: 2, 2, 1 — too few to report (10 at least).
    assert_eq!(p.reuse.rewrite_run_mean, None);
    // Ten runs, of 1 (×7), 2, 2 and 9 writes of one page: mean 2, a write sees 4.8.
    let mut reqs = Vec::new();
    for (page, n) in [1, 1, 1, 1, 1, 1, 1, 2, 2, 9].into_iter().enumerate() {
        for _ in 0..n {
            reqs.push(req(reqs.len() as u64, W, page as u64 * 10, 1));
        }
    }
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    assert_eq!(p.reuse.rewrite_run_mean, Some(2.0));
    assert!((p.reuse.rewrite_run_seen_mean.unwrap() - 4.8).abs() < 1e-12);
}

/// Near re-writes: of the writes less than 1 ms after the write before (all but the first
/// and the one 5 ms later), those starting on a page one of the 2nd to 16th writes before
/// last wrote. Pages 1, 2, 1 (near), 2 (near), 2 (the write before: a re-write, not near),
/// then 5 ms later 1 (near by distance, but not in a run): 2 of 4 close writes.
#[test]
fn near_rewrites_are_counted_inside_runs() {
    use IoOp::Write as W;
    let reqs = [
        req(0, W, 1, 1),
        req(100, W, 2, 1),
        req(200, W, 1, 1),
        req(300, W, 2, 1),
        req(400, W, 2, 1),
        req(5_400, W, 1, 1),
    ];
    let p = profile(reqs.into_iter().map(Ok::<_, String>)).unwrap();
    assert_eq!(p.reuse.rewrite_near_pct, 50.0);
    assert!((p.reuse.rewrite_pct - 100.0 / 6.0).abs() < 1e-9);
}

/// Re-reads by how they came: a misaligned sequential stream (64 KiB reads 512 B past a page
/// boundary, as cloudphysics's) shares each read's first page with the read before's last —
/// re-reads that continue the read before onward; reads at an 8 KiB stride of 12 KiB (as
/// financial1's) start inside the read before's extent; reading again where a read started is
/// neither.
#[test]
fn re_reads_tell_a_stream_s_shared_page_and_a_start_inside_a_read() {
    let at = |t: u64, offset: u64, size: u64| req_bytes(t, IoOp::Read, offset, size);
    let mut stream: Vec<Request> = (0..20).map(|k| at(k, 3_584 + k * 65_536, 65_536)).collect();
    // Again where the 5th and the 10th started.
    stream.push(at(20, 3_584 + 4 * 65_536, 65_536));
    stream.push(at(21, 3_584 + 9 * 65_536, 65_536));
    let p = profile(stream.into_iter().map(Ok::<_, String>)).unwrap();
    let u = &p.reuse;
    assert!((u.reread_pct - 2100.0 / 22.0).abs() < 1e-9, "{u:?}");
    assert!((u.reread_onward_pct - 1900.0 / 22.0).abs() < 1e-9, "{u:?}");
    assert_eq!(u.reread_inside_pct, 0.0);
    // Pages 1000-1002, 1002-1004, 1004-1006, …: each starts on the read before's last page.
    let strided = (0..10).map(|k| at(k, (1_000 + 2 * k) * 4096, 12_288));
    let p = profile(strided.map(Ok::<_, String>)).unwrap();
    assert_eq!(p.reuse.reread_pct, 90.0);
    assert_eq!(p.reuse.reread_inside_pct, 90.0);
    assert_eq!(p.reuse.reread_onward_pct, 0.0);
}
