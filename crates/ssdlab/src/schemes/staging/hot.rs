//! HotR's hot-read identification (hotr.txt §III.B): per data chip an R-LRU list of recently
//! read pages whose size follows the hot set — `hot_fraction` of the distinct pages read so far
//! on that chip — so that at most that share of the read pages holds a staging copy.

use crate::buffer::LruBuffer;
use crate::config::{Config, CopyOn, StagingKey};
use rustc_hash::FxHashMap;

/// The R-LRU lists and the distinct-read counts that size them.
#[derive(Debug)]
pub(super) struct HotSet {
    rlru: Vec<LruBuffer>,
    /// Key → the chip whose list holds its entry.
    filed: FxHashMap<u32, u32>,
    /// Keys read at least once (a bit per key).
    seen: Vec<u64>,
    /// Distinct keys first read on each chip.
    distinct: Vec<u64>,
    hot_fraction: f64,
    /// Copy on any hit (not only a conflicted one).
    pub(super) any_hit: bool,
    /// Keys are host pages (under dedup: not the content ids below it).
    pub(super) by_lba: bool,
}

impl HotSet {
    pub(super) fn new(cfg: &Config, chips: u32) -> Self {
        HotSet {
            rlru: (0..chips).map(|_| LruBuffer::new(0)).collect(),
            filed: FxHashMap::default(),
            seen: Vec::new(),
            distinct: vec![0; chips as usize],
            hot_fraction: cfg.staging.hot_fraction,
            any_hit: cfg.staging.copy_on == CopyOn::Hit,
            by_lba: cfg.dedup.enabled && cfg.staging.key == StagingKey::Lba,
        }
    }

    /// Copies chip `die` may hold: `hot_fraction` of its distinct read pages.
    pub(super) fn cap(&self, die: usize) -> u32 {
        (self.hot_fraction * self.distinct[die] as f64).floor() as u32
    }

    /// Counts `key` as read on `die` if it was never read before; the chip's list grows with
    /// its hot set.
    pub(super) fn observe(&mut self, key: u32, die: usize) {
        let (word, bit) = ((key / 64) as usize, key % 64);
        if word >= self.seen.len() {
            self.seen.resize(word + 1, 0);
        }
        if self.seen[word] & (1 << bit) == 0 {
            self.seen[word] |= 1 << bit;
            self.distinct[die] += 1;
            let cap = self.cap(die);
            self.rlru[die].grow(cap);
        }
    }

    /// A read of `key`: true (and moved to the front) if it has an entry.
    pub(super) fn touch(&mut self, key: u32) -> bool {
        match self.filed.get(&key) {
            Some(&die) => self.rlru[die as usize].touch(key, false),
            None => false,
        }
    }

    /// Whether `key` has an entry.
    pub(super) fn contains(&self, key: u32) -> bool {
        self.filed.contains_key(&key)
    }

    /// Files an entry for `key` in chip `die`'s list; returns the key evicted to make room.
    /// A chip whose hot set is still empty keeps no entries.
    pub(super) fn insert(&mut self, key: u32, die: usize) -> Option<u32> {
        if self.cap(die) == 0 {
            return None;
        }
        let evicted = self.rlru[die].insert(key, false).map(|e| e.lpn);
        if let Some(e) = evicted {
            self.filed.remove(&e);
        }
        self.filed.insert(key, die as u32);
        evicted
    }

    /// Removes `key`'s entry, wherever it is filed.
    pub(super) fn remove(&mut self, key: u32) {
        if let Some(die) = self.filed.remove(&key) {
            self.rlru[die as usize].remove(key);
        }
    }

    /// Power loss: the lists and counts are volatile controller state.
    pub(super) fn clear(&mut self) {
        self.rlru.iter_mut().for_each(|l| *l = LruBuffer::new(0));
        self.filed.clear();
        self.seen.clear();
        self.distinct.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(fraction: f64) -> HotSet {
        let mut cfg = Config::preset("tiny").expect("preset");
        cfg.staging.hot_fraction = fraction;
        HotSet::new(&cfg, 2)
    }

    #[test]
    fn the_lists_grow_with_the_distinct_pages_read() {
        let mut h = set(0.1);
        for key in 0..9 {
            h.observe(key, 0);
            assert_eq!(h.insert(key, 0), None, "no hot set yet below 10 pages");
        }
        assert!((0..9).all(|key| !h.contains(key)));
        h.observe(9, 0);
        assert_eq!(h.cap(0), 1);
        assert_eq!(h.insert(9, 0), None);
        // Re-reads add no distinct page; another page evicts the only entry.
        h.observe(9, 0);
        assert_eq!(h.cap(0), 1);
        h.observe(20, 0);
        assert_eq!(h.insert(20, 0), Some(9));
        assert!(h.contains(20) && !h.contains(9));
        for key in 30..50 {
            h.observe(key, 0);
        }
        assert_eq!(h.cap(0), 3);
        assert_eq!(h.cap(1), 0, "chips count their own pages");
    }

    #[test]
    fn an_entry_is_found_and_removed_on_the_chip_that_filed_it() {
        let mut h = set(1.0);
        h.observe(7, 1);
        h.insert(7, 1);
        assert!(h.touch(7));
        h.remove(7);
        assert!(!h.touch(7) && !h.contains(7));
    }
}
