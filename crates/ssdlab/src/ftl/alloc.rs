//! Write placement: which plane a host write of a logical page goes to.

use crate::config::{Allocation, StripeDim};
use crate::flash::{Die, Geometry, PlaneId};
use crate::ftl::blocks::PlaneInfo;

/// What a placement policy may look at.
pub struct AllocView<'a> {
    /// Geometry.
    pub geo: &'a Geometry,
    /// Dies (their queues give their load).
    pub dies: &'a [Die],
    /// Planes (their pools give their free blocks).
    pub planes: &'a [PlaneInfo],
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

/// The policy object for a config value.
pub fn policy(a: Allocation, order: [StripeDim; 4], g: &Geometry) -> Box<dyn WritePlace> {
    match a {
        Allocation::Static => Box::new(Striping::new(order, g)),
        Allocation::Dynamic => Box::new(LeastBusy),
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
    fn least_busy_avoids_loaded_and_pressured_dies() {
        let g = geo();
        let planes = planes_with_free(&[5, 6, 5, 5, 1, 1, 5, 5]);
        let dies = dies_with_load(&[3, 1, 0, 2]);
        let view = AllocView {
            geo: &g,
            dies: &dies,
            planes: &planes,
            gc_threshold: 2,
        };
        // Die 2 is idle but both its planes are at the GC threshold: die 1 wins.
        assert_eq!(LeastBusy.place(0, &view), PlaneId(2));
        let dies = dies_with_load(&[0, 1, 0, 2]);
        let view = AllocView {
            geo: &g,
            dies: &dies,
            planes: &planes,
            gc_threshold: 2,
        };
        assert_eq!(LeastBusy.place(0, &view), PlaneId(1));
    }
}
