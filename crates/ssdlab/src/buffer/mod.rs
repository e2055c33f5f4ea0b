//! The device-side DRAM buffer: an LRU, write-back page cache that counts read and write hits
//! per cached page (hire.txt §3.1's hotness identifier). Its insertions, hits and evictions are
//! reported to the caller, which decides what an eviction costs.

use rustc_hash::FxHashMap;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Slot {
    lpn: u32,
    dirty: bool,
    reads: u32,
    writes: u32,
    /// 512-byte sectors written while cached, one bit each ([`LruBuffer::add_sectors`]).
    sectors: u64,
    prev: u32,
    next: u32,
}

/// A page leaving the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Logical page.
    pub lpn: u32,
    /// Holds data not yet on flash.
    pub dirty: bool,
    /// Read references while cached (C_r), counting the first.
    pub reads: u32,
    /// Write references while cached (C_w), counting the first.
    pub writes: u32,
    /// Sectors written while cached, one bit each (0 if none were recorded).
    pub sectors: u64,
}

/// Hotness class of an evicted page (hire.txt Fig. 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hotness {
    /// C_r / (C_r + C_w) > w.
    ReadHot,
    /// C_w / (C_r + C_w) > w.
    WriteHot,
    /// Neither.
    Mixed,
}

impl Hotness {
    /// Every class, in index order.
    pub const ALL: [Hotness; 3] = [Hotness::ReadHot, Hotness::WriteHot, Hotness::Mixed];
}

impl Evicted {
    /// The class of this page for threshold `w`.
    pub fn hotness(&self, w: f64) -> Hotness {
        let total = f64::from(self.reads + self.writes);
        if total > 0.0 && f64::from(self.reads) / total > w {
            Hotness::ReadHot
        } else if total > 0.0 && f64::from(self.writes) / total > w {
            Hotness::WriteHot
        } else {
            Hotness::Mixed
        }
    }
}

/// An LRU buffer of logical pages with per-page read/write reference counts.
#[derive(Debug, Clone)]
pub struct LruBuffer {
    capacity: u32,
    index: FxHashMap<u32, u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl LruBuffer {
    /// A buffer of `capacity` pages (> 0).
    pub fn new(capacity: u32) -> Self {
        LruBuffer {
            capacity,
            index: FxHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// Raises the capacity to `capacity` pages (never lowers it).
    pub fn grow(&mut self, capacity: u32) {
        self.capacity = self.capacity.max(capacity);
    }

    /// Pages cached.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether `lpn` is cached with data not yet on flash.
    pub fn is_dirty(&self, lpn: u32) -> bool {
        self.index
            .get(&lpn)
            .is_some_and(|&i| self.slots[i as usize].dirty)
    }

    /// Whether `lpn` is cached.
    pub fn contains(&self, lpn: u32) -> bool {
        self.index.contains_key(&lpn)
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = (self.slots[i as usize].prev, self.slots[i as usize].next);
        if prev == NIL {
            self.head = next
        } else {
            self.slots[prev as usize].next = next
        }
        if next == NIL {
            self.tail = prev
        } else {
            self.slots[next as usize].prev = prev
        }
    }

    fn push_front(&mut self, i: u32) {
        self.slots[i as usize].prev = NIL;
        self.slots[i as usize].next = self.head;
        if self.head != NIL {
            self.slots[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// A reference to a cached page: counts it and moves it to the MRU position. Returns false
    /// if the page is not cached.
    pub fn touch(&mut self, lpn: u32, write: bool) -> bool {
        let Some(&i) = self.index.get(&lpn) else {
            return false;
        };
        let s = &mut self.slots[i as usize];
        if write {
            s.writes += 1;
            s.dirty = true;
        } else {
            s.reads += 1;
        }
        self.unlink(i);
        self.push_front(i);
        true
    }

    /// A read of `lpn`: whether it is cached. A cache counts the read and moves the page to
    /// the MRU position (as [`LruBuffer::touch`]); a write buffer (`counts_reads` false) only
    /// serves it, its order following writes alone.
    pub fn read_hit(&mut self, lpn: u32, counts_reads: bool) -> bool {
        if counts_reads {
            self.touch(lpn, false)
        } else {
            self.contains(lpn)
        }
    }

    /// Forgets a page (no eviction is reported); returns whether it was cached.
    pub fn remove(&mut self, lpn: u32) -> bool {
        let Some(i) = self.index.remove(&lpn) else {
            return false;
        };
        self.unlink(i);
        self.free.push(i);
        true
    }

    /// Caches a page not yet cached (first reference, counted), evicting the LRU page if full.
    pub fn insert(&mut self, lpn: u32, write: bool) -> Option<Evicted> {
        debug_assert!(!self.contains(lpn));
        let evicted = if self.index.len() as u32 >= self.capacity {
            self.evict_lru()
        } else {
            None
        };
        let slot = Slot {
            lpn,
            dirty: write,
            reads: u32::from(!write),
            writes: u32::from(write),
            sectors: 0,
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(lpn, i);
        self.push_front(i);
        evicted
    }

    /// Records that a write to the cached page `lpn` covered these sectors (one bit each);
    /// they stay recorded until the page leaves the buffer.
    pub fn add_sectors(&mut self, lpn: u32, sectors: u64) {
        if let Some(&i) = self.index.get(&lpn) {
            self.slots[i as usize].sectors |= sectors;
        }
    }

    /// Clears a cached page's dirty bit (its data reached flash another way); returns whether
    /// it was dirty.
    pub fn clean(&mut self, lpn: u32) -> bool {
        match self.index.get(&lpn) {
            Some(&i) => std::mem::replace(&mut self.slots[i as usize].dirty, false),
            None => false,
        }
    }

    /// The dirty pages, least recently used first.
    pub fn dirty_pages(&self) -> Vec<u32> {
        let mut v = Vec::new();
        let mut i = self.tail;
        while i != NIL {
            let s = &self.slots[i as usize];
            if s.dirty {
                v.push(s.lpn);
            }
            i = s.prev;
        }
        v
    }

    /// Drops every page (a restart of a volatile cache).
    pub fn clear(&mut self) {
        *self = LruBuffer::new(self.capacity);
    }

    fn evict_lru(&mut self) -> Option<Evicted> {
        let i = self.tail;
        if i == NIL {
            return None;
        }
        self.unlink(i);
        self.free.push(i);
        let s = &self.slots[i as usize];
        self.index.remove(&s.lpn);
        Some(Evicted {
            lpn: s.lpn,
            dirty: s.dirty,
            reads: s.reads,
            writes: s.writes,
            sectors: s.sectors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evicted_page_reports_the_sectors_written_while_it_was_cached() {
        let mut b = LruBuffer::new(1);
        assert_eq!(b.insert(7, true), None);
        b.add_sectors(7, 0b0011);
        b.touch(7, true);
        b.add_sectors(7, 0b0110);
        b.add_sectors(8, 0b1000); // not cached: ignored
        let e = b.insert(8, true).expect("evicts page 7");
        assert_eq!((e.lpn, e.dirty, e.writes, e.sectors), (7, true, 2, 0b0111));
        // A page cached anew starts with none.
        assert_eq!(b.insert(7, true).map(|e| e.sectors), Some(0));
    }

    #[test]
    fn lru_order_counts_and_eviction() {
        let mut b = LruBuffer::new(2);
        assert_eq!(b.insert(1, true), None);
        assert_eq!(b.insert(2, false), None);
        assert!(b.touch(1, false)); // 1 is now MRU
        let e = b.insert(3, false).unwrap();
        assert_eq!(
            e,
            Evicted {
                lpn: 2,
                dirty: false,
                reads: 1,
                writes: 0,
                sectors: 0
            }
        );
        let e = b.insert(4, false).unwrap();
        assert_eq!(
            e,
            Evicted {
                lpn: 1,
                dirty: true,
                reads: 1,
                writes: 1,
                sectors: 0
            }
        );
        assert_eq!(b.len(), 2);
        assert!(!b.touch(1, true));
    }

    #[test]
    fn hotness_at_the_boundaries_of_w() {
        let e = |reads, writes| Evicted {
            lpn: 0,
            dirty: true,
            reads,
            writes,
            sectors: 0,
        };
        // 19 reads of 20 is exactly 95 %: not above w, so mixed; 20 of 21 is read-hot.
        assert_eq!(e(19, 1).hotness(0.95), Hotness::Mixed);
        assert_eq!(e(20, 1).hotness(0.95), Hotness::ReadHot);
        assert_eq!(e(1, 19).hotness(0.95), Hotness::Mixed);
        assert_eq!(e(1, 20).hotness(0.95), Hotness::WriteHot);
        assert_eq!(e(0, 1).hotness(0.95), Hotness::WriteHot);
        assert_eq!(e(1, 0).hotness(0.95), Hotness::ReadHot);
        assert_eq!(e(1, 1).hotness(0.95), Hotness::Mixed);
    }
}
