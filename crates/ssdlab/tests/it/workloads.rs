//! Workload reconstruction: the generator's new processes converge to their parameters as
//! the profile measures them, `trace fit` recovers a spec from its own stream, and bad fit
//! inputs are refused by name.

use ssdlab::workload::fit::{fit, FitError, FitOptions};
use ssdlab::workload::profile::{profile, Profile};
use ssdlab::workload::synth::SynthSpec;
use ssdlab::workload::{IoOp, Request};

fn measure(spec: &str) -> Profile {
    let spec: SynthSpec = spec.parse().unwrap();
    profile(spec.generate().unwrap()).unwrap()
}

#[test]
fn popularity_sizes_and_write_share_converge() {
    let p = measure(
        "requests=200000,write_ratio=0.3,iat_us=50,footprint_gib=1,read_zipf=0.9,read_footprint_gib=0.04,write_zipf=0.5,write_footprint_gib=0.04,read_size_kib=4:0.7|8:0.2|64:0.1,rw_mix=0,seed=5",
    );
    assert!((p.write_pct - 30.0).abs() < 0.5, "{}", p.write_pct);
    let zr = p.read_popularity.zipf.unwrap();
    let zw = p.write_popularity.zipf.unwrap();
    assert!((zr - 0.9).abs() < 0.1, "read zipf {zr}");
    assert!((zw - 0.5).abs() < 0.1, "write zipf {zw}");
    let share = |kib| {
        p.sizes
            .read
            .iter()
            .find(|s| s.kib == kib)
            .map_or(0.0, |s| s.pct)
    };
    assert!((share(4) - 70.0).abs() < 1.0 && (share(64) - 10.0).abs() < 1.0);
    // rw_mix = 0: the written hot set lies apart from the read one.
    assert!(p.page_types.mixed_pct < 5.0, "{}", p.page_types.mixed_pct);
}

#[test]
fn bmodel_bias_is_measured_back() {
    for b in [0.65, 0.75, 0.85] {
        let p = measure(&format!(
            "requests=200000,write_ratio=0.5,iat_us=100,read_arrivals=bmodel,read_b={b},write_arrivals=exp,footprint_gib=1,seed=2"
        ));
        let got = p.burstiness.read.bmodel_b.unwrap();
        assert!((got - b).abs() < 0.04, "b {b}: measured {got}");
        let w = p.burstiness.write.bmodel_b.unwrap();
        assert!(w < 0.56, "Poisson writes measured b {w}");
        // Writes stay Poisson while reads burst.
        let idc = p.burstiness.write.idc[2].unwrap();
        assert!((idc - 1.0).abs() < 0.3, "write IDC {idc}");
    }
}

#[test]
fn on_off_dispersion_follows_its_closed_form() {
    // ON 2 ms, OFF 18 ms, 95 % of requests in ON: the IDC rises from near 1 at fine widths to
    // 1 + 2 π1 π2 (λ1 − λ2)² / (λ s) at long ones.
    let p = measure(
        "requests=400000,write_ratio=0,iat_us=50,arrivals=onoff,on_ms=2,off_ms=18,on_share=0.95,footprint_gib=1,seed=3",
    );
    let (pi1, pi2) = (0.1f64, 0.9f64);
    let rate = 1.0f64 / 0.05; // per ms
    let (l1, l2) = (rate * 0.95 / pi1, rate * 0.05 / pi2);
    let s = 1.0 / 2.0 + 1.0 / 18.0;
    let idc = |w: f64| {
        1.0 + 2.0 * pi1 * pi2 * (l1 - l2).powi(2) / (rate * s)
            * (1.0 - (1.0 - (-s * w).exp()) / (s * w))
    };
    for (i, w) in [1.0, 10.0, 100.0].into_iter().enumerate() {
        let got = p.burstiness.all.idc[i].unwrap();
        assert!(
            (got / idc(w) - 1.0).abs() < 0.2,
            "width {w} ms: {got} vs {}",
            idc(w)
        );
    }
}

#[test]
fn rereads_reads_after_writes_and_batches_converge() {
    let p = measure(
        "requests=100000,write_ratio=0.4,iat_us=100,footprint_gib=4,reread=0.3,reread_dist=20,raw=0.1,raw_dist=5,dist_sigma=0.5,seed=4",
    );
    // A uniform draw over 1 M pages re-hits a page with a chance below 1 %, so the shares are
    // the spec's.
    assert!(
        (p.reuse.reread_pct - 30.0).abs() < 2.0,
        "{}",
        p.reuse.reread_pct
    );
    assert!(
        (p.reuse.read_after_write_pct - 10.0).abs() < 1.5,
        "{}",
        p.reuse.read_after_write_pct
    );
    let m = p.reuse.reread_gap_requests.p50;
    assert!((15.0..=26.0).contains(&m), "re-read gap median {m}");
    let m = p.reuse.raw_gap_requests.p50;
    assert!((4.0..=7.0).contains(&m), "read-after-write gap median {m}");
    let b = measure(
        "requests=100000,write_ratio=0.5,iat_us=1000,batch=4,batch_us=20,footprint_gib=1,seed=6",
    );
    let per = b.burstiness.all.per_busy_ms.unwrap();
    assert!((per - 4.0).abs() < 0.5, "requests per busy ms {per}");
    let gap = b.burstiness.all.short_gap_us.unwrap();
    assert!((10.0..=30.0).contains(&gap), "median short gap {gap}");
}

#[test]
fn cobatched_reads_sit_behind_writes_and_the_fit_finds_them() {
    let base = "requests=40000,write_ratio=0.3,iat_us=500,footprint_gib=1,read_arrivals=exp,write_arrivals=onoff,write_on_ms=2,write_off_ms=200,write_on_share=0.9,write_batch=4,write_batch_us=5,seed=4";
    let apart = measure(base);
    let together = measure(&format!("{base},cobatch=0.4"));
    let near = |p: &Profile| p.burstiness.coupling.read_within_1ms_of_write_pct.unwrap();
    // Independent processes: reads near writes only by chance (writes are ~1 % of the time).
    assert!(near(&apart) < 5.0, "{}", near(&apart));
    // 40 % of the reads ride in write batches; within a batch about half of them follow a
    // write of the batch.
    assert!(near(&together) > 15.0, "{}", near(&together));
    assert!(
        (together.write_pct - 30.0).abs() < 2.0,
        "{}",
        together.write_pct
    );
    let f = fit(&together, &FitOptions::default()).unwrap();
    let fitted = profile(f.synth.generate().unwrap()).unwrap();
    assert!(f.synth.cobatch > 0.2, "{}", f.spec);
    assert!(
        (near(&fitted) - near(&together)).abs() < 5.0,
        "{}",
        near(&fitted)
    );
    let e = "write_ratio=0,cobatch=0.5"
        .parse::<SynthSpec>()
        .and_then(|s| s.validate());
    assert!(e.unwrap_err().contains("cobatch"));
}

#[test]
fn riders_read_back_what_their_batch_wrote_and_the_fit_finds_it() {
    let base = "requests=40000,write_ratio=0.3,iat_us=500,footprint_gib=1,read_arrivals=exp,write_arrivals=onoff,write_on_ms=2,write_off_ms=200,write_on_share=0.9,write_batch=4,write_batch_us=5,cobatch=0.4,seed=4";
    let back = |p: &Profile| p.burstiness.coupling.near_reads_of_written_pct.unwrap();
    // Riders drawn as any read land on a page just written only by chance.
    let other = measure(base);
    assert!(back(&other) < 2.0, "{}", back(&other));
    // 80 % of riders read the latest write's start page back; near reads also hold chance
    // reads of the read process (a few %), which read other pages.
    let reread = measure(&format!("{base},cobatch_raw=0.8"));
    assert!((60.0..=82.0).contains(&back(&reread)), "{}", back(&reread));
    let f = fit(&reread, &FitOptions::default()).unwrap();
    assert!(f.synth.cobatch_raw > 0.5, "{}", f.spec);
    let fitted = profile(f.synth.generate().unwrap()).unwrap();
    assert!(
        (back(&fitted) - back(&reread)).abs() < 8.0,
        "{} vs {}",
        back(&fitted),
        back(&reread)
    );
    let e = "write_ratio=0.5,cobatch_raw=0.5"
        .parse::<SynthSpec>()
        .and_then(|s| s.validate());
    assert!(e.unwrap_err().contains("cobatch_raw"));
}

#[test]
fn specs_print_and_parse_back() {
    let s = "requests=1234,write_ratio=0.25,size_kib=4:0.5|8:0.5,iat_us=75,arrivals=const,batch=2,footprint_gib=2,zipf=0.7,read_arrivals=bmodel,read_b=0.7,read_span_s=3,read_zipf=1.1,read_footprint_gib=0.5,write_arrivals=onoff,write_on_ms=1,write_off_ms=9,write_on_share=0.8,write_batch=3,write_batch_us=5,write_size_kib=16,write_seq=0.2,reread=0.2,reread_dist=7,raw=0.05,cobatch=0.3,cobatch_raw=0.6,hot_gib=0.25,hot_share=0.8,write_hot_gib=0.1,write_hot_drift=3,seed=9";
    let spec: SynthSpec = s.parse().unwrap();
    let again: SynthSpec = spec.to_string().parse().unwrap();
    assert_eq!(spec, again);
    let legacy: SynthSpec = "requests=10,write_ratio=0.5,iat_us=10".parse().unwrap();
    assert_eq!(legacy.to_string().parse::<SynthSpec>().unwrap(), legacy);
}

#[test]
fn fit_recovers_the_spec_it_was_generated_from() {
    let truth: SynthSpec = "requests=60000,write_ratio=0.35,iat_us=200,footprint_gib=1,read_arrivals=bmodel,read_b=0.8,write_arrivals=exp,read_zipf=0.6,read_footprint_gib=0.5,write_zipf=0.6,write_footprint_gib=0.02,rw_mix=0,reread=0.25,reread_dist=10,read_size_kib=4:0.8|16:0.2,seed=11".parse().unwrap();
    let target = profile(truth.generate().unwrap()).unwrap();
    let f = fit(&target, &FitOptions::default()).unwrap();
    let s = &f.synth;
    assert!((s.write_ratio - 0.35).abs() < 0.03, "{}", f.spec);
    let read_choice = &f.arrivals[0];
    assert_ne!(
        read_choice.chosen, "exp",
        "bursty reads fitted as Poisson: {}",
        f.spec
    );
    // Writes sample their hot set densely, so their exponent is identifiable; reads sample
    // theirs thinly, where a flatter law over fewer pages, or a uniform one with more
    // temporal re-reads (the fit's `uniform` start), gives the same statistics, so the reads
    // are checked on what the fit matches: re-reads, distinct pages, and the exponent the
    // stand-in shows when the Zipf start is kept.
    let zw = s.write.zipf.unwrap();
    assert!((zw - 0.6).abs() < 0.1, "write zipf {zw}");
    // The stand-in's statistics are close to the target's.
    let fitted = profile(f.synth.generate().unwrap()).unwrap();
    assert!(
        (fitted.reuse.reread_pct - target.reuse.reread_pct).abs() < 3.0,
        "{} vs {}: {}",
        fitted.reuse.reread_pct,
        target.reuse.reread_pct,
        f.spec
    );
    assert!((fitted.write_pct - target.write_pct).abs() < 2.0);
    let (a, b) = (&target.read_popularity, &fitted.read_popularity);
    if f.popularity == "zipf" {
        assert!((a.zipf.unwrap() - b.zipf.unwrap()).abs() < 0.05);
    }
    assert!((a.pages as f64 / b.pages as f64 - 1.0).abs() < 0.05);
    let rb = s.read.arrivals.map(|p| p.name());
    if let Some(ssdlab::workload::synth::Process::BModel { b, .. }) = s.read.arrivals {
        assert!((b - 0.8).abs() < 0.05, "read b {b}");
        // A cascade of single requests is not taken for one of batches.
        assert_ne!(read_choice.chosen, "bmodel with batches", "{}", f.spec);
    }
    assert!(rb.is_some());
    let wk: Vec<u32> = s.read.sizes.as_ref().unwrap().kib.clone();
    assert_eq!(wk, [4, 16]);
    // --requests N extends the stand-in, keeping everything else.
    let long = fit(
        &target,
        &FitOptions {
            requests: Some(200_000),
            ..FitOptions::default()
        },
    )
    .unwrap();
    assert_eq!(long.synth.requests, 200_000);
    assert_eq!(long.synth.generate().unwrap().count(), 200_000);
}

fn req(t_ns: u64, op: IoOp, page: u64) -> Result<Request, String> {
    Ok(Request {
        time_ns: t_ns,
        offset_bytes: page * 4096,
        size_bytes: 4096,
        op,
        device: 0,
        content: None,
        flow: 0,
    })
}

#[test]
fn bad_fit_inputs_are_refused_by_name() {
    let empty = profile(std::iter::empty::<Result<Request, String>>()).unwrap();
    assert_eq!(
        fit(&empty, &FitOptions::default()).unwrap_err(),
        FitError::TooFew(0)
    );
    let one = profile([req(0, IoOp::Read, 1)].into_iter()).unwrap();
    let e = fit(&one, &FitOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("1 request(s); a fit needs at least 2"),
        "{e}"
    );
    let instant = profile((0..5).map(|p| req(7, IoOp::Write, p))).unwrap();
    let e = fit(&instant, &FitOptions::default()).unwrap_err();
    assert!(e.to_string().contains("same instant"), "{e}");
}

#[test]
fn an_all_read_workload_fits_a_read_only_stand_in() {
    // All reads is a legitimate workload (no write process to fit, not an error): the spec
    // has write_ratio 0 and no write keys, and generates reads only.
    let reads =
        profile((0..2000u64).map(|i| req(i * 50_000, IoOp::Read, (i * 7919) % 500))).unwrap();
    let f = fit(&reads, &FitOptions::default()).unwrap();
    assert_eq!(f.synth.write_ratio, 0.0, "{}", f.spec);
    assert!(!f.spec.contains("write_arrivals"), "{}", f.spec);
    assert!(f
        .synth
        .generate()
        .unwrap()
        .all(|r| r.unwrap().op == IoOp::Read));
}

#[test]
fn arrival_keys_of_another_process_are_refused_by_name() {
    for (spec, want) in [
        ("requests=10,b=0.7", "b does not apply to arrivals=exp"),
        (
            "requests=10,arrivals=onoff,on_ms=1,off_ms=2,on_share=0.5,b=0.7",
            "b does not apply to arrivals=onoff",
        ),
        (
            "requests=10,arrivals=bmodel,b=0.7,on_share=1",
            "on_share does not apply to arrivals=bmodel",
        ),
        (
            "requests=10,read_arrivals=exp,read_span_s=3",
            "read_span_s does not apply to read_arrivals=exp",
        ),
        (
            "requests=10,arrivals=onoff,on_ms=1",
            "arrivals=onoff needs off_ms",
        ),
        (
            "requests=10,write_arrivals=pareto",
            "expected exp, const, onoff or bmodel, found `pareto`",
        ),
    ] {
        let e = spec.parse::<SynthSpec>().unwrap_err();
        assert!(e.contains(want), "{spec}: {e}");
    }
}

/// MSR hm_0's busy periods spread over a week: every gap of more than 100 ms between two
/// requests is stretched (by a factor that varies from gap to gap, as a diurnal swing would)
/// until the trace spans seven days, leaving idle spans of hours.
fn week_long_trace() -> Vec<Request> {
    use ssdlab::workload::trace::{TraceOptions, TraceReader};
    let reader =
        TraceReader::open(&crate::trace_path("msr_hm_0.csv"), TraceOptions::default()).unwrap();
    let reqs: Vec<Request> = reader.map(Result::unwrap).collect();
    let big: Vec<usize> = (1..reqs.len())
        .filter(|&i| reqs[i].time_ns - reqs[i - 1].time_ns > 100_000_000)
        .collect();
    let week = 7 * 86_400 * 1_000_000_000u64;
    let span = reqs.last().unwrap().time_ns - reqs[0].time_ns;
    // Gap i gets weight 1 + (i mod 5): stretched unevenly, adding up to a week.
    let weights: u64 = (0..big.len() as u64).map(|i| 1 + i % 5).sum();
    let unit = (week - span) / weights;
    let mut shift = 0;
    let mut next = big.iter().enumerate().peekable();
    reqs.iter()
        .enumerate()
        .map(|(i, r)| {
            if let Some((k, _)) = next.next_if(|(_, &b)| b == i) {
                shift += unit * (1 + k as u64 % 5);
            }
            let mut r = r.clone();
            r.time_ns = r.time_ns - reqs[0].time_ns + shift;
            r
        })
        .collect()
}

#[test]
fn a_week_long_trace_with_long_idle_fits_every_first_order_statistic() {
    use ssdlab::workload::fit::{envelopes, fit_enveloped, operational_profile};
    let reqs = week_long_trace();
    let target = profile(reqs.iter().cloned().map(Ok::<_, String>)).unwrap();
    assert!(target.duration_s > 6.9 * 86_400.0, "{}", target.duration_s);
    let opts = FitOptions::default();
    // One process per direction, stretched over the week, misses the week's shape.
    let plain = fit(&target, &opts).unwrap();
    assert!(!plain.misses().is_empty());
    // With an activity envelope per direction every first-order statistic is met.
    let env = envelopes(&target);
    let open = || Ok(reqs.clone().into_iter().map(Ok::<_, String>));
    let operational = operational_profile(open, &target, &env).unwrap();
    let f = fit_enveloped(&target, &operational, &env, &opts).unwrap();
    assert!(f.misses().is_empty(), "{:?}", f.misses());
    assert!(f.spec.contains("read_envelope=") && f.spec.contains("write_envelope="));
    // The printed spec is the stand-in the checks were made on.
    let again: SynthSpec = f.spec.parse().unwrap();
    let got = profile(again.generate().unwrap()).unwrap();
    assert_eq!(got.tenths, {
        let g = profile(f.synth.generate().unwrap()).unwrap();
        g.tenths
    });
    assert_eq!(got.requests, target.requests);
}

/// FNV-1a over every field of a stream: a digest that changes if any request does.
fn digest(spec: &str) -> u64 {
    let spec: SynthSpec = spec.parse().unwrap();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for r in spec.generate().unwrap() {
        let r = r.unwrap();
        let fields = [
            r.time_ns,
            r.offset_bytes,
            r.size_bytes,
            u64::from(r.op == IoOp::Write),
            r.content.map_or(0, |c| c as u64 ^ (c >> 64) as u64),
        ];
        for x in fields {
            for b in x.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

#[test]
fn specs_keep_the_streams_they_had_when_new_keys_arrive() {
    // One spec per family of keys; the digests were taken before `reread_gap_us` existed,
    // whose draws must not touch a spec that does not set it.
    let specs = [
        ("requests=3000,write_ratio=0.3,size_kib=4|8|16,iat_us=50,footprint_gib=1,zipf=0.9,seq=0.1,seed=3", 6674721037100752289),
        ("requests=3000,write_ratio=0.6,arrivals=onoff,on_ms=5,off_ms=50,on_share=0.9,batch=3,batch_us=10,footprint_gib=0.5,reread=0.3,reread_dist=8,raw=0.1,raw_dist=4,seed=5", 10684399636178869016),
        ("requests=3000,write_ratio=0.7,read_arrivals=bmodel,read_b=0.8,write_arrivals=onoff,write_on_ms=2,write_off_ms=30,write_on_share=1,write_batch=4,write_batch_us=3,cobatch=0.4,cobatch_raw=0.3,read_envelope=1|0|3|2,write_envelope=2|2|0|1,read_zipf=1.1,write_zipf=0.6,rw_mix=0.2,reread=0.2,seed=7", 14691344056862216048),
        ("requests=3000,write_ratio=0.5,iat_us=20,footprint_gib=0.25,dedup=0.4,dup_zipf=1.2,dup_pool=0.02,dup_reads=0.3,seed=9", 12423490758834856988),
    ];
    let got: Vec<u64> = specs.iter().map(|s| digest(s.0)).collect();
    let want: Vec<u64> = specs.iter().map(|s| s.1).collect();
    assert_eq!(got, want);
}

#[test]
fn rereads_placed_in_time_arrive_their_gap_after_the_first_read() {
    // Over 1 M pages chance re-reads are rare: the share is the spec's, whatever the gap
    // against the reads' spacing (100 µs), and a re-read comes its own gap after its read —
    // also a gap far below the spacing, which the trace's immediate re-reads need.
    for gap in [5.0, 1_000.0, 100_000.0] {
        let spec = format!(
            "requests=40000,write_ratio=0.2,iat_us=100,footprint_gib=4,reread=0.3,reread_gap_us={gap},reread_gap_sigma=0.5,seed=2"
        );
        let p = measure(&spec);
        let share = p.reuse.reread_pct;
        assert!(
            (share - 30.0).abs() < 2.0,
            "gap {gap}: re-read share {share}"
        );
        let m = p.reuse.reread_gap_us.p50;
        assert!(
            (0.9 * gap..=1.1 * gap).contains(&m),
            "gap {gap}: median re-read gap {m} µs"
        );
        // The re-reads are arrivals of their own: the write ratio and the mean gap stay.
        assert!((p.write_pct - 20.0).abs() < 1.0, "{}", p.write_pct);
        let mean_us = p.duration_s * 1e6 / p.requests as f64;
        assert!(
            (mean_us - 100.0).abs() < 5.0,
            "gap {gap}: mean gap {mean_us} µs"
        );
    }
    // With activity envelopes every slice's first reads are placed exactly and every re-read
    // comes: the request count and the re-reads' share are the spec's. First reads in the
    // first 10 ms only, re-read 40 ms later (± 1 %): the re-reads come at 40-50 ms (a second
    // re-read of a page at 80-90 ms), none from 10 to 30 ms.
    let spec = "requests=20000,write_ratio=0.5,iat_us=5,footprint_gib=4,reread=0.2,reread_gap_us=40000,reread_gap_sigma=0.01,read_envelope=1|0|0|0|0|0|0|0|0|0,write_envelope=1|1|1|1|1|1|1|1|1|1,seed=4";
    let p = measure(spec);
    assert_eq!(p.requests, 20_000);
    assert!(
        (p.reuse.reread_pct - 20.0).abs() < 1.0,
        "{}",
        p.reuse.reread_pct
    );
    let mut per_10ms = [0u64; 16];
    for r in spec.parse::<SynthSpec>().unwrap().generate().unwrap() {
        let r = r.unwrap();
        if r.op == IoOp::Read {
            per_10ms[((r.time_ns / 10_000_000) as usize).min(15)] += 1;
        }
    }
    assert_eq!(per_10ms[0], 8_000, "{per_10ms:?}");
    assert!(per_10ms[4] > 1_500, "{per_10ms:?}");
    assert_eq!(per_10ms[1] + per_10ms[2], 0, "{per_10ms:?}");
}

/// With `rider_envelope` each slice's write arrivals carry exactly its share of the riders:
/// 10,000 requests, half writes, a share 0.3 of the reads riding — 3,500 reads from the read
/// process (placed in the first half), 1,500 riders shared 0 : 0 : 1 : 3 over the quarters and
/// 1,250 writes in each. Without the key riders are a constant share of the write arrivals.
/// Re-reads placed in time stay in the slice of their first read when `reread_envelope` shares
/// them out, so each slice holds exactly its reads however wide the gap law (σ 10 here: most
/// gaps would reach past a slice, and did before, adding reads to the later slices).
#[test]
fn timed_rereads_keep_their_slice_s_count() {
    let spec: SynthSpec = "requests=20000,write_ratio=0,iat_us=100,footprint_gib=1,reread=0.5,reread_gap_us=1000,reread_gap_sigma=10,read_envelope=1|2|3|4,reread_envelope=1|2|3|4,seed=3"
        .parse()
        .unwrap();
    let span_ns = spec.mean_gap_us() * 1e3 * spec.requests as f64;
    let mut q = [0u64; 4];
    for r in spec.generate().unwrap() {
        let k = ((r.unwrap().time_ns as f64 / span_ns * 4.0) as usize).min(3);
        q[k] += 1;
    }
    // First reads 1,000 / 2,000 / 3,000 / 4,000 and as many re-reads.
    assert_eq!(q, [2000, 4000, 6000, 8000]);
}

#[test]
fn riders_follow_their_envelope_exactly() {
    let base = "requests=10000,write_ratio=0.5,iat_us=10,footprint_gib=4,cobatch=0.3,read_envelope=1|1|0|0,write_envelope=1|1|1|1,seed=6";
    let quarters = |spec: &str| {
        let spec: SynthSpec = spec.parse().unwrap();
        let span_ns = spec.mean_gap_us() * 1e3 * spec.requests as f64;
        let mut q = [[0u64; 2]; 4];
        for r in spec.generate().unwrap() {
            let r = r.unwrap();
            let k = ((r.time_ns as f64 / span_ns * 4.0) as usize).min(3);
            q[k][usize::from(r.op == IoOp::Write)] += 1;
        }
        q
    };
    let q = quarters(&format!("{base},rider_envelope=0|0|1|3"));
    assert_eq!(
        q,
        [[1750, 1250], [1750, 1250], [375, 1250], [1125, 1250]],
        "{q:?}"
    );
    // Riders in proportion to the writes put some in every quarter.
    let q = quarters(base);
    assert!(q[0][0] > 1750 && q[2][0] > 200 && q[2][0] < 550, "{q:?}");
}

/// Requests of a generated stream as (write?, start page, pages).
fn pages_of(spec: &str) -> Vec<(bool, u64, u64)> {
    let spec: SynthSpec = spec.parse().unwrap();
    spec.validate().unwrap();
    spec.generate()
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (
                r.op == IoOp::Write,
                r.offset_bytes / 4096,
                r.size_bytes.div_ceil(4096),
            )
        })
        .collect()
}

#[test]
fn a_hot_set_takes_its_share_aligned_and_drifts_with_time() {
    // 64 MiB hot set = 16,384 pages from the start of a 100 GiB footprint; 16 KiB requests.
    let hot = 16_384;
    let base = "requests=40000,write_ratio=0.9,size_kib=16,iat_us=10,footprint_gib=100,hot_gib=0.0625,hot_share=0.8,seed=3";
    let reqs = pages_of(base);
    let inside = reqs.iter().filter(|r| r.1 + r.2 <= hot).count() as f64 / reqs.len() as f64;
    // 80 % drawn into it; cold draws over 100 GiB land there with probability ~6e-4.
    assert!((inside - 0.8).abs() < 0.01, "share in the hot set {inside}");
    // Hot requests are aligned to their 16 KiB size; the few unaligned ones there are cold
    // draws that fell in the range.
    let unaligned = reqs.iter().filter(|r| r.1 < hot && r.1 % 4 != 0).count();
    assert!(
        unaligned < 100,
        "{unaligned} unaligned requests in the hot set"
    );
    // The hot set is mostly written over within the first quarter; after that the footprint
    // grows only by the cold writes: 0.9 writes x 0.2 cold x 4 pages per request.
    let written = |n: usize| {
        let mut seen = std::collections::HashSet::new();
        for r in reqs.iter().take(n).filter(|r| r.0) {
            seen.extend(r.1..r.1 + r.2);
        }
        seen.len()
    };
    let (a, b) = (written(10_000), written(40_000));
    assert!(a > hot as usize * 8 / 10, "{a}");
    let rate = (b - a) as f64 / 30_000.0;
    assert!((0.72..0.85).contains(&rate), "{rate} pages per request");
    // With hot_drift = 4 the range moves 4 × its size over the stream: the last tenth's hot
    // requests start within [3.6, 5) hot sets from the footprint's start.
    let drift = pages_of(&format!("{base},hot_drift=4"));
    let late: Vec<_> = drift[36_000..].iter().filter(|r| r.1 < 6 * hot).collect();
    assert!(late.len() > 3_000, "{}", late.len());
    // (a handful of cold draws land below 6 hot sets too: 0.4 % of ~700)
    let outside = late
        .iter()
        .filter(|r| !(hot * 36 / 10 - 4..5 * hot).contains(&r.1))
        .count();
    assert!(
        outside < 12,
        "{outside} of the late hot requests outside the drifted range"
    );
    // A direction's own hot set: reads keep drawing over the whole footprint.
    let own = pages_of(
        "requests=40000,write_ratio=0.5,size_kib=16,iat_us=10,footprint_gib=100,write_hot_gib=0.0625,write_hot_share=1,seed=3",
    );
    assert!(own.iter().filter(|r| r.0).all(|r| r.1 + r.2 <= hot));
    assert!(own.iter().filter(|r| !r.0 && r.1 >= hot).count() > 19_000);
}

#[test]
fn bad_hot_set_keys_are_refused_by_name() {
    for (spec, key) in [
        (
            "footprint_gib=1,hot_gib=0.1,hot_share=1.5",
            "hot_share = 1.5",
        ),
        ("footprint_gib=1,hot_gib=2,hot_share=0.5", "hot_gib = 2"),
        (
            "footprint_gib=1,write_footprint_gib=0.5,write_hot_gib=0.7,hot_share=0.5",
            "write_hot_gib = 0.7",
        ),
        (
            "footprint_gib=1,hot_gib=1e-9,hot_share=0.5",
            "at least one 4 KiB page",
        ),
        (
            "footprint_gib=1,hot_gib=0.1,hot_share=0.5,hot_drift=-1",
            "hot_drift = -1",
        ),
        (
            "footprint_gib=1,read_hot_gib=0.1,read_hot_share=0.5,read_hot_drift=inf",
            "read_hot_drift = inf",
        ),
    ] {
        let e = spec
            .parse::<SynthSpec>()
            .and_then(|s| s.validate())
            .unwrap_err();
        assert!(e.contains(key), "{spec}: {e}");
    }
    let notes = |s: &str| s.parse::<SynthSpec>().unwrap().notes().join("; ");
    assert!(notes("hot_gib=0.1").contains("hot_gib has no effect"));
    assert!(notes("hot_gib=0.1,hot_share=0.5,read_hot_share=0")
        .contains("read_hot_share has no effect"));
    assert!(notes("hot_drift=3").contains("hot_drift has no effect"));
    assert_eq!(notes("hot_gib=0.1,hot_share=0.5,hot_drift=3"), "");
}
