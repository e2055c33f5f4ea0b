//! Which I/O flow owns a logical page, for flows with blocks of their own
//! (`ftl.flow_blocks = "own"`): the FTL gives each flow's pages write streams of its own.

/// The owner of every logical page: flows' spaces as the host lays them out (`sim::flows`).
#[derive(Debug, Clone)]
pub enum FlowOwner {
    /// Flow `f` owns pages `f * pages .. (f + 1) * pages`.
    Ranges {
        /// Pages per flow.
        pages: u64,
        /// Flows.
        flows: u16,
    },
    /// Flows confined to planes: page `lpn` is on stripe residue `lpn % period`, in stripe
    /// round `lpn / period`; per residue, the rounds each flow owns.
    Striped {
        /// Logical pages per stripe round.
        period: u64,
        /// Per residue: `(first round, one past the last, flow)`.
        rounds: Vec<Vec<(u64, u64, u16)>>,
        /// Flows.
        flows: u16,
    },
}

impl FlowOwner {
    /// Flows.
    pub fn flows(&self) -> u16 {
        match self {
            FlowOwner::Ranges { flows, .. } | FlowOwner::Striped { flows, .. } => *flows,
        }
    }

    /// The flow owning `lpn`; 0 for a page no flow's space holds.
    #[inline]
    pub fn flow_of(&self, lpn: u32) -> u16 {
        let lpn = u64::from(lpn);
        match self {
            FlowOwner::Ranges { pages, flows } => {
                let f = lpn / pages;
                if f < u64::from(*flows) {
                    f as u16
                } else {
                    0
                }
            }
            FlowOwner::Striped { period, rounds, .. } => {
                let round = lpn / period;
                rounds[(lpn % period) as usize]
                    .iter()
                    .find(|&&(a, b, _)| (a..b).contains(&round))
                    .map_or(0, |&(_, _, f)| f)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{Level, PlaneId};
    use crate::ftl::blocks::Stream;
    use crate::ftl::mapping::VersionTables;
    use crate::ftl::Ftl;
    use crate::time::SimTime;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn two_flows(own: bool) -> (Ftl, FlowOwner) {
        let cfg = crate::config::ConfigBuilder::preset("tiny")
            .unwrap()
            .build()
            .unwrap();
        let mut f = Ftl::new(&cfg, ChaCha8Rng::seed_from_u64(0), VersionTables::Full).unwrap();
        let owner = FlowOwner::Ranges {
            pages: u64::from(f.map.logical_pages()) / 2,
            flows: 2,
        };
        if own {
            f.own_flow_blocks(owner.clone());
        }
        (f, owner)
    }

    /// Pages of flows 0 and 1 written in turns on plane 0 until GC has recycled blocks;
    /// returns how many blocks hold valid pages of both.
    fn mixed_blocks(f: &mut Ftl, owner: &FlowOwner) -> usize {
        let half = f.map.logical_pages() / 2;
        for i in 0..4000u32 {
            let lpn = (i / 2) % 8 + (i % 2) * half;
            f.instant_write_at(lpn, PlaneId(0), Level::Normal).unwrap();
        }
        assert!(f.blocks_opened > 20, "GC recycled blocks");
        (0..f.geo.blocks())
            .filter(|&b| {
                let mut flows: Vec<u16> = f
                    .valid_pages(crate::flash::BlockId(b))
                    .map(|(_, lpn)| owner.flow_of(lpn))
                    .collect();
                flows.dedup();
                flows.len() > 1
            })
            .count()
    }

    /// Pages of two flows written in turns land in blocks of each flow's own, GC included,
    /// and `--verify` holds (sharing blocks, the same writes mix them); a page of flow 1 put
    /// in flow 0's block fails `--verify`.
    #[test]
    fn flows_with_blocks_of_their_own_never_share_a_block() {
        let (mut shared, owner) = two_flows(false);
        assert!(mixed_blocks(&mut shared, &owner) > 0);
        let (mut f, owner) = two_flows(true);
        assert_eq!(mixed_blocks(&mut f, &owner), 0);
        crate::verify::check_ftl(&f, &|_| false).unwrap();
        let ppn = f.alloc(PlaneId(0), Stream::USER, SimTime::ZERO).unwrap();
        let lpn = f.map.logical_pages() / 2 + 9;
        let version = f.map.next_version(lpn);
        f.commit_fill(ppn, lpn, version);
        let err = crate::verify::check_ftl(&f, &|_| false).unwrap_err();
        assert!(
            err.to_string().contains("holds pages of flows 0 and 1"),
            "{err}"
        );
    }

    #[test]
    fn ranges_give_each_flow_its_pages_and_the_rest_to_flow_0() {
        let o = FlowOwner::Ranges {
            pages: 10,
            flows: 3,
        };
        let owners: Vec<u16> = [0, 9, 10, 19, 20, 29, 30, 31]
            .map(|l| o.flow_of(l))
            .to_vec();
        assert_eq!(owners, [0, 0, 1, 1, 2, 2, 0, 0]);
    }

    #[test]
    fn striped_owners_follow_each_residue_s_rounds() {
        // Period 2: residue 0 rounds 0..3 flow 1, 3..5 flow 2; residue 1 rounds 0..5 flow 2.
        let o = FlowOwner::Striped {
            period: 2,
            rounds: vec![vec![(0, 3, 1), (3, 5, 2)], vec![(0, 5, 2)]],
            flows: 3,
        };
        let owners: Vec<u16> = (0..12).map(|l| o.flow_of(l)).collect();
        assert_eq!(owners, [1, 2, 1, 2, 1, 2, 2, 2, 2, 2, 0, 0]);
    }
}
