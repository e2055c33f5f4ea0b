//! Per-request records (`ssdlab run --requests-out`): one row per completed request with the
//! parts of its response time that the summary aggregates.

use crate::sched::OpClass;
use serde::Serialize;

/// One completed host request. Times are microseconds.
///
/// The read-wait columns are sums over the request's pages read from flash, the same sums the
/// summary's `read_wait_us` divides by the number of such pages; a request spread over several
/// dies waits on them at once, so its sums can exceed its response time. They are empty for
/// writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// The request's id: the order in which it entered the drive's queues, from 0 (the id a
    /// `--timeline` gives its span and the flash operations that serve it).
    pub id: u64,
    /// The request's I/O flow, in a run of several (the column is absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// Arrival at the host (trace time, scaled), µs.
    pub arrival_us: f64,
    /// `R` or `W`.
    pub op: char,
    /// Byte offset.
    pub offset: u64,
    /// Size, bytes.
    pub size: u64,
    /// Response time: arrival → completion seen by the host, µs.
    pub response_us: f64,
    /// Arrival → the drive's queues (host link to the drive, write-queue bound), µs.
    pub admitted_us: f64,
    /// Completion on the drive → completion at the host (host link), µs.
    pub link_out_us: f64,
    /// Pages of the request.
    pub pages: u32,
    /// Pages read from flash (reads only).
    pub flash_pages: Option<u32>,
    /// Read pages' wait in die queues behind other user reads, µs (summed over pages).
    pub wait_read_us: Option<f64>,
    /// … behind user programs.
    pub wait_user_program_us: Option<f64>,
    /// … behind GC reads and programs.
    pub wait_gc_us: Option<f64>,
    /// … behind erases.
    pub wait_erase_us: Option<f64>,
    /// … behind migration reads and programs.
    pub wait_migration_us: Option<f64>,
    /// … behind redundancy reads and programs.
    pub wait_redundancy_us: Option<f64>,
    /// … for translation pages of the mapping cache (its own misses' loads, and others' reads
    /// and programs of translation pages ahead of it).
    pub wait_mapping_us: Option<f64>,
    /// Read pages' own sense and transfer, µs (summed).
    pub service_us: Option<f64>,
    /// Read pages holding their die while waiting for the channel bus, µs (summed).
    pub bus_us: Option<f64>,
}

/// Where per-request records go; an error stops the run.
pub type RequestSink<'w> = Box<dyn FnMut(&RequestRecord) -> std::io::Result<()> + 'w>;

/// What the simulator gathers about a request in flight while records are asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestDetail {
    pub(crate) id: u64,
    pub(crate) flow: u16,
    pub(crate) offset: u64,
    pub(crate) pages: u32,
    pub(crate) admitted_ns: u64,
    pub(crate) link_out_ns: u64,
    pub(crate) flash_pages: u32,
    pub(crate) wait_ns: [u64; OpClass::COUNT],
    pub(crate) service_ns: u64,
    pub(crate) bus_ns: u64,
}

impl RequestDetail {
    /// The record of a request that arrived at `arrival_ns` and completed at `done_ns`.
    pub(crate) fn record(
        &self,
        read: bool,
        size: u64,
        arrival_ns: u64,
        done_ns: u64,
    ) -> RequestRecord {
        let us = |ns: u64| ns as f64 / 1e3;
        let on_read = |ns: u64| read.then_some(us(ns));
        let w = |c: OpClass| on_read(self.wait_ns[c as usize]);
        RequestRecord {
            id: self.id,
            flow: None,
            arrival_us: us(arrival_ns),
            op: if read { 'R' } else { 'W' },
            offset: self.offset,
            size,
            response_us: us(done_ns - arrival_ns),
            admitted_us: us(self.admitted_ns - arrival_ns),
            link_out_us: us(self.link_out_ns),
            pages: self.pages,
            flash_pages: read.then_some(self.flash_pages),
            wait_read_us: w(OpClass::UserRead),
            wait_user_program_us: w(OpClass::UserProgram),
            wait_gc_us: w(OpClass::Gc),
            wait_erase_us: w(OpClass::Erase),
            wait_migration_us: w(OpClass::Migration),
            wait_redundancy_us: w(OpClass::Redundancy),
            wait_mapping_us: w(OpClass::Mapping),
            service_us: on_read(self.service_ns),
            bus_us: on_read(self.bus_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_records_leave_read_columns_empty_and_times_are_relative_to_arrival() {
        let d = RequestDetail {
            offset: 8192,
            pages: 2,
            admitted_ns: 1_500,
            link_out_ns: 250,
            ..RequestDetail::default()
        };
        let w = d.record(false, 8192, 1_000, 11_000);
        assert_eq!(
            (w.op, w.response_us, w.admitted_us, w.link_out_us),
            ('W', 10.0, 0.5, 0.25)
        );
        assert_eq!(
            (w.flash_pages, w.wait_erase_us, w.service_us),
            (None, None, None)
        );
        let r = RequestDetail {
            flash_pages: 2,
            wait_ns: [0, 0, 0, 3_000, 0, 0, 0],
            service_ns: 140_000,
            ..d
        }
        .record(true, 8192, 1_000, 200_000);
        assert_eq!(
            (
                r.op,
                r.flash_pages,
                r.wait_erase_us,
                r.wait_gc_us,
                r.service_us
            ),
            ('R', Some(2), Some(3.0), Some(0.0), Some(140.0))
        );
    }
}
