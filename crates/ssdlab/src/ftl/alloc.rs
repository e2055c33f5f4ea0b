//! Write placement: which plane a host write of a logical page goes to.

use crate::config::{Allocation, PlaneChoice, StripeDim};
use crate::flash::{Geometry, PlaneId};
use crate::ftl::blocks::{BlockInfo, PlaneInfo};
use crate::ftl::mapping::{Mapping, NONE};
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
    /// The mapping (where each logical page's current version is).
    pub map: &'a Mapping,
    /// The stream slot of the page's host writes at the normal level ([`Stream::slot`]: its
    /// flow's when flows have blocks of their own).
    pub user_slot: usize,
}

/// A write-placement policy.
pub trait WritePlace: Send {
    /// The plane a host write of `lpn` goes to.
    fn place(&mut self, lpn: u32, view: &AllocView) -> PlaneId;
    /// Whether the plane is picked when the write starts on its die rather than when it is
    /// queued (the write then waits on the die striping gives it, and `place` must keep it
    /// there).
    fn at_start(&self) -> bool {
        false
    }
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

/// DiskSim's plane choice (`ssd_pick_parunits` in `ssd_timing.c`): the die static striping
/// gives the logical page, then, searching its planes round robin from the plane after the one
/// chosen last on that die, the first with the most free pages for host data (free blocks, the
/// rest of its open host block, less the writes placed there and not yet given a page — what
/// DiskSim subtracts for writes picked in the same batch) among the planes whose open block is
/// newer than the block holding the page's current version (DiskSim's block-sequence rule, so
/// the newest version is the one in the newest block). Ours, not DiskSim's: a plane whose
/// valid and in-flight pages reach `limit` is skipped — without it valid data can pile onto
/// the planes that stay free until one is full of it (a stall the property test found; DiskSim
/// exits with "cannot find a plane to write"). The limit leaves the GC threshold and two more
/// blocks of every plane for pages that are not valid, or the plane's share of the logical data
/// if that is higher (a small plane), so on a drive of DiskSim's size it never binds.
#[derive(Debug, Clone)]
pub struct MostFree {
    striping: Striping,
    limit: u64,
    /// Per die: the plane (within the die) the next search starts from.
    next: Vec<u32>,
}

impl WritePlace for MostFree {
    fn place(&mut self, lpn: u32, v: &AllocView) -> PlaneId {
        let home = self.striping.plane(lpn).0 as usize;
        let ppd = v.geo.planes_per_die as usize;
        let first = home - home % ppd;
        let die = home / ppd;
        let ppb = v.geo.pages_per_block;
        let slot = v.user_slot;
        let held = |p: usize| {
            let pl = &v.planes[p];
            pl.valid + u64::from(pl.inflight) + u64::from(v.placed[p])
        };
        let free_pages = |p: usize| {
            let pl = &v.planes[p];
            let rest = v
                .blocks
                .get(pl.active(slot) as usize)
                .map_or(0, |b| ppb.saturating_sub(b.write_ptr));
            (u64::from(pl.free_blocks()) * u64::from(ppb) + u64::from(rest))
                .saturating_sub(u64::from(v.placed[p]))
        };
        let previous = match v.map.ppn(lpn) {
            NONE => None,
            ppn => v
                .blocks
                .get((ppn / ppb) as usize)
                .map(|b| ((ppn / ppb), b.opened)),
        };
        // An open block holding the current version, or opened after its block (a plane with
        // none open opens a new one). Blocks the fill wrote are all of one age.
        let newer = |p: usize| {
            let open = v.planes[p].active(slot);
            let Some((block, seq)) = previous else {
                return true;
            };
            match v.blocks.get(open as usize) {
                None => true,
                Some(b) => open == block || b.opened > seq || (b.opened == 0 && seq == 0),
            }
        };
        let start = self.next.get(die).copied().unwrap_or(0) as usize;
        let mut best: Option<(u64, usize)> = None;
        for k in 0..ppd {
            let p = first + (start + k) % ppd;
            if held(p) >= self.limit || !newer(p) {
                continue;
            }
            let free = free_pages(p);
            if best.is_none_or(|(f, _)| free > f) {
                best = Some((free, p));
            }
        }
        // No plane qualifies: the one holding least.
        let p = best.map_or_else(
            || {
                (first..first + ppd)
                    .min_by_key(|&p| (held(p), p != home))
                    .expect("a die has at least one plane")
            },
            |(_, p)| p,
        );
        if let Some(n) = self.next.get_mut(die) {
            *n = ((p - first + 1) % ppd) as u32;
        }
        PlaneId(p as u32)
    }

    /// DiskSim picks the plane when the element issues the write (after any clean it runs
    /// first), not when the request arrives.
    fn at_start(&self) -> bool {
        true
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
        (Allocation::Static, PlaneChoice::MostFree) => {
            let share = u64::from(logical).div_ceil(u64::from(g.data_planes()));
            let threshold =
                crate::config::gc_threshold_blocks(cfg.ftl.gc_threshold, g.blocks_per_plane);
            let spare = g.blocks_per_plane.saturating_sub(threshold + 2);
            let data_ppb = g.pages_per_block - cfg.ftl.summary_pages;
            Box::new(MostFree {
                striping,
                limit: share.max(u64::from(spare) * u64::from(data_ppb)),
                next: vec![0; g.dies() as usize],
            })
        }
        (Allocation::Dynamic, _) => Box::new(LeastBusy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::blocks::Stream;
    use crate::ftl::mapping::VersionTables;

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
                for i in 0..n {
                    d.queues.reads.push_back((u64::from(i), i), 0);
                }
                d
            })
            .collect()
    }

    fn planes_with_free(free: &[u32]) -> Vec<PlaneInfo> {
        free.iter().map(|&n| PlaneInfo::new(0, n)).collect()
    }

    #[test]
    fn most_free_searches_round_robin_for_the_roomiest_plane_newer_than_the_old_version() {
        // One die of four planes, 8 blocks of 8 pages each.
        let g = Geometry {
            channels: 1,
            data_channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 4,
            blocks_per_plane: 8,
            pages_per_block: 8,
            page_size_bytes: 4096,
        };
        let dies = dies_with_load(&[0]);
        let mut planes: Vec<PlaneInfo> = (0..4).map(|p| PlaneInfo::new(p * 8, 8)).collect();
        let mut blocks = vec![BlockInfo::new(); 32];
        // Every plane has one open host block (its first), opened in order 1..=4, 4 pages in.
        let slot = Stream::USER.index();
        for (p, pl) in planes.iter_mut().enumerate() {
            let b = pl.take_free(slot).unwrap() as usize;
            blocks[b].write_ptr = 4;
            blocks[b].opened = p as u32 + 1;
        }
        let mut map = Mapping::new(16, 32 * 8, VersionTables::Sparse).unwrap();
        let mut m = MostFree {
            striping: Striping::new([StripeDim::Plane; 4], &g),
            limit: 1000,
            next: vec![0],
        };
        let mut at = |lpn: u32, planes: &[PlaneInfo], blocks: &[BlockInfo], map: &Mapping| {
            let v = AllocView {
                geo: &g,
                dies: &dies,
                planes,
                blocks,
                placed: &[0; 4],
                gc_threshold: 1,
                map,
                user_slot: Stream::USER.index(),
            };
            m.place(lpn, &v).0
        };
        // Equal room everywhere: round robin from plane 0, whatever the page.
        let order: Vec<u32> = (0..6).map(|l| at(l, &planes, &blocks, &map)).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 0, 1]);
        // Plane 3 has a page more: it wins from wherever the search starts.
        blocks[24].write_ptr = 3;
        assert_eq!(at(0, &planes, &blocks, &map), 3);
        blocks[24].write_ptr = 4;
        // A page whose current version is in plane 2's open block (opened 3rd) may go to the
        // planes whose open block is that one or newer: 2 and 3. The search starts at 0 now.
        map.remap(5, 16 * 8);
        assert_eq!(at(5, &planes, &blocks, &map), 2);
        assert_eq!(at(5, &planes, &blocks, &map), 3);
        // A plane holding its limit of valid pages is skipped.
        planes[0].valid = 1000;
        assert_eq!(at(0, &planes, &blocks, &map), 1);
    }

    #[test]
    fn least_busy_avoids_loaded_and_pressured_dies() {
        let g = geo();
        let map = Mapping::new(1, 1, VersionTables::Sparse).unwrap();
        let planes = planes_with_free(&[5, 6, 5, 5, 1, 1, 5, 5]);
        let dies = dies_with_load(&[3, 1, 0, 2]);
        let view = AllocView {
            geo: &g,
            dies: &dies,
            planes: &planes,
            blocks: &[],
            placed: &[0; 8],
            gc_threshold: 2,
            map: &map,
            user_slot: Stream::USER.index(),
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
            map: &map,
            user_slot: Stream::USER.index(),
        };
        assert_eq!(LeastBusy.place(0, &view), PlaneId(1));
    }
}
