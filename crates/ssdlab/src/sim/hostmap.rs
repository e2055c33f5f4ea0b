//! The layers a scheme may put on the host path: a host-side page cache in front of the
//! device (`schemes::HostCache`) and a mapping between host pages and the FTL's
//! (`schemes::HostMap`). The core asks them where reads go and what writes store.

use super::policy::{CacheRead, CacheWrite, Seam};
use super::{SimError, Simulation};

impl Simulation<'_> {
    /// Host logical pages (the layer's, or the FTL's as built without one).
    pub(super) fn host_pages(&self) -> u32 {
        self.policies
            .mapper()
            .and_then(|p| p.host_pages())
            .unwrap_or(self.host_logical)
    }

    /// The FTL page a host read of `lpn` goes to.
    pub(super) fn map_read(&mut self, lpn: u32) -> Result<u32, SimError> {
        let Some(i) = self.policies.host_map else {
            return Ok(lpn);
        };
        let out = self.with_policy(i, |p, cx| p.read(cx, lpn).map(Some))?;
        Ok(out.expect("the layer answers"))
    }

    /// Whether host page `host` still points to FTL page `lpn` (a read that waited for a
    /// program may find the page rewritten since: it then reads the older data it asked for).
    pub(super) fn map_holds(&self, host: u32, lpn: u32) -> bool {
        self.policies
            .mapper()
            .is_none_or(|p| p.current(host) == lpn)
    }

    /// The FTL page a host write of `lpn` (content print `print`) stores, or `None` if the
    /// layer completes it itself.
    pub(super) fn map_write(
        &mut self,
        req: u32,
        lpn: u32,
        print: Option<u64>,
    ) -> Result<Option<u32>, SimError> {
        let Some(i) = self.policies.host_map else {
            return Ok(Some(lpn));
        };
        let out = self.with_policy(i, |p, cx| p.write(cx, req, lpn, print).map(Some))?;
        Ok(out.expect("the layer answers"))
    }

    /// A program of FTL page `lpn` finished.
    pub(super) fn map_programmed(&mut self, lpn: u32) {
        if let Some(i) = self.policies.host_map {
            let r = self.with_policy::<()>(i, |p, cx| {
                p.programmed(cx, lpn);
                Ok(None)
            });
            self.stash(r);
        }
    }

    /// The layer's counter before a host request.
    pub(super) fn map_mark(&self) -> Option<u64> {
        self.policies.mapper()?.request_mark()
    }

    /// Accounts a finished host request with the layer.
    pub(super) fn map_request_done(&mut self, read: bool, pages: u64, before: u64) {
        if let Some(p) = self.policies.mapper() {
            p.request_done(&mut self.metrics, read, pages, before);
        }
    }
}

impl Simulation<'_> {
    /// A host read of `lpn` offered to the host-side cache, if a scheme put one in front.
    pub(super) fn cache_read(&mut self, req: u32, lpn: u32) -> CacheRead {
        let Some(i) = self.policies.host_cache else {
            return CacheRead::Miss;
        };
        let r = self.with_policy(i, |p, cx| Ok(Some(p.cache_read(cx, req, lpn))));
        self.stash(r).flatten().unwrap_or(CacheRead::Miss)
    }

    /// A host write of `lpn` offered to the host-side cache.
    pub(super) fn cache_write(&mut self, req: u32, lpn: u32) -> CacheWrite {
        let Some(i) = self.policies.host_cache else {
            return CacheWrite::Through;
        };
        let r = self.with_policy(i, |p, cx| Ok(Some(p.cache_write(cx, req, lpn))));
        self.stash(r).flatten().unwrap_or(CacheWrite::Through)
    }

    /// Whether the host-side cache drops dirty page `lpn` the device buffer evicts.
    pub(super) fn cache_drops(&mut self, lpn: u32, req: u32) -> bool {
        let Some(i) = self.policies.host_cache else {
            return false;
        };
        let r = self.with_policy(i, |p, cx| Ok(Some(p.drop_evicted(cx, lpn, req))));
        self.stash(r).flatten().unwrap_or(false)
    }

    /// A program took the first page of `block`.
    pub(super) fn block_opened(&mut self, block: u32) {
        let r = self.at_seam::<()>(Seam::BlockOpened, |p, cx| {
            p.block_opened(cx, block);
            Ok(None)
        });
        self.stash(r);
    }
}
