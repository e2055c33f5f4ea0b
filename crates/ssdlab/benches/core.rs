//! Criterion benchmarks of the hot structures: event queue, mapping updates, victim selection.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssdlab::config::Config;
use ssdlab::engine::EventQueue;
use ssdlab::flash::PlaneId;
use ssdlab::ftl::blocks::{BlockInfo, BlockState, Stream};
use ssdlab::ftl::gc::{Greedy, VictimPolicy};
use ssdlab::ftl::mapping::VersionTables;
use ssdlab::ftl::Ftl;
use ssdlab::time::SimTime;

fn event_queue(c: &mut Criterion) {
    // 16 pending is what a drive like `hotr` keeps (one event per busy die and channel, the
    // next arrival); 1k is a stress case (many timers or buffered completions).
    for pending in [16u64, 1000] {
        c.bench_function(&format!("event_queue push+pop, {pending} pending"), |b| {
            let mut q = EventQueue::default();
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            for i in 0..pending {
                q.push(SimTime(rng.random_range(0..1_000_000)), i);
            }
            let mut now = 0;
            b.iter(|| {
                let (t, e) = q.pop().unwrap();
                now = t.0;
                q.push(SimTime(now + rng.random_range(1..100_000)), black_box(e));
            });
        });
    }
}

fn mapping(c: &mut Criterion) {
    let cfg = Config::preset("hotr").unwrap();
    let mut ftl = Ftl::new(&cfg, ChaCha8Rng::seed_from_u64(1), VersionTables::Sparse).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let planes = ftl.geo.planes();
    let logical = ftl.map.logical_pages();
    c.bench_function("ftl alloc + commit_write (hotr)", |b| {
        b.iter(|| {
            let lpn = rng.random_range(0..logical / 2);
            let plane = PlaneId(lpn % planes);
            if let Some(p) = ftl.alloc(plane, Stream::USER, SimTime(0)) {
                let v = ftl.map.next_version(lpn);
                ftl.commit_write(p, lpn, v);
                // What the simulation does once no program of the page is in flight.
                ftl.map.release(lpn);
            }
        });
    });
}

fn victim(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let blocks: Vec<BlockInfo> = (0..2048)
        .map(|_| BlockInfo {
            state: BlockState::Full,
            valid: rng.random_range(0..64),
            ..BlockInfo::new()
        })
        .collect();
    let keys: Vec<u16> = blocks
        .iter()
        .map(|b| {
            if b.valid < 64 {
                b.valid as u16
            } else {
                u16::MAX
            }
        })
        .collect();
    c.bench_function("greedy victim over 2048 blocks", |b| {
        b.iter(|| Greedy.victim(black_box(&blocks), black_box(&keys), 64, SimTime(0)));
    });
}

criterion_group!(benches, event_queue, mapping, victim);
criterion_main!(benches);
