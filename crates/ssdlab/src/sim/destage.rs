//! A destage buffer (`buffer.flush_backlog_pages`, MQSim's write cache,
//! `Data_Cache_Manager_Flash_Advanced::write_to_destage_buffer`): a host write completes once
//! it is in DRAM and the flushes it causes — its eviction's, and with
//! `buffer.eager_flush_period_ms` its own when the page is written for the first time in the
//! period — run behind it. While the flushes in flight reach the bound (back pressure), writes
//! wait in arrival order; the controller holds their data meanwhile (reads of it are served
//! from it, as for any write in flight). A flush counts one page against the bound, or with
//! `buffer.flush_backlog_unit = "sector"` the sectors of host data it writes back.

use super::Simulation;
use crate::config::FlushUnit;
use crate::flash::Level;
use crate::ftl::mapping::NONE;
use crate::time::SimTime;
use rustc_hash::FxHashSet;
use std::collections::VecDeque;

/// Flushes in flight and writes held by back pressure.
#[derive(Debug, Default)]
pub(super) struct Destage {
    /// Units (pages or sectors, `buffer.flush_backlog_unit`) of the background flushes in
    /// flight.
    flushing: u64,
    /// Host writes (request, logical page, sectors written) waiting for the flushes to fall
    /// below the bound.
    waiting: VecDeque<(u32, u32, u64)>,
    /// Sectors of its page the host write being stored covers, one bit each (set by the host
    /// path around storing the page with `buffer.flush_backlog_unit = "sector"`; 0 otherwise:
    /// a whole page).
    pub(super) host_sectors: u64,
    /// Pages written in the current eager-flush period, and when it ends.
    seen: FxHashSet<u32>,
    period_end: SimTime,
}

impl Simulation<'_> {
    /// A host write of `sectors` of `lpn` into the destage buffer. Returns a die it queued
    /// work on.
    pub(super) fn destage_write(&mut self, req: u32, lpn: u32, sectors: u64) -> Option<usize> {
        if self.destage.flushing >= self.flush_bound() {
            let version = self.ftl.map.newest(lpn);
            self.ftl.map.program_started(lpn, version);
            self.destage.waiting.push_back((req, lpn, sectors));
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
        // Recorded only with the sector unit (the only one that sets them).
        if sectors != 0 {
            if let Some(b) = self.buffer.as_mut() {
                b.add_sectors(lpn, sectors);
            }
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
                let units = self.flush_units(sectors);
                let d = self.background_flush(lpn, self.level_for(None), units);
                if let Some(other) = die.filter(|&o| o != d) {
                    self.try_dispatch(other);
                }
                die = Some(d);
            }
        }
        self.complete_from_dram(req);
        die
    }

    /// The bound on the units of background flushes in flight.
    fn flush_bound(&self) -> u64 {
        let b = &self.cfg.buffer;
        let pages = u64::from(b.flush_backlog_pages);
        match b.flush_backlog_unit {
            FlushUnit::Page => pages,
            FlushUnit::Sector => pages * u64::from(self.geo.page_size_bytes / SECTOR),
        }
    }

    /// Units a flush of a page with these sectors written counts against the bound (a whole
    /// page when none were recorded).
    pub(super) fn flush_units(&self, sectors: u64) -> u32 {
        match self.cfg.buffer.flush_backlog_unit {
            FlushUnit::Page => 1,
            FlushUnit::Sector if sectors == 0 => self.geo.page_size_bytes / SECTOR,
            FlushUnit::Sector => sectors.count_ones(),
        }
    }

    /// Queues a flush of `lpn`'s newest version in the background, counting `units` against
    /// the bound until it is done; returns its die.
    pub(super) fn background_flush(&mut self, lpn: u32, level: Level, units: u32) -> usize {
        self.destage.flushing += u64::from(units);
        self.metrics.buffer.background_flushes += 1;
        let version = self.ftl.map.newest(lpn);
        self.flash_write(NONE, lpn, version, level, units)
    }

    /// A background flush of `units` is done: the writes back pressure held go on while below
    /// the bound.
    pub(super) fn background_flush_done(&mut self, units: u32) {
        self.destage.flushing -= u64::from(units);
        while self.destage.flushing < self.flush_bound() {
            let Some((req, lpn, sectors)) = self.destage.waiting.pop_front() else {
                break;
            };
            if let Some(die) = self.destage_write(req, lpn, sectors) {
                self.try_dispatch(die);
            }
            // Its data moved from the controller into the buffer.
            self.pending_done(lpn);
        }
    }
}

/// Bytes of a sector, the unit of `buffer.flush_backlog_unit = "sector"`.
const SECTOR: u32 = 512;

/// The sectors of page `page` (absolute page number, pages of `page_bytes`) that a request of
/// `size` bytes at byte `offset` covers, one bit each from the page's first sector; 0 if the
/// page has more than 64 sectors (validation refuses that with the sector unit).
pub(super) fn sectors_covered(offset: u64, size: u64, page: u64, page_bytes: u64) -> u64 {
    let sector = u64::from(SECTOR);
    let per_page = page_bytes / sector;
    if per_page > 64 || per_page == 0 {
        return 0;
    }
    let start = page * page_bytes;
    let lo = offset.max(start) - start;
    let hi = (offset + size)
        .min(start + page_bytes)
        .saturating_sub(start);
    let (first, last) = (lo / sector, hi.div_ceil(sector));
    if last <= first {
        return 0;
    }
    let span = last - first;
    let ones = if span >= 64 {
        u64::MAX
    } else {
        (1 << span) - 1
    };
    ones << first
}

#[cfg(test)]
mod tests {
    use super::sectors_covered;

    #[test]
    fn sectors_of_a_page_a_request_covers() {
        // 8 KiB pages (16 sectors): a 4 KiB write at the start of page 1 covers its first 8.
        assert_eq!(sectors_covered(8192, 4096, 1, 8192), 0xFF);
        // A 4 KiB write from sector 12 of page 0 covers sectors 12-15 of page 0 and 0-3 of
        // page 1.
        assert_eq!(sectors_covered(6144, 4096, 0, 8192), 0xF000);
        assert_eq!(sectors_covered(6144, 4096, 1, 8192), 0x000F);
        // A whole page, and a page of 64 sectors (32 KiB) written whole.
        assert_eq!(sectors_covered(0, 8192, 0, 8192), 0xFFFF);
        assert_eq!(sectors_covered(32768, 32768, 1, 32768), u64::MAX);
        // A byte range inside one sector still covers that sector.
        assert_eq!(sectors_covered(100, 10, 0, 8192), 1);
        // Pages of more than 64 sectors are not tracked.
        assert_eq!(sectors_covered(0, 65536, 0, 65536), 0);
    }
}
