//! The ShadowGC policy through the core: shadow-state transitions (Fig. 5), DGC against SGC
//! on twins, fast blocks and their refresh timer.

use super::policy::state_index;
use crate::config::ConfigBuilder;
use crate::flash::Level;
use crate::flash::PlaneId;
use crate::ftl::blocks::Stream;
use crate::ftl::mapping::NONE;
use crate::sim::{RunOptions, Simulation};
use crate::time::SimTime;
use crate::workload::Requests;

fn config(gc: &str) -> crate::config::Config {
    let mut b = ConfigBuilder::preset("tiny").unwrap();
    for s in [
        "buffer.host_pages=2",
        "buffer.device_pages=2",
        "flash.program_us=600",
        "precondition.fill=0.5",
        &format!("shadow.gc={gc}"),
        "shadow.fast_retention_h=1",
        "shadow.power_off_h=0.5",
    ] {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

fn state(sim: &mut Simulation<'_>, lpn: u32) -> usize {
    let device = sim.probe_device_dirty(lpn);
    state_index(sim.probe_ftl().is_zombie(lpn), device)
}

const VALID: usize = 0;
const HOST: usize = 1;
const DEVICE: usize = 2;
const TWIN: usize = 3;

#[test]
fn every_transition_of_fig_5() {
    let cfg = config("sgc");
    let mut none = std::iter::empty();
    let w: &mut Requests = &mut none;
    let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
    let r = sim.probe_request();
    let ftl = sim.probe_ftl();
    let a = (0..8).find(|&l| ftl.map.ppn(l) != NONE).unwrap();
    let (b, c, d) = (a + 1, a + 2, a + 3);
    let block = (ftl.map.ppn(a) / cfg.geometry.pages_per_block) as usize;
    let zombies = ftl.blocks[block].zombies;
    assert_eq!(
        state(&mut sim, a),
        VALID,
        "preconditioned: a valid flash page"
    );
    // Valid → host-shadow: the host writes the page into its buffer (LRU of 2).
    sim.probe_write(r, a);
    assert_eq!(state(&mut sim, a), HOST);
    assert_eq!(sim.probe_ftl().blocks[block].zombies, zombies + 1);
    // Host-shadow → device-shadow: the host buffer writes it back to the device buffer.
    sim.probe_write(r, b);
    sim.probe_write(r, c);
    assert_eq!(state(&mut sim, a), DEVICE);
    assert!(!sim.probe_ftl().is_zombie(a));
    // Device-shadow → twin-shadow: the host writes it again (b goes to the device).
    sim.probe_write(r, a);
    assert_eq!(state(&mut sim, a), TWIN);
    // A twin evicted from the device buffer is dropped, not flushed: c enters the device
    // buffer and pushes a out; no program is queued for a.
    sim.probe_write(r, d);
    assert_eq!(sim.probe_metrics().shadow.twins_dropped, 1);
    assert!(sim.probe_holds_newer(a));
    assert!(!sim.probe_in_flight(a));
    assert_eq!(state(&mut sim, a), HOST);
    // A restart: every state returns to valid; the device buffer (b, c) is flushed; a's
    // dropped version died with the host copy.
    sim.probe_power_loss();
    for lpn in [a, b, c, d] {
        assert_eq!(state(&mut sim, lpn), VALID, "lpn {lpn}");
    }
    assert!(!sim.probe_holds_newer(a));
    assert!(sim.probe_ftl().blocks.iter().all(|b| b.zombies == 0));
    let m = sim.probe_metrics();
    assert_eq!(
        (
            m.shadow.host_pages_lost,
            m.shadow.twin_versions_lost,
            m.buffer.restart_flushes
        ),
        (2, 1, 2)
    );
    let map = &sim.probe_ftl().map;
    assert_eq!(map.newest(a), map.mapped_version(a));
}

#[test]
fn dgc_flushes_what_sgc_drops() {
    let cfg = config("dgc");
    let mut none = std::iter::empty();
    let w: &mut Requests = &mut none;
    let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
    let r = sim.probe_request();
    // Make page 0 a twin, then push it out of the device buffer.
    sim.probe_write(r, 0);
    sim.probe_write(r, 1);
    sim.probe_write(r, 2); // 0 → device buffer
    sim.probe_write(r, 0); // 1 → device buffer; 0 is a twin
    sim.probe_write(r, 3); // 2 → device buffer: evicts 0 from it
    assert_eq!(sim.probe_metrics().shadow.twins_dropped, 0);
    assert!(sim.probe_in_flight(0), "DGC flushes the twin");
}

#[test]
fn fast_blocks_program_fast_and_fall_due_for_refresh_after_t_minus_d() {
    let cfg = config("hgc");
    let mut none = std::iter::empty();
    let w: &mut Requests = &mut none;
    let mut sim = Simulation::new(&cfg, RunOptions::default(), w).unwrap();
    let ppn = sim
        .probe_ftl()
        .alloc(PlaneId(0), Stream::dedicated(Level::Normal), SimTime::ZERO)
        .unwrap();
    let block = ppn.0 / cfg.geometry.pages_per_block;
    assert!(sim.probe_ftl().blocks[block as usize].fast);
    assert_eq!(sim.probe_program_ns(ppn.0, true), 300_000);
    sim.probe_block_opened(block);
    assert_eq!(
        sim.probe_next_timer(),
        Some((1_800_000_000_000, block, 0)),
        "T − D = 0.5 h"
    );
    // A normal GC block programs at the normal time and is never refreshed.
    let normal = sim
        .probe_ftl()
        .alloc(PlaneId(0), Stream::GC, SimTime::ZERO)
        .unwrap();
    assert_eq!(sim.probe_program_ns(normal.0, false), 600_000);
    sim.probe_block_opened(normal.0 / cfg.geometry.pages_per_block);
    assert_eq!(sim.probe_next_timer(), None);
}
