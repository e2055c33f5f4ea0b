//! Unit-test access to a simulation's internals, for the scheme modules' tests.

use super::{Event, ReqState, Simulation};
use crate::ftl::Ftl;
use crate::metrics::Metrics;
use crate::time::SimTime;

impl Simulation<'_> {
    /// A request slot that completes after 100 pages.
    pub(crate) fn probe_request(&mut self) -> u32 {
        self.reqs.push(ReqState {
            arrival: SimTime::ZERO,
            pages_left: 100,
            read: false,
            bytes: 0,
            blocked: false,
            redirected: false,
            flow: 0,
        });
        (self.reqs.len() - 1) as u32
    }
    /// A host write of one page, as the host path does it (the die it queued work on is not
    /// dispatched).
    pub(crate) fn probe_write(&mut self, req: u32, lpn: u32) {
        self.write_page(req, lpn, None).expect("write");
    }
    /// A power loss and restart.
    pub(crate) fn probe_power_loss(&mut self) {
        self.on_power_loss().expect("restart");
    }
    /// The FTL.
    pub(crate) fn probe_ftl(&mut self) -> &mut Ftl {
        &mut self.ftl
    }
    /// Whether the device buffer holds `lpn` dirty.
    pub(crate) fn probe_device_dirty(&self, lpn: u32) -> bool {
        self.buffer.as_ref().is_some_and(|b| b.is_dirty(lpn))
    }
    /// The counters.
    pub(crate) fn probe_metrics(&self) -> &Metrics {
        &self.metrics
    }
    /// Whether a program of `lpn` is in flight.
    pub(crate) fn probe_in_flight(&self, lpn: u32) -> bool {
        self.ftl.map.in_flight(lpn)
    }
    /// Whether a scheme holds a newer version of `lpn` than flash.
    pub(crate) fn probe_holds_newer(&self, lpn: u32) -> bool {
        self.policies
            .list
            .iter()
            .flatten()
            .any(|p| p.holds_newer(lpn))
    }
    /// Array time of a program of one page at `ppn` (a GC program into dedicated blocks if
    /// `dedicated`).
    pub(crate) fn probe_program_ns(&mut self, ppn: u32, dedicated: bool) -> u64 {
        let mut op = self.blank_op(crate::sched::OpKind::Program, crate::sched::Cause::Gc, 0);
        op.ppn = ppn;
        op.dedicated = dedicated;
        let id = self.new_op(op);
        self.program_ns(id)
    }
    /// A program takes the first page of `block`.
    pub(crate) fn probe_block_opened(&mut self, block: u32) {
        self.block_opened(block);
    }
    /// The next event, if it is a scheme's timer: (time ns, a, b).
    pub(crate) fn probe_next_timer(&mut self) -> Option<(u64, u32, u32)> {
        match self.events.pop()? {
            (at, Event::Timer { a, b, .. }) => Some((at.ns(), a, b)),
            _ => None,
        }
    }
}
