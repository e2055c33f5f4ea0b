//! Inline deduplication and DedupHR (deduphr.txt).
//!
//! The dedup layer sits on the host path (deduphr.txt §3.5): host pages become content ids
//! before anything below them (the staging space, Rails, TTFlash, the FTL) sees them, so every
//! scheme works below deduplication as in the paper's evaluation. DedupHR is the staging space
//! (`staging.rs`) with its reference-count trigger on top of this layer.

use super::hotr::STAGING_WITH_REDUNDANCY;
use super::{Policies, Scheme};
use crate::config::{Config, StagingDesign, StagingPolicy};
use crate::dedup::Dedup;
use crate::metrics::{Metrics, Summary};
use crate::sim::memory::Tables;
use crate::sim::policy::{
    GcRelocate, HostCache, HostMap, Lifecycle, OwnedOps, ReadRoute, Seam, WriteFanout,
};
use crate::sim::{Ctx, Notice, SimError};
use crate::verify::VerifyError;
use rustc_hash::FxHashSet;

const HOST_BUFFER: &str =
    "the dedup layer does not support a host buffer (ShadowGC's zombies live there)";
const DEVICE_BUFFER: &str =
    "the dedup layer does not support a device buffer, and HIRE's hotness comes from one";

/// What the dedup layer cannot run with (DedupHR inherits these through `implies`).
const EXCLUDES: &[(&str, &str)] = &[
    ("ggc", HOST_BUFFER),
    ("greedy-delay", HOST_BUFFER),
    ("greedy-separation", HOST_BUFFER),
    ("zgc", HOST_BUFFER),
    ("hgc", HOST_BUFFER),
    ("dgc", HOST_BUFFER),
    ("sgc", HOST_BUFFER),
    ("hire", DEVICE_BUFFER),
];

fn deduphr_on(c: &crate::config::Config) -> bool {
    c.dedup.enabled
        && c.staging.design != StagingDesign::None
        && c.staging.policy == StagingPolicy::Deduphr
}

/// Inline deduplication alone.
pub const DEDUP: Scheme = Scheme {
    name: "dedup",
    summary:
        "inline dedup: duplicate writes repoint the page (no program); reference counts per content",
    paper: "deduphr.txt §2.2, §3.3",
    sets: &[("dedup.enabled", "true")],
    implies: &[],
    excludes: EXCLUDES,
    active: Some(|c| c.dedup.enabled),
    params: &[],
    install,
};

/// DedupHR: contents with many references copied to the staging chip on the write path.
pub const DEDUPHR: Scheme = Scheme {
    name: "deduphr",
    summary: "DedupHR: dedup + contents whose reference count reaches the threshold copied to a staging chip on write",
    paper: "deduphr.txt §3 (threshold 3, dedicated chip: §4.1)",
    sets: &[
        ("dedup.enabled", "true"),
        ("staging.design", "\"extra-chip\""),
        ("staging.policy", "\"deduphr\""),
    ],
    implies: &["dedup"],
    excludes: &[
        ("rails", STAGING_WITH_REDUNDANCY),
        ("ttflash", STAGING_WITH_REDUNDANCY),
    ],
    active: Some(deduphr_on),
    params: &[],
    install: super::staging::install,
};

fn install(_: &Config, p: &mut Policies) {
    p.push_host_map(Box::new(Layer::default()));
}

/// The dedup layer: the policy object.
#[derive(Debug, Default)]
struct Layer {
    /// Created at start, when the FTL's logical space is known.
    d: Option<Dedup>,
    /// Contents whose last reference went while a program of them was in flight.
    dying: FxHashSet<u32>,
}

impl Layer {
    fn d(&self) -> &Dedup {
        self.d.as_ref().expect("started")
    }

    /// A content lost a reference and has `count` left. At 0 it is trimmed, or, if a program
    /// of it is in flight, once that program is done.
    fn released(&mut self, cx: &mut Ctx, cid: u32, count: u32) {
        cx.notify(Notice::RefCount { cid, count });
        if count > 0 {
            return;
        }
        // A dead content's staged copy goes too.
        cx.notify(Notice::Written(cid));
        if cx.held(cid) {
            self.dying.insert(cid);
        } else {
            self.trim(cx, cid);
        }
    }

    fn trim(&mut self, cx: &mut Ctx, cid: u32) {
        cx.trim(cid);
        cx.notify(Notice::Trimmed(cid));
        if let Some(d) = self.d.as_mut() {
            d.recycle(cid);
        }
    }
}

impl HostMap for Layer {
    fn host_pages(&self) -> Option<u32> {
        Some(self.d().logical_pages())
    }

    fn current(&self, lpn: u32) -> u32 {
        self.d().cid(lpn)
    }

    /// The content id a host read goes to. With `--verify` it checks that the page points to
    /// the content last written to it.
    fn read(&mut self, cx: &mut Ctx, lpn: u32) -> Result<u32, SimError> {
        let d = self.d.as_mut().expect("started");
        if cx.verify() {
            d.check_read(lpn).map_err(VerifyError)?;
        }
        Ok(d.read(lpn))
    }

    /// A duplicate completes once fingerprinted; a unique page is stored (after its
    /// fingerprinting time, during which the controller holds its data).
    fn write(
        &mut self,
        cx: &mut Ctx,
        req: u32,
        lpn: u32,
        print: Option<u64>,
    ) -> Result<Option<u32>, SimError> {
        let d = self.d.as_mut().expect("started");
        let map = &mut cx.ftl().map;
        let out = d.write(lpn, print, &mut || map.push_logical())?;
        if let Some((old, count)) = out.released {
            self.released(cx, old, count);
        }
        let delay = cx.cfg().dedup.fingerprint_ns;
        if out.duplicate {
            cx.notify(Notice::RefCount {
                cid: out.cid,
                count: out.count,
            });
            cx.page_done_at(cx.now() + delay, req);
            return Ok(None);
        }
        if delay > 0 {
            cx.hold(out.cid, 0);
            cx.timer(cx.now() + delay, req, out.cid);
            return Ok(None);
        }
        Ok(Some(out.cid))
    }

    /// A content that died while a program of it was in flight is trimmed now.
    fn programmed(&mut self, cx: &mut Ctx, cid: u32) {
        if !cx.held(cid) && self.dying.remove(&cid) {
            self.trim(cx, cid);
        }
    }

    fn references(&self, cid: u32) -> Option<u32> {
        Some(self.d().count(cid))
    }

    fn request_mark(&self) -> Option<u64> {
        Some(self.d().stats.duplicate_pages)
    }

    fn request_done(&self, m: &mut Metrics, read: bool, pages: u64, before: u64) {
        let m = &mut m.dedup;
        if read {
            m.read_requests += 1;
        } else {
            m.write_requests += 1;
            if self.d().stats.duplicate_pages - before < pages {
                m.write_requests_to_flash += 1;
            }
        }
    }
}

impl OwnedOps for Layer {
    /// A unique page finished fingerprinting: it goes to the buffer or flash now.
    fn timer(&mut self, cx: &mut Ctx, req: u32, cid: u32) {
        // Drop the mark that let reads be served from the controller meanwhile.
        cx.release(cid);
        cx.store(req, cid);
    }
}

impl Lifecycle for Layer {
    /// 4 B per host page (its content id), 12 B per content id (at most one per host page
    /// alive), the fingerprint index (≤ 24 B per content at the hash map's worst load) and,
    /// under `--verify`, 4 B per host page.
    fn table_bytes(&self, _cfg: &Config, t: &Tables) -> Option<(&'static str, u64)> {
        Some(("dedup tables", 44 * t.logical))
    }
    fn seams(&self) -> &'static [Seam] {
        &[]
    }

    fn start(&mut self, cx: &mut Ctx) -> Result<(), SimError> {
        self.d = Some(Dedup::new(cx.ftl_ref().map.logical_pages(), cx.verify())?);
        Ok(())
    }

    fn verify(&self, _ftl: &crate::ftl::Ftl) -> Result<(), VerifyError> {
        self.d()
            .check(&|cid| self.dying.contains(&cid))
            .map_err(VerifyError)
    }

    fn report(&self, m: &Metrics, s: &mut Summary) {
        let d = self.d();
        s.dedup = Some(crate::metrics::summary_dedup(
            &d.stats,
            &m.dedup,
            d.live_contents(),
            d.contents_by_refcount(),
        ));
    }
}

impl ReadRoute for Layer {}
impl WriteFanout for Layer {}
impl GcRelocate for Layer {}
impl HostCache for Layer {}
