//! The baseline: no interference mitigation.

use super::{no_policy, Scheme};

/// FIFO per-die scheduling, reads at home, greedy GC in the background: the drive as its preset
/// describes it. It sets nothing, so it composes with every scheme as the identity.
pub const BASELINE: Scheme = Scheme {
    name: "baseline",
    summary: "no mitigation: FIFO per die, reads served at home, background greedy GC",
    paper: "hotr.txt §IV (baseline) / pe-suspension.txt §3.2 (FIFO)",
    sets: &[],
    implies: &[],
    excludes: &[],
    active: None,
    params: &[],
    install: no_policy,
};
