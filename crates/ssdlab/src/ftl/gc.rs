//! GC victim selection policies.

use crate::config::GcVictim;
use crate::ftl::blocks::{BlockInfo, BlockState};
use crate::time::SimTime;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A victim-selection policy: given a plane's blocks, the block to clean (its index in `blocks`).
pub trait VictimPolicy: Send {
    /// Chooses among `Full` blocks that hold at least one invalid page; `None` if there is none.
    fn victim(&mut self, blocks: &[BlockInfo], pages_per_block: u32, now: SimTime)
        -> Option<usize>;
}

fn candidates(blocks: &[BlockInfo], ppb: u32) -> impl Iterator<Item = (usize, &BlockInfo)> {
    blocks
        .iter()
        .enumerate()
        .filter(move |(_, b)| b.state == BlockState::Full && b.valid < ppb)
}

/// Fewest valid pages; ties go to the lowest index.
#[derive(Debug, Default)]
pub struct Greedy;

impl VictimPolicy for Greedy {
    fn victim(&mut self, blocks: &[BlockInfo], ppb: u32, _now: SimTime) -> Option<usize> {
        candidates(blocks, ppb)
            .min_by_key(|(i, b)| (b.valid, *i))
            .map(|(i, _)| i)
    }
}

/// Cost-benefit (Kawaguchi et al., 1995): maximise age × (1 − u) / (2u), u = valid fraction.
#[derive(Debug, Default)]
pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn victim(&mut self, blocks: &[BlockInfo], ppb: u32, now: SimTime) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, b) in candidates(blocks, ppb) {
            let u = f64::from(b.valid) / f64::from(ppb);
            let age = now.since(b.last_write) as f64 + 1.0;
            let score = if b.valid == 0 {
                f64::INFINITY
            } else {
                age * (1.0 - u) / (2.0 * u)
            };
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| i)
    }
}

/// Uniformly random among the candidates, from a seeded stream.
#[derive(Debug)]
pub struct RandomVictim(pub ChaCha8Rng);

impl VictimPolicy for RandomVictim {
    fn victim(&mut self, blocks: &[BlockInfo], ppb: u32, _now: SimTime) -> Option<usize> {
        let n = candidates(blocks, ppb).count();
        if n == 0 {
            return None;
        }
        let k = self.0.random_range(0..n);
        candidates(blocks, ppb).nth(k).map(|(i, _)| i)
    }
}

/// The policy object for a config value.
pub fn policy(v: GcVictim, rng: ChaCha8Rng) -> Box<dyn VictimPolicy> {
    match v {
        GcVictim::Greedy => Box::new(Greedy),
        GcVictim::CostBenefit => Box::new(CostBenefit),
        GcVictim::Random => Box::new(RandomVictim(rng)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn block(state: BlockState, valid: u32, last_write_ns: u64) -> BlockInfo {
        BlockInfo {
            state,
            valid,
            last_write: SimTime(last_write_ns),
            ..BlockInfo::new()
        }
    }

    #[test]
    fn greedy_picks_fewest_valid_full_block() {
        let blocks = vec![
            block(BlockState::Full, 10, 0),
            block(BlockState::Active, 1, 0),
            block(BlockState::Full, 4, 0),
            block(BlockState::Full, 4, 0),
            block(BlockState::Full, 16, 0),
        ];
        assert_eq!(Greedy.victim(&blocks, 16, SimTime(0)), Some(2));
    }

    #[test]
    fn no_candidate_when_all_full_blocks_are_fully_valid() {
        let blocks = vec![
            block(BlockState::Full, 16, 0),
            block(BlockState::Free, 0, 0),
        ];
        assert_eq!(Greedy.victim(&blocks, 16, SimTime(0)), None);
        let mut r = RandomVictim(ChaCha8Rng::seed_from_u64(1));
        assert_eq!(r.victim(&blocks, 16, SimTime(0)), None);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks() {
        // Same utilisation, the older block wins; an empty block wins outright.
        let blocks = vec![
            block(BlockState::Full, 8, 900),
            block(BlockState::Full, 8, 100),
        ];
        assert_eq!(CostBenefit.victim(&blocks, 16, SimTime(1000)), Some(1));
        let blocks = vec![
            block(BlockState::Full, 1, 0),
            block(BlockState::Full, 0, 999),
        ];
        assert_eq!(CostBenefit.victim(&blocks, 16, SimTime(1000)), Some(1));
    }
}
