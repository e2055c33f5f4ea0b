//! Fresh pages (`read_fresh`, `write_fresh`): a direction's new pages drawn without
//! replacement, so the only repeats in its stream are the ones the locality keys ask for.
//!
//! Uniform draws with replacement over a footprint of `d` pages repeat pages by chance, at
//! every distance: a trace whose reads scan a region once and re-read it all a second later
//! has no re-read closer than that second, but its uniform stand-in re-reads some pages a few
//! reads apart — the repeats a hot-read scheme caches. Drawing a random order of the footprint
//! instead leaves those repeats to `reread`, `raw` and `seq`, at the distances they are given.
//!
//! The generator draws units of the direction's largest request (so a new request never
//! starts inside an earlier one's pages), as many as its footprint holds requests of its mean
//! size, and scatters them over its space whole.
//! The order is a keyed Feistel permutation of the next power of four at or above `d`,
//! walked until it lands below `d` (cycle walking: a bijection of `0..d`, at most four steps
//! on average), so it takes no memory whatever the footprint. Once every page has been drawn
//! the next pass draws them again in another order.

/// The i-th fresh page of a direction: a random order of `0..n`, another for each pass.
#[derive(Debug, Clone)]
pub(super) struct Fresh {
    n: u64,
    /// Bits of each half of the permuted word.
    half: u32,
    key: u64,
    drawn: u64,
}

/// Feistel rounds: four make a keyed permutation whose outputs look independent.
const ROUNDS: u64 = 4;

impl Fresh {
    /// A random order of `0..n` (`n` ≥ 1) keyed by `key`.
    pub(super) fn new(n: u64, key: u64) -> Self {
        let n = n.max(1);
        let bits = 64 - (n - 1).leading_zeros();
        Fresh {
            n,
            half: bits.div_ceil(2).max(1),
            key,
            drawn: 0,
        }
    }

    /// The next page of the order.
    pub(super) fn next_page(&mut self) -> u64 {
        let (pass, i) = (self.drawn / self.n, self.drawn % self.n);
        self.drawn += 1;
        let key = splitmix(self.key ^ pass.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut x = i;
        loop {
            x = self.permute(x, key);
            if x < self.n {
                return x;
            }
        }
    }

    /// One pass of the Feistel network over `2 × half` bits.
    fn permute(&self, x: u64, key: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for round in 0..ROUNDS {
            let f = splitmix(r ^ key.rotate_left(16 * round as u32) ^ round) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pass draws each page of `0..n` exactly once, for footprints that are and are
    /// not powers of two (down to one page), and two passes differ in order.
    #[test]
    fn each_pass_is_a_permutation_and_passes_differ() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            let mut f = Fresh::new(n, 7);
            let first: Vec<u64> = (0..n).map(|_| f.next_page()).collect();
            let second: Vec<u64> = (0..n).map(|_| f.next_page()).collect();
            for pass in [&first, &second] {
                let mut sorted = pass.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            }
            if n >= 16 {
                assert_ne!(first, second, "n = {n}");
            }
        }
    }

    /// The order is not the identity nor a stride: consecutive draws of a large footprint
    /// land far apart as often as uniform draws would (mean gap about n / 3).
    #[test]
    fn the_order_looks_random() {
        let n = 100_000u64;
        let mut f = Fresh::new(n, 3);
        let pages: Vec<u64> = (0..n).map(|_| f.next_page()).collect();
        let mean_gap =
            pages.windows(2).map(|w| w[0].abs_diff(w[1])).sum::<u64>() as f64 / (n - 1) as f64;
        assert!((mean_gap / n as f64 - 1.0 / 3.0).abs() < 0.01, "{mean_gap}");
        let strides: std::collections::HashSet<i64> = pages
            .windows(2)
            .take(100)
            .map(|w| w[1] as i64 - w[0] as i64)
            .collect();
        assert!(strides.len() > 90, "{}", strides.len());
        // Another key, another order.
        let mut g = Fresh::new(n, 4);
        assert_ne!(
            pages[..100],
            (0..100).map(|_| g.next_page()).collect::<Vec<_>>()
        );
    }
}
