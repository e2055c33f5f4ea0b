//! Per-die scheduling and program/erase suspension (pe-suspension.txt), and the "optimal"
//! system in which no read waits for a program or erase (hotr.txt Fig. 1b).

use super::{no_policy, Scheme};
use crate::config::{Config, PeIdealization, SchedPolicy, SuspendPolicy};

const IDEALISED: &str = "an idealised program/erase (PER, PE0) has no phases to suspend";

/// What the idealisations refuse: every suspension scheme.
const SUSPENSION: &[(&str, &str)] = &[
    ("erase-suspend", IDEALISED),
    ("ips", IDEALISED),
    ("ipc", IDEALISED),
    ("optimal", IDEALISED),
];

fn suspends(c: &Config, p: SuspendPolicy) -> bool {
    c.suspend.policy == p
}

/// Read-priority scheduling.
pub const RPS: Scheme = Scheme {
    name: "rps",
    summary: "read-priority scheduling: queued reads go before queued writes and GC",
    paper: "pe-suspension.txt §3.2 (RPS)",
    sets: &[("sched.policy", "\"rps\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.sched.policy == SchedPolicy::Rps),
    params: &[],
    install: no_policy,
};

/// PER: program and erase take the read time (on RPS).
pub const PER: Scheme = Scheme {
    name: "per",
    summary: "PER: program and erase take the read (sense) time, on RPS (idealisation)",
    paper: "pe-suspension.txt §3.2 (\"both PER and PE0 are applied upon RPS\")",
    sets: &[
        ("sched.policy", "\"rps\""),
        ("flash.pe_idealization", "\"per\""),
    ],
    implies: &["rps"],
    excludes: SUSPENSION,
    active: Some(|c| c.flash.pe_idealization == PeIdealization::Per),
    params: &[],
    install: no_policy,
};

/// PE0: program and erase take no array time (on RPS).
pub const PE0: Scheme = Scheme {
    name: "pe0",
    summary: "PE0: program and erase take no array time, on RPS (idealisation)",
    paper: "pe-suspension.txt §3.2 (\"both PER and PE0 are applied upon RPS\")",
    sets: &[
        ("sched.policy", "\"rps\""),
        ("flash.pe_idealization", "\"pe0\""),
    ],
    implies: &["rps"],
    excludes: SUSPENSION,
    active: Some(|c| c.flash.pe_idealization == PeIdealization::Pe0),
    params: &[],
    install: no_policy,
};

/// A suspension scheme: `suspend.policy = $value` on read-priority scheduling (the paper's
/// P/E suspension is built on RPS).
macro_rules! suspension_scheme {
    ($id:ident, $name:literal, $value:literal, $variant:ident, $paper:literal, $summary:literal) => {
        #[doc = $summary]
        pub const $id: Scheme = Scheme {
            name: $name,
            summary: $summary,
            paper: $paper,
            sets: &[("sched.policy", "\"rps\""), ("suspend.policy", $value)],
            implies: &["rps"],
            excludes: &[],
            active: Some(|c| suspends(c, SuspendPolicy::$variant)),
            params: &[],
            install: no_policy,
        };
    };
}

suspension_scheme!(
    ERASE_SUSPEND,
    "erase-suspend",
    "\"erase\"",
    Erase,
    "pe-suspension.txt §4.1 (erase suspension and resumption)",
    "erases suspend for pending reads (programs do not), on RPS"
);
suspension_scheme!(
    IPS,
    "ips",
    "\"ips\"",
    Ips,
    "pe-suspension.txt §4.2 (PES_IPS)",
    "P/E suspension, Inter-Phase Suspension: programs stop at a phase boundary, on RPS"
);
suspension_scheme!(
    IPC,
    "ipc",
    "\"ipc\"",
    Ipc,
    "pe-suspension.txt §4.2 (PES_IPC)",
    "P/E suspension, Intra-Phase Cancellation: the running phase is cancelled, on RPS"
);
suspension_scheme!(
    OPTIMAL,
    "optimal",
    "\"ideal\"",
    Ideal,
    "hotr.txt §II Fig. 1b (\"optimal\"); pe-suspension.txt's bound",
    "optimal: a read never waits for a program or erase (zero-cost preemption), on RPS"
);
