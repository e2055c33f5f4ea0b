//! ShadowGC and its GC baselines (shadowgc.txt §3–4): GC that knows which valid pages have
//! dirty copies ("shadows") in the host-side or device-side write buffer. The registry entries
//! are here; the policy object (host buffer, relocation paths, fast blocks and their refresh,
//! restart) is in `policy.rs`.

mod policy;
#[cfg(test)]
mod tests;

use super::{Policies, Scheme};
use crate::config::{Config, ShadowGc};

const FAST: &str = "fast-mode programs (HGC, SGC) have no ISPP phases to suspend";

const SUSPENSION: &[(&str, &str)] = &[
    ("erase-suspend", FAST),
    ("ips", FAST),
    ("ipc", FAST),
    ("optimal", FAST),
];

/// Whether GC variant `v` is in force: GGC (greedy GC, the default) only with a host buffer,
/// every other variant whenever it is selected.
fn gc_is(c: &Config, v: ShadowGc) -> bool {
    c.shadow.gc == v && (v != ShadowGc::Ggc || c.buffer.host_pages > 0)
}

fn install(cfg: &Config, p: &mut Policies) {
    p.push_host_cache(Box::new(policy::Shadow::new(cfg)));
}

/// A ShadowGC-family scheme: GC variant `gc`, with the paper's 128 MB host write buffer
/// (8,192 pages of the shadowgc drive's 16 KiB).
macro_rules! shadow_scheme {
    ($id:ident, $name:literal, $value:literal, $variant:ident, $summary:literal, $excludes:expr) => {
        #[doc = $summary]
        pub const $id: Scheme = Scheme {
            name: $name,
            summary: $summary,
            paper: "shadowgc.txt §3-4 (128 MB host and device write buffers: §4.1)",
            sets: &[("shadow.gc", $value), ("buffer.host_pages", "8192")],
            implies: &[],
            excludes: $excludes,
            active: Some(|c| gc_is(c, ShadowGc::$variant)),
            params: &[],
            install,
        };
    };
}

shadow_scheme!(GGC, "ggc", "\"ggc\"", Ggc,
    "GGC: greedy GC with a host write buffer, shadows treated as any valid page (ShadowGC's baseline)", &[]);
shadow_scheme!(
    GREEDY_DELAY,
    "greedy-delay",
    "\"greedy-delay\"",
    GreedyDelay,
    "greedy GC whose victim score counts a block's zombie (host-shadow) pages against it",
    &[]
);
shadow_scheme!(
    GREEDY_SEPARATION,
    "greedy-separation",
    "\"greedy-separation\"",
    GreedySeparation,
    "greedy victims; zombie pages relocated into dedicated blocks",
    &[]
);
shadow_scheme!(
    ZGC,
    "zgc",
    "\"zgc\"",
    Zgc,
    "ZGC (zombie-aware GC): separation and delay",
    &[]
);
shadow_scheme!(
    HGC,
    "hgc",
    "\"hgc\"",
    Hgc,
    "HGC: host-shadows relocated into dedicated blocks in fast (short-retention) program mode",
    SUSPENSION
);
shadow_scheme!(DGC, "dgc", "\"dgc\"", Dgc,
    "DGC: device-shadows taken from the device buffer (no flash read, no ECC decode); needs a device buffer", &[]);
shadow_scheme!(
    SGC,
    "sgc",
    "\"sgc\"",
    Sgc,
    "ShadowGC (SGC): HGC and DGC together; needs a device buffer",
    SUSPENSION
);
