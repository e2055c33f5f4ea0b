//! A Fenwick (binary indexed) tree over non-negative weights: weighted draws and updates in
//! O(log n), for the direct fill's choice of which block an overwrite hits.

/// Prefix sums over block valid counts: weighted draws and updates in O(log blocks).
pub(super) struct Fenwick {
    tree: Vec<u32>,
    top: usize,
}

impl Fenwick {
    /// `n` weights, all zero.
    pub(super) fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
            top: n.next_power_of_two(),
        }
    }
    /// Adds `delta` to weight `i`.
    pub(super) fn add(&mut self, i: usize, delta: i32) {
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k].wrapping_add_signed(delta);
            k += k & k.wrapping_neg();
        }
    }
    /// Sum of all weights.
    pub(super) fn total(&self) -> u32 {
        let mut k = self.tree.len() - 1;
        let mut s = 0u32;
        while k > 0 {
            s += self.tree[k];
            k &= k - 1;
        }
        s
    }
    /// The index whose range of cumulative weight holds `u` (`u < total`).
    pub(super) fn find(&self, mut u: u32) -> usize {
        let (mut pos, mut step) = (0, self.top);
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= u {
                u -= self.tree[next];
                pos = next;
            }
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
