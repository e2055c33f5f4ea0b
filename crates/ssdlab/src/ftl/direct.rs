//! Direct preconditioning: the state a fill leaves, built plane by plane from block-level
//! counts, then every valid page given its logical page in one pass.
//!
//! Why this has the law of the simulated fill ([`FillMethod::Simulated`]): a plane's blocks
//! change only through writes homed on it and its own GC, so planes are independent once each
//! knows how many overwrites it receives. An overwrite picks a filled logical page uniformly;
//! that lands on plane `p` with probability `|F_p| / n` (so the per-plane counts are
//! multinomial) and then hits each valid page of `p` with equal probability, i.e. block `b`
//! with probability `valid_b / |F_p|` — a weighted draw over valid counts (a Fenwick tree).
//! Allocation, the GC trigger, greedy victim choice and the moves of a victim depend only on
//! those counts, free pools and erase counts, so they are replayed exactly at block level.
//! What is not tracked is *which* page is valid: the valid positions within a block are a
//! uniform subset of its written pages and the plane's filled logical pages are matched to
//! them by a uniform shuffle, which is what uniform overwrites make exchangeable. Versions start
//! at 1 for every filled page (overwrite counts per page are not kept).
//!
//! [`FillMethod::Simulated`]: crate::config::FillMethod::Simulated

use super::blocks::{BlockInfo, BlockState, PlaneInfo, Stream};
use super::fenwick::Fenwick;
use super::fill::{FillProgress, PreconditionError, PROGRESS_PAGES};
use super::gc::VictimPolicy;
use super::mapping::NONE;
use super::steady::{quantiles, valid_distribution};
use super::Ftl;
use crate::flash::Level;
use crate::time::SimTime;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The filled logical pages: `{(a·i + b) mod L : i < n}`, with membership by the inverse map.
#[derive(Debug, Clone, Copy)]
pub(super) struct FillSet {
    /// Logical pages.
    l: u64,
    /// Filled pages.
    n: u64,
    /// Multiplier (coprime with `l`).
    a: u64,
    /// Offset.
    b: u64,
    /// `a⁻¹ mod l`.
    a_inv: u64,
    /// A random fill (else pages `0..n` in order).
    pub random: bool,
}

impl FillSet {
    /// Pages `0..n` of `l`, in order.
    pub(super) fn sequential(l: u64, n: u64) -> Self {
        FillSet {
            random: false,
            ..Self::random(l, n, 1, 0)
        }
    }
    /// Pages `(a·i + b) mod l` for `i < n` (`gcd(a, l) = 1`).
    pub(super) fn random(l: u64, n: u64, a: u64, b: u64) -> Self {
        FillSet {
            l,
            n,
            a,
            b,
            a_inv: inverse_mod(a, l),
            random: true,
        }
    }
    /// The `i`-th page written (`i < l`). Logical page numbers are `u32`, so every product
    /// of two residues fits in a `u64`.
    pub(super) fn nth(&self, i: u64) -> u32 {
        ((self.a * i % self.l + self.b) % self.l) as u32
    }
    /// Index `i` with `nth(i) = lpn` (`lpn < l`), for a random set.
    fn index(&self, lpn: u64) -> u64 {
        self.a_inv * ((lpn + self.l - self.b) % self.l) % self.l
    }
    /// The members among `start, start + stride, start + 2·stride, …` (below `l`), in order.
    /// A random set's index advances by the same `a⁻¹·stride mod l` at each step, so
    /// membership costs an addition, not a division.
    fn members(&self, start: u64, stride: u64) -> impl Iterator<Item = u32> + '_ {
        let every = !self.random || self.n == self.l;
        let step = self.a_inv * (stride % self.l) % self.l;
        let mut idx = if every || start >= self.l {
            0
        } else {
            self.index(start)
        };
        (start..self.l)
            .step_by(stride as usize)
            .filter_map(move |lpn| {
                let member = if every { lpn < self.n } else { idx < self.n };
                idx += step;
                if idx >= self.l {
                    idx -= self.l;
                }
                member.then_some(lpn as u32)
            })
    }
}

fn inverse_mod(a: u64, m: u64) -> u64 {
    let (mut old_r, mut r) = (i128::from(a), i128::from(m));
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    old_s.rem_euclid(i128::from(m.max(1))) as u64
}

/// What state the filled pages are given.
#[derive(Debug, Clone, Copy)]
pub(super) enum BlockLaw {
    /// Written, then this many uniform overwrites of the filled set, with GC.
    Overwrites(u64),
    /// Placed in the mean-field steady state of uniform random writes ([`super::steady`]).
    SteadyState,
}

impl Ftl {
    /// Builds the state of `set` written under `law` (see the module doc).
    pub(super) fn fill_direct(
        &mut self,
        set: FillSet,
        law: BlockLaw,
        rng: &mut ChaCha8Rng,
        level: Level,
        progress: FillProgress,
    ) -> Result<u64, PreconditionError> {
        let stride = self.striping.period();
        let mut residue = vec![u32::MAX; self.geo.planes() as usize];
        for r in 0..stride {
            residue[self.striping.plane(r).0 as usize] = r;
        }
        let lpns = |plane: usize| {
            let r = residue[plane];
            // A plane outside the striping (staging) has no residue: an empty range.
            set.members(u64::from(r), u64::from(stride))
        };
        let homed: Vec<u64> = (0..residue.len())
            .into_par_iter()
            .map(|plane| lpns(plane).count() as u64)
            .collect();
        // The steady state's law of valid pages per full block, for the mean valid fraction
        // that puts the filled pages into every block but the GC threshold's and one more.
        let full_blocks =
            (self.geo.blocks_per_plane as usize).saturating_sub(self.gc_threshold as usize + 1);
        let (extra, steady) = match law {
            BlockLaw::Overwrites(extra) => (extra, None),
            BlockLaw::SteadyState => {
                let planes = homed.iter().filter(|&&h| h > 0).count();
                let room = (planes * full_blocks) as f64 * f64::from(self.data_ppb);
                let rho = set.n as f64 / room;
                if rho >= 1.0 {
                    return Err(PreconditionError { plane: 0 });
                }
                let d = self
                    .victim_kind
                    .mean_field_d(self.geo.blocks_per_plane)
                    .expect("validated: steady-state needs a victim rule with a mean-field model");
                (0, Some(valid_distribution(self.data_ppb, rho, d)))
            }
        };
        let overwrites = multinomial(extra, &homed, rng);
        let seeds: Vec<u64> = homed.iter().map(|_| rng.random()).collect();
        let ppb = self.geo.pages_per_block;
        let bpp = self.geo.blocks_per_plane as usize;
        let rules = Rules {
            ppb,
            data_ppb: self.data_ppb,
            threshold: self.gc_threshold,
            reserve: self.gc_reserve,
            victim: self.victim_kind,
            user: Stream::user(level),
            gc: Stream::gc(level),
            shared: self.gc_shared,
            shuffle: set.random,
        };
        let total = set.n + extra;
        let done = AtomicU64::new(0);
        let report = |pages: u64| progress(done.fetch_add(pages, Ordering::Relaxed) + pages, total);
        let owner = self.owner.clone();
        let (physical, stride) = self.map.physical_mut();
        self.blocks
            .par_chunks_mut(bpp)
            .zip(self.levels.par_chunks_mut(bpp))
            .zip(self.gc_keys.par_chunks_mut(bpp))
            .zip(self.planes.par_iter_mut())
            .zip(physical.par_chunks_mut(bpp * ppb as usize * stride))
            .enumerate()
            .try_for_each(|(plane, ((((blocks, levels), keys), info), pages))| {
                if homed[plane] == 0 {
                    return Ok(());
                }
                let mut rng = ChaCha8Rng::seed_from_u64(seeds[plane]);
                let mut victim_rng = rng.clone();
                victim_rng.set_stream(1);
                let mut f = PlaneFill {
                    plane: plane as u32,
                    first: (plane * bpp) as u32,
                    tree: Fenwick::new(blocks.len()),
                    victim: super::gc::policy(rules.victim, victim_rng, bpp as u32),
                    rules: &rules,
                    blocks,
                    levels,
                    keys,
                    info,
                };
                if let Some(law) = &steady {
                    f.steady(homed[plane] as u32, law, full_blocks, &mut rng)?;
                } else {
                    f.host(homed[plane] as u32)?;
                }
                let mut unreported = homed[plane];
                for _ in 0..overwrites[plane] {
                    f.overwrite(&mut rng)?;
                    unreported += 1;
                    if unreported == PROGRESS_PAGES {
                        report(std::mem::take(&mut unreported));
                    }
                }
                report(unreported);
                let mut filled: Vec<u32> = lpns(plane).collect();
                if rules.shuffle {
                    filled.shuffle(&mut rng);
                }
                if let Some(owner) = &owner {
                    // Flows with blocks of their own: each flow's pages in blocks of their
                    // own but where one flow's end and the next's begin.
                    filled.sort_by_key(|&lpn| owner.flow_of(lpn));
                }
                f.place(&filled, pages, stride, &mut rng);
                Ok(())
            })?;
        self.map.link_logical();
        Ok(total)
    }
}

/// Per-plane counts of `total` draws over planes weighted by `weights` (sequential binomials).
fn multinomial(total: u64, weights: &[u64], rng: &mut ChaCha8Rng) -> Vec<u64> {
    let mut left_weight: u64 = weights.iter().sum();
    let mut left = total;
    weights
        .iter()
        .map(|&w| {
            let k = if left == 0 || w == 0 {
                0
            } else if w == left_weight {
                left
            } else {
                Binomial::new(left, w as f64 / left_weight as f64)
                    .expect("a probability in [0, 1]")
                    .sample(rng)
            };
            left -= k;
            left_weight -= w;
            k
        })
        .collect()
}

/// What every plane's fill follows.
struct Rules {
    ppb: u32,
    /// Pages per block that hold data (the rest hold its summary).
    data_ppb: u32,
    threshold: u32,
    reserve: u32,
    victim: crate::config::GcVictim,
    user: Stream,
    gc: Stream,
    /// GC relocations go into the host's open block.
    shared: bool,
    shuffle: bool,
}

/// One plane being filled at block level.
struct PlaneFill<'a> {
    plane: u32,
    /// Global number of the plane's first block.
    first: u32,
    rules: &'a Rules,
    blocks: &'a mut [BlockInfo],
    levels: &'a mut [Level],
    keys: &'a mut [u16],
    info: &'a mut PlaneInfo,
    /// Valid pages per block, for weighted draws.
    tree: Fenwick,
    victim: Box<dyn VictimPolicy>,
}

impl PlaneFill<'_> {
    fn fail(&self) -> PreconditionError {
        PreconditionError { plane: self.plane }
    }

    /// Index (within the plane) of `stream`'s active block and the pages left in it.
    fn active(&self, stream: Stream) -> Option<(usize, u32)> {
        let first = self.first;
        match self.info.active(stream.slot(self.rules.shared)) {
            NONE => None,
            b => {
                let i = (b - first) as usize;
                Some((i, self.rules.data_ppb - self.blocks[i].write_ptr))
            }
        }
    }

    /// No page is a zombie while filling (no host buffer holds anything yet).
    fn rekey(&mut self, i: usize) {
        self.keys[i] = self.blocks[i].gc_key(self.rules.data_ppb, false);
    }

    /// `stream`'s active block with room, opening the least-erased free block if needed (GC
    /// first when host writes would take the GC reserve), as `Ftl::alloc` does.
    fn room(&mut self, stream: Stream) -> Result<(usize, u32), PreconditionError> {
        if let Some(a) = self.active(stream) {
            return Ok(a);
        }
        let reserve = stream.reserve(self.rules.reserve);
        if self.info.free_blocks() <= reserve {
            self.gc()?;
            if self.info.free_blocks() <= reserve {
                return Err(self.fail());
            }
        }
        let b = self
            .info
            .take_free(stream.slot(self.rules.shared))
            .ok_or_else(|| self.fail())?;
        let i = (b - self.first) as usize;
        self.blocks[i].open(false);
        self.levels[i] = stream.level;
        Ok((i, self.rules.data_ppb))
    }

    /// Writes `m` valid pages into block `i` (`stream`'s active block, with room for them).
    fn program(&mut self, stream: Stream, i: usize, m: u32) {
        let blk = &mut self.blocks[i];
        blk.write_ptr += m;
        blk.valid += m;
        self.tree.add(i, m as i32);
        if blk.write_ptr == self.rules.data_ppb {
            // Its summary pages are written with its last data page: written, never valid.
            blk.write_ptr = self.rules.ppb;
            blk.state = BlockState::Full;
            self.info.set_active(stream.slot(self.rules.shared), NONE);
            self.rekey(i);
        }
    }

    fn clean(&mut self) -> Result<(), PreconditionError> {
        while self.info.needs_gc(self.rules.threshold, 1, 1) {
            self.gc()?;
        }
        Ok(())
    }

    /// The initial writes of `n` pages, a block at a time.
    fn host(&mut self, mut n: u32) -> Result<(), PreconditionError> {
        while n > 0 {
            let (i, room) = self.room(self.rules.user)?;
            let m = room.min(n);
            self.program(self.rules.user, i, m);
            n -= m;
            self.clean()?;
        }
        Ok(())
    }

    /// `n` valid pages in `count` full blocks whose valid counts follow `law` (quantiles, so
    /// without sampling noise; then one page more or less per block, in turn, until they hold
    /// exactly `n`), in shuffled order over the plane's blocks. Every page not valid is
    /// written and invalid; erase counts stay 0 (the history is not modelled).
    fn steady(
        &mut self,
        n: u32,
        law: &[f64],
        count: usize,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), PreconditionError> {
        let ppb = self.rules.data_ppb;
        if count == 0 || u64::from(n) > count as u64 * u64::from(ppb) {
            return Err(self.fail());
        }
        let mut valid = quantiles(law, count);
        let mut held: u64 = valid.iter().map(|&v| u64::from(v)).sum();
        let mut k = 0;
        while held != u64::from(n) {
            let v = &mut valid[k % count];
            if held < u64::from(n) && *v < ppb {
                *v += 1;
                held += 1;
            } else if held > u64::from(n) && *v > 0 {
                *v -= 1;
                held -= 1;
            }
            k += 1;
        }
        valid.shuffle(rng);
        for v in valid {
            let (i, _) = self.room(self.rules.user)?;
            self.program(self.rules.user, i, ppb);
            self.blocks[i].valid = v;
            self.tree.add(i, v as i32 - ppb as i32);
            self.rekey(i);
        }
        Ok(())
    }

    /// One overwrite: a new page in the host block, a uniformly drawn valid page invalidated.
    fn overwrite(&mut self, rng: &mut ChaCha8Rng) -> Result<(), PreconditionError> {
        let (i, _) = self.room(self.rules.user)?;
        let old = self.tree.find(rng.random_range(0..self.tree.total()));
        self.blocks[old].valid -= 1;
        self.tree.add(old, -1);
        self.rekey(old);
        self.program(self.rules.user, i, 1);
        self.clean()
    }

    /// Cleans one victim: its valid pages to the GC stream, then its erase.
    fn gc(&mut self) -> Result<(), PreconditionError> {
        let v = self
            .victim
            .victim(self.blocks, self.keys, self.rules.data_ppb, SimTime::ZERO)
            .ok_or_else(|| self.fail())?;
        self.blocks[v].state = BlockState::Victim;
        self.rekey(v);
        let mut left = self.blocks[v].valid;
        self.tree.add(v, -(left as i32));
        self.blocks[v].valid = 0;
        while left > 0 {
            let (i, room) = self.room(self.rules.gc)?;
            let m = room.min(left);
            self.program(self.rules.gc, i, m);
            left -= m;
        }
        self.info
            .reclaim(self.first + v as u32, &mut self.blocks[v]);
        Ok(())
    }

    /// Writes the physical side of the plane's pages: each block's valid pages are a uniform
    /// subset of its written ones (selection sampling; all of them when none is invalid),
    /// holding `lpns` in order, version 1 (entries of `stride` `u32`s: the logical page, then
    /// with full version tables the version).
    fn place(&self, lpns: &[u32], pages: &mut [u32], stride: usize, rng: &mut ChaCha8Rng) {
        let ppb = self.rules.ppb as usize;
        let mut next = lpns.iter();
        for (blk, pages) in self.blocks.iter().zip(pages.chunks_mut(ppb * stride)) {
            // Data lies in the data pages only.
            let (mut need, written) = (blk.valid, blk.write_ptr.min(self.rules.data_ppb));
            let written_pages = pages[..written as usize * stride].chunks_exact_mut(stride);
            for (t, page) in written_pages.enumerate() {
                let left = written - t as u32;
                let take = need == left || (need > 0 && rng.random_range(0..left) < need);
                let entry = if take {
                    need -= 1;
                    [*next.next().expect("one filled page per valid page"), 1]
                } else {
                    [NONE, 0]
                };
                page.copy_from_slice(&entry[..stride]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_set_members_invert_the_permutation() {
        let set = FillSet::random(97, 40, 35, 11);
        let filled: std::collections::BTreeSet<u32> = (0..40).map(|i| set.nth(i)).collect();
        for (start, stride) in [(0, 1), (3, 8), (96, 5), (97, 4)] {
            let want: Vec<u32> = (start..97)
                .step_by(stride)
                .filter(|lpn| filled.contains(lpn))
                .collect();
            let got: Vec<u32> = set.members(start as u64, stride as u64).collect();
            assert_eq!(got, want, "start {start} stride {stride}");
        }
        let seq = FillSet::sequential(97, 40);
        assert_eq!(seq.members(38, 1).collect::<Vec<_>>(), vec![38, 39]);
    }

    #[test]
    fn multinomial_spends_every_draw() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let k = multinomial(1000, &[5, 0, 10, 5], &mut rng);
        assert_eq!(k.iter().sum::<u64>(), 1000);
        assert_eq!(k[1], 0);
        assert!((400..600).contains(&k[2]), "{k:?}");
    }
}
