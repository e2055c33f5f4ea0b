//! Mutation fuzzing of the input parsers: one target per trace format, the config loader
//! (issue 18), `--set` assignments, `--synth` specs and experiment files (issue 33). Each target starts from its committed corpus (`testdata/fuzz/`), applies
//! seeded random mutations (byte flips, extreme tokens in fields, cut, repeated and swapped
//! lines, control bytes, long lines) and checks that parsing never panics and that what comes
//! out obeys the reader's contract: errors name the input and a line within it, requests have a
//! size, end below 2^64 bytes and arrive in order. Valid mutated configs small enough to build
//! are run on a short synthetic workload with `--verify`, so a config that passes validation
//! but breaks the model is found too.
//!
//! Deterministic and bounded: `SSDLAB_FUZZ_CASES` cases per target (default 600, what CI runs)
//! from `SSDLAB_FUZZ_SEED` (default 1). Longer campaigns: raise both. A failing case prints its
//! seed and input and becomes a regression test in `regressions()` below.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssdlab::config::ConfigBuilder;
use ssdlab::sim::{RunOptions, Simulation};
use ssdlab::workload::trace::{Format, TraceError, TraceOptions, TraceReader};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn corpus(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fuzz")
        .join(rel)
}

/// Tokens that have broken parsers elsewhere: extremes, signs, non-numbers, separators.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "0x1f",
    "",
    " ",
    ",",
    ",,",
    "\t",
    "\"",
    "\u{0}",
    "\u{1b}[31m",
    "é",
    "1.5",
    "1e-300",
    "Read",
    "Write",
    "R",
    "W",
    "+",
    "[x]",
    "true",
    "\"bogus\"",
    "[]",
    "{}",
];

/// One random mutation of `data`.
fn mutate(data: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
    let len = data.len();
    match rng.random_range(0..9) {
        // Flip a byte.
        0 if len > 0 => {
            let i = rng.random_range(0..len);
            data[i] ^= 1 << rng.random_range(0..8);
        }
        // Replace one field (between separators) with a token.
        1 | 2 if len > 0 => {
            let i = rng.random_range(0..len);
            let sep = |b: &u8| matches!(b, b',' | b' ' | b'\n' | b'\t' | b'=');
            let start = data[..i].iter().rposition(sep).map_or(0, |p| p + 1);
            let end = data[i..].iter().position(sep).map_or(len, |p| i + p);
            let token = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            data.splice(start..end, token.iter().copied());
        }
        // Cut the input short.
        3 if len > 0 => data.truncate(rng.random_range(0..len)),
        // Repeat or swap lines.
        4 | 5 => {
            let mut lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            if !lines.is_empty() {
                let a = rng.random_range(0..lines.len());
                let b = rng.random_range(0..lines.len());
                if rng.random_bool(0.5) {
                    let l = lines[a].clone();
                    lines.insert(b, l);
                } else {
                    lines.swap(a, b);
                }
            }
            *data = lines.join(&b'\n');
        }
        // Insert random bytes.
        6 => {
            let i = rng.random_range(0..=len);
            let n = rng.random_range(1..16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            data.splice(i..i, bytes);
        }
        // A long line.
        7 => {
            let i = rng.random_range(0..=len);
            let n = rng.random_range(1_000..70_000);
            data.splice(i..i, std::iter::repeat_n(b'7', n));
        }
        // Delete a range.
        _ if len > 0 => {
            let a = rng.random_range(0..len);
            let b = rng.random_range(a..=len.min(a + 64));
            data.drain(a..b);
        }
        _ => data.push(b'\n'),
    }
}

/// Parses `data` as a trace (`format` forced, or detected) and checks the reader's contract;
/// `Ok(true)` if the whole input was read without error. `Err` describes a broken contract; a
/// panic escapes to the caller.
fn check_trace(data: &[u8], format: Option<Format>) -> Result<bool, String> {
    let name = Path::new("fuzz-input");
    let opts = TraceOptions {
        format,
        ..Default::default()
    };
    let lines = data.split(|&b| b == b'\n').count() as u64 + data.len() as u64 / 32 + 1;
    let named = |e: &TraceError| -> Result<bool, String> {
        let text = e.to_string();
        if !text.starts_with("fuzz-input") && !text.starts_with("request ") {
            return Err(format!("error does not name the input: {text}"));
        }
        if let TraceError::Parse { line, .. } | TraceError::ReadAt { line, .. } = e {
            if *line == 0 || *line > lines {
                return Err(format!(
                    "line {line} is not in the input ({lines} lines): {text}"
                ));
            }
        }
        Ok(false)
    };
    let mut reader =
        match TraceReader::from_reader(name, Box::new(std::io::Cursor::new(data.to_vec())), opts) {
            Ok(r) => r,
            Err(e) => return named(&e),
        };
    let mut last = 0;
    let mut n = 0u64;
    for r in reader.by_ref() {
        n += 1;
        if n > lines + 1 {
            return Err(format!("{n} requests from {lines} lines"));
        }
        match r {
            Err(e) => return named(&e),
            Ok(r) => {
                if r.size_bytes == 0 || r.offset_bytes.checked_add(r.size_bytes).is_none() {
                    return Err(format!("bad request {r:?}"));
                }
                if r.time_ns < last {
                    return Err(format!("time went back: {r:?} after {last}"));
                }
                last = r.time_ns;
            }
        }
    }
    Ok(true)
}

/// Loads `data` as a config overlay on the tiny preset; a valid config small enough is run
/// briefly with verification (`Ok(true)`: it ran to the end).
fn check_config(data: &[u8]) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    let built = ConfigBuilder::preset("tiny")
        .and_then(|b| b.overlay_toml(&text, "fuzz-input"))
        .and_then(ConfigBuilder::build);
    run_briefly(built)
}

/// Applies each line of `data` as a `--set` assignment on the tiny preset, then as
/// [`check_config`].
fn check_sets(data: &[u8]) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    let built = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .try_fold(
            ConfigBuilder::preset("tiny").map_err(|e| e.to_string())?,
            |b, l| b.set(l),
        )
        .and_then(ConfigBuilder::build);
    run_briefly(built)
}

/// Parses `data` as a `--synth` spec; an accepted one generates up to 2,000 requests, which
/// must arrive in order, have a size and lie within the footprint.
fn check_synth(data: &[u8]) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    let spec: ssdlab::workload::synth::SynthSpec = match text.trim().parse() {
        Ok(s) => s,
        Err(e) => {
            return if e.is_empty() {
                Err("empty error".into())
            } else {
                Ok(false)
            }
        }
    };
    let gen = match spec.generate() {
        Ok(g) => g,
        Err(e) => {
            return if e.is_empty() {
                Err("empty error".into())
            } else {
                Ok(false)
            }
        }
    };
    let pages = ((spec.footprint_gib * 262_144.0) as u64).max(1);
    let mut last = 0;
    for r in gen.take(2000) {
        let r = r.map_err(|e| format!("generator failed: {e}"))?;
        if r.time_ns < last {
            return Err(format!("arrival {} before {last}", r.time_ns));
        }
        last = r.time_ns;
        if r.size_bytes == 0 || r.offset_bytes + r.size_bytes > pages * 4096 {
            return Err(format!(
                "request at {} of {} bytes outside {pages} pages",
                r.offset_bytes, r.size_bytes
            ));
        }
    }
    Ok(true)
}

/// Loads `data` as an experiment.toml; an accepted one must respect the point cap, give each
/// point its own result file and every figure a plain file name.
fn check_experiment(data: &[u8]) -> Result<bool, String> {
    let dir = std::env::temp_dir().join(format!("ssdlab-fuzz-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("experiment.toml"), data).map_err(|e| e.to_string())?;
    let spec = match ssdlab::experiment::ExperimentSpec::load(&dir) {
        Ok(s) => s,
        Err(e) => {
            return if e.to_string().is_empty() {
                Err("empty error".into())
            } else {
                Ok(false)
            }
        }
    };
    let points = spec.points(&dir);
    if points.len() as u64 > ssdlab::experiment::MAX_POINTS {
        return Err(format!("{} points accepted", points.len()));
    }
    let ids: std::collections::BTreeSet<&str> = points.iter().map(|p| p.id.as_str()).collect();
    if ids.len() != points.len() {
        return Err("two points share a result file".into());
    }
    if let Some(f) = spec
        .figures
        .iter()
        .find(|f| f.id.is_empty() || f.id.starts_with('.') || f.id.contains(['/', '\\']))
    {
        return Err(format!("figure id `{}` accepted", f.id));
    }
    Ok(true)
}

/// Runs a built config on a short synthetic workload with verification.
fn run_briefly(
    built: Result<ssdlab::config::Config, ssdlab::config::ConfigError>,
) -> Result<bool, String> {
    let cfg = match built {
        Ok(c) => c,
        Err(e) => {
            let msg = e.to_string();
            return if msg.is_empty() {
                Err("empty config error".into())
            } else {
                Ok(false)
            };
        }
    };
    let opts = RunOptions {
        seed: 1,
        verify: true,
        max_memory_bytes: Some(320 << 20),
        ..Default::default()
    };
    let spec: ssdlab::workload::synth::SynthSpec =
        "requests=200,write_ratio=0.6,size_kib=4|16,iat_us=200,footprint_gib=0.004,seed=3"
            .parse()
            .expect("spec");
    let mut gen = spec.generate().expect("generator");
    match Simulation::new(&cfg, opts, &mut gen).and_then(Simulation::run) {
        Ok(s) if s.all.count == 200 => Ok(true),
        Ok(s) => Err(format!("{} of 200 requests completed", s.all.count)),
        Err(ssdlab::sim::SimError::Verify(e)) => Err(format!("verify failed: {e}")),
        Err(_) => Ok(false),
    }
}

/// Runs `cases` mutated inputs of `seed_file` through `check`; both accepted and refused
/// inputs must occur (else the mutations miss the parser or never get past it).
fn campaign(target: &str, seed_file: &str, check: &dyn Fn(&[u8]) -> Result<bool, String>) {
    let cases = env_u64("SSDLAB_FUZZ_CASES", 600);
    let seed = env_u64("SSDLAB_FUZZ_SEED", 1);
    let base = std::fs::read(corpus(seed_file)).expect("corpus file");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ fxhash(target));
    let mut accepted = 0;
    for case in 0..cases {
        let mut data = base.clone();
        for _ in 0..rng.random_range(1..6) {
            mutate(&mut data, &mut rng);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&data)));
        let problem = match outcome {
            Ok(Ok(whole)) => {
                accepted += u64::from(whole);
                continue;
            }
            Ok(Err(p)) => p,
            Err(_) => "panicked".to_string(),
        };
        panic!(
            "fuzz target {target}, seed {seed}, case {case}: {problem}\ninput ({} bytes): {:?}",
            data.len(),
            String::from_utf8_lossy(&data[..data.len().min(2000)])
        );
    }
    eprintln!("{target}: {cases} cases from seed {seed}, {accepted} accepted whole");
    assert!(
        accepted > 0 && accepted < cases,
        "{target}: {accepted} of {cases} accepted"
    );
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

macro_rules! trace_target {
    ($name:ident, $file:literal, $format:literal) => {
        #[test]
        fn $name() {
            let format: Format = $format.parse().expect("format");
            campaign(stringify!($name), concat!("traces/", $file), &|d| {
                let forced = check_trace(d, Some(format))?;
                check_trace(d, None)?;
                Ok(forced)
            });
        }
    };
}

trace_target!(fuzz_msr, "msr", "msr");
trace_target!(fuzz_spc, "spc", "spc");
trace_target!(fuzz_fiu, "fiu", "fiu");
trace_target!(fuzz_disksim, "disksim", "disksim");
trace_target!(fuzz_disksim_ns, "disksim-ns", "disksim");
trace_target!(fuzz_flashnet, "flashnet", "flashnet");
trace_target!(fuzz_blktrace, "blktrace", "blktrace");
trace_target!(fuzz_vscsi, "vscsi", "vscsi");
trace_target!(fuzz_vscsi_bin, "vscsi-bin", "vscsi-bin");

#[test]
fn fuzz_config() {
    campaign("fuzz_config", "config/default.toml", &check_config);
}

#[test]
fn fuzz_set() {
    campaign("fuzz_set", "set/sets.txt", &check_sets);
}

#[test]
fn fuzz_synth() {
    campaign("fuzz_synth", "synth/spec.txt", &check_synth);
}

#[test]
fn fuzz_experiment() {
    campaign(
        "fuzz_experiment",
        "experiment/experiment.toml",
        &check_experiment,
    );
}

/// Inputs earlier campaigns broke, kept as regression tests.
#[test]
fn regressions() {
    for entry in std::fs::read_dir(corpus("regressions")).expect("regressions dir") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("regression file");
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "README.md" {
            continue;
        }
        let result = if let Some(format) = name
            .split('.')
            .next()
            .and_then(|f| f.parse::<Format>().ok())
        {
            check_trace(&data, Some(format)).and_then(|_| check_trace(&data, None))
        } else {
            check_config(&data)
        };
        assert!(result.is_ok(), "{name}: {result:?}");
    }
}
