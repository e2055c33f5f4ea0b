//! A cached mapping table (DFTL, Gupta et al., ASPLOS 2009; MQSim's CMT): a bounded DRAM cache
//! of logical → physical entries over a mapping kept in flash in translation pages.
//!
//! The cache is entry-granular and least-recently-used, as both DFTL and MQSim are. Translation
//! page `t` holds the entries of logical pages `t·E .. (t+1)·E` (`E` entries per page) and is
//! itself logical page `L + t` of the mapping (`L` host logical pages), so it is programmed,
//! invalidated, moved by GC and verified like data; where each translation page is (the global
//! translation directory) stays in DRAM. This module keeps the bookkeeping; the simulator
//! times the flash work it asks for (a translation read per miss, a read-modify-program per
//! dirty eviction, batched per translation page).

use lru::LruCache;
use rustc_hash::FxBuildHasher;

/// Bytes of one entry of a translation page: a physical page number and a written-sectors
/// bitmap, as MQSim sizes it (`GTD_entry_size`, `Address_Mapping_Unit_Page_Level.cpp`):
/// ⌈(log2(physical pages) + sectors per page) / 8⌉.
pub fn translation_entry_bytes(physical_pages: u64, page_size: u32) -> u32 {
    let bits = (physical_pages.max(2) as f64).log2().ceil() + f64::from(page_size / 512);
    (bits / 8.0).ceil() as u32
}

/// Bytes of one cached entry: a logical and a physical page number and the bitmap, as MQSim
/// sizes it (`CMT_entry_size`): ⌈(2·log2(physical pages) + sectors per page) / 8⌉.
pub fn cached_entry_bytes(physical_pages: u64, page_size: u32) -> u32 {
    let bits = 2.0 * (physical_pages.max(2) as f64).log2().ceil() + f64::from(page_size / 512);
    (bits / 8.0).ceil() as u32
}

/// Counters of the cache (the summary's `mapping_cache`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CacheCounts {
    /// Lookups of host reads that hit.
    pub read_hits: u64,
    /// Lookups of host reads that missed.
    pub read_misses: u64,
    /// Lookups of host writes that hit.
    pub write_hits: u64,
    /// Lookups of host writes that missed.
    pub write_misses: u64,
    /// Dirty evictions (each writes one translation page back, with every dirty entry of it).
    pub writebacks: u64,
    /// Dirty entries cleaned by those writebacks.
    pub entries_written_back: u64,
    /// Dirty entries a power loss took (rebuilt by scanning the pages' spare areas).
    pub lost_dirty: u64,
}

/// The cache and the flash copy of the mapping it stands for.
#[derive(Debug)]
pub struct MappingCache {
    /// Cached logical pages, least recently used last; the value is "dirty".
    lru: LruCache<u32, bool, FxBuildHasher>,
    /// Entries per translation page.
    per_page: u32,
    /// Host logical pages (translation page `t` is logical page `host + t`).
    host: u32,
    /// Per translation page: its logical pages that became dirty while cached (some may have
    /// been cleaned or evicted since).
    dirty: rustc_hash::FxHashMap<u32, Vec<u32>>,
    /// Translation pages whose write-back is due (the simulator queues them).
    due: Vec<u32>,
    /// Per host logical page, the physical page its translation page in flash says (only with
    /// `--verify`: what `verify` compares against).
    flash_copy: Vec<u32>,
    /// Counters.
    pub counts: CacheCounts,
}

impl MappingCache {
    /// A cache of `entries` entries over `host` logical pages, `per_page` entries per
    /// translation page; `flash_copy` (with `--verify`) is the mapping the flash starts with.
    pub fn new(entries: u32, host: u32, per_page: u32, flash_copy: Vec<u32>) -> Self {
        let cap = std::num::NonZeroUsize::new(entries.max(1) as usize).expect("at least one");
        MappingCache {
            lru: LruCache::with_hasher(cap, FxBuildHasher),
            per_page: per_page.max(1),
            host,
            dirty: Default::default(),
            due: Vec::new(),
            flash_copy,
            counts: CacheCounts::default(),
        }
    }

    /// Translation pages covering the host logical pages.
    pub fn translation_pages(host: u32, per_page: u32) -> u32 {
        host.div_ceil(per_page.max(1))
    }

    /// The translation page holding `lpn`'s entry.
    #[inline]
    pub fn page_of(&self, lpn: u32) -> u32 {
        lpn / self.per_page
    }

    /// The logical page a translation page is stored as.
    #[inline]
    pub fn lpn_of_page(&self, t: u32) -> u32 {
        self.host + t
    }

    /// The translation page stored as logical page `tlpn`.
    #[inline]
    pub fn page_stored_as(&self, tlpn: u32) -> u32 {
        tlpn - self.host
    }

    /// Whether `lpn` is a translation page's logical page.
    #[inline]
    pub fn is_translation(&self, lpn: u32) -> bool {
        lpn >= self.host
    }

    /// Looks `lpn` up for a host read or write (`write`), counting it; a hit becomes the most
    /// recently used.
    pub fn touch(&mut self, lpn: u32, write: bool) -> bool {
        let hit = self.lru.get(&lpn).is_some();
        let c = &mut self.counts;
        match (write, hit) {
            (false, true) => c.read_hits += 1,
            (false, false) => c.read_misses += 1,
            (true, true) => c.write_hits += 1,
            (true, false) => c.write_misses += 1,
        }
        hit
    }

    /// Whether `lpn` is cached (no effect on recency).
    pub fn contains(&self, lpn: u32) -> bool {
        self.lru.contains(&lpn)
    }

    /// Caches `lpn` clean (its entry arrived from flash) unless it is cached already
    /// (`ppn_of`: where each page is now, for an entry evicted dirty).
    pub fn insert_clean(&mut self, lpn: u32, ppn_of: impl Fn(u32) -> u32) {
        if !self.lru.contains(&lpn) {
            self.insert(lpn, false, ppn_of);
        }
    }

    /// The mapping of host page `lpn` changed by a host write or trim: its entry is cached
    /// dirty (inserted if absent — the write looked it up first).
    pub fn host_update(&mut self, lpn: u32, ppn_of: impl Fn(u32) -> u32) {
        match self.lru.get_mut(&lpn) {
            Some(d) if !*d => {
                *d = true;
                self.note_dirty(lpn);
            }
            Some(_) => {}
            None => self.insert(lpn, true, ppn_of),
        }
    }

    /// GC or a migration moved host page `lpn` to `ppn`: a cached entry turns dirty; an
    /// uncached one is updated in its translation page at no flash cost (MQSim's GC updates its
    /// global mapping table directly; `Get_data_mapping_info_for_gc`).
    pub fn moved(&mut self, lpn: u32, ppn: u32) {
        if let Some(d) = self.lru.peek_mut(&lpn) {
            if !*d {
                *d = true;
                self.note_dirty(lpn);
            }
        } else if let Some(f) = self.flash_copy.get_mut(lpn as usize) {
            *f = ppn;
        }
    }

    /// Lists `lpn`, just turned dirty, under its translation page for the write-back.
    fn note_dirty(&mut self, lpn: u32) {
        self.dirty.entry(lpn / self.per_page).or_default().push(lpn);
    }

    /// Caches `lpn`, evicting the least recently used entry when full. An entry evicted dirty
    /// makes its translation page's write-back due, and the flash copy takes its location at
    /// once, as MQSim updates its global mapping table at eviction (`request_mapping_entry`):
    /// the controller holds the page until the program ends.
    fn insert(&mut self, lpn: u32, dirty: bool, ppn_of: impl Fn(u32) -> u32) {
        if let Some((old, was_dirty)) = self.lru.push(lpn, dirty) {
            if old != lpn && was_dirty {
                self.due.push(old / self.per_page);
                if let Some(f) = self.flash_copy.get_mut(old as usize) {
                    *f = ppn_of(old);
                }
            }
        }
        if dirty {
            self.note_dirty(lpn);
        }
    }

    /// A translation page whose write-back is due, if any.
    pub fn take_due(&mut self) -> Option<u32> {
        self.due.pop()
    }

    /// Writes translation page `t` back: every dirty entry of it still cached turns clean and
    /// the flash copy takes its current location (`ppn_of`). Returns the entries cleaned (the
    /// evicted one that made the write-back due was taken at eviction).
    pub fn write_back(&mut self, t: u32, ppn_of: impl Fn(u32) -> u32) -> u64 {
        let mut cleaned = 0;
        for lpn in self.dirty.remove(&t).unwrap_or_default() {
            if let Some(d) = self.lru.peek_mut(&lpn) {
                if *d {
                    *d = false;
                    cleaned += 1;
                    if let Some(f) = self.flash_copy.get_mut(lpn as usize) {
                        *f = ppn_of(lpn);
                    }
                }
            }
        }
        self.counts.writebacks += 1;
        self.counts.entries_written_back += cleaned;
        cleaned
    }

    /// A power loss: the cache is lost with its dirty entries (counted; their current
    /// locations are recovered by scanning the pages' spare areas, as a real FTL rebuilds
    /// them, so the flash copy takes them).
    pub fn power_loss(&mut self, ppn_of: impl Fn(u32) -> u32) {
        for (&lpn, &dirty) in self.lru.iter() {
            if dirty {
                self.counts.lost_dirty += 1;
                if let Some(f) = self.flash_copy.get_mut(lpn as usize) {
                    *f = ppn_of(lpn);
                }
            }
        }
        self.lru.clear();
        self.dirty.clear();
        self.due.clear();
    }

    /// Entries it holds at most.
    pub fn capacity(&self) -> u32 {
        self.lru.cap().get() as u32
    }

    /// Entries per translation page.
    pub fn per_page(&self) -> u32 {
        self.per_page
    }

    /// Whether a write-back is due.
    pub fn has_due(&self) -> bool {
        !self.due.is_empty()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.lru.is_empty()
    }

    /// With `--verify`: the host page whose mapping neither a dirty cached entry nor the flash
    /// copy holds (`ppn_of`: the true location), if any.
    pub fn lost_update(&self, ppn_of: impl Fn(u32) -> u32) -> Option<u32> {
        (0..self.flash_copy.len() as u32).find(|&lpn| {
            let dirty = self.lru.peek(&lpn).copied().unwrap_or(false);
            !dirty && self.flash_copy[lpn as usize] != ppn_of(lpn)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_sizes_follow_mqsim() {
        // MQSim's shipped drive: 2^26 pages of 8 KiB (16 sectors): 26 + 16 = 42 bits → 6 B in
        // a translation page, 2·26 + 16 = 68 bits → 9 B cached; 8192 / 6 = 1365 per page.
        assert_eq!(translation_entry_bytes(1 << 26, 8192), 6);
        assert_eq!(cached_entry_bytes(1 << 26, 8192), 9);
    }

    #[test]
    fn lru_evicts_the_least_recent_and_dirty_evictions_write_their_page_back() {
        // Pages 1, 5, 9, 12, 13 moved to lpn + 100; the flash says they are where they were.
        let truth = |lpn: u32| {
            if [1, 5, 9, 12, 13].contains(&lpn) {
                lpn + 100
            } else {
                lpn
            }
        };
        let mut c = MappingCache::new(2, 16, 4, (0..16).collect());
        c.insert_clean(1, truth);
        c.host_update(5, truth); // page 1, dirty
        assert!(c.touch(1, false)); // 1 is now the most recent
        c.insert_clean(9, truth); // evicts 5 (dirty): page 1 due, 5 in the flash copy
        assert!(!c.contains(5));
        assert_eq!(c.take_due(), Some(1));
        assert_eq!(c.take_due(), None);
        assert_eq!(c.write_back(1, truth), 0, "5 was taken at its eviction");
        assert_eq!(c.counts.writebacks, 1);
        // A clean eviction asks for nothing.
        c.insert_clean(13, truth);
        assert_eq!(c.take_due(), None);
        // Dirty entries of one page go back together.
        c.host_update(12, truth);
        c.host_update(13, truth);
        assert_eq!(c.write_back(3, truth), 2);
        assert!(c.contains(12) && c.contains(13));
        // 1 and 9 were cached clean while they had moved: the check names the first.
        assert_eq!(c.lost_update(truth), Some(1));
    }

    #[test]
    fn gc_moves_dirty_a_cached_entry_and_update_the_flash_copy_of_others() {
        let mut c = MappingCache::new(4, 8, 4, vec![0; 8]);
        c.insert_clean(2, |_| 0);
        c.moved(2, 40);
        c.moved(3, 41);
        // 2 is dirty in the cache, 3 is right in flash; the others are wrong.
        let truth = |lpn: u32| match lpn {
            2 => 40,
            3 => 41,
            _ => 0,
        };
        assert_eq!(c.lost_update(truth), None);
        c.power_loss(truth);
        assert_eq!(c.counts.lost_dirty, 1);
        assert!(c.is_empty());
        assert_eq!(c.lost_update(truth), None, "recovered by the scan");
    }
}
