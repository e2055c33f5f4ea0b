//! GC victim selection policies.

use crate::config::GcVictim;
use crate::ftl::blocks::BlockInfo;
use crate::time::SimTime;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A victim-selection policy: given a plane's blocks, the block to clean (its index in `blocks`).
pub trait VictimPolicy: Send {
    /// Chooses among `Full` blocks that hold at least one invalid page; `None` if there is none.
    /// `keys[i]` is block `i`'s valid count if it is such a candidate, else `u16::MAX`.
    fn victim(
        &mut self,
        blocks: &[BlockInfo],
        keys: &[u16],
        pages_per_block: u32,
        now: SimTime,
    ) -> Option<usize>;
}

fn candidates<'a>(
    blocks: &'a [BlockInfo],
    keys: &'a [u16],
) -> impl Iterator<Item = (usize, &'a BlockInfo)> {
    blocks
        .iter()
        .zip(keys)
        .enumerate()
        .filter(|(_, (_, &k))| k != u16::MAX)
        .map(|(i, (b, _))| (i, b))
}

/// Fewest valid pages; ties go to the lowest index.
#[derive(Debug, Default)]
pub struct Greedy;

impl VictimPolicy for Greedy {
    fn victim(
        &mut self,
        _blocks: &[BlockInfo],
        keys: &[u16],
        _ppb: u32,
        _now: SimTime,
    ) -> Option<usize> {
        // The first minimum: ties go to the lowest index. Two passes the compiler turns into
        // SIMD (a signed 16-bit minimum over keys offset by 2^15, then an equality search);
        // `u16::MAX` marks a block that is not a candidate.
        let best = keys.iter().map(|&k| (k ^ 0x8000) as i16).min()? as u16 ^ 0x8000;
        if best == u16::MAX {
            return None;
        }
        // Whole chunks are tested without early exit (vectorised), then the hit is located.
        const CHUNK: usize = 32;
        let c = keys
            .chunks(CHUNK)
            .position(|c| c.iter().fold(false, |hit, &k| hit | (k == best)))?;
        let at = keys[c * CHUNK..].iter().position(|&k| k == best)?;
        Some(c * CHUNK + at)
    }
}

/// Cost-benefit (Kawaguchi et al., 1995): maximise age × (1 − u) / (2u), u = valid fraction.
#[derive(Debug, Default)]
pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn victim(
        &mut self,
        blocks: &[BlockInfo],
        keys: &[u16],
        ppb: u32,
        now: SimTime,
    ) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, b) in candidates(blocks, keys) {
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
    fn victim(
        &mut self,
        blocks: &[BlockInfo],
        keys: &[u16],
        _ppb: u32,
        _now: SimTime,
    ) -> Option<usize> {
        let n = candidates(blocks, keys).count();
        if n == 0 {
            return None;
        }
        let k = self.0.random_range(0..n);
        candidates(blocks, keys).nth(k).map(|(i, _)| i)
    }
}

/// Randomized greedy ([`GcVictim::Rga`]): the fewest valid pages among `d` blocks drawn
/// without replacement (ties to the lowest block), counting only those that are candidates.
pub struct Rga {
    /// Blocks drawn per choice.
    pub d: u32,
    /// The draws' stream.
    pub rng: ChaCha8Rng,
}

impl VictimPolicy for Rga {
    fn victim(
        &mut self,
        blocks: &[BlockInfo],
        keys: &[u16],
        _ppb: u32,
        _now: SimTime,
    ) -> Option<usize> {
        let n = blocks.len();
        let d = (self.d as usize).min(n);
        rand::seq::index::sample(&mut self.rng, n, d)
            .into_iter()
            .filter(|&i| keys[i] != u16::MAX)
            .min_by_key(|&i| (keys[i], i))
    }
}

/// The policy object for a config value on planes of `blocks_per_plane` blocks.
pub fn policy(v: GcVictim, rng: ChaCha8Rng, blocks_per_plane: u32) -> Box<dyn VictimPolicy> {
    match v {
        GcVictim::Greedy => Box::new(Greedy),
        GcVictim::CostBenefit => Box::new(CostBenefit),
        GcVictim::Random => Box::new(RandomVictim(rng)),
        GcVictim::Rga => Box::new(Rga {
            d: GcVictim::rga_d(blocks_per_plane),
            rng,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::blocks::BlockState;
    use rand::SeedableRng;

    fn keys(blocks: &[BlockInfo], ppb: u32) -> Vec<u16> {
        blocks
            .iter()
            .map(|b| {
                if b.state == BlockState::Full && b.valid < ppb {
                    b.valid as u16
                } else {
                    u16::MAX
                }
            })
            .collect()
    }

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
        assert_eq!(
            Greedy.victim(&blocks, &keys(&blocks, 16), 16, SimTime(0)),
            Some(2)
        );
    }

    #[test]
    fn no_candidate_when_all_full_blocks_are_fully_valid() {
        let blocks = vec![
            block(BlockState::Full, 16, 0),
            block(BlockState::Free, 0, 0),
        ];
        assert_eq!(
            Greedy.victim(&blocks, &keys(&blocks, 16), 16, SimTime(0)),
            None
        );
        let mut r = RandomVictim(ChaCha8Rng::seed_from_u64(1));
        assert_eq!(r.victim(&blocks, &keys(&blocks, 16), 16, SimTime(0)), None);
    }

    #[test]
    fn rga_is_greedy_among_the_blocks_it_draws() {
        let blocks = vec![
            block(BlockState::Full, 10, 0),
            block(BlockState::Active, 1, 0),
            block(BlockState::Full, 4, 0),
            block(BlockState::Full, 4, 0),
            block(BlockState::Free, 0, 0),
            block(BlockState::Full, 16, 0),
            block(BlockState::Full, 12, 0),
            block(BlockState::Full, 7, 0),
        ];
        let k = keys(&blocks, 16);
        // Drawing every block, it is greedy (ties to the lowest block).
        let mut all = Rga {
            d: 8,
            rng: ChaCha8Rng::seed_from_u64(3),
        };
        assert_eq!(all.victim(&blocks, &k, 16, SimTime(0)), Some(2));
        // Drawing 3 of 8, the victim is the best of what was drawn: across seeds every
        // candidate but the fewest-valid ones can win, the best two most often, and a draw of
        // no candidate (blocks 1, 4 and 5 are not) gives none.
        let mut wins = [0u32; 8];
        let mut none = 0;
        for seed in 0..4000 {
            let mut r = Rga {
                d: 3,
                rng: ChaCha8Rng::seed_from_u64(seed),
            };
            match r.victim(&blocks, &k, 16, SimTime(0)) {
                Some(i) => wins[i] += 1,
                None => none += 1,
            }
        }
        assert_eq!((wins[1], wins[4], wins[5]), (0, 0, 0));
        assert!(wins[2] > wins[3] && wins[3] > wins[7] && wins[7] > wins[0] && wins[0] > wins[6]);
        assert!(wins[6] > 0 && none > 0, "{wins:?} {none}");
        // P(no candidate among 3 of 8 with 3 non-candidates) = 1 / C(8, 3) = 1/56.
        assert!(
            (f64::from(none) / 4000.0 - 1.0 / 56.0).abs() < 0.01,
            "{none}"
        );
        assert_eq!(GcVictim::rga_d(2048), 11);
        assert_eq!(GcVictim::rga_d(1), 1);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks() {
        // Same utilisation, the older block wins; an empty block wins outright.
        let blocks = vec![
            block(BlockState::Full, 8, 900),
            block(BlockState::Full, 8, 100),
        ];
        assert_eq!(
            CostBenefit.victim(&blocks, &keys(&blocks, 16), 16, SimTime(1000)),
            Some(1)
        );
        let blocks = vec![
            block(BlockState::Full, 1, 0),
            block(BlockState::Full, 0, 999),
        ];
        assert_eq!(
            CostBenefit.victim(&blocks, &keys(&blocks, 16), 16, SimTime(1000)),
            Some(1)
        );
    }

    proptest::proptest! {
        /// The vectorised greedy scan picks what a plain scan for the first minimum picks.
        #[test]
        fn greedy_picks_the_first_minimum(
            keys in proptest::collection::vec(
                proptest::prop_oneof![0u16..70, proptest::strategy::Just(u16::MAX)],
                0..300,
            )
        ) {
            let mut plain = (u16::MAX, None);
            for (i, &k) in keys.iter().enumerate() {
                if k < plain.0 {
                    plain = (k, Some(i));
                }
            }
            let got = Greedy.victim(&[], &keys, 64, SimTime::ZERO);
            proptest::prop_assert_eq!(got, plain.1);
        }
    }
}
