//! Rails and TTFlash: redundancy that trades space for read latency (hotr.txt's baselines).

use super::{no_policy, Scheme};
use crate::config::RedundancyScheme;

/// Rails: mirrored halves; a read goes to the replica not busy with a program or erase.
pub const RAILS: Scheme = Scheme {
    name: "rails",
    summary: "Rails: the second half of the channels mirrors the first; reads go to the replica not programming",
    paper: "hotr.txt §IV (Rails, 4+4)",
    sets: &[("redundancy.scheme", "\"rails\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.redundancy.scheme == RedundancyScheme::Rails),
    params: &[],
    install: no_policy,
};

/// TTFlash: RAID-5 across dies; a read of a busy die is rebuilt from the others.
pub const TTFLASH: Scheme = Scheme {
    name: "ttflash",
    summary: "TTFlash: k+1 RAID-5 stripes across dies; a read of a busy die is rebuilt from parity",
    paper: "hotr.txt §IV (TTFlash, 4+1)",
    sets: &[
        ("redundancy.scheme", "\"ttflash\""),
        ("redundancy.ttflash_k", "4"),
    ],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.redundancy.scheme == RedundancyScheme::Ttflash),
    params: &[],
    install: no_policy,
};
