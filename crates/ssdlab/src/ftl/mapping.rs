//! Page-level mapping with versions.
//!
//! Two arrays of `u32` pairs: per logical page its physical page and the newest version the host
//! wrote; per physical page its logical page (if valid) and the version it holds. That is at most
//! 16 bytes per physical page, and lets every read be checked against the newest version. Each
//! pair shares a cache line, so an update touches half as many lines as four separate arrays.

use rayon::prelude::*;

/// Marker for "no page".
pub const NONE: u32 = u32::MAX;

/// The mapping tables do not fit in memory.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {bytes} bytes for the mapping tables of this geometry; use a smaller drive (geometry.*)")]
pub struct OutOfMemory {
    /// Bytes requested.
    pub bytes: usize,
}

/// Entries (8 B each) from which a table is first written in parallel: 32 MiB.
const PARALLEL_TOUCH: usize = 1 << 22;

fn filled(n: usize) -> Result<Vec<[u32; 2]>, OutOfMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| OutOfMemory { bytes: n * 8 })?;
    advise_huge_pages(v.spare_capacity_mut());
    // A large table is written in parallel: the kernel zeroes each page on the thread that
    // first touches it, which dominates building a large drive's tables (huge pages
    // especially). A small one is not worth starting the thread pool for.
    if n >= PARALLEL_TOUCH {
        v.par_extend(rayon::iter::repeat_n([NONE, 0], n));
    } else {
        v.resize(n, [NONE, 0]);
    }
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

/// Logical ↔ physical mapping and version tracking.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// Per logical page: (physical page, newest version written).
    logical: Vec<[u32; 2]>,
    /// Per physical page: (logical page if valid, version held).
    physical: Vec<[u32; 2]>,
    /// Host logical pages: the first entries of `logical` (a mapping cache's translation
    /// pages follow them).
    host: u32,
}

impl Mapping {
    /// An empty mapping for `logical` logical and `physical` physical pages.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the tables cannot be allocated (a huge geometry fails cleanly instead
    /// of aborting the process).
    pub fn new(logical: u32, physical: u32) -> Result<Self, OutOfMemory> {
        Self::with_translation(logical, 0, physical)
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
    ) -> Result<Self, OutOfMemory> {
        Ok(Mapping {
            logical: filled(logical as usize + translation as usize)?,
            physical: filled(physical as usize)?,
            host: logical,
        })
    }
    /// Host logical pages (a mapping cache's translation pages are not counted).
    pub fn logical_pages(&self) -> u32 {
        self.host
    }
    /// Logical pages with the translation pages.
    pub fn all_logical_pages(&self) -> u32 {
        self.logical.len() as u32
    }
    /// Physical page holding `lpn`, or [`NONE`].
    #[inline]
    pub fn ppn(&self, lpn: u32) -> u32 {
        self.logical[lpn as usize][0]
    }
    /// Logical page stored at `ppn` if it is valid, else [`NONE`].
    #[inline]
    pub fn lpn(&self, ppn: u32) -> u32 {
        self.physical[ppn as usize][0]
    }
    /// Hints the CPU to fetch `lpn`'s entry into cache, some work before it is looked up (a
    /// program when it starts, a request when it is read from the workload), so the lookup
    /// does not wait for memory.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        if let Some(entry) = self.logical.get(lpn as usize) {
            prefetch(entry);
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
        if let Some(entry) = self.physical.get(ppn as usize) {
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
    /// Newest version the host wrote for `lpn` (0 = never written).
    #[inline]
    pub fn newest(&self, lpn: u32) -> u32 {
        self.logical[lpn as usize][1]
    }
    /// Version held by `ppn`.
    #[inline]
    pub fn held(&self, ppn: u32) -> u32 {
        self.physical[ppn as usize][1]
    }
    /// Registers a new host write of `lpn`; returns its version.
    pub fn next_version(&mut self, lpn: u32) -> u32 {
        let v = &mut self.logical[lpn as usize][1];
        *v += 1;
        *v
    }
    /// Sets the newest version of `lpn` back to `version` (a version the device received was
    /// lost: shadowgc.txt's dropped twin-shadow whose host copy died in a restart).
    pub fn set_newest(&mut self, lpn: u32, version: u32) {
        self.logical[lpn as usize][1] = version;
    }
    /// Records that `ppn` was programmed with `version` of some page (not yet mapped).
    pub fn programmed(&mut self, ppn: u32, version: u32) {
        self.physical[ppn as usize][1] = version;
    }
    /// Points `lpn` at `ppn`; returns the previous physical page (now invalid) or [`NONE`].
    pub fn remap(&mut self, lpn: u32, ppn: u32) -> u32 {
        let old = self.logical[lpn as usize][0];
        if old != NONE {
            self.physical[old as usize][0] = NONE;
        }
        self.logical[lpn as usize][0] = ppn;
        self.physical[ppn as usize][0] = lpn;
        old
    }
    /// Unmaps `lpn` (a trim); returns the physical page it held (now invalid) or [`NONE`].
    pub fn unmap(&mut self, lpn: u32) -> u32 {
        let old = self.logical[lpn as usize][0];
        if old != NONE {
            self.physical[old as usize][0] = NONE;
        }
        self.logical[lpn as usize][0] = NONE;
        old
    }
    /// Adds one logical page at the end (unmapped, never written); returns its number.
    ///
    /// # Errors
    /// [`OutOfMemory`] if the table cannot grow.
    pub fn push_logical(&mut self) -> Result<u32, OutOfMemory> {
        self.logical.try_reserve(1).map_err(|_| OutOfMemory {
            bytes: (self.logical.len() + 1) * 8,
        })?;
        self.logical.push([NONE, 0]);
        self.host += 1;
        Ok(self.logical.len() as u32 - 1)
    }
    /// The physical table, for building a state directly; [`Mapping::link_logical`] then
    /// derives the logical side.
    pub(crate) fn physical_mut(&mut self) -> &mut [[u32; 2]] {
        &mut self.physical
    }
    /// Points every logical page at the physical page that claims it, with that page's version
    /// as the newest (the physical side was built directly; the logical side was empty).
    pub(crate) fn link_logical(&mut self) {
        // One slice of the logical table per thread, each scanning the whole physical table
        // for its own logical pages: the scattered writes run in parallel, the extra
        // sequential reads cost little.
        let slice = self
            .logical
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1);
        let physical = &self.physical;
        self.logical
            .par_chunks_mut(slice)
            .enumerate()
            .for_each(|(k, logical)| {
                let first = k * slice;
                for (ppn, &[lpn, version]) in physical.iter().enumerate() {
                    if let Some(entry) = (lpn as usize)
                        .checked_sub(first)
                        .and_then(|i| logical.get_mut(i))
                    {
                        *entry = [ppn as u32, version];
                    }
                }
            });
    }
    /// Version currently mapped for `lpn` (0 if unmapped).
    pub fn mapped_version(&self, lpn: u32) -> u32 {
        match self.ppn(lpn) {
            NONE => 0,
            p => self.held(p),
        }
    }
}
