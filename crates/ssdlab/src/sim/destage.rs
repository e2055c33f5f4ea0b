//! A destage buffer (`buffer.flush_backlog_pages`, MQSim's write cache,
//! `Data_Cache_Manager_Flash_Advanced::write_to_destage_buffer`): a host write completes once
//! it is in DRAM and the flushes it causes — its eviction's, and with
//! `buffer.eager_flush_period_ms` its own when the page is written for the first time in the
//! period — run behind it. While the flushes in flight reach the bound (back pressure), writes
//! wait in arrival order; the controller holds their data meanwhile (reads of it are served
//! from it, as for any write in flight).

use super::Simulation;
use crate::flash::Level;
use crate::ftl::mapping::NONE;
use crate::time::SimTime;
use rustc_hash::FxHashSet;
use std::collections::VecDeque;

/// Flushes in flight and writes held by back pressure.
#[derive(Debug, Default)]
pub(super) struct Destage {
    /// Background flushes in flight.
    flushing: u32,
    /// Host writes (request, logical page) waiting for the flushes to fall below the bound.
    waiting: VecDeque<(u32, u32)>,
    /// Pages written in the current eager-flush period, and when it ends.
    seen: FxHashSet<u32>,
    period_end: SimTime,
}

impl Simulation<'_> {
    /// A host write of `lpn` into the destage buffer. Returns a die it queued work on.
    pub(super) fn destage_write(&mut self, req: u32, lpn: u32) -> Option<usize> {
        if self.destage.flushing >= self.cfg.buffer.flush_backlog_pages {
            let version = self.ftl.map.newest(lpn);
            self.ftl.map.program_started(lpn, version);
            self.destage.waiting.push_back((req, lpn));
            self.metrics.buffer.back_pressure_waits += 1;
            return None;
        }
        let mut die = None;
        let b = self.buffer.as_mut().expect("buffer configured");
        if b.touch(lpn, true) {
            self.metrics.buffer.write_hits += 1;
        } else if let Some(e) = b.insert(lpn, true) {
            die = self.evicted(e, NONE);
        }
        let period = self.cfg.buffer.eager_flush_period_ms;
        if period > 0.0 {
            if self.now >= self.destage.period_end {
                self.destage.seen.clear();
                self.destage.period_end = self.now + crate::time::us_to_ns(period * 1e3);
            }
            if self.destage.seen.insert(lpn) {
                self.buffer.as_mut().expect("configured").clean(lpn);
                self.metrics.buffer.eager_flushes += 1;
                let d = self.background_flush(lpn, self.level_for(None));
                if let Some(other) = die.filter(|&o| o != d) {
                    self.try_dispatch(other);
                }
                die = Some(d);
            }
        }
        self.complete_from_dram(req);
        die
    }

    /// Queues a flush of `lpn`'s newest version in the background; returns its die.
    pub(super) fn background_flush(&mut self, lpn: u32, level: Level) -> usize {
        self.destage.flushing += 1;
        self.metrics.buffer.background_flushes += 1;
        let version = self.ftl.map.newest(lpn);
        self.flash_write(NONE, lpn, version, level, true)
    }

    /// A background flush is done: the writes back pressure held go on while below the bound.
    pub(super) fn background_flush_done(&mut self) {
        self.destage.flushing -= 1;
        while self.destage.flushing < self.cfg.buffer.flush_backlog_pages {
            let Some((req, lpn)) = self.destage.waiting.pop_front() else {
                break;
            };
            if let Some(die) = self.destage_write(req, lpn) {
                self.try_dispatch(die);
            }
            // Its data moved from the controller into the buffer.
            self.pending_done(lpn);
        }
    }
}
