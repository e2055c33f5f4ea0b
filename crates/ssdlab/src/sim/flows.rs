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
    fn flows_split_the_logical_space_equally_and_one_flow_has_it_all() {
        assert_eq!(space(0, 1, 1000), (0, 1000));
        assert_eq!(space(0, 3, 1000), (0, 333));
        assert_eq!(space(2, 3, 1000), (666, 333));
    }
}
