//! Correctness checks (`--verify`): read versions, mapping consistency and page conservation.
//! A failure is a bug in the model; the message says what broke where.

use crate::flash::{BlockId, Ppn};
use crate::ftl::blocks::BlockState;
use crate::ftl::mapping::NONE;
use crate::ftl::Ftl;
use thiserror::Error;

/// A violated invariant.
#[derive(Debug, Error)]
#[error("verification failed: {0}")]
pub struct VerifyError(pub String);

fn fail<T>(msg: String) -> Result<T, VerifyError> {
    Err(VerifyError(msg))
}

/// A read of `lpn` from `ppn` must return at least the version that was newest when the read
/// arrived, from a page whose block was not erased meanwhile; an unmapped read must be of a
/// page never written.
///
/// # Errors
/// [`VerifyError`] naming the page and versions.
pub fn check_read(
    ftl: &Ftl,
    lpn: u32,
    ppn: u32,
    expected: u32,
    erase_epoch: u32,
) -> Result<(), VerifyError> {
    if ppn == NONE {
        if expected != 0 {
            return fail(format!(
                "read of lpn {lpn} found no mapping but version {expected} was written"
            ));
        }
        return Ok(());
    }
    let block = ftl.geo.block_of(Ppn(ppn));
    if ftl.blocks[block.0 as usize].erase_count != erase_epoch {
        return fail(format!(
            "read of lpn {lpn} from ppn {ppn}: block {} was erased while the read was queued",
            block.0
        ));
    }
    let held = ftl.map.held(ppn);
    if held < expected {
        return fail(format!("read of lpn {lpn} from ppn {ppn} returned version {held}, but version {expected} was already written"));
    }
    Ok(())
}

/// A block about to be erased must hold no mapped page.
///
/// # Errors
/// [`VerifyError`] naming a page still mapped.
pub fn check_erasable(ftl: &Ftl, block: BlockId) -> Result<(), VerifyError> {
    if let Some((ppn, lpn)) = ftl.valid_pages(block).next() {
        return fail(format!(
            "erasing block {} but ppn {} still holds lpn {lpn}",
            block.0, ppn.0
        ));
    }
    if ftl.blocks[block.0 as usize].valid != 0 {
        return fail(format!(
            "erasing block {} whose valid count is {}",
            block.0, ftl.blocks[block.0 as usize].valid
        ));
    }
    Ok(())
}

/// Full structural check: l2p and p2l are inverse, every mapped page holds the newest version
/// (unless `newer_elsewhere(lpn)`: a write of it is in flight or dirty in the device buffer),
/// per-block valid counts match the mapping, valid + invalid + free = pages per block, and free
/// blocks are in their plane's pool.
///
/// # Errors
/// [`VerifyError`] for the first violation found.
pub fn check_ftl(ftl: &Ftl, newer_elsewhere: &dyn Fn(u32) -> bool) -> Result<(), VerifyError> {
    let g = &ftl.geo;
    let mut mapped = 0u64;
    // Translation pages of a mapping cache are logical pages too.
    for lpn in 0..ftl.map.all_logical_pages() {
        let ppn = ftl.map.ppn(lpn);
        if ppn == NONE {
            continue;
        }
        mapped += 1;
        if ftl.map.lpn(ppn) != lpn {
            return fail(format!(
                "lpn {lpn} maps to ppn {ppn}, which maps back to {}",
                ftl.map.lpn(ppn)
            ));
        }
        if !newer_elsewhere(lpn) && ftl.map.held(ppn) != ftl.map.newest(lpn) {
            return fail(format!(
                "lpn {lpn}: ppn {ppn} holds version {}, newest written is {}",
                ftl.map.held(ppn),
                ftl.map.newest(lpn)
            ));
        }
    }
    let mut valid_total = 0u64;
    for (b, info) in ftl.blocks.iter().enumerate() {
        let first = g.first_page(BlockId(b as u32)).0;
        let ppb = g.pages_per_block;
        let (mut valid, mut zombies) = (0, 0);
        // With flows in blocks of their own, a block the run opened holds one flow's pages
        // (the direct fill's blocks, never opened by the run, may hold two where one flow's
        // pages end and the next's begin).
        let one_flow = ftl.block_flows() > 1 && info.opened > 0;
        let mut flow = None;
        for p in first..first + ppb {
            let lpn = ftl.map.lpn(p);
            if lpn == NONE {
                continue;
            }
            if one_flow {
                let f = ftl.flow_of(lpn);
                if *flow.get_or_insert(f) != f {
                    return fail(format!(
                        "block {b} holds pages of flows {} and {f} (lpn {lpn}), though flows have blocks of their own",
                        flow.unwrap_or(f)
                    ));
                }
            }
            zombies += u32::from(ftl.is_zombie(lpn));
            if p - first >= info.write_ptr {
                return fail(format!(
                    "ppn {p} is mapped (lpn {lpn}) but lies beyond block {b}'s write pointer {}",
                    info.write_ptr
                ));
            }
            if ftl.map.ppn(lpn) != p {
                return fail(format!(
                    "ppn {p} claims lpn {lpn}, which maps to {}",
                    ftl.map.ppn(lpn)
                ));
            }
            valid += 1;
        }
        if valid != info.valid {
            return fail(format!(
                "block {b}: valid count {} but {valid} pages are mapped",
                info.valid
            ));
        }
        if zombies != info.zombies {
            return fail(format!(
                "block {b}: zombie count {} but {zombies} of its valid pages are dirty in the host buffer",
                info.zombies
            ));
        }
        let free = ppb - info.write_ptr;
        let invalid = info.write_ptr - info.valid - info.inflight;
        if valid + invalid + info.inflight + free != ppb {
            return fail(format!("block {b}: valid {valid} + invalid {invalid} + in flight {} + free {free} != {ppb}", info.inflight));
        }
        let key = ftl.expected_gc_key(b);
        if ftl.gc_key(BlockId(b as u32)) != key {
            return fail(format!(
                "block {b}: GC key {} but its state and valid count give {key}",
                ftl.gc_key(BlockId(b as u32))
            ));
        }
        if info.state == BlockState::Free && info.write_ptr != 0 {
            return fail(format!(
                "block {b} is in the free pool but has {} pages written",
                info.write_ptr
            ));
        }
        valid_total += u64::from(valid);
    }
    if valid_total != mapped {
        return fail(format!(
            "{mapped} logical pages mapped but {valid_total} physical pages valid"
        ));
    }
    for (p, plane) in ftl.planes.iter().enumerate() {
        let (valid, inflight) = ftl.block_sums(crate::flash::PlaneId(p as u32));
        if (plane.valid, plane.inflight) != (valid, inflight) {
            return fail(format!(
                "plane {p}: counts {} valid, {} in flight, but its blocks hold {valid} and {inflight}",
                plane.valid, plane.inflight
            ));
        }
        for std::cmp::Reverse((_, b)) in plane.free.iter() {
            if ftl.blocks[*b as usize].state != BlockState::Free
                || g.plane_of_block(BlockId(*b)).0 as usize != p
            {
                return fail(format!("plane {p}'s free pool holds block {b}, which is not a free block of this plane"));
            }
        }
    }
    Ok(())
}
