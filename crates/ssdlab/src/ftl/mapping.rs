//! Page-level mapping with versions.
//!
//! Two `u32` tables: per logical page its physical page, per physical page its logical page
//! (if valid): 4 bytes per page each side. A version counts the host's writes of a logical
//! page; versions order writes of one page that finish out of order (the newer one becomes
//! the mapping), tell a never-written page from a trimmed one, and let `--verify` check every
//! read returns the newest version. How they are kept, [`VersionTables`]:
//!
//! - **Full**: each table entry is followed by a version (the newest written, per logical page;
//!   the one held, per physical page), sharing the entry's cache line: 8 bytes per page each
//!   side. Kept with `--verify` (which checks every read against them) or `--full-versions`.
//! - **Sparse**: no per-page version. A bit per logical page says whether the host ever wrote
//!   it, and a small record is kept only for a page whose versions say more than that bit:
//!   from its next write until no program of it is in flight and its mapped version is its
//!   newest ([`Mapping::program_done`] of its last program drops it). Its versions count from
//!   that record's creation, so they differ from the full tables' numbers but every comparison
//!   the core makes between them comes out the same; a property test runs both and compares
//!   the results. A version taken from a record must not be kept past the record's end: the
//!   core keeps one only in programs in flight, which keep the record; a scheme that keeps
//!   one longer pins the page ([`Mapping::pin`]) first.
//!
//! With either kind, the same per-page record counts the page's programs in flight (the
//! controller holds their data: reads of the page wait for or are served from them).
//!
//! The file stays whole past 500 lines because both kinds of tables sit behind every accessor:
//! a reader checks each method's two branches side by side, and its tests compare them.

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Marker for "no page".
pub const NONE: u32 = u32::MAX;

/// The mapping tables do not fit in memory.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {bytes} bytes for the mapping tables of this geometry; use a smaller drive (geometry.*)")]
pub struct OutOfMemory {
    /// Bytes requested.
    pub bytes: usize,
}

/// How the mapping keeps versions (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionTables {
    /// A version beside every entry of both tables (8 B per page each side).
    Full,
    /// Only a written bit per logical page and records of pages in flight (4 B per page).
    Sparse,
}

impl VersionTables {
    /// Full tables when asked for (`--verify`, `--full-versions`), else sparse ones.
    pub fn kept(full: bool) -> Self {
        if full {
            VersionTables::Full
        } else {
            VersionTables::Sparse
        }
    }
    /// `u32`s per table entry.
    pub fn stride(self) -> usize {
        match self {
            VersionTables::Full => 2,
            VersionTables::Sparse => 1,
        }
    }
    /// Bytes of the mapping tables for `logical` logical and `physical` physical pages.
    pub fn bytes(self, logical: u64, physical: u64) -> u64 {
        let entries = 4 * self.stride() as u64 * (logical + physical);
        match self {
            VersionTables::Full => entries,
            VersionTables::Sparse => entries + logical.div_ceil(8),
        }
    }
}

/// `u32`s from which a table is first written in parallel: 16 MiB.
const PARALLEL_TOUCH: usize = 1 << 22;

/// A table of `n` entries of `stride` (1 or 2) `u32`s, each `[NONE]` or `[NONE, 0]`.
fn filled(n: usize, stride: usize) -> Result<Vec<u32>, OutOfMemory> {
    let len = n * stride;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| OutOfMemory { bytes: len * 4 })?;
    advise_huge_pages(v.spare_capacity_mut());
    // An entry's first `u32` is NONE, a version after it 0. A large table is written in
    // parallel: the kernel zeroes each page on the thread that first touches it, which
    // dominates building a large drive's tables (huge pages especially). A small one is not
    // worth starting the thread pool for.
    let write = |chunk: &mut [std::mem::MaybeUninit<u32>]| match stride {
        1 => chunk.iter_mut().for_each(|entry| {
            entry.write(NONE);
        }),
        _ => chunk.chunks_exact_mut(2).for_each(|entry| {
            entry[0].write(NONE);
            entry[1].write(0);
        }),
    };
    let spare = &mut v.spare_capacity_mut()[..len];
    if len >= PARALLEL_TOUCH {
        // Chunks of whole entries (the stride divides the chunk length).
        spare.par_chunks_mut(1 << 16).for_each(write);
    } else {
        write(spare);
    }
    // SAFETY: the capacity is at least `len` and every one of the first `len` elements was
    // written just above (`stride` divides both `len` and the chunk length).
    unsafe { v.set_len(len) };
    Ok(v)
}

/// Asks the CPU to bring `x`'s cache line closer (no effect on the result; a no-op off x86-64).
#[inline]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no memory effect; `x` is a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(x).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks Linux to back a large table with transparent huge pages (where the system leaves
/// that to the program, `madvise` mode): page-mapping lookups are random, and with 4 KiB pages
/// most of them also miss the TLB. Call before the memory is first touched. No effect on
/// results; elsewhere a no-op.
fn advise_huge_pages<T>(memory: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let (start, len) = (memory.as_mut_ptr() as usize, std::mem::size_of_val(memory));
        let aligned = start.next_multiple_of(PAGE);
        if len < (2 << 20) + (aligned - start) {
            return;
        }
        // SAFETY: the range lies inside `memory`'s allocation, starts on a page boundary, and
        // MADV_HUGEPAGE only changes how the kernel backs it (its content is unaffected); a
        // failure (no THP support) is harmless and ignored.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                len - (aligned - start),
                libc::MADV_HUGEPAGE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = memory;
}

/// What the tables alone do not say about a logical page: the programs of it in flight and,
/// with sparse tables, its versions while they say more than its written bit.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    /// Programs of the page in flight (the controller holds their data).
    programs: u32,
    /// Newest version among them.
    in_flight: u32,
    /// Sparse tables: newest version written.
    newest: u32,
    /// Sparse tables: version of the mapped physical page (meaningful while it is mapped).
    mapped: u32,
    /// Versions of the page a scheme keeps to compare later ([`Mapping::pin`]).
    pins: u32,
}

impl Open {
    /// Whether the record says nothing the tables do not: no program in flight, no pin, and
    /// the mapped version is the newest (with full tables both stay 0) or the page is
    /// `unmapped`.
    fn closed(&self, unmapped: impl FnOnce() -> bool) -> bool {
        self.programs == 0 && self.pins == 0 && (self.newest == self.mapped || unmapped())
    }
}

/// One bit per logical page: the host wrote it at least once (sparse tables).
#[derive(Debug, Clone, Default)]
struct Written(Vec<u64>);

impl Written {
    fn get(&self, lpn: u32) -> bool {
        self.0[lpn as usize / 64] >> (lpn % 64) & 1 == 1
    }
    fn set(&mut self, lpn: u32) {
        self.0[lpn as usize / 64] |= 1 << (lpn % 64);
    }
    fn clear(&mut self, lpn: u32) {
        self.0[lpn as usize / 64] &= !(1 << (lpn % 64));
    }
}

/// Logical ↔ physical mapping and version tracking.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// Per logical page: physical page (with full tables, then the newest version written).
    logical: Vec<u32>,
    /// Per physical page: logical page if valid (with full tables, then the version held).
    physical: Vec<u32>,
    /// `u32`s per entry: 2 with full tables, 1 with sparse ones.
    stride: usize,
    /// Host logical pages: the first entries of `logical` (a mapping cache's translation
    /// pages follow them).
    host: u32,
    /// Pages with programs in flight or (sparse tables) versions beyond their written bit.
    open: FxHashMap<u32, Open>,
    /// With sparse tables, which pages were ever written; `None` with full ones.
    written: Option<Written>,
}

impl Mapping {
    /// An empty mapping for `logical` logical and `physical` physical pages.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the tables cannot be allocated (a huge geometry fails cleanly instead
    /// of aborting the process).
    pub fn new(logical: u32, physical: u32, tables: VersionTables) -> Result<Self, OutOfMemory> {
        Self::with_translation(logical, 0, physical, tables)
    }
    /// An empty mapping for `logical` host logical pages followed by `translation` pages of a
    /// mapping cache's translation table, and `physical` physical pages.
    ///
    /// # Errors
    /// [`OutOfMemory`] as [`Mapping::new`].
    pub fn with_translation(
        logical: u32,
        translation: u32,
        physical: u32,
        tables: VersionTables,
    ) -> Result<Self, OutOfMemory> {
        let all = logical as usize + translation as usize;
        let stride = tables.stride();
        let written = match tables {
            VersionTables::Full => None,
            VersionTables::Sparse => {
                let mut bits = Vec::new();
                bits.try_reserve_exact(all.div_ceil(64))
                    .map_err(|_| OutOfMemory { bytes: all / 8 })?;
                bits.resize(all.div_ceil(64), 0);
                Some(Written(bits))
            }
        };
        Ok(Mapping {
            logical: filled(all, stride)?,
            physical: filled(physical as usize, stride)?,
            stride,
            host: logical,
            open: FxHashMap::default(),
            written,
        })
    }
    /// Host logical pages (a mapping cache's translation pages are not counted).
    pub fn logical_pages(&self) -> u32 {
        self.host
    }
    /// Logical pages with the translation pages.
    pub fn all_logical_pages(&self) -> u32 {
        (self.logical.len() / self.stride) as u32
    }
    /// Physical page holding `lpn`, or [`NONE`].
    #[inline]
    pub fn ppn(&self, lpn: u32) -> u32 {
        self.logical[lpn as usize * self.stride]
    }
    /// Logical page stored at `ppn` if it is valid, else [`NONE`].
    #[inline]
    pub fn lpn(&self, ppn: u32) -> u32 {
        self.physical[ppn as usize * self.stride]
    }
    /// Hints the CPU to fetch `lpn`'s entry into cache, some work before it is looked up (a
    /// program when it starts, a request when it is read from the workload), so the lookup
    /// does not wait for memory.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        if let Some(entry) = self.logical.get(lpn as usize * self.stride) {
            prefetch(entry);
        }
        // Sparse tables: a write's new record starts from the page's written bit.
        if let Some(bits) = self
            .written
            .as_ref()
            .and_then(|w| w.0.get(lpn as usize / 64))
        {
            prefetch(bits);
        }
    }
    /// Hints the CPU to fetch the physical entry `lpn` maps to (its completion compares the
    /// version that page holds); call once `lpn`'s own entry is likely cached.
    #[inline]
    pub fn prefetch_mapped(&self, lpn: u32) {
        self.prefetch_physical(self.ppn(lpn));
    }
    /// Hints the CPU to fetch physical page `ppn`'s entry (none for [`NONE`]).
    #[inline]
    pub fn prefetch_physical(&self, ppn: u32) {
        if let Some(entry) = self.physical.get(ppn as usize * self.stride) {
            prefetch(entry);
        }
    }
    /// Whether `lpn`'s current data is at `ppn`; with `ppn` = [`NONE`], whether `lpn` was
    /// never written (its data is the drive's pre-existing content). A copy made from `ppn`
    /// becomes the mapping only while this holds.
    #[inline]
    pub fn is_at(&self, lpn: u32, ppn: u32) -> bool {
        if ppn == NONE {
            self.ppn(lpn) == NONE && self.newest(lpn) == 0
        } else {
            self.ppn(lpn) == ppn
        }
    }
    /// The version a read of `lpn` issued now must return at least, for `--verify` to check:
    /// the newest with full tables, 0 (nothing to check) with sparse ones, which do not
    /// keep the versions a read would be checked against.
    #[inline]
    pub fn read_version(&self, lpn: u32) -> u32 {
        match self.written {
            None => self.newest(lpn),
            Some(_) => 0,
        }
    }
    /// Newest version the host wrote for `lpn` (0 = never written).
    #[inline]
    pub fn newest(&self, lpn: u32) -> u32 {
        match &self.written {
            None => self.logical[lpn as usize * 2 + 1],
            // Without a record a written page's newest version is 1, an unwritten one's 0.
            Some(w) => self
                .open
                .get(&lpn)
                .filter(|o| o.newest > 0)
                .map_or(u32::from(w.get(lpn)), |o| o.newest),
        }
    }
    /// The version `ppn` holds for `--verify`'s bookkeeping (a copy of it programmed
    /// elsewhere records it): [`Mapping::held`] with full tables, 0 (nothing to check) with
    /// sparse ones.
    #[inline]
    pub fn verify_version(&self, ppn: u32) -> u32 {
        match self.written {
            None => self.held(ppn),
            Some(_) => 0,
        }
    }
    /// Version held by `ppn`.
    ///
    /// # Panics
    /// With sparse tables, which do not keep it (`--verify` keeps full tables).
    #[inline]
    pub fn held(&self, ppn: u32) -> u32 {
        assert!(
            self.written.is_none(),
            "the version a physical page holds is kept by full version tables only"
        );
        self.physical[ppn as usize * 2 + 1]
    }
    /// Registers a new host write of `lpn`; returns its version.
    pub fn next_version(&mut self, lpn: u32) -> u32 {
        let Some(w) = self.written.as_mut() else {
            let v = &mut self.logical[lpn as usize * 2 + 1];
            *v += 1;
            return *v;
        };
        let o = Self::record(&mut self.open, &self.logical, w, lpn);
        w.set(lpn);
        o.newest += 1;
        o.newest
    }
    /// `lpn`'s record with either kind of tables, created if it has none.
    #[inline]
    fn open_record(&mut self, lpn: u32) -> &mut Open {
        match self.written.as_ref() {
            None => self.open.entry(lpn).or_default(),
            Some(w) => Self::record(&mut self.open, &self.logical, w, lpn),
        }
    }
    /// `lpn`'s record, created if it has none; with sparse tables (`w`) a new record starts
    /// from what the written bit says.
    fn record<'a>(
        open: &'a mut FxHashMap<u32, Open>,
        logical: &[u32],
        w: &Written,
        lpn: u32,
    ) -> &'a mut Open {
        let o = open.entry(lpn).or_default();
        if o.newest == 0 && w.get(lpn) {
            // Without a record the newest and the mapped version are the written bit (an
            // unmapped page's mapped version is 0).
            o.newest = 1;
            o.mapped = u32::from(logical[lpn as usize] != NONE);
        }
        o
    }
    /// Sets the newest version of `lpn` back to `version`, one it had (a version the device
    /// received was lost: shadowgc.txt's dropped twin-shadow whose host copy died in a
    /// restart); 0 makes the page never written again.
    pub fn set_newest(&mut self, lpn: u32, version: u32) {
        let Some(w) = self.written.as_mut() else {
            self.logical[lpn as usize * 2 + 1] = version;
            return;
        };
        let o = Self::record(&mut self.open, &self.logical, w, lpn);
        o.newest = version;
        if version == 0 {
            w.clear(lpn);
        }
        self.release(lpn);
    }
    /// Keeps `lpn`'s versions comparable until [`Mapping::unpin`]: a scheme that keeps a
    /// version of the page (from [`Mapping::newest`] or [`Mapping::mapped_version`], taken
    /// after this call) to compare with later ones. Full tables keep every version anyway, but
    /// count pins too, so `--verify` runs can check a scheme releases each ([`Mapping::pins`]).
    pub fn pin(&mut self, lpn: u32) {
        self.open_record(lpn).pins += 1;
    }
    /// Ends one [`Mapping::pin`] of `lpn`.
    ///
    /// # Panics
    /// If `lpn` is not pinned.
    pub fn unpin(&mut self, lpn: u32) {
        let o = self.open.get_mut(&lpn).expect("a pinned page has a record");
        o.pins -= 1;
        self.release(lpn);
    }
    /// Pins held, over all pages.
    pub fn pins(&self) -> u64 {
        self.open.values().map(|o| u64::from(o.pins)).sum()
    }
    /// Records that `ppn` was programmed with `version` of some page (not yet mapped); kept by
    /// full tables only.
    pub fn programmed(&mut self, ppn: u32, version: u32) {
        if self.written.is_none() {
            self.physical[ppn as usize * 2 + 1] = version;
        }
    }
    /// Records that `dst` was programmed with a copy of `src`'s data; kept by full tables only.
    pub fn copied(&mut self, src: u32, dst: u32) {
        if self.written.is_none() {
            self.physical[dst as usize * 2 + 1] = self.physical[src as usize * 2 + 1];
        }
    }
    /// Points `lpn` at `ppn`; returns the previous physical page (now invalid) or [`NONE`].
    /// The version `ppn` holds is known to full tables ([`Mapping::programmed`]); sparse ones
    /// learn it from [`Mapping::supersedes`] when it changes.
    pub fn remap(&mut self, lpn: u32, ppn: u32) -> u32 {
        let s = self.stride;
        let old = self.logical[lpn as usize * s];
        if old != NONE {
            self.physical[old as usize * s] = NONE;
        }
        self.logical[lpn as usize * s] = ppn;
        self.physical[ppn as usize * s] = lpn;
        old
    }
    /// Whether `version` of `lpn` is newer than the mapped one (which it then becomes: the
    /// caller remaps `lpn` to the page that holds it).
    #[inline]
    pub fn supersedes(&mut self, lpn: u32, version: u32) -> bool {
        let Some(w) = self.written.as_ref() else {
            return version > self.mapped_version(lpn);
        };
        // An unmapped page's mapped version is 0.
        let ppn = self.ppn(lpn);
        let mapped = |v: u32| if ppn == NONE { 0 } else { v };
        match self.open.get_mut(&lpn).filter(|o| o.newest > 0) {
            Some(o) if version > mapped(o.mapped) => {
                o.mapped = version;
                true
            }
            Some(_) => false,
            None => version > mapped(u32::from(w.get(lpn))),
        }
    }
    /// A program of `version` of `lpn` is in flight: the controller holds its data.
    #[inline]
    pub fn program_started(&mut self, lpn: u32, version: u32) {
        let o = self.open_record(lpn);
        o.programs += 1;
        o.in_flight = o.in_flight.max(version);
    }
    /// One program of `lpn` in flight is done (committed or not); returns whether it was the
    /// last. The record goes once it says nothing the tables do not (with sparse tables: the
    /// mapped version is the newest, or the page is unmapped).
    #[inline]
    pub fn program_done(&mut self, lpn: u32) -> bool {
        let Entry::Occupied(mut e) = self.open.entry(lpn) else {
            return false;
        };
        let o = e.get_mut();
        o.programs -= 1;
        if o.programs > 0 {
            return false;
        }
        o.in_flight = 0;
        if o.closed(|| self.logical[lpn as usize * self.stride] == NONE) {
            e.remove();
        }
        true
    }
    /// Whether a program of `lpn` is in flight.
    #[inline]
    pub fn in_flight(&self, lpn: u32) -> bool {
        self.open.get(&lpn).is_some_and(|o| o.programs > 0)
    }
    /// The newest version of `lpn` among its programs in flight, if any.
    pub fn in_flight_version(&self, lpn: u32) -> Option<u32> {
        self.open
            .get(&lpn)
            .filter(|o| o.programs > 0)
            .map(|o| o.in_flight)
    }
    /// A write outside the simulation (a fill) just landed with no program of `lpn` in
    /// flight: sparse tables forget its record as [`Mapping::program_done`] would.
    pub fn release(&mut self, lpn: u32) {
        if let Entry::Occupied(e) = self.open.entry(lpn) {
            if e.get()
                .closed(|| self.logical[lpn as usize * self.stride] == NONE)
            {
                e.remove();
            }
        }
    }
    /// Unmaps `lpn` (a trim); returns the physical page it held (now invalid) or [`NONE`].
    pub fn unmap(&mut self, lpn: u32) -> u32 {
        let s = self.stride;
        let old = self.logical[lpn as usize * s];
        if old != NONE {
            self.physical[old as usize * s] = NONE;
        }
        self.logical[lpn as usize * s] = NONE;
        old
    }
    /// Adds one logical page at the end (unmapped, never written); returns its number.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the table cannot grow.
    pub fn push_logical(&mut self) -> Result<u32, OutOfMemory> {
        let lpn = self.all_logical_pages();
        self.logical
            .try_reserve(self.stride)
            .map_err(|_| OutOfMemory {
                bytes: self.logical.len() * 4 + 8,
            })?;
        self.logical.push(NONE);
        if self.stride == 2 {
            self.logical.push(0);
        }
        if let Some(w) = self.written.as_mut() {
            if w.0.len() * 64 <= lpn as usize {
                w.0.push(0);
            }
        }
        self.host += 1;
        Ok(lpn)
    }
    /// The physical table and its stride, for building a state directly (an entry's first
    /// `u32` the logical page or [`NONE`], with full tables its second the version);
    /// [`Mapping::link_logical`] then derives the logical side.
    pub(crate) fn physical_mut(&mut self) -> (&mut [u32], usize) {
        (&mut self.physical, self.stride)
    }
    /// Points every logical page at the physical page that claims it, with that page's version
    /// as the newest (the physical side was built directly; the logical side was empty).
    pub(crate) fn link_logical(&mut self) {
        let stride = self.stride;
        // One slice of the logical table per thread, each scanning the whole physical table
        // for its own logical pages: the scattered writes run in parallel, the extra
        // sequential reads cost little.
        let pages = self
            .all_logical_pages()
            .div_ceil(rayon::current_num_threads() as u32)
            .max(1) as usize;
        let physical = &self.physical;
        self.logical
            .par_chunks_mut(pages * stride)
            .enumerate()
            .for_each(|(k, logical)| {
                let first = k * pages;
                for (ppn, entry) in physical.chunks_exact(stride).enumerate() {
                    if let Some(i) = (entry[0] as usize)
                        .checked_sub(first)
                        .filter(|&i| i < pages)
                    {
                        logical[i * stride..(i + 1) * stride].copy_from_slice(entry);
                        logical[i * stride] = ppn as u32;
                    }
                }
            });
        if let Some(w) = self.written.as_mut() {
            let logical = &self.logical;
            w.0.par_iter_mut().enumerate().for_each(|(w, bits)| {
                let lpns = logical.iter().skip(w * 64).take(64);
                *bits = lpns
                    .enumerate()
                    .fold(0, |b, (i, &p)| b | u64::from(p != NONE) << i);
            });
        }
    }
    /// Version currently mapped for `lpn` (0 if unmapped).
    pub fn mapped_version(&self, lpn: u32) -> u32 {
        match (self.ppn(lpn), &self.written) {
            (NONE, _) => 0,
            (p, None) => self.held(p),
            (_, Some(w)) => self
                .open
                .get(&lpn)
                .filter(|o| o.newest > 0)
                .map_or(u32::from(w.get(lpn)), |o| o.mapped),
        }
    }
    /// Pages with a record: programs in flight, or (sparse tables) versions beyond the
    /// written bit.
    pub fn open_records(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kinds of tables through the same writes, out-of-order completions, a trim and a
    /// copy: the same comparisons come out the same, and sparse records are released.
    #[test]
    fn sparse_versions_compare_like_full_ones() {
        let mut maps =
            [VersionTables::Full, VersionTables::Sparse].map(|t| Mapping::new(4, 16, t).unwrap());
        for m in &mut maps {
            let (a, b) = (m.next_version(1), m.next_version(1));
            assert!(b > a && m.is_at(2, NONE) && !m.is_at(1, NONE));
            // The newer one lands first; the older one must not replace it.
            m.programmed(5, b);
            assert!(m.supersedes(1, b));
            m.remap(1, 5);
            m.programmed(6, a);
            assert!(!m.supersedes(1, a));
            m.release(1);
            assert_eq!(m.newest(1), m.mapped_version(1));
            assert_eq!(m.open_records(), 0);
            // A copy keeps the version; a trim leaves a written, unmapped page.
            m.copied(5, 7);
            m.remap(1, 7);
            assert_eq!(m.newest(1), m.mapped_version(1));
            m.unmap(1);
            assert!(m.newest(1) > m.mapped_version(1) && !m.is_at(1, NONE));
            let c = m.next_version(1);
            assert!(m.supersedes(1, c));
        }
        assert_eq!(maps[1].open_records(), 1);
        maps[1].release(1);
        assert_eq!(maps[1].open_records(), 0);
    }

    /// A record stays while the mapped version is older than the newest (data waiting in a
    /// buffer), however often it is released.
    #[test]
    fn a_record_outlives_release_while_newer_data_waits() {
        let mut m = Mapping::new(2, 4, VersionTables::Sparse).unwrap();
        let a = m.next_version(0);
        assert!(m.supersedes(0, a));
        m.remap(0, 0);
        m.release(0);
        let b = m.next_version(0);
        m.release(0);
        assert_eq!(m.open_records(), 1);
        assert!(b > m.mapped_version(0));
    }

    /// A pinned page keeps its record, so a version taken while pinned still compares right
    /// after its programs are done; unpinned, the record goes.
    #[test]
    fn a_pin_keeps_versions_comparable() {
        let mut m = Mapping::new(2, 4, VersionTables::Sparse).unwrap();
        let a = m.next_version(0);
        m.programmed(0, a);
        assert!(m.supersedes(0, a));
        m.remap(0, 0);
        m.release(0);
        assert_eq!(m.open_records(), 0);
        m.pin(0);
        let kept = m.mapped_version(0);
        assert_eq!(kept, m.newest(0));
        let b = m.next_version(0);
        m.program_started(0, b);
        assert!(m.supersedes(0, b));
        m.remap(0, 1);
        m.program_done(0);
        assert_eq!(m.open_records(), 1, "the pin keeps the record");
        assert_ne!(m.newest(0), kept);
        assert_eq!(m.pins(), 1);
        m.unpin(0);
        assert_eq!((m.open_records(), m.pins()), (0, 0));
        let mut full = Mapping::new(2, 4, VersionTables::Full).unwrap();
        full.pin(1);
        full.pin(1);
        full.unpin(1);
        assert_eq!(full.pins(), 1, "full tables count pins too");
    }

    /// Setting the newest version back (a lost write) on both kinds of tables: back to the
    /// mapped one, and to 0 for a page that never reached flash.
    #[test]
    fn set_newest_goes_back_alike_on_both_tables() {
        for t in [VersionTables::Full, VersionTables::Sparse] {
            let mut m = Mapping::new(2, 4, t).unwrap();
            let a = m.next_version(0);
            m.programmed(0, a);
            assert!(m.supersedes(0, a));
            m.remap(0, 0);
            m.release(0);
            m.next_version(0);
            assert!(m.newest(0) > m.mapped_version(0));
            m.set_newest(0, m.mapped_version(0));
            assert_eq!(m.newest(0), m.mapped_version(0));
            m.next_version(1);
            m.set_newest(1, 0);
            assert!(m.is_at(1, NONE), "{t:?}: never written again");
            m.release(0);
            if t == VersionTables::Sparse {
                assert_eq!(m.open_records(), 0);
            }
        }
    }

    #[test]
    fn tables_take_four_bytes_per_page_a_side_when_sparse() {
        assert_eq!(VersionTables::Full.bytes(10, 20), 240);
        assert_eq!(VersionTables::Sparse.bytes(10, 20), 120 + 2);
        let m = Mapping::new(100, 200, VersionTables::Sparse).unwrap();
        assert_eq!((m.logical.len(), m.physical.len()), (100, 200));
    }
}
