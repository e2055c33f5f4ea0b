//! A Fenwick (binary indexed) tree over non-negative weights: weighted draws and updates in
//! O(log n), for the direct fill's choice of which block an overwrite hits.

/// Prefix sums over block valid counts: weighted draws and updates in O(log blocks).
///
/// The tree covers a power of two of weights (those past the `n` asked for stay zero), so the
/// root holds the total and a draw descends without bounds tests or branches.
pub(super) struct Fenwick {
    /// `tree[k]` for `1 ≤ k ≤ top`.
    tree: Vec<u32>,
    top: usize,
}

impl Fenwick {
    /// `n` weights, all zero.
    pub(super) fn new(n: usize) -> Self {
        let top = n.next_power_of_two();
        Fenwick {
            tree: vec![0; top + 1],
            top,
        }
    }
    /// Adds `delta` to weight `i`.
    pub(super) fn add(&mut self, i: usize, delta: i32) {
        let mut k = i + 1;
        while k <= self.top {
            self.tree[k] = self.tree[k].wrapping_add_signed(delta);
            k += k & k.wrapping_neg();
        }
    }
    /// Sum of all weights.
    pub(super) fn total(&self) -> u32 {
        self.tree[self.top]
    }
    /// The index whose range of cumulative weight holds `u` (`u < total`).
    pub(super) fn find(&self, mut u: u32) -> usize {
        let (mut pos, mut step) = (0, self.top);
        while step > 0 {
            let next = pos + step;
            // Selects rather than branches: the comparison is a coin flip for the predictor.
            let w = self.tree[next];
            let take = w <= u;
            u -= if take { w } else { 0 };
            pos = if take { next } else { pos };
            step >>= 1;
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_draws_by_weight() {
        let mut f = Fenwick::new(5);
        for (i, w) in [3, 0, 2, 1, 4].into_iter().enumerate() {
            f.add(i, w);
        }
        assert_eq!(f.total(), 10);
        let got: Vec<usize> = (0..10).map(|u| f.find(u)).collect();
        assert_eq!(got, [0, 0, 0, 2, 2, 3, 4, 4, 4, 4]);
        f.add(0, -3);
        assert_eq!(f.find(0), 2);
    }
}
