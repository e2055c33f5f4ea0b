//! Several I/O flows (tenants) on one drive: each flow's own logical space and its own
//! request metrics. With one flow (the run of one workload) there is no flow state at all:
//! the run's address space and metrics are the flow's.
//!
//! Logical spaces follow MQSim's NVMe partitioning (`Logical_Address_Partitioning_Unit`):
//! flows sharing every plane split the drive's logical pages equally, in flow order, and a
//! flow's addresses past its share fold onto it as the drive folds addresses past its
//! capacity (`ftl.out_of_range`).

use super::Simulation;
use crate::metrics::RequestMetrics;

/// One flow's state in a run with several.
#[derive(Debug, Clone)]
pub(super) struct FlowState {
    pub(super) name: String,
    pub(super) metrics: RequestMetrics,
}

impl FlowState {
    /// The states of `flows` (none for a run of one flow).
    pub(super) fn all(flows: &[crate::workload::flows::FlowSpec]) -> Vec<Self> {
        if flows.len() < 2 {
            return Vec::new();
        }
        flows
            .iter()
            .map(|f| FlowState {
                name: f.name.clone(),
                metrics: RequestMetrics::default(),
            })
            .collect()
    }
}

/// Memory `n` flows take beyond a run of one: each flow's metrics (two latency histograms of
/// the run's range and precision), and the flows' queues at their bound (a `VecDeque` may
/// hold twice its length while it grows); bytes.
pub fn bytes(n: usize) -> u64 {
    if n < 2 {
        return 0;
    }
    let m = RequestMetrics::default();
    let histograms = (m.read.distinct_values() + m.write.distinct_values()) * 8;
    let per_flow = (std::mem::size_of::<FlowState>() + histograms) as u64;
    let queued = 2
        * super::admit::MAX_QUEUED as u64
        * std::mem::size_of::<(crate::time::SimTime, crate::workload::Request)>() as u64;
    n as u64 * per_flow + queued
}

/// The first host page and the number of host pages of flow `flow` among `flows` flows on a
/// drive of `logical` host pages.
pub(super) fn space(flow: u16, flows: usize, logical: u64) -> (u64, u64) {
    if flows < 2 {
        return (0, logical);
    }
    let pages = logical / flows as u64;
    (u64::from(flow) * pages, pages)
}

impl Simulation<'_> {
    /// Flow `flow`'s logical space: first host page, pages.
    #[inline]
    pub(super) fn flow_space(&self, flow: u16) -> (u64, u64) {
        space(flow, self.flows.len(), u64::from(self.host_pages()))
    }

    /// The host page that page `page` of flow `flow`'s requests addresses.
    #[inline]
    pub(super) fn host_page(&self, flow: u16, page: u64) -> u32 {
        let (base, pages) = self.flow_space(flow);
        (base + page % pages) as u32
    }

    /// Counts into the run's request metrics and, with several flows, flow `flow`'s.
    #[inline]
    pub(super) fn count(&mut self, flow: u16, f: impl Fn(&mut RequestMetrics)) {
        f(&mut self.metrics.host);
        if let Some(s) = self.flows.get_mut(usize::from(flow)) {
            f(&mut s.metrics);
        }
    }

    /// [`Self::count`] for the flow of request slot `req`.
    #[inline]
    pub(super) fn count_req(&mut self, req: u32, f: impl Fn(&mut RequestMetrics)) {
        let flow = if self.flows.is_empty() {
            0
        } else {
            self.reqs[req as usize].flow
        };
        self.count(flow, f);
    }
}

#[cfg(test)]
mod tests {
    use super::space;

    #[test]
    fn flows_cost_memory_only_when_there_are_several() {
        assert_eq!(super::bytes(1), 0);
        let (two, three) = (super::bytes(2), super::bytes(3));
        // A flow's two histograms are hundreds of KiB; the queues' bound is tens of MiB.
        assert!(
            three - two > 100 << 10 && three - two < 4 << 20,
            "{}",
            three - two
        );
        assert!(two > 10 << 20 && two < 100 << 20, "{two}");
    }

    #[test]
    fn flows_split_the_logical_space_equally_and_one_flow_has_it_all() {
        assert_eq!(space(0, 1, 1000), (0, 1000));
        assert_eq!(space(0, 3, 1000), (0, 333));
        assert_eq!(space(2, 3, 1000), (666, 333));
    }
}
