//! Closed form: one die, reads only, Poisson arrivals is an M/D/1 queue with service time
//! read + transfer; the mean response time must match S + ρS / (2(1 − ρ)).

use crate::{config, run_synth};

fn check(rho: f64, requests: u64) {
    let cfg = config("tiny", &[]);
    let service_us = cfg.flash.read_us + cfg.flash.transfer_us + cfg.flash.command_us;
    let iat_us = service_us / rho;
    let spec =
        format!("requests={requests},write_ratio=0,iat_us={iat_us},footprint_gib=0.01,seed=11");
    let s = run_synth(&cfg, &spec, 1, false);
    let expected = service_us + rho * service_us / (2.0 * (1.0 - rho));
    let err = (s.read.mean_us - expected).abs() / expected;
    assert!(
        err < 0.03,
        "rho {rho}: mean {} us vs M/D/1 {expected:.3} us ({:.2} %)",
        s.read.mean_us,
        err * 100.0
    );
    // Reads only: nothing to be blocked by, and the service part equals S exactly.
    assert_eq!(s.reads_blocked, 0);
    assert!((s.read_wait_us["service"] - service_us).abs() < 1e-3);
}

#[test]
fn md1_utilisation_0_3() {
    check(0.3, 200_000);
}

#[test]
fn md1_utilisation_0_6() {
    check(0.6, 300_000);
}

#[test]
fn md1_utilisation_0_9() {
    check(0.9, 1_000_000);
}
