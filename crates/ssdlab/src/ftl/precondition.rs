//! Preconditioning: writing part of the logical space before measurement, in zero simulated
//! time, with GC run instantly whenever a plane reaches its threshold. Erase counts it causes
//! are kept (the drive is "used"); no flash or GC counter of the measured run includes it.

use super::blocks::Stream;
use super::Ftl;
use crate::config::{FillPattern, PreconditionConfig};
use crate::flash::{Level, PlaneId, Ppn};
use crate::time::SimTime;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// An error that makes preconditioning impossible (the plane cannot hold its share).
#[derive(Debug, thiserror::Error)]
#[error("preconditioning: plane {plane} is full of valid data and GC finds no victim; lower precondition.fill or raise ftl.over_provisioning")]
pub struct PreconditionError {
    plane: u32,
}

impl Ftl {
    /// Writes `fill` of the logical space (`pattern` order), then for `random` overwrites
    /// `overwrite × filled` pages drawn uniformly from the filled set. Returns pages written.
    ///
    /// The random order is an affine permutation `lpn = (a·i + b) mod L` with `gcd(a, L) = 1`
    /// drawn from `rng`: every filled page is distinct without a table of `L` entries.
    ///
    /// # Errors
    /// [`PreconditionError`] if a plane fills up with valid data.
    pub fn precondition(
        &mut self,
        p: &PreconditionConfig,
        rng: &mut ChaCha8Rng,
        level: Level,
    ) -> Result<u64, PreconditionError> {
        let l = u64::from(self.map.logical_pages());
        let n = ((p.fill * l as f64).floor() as u64).min(l);
        if n == 0 {
            return Ok(0);
        }
        let (a, b) = match p.pattern {
            FillPattern::Sequential => (1, 0),
            FillPattern::Random => (coprime_multiplier(l, rng), rng.random_range(0..l)),
        };
        let perm =
            |i: u64| ((u128::from(a) * u128::from(i) + u128::from(b)) % u128::from(l)) as u32;
        for i in 0..n {
            self.instant_write(perm(i), level)?;
        }
        let mut written = n;
        if p.pattern == FillPattern::Random {
            let extra = (p.overwrite * n as f64).round() as u64;
            for _ in 0..extra {
                self.instant_write(perm(rng.random_range(0..n)), level)?;
            }
            written += extra;
        }
        Ok(written)
    }

    /// Opens an active block for each of `streams` on every plane that has none, then cleans
    /// instantly until every plane is above its GC threshold again: the steady state of a drive
    /// that has been writing with these streams, so opening them is not charged to the run.
    ///
    /// # Errors
    /// [`PreconditionError`] if a plane cannot be cleaned.
    pub fn open_streams(&mut self, streams: &[Stream]) -> Result<(), PreconditionError> {
        for plane in (0..self.geo.data_planes()).map(PlaneId) {
            for &stream in streams {
                let p = &self.planes[plane.0 as usize];
                if p.active[stream.index()] == crate::ftl::mapping::NONE && p.free_blocks() > 1 {
                    self.open_block(plane, stream);
                }
            }
            while self.needs_gc(plane) {
                self.instant_gc(plane)?;
            }
        }
        Ok(())
    }

    fn instant_write(&mut self, lpn: u32, level: Level) -> Result<(), PreconditionError> {
        let plane = self.home_plane(lpn);
        let version = self.map.next_version(lpn);
        let ppn = match self.alloc(plane, Stream::user(level), SimTime::ZERO) {
            Some(p) => p,
            None => {
                self.instant_gc(plane)?;
                self.alloc(plane, Stream::user(level), SimTime::ZERO)
                    .ok_or(PreconditionError { plane: plane.0 })?
            }
        };
        self.commit_write(ppn, lpn, version);
        while self.needs_gc(plane) {
            self.instant_gc(plane)?;
        }
        Ok(())
    }

    fn instant_gc(&mut self, plane: PlaneId) -> Result<(), PreconditionError> {
        let victim = self
            .claim_victim(plane, SimTime::ZERO)
            .ok_or(PreconditionError { plane: plane.0 })?;
        let stream = Stream::gc(self.blocks[victim.0 as usize].level);
        let first = self.geo.first_page(victim).0;
        // Moves go to other blocks, so the victim's pages can be walked while moving them.
        for src in first..first + self.blocks[victim.0 as usize].write_ptr {
            let lpn = self.map.lpn(src);
            if lpn == crate::ftl::mapping::NONE {
                continue;
            }
            let dst = self
                .alloc(plane, stream, SimTime::ZERO)
                .ok_or(PreconditionError { plane: plane.0 })?;
            self.commit_move(Ppn(src), dst, lpn);
        }
        self.erase(victim);
        Ok(())
    }
}

fn coprime_multiplier(l: u64, rng: &mut ChaCha8Rng) -> u64 {
    if l <= 2 {
        return 1;
    }
    loop {
        let a = rng.random_range(1..l);
        if gcd(a, l) == 1 {
            return a;
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::ftl::mapping::NONE;
    use rand::SeedableRng;

    #[test]
    fn random_fill_maps_exactly_the_fill_fraction_and_runs_gc() {
        let cfg = ConfigBuilder::preset("tiny")
            .unwrap()
            .set("precondition.pattern=random")
            .unwrap()
            .set("precondition.fill=0.9")
            .unwrap()
            .set("precondition.overwrite=2.0")
            .unwrap()
            .build()
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut f = Ftl::new(&cfg, rng.clone()).unwrap();
        f.precondition(&cfg.precondition, &mut rng, Level::Normal)
            .unwrap();
        let l = f.map.logical_pages();
        let mapped = (0..l).filter(|&x| f.map.ppn(x) != NONE).count() as u32;
        assert_eq!(mapped, (0.9 * f64::from(l)).floor() as u32);
        assert!(
            f.blocks.iter().any(|b| b.erase_count > 0),
            "overwrites must have forced GC"
        );
        let valid: u32 = f.blocks.iter().map(|b| b.valid).sum();
        assert_eq!(valid, mapped);
    }
}
