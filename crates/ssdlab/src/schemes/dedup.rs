//! Inline deduplication and DedupHR (deduphr.txt).

use super::hotr::STAGING_WITH_REDUNDANCY;
use super::{no_policy, Scheme};
use crate::config::{StagingDesign, StagingPolicy};

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
    install: no_policy,
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
