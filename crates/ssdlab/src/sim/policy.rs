//! The policy slots schemes fill. The core calls these traits at its decision points and
//! names no scheme; a slot left empty means the core's default behaviour. The slots are the
//! core's: schemes (a layer above) implement them, and `crate::schemes` fills a [`Policies`]
//! from the registry for the schemes in force.
//!
//! Two kinds of slot:
//! * Stateless or self-contained decisions the core asks in its innermost loops: [`GcExec`]
//!   (how GC shares a die with host work) and [`DieGate`] (whether a die may start programs
//!   and erases now).
//! * A scheme's policy object ([`Policy`]), which may keep state and queue its own flash work.
//!   It is the sum of small traits, one per seam, each with defaults that leave the core's
//!   behaviour unchanged: [`ReadRoute`] (where a host read is served), [`WriteFanout`] (what a
//!   placed program or an erase adds: mirrors, parity, refresh timers), [`HostMap`] (a layer
//!   between host pages and FTL pages, e.g. content ids), [`HostCache`] (a host-side page
//!   cache in front of the device), [`GcRelocate`] (what GC moves and where),
//!   [`OwnedOps`] (completions of the operations it queued, its timers) and [`Lifecycle`]
//!   (start, power loss, verification, its report).
//!
//! A policy reaches the core only through [`Ctx`]: what it asks for is done in order once it
//! returns, so policies never re-enter the core.

use super::{Ctx, Notice, Op, SimError};
use crate::buffer::Hotness;
use crate::config::Config;
use crate::flash::Level;
use crate::ftl::blocks::Stream;
use crate::metrics::{Metrics, Summary};
pub use crate::sched::gc_exec::{GcExec, GcView};
use crate::verify::VerifyError;

/// Whether a die may start programs and erases now (reads always may).
pub trait DieGate: Send {
    /// True: `die` holds its programs and erases at time `now_ns`.
    fn holds(&self, die: usize, now_ns: u64) -> bool;
}

/// Which threshold-voltage level a program uses.
pub trait ProgramLevel: Send {
    /// Level of data written before the trace (the drive was formatted under this policy).
    fn fill_level(&self) -> Level {
        Level::Normal
    }
    /// Level of a host page leaving the device buffer with hotness `class` (`None`: a write
    /// that bypasses the buffer).
    fn level(&self, class: Option<Hotness>) -> Level;
    /// Whether a clean page leaving the buffer with `class` is rewritten at the high level.
    fn rewrite_clean(&self, _class: Hotness) -> bool {
        false
    }
    /// `lpn` left the device buffer classed `class` (kept with its mapping entry).
    fn classified(&mut self, _lpn: u32, _class: Hotness) {}
    /// Level GC relocates `lpn` at, moving it out of a block programmed at `victim`.
    fn relocation_level(&self, _lpn: u32, victim: Level) -> Level {
        victim
    }
    /// Levels the drive keeps open blocks for.
    fn levels(&self) -> &'static [Level] {
        &[Level::Normal]
    }
    /// Whether GC may move a page to another level than its victim's ([`Self::relocation_level`]
    /// is not the identity).
    fn relevels(&self) -> bool {
        false
    }
}

/// Where a host read page is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Queue it as it stands (the policy may have pointed it at another copy).
    Queue,
    /// Queue it and call [`ReadRoute::served`] when it is done.
    QueueAndTell,
    /// The policy serves it itself (it completes through [`Ctx::finish_read`]).
    Taken,
}

/// Where a host read is served: at home, from a copy, or rebuilt.
pub trait ReadRoute {
    /// Decides for `op` (a user read at its home location, `home_die`); `conflicted`: the home
    /// die is running or has queued ahead of it a program or erase.
    fn route(
        &mut self,
        _cx: &mut Ctx,
        _op: &mut Op,
        _home_die: usize,
        _conflicted: bool,
    ) -> Result<Route, SimError> {
        Ok(Route::Queue)
    }
    /// A read routed with [`Route::QueueAndTell`] is done.
    fn served(&mut self, _cx: &mut Ctx, _op: &Op) {}
}

/// What a placed program or a GC erase adds (mirror programs, parity, refresh timers), and
/// what other policies announce.
pub trait WriteFanout {
    /// A program took the first page of `block`.
    fn block_opened(&mut self, _cx: &mut Ctx, _block: u32) {}
    /// Program `id` (a user, GC or scheme program) has just been given its page.
    ///
    /// # Errors
    /// A policy that cannot grow its tables ([`SimError::OutOfMemory`]).
    fn placed(&mut self, _cx: &mut Ctx, _id: u32) -> Result<(), SimError> {
        Ok(())
    }
    /// Another part of the drive announces `n`.
    fn notice(&mut self, _cx: &mut Ctx, _n: Notice) {}
}

/// A layer between host pages and the FTL's pages (e.g. content ids).
pub trait HostMap {
    /// Host logical pages, if this layer defines them.
    fn host_pages(&self) -> Option<u32> {
        None
    }
    /// The FTL page host page `lpn` points to now (no side effect, unlike [`HostMap::read`]).
    fn current(&self, lpn: u32) -> u32 {
        lpn
    }
    /// The FTL page a host read of `lpn` goes to.
    fn read(&mut self, _cx: &mut Ctx, lpn: u32) -> Result<u32, SimError> {
        Ok(lpn)
    }
    /// A host write of `lpn` (content fingerprint `print`) in request `req`: the FTL page to
    /// store, or `None` when the layer completes the page itself.
    fn write(
        &mut self,
        _cx: &mut Ctx,
        _req: u32,
        lpn: u32,
        _print: Option<u64>,
    ) -> Result<Option<u32>, SimError> {
        Ok(Some(lpn))
    }
    /// A program of FTL page `lpn` finished (the controller's hold on it may be gone).
    fn programmed(&mut self, _cx: &mut Ctx, _lpn: u32) {}
    /// References to FTL page `cid`, if this layer counts them.
    fn references(&self, _cid: u32) -> Option<u32> {
        None
    }
    /// The layer's counter before a host request (passed back to `request_done`).
    fn request_mark(&self) -> Option<u64> {
        None
    }
    /// Accounts a finished host request of `pages` pages (`before` from `request_mark`).
    fn request_done(&self, _m: &mut Metrics, _read: bool, _pages: u64, _before: u64) {}
}

/// What a host-side cache did with a host read page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRead {
    /// Not cached: the device serves it.
    Miss,
    /// Served from the cache (the policy completed the page).
    Hit,
    /// Not cached, and caching it evicted dirty page `.0`: the device stores that page as part
    /// of this request (the policy counted the extra page), then serves the read.
    MissWritingBack(u32),
}

/// What a host-side cache did with a host write page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheWrite {
    /// No cache: the device stores it.
    Through,
    /// Held in the cache (the policy completed the page).
    Absorbed,
    /// Held in the cache, which wrote back dirty page `.0`: the device stores that page and
    /// the request waits for it.
    WriteBack(u32),
}

/// A host-side page cache in front of the device (a host write buffer).
pub trait HostCache {
    /// A host read of `lpn` in request `req`.
    fn cache_read(&mut self, _cx: &mut Ctx, _req: u32, _lpn: u32) -> CacheRead {
        CacheRead::Miss
    }
    /// A host write of `lpn` in request `req`.
    fn cache_write(&mut self, _cx: &mut Ctx, _req: u32, _lpn: u32) -> CacheWrite {
        CacheWrite::Through
    }
    /// The device buffer evicts dirty page `lpn` (completing `req` when it is stored): true if
    /// the policy drops it instead (and completes `req` itself).
    fn drop_evicted(&mut self, _cx: &mut Ctx, _lpn: u32, _req: u32) -> bool {
        false
    }
}

/// How GC relocates one valid page.
#[derive(Debug, Clone, Copy, Default)]
pub struct Relocation {
    /// Take the data from the device buffer (a program only).
    pub from_buffer: bool,
    /// Program it into the plane's dedicated blocks.
    pub dedicated: bool,
}

/// What GC moves and how.
pub trait GcRelocate {
    /// How to move `lpn`; `refresh`: the job refreshes a fast block rather than collecting.
    fn relocation(&mut self, _cx: &mut Ctx, _lpn: u32, _refresh: bool) -> Relocation {
        Relocation::default()
    }
    /// A block due for refresh on `plane`, claimed as its next GC victim.
    fn claim_refresh(&mut self, _cx: &mut Ctx, _plane: u32) -> Option<u32> {
        None
    }
}

/// Completions of the operations a policy queued, and its timers.
pub trait OwnedOps {
    /// An operation made with [`Ctx::blank_op`] by this policy is done.
    fn done(&mut self, _cx: &mut Ctx, _op: &Op) -> Result<(), SimError> {
        Ok(())
    }
    /// A timer set with [`Ctx::timer`] fell due.
    fn timer(&mut self, _cx: &mut Ctx, _a: u32, _b: u32) {}
    /// `die` is idle with nothing it may start.
    fn idle(&mut self, _cx: &mut Ctx, _die: usize) {}
}

/// Start, power loss, verification and the policy's part of the report.
pub trait Lifecycle {
    /// The per-event seams the policy implements (see [`Seam`]).
    fn seams(&self) -> &'static [Seam];
    /// Once, after preconditioning, before the first request.
    fn start(&mut self, _cx: &mut Ctx) -> Result<(), SimError> {
        Ok(())
    }
    /// Write streams to open on every plane besides the host streams (`fill`: the level of
    /// preconditioned data).
    fn extra_streams(&self, _fill: Level) -> Vec<Stream> {
        Vec::new()
    }
    /// Simulated power loss: volatile state is lost.
    fn power_loss(&mut self, _cx: &mut Ctx) {}
    /// Restart after a power loss, once the device buffer's flush is queued.
    fn restarted(&mut self, _cx: &mut Ctx) {}
    /// Whether the policy holds a newer version of `lpn` than flash (end-of-run check).
    fn holds_newer(&self, _lpn: u32) -> bool {
        false
    }
    /// End-of-run consistency checks of the policy's own state.
    fn verify(&self, _ftl: &crate::ftl::Ftl) -> Result<(), VerifyError> {
        Ok(())
    }
    /// The policy's own tables for a run of `cfg`, as (what, upper bound in bytes), for the
    /// memory estimate made before anything is allocated ([`crate::sim::memory`]).
    fn table_bytes(
        &self,
        _cfg: &Config,
        _t: &crate::sim::memory::Tables,
    ) -> Option<(&'static str, u64)> {
        None
    }
    /// Physical space over that of the same drive without the scheme.
    fn space_factor(&self) -> Option<f64> {
        None
    }
    /// Fills the policy's sections of the summary.
    fn report(&self, _m: &Metrics, _s: &mut Summary) {}
}

/// The per-event seams of a policy object. The core calls a policy at a seam only if the
/// policy lists it in [`Lifecycle::seams`] (so a run pays nothing at the seams no policy uses);
/// completions, timers and served reads are routed to their owner, the host-path layers have
/// their own slots, and the rare lifecycle calls reach every policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seam {
    /// [`ReadRoute::route`].
    ReadRoute,
    /// [`WriteFanout::placed`].
    Placed,
    /// [`WriteFanout::block_opened`].
    BlockOpened,
    /// [`WriteFanout::notice`] of [`Notice::Written`].
    Written,
    /// [`WriteFanout::notice`] of [`Notice::HostWritten`].
    HostWritten,
    /// [`WriteFanout::notice`] of [`Notice::Trimmed`].
    Trimmed,
    /// [`WriteFanout::notice`] of [`Notice::RefCount`].
    RefCount,
    /// [`WriteFanout::notice`] of [`Notice::Erasing`].
    Erasing,
    /// [`GcRelocate::relocation`].
    Relocate,
    /// [`GcRelocate::claim_refresh`].
    ClaimRefresh,
    /// [`OwnedOps::idle`].
    Idle,
}

impl Seam {
    /// Number of seams.
    pub const COUNT: usize = 11;

    /// The seam a notice is delivered at.
    pub fn of(n: Notice) -> Seam {
        match n {
            Notice::Written(_) => Seam::Written,
            Notice::HostWritten(_) => Seam::HostWritten,
            Notice::Trimmed(_) => Seam::Trimmed,
            Notice::RefCount { .. } => Seam::RefCount,
            Notice::Erasing(_) => Seam::Erasing,
        }
    }
}

/// A scheme's policy object: every seam trait (most left at their defaults).
pub trait Policy:
    ReadRoute + WriteFanout + HostMap + HostCache + GcRelocate + OwnedOps + Lifecycle + Send
{
}

impl<T> Policy for T where
    T: ReadRoute + WriteFanout + HostMap + HostCache + GcRelocate + OwnedOps + Lifecycle + Send
{
}

/// The policy objects of the schemes in force.
#[derive(Default)]
pub struct Policies {
    /// GC execution mode; `None`: background GC, queued like any other work.
    pub gc_exec: Option<Box<dyn GcExec>>,
    /// Die gating; `None`: programs and erases may start whenever the scheduler picks them.
    pub gate: Option<Box<dyn DieGate>>,
    /// Program levels; `None`: every program at the normal level.
    pub level: Option<Box<dyn ProgramLevel>>,
    /// Stateful policy objects, in registry order (an entry is empty while it is being called).
    pub list: Vec<Option<Box<dyn Policy>>>,
    /// Index in `list` of the policy that maps host pages ([`HostMap`]), if one does.
    pub host_map: Option<u8>,
    /// Index in `list` of the host-side cache ([`HostCache`]), if there is one.
    pub host_cache: Option<u8>,
    /// Per seam, the indices in `list` of the policies that use it.
    pub by_seam: [Vec<u8>; Seam::COUNT],
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies")
            .field("gc_exec", &self.gc_exec.is_some())
            .field("gate", &self.gate.is_some())
            .field("level", &self.level.is_some())
            .field("list", &self.list.len())
            .finish()
    }
}

impl Policies {
    /// Adds a stateful policy object.
    pub fn push(&mut self, policy: Box<dyn Policy>) {
        self.list.push(Some(policy));
    }

    /// Adds the policy object that caches host pages in front of the device (at most one).
    pub fn push_host_cache(&mut self, policy: Box<dyn Policy>) {
        assert!(self.host_cache.is_none(), "one host cache at most");
        self.host_cache = Some(self.list.len() as u8);
        self.push(policy);
    }

    /// The level a page is programmed with, given its hotness class (`None`: never classed).
    pub fn level_for(&self, class: Option<Hotness>) -> Level {
        self.level
            .as_ref()
            .map_or(Level::Normal, |l| l.level(class))
    }

    /// Page `lpn` was classed `class` (it left the device buffer, or pre-processing classed
    /// it): the level policy records it; returns the level to program it at.
    pub fn classified(&mut self, lpn: u32, class: Hotness) -> Level {
        if let Some(l) = self.level.as_mut() {
            l.classified(lpn, class);
        }
        self.level_for(Some(class))
    }

    /// Level of data written before the trace.
    pub fn fill_level(&self) -> Level {
        self.level
            .as_ref()
            .map_or(Level::Normal, |l| l.fill_level())
    }

    /// Levels GC may relocate one victim's pages into (1 unless the level policy re-decides
    /// them).
    pub fn relocation_levels(&self) -> u32 {
        self.level
            .as_ref()
            .filter(|l| l.relevels())
            .map_or(1, |l| l.levels().len() as u32)
    }

    /// Streams every plane keeps open in service: the host stream at each level a program
    /// may use, then the schemes' own.
    pub fn streams(&self) -> Vec<Stream> {
        let levels = self
            .level
            .as_ref()
            .map_or(&[Level::Normal][..], |l| l.levels());
        let fill = self.fill_level();
        levels
            .iter()
            .map(|&l| Stream::user(l))
            .chain(
                self.list
                    .iter()
                    .flatten()
                    .flat_map(|p| p.extra_streams(fill)),
            )
            .collect()
    }

    /// The policy that maps host pages ([`HostMap`]), if one does and it is not being called.
    pub fn mapper(&self) -> Option<&dyn Policy> {
        self.list[self.host_map? as usize].as_deref()
    }

    /// Adds the policy object that maps host pages to the FTL's (at most one).
    pub fn push_host_map(&mut self, policy: Box<dyn Policy>) {
        assert!(self.host_map.is_none(), "one host-page layer at most");
        self.host_map = Some(self.list.len() as u8);
        self.push(policy);
    }
}
