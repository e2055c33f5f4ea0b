//! Every scheme, in the order `ssdlab schemes` lists them and composed labels name them
//! (placement and GC schemes before scheduling ones: `hotr+ipc`).

use super::{
    baseline, dedup, gc_preempt, hotr, rails, scheduling, shadowgc, ttflash, voltage, Scheme,
};

/// The registry. Adding a scheme: one file in `schemes/` and one line here.
pub static SCHEMES: &[&Scheme] = &[
    &baseline::BASELINE,
    &hotr::HOTR,
    &dedup::DEDUP,
    &dedup::DEDUPHR,
    &rails::RAILS,
    &ttflash::TTFLASH,
    &shadowgc::GGC,
    &shadowgc::GREEDY_DELAY,
    &shadowgc::GREEDY_SEPARATION,
    &shadowgc::ZGC,
    &shadowgc::HGC,
    &shadowgc::DGC,
    &shadowgc::SGC,
    &gc_preempt::GC_PREEMPT,
    &voltage::HVC,
    &voltage::LVC,
    &voltage::HIRE,
    &scheduling::RPS,
    &scheduling::PER,
    &scheduling::PE0,
    &scheduling::ERASE_SUSPEND,
    &scheduling::IPS,
    &scheduling::IPC,
    &scheduling::OPTIMAL,
];
