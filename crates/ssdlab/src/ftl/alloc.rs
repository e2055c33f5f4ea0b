//! Write placement: which plane a host write of a logical page goes to.

use crate::config::{Allocation, PlaneChoice, StripeDim};
use crate::flash::{Geometry, Level, PlaneId};
use crate::ftl::blocks::{BlockInfo, PlaneInfo, Stream};
use crate::sched::Die;

/// What a placement policy may look at.
pub struct AllocView<'a> {
    /// Geometry.
    pub geo: &'a Geometry,
    /// Dies (their queues give their load).
    pub dies: &'a [Die],
    /// Planes (their pools give their free blocks).
    pub planes: &'a [PlaneInfo],
    /// Blocks (an open block's write pointer gives its free pages).
    pub blocks: &'a [BlockInfo],
    /// Per plane: host writes placed there that have not taken their page yet.
    pub placed: &'a [u32],
    /// GC threshold in free blocks per plane.
    pub gc_threshold: u32,
}

/// A write-placement policy.
pub trait WritePlace: Send {
    /// The plane a host write of `lpn` goes to.
    fn place(&mut self, lpn: u32, view: &AllocView) -> PlaneId;
}

/// Static striping of logical pages over channel/chip/die/plane, first dimension fastest.
#[derive(Debug, Clone)]
pub struct Striping {
    /// Plane of each residue of a logical page modulo the data planes (the stripe repeats).
    planes: Vec<u32>,
}

impl Striping {
    /// Striping of `g`'s data planes in `order`.
    pub fn new(order: [StripeDim; 4], g: &Geometry) -> Self {
        let planes = (0..g.data_planes())
            .map(|residue| {
                let mut rest = residue;
                let mut coord = [0u32; 4]; // channel, chip, die, plane
                for dim in order {
                    let (slot, radix) = match dim {
                        StripeDim::Channel => (0, g.data_channels),
                        StripeDim::Chip => (1, g.chips_per_channel),
                        StripeDim::Die => (2, g.dies_per_chip),
                        StripeDim::Plane => (3, g.planes_per_die),
                    };
                    coord[slot] = rest % radix;
                    rest /= radix;
                }
                g.plane_at(coord[0], coord[1], coord[2], coord[3]).0
            })
            .collect();
        Striping { planes }
    }

    /// Logical pages in one round of the stripe (the data planes).
    pub fn period(&self) -> u32 {
        self.planes.len() as u32
    }

    /// The plane that holds `lpn` under static striping.
    pub fn plane(&self, lpn: u32) -> PlaneId {
        PlaneId(self.planes[(lpn % self.planes.len() as u32) as usize])
    }
}

impl WritePlace for Striping {
    fn place(&mut self, lpn: u32, _view: &AllocView) -> PlaneId {
        self.plane(lpn)
    }
}

/// The die static striping gives the logical page, then the plane of that die with the most
/// free pages for host data (free blocks, and the rest of its open host block), among the
/// planes whose valid, in-flight and placed pages stay below their share of the logical data
/// (`cap`). Without the cap, data piles up on the planes that stay free while another plane's
/// invalid pages wait for a GC that its writes would trigger, until a plane is full of valid
/// data; pages placed but not yet programmed count, or a burst of writes overshoots it. Ties
/// go to the striped plane.
#[derive(Debug, Clone)]
pub struct MostFree {
    striping: Striping,
    cap: u64,
}

impl WritePlace for MostFree {
    fn place(&mut self, lpn: u32, v: &AllocView) -> PlaneId {
        let home = self.striping.plane(lpn).0 as usize;
        let ppd = v.geo.planes_per_die as usize;
        let first = home - home % ppd;
        let ppb = v.geo.pages_per_block;
        let held = |p: usize| {
            let pl = &v.planes[p];
            pl.valid + u64::from(pl.inflight) + u64::from(v.placed[p])
        };
        let free_pages = |p: usize| {
            let pl = &v.planes[p];
            let open = pl.active[Stream::user(Level::Normal).index()];
            let rest = v
                .blocks
                .get(open as usize)
                .map_or(0, |b| ppb.saturating_sub(b.write_ptr));
            u64::from(pl.free_blocks()) * u64::from(ppb) + u64::from(rest)
        };
        let best = (first..first + ppd)
            .filter(|&p| held(p) < self.cap)
            .max_by_key(|&p| (free_pages(p), p == home, std::cmp::Reverse(p)));
        // Every plane of the die at its share: the one holding least.
        let p = best.unwrap_or_else(|| {
            (first..first + ppd)
                .min_by_key(|&p| (held(p), p != home))
                .expect("a die has at least one plane")
        });
        PlaneId(p as u32)
    }
}

/// Least-busy die first (skipping dies whose planes are all at the GC threshold while others are
/// not), then the plane of that die with most free blocks. Ties go to the lowest index.
#[derive(Debug, Default)]
pub struct LeastBusy;

impl WritePlace for LeastBusy {
    fn place(&mut self, _lpn: u32, v: &AllocView) -> PlaneId {
        let ppd = v.geo.planes_per_die as usize;
        let best_plane = |die: usize| {
            (die * ppd..(die + 1) * ppd)
                .max_by_key(|&p| (v.planes[p].free_blocks(), std::cmp::Reverse(p)))
                .expect("a die has at least one plane")
        };
        let mut choice: Option<(bool, u32, usize)> = None;
        for (die, d) in v.dies.iter().enumerate().take(v.geo.data_dies() as usize) {
            let pressured = v.planes[best_plane(die)].free_blocks() <= v.gc_threshold;
            let key = (pressured, d.load(), die);
            if choice.is_none_or(|c| key < c) {
                choice = Some(key);
            }
        }
        let (_, _, die) = choice.expect("at least one die");
        PlaneId(best_plane(die) as u32)
    }
}

/// The policy object for a config's allocation; `logical` pages of host data.
pub fn policy(cfg: &crate::config::Config, g: &Geometry, logical: u32) -> Box<dyn WritePlace> {
    let striping = Striping::new(cfg.ftl.stripe_order, g);
    match (cfg.ftl.allocation, cfg.ftl.plane_choice) {
        (Allocation::Static, PlaneChoice::Static) => Box::new(striping),
        (Allocation::Static, PlaneChoice::MostFree) => Box::new(MostFree {
            striping,
            cap: u64::from(logical).div_ceil(u64::from(g.data_planes())),
        }),
        (Allocation::Dynamic, _) => Box::new(LeastBusy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            data_channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 8,
            page_size_bytes: 4096,
        }
    }

    #[test]
    fn channel_first_striping_alternates_channels() {
        let g = geo();
        let s = Striping::new(
            [
                StripeDim::Channel,
                StripeDim::Chip,
                StripeDim::Die,
                StripeDim::Plane,
            ],
            &g,
        );
        let planes: Vec<u32> = (0..8).map(|l| s.plane(l).0).collect();
        // lpn 0 → ch0 chip0, 1 → ch1 chip0, 2 → ch0 chip1, 3 → ch1 chip1, then plane 1.
        assert_eq!(planes, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        let s = Striping::new(
            [
                StripeDim::Plane,
                StripeDim::Die,
                StripeDim::Chip,
                StripeDim::Channel,
            ],
            &g,
        );
        let planes: Vec<u32> = (0..8).map(|l| s.plane(l).0).collect();
        assert_eq!(planes, (0..8).collect::<Vec<_>>());
    }

    fn dies_with_load(loads: &[u32]) -> Vec<Die> {
        loads
            .iter()
            .map(|&n| {
                let mut d = Die::default();
                d.queues.reads.extend((0..n).map(|i| (u64::from(i), i)));
                d
            })
            .collect()
    }

    fn planes_with_free(free: &[u32]) -> Vec<PlaneInfo> {
        free.iter().map(|&n| PlaneInfo::new(0, n)).collect()
    }

    #[test]
    fn most_free_takes_the_roomiest_plane_of_the_striped_die_below_its_share() {
        let g = geo();
        let dies = dies_with_load(&[0, 0, 0, 0]);
        let mut planes = planes_with_free(&[5, 6, 5, 5, 1, 1, 5, 5]);
        let mut placed = [0u32; 8];
        let order = [
            StripeDim::Plane,
            StripeDim::Die,
            StripeDim::Chip,
            StripeDim::Channel,
        ];
        let mut m = MostFree {
            striping: Striping::new(order, &g),
            cap: 10,
        };
        let mut at = |lpn: u32, planes: &[PlaneInfo], placed: &[u32]| {
            let v = AllocView {
                geo: &g,
                dies: &dies,
                planes,
                blocks: &[],
                placed,
                gc_threshold: 2,
            };
            m.place(lpn, &v)
        };
        // lpn 0 stripes to plane 0; plane 1 of its die has more free blocks.
        assert_eq!(at(0, &planes, &placed), PlaneId(1));
        // Valid, in-flight and placed pages all count against a plane's share.
        planes[1].valid = 6;
        planes[1].inflight = 2;
        placed[1] = 2;
        assert_eq!(at(0, &planes, &placed), PlaneId(0));
        // Both at their share: the one holding fewer pages.
        planes[0].valid = 11;
        assert_eq!(at(0, &planes, &placed), PlaneId(1));
        // lpn 4 stripes to plane 4, whose die's planes have as much room each: a tie goes
        // to the striped plane.
        assert_eq!(at(4, &planes, &placed), PlaneId(4));
    }

    #[test]
    fn least_busy_avoids_loaded_and_pressured_dies() {
        let g = geo();
        let planes = planes_with_free(&[5, 6, 5, 5, 1, 1, 5, 5]);
        let dies = dies_with_load(&[3, 1, 0, 2]);
        let view = AllocView {
            geo: &g,
            dies: &dies,
            planes: &planes,
            blocks: &[],
            placed: &[0; 8],
            gc_threshold: 2,
        };
        // Die 2 is idle but both its planes are at the GC threshold: die 1 wins.
        assert_eq!(LeastBusy.place(0, &view), PlaneId(2));
        let dies = dies_with_load(&[0, 1, 0, 2]);
        let view = AllocView {
            geo: &g,
            dies: &dies,
            planes: &planes,
            blocks: &[],
            placed: &[0; 8],
            gc_threshold: 2,
        };
        assert_eq!(LeastBusy.place(0, &view), PlaneId(1));
    }
}
