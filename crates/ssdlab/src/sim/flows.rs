//! Several I/O flows (tenants) on one drive: each flow's own logical space and its own
//! request metrics. With one flow (the run of one workload) there is no flow state at all:
//! the run's address space and metrics are the flow's.
//!
//! Logical spaces follow MQSim's NVMe partitioning (`Logical_Address_Partitioning_Unit`):
//! flows sharing every plane split the drive's logical pages equally, in flow order, and a
//! flow's addresses past its share fold onto it as the drive folds addresses past its
//! capacity (`ftl.out_of_range`). A flow confined to some channels, chips, dies or planes
//! (MQSim's `Channel_IDs` … `Plane_IDs`) gets logical pages whose static striping puts them on
//! its planes only: the pages of its planes' stripe residues, on each plane an equal part of
//! the rounds among the flows sharing it (the least over its planes, so every flow has the
//! same number of pages on each of its planes, as MQSim's per-flow striping assumes).

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

/// Each flow's priority class (0 urgent … 3 low) by flow index; one run's stream is of the
/// high class, MQSim's default.
pub(super) fn classes(flows: &[crate::workload::flows::FlowSpec]) -> Vec<u8> {
    if flows.is_empty() {
        return vec![crate::workload::flows::Priority::High.index() as u8];
    }
    flows.iter().map(|f| f.priority.index() as u8).collect()
}

/// Whether `flows` wait in submission queues on the host side: with several flows, or a flow
/// holding its own `queue_depth`.
pub(super) fn queued(flows: &[crate::workload::flows::FlowSpec]) -> bool {
    flows.len() > 1 || flows.iter().any(|f| f.queue_depth > 0)
}

/// How the flows' logical spaces lie in the drive's.
#[derive(Debug, Clone)]
pub(super) enum Spaces {
    /// One flow, or flows on every plane: `n` equal shares of the host pages.
    Equal(usize),
    /// Some flows confined to planes: each flow's pages on its planes' stripe residues.
    Partitioned {
        /// Logical pages per stripe round (the data planes).
        period: u64,
        flows: Vec<Part>,
    },
}

/// A flow's part of a partitioned drive.
#[derive(Debug, Clone)]
pub(super) struct Part {
    /// The stripe residues of its planes, in striping order.
    residues: Vec<u64>,
    /// Per residue: the first of its stripe rounds this flow owns.
    offsets: Vec<u64>,
    /// Rounds it owns on each of its planes.
    rounds: u64,
    /// Per plane of the drive: whether the flow may use it.
    pub(super) planes: Vec<bool>,
}

impl Spaces {
    /// The spaces of `flows` on `geo`'s drive of `logical` host pages, where static striping
    /// puts logical page `lpn` on `home(lpn)`.
    pub(super) fn new(
        flows: &[crate::workload::flows::FlowSpec],
        geo: &crate::flash::Geometry,
        home: impl Fn(u32) -> u32,
        logical: u64,
    ) -> Result<Self, String> {
        if !flows.iter().any(|f| f.partitioned()) {
            return Ok(Spaces::Equal(flows.len().max(1)));
        }
        let period = u64::from(geo.data_planes());
        let mut residue = vec![u64::MAX; geo.planes() as usize];
        for r in 0..period {
            residue[home(r as u32) as usize] = r;
        }
        let mut sets = Vec::with_capacity(flows.len());
        for f in flows {
            let level = |key: &str, ids: &[u32], count: u32| -> Result<Vec<u32>, String> {
                if ids.is_empty() {
                    return Ok((0..count).collect());
                }
                match ids.iter().find(|&&i| i >= count) {
                    Some(bad) => Err(format!(
                        "flow `{}`: `{key}`: id {bad}: the drive has {count} (0 to {})",
                        f.name,
                        count - 1
                    )),
                    None => Ok(ids.to_vec()),
                }
            };
            let chs = level("channels", &f.channels, geo.data_channels)?;
            let chips = level("chips", &f.chips, geo.chips_per_channel)?;
            let dies = level("dies", &f.dies, geo.dies_per_chip)?;
            let planes = level("planes", &f.planes, geo.planes_per_die)?;
            let mut set = vec![false; geo.planes() as usize];
            for &c in &chs {
                for &k in &chips {
                    for &d in &dies {
                        for &p in &planes {
                            set[geo.plane_at(c, k, d, p).0 as usize] = true;
                        }
                    }
                }
            }
            sets.push(set);
        }
        let sharers: Vec<u64> = (0..geo.planes() as usize)
            .map(|p| sets.iter().filter(|s| s[p]).count() as u64)
            .collect();
        let rounds_total = logical / period;
        let mut next = vec![0u64; geo.planes() as usize];
        let mut parts = Vec::with_capacity(flows.len());
        for (f, set) in flows.iter().zip(sets) {
            let mut own: Vec<(u64, usize)> = (0..set.len())
                .filter(|&p| set[p])
                .map(|p| (residue[p], p))
                .collect();
            own.sort_unstable();
            let rounds = own
                .iter()
                .map(|&(_, p)| rounds_total / sharers[p])
                .min()
                .unwrap_or(0);
            if rounds == 0 {
                return Err(format!(
                    "flow `{}`: its planes, shared with the other flows, leave it no logical page",
                    f.name
                ));
            }
            let offsets = own
                .iter()
                .map(|&(_, p)| {
                    let at = next[p];
                    next[p] += rounds;
                    at
                })
                .collect();
            parts.push(Part {
                residues: own.iter().map(|&(r, _)| r).collect(),
                offsets,
                rounds,
                planes: set,
            });
        }
        Ok(Spaces::Partitioned {
            period,
            flows: parts,
        })
    }

    /// Host pages of flow `flow` on a drive of `logical` host pages.
    pub(super) fn pages(&self, flow: u16, logical: u64) -> u64 {
        match self {
            Spaces::Equal(n) => space(flow, *n, logical).1,
            Spaces::Partitioned { flows, .. } => {
                let p = &flows[usize::from(flow)];
                p.rounds * p.residues.len() as u64
            }
        }
    }

    /// The host page that page `page` of flow `flow`'s requests addresses (folded onto its
    /// space on a drive of `logical` host pages).
    pub(super) fn lpn(&self, flow: u16, page: u64, logical: u64) -> u32 {
        match self {
            Spaces::Equal(n) => {
                let (base, pages) = space(flow, *n, logical);
                (base + page % pages) as u32
            }
            Spaces::Partitioned { period, flows } => {
                let p = &flows[usize::from(flow)];
                let n = p.residues.len() as u64;
                let page = page % (p.rounds * n);
                let i = (page % n) as usize;
                ((p.offsets[i] + page / n) * period + p.residues[i]) as u32
            }
        }
    }

    /// Which flow owns each logical page of a drive of `logical` host pages.
    pub(super) fn owner(&self, logical: u64) -> crate::ftl::FlowOwner {
        match self {
            Spaces::Equal(n) => crate::ftl::FlowOwner::Ranges {
                pages: space(0, *n, logical).1,
                flows: *n as u16,
            },
            Spaces::Partitioned { period, flows } => {
                let mut rounds = vec![Vec::new(); *period as usize];
                for (f, p) in flows.iter().enumerate() {
                    for (&r, &at) in p.residues.iter().zip(&p.offsets) {
                        rounds[r as usize].push((at, at + p.rounds, f as u16));
                    }
                }
                crate::ftl::FlowOwner::Striped {
                    period: *period,
                    rounds,
                    flows: flows.len() as u16,
                }
            }
        }
    }

    /// The partitioned flows' parts (none when no flow is confined).
    pub(super) fn parts(&self) -> &[Part] {
        match self {
            Spaces::Equal(_) => &[],
            Spaces::Partitioned { flows, .. } => flows,
        }
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
#[inline]
pub(super) fn space(flow: u16, flows: usize, logical: u64) -> (u64, u64) {
    if flows < 2 {
        return (0, logical);
    }
    let pages = logical / flows as u64;
    (u64::from(flow) * pages, pages)
}

impl Simulation<'_> {
    /// Host pages of flow `flow`'s logical space (with one flow: the drive's).
    #[inline(always)]
    pub(super) fn flow_pages(&self, flow: u16) -> u64 {
        let logical = u64::from(self.host_pages());
        if let Spaces::Equal(1) = self.spaces {
            return logical;
        }
        self.spaces.pages(flow, logical)
    }

    /// Whether the host pages are one space (one flow): page k is host page k mod the drive's.
    #[inline(always)]
    pub(super) fn one_space(&self) -> bool {
        matches!(self.spaces, Spaces::Equal(1))
    }

    /// The host page that page `page` of flow `flow`'s requests addresses, on a drive of
    /// `logical` host pages (with one flow: the page folded onto the drive).
    #[inline(always)]
    pub(super) fn host_lpn(&self, flow: u16, page: u64, logical: u64) -> u32 {
        if self.one_space() {
            return (page % logical) as u32;
        }
        self.spaces.lpn(flow, page, logical)
    }

    /// `--verify`: every written page of a confined flow is on one of its planes.
    pub(super) fn check_partitions(&self) -> Result<(), super::SimError> {
        let logical = u64::from(self.host_pages());
        for (k, part) in self.spaces.parts().iter().enumerate() {
            for page in 0..self.spaces.pages(k as u16, logical) {
                let lpn = self.spaces.lpn(k as u16, page, logical);
                let ppn = self.ftl.map.ppn(lpn);
                if ppn == crate::ftl::mapping::NONE {
                    continue;
                }
                let plane = self.geo.plane_of(crate::flash::Ppn(ppn)).0;
                if !part.planes[plane as usize] {
                    return Err(super::SimError::Flows(format!(
                        "--verify: flow `{}`'s logical page {lpn} is on plane {plane}, outside the planes it is confined to",
                        self.opts.flows[k].name
                    )));
                }
            }
        }
        Ok(())
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
    fn a_confined_flow_gets_pages_on_its_planes_only_and_no_flow_shares_a_page() {
        use crate::workload::flows::FlowSpec;
        let cfg = crate::config::ConfigBuilder::preset("tiny")
            .unwrap()
            .set("geometry.channels=2")
            .unwrap()
            .set("geometry.dies_per_chip=2")
            .unwrap()
            .build()
            .unwrap();
        let geo = crate::flash::Geometry::of(&cfg);
        let striping = crate::ftl::alloc::Striping::new(cfg.ftl.stripe_order, &geo);
        let home = |lpn: u32| striping.plane(lpn).0;
        let logical = 4000u64;
        let flows = [
            FlowSpec {
                channels: vec![1],
                dies: vec![0],
                ..FlowSpec::named("a")
            },
            FlowSpec::named("b"),
            FlowSpec {
                channels: vec![0],
                ..FlowSpec::named("c")
            },
        ];
        let s = super::Spaces::new(&flows, &geo, home, logical).unwrap();
        let parts = s.parts();
        let mut owner = std::collections::HashMap::new();
        for k in 0..3u16 {
            let pages = s.pages(k, logical);
            assert!(pages > 0);
            for page in 0..pages {
                let lpn = s.lpn(k, page, logical);
                assert!(u64::from(lpn) < logical);
                assert!(
                    parts[k as usize].planes[home(lpn) as usize],
                    "flow {k} page {page}"
                );
                assert_eq!(owner.insert(lpn, k), None, "lpn {lpn} given twice");
            }
            // Past its space a page folds onto it.
            assert_eq!(s.lpn(k, pages + 3, logical), s.lpn(k, 3, logical));
        }
        // `a` has one plane of four, shared with `b`: half of that plane's rounds.
        assert_eq!(s.pages(0, logical), logical / 4 / 2);
        // An id the drive lacks is named.
        let bad = [
            FlowSpec {
                dies: vec![2],
                ..FlowSpec::named("x")
            },
            FlowSpec::named("y"),
        ];
        let e = super::Spaces::new(&bad, &geo, home, logical).unwrap_err();
        assert!(
            e.contains("flow `x`: `dies`: id 2: the drive has 2 (0 to 1)"),
            "{e}"
        );
    }

    #[test]
    fn flows_split_the_logical_space_equally_and_one_flow_has_it_all() {
        assert_eq!(space(0, 1, 1000), (0, 1000));
        assert_eq!(space(0, 3, 1000), (0, 333));
        assert_eq!(space(2, 3, 1000), (666, 333));
    }
}
