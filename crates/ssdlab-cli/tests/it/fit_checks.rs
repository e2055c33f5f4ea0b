//! `ssdlab trace fit` never fails silently (issue 50): a stand-in that misses a first-order
//! statistic of its trace is reported, and no spec is printed unless asked for.

use super::reliability::{ssdlab, trace};
use predicates::prelude::*;
use predicates::str::contains;

/// From standard input the trace cannot be read a second time for activity envelopes, so the
/// one-process fit of hm_0 — whose reads come in a few bursts — misses the reads in most
/// tenths of the span: the command fails, names them, and prints no spec.
#[test]
fn a_fit_that_misses_exits_non_zero_and_prints_no_spec() {
    let text = std::fs::read(trace()).unwrap();
    ssdlab()
        .args(["trace", "fit", "-", "--format", "msr"])
        .write_stdin(text.clone())
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            contains("the stand-in misses")
                .and(contains("reads in tenth"))
                .and(contains("MISSED"))
                .and(contains("--force")),
        );
    // --force prints it, marked as failed, and exits 0.
    ssdlab()
        .args(["trace", "fit", "-", "--format", "msr", "--force"])
        .write_stdin(text)
        .assert()
        .success()
        .stdout(contains("requests=7016"))
        .stderr(contains("FAILED (printed with --force)"));
}

/// From the file, the fit gives each direction an activity envelope and every check is met.
#[test]
fn a_fit_from_the_file_meets_every_check_with_envelopes() {
    ssdlab()
        .args(["trace", "fit"])
        .arg(trace())
        .assert()
        .success()
        .stdout(contains("read_envelope=").and(contains("write_envelope=")))
        .stderr(
            contains("overall: every check met").and(contains("fitted with activity envelopes")),
        );
}
