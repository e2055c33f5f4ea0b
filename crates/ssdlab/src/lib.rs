//! # ssdlab — a trace-driven, discrete-event NAND-flash SSD simulator
//!
//! ssdlab models an SSD at the level where reads get stuck behind programs, erases and garbage
//! collection, so that schemes fighting that interference can be compared in one model.
//!
//! ```text
//!  workload (trace / synth) ──► host (open/closed loop, time scale, write-queue bound)
//!        │ requests split into pages
//!        ▼
//!  dedup (optional): page ─► content id by fingerprint; duplicates need no program
//!        ▼
//!  FTL: page mapping (l2p/p2l + versions) ─ allocation (static stripe / least-busy die)
//!        │ per-die queues: reads │ writes │ internal (GC reads, GC programs, erases)
//!        ▼
//!  scheduler (FIFO / RPS) ──► die: sense ─► bus ─► done      (read)
//!                                  bus ─► program ─► done    (program)
//!                                  erase ─► done             (erase)
//!        channel bus: one page transfer at a time, dies served first come first served
//! ```
//!
//! * **Time** is integer nanoseconds ([`time::SimTime`]); events are ordered by
//!   `(time, sequence number)` with the sequence number taken at push, so equal-time events run
//!   in the order they were scheduled and runs are bit-for-bit deterministic.
//! * A **die** runs one operation at a time and stays busy until a page it read has left its
//!   register over the channel; a program holds its die from the start of its transfer in.
//! * **GC** runs per plane when its free blocks fall to the threshold: it picks a victim
//!   (greedy, cost-benefit or random), queues page reads and programs on the die as internal
//!   work, then the erase. Host writes wait when their plane has no free block left (the last
//!   one is kept for GC).
//! * **Interference** is attributed at the source: each die integrates its busy time per class
//!   of work and a queued read takes snapshots, so `read_wait_us` is exact, not estimated.
//! * **Schemes** plug in through policy slots ([`schemes::Policies`]): read routing, write
//!   fan-out, host-page mapping, a host-side cache, GC relocation, program levels, die gating,
//!   GC execution. The core (`sim`) calls them at its decision points and names no scheme.
//! * **Correctness** is tracked: every logical page carries a version; with `verify` every
//!   read is checked against the newest version and the mapping invariants are checked at
//!   every erase and at the end.
//!
//! ```
//! use ssdlab::{config::Config, sim::{RunOptions, Simulation}, workload::synth::SynthSpec};
//! let cfg = Config::preset("tiny").unwrap();
//! let spec: SynthSpec = "requests=2000,write_ratio=0.5,iat_us=200,footprint_gib=0.01".parse().unwrap();
//! let mut workload = spec.generate().unwrap();
//! let sim = Simulation::new(&cfg, RunOptions { seed: 1, verify: true, ..Default::default() }, &mut workload).unwrap();
//! let summary = sim.run().unwrap();
//! assert_eq!(summary.requests, 2000);
//! assert!(summary.read.mean_us >= 25.0); // at least one SLC sense
//! ```
#![warn(missing_docs)]

pub mod buffer;
pub mod calibrate;
pub mod config;
pub mod dedup;
pub mod engine;
pub mod experiment;
pub mod files;
pub mod flash;
pub mod ftl;
pub mod metrics;
pub mod report;
pub mod rng;
pub mod sched;
pub mod schemes;
pub mod sim;
pub mod time;
pub mod verify;
pub mod workload;
