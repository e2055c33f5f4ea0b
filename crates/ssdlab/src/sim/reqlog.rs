//! Per-request records: the few places that feed them, all no-ops unless
//! [`Simulation::on_request`] or [`Simulation::on_timeline`] was called.

use super::{SimError, Simulation};
use crate::metrics::RequestDetail;
use crate::workload::Request;

impl Simulation<'_> {
    /// Request `r` now holds slot `req` and enters the drive's queues.
    pub(super) fn detail_admitted(&mut self, req: u32, r: &Request, pages: u32) {
        if !self.keeps_details() {
            return;
        }
        let i = req as usize;
        if self.details.len() <= i {
            self.details.resize(i + 1, RequestDetail::default());
        }
        self.issued += 1;
        self.details[i] = RequestDetail {
            id: self.issued - 1,
            flow: r.flow,
            offset: r.offset_bytes,
            pages,
            admitted_ns: self.now.ns(),
            ..RequestDetail::default()
        };
    }

    /// What request `req`'s record gathers, if records are asked for.
    #[inline]
    pub(super) fn detail(&mut self, req: u32) -> Option<&mut RequestDetail> {
        if !self.keeps_details() {
            return None;
        }
        self.details.get_mut(req as usize)
    }

    /// Request `req` completes now: its record goes to the sink.
    pub(super) fn detail_done(&mut self, req: u32, arrival_ns: u64, read: bool, size: u64) {
        if !self.keeps_details() {
            return;
        }
        let d = &self.details[req as usize];
        let mut record = d.record(read, size, arrival_ns, self.now.ns());
        record.flow = self.flows.get(usize::from(d.flow)).map(|f| f.name.clone());
        self.timeline_request(&record);
        if let Some(sink) = self.request_sink.as_mut() {
            if let Err(e) = sink(&record) {
                self.failed.get_or_insert(SimError::RequestLog(e));
            }
        }
    }
}
