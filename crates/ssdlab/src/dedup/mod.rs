//! Inline deduplication above the FTL (deduphr.txt §2.2, §3.3).
//!
//! Indirection, not a reverse map: every host logical page (LPN) points to a *content id*
//! (CID) and the FTL maps CIDs, not LPNs, to physical pages. A content is programmed once,
//! when its CID is created; a duplicate write only points its LPN at the existing CID and
//! raises the CID's reference count. GC moves a CID's page and updates one mapping entry, so
//! every LPN sharing it follows without a reverse map. When a count reaches 0 the CID is
//! trimmed in the FTL (its page becomes invalid) and, once no program of it is in flight,
//! recycled.
//!
//! Memory: 4 B per LPN (its CID) + 12 B per CID (count, 64-bit fingerprint) + the fingerprint
//! index (a hash map entry per live shared content, ~16 B plus load). Fingerprints are the
//! trace's MD5 truncated to 64 bits (a collision among 10⁹ contents has probability ~3·10⁻²).
//!
//! Data that was on the drive before the trace (preconditioning) has unknown content: LPN i
//! starts on CID i with count 1 and is never matched by a fingerprint.

use crate::ftl::mapping::OutOfMemory;
use rustc_hash::FxHashMap;

/// Fingerprint of content that is never deduplicated (pre-existing data, pages of traces
/// without content hashes).
const UNIQUE: u64 = u64::MAX;

/// The fingerprint of page `k` of a request whose content hash is `content` (its first page's):
/// the hash itself for the first page, a mix of it with the page index for the others.
pub fn page_fingerprint(content: u128, k: u64) -> u64 {
    let h = (content as u64) ^ ((content >> 64) as u64);
    if k == 0 {
        return h.min(UNIQUE - 1);
    }
    // SplitMix64 finaliser over (h, k): distinct pages of one request get unrelated prints.
    let mut z = h ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).min(UNIQUE - 1)
}

/// What a host page write did to the dedup state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The CID the page now points to.
    pub cid: u32,
    /// Whether the content existed already (no flash program needed).
    pub duplicate: bool,
    /// The CID's reference count after the write.
    pub count: u32,
    /// The CID the page pointed to before, with its count after the write, if it changed.
    pub released: Option<(u32, u32)>,
}

/// Counters of the dedup layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DedupStats {
    /// Host page writes seen.
    pub page_writes: u64,
    /// Of them, duplicates of a live content (no program).
    pub duplicate_pages: u64,
    /// Contents whose count reached 0.
    pub contents_dropped: u64,
    /// Most CIDs live at once.
    pub peak_contents: u64,
    /// Host read pages by the reference count of the content read: 1, 2, 3–5, > 5
    /// (deduphr.txt Fig. 4).
    pub reads_by_refcount: [u64; 4],
}

/// The bucket of a reference count in [`DedupStats::reads_by_refcount`].
pub fn refcount_bucket(count: u32) -> usize {
    match count {
        0 | 1 => 0,
        2 => 1,
        3..=5 => 2,
        _ => 3,
    }
}

/// The dedup layer's state.
#[derive(Debug, Clone)]
pub struct Dedup {
    lpn_cid: Vec<u32>,
    refs: Vec<u32>,
    prints: Vec<u64>,
    index: FxHashMap<u64, u32>,
    free: Vec<u32>,
    /// Logical ids other layers took (TTFlash parity): never contents.
    foreign: Vec<u32>,
    live: u64,
    /// With `--verify`: the fingerprint each LPN was last written with.
    expected: Option<FxHashMap<u32, u64>>,
    /// Counters.
    pub stats: DedupStats,
}

impl Dedup {
    /// `logical` host pages, each on its own pre-existing content. `verify` keeps what every
    /// LPN was last written with, to check reads.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the tables cannot be allocated.
    pub fn new(logical: u32, verify: bool) -> Result<Self, OutOfMemory> {
        let n = logical as usize;
        let oom = |_| OutOfMemory { bytes: n * 16 };
        let mut lpn_cid = Vec::new();
        lpn_cid.try_reserve_exact(n).map_err(oom)?;
        lpn_cid.extend(0..logical);
        let mut refs = Vec::new();
        refs.try_reserve_exact(n).map_err(oom)?;
        refs.resize(n, 1);
        let mut prints = Vec::new();
        prints.try_reserve_exact(n).map_err(oom)?;
        prints.resize(n, UNIQUE);
        Ok(Dedup {
            lpn_cid,
            refs,
            prints,
            index: FxHashMap::default(),
            free: Vec::new(),
            foreign: Vec::new(),
            live: u64::from(logical),
            expected: verify.then(FxHashMap::default),
            stats: DedupStats {
                peak_contents: u64::from(logical),
                ..DedupStats::default()
            },
        })
    }

    /// Host logical pages.
    pub fn logical_pages(&self) -> u32 {
        self.lpn_cid.len() as u32
    }

    /// The CID `lpn` points to.
    #[inline]
    pub fn cid(&self, lpn: u32) -> u32 {
        self.lpn_cid[lpn as usize]
    }

    /// A host read of `lpn`: counts it by its content's reference count; returns the CID.
    pub fn read(&mut self, lpn: u32) -> u32 {
        let cid = self.cid(lpn);
        self.stats.reads_by_refcount[refcount_bucket(self.refs[cid as usize])] += 1;
        cid
    }

    /// Live contents written with a fingerprint (pre-existing data and pages without one left
    /// out) by reference count, bucketed as [`DedupStats::reads_by_refcount`].
    pub fn contents_by_refcount(&self) -> [u64; 4] {
        let mut b = [0u64; 4];
        for (&r, _) in self
            .refs
            .iter()
            .zip(&self.prints)
            .filter(|(&r, &p)| r > 0 && p != UNIQUE)
        {
            b[refcount_bucket(r)] += 1;
        }
        b
    }

    /// Reference count of `cid`.
    pub fn count(&self, cid: u32) -> u32 {
        self.refs[cid as usize]
    }

    /// CIDs in use (live or awaiting recycling) plus free ones: the FTL's namespace size.
    pub fn contents(&self) -> u32 {
        self.refs.len() as u32
    }

    /// Live contents now.
    pub fn live_contents(&self) -> u64 {
        self.live
    }

    /// A host write of `lpn` with fingerprint `print` (`None`: content unknown, never a
    /// duplicate). `new_cid` supplies a fresh CID when no recycled one is free (the caller
    /// grows the FTL's namespace with it).
    ///
    /// # Errors
    /// [`OutOfMemory`] if a new CID cannot be allocated.
    pub fn write(
        &mut self,
        lpn: u32,
        print: Option<u64>,
        new_cid: &mut dyn FnMut() -> Result<u32, OutOfMemory>,
    ) -> Result<WriteOutcome, OutOfMemory> {
        self.stats.page_writes += 1;
        let print = print.filter(|&p| p != UNIQUE);
        if let Some(e) = self.expected.as_mut() {
            e.insert(lpn, print.unwrap_or(UNIQUE));
        }
        let old = self.lpn_cid[lpn as usize];
        let existing = print.and_then(|p| self.index.get(&p).copied());
        if existing == Some(old) {
            // Rewriting the content the page already has.
            self.stats.duplicate_pages += 1;
            return Ok(WriteOutcome {
                cid: old,
                duplicate: true,
                count: self.refs[old as usize],
                released: None,
            });
        }
        let released = Some((old, self.release(old)));
        let (cid, duplicate) = match existing {
            Some(c) => {
                self.refs[c as usize] += 1;
                self.stats.duplicate_pages += 1;
                (c, true)
            }
            None => {
                let c = match self.free.pop() {
                    Some(c) => c,
                    None => {
                        // Other layers may take logical ids too (TTFlash parity): the
                        // tables skip theirs.
                        let c = new_cid()?;
                        let grow = c as usize + 1 - self.refs.len();
                        self.refs
                            .try_reserve(grow)
                            .and_then(|()| self.prints.try_reserve(grow))
                            .map_err(|_| OutOfMemory {
                                bytes: (c as usize + 1) * 12,
                            })?;
                        self.foreign.extend(self.refs.len() as u32..c);
                        self.refs.resize(c as usize + 1, 0);
                        self.prints.resize(c as usize + 1, UNIQUE);
                        c
                    }
                };
                self.refs[c as usize] = 1;
                self.prints[c as usize] = print.unwrap_or(UNIQUE);
                if let Some(p) = print {
                    self.index.insert(p, c);
                }
                self.live += 1;
                self.stats.peak_contents = self.stats.peak_contents.max(self.live);
                (c, false)
            }
        };
        self.lpn_cid[lpn as usize] = cid;
        Ok(WriteOutcome {
            cid,
            duplicate,
            count: self.refs[cid as usize],
            released,
        })
    }

    /// One reference to `cid` fewer; at 0 it leaves the index. Returns the count left.
    fn release(&mut self, cid: u32) -> u32 {
        let r = &mut self.refs[cid as usize];
        *r -= 1;
        if *r == 0 {
            let p = self.prints[cid as usize];
            if p != UNIQUE && self.index.get(&p) == Some(&cid) {
                self.index.remove(&p);
            }
            self.live -= 1;
            self.stats.contents_dropped += 1;
        }
        *r
    }

    /// A content at count 0 has been trimmed and none of its programs is in flight: its CID
    /// can be reused.
    pub fn recycle(&mut self, cid: u32) {
        debug_assert_eq!(self.refs[cid as usize], 0);
        self.free.push(cid);
    }

    /// With `--verify`: the content `lpn` points to is the one last written to it.
    ///
    /// # Errors
    /// A message naming the page and both fingerprints.
    pub fn check_read(&self, lpn: u32) -> Result<(), String> {
        let Some(e) = &self.expected else {
            return Ok(());
        };
        let cid = self.cid(lpn);
        match e.get(&lpn) {
            None if cid == lpn && self.prints[cid as usize] == UNIQUE => Ok(()),
            None => Err(format!(
                "lpn {lpn} was never written but points to content id {cid}, not its own data"
            )),
            Some(&want) if want == UNIQUE && self.prints[cid as usize] == UNIQUE => {
                if self.refs[cid as usize] == 1 {
                    Ok(())
                } else {
                    Err(format!("lpn {lpn} holds unique data but its content id {cid} has {} references", self.refs[cid as usize]))
                }
            }
            Some(&want) if self.prints[cid as usize] == want => Ok(()),
            Some(&want) => Err(format!(
                "lpn {lpn} was last written with fingerprint {want:016x} but points to content id {cid} holding {:016x}",
                self.prints[cid as usize]
            )),
        }
    }

    /// Structural check: counts equal the number of LPNs pointing at each CID, the index maps
    /// every fingerprint to a live CID holding it, live contents are counted right, and every
    /// CID at 0 is free or `awaiting(cid)` (trim pending behind an in-flight program).
    ///
    /// # Errors
    /// A message naming the first violation.
    pub fn check(&self, awaiting: &dyn Fn(u32) -> bool) -> Result<(), String> {
        let mut counts = vec![0u32; self.refs.len()];
        for &c in &self.lpn_cid {
            counts[c as usize] += 1;
        }
        for (cid, (&want, &have)) in counts.iter().zip(&self.refs).enumerate() {
            if want != have {
                return Err(format!(
                    "content id {cid}: reference count {have} but {want} logical pages point to it"
                ));
            }
        }
        for (&p, &cid) in &self.index {
            if self.refs[cid as usize] == 0 || self.prints[cid as usize] != p {
                return Err(format!("dedup index maps fingerprint {p:016x} to content id {cid}, which holds {:016x} with {} references", self.prints[cid as usize], self.refs[cid as usize]));
            }
        }
        let live = self.refs.iter().filter(|&&r| r > 0).count() as u64;
        if live != self.live {
            return Err(format!(
                "{live} contents have references but {} are counted live",
                self.live
            ));
        }
        let mut free = vec![false; self.refs.len()];
        for &c in self.free.iter().chain(&self.foreign) {
            free[c as usize] = true;
        }
        for (cid, &r) in self.refs.iter().enumerate() {
            if r == 0 && !free[cid] && !awaiting(cid as u32) {
                return Err(format!(
                    "content id {cid} has no references but is neither free nor being trimmed"
                ));
            }
            if r > 0 && free[cid] {
                return Err(format!(
                    "content id {cid} is on the free list with {r} references"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grow(d: &Dedup) -> impl FnMut() -> Result<u32, OutOfMemory> {
        let mut next = d.contents();
        move || {
            next += 1;
            Ok(next - 1)
        }
    }

    #[test]
    fn duplicates_share_a_content_and_counts_follow_overwrites() {
        let mut d = Dedup::new(8, true).unwrap();
        let mut g = grow(&d);
        let a = d.write(0, Some(11), &mut g).unwrap();
        assert!(!a.duplicate);
        assert_eq!(a.cid, 8, "a fresh id beyond the 8 pre-existing contents");
        assert_eq!(
            a.released,
            Some((0, 0)),
            "the pre-existing content of lpn 0 dies"
        );
        let b = d.write(1, Some(11), &mut g).unwrap();
        assert!(b.duplicate);
        assert_eq!((b.cid, b.count), (8, 2));
        let c = d.write(2, Some(11), &mut g).unwrap();
        assert_eq!(c.count, 3, "threshold crossing up");
        // Overwriting one sharer with other content drops the shared count to 2, then 1.
        let e = d.write(1, Some(22), &mut g).unwrap();
        assert_eq!(e.released, Some((8, 2)));
        let f = d.write(2, None, &mut g).unwrap();
        assert_eq!(f.released, Some((8, 1)), "threshold crossing down to 1");
        for l in 0..3 {
            d.check_read(l).unwrap();
        }
        d.recycle(0);
        d.recycle(1);
        d.recycle(2);
        d.check(&|_| false).unwrap();
        assert_eq!(d.stats.duplicate_pages, 2);
        // Rewriting the same content is a duplicate with no count change.
        let same = d.write(0, Some(11), &mut g).unwrap();
        assert!(same.duplicate && same.released.is_none() && same.count == 1);
    }

    #[test]
    fn a_dead_content_leaves_the_index_and_its_id_is_reused() {
        let mut d = Dedup::new(2, false).unwrap();
        let mut g = grow(&d);
        let a = d.write(0, Some(5), &mut g).unwrap();
        assert_eq!(a.cid, 2);
        d.recycle(0);
        let b = d.write(0, Some(6), &mut g).unwrap();
        assert_eq!(b.released, Some((2, 0)));
        assert_eq!(b.cid, 0, "the recycled id");
        d.recycle(2);
        // Fingerprint 5 is gone: writing it again is a new content, on the recycled id 2.
        let c = d.write(1, Some(5), &mut g).unwrap();
        assert!(!c.duplicate);
        assert_eq!(c.cid, 2);
        assert!(d.check(&|_| false).unwrap_err().contains("content id 1"));
        d.recycle(1);
        d.check(&|_| false).unwrap();
    }

    #[test]
    fn check_catches_a_wrong_count() {
        let mut d = Dedup::new(4, true).unwrap();
        let mut g = grow(&d);
        d.write(0, Some(1), &mut g).unwrap();
        d.refs[4] = 2;
        assert!(d
            .check(&|c| c == 0)
            .unwrap_err()
            .contains("reference count 2"));
    }

    #[test]
    fn page_prints_differ_within_a_request() {
        let c = 0x88b9_3b62_8d84_0821_8602_6d9d_a044_f173u128;
        let p: Vec<u64> = (0..4).map(|k| page_fingerprint(c, k)).collect();
        assert_eq!(p[0], (c as u64) ^ ((c >> 64) as u64));
        let set: std::collections::HashSet<_> = p.iter().collect();
        assert_eq!(set.len(), 4);
        assert!(p.iter().all(|&x| x != UNIQUE));
    }
}
