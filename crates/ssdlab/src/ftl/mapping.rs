//! Page-level mapping with versions.
//!
//! Four `u32` arrays: logical → physical, physical → logical, the newest version the host wrote
//! for each logical page, and the version each physical page holds. That is 16 bytes per
//! physical page at most, and it lets every read be checked against the newest version.

/// Marker for "no page".
pub const NONE: u32 = u32::MAX;

/// Logical ↔ physical mapping and version tracking.
#[derive(Debug, Clone)]
pub struct Mapping {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    lpn_version: Vec<u32>,
    ppn_version: Vec<u32>,
}

impl Mapping {
    /// An empty mapping for `logical` logical and `physical` physical pages.
    pub fn new(logical: u32, physical: u32) -> Self {
        Mapping {
            l2p: vec![NONE; logical as usize],
            p2l: vec![NONE; physical as usize],
            lpn_version: vec![0; logical as usize],
            ppn_version: vec![0; physical as usize],
        }
    }
    /// Logical pages.
    pub fn logical_pages(&self) -> u32 {
        self.l2p.len() as u32
    }
    /// Physical page holding `lpn`, or [`NONE`].
    #[inline]
    pub fn ppn(&self, lpn: u32) -> u32 {
        self.l2p[lpn as usize]
    }
    /// Logical page stored at `ppn` if it is valid, else [`NONE`].
    #[inline]
    pub fn lpn(&self, ppn: u32) -> u32 {
        self.p2l[ppn as usize]
    }
    /// Newest version the host wrote for `lpn` (0 = never written).
    #[inline]
    pub fn newest(&self, lpn: u32) -> u32 {
        self.lpn_version[lpn as usize]
    }
    /// Version held by `ppn`.
    #[inline]
    pub fn held(&self, ppn: u32) -> u32 {
        self.ppn_version[ppn as usize]
    }
    /// Registers a new host write of `lpn`; returns its version.
    pub fn next_version(&mut self, lpn: u32) -> u32 {
        let v = &mut self.lpn_version[lpn as usize];
        *v += 1;
        *v
    }
    /// Records that `ppn` was programmed with `version` of some page (not yet mapped).
    pub fn programmed(&mut self, ppn: u32, version: u32) {
        self.ppn_version[ppn as usize] = version;
    }
    /// Points `lpn` at `ppn`; returns the previous physical page (now invalid) or [`NONE`].
    pub fn remap(&mut self, lpn: u32, ppn: u32) -> u32 {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.p2l[old as usize] = NONE;
        }
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn;
        old
    }
    /// Version currently mapped for `lpn` (0 if unmapped).
    pub fn mapped_version(&self, lpn: u32) -> u32 {
        match self.ppn(lpn) {
            NONE => 0,
            p => self.held(p),
        }
    }
}
