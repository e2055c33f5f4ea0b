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

/// Erase suspension only.
pub const ERASE_SUSPEND: Scheme = Scheme {
    name: "erase-suspend",
    summary: "erases suspend for pending reads (programs do not), on RPS",
    paper: "pe-suspension.txt §4.1 (erase suspension and resumption)",
    sets: &[("sched.policy", "\"rps\""), ("suspend.policy", "\"erase\"")],
    implies: &["rps"],
    excludes: &[],
    active: Some(|c| suspends(c, SuspendPolicy::Erase)),
    params: &[],
    install: no_policy,
};

/// Inter-Phase Suspension.
pub const IPS: Scheme = Scheme {
    name: "ips",
    summary: "P/E suspension, Inter-Phase Suspension: programs stop at a phase boundary, on RPS",
    paper: "pe-suspension.txt §4.2 (PES_IPS)",
    sets: &[("sched.policy", "\"rps\""), ("suspend.policy", "\"ips\"")],
    implies: &["rps"],
    excludes: &[],
    active: Some(|c| suspends(c, SuspendPolicy::Ips)),
    params: &[],
    install: no_policy,
};

/// Intra-Phase Cancellation.
pub const IPC: Scheme = Scheme {
    name: "ipc",
    summary: "P/E suspension, Intra-Phase Cancellation: the running phase is cancelled, on RPS",
    paper: "pe-suspension.txt §4.2 (PES_IPC)",
    sets: &[("sched.policy", "\"rps\""), ("suspend.policy", "\"ipc\"")],
    implies: &["rps"],
    excludes: &[],
    active: Some(|c| suspends(c, SuspendPolicy::Ipc)),
    params: &[],
    install: no_policy,
};

/// The optimal system: zero-cost preemption of programs and erases.
pub const OPTIMAL: Scheme = Scheme {
    name: "optimal",
    summary: "optimal: a read never waits for a program or erase (zero-cost preemption), on RPS",
    paper: "hotr.txt §II Fig. 1b (\"optimal\"); pe-suspension.txt's bound",
    sets: &[("sched.policy", "\"rps\""), ("suspend.policy", "\"ideal\"")],
    implies: &["rps"],
    excludes: &[],
    active: Some(|c| suspends(c, SuspendPolicy::Ideal)),
    params: &[],
    install: no_policy,
};
