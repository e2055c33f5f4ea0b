//! Program/erase suspension (pe-suspension.txt §4) as pure planning: given the phases left of
//! a program or erase and how far into the first one the die is, where can it stop for a read,
//! and what is left to do on resume.

use crate::config::SuspendPolicy;
use crate::flash::Timing;
use crate::sched::OpKind;
use std::collections::VecDeque;

/// Kinds of array phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// Command overhead, buffer reload or voltage re-bias: cannot be cut short.
    Overhead,
    /// ISPP program phase.
    Program,
    /// ISPP verify phase.
    Verify,
    /// Erase pulse.
    ErasePulse,
    /// Verify after the erase pulse.
    EraseVerify,
}

/// One timed phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// Kind.
    pub kind: PhaseKind,
    /// Duration, ns.
    pub ns: u64,
}

impl Phase {
    fn new(kind: PhaseKind, ns: u64) -> Self {
        Phase { kind, ns }
    }
}

/// The array phases of a program: command, then N × (program, verify).
pub fn program_phases(t: &Timing) -> VecDeque<Phase> {
    let mut v = VecDeque::with_capacity(2 * t.ispp_iterations as usize + 1);
    if t.command_ns > 0 {
        v.push_back(Phase::new(PhaseKind::Overhead, t.command_ns));
    }
    for _ in 0..t.ispp_iterations {
        v.push_back(Phase::new(PhaseKind::Program, t.ispp_program_ns));
        v.push_back(Phase::new(PhaseKind::Verify, t.ispp_verify_ns));
    }
    v
}

/// The array phases of an erase: command, pulse, verify.
pub fn erase_phases(t: &Timing) -> VecDeque<Phase> {
    let mut v = VecDeque::with_capacity(3);
    if t.command_ns > 0 {
        v.push_back(Phase::new(PhaseKind::Overhead, t.command_ns));
    }
    v.push_back(Phase::new(
        PhaseKind::ErasePulse,
        t.erase_ns.saturating_sub(t.erase_verify_ns),
    ));
    v.push_back(Phase::new(PhaseKind::EraseVerify, t.erase_verify_ns));
    v
}

/// A decision to suspend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Time from now until the die is free for the read (the read's extra wait).
    pub delay_ns: u64,
    /// Phases to run when the operation resumes (before any page-buffer reload).
    pub remaining: VecDeque<Phase>,
    /// A program phase was cancelled before its end (IPC).
    pub cancelled: bool,
}

/// Whether `policy` lets an operation of `kind` suspend at all.
pub fn allows(policy: SuspendPolicy, kind: OpKind) -> bool {
    match (policy, kind) {
        (SuspendPolicy::Off, _) | (_, OpKind::Read) => false,
        (SuspendPolicy::Erase, k) => k == OpKind::Erase,
        _ => true,
    }
}

/// Plans a suspension of an operation whose remaining phases are `phases`, `elapsed_ns` into
/// the first one. `redo(fraction_done)` says whether a cancelled program phase must be redone.
/// `None` if the operation is already over.
pub fn plan(
    policy: SuspendPolicy,
    phases: &VecDeque<Phase>,
    elapsed_ns: u64,
    voltage_reset_ns: u64,
    redo: &mut dyn FnMut(f64) -> bool,
) -> Option<Plan> {
    let (mut i, mut offset) = (0, elapsed_ns);
    while i < phases.len() && offset >= phases[i].ns {
        offset -= phases[i].ns;
        i += 1;
    }
    let cur = *phases.get(i)?;
    let ips_program =
        policy == SuspendPolicy::Ips && matches!(cur.kind, PhaseKind::Program | PhaseKind::Verify);
    if i + 1 == phases.len() && offset > 0 && (ips_program || cur.ns - offset <= voltage_reset_ns) {
        return None; // stopping at the end of the last phase is just finishing
    }
    let rest = |from: usize| phases.iter().skip(from).copied();
    let left = cur.ns - offset;
    if policy == SuspendPolicy::Ideal {
        let remaining = std::iter::once(Phase::new(cur.kind, left))
            .chain(rest(i + 1))
            .collect();
        return Some(Plan {
            delay_ns: 0,
            remaining,
            cancelled: false,
        });
    }
    // At a phase boundary nothing is in flight: stop at once and resume with this phase.
    if offset == 0 {
        return Some(Plan {
            delay_ns: 0,
            remaining: rest(i).collect(),
            cancelled: false,
        });
    }
    let end_of_phase = Plan {
        delay_ns: left,
        remaining: rest(i + 1).collect(),
        cancelled: false,
    };
    // Every phase ends with a voltage reset: a request during it takes effect at the phase end.
    if cur.kind == PhaseKind::Overhead || left <= voltage_reset_ns {
        return Some(end_of_phase);
    }
    let remaining: VecDeque<Phase> = match (policy, cur.kind) {
        (SuspendPolicy::Ips, PhaseKind::Program | PhaseKind::Verify) => return Some(end_of_phase),
        (_, PhaseKind::ErasePulse) => {
            // The pulse keeps its progress; resuming re-biases the wires (≈ one voltage reset).
            [
                Phase::new(PhaseKind::Overhead, voltage_reset_ns),
                Phase::new(PhaseKind::ErasePulse, left),
            ]
            .into_iter()
            .chain(rest(i + 1))
            .collect()
        }
        (_, PhaseKind::EraseVerify | PhaseKind::Verify) => {
            std::iter::once(Phase::new(cur.kind, cur.ns))
                .chain(rest(i + 1))
                .collect()
        }
        (_, PhaseKind::Program) => {
            // IPC: verify whether the cancelled phase reached its target; if not, program again.
            let verify_ns = phases.get(i + 1).map_or(0, |p| p.ns);
            let check = Phase::new(PhaseKind::Verify, verify_ns);
            if redo(offset as f64 / cur.ns as f64) {
                [check, cur].into_iter().chain(rest(i + 1)).collect()
            } else {
                std::iter::once(check).chain(rest(i + 2)).collect()
            }
        }
        (_, PhaseKind::Overhead) => unreachable!("handled above"),
    };
    Some(Plan {
        delay_ns: voltage_reset_ns,
        remaining,
        cancelled: cur.kind == PhaseKind::Program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slc() -> Timing {
        Timing {
            read_ns: 10_000,
            program_ns: 140_000,
            fast_program_ns: 140_000,
            erase_ns: 1_508_000,
            transfer_ns: 20_000,
            command_ns: 0,
            ispp_iterations: 5,
            ispp_program_ns: 20_000,
            ispp_verify_ns: 8_000,
            erase_verify_ns: 8_000,
            voltage_reset_ns: 4_000,
            buffer_reload_ns: 3_000,
            level_read_ns: [10_000; 3],
            level_transfer_ns: [20_000; 3],
            ecc_decode_ns: 0,
        }
    }

    fn total(p: &VecDeque<Phase>) -> u64 {
        p.iter().map(|x| x.ns).sum()
    }

    #[test]
    fn ips_waits_for_the_end_of_the_phase() {
        let p = program_phases(&slc());
        assert_eq!(total(&p), 140_000);
        let plan = plan(SuspendPolicy::Ips, &p, 5_000, 4_000, &mut |_| true).unwrap();
        assert_eq!(plan.delay_ns, 15_000);
        assert_eq!(total(&plan.remaining), 140_000 - 20_000);
        let plan = super::plan(SuspendPolicy::Ips, &p, 21_000, 4_000, &mut |_| true).unwrap();
        assert_eq!(plan.delay_ns, 7_000, "inside the first verify");
    }

    #[test]
    fn ips_mean_extra_latency_is_equation_1() {
        // Averaging the delay over every arrival instant of one ISPP cycle gives eq. (1).
        let p = program_phases(&slc());
        let cycle = 28_000u64;
        let mean = (0..cycle)
            .map(|t| {
                plan(SuspendPolicy::Ips, &p, t, 4_000, &mut |_| true)
                    .unwrap()
                    .delay_ns as f64
            })
            .sum::<f64>()
            / cycle as f64;
        assert!((mean / 1e3 - 8.2857).abs() < 0.01, "{mean}");
    }

    #[test]
    fn ipc_cancels_after_a_voltage_reset_and_redoes_or_skips() {
        let p = program_phases(&slc());
        let redo = plan(SuspendPolicy::Ipc, &p, 5_000, 4_000, &mut |_| true).unwrap();
        assert_eq!(redo.delay_ns, 4_000);
        // verify, program again, then the rest from the original verify: one extra verify.
        assert_eq!(total(&redo.remaining), 8_000 + 140_000);
        let skip = plan(SuspendPolicy::Ipc, &p, 5_000, 4_000, &mut |_| false).unwrap();
        assert_eq!(total(&skip.remaining), 140_000 - 20_000);
        // Within the final voltage reset of a phase, it stops at the phase end.
        let late = plan(SuspendPolicy::Ipc, &p, 17_000, 4_000, &mut |_| true).unwrap();
        assert_eq!((late.delay_ns, late.cancelled), (3_000, false));
    }

    #[test]
    fn erase_pulse_keeps_its_progress_and_verify_is_redone() {
        let p = erase_phases(&slc());
        let e = plan(SuspendPolicy::Erase, &p, 500_000, 4_000, &mut |_| true).unwrap();
        assert_eq!(e.delay_ns, 4_000);
        assert_eq!(total(&e.remaining), 4_000 + 1_000_000 + 8_000);
        let v = plan(SuspendPolicy::Ips, &p, 1_502_000, 4_000, &mut |_| true).unwrap();
        assert_eq!((v.delay_ns, total(&v.remaining)), (4_000, 8_000));
        assert!(!allows(SuspendPolicy::Erase, OpKind::Program));
    }

    #[test]
    fn ideal_stops_at_once_and_loses_nothing() {
        let p = program_phases(&slc());
        let i = plan(SuspendPolicy::Ideal, &p, 5_000, 4_000, &mut |_| true).unwrap();
        assert_eq!((i.delay_ns, total(&i.remaining)), (0, 135_000));
    }
}
