//! Threshold-voltage controllers (hire.txt): faster reads against less wear.

use super::{no_policy, Scheme};
use crate::config::VoltagePolicy;

/// Every page programmed at the high threshold-voltage level.
pub const HVC: Scheme = Scheme {
    name: "hvc",
    summary: "HVC: every page programmed at the high Vth level (fast reads, more wear)",
    paper: "hire.txt §4.1 (HVC baseline)",
    sets: &[("voltage.policy", "\"hvc\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Hvc),
    params: &[],
    install: no_policy,
};

/// Every page programmed at the low threshold-voltage level.
pub const LVC: Scheme = Scheme {
    name: "lvc",
    summary: "LVC: every page programmed at the low Vth level (slow reads, less wear)",
    paper: "hire.txt §4.1 (LVC baseline)",
    sets: &[("voltage.policy", "\"lvc\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Lvc),
    params: &[],
    install: no_policy,
};

/// HIRE: the device buffer classes evicted pages and picks their level.
pub const HIRE: Scheme = Scheme {
    name: "hire",
    summary: "HIRE: buffer hit counts class evicted pages read-hot (high Vth) / write-hot (low) / mixed (normal); needs a device buffer",
    paper: "hire.txt §3 (w = 95 %: §4.1)",
    sets: &[("voltage.policy", "\"hire\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Hire),
    params: &[],
    install: no_policy,
};
