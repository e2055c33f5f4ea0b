//! What both fill methods share (the page-by-page one in `precondition.rs`, the direct one in
//! `direct.rs`, which `precondition.rs` calls): progress reports and the error of a fill that
//! cannot be placed.

/// Receives preconditioning progress as (pages done, pages in total); called from worker
/// threads, about every 64 Ki pages.
pub type FillProgress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Progress reports come at least this many pages apart.
pub(super) const PROGRESS_PAGES: u64 = 1 << 16;

/// An error that makes preconditioning impossible (the plane cannot hold its share).
#[derive(Debug, thiserror::Error)]
#[error("preconditioning: plane {plane} is full of valid data and GC finds no victim; lower precondition.fill or raise ftl.over_provisioning")]
pub struct PreconditionError {
    pub(super) plane: u32,
}
