//! Start-page residues (`start_residues`): where in a run of 16 pages requests start. Real
//! traces are not uniform there: mqsim_tpcc's 8 KiB records sit off page alignment, so 86 % of
//! its requests start on an odd page, and under static striping (die = page mod the dies) the
//! odd dies then carry twice the even ones' pages. The generator keeps the popularity's pages
//! distinct: it lays the footprint's pages out over superblocks of [`BLOCKS`] runs of 16
//! pages, each residue taking a number of slots per superblock in proportion to its weight
//! (the commonest all [`BLOCKS`]), so a page drawn twice is the same page and the residues
//! follow the weights; the address span grows by 16 × the largest share.

use std::fmt;

/// The residues' modulus, in 4 KiB pages.
pub const MODULUS: usize = 16;

/// Runs of [`MODULUS`] pages per superblock: the weights' resolution (1 / `BLOCKS` of the
/// largest).
const BLOCKS: u64 = 64;

/// Relative weights of the 16 residues of a request's start page.
#[derive(Debug, Clone, PartialEq)]
pub struct Residues {
    weights: [f64; MODULUS],
}

impl Residues {
    /// From `w0|w1|…|w15`.
    ///
    /// # Errors
    /// Not 16 weights, a weight not a finite number ≥ 0, or all zero; the message names `key`.
    pub fn parse(key: &str, v: &str) -> Result<Self, String> {
        let n = v.split('|').count();
        if n != MODULUS {
            return Err(format!(
                "synthetic spec {key}: {n} weights, it takes {MODULUS} (one per start page mod {MODULUS}, separated by |)"
            ));
        }
        let weights: [f64; MODULUS] = super::envelope::weights(key, v)?
            .try_into()
            .expect("counted");
        Self::new(weights).ok_or_else(|| format!("synthetic spec {key}: every weight is 0"))
    }

    /// From the weights (`None` if all are 0).
    pub fn new(weights: [f64; MODULUS]) -> Option<Self> {
        (weights.iter().sum::<f64>() > 0.0).then_some(Residues { weights })
    }

    /// The page layout the weights give.
    pub(super) fn layout(&self) -> Layout {
        let top = self.weights.iter().copied().fold(0.0, f64::max);
        let mut slots = Vec::new();
        for (r, w) in self.weights.iter().enumerate() {
            let n = ((w / top) * BLOCKS as f64).round() as u64;
            // The residue's slots spread over the superblock's runs.
            slots.extend((0..n).map(|k| (k * BLOCKS / n) * MODULUS as u64 + r as u64));
        }
        slots.sort_unstable();
        Layout { slots }
    }
}

impl fmt::Display for Residues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.weights.iter().map(|w| format!("{w}")).collect();
        f.write_str(&parts.join("|"))
    }
}

/// Where the `k`-th page of a footprint goes: one layout over it, or with `apart` one per half
/// (`None`: that half's page k is page k), the writes' half placed after the reads' span.
#[derive(Debug, Clone)]
pub(super) enum Placement {
    One(Layout),
    Halves {
        half: u64,
        read: Option<Layout>,
        write: Option<Layout>,
    },
}

impl Placement {
    /// The page of footprint page `k`.
    pub(super) fn page(&self, k: u64) -> u64 {
        match self {
            Placement::One(l) => l.page(k),
            Placement::Halves { half, read, write } => {
                let at = |l: &Option<Layout>, k: u64| l.as_ref().map_or(k, |l| l.page(k));
                if k < *half {
                    at(read, k)
                } else {
                    spanned(read, *half) + at(write, k - half)
                }
            }
        }
    }

    /// The pages a footprint of `pages` pages spans.
    pub(super) fn span(&self, pages: u64) -> u64 {
        match self {
            Placement::One(l) => l.span(pages),
            Placement::Halves { half, read, write } => {
                spanned(read, *half) + spanned(write, pages.saturating_sub(*half))
            }
        }
    }
}

/// The pages `pages` footprint pages span under layout `l` (themselves without one).
fn spanned(l: &Option<Layout>, pages: u64) -> u64 {
    l.as_ref().map_or(pages, |l| l.span(pages))
}

/// Where the `k`-th page of a footprint goes: superblock `k / slots`, then its slot.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// Page offsets within a superblock, ascending.
    slots: Vec<u64>,
}

impl Layout {
    /// The page of footprint page `k`.
    pub(super) fn page(&self, k: u64) -> u64 {
        let n = self.slots.len() as u64;
        k / n * BLOCKS * MODULUS as u64 + self.slots[(k % n) as usize]
    }

    /// The pages a footprint of `pages` pages spans.
    pub(super) fn span(&self, pages: u64) -> u64 {
        pages.div_ceil(self.slots.len() as u64) * BLOCKS * MODULUS as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Odd residues three times as heavy as even ones: every page distinct, 3/4 of the
    /// footprint on odd pages, the span 16 × the largest share (3/32) = 1.5 times the
    /// footprint.
    #[test]
    fn the_layout_keeps_pages_distinct_and_follows_the_weights() {
        let w = std::array::from_fn(|r| if r % 2 == 1 { 3.0 } else { 1.0 });
        let l = Residues::new(w).unwrap().layout();
        // 100 superblocks of 8 × 64 + 8 × 21 pages.
        let n = 68_000;
        let pages: Vec<u64> = (0..n).map(|k| l.page(k)).collect();
        let mut sorted = pages.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len() as u64, n);
        let odd = pages.iter().filter(|p| *p % 2 == 1).count() as f64 / n as f64;
        assert!((odd - 0.75).abs() < 0.01, "{odd}");
        let span = l.span(n);
        assert!(pages.iter().all(|&p| p < span));
        assert_eq!(span, 100 * 1024);
    }

    /// Equal weights lay the pages out in order.
    #[test]
    fn equal_weights_are_the_identity() {
        let l = Residues::new([1.0; MODULUS]).unwrap().layout();
        assert!((0..5_000).all(|k| l.page(k) == k));
        assert_eq!(l.span(1024), 1024);
    }

    #[test]
    fn bad_weights_are_named() {
        let e = Residues::parse("start_residues", "1|2").unwrap_err();
        assert!(e.contains("2 weights, it takes 16"), "{e}");
        let e = Residues::parse("start_residues", &["0"; 16].join("|")).unwrap_err();
        assert!(e.contains("every weight is 0"), "{e}");
        let mut v = vec!["1"; 16];
        v[3] = "-1";
        let e = Residues::parse("start_residues", &v.join("|")).unwrap_err();
        assert!(e.contains("`-1` is not a weight"), "{e}");
    }
}
