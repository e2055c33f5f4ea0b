//! HotR: hot read pages copied to a staging space, conflicted reads served from the copy.

use super::{staging, Scheme};
use crate::config::{StagingDesign, StagingPolicy};

pub(super) const STAGING_WITH_REDUNDANCY: &str =
    "a HotR/DedupHR staging space is not supported together with Rails or TTFlash redundancy";

/// HotR on a dedicated extra staging chip.
pub const HOTR: Scheme = Scheme {
    name: "hotr",
    summary: "HotR: R-LRU-identified hot read pages copied to a staging chip; conflicted reads redirected",
    paper: "hotr.txt §III",
    sets: &[
        ("staging.design", "\"extra-chip\""),
        ("staging.policy", "\"hotr\""),
    ],
    implies: &[],
    excludes: &[("rails", STAGING_WITH_REDUNDANCY),
        ("ttflash", STAGING_WITH_REDUNDANCY),
    ],
    active: Some(|c| {
        c.staging.design != StagingDesign::None && c.staging.policy == StagingPolicy::Hotr
    }),
    params: &[],
    install: staging::install,
};
