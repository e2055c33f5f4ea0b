//! The dedup layer on the host path (deduphr.txt §3.5): host pages become content ids before
//! anything below them (HotR / DedupHR staging, Rails, TTFlash, the FTL) sees them, so every
//! scheme works below deduplication as in the paper's evaluation.

use super::{Event, Notice, SimError, Simulation};
use crate::verify::VerifyError;

impl Simulation<'_> {
    /// Host logical pages (the FTL's namespace holds content ids under dedup).
    pub(super) fn host_pages(&self) -> u32 {
        self.dedup
            .as_ref()
            .map_or_else(|| self.ftl.map.logical_pages(), |d| d.logical_pages())
    }

    /// The content id a host read of `lpn` goes to (`lpn` itself without dedup). With
    /// `--verify` it checks that the page points to the content last written to it.
    pub(super) fn dedup_read(&mut self, lpn: u32) -> Result<u32, SimError> {
        let Some(d) = self.dedup.as_mut() else {
            return Ok(lpn);
        };
        if self.opts.verify {
            d.check_read(lpn).map_err(VerifyError)?;
        }
        Ok(d.read(lpn))
    }

    /// A host write of page `lpn` with fingerprint `print`. Returns the content id to program,
    /// or `None` for a duplicate, which completes once fingerprinted.
    pub(super) fn dedup_write(
        &mut self,
        req: u32,
        lpn: u32,
        print: Option<u64>,
    ) -> Result<Option<u32>, SimError> {
        let Some(d) = self.dedup.as_mut() else {
            return Ok(Some(lpn));
        };
        let map = &mut self.ftl.map;
        let out = d.write(lpn, print, &mut || map.push_logical())?;
        if let Some((old, count)) = out.released {
            self.content_released(old, count);
        }
        if out.duplicate {
            self.notify(Notice::RefCount {
                cid: out.cid,
                count: out.count,
            });
            let at = self.now + self.cfg.dedup.fingerprint_ns;
            self.schedule(at, Event::PageDone { req });
            return Ok(None);
        }
        Ok(Some(out.cid))
    }

    /// A content lost a reference and has `count` left. At 0 it is trimmed, or, if a program
    /// of it is in flight, once that program is done.
    fn content_released(&mut self, cid: u32, count: u32) {
        self.notify(Notice::RefCount { cid, count });
        if count > 0 {
            return;
        }
        // A dead content's staged copy goes too.
        self.notify(Notice::Written(cid));
        if self.pending_writes.contains_key(&cid) {
            self.dying.insert(cid);
        } else {
            self.trim_content(cid);
        }
    }

    fn trim_content(&mut self, cid: u32) {
        if let Some(old) = self.ftl.trim(cid) {
            self.start_gc(self.geo.plane_of(old).0);
        }
        if let Some(d) = self.dedup.as_mut() {
            d.recycle(cid);
        }
    }

    /// A program of `cid` finished: a content that died meanwhile is trimmed now.
    pub(super) fn dedup_program_done(&mut self, cid: u32) {
        if !self.pending_writes.contains_key(&cid) && self.dying.remove(&cid) {
            self.trim_content(cid);
        }
    }

    /// A unique page finished fingerprinting: it goes to the buffer or flash now.
    pub(super) fn on_fingerprinted(&mut self, req: u32, cid: u32) {
        // Drop the mark that let reads be served from the controller meanwhile.
        self.pending_done(cid);
        if let Some(die) = self.store_page(req, cid) {
            self.try_dispatch(die);
        }
    }
}
