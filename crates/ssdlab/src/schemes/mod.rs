//! Schemes: named, composable bundles of policy settings, and the policy slots they fill.
//!
//! A [`Scheme`] is what users select (`--scheme hotr+ipc`, `scheme = "hotr+ipc"` in TOML or an
//! experiment file): a name, the paper section it follows, the config values it sets (every one
//! still overridable with `--set`), the schemes it already contains, the schemes it cannot run
//! with, and a test of whether it is in force in a resolved config. The registry
//! ([`SCHEMES`]) lists them all; `ssdlab schemes` prints it.
//!
//! The label a run reports is derived from the resolved config ([`label`]), never copied from
//! the request: `--set staging.design=extra-chip` alone reports `hotr`, and a requested scheme
//! that an override turns off is refused.
//!
//! Schemes whose decisions run through a policy trait install their policy object into
//! [`Policies`] (see `gc_preempt.rs`, the worked example of `docs/extending.md`).

mod assemble;
mod baseline;
mod dedup;
mod gc_preempt;
mod hotr;
mod rails;
mod registry;
mod resolve;
mod scheduling;
mod shadowgc;
mod staging;
mod ttflash;
mod voltage;

pub use crate::sim::policy::{
    CacheRead, CacheWrite, DieGate, GcExec, GcRelocate, GcView, HostCache, HostMap, Lifecycle,
    OwnedOps, Policies, Policy, ProgramLevel, ReadRoute, Relocation, Route, Seam, WriteFanout,
};
pub use assemble::memory_estimate;
pub use registry::SCHEMES;

use crate::config::Config;

/// A numeric parameter owned by a scheme: the key `<scheme>.<key>` in the config.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Key inside the scheme's table.
    pub key: &'static str,
    /// Default value and where it comes from (in `doc`).
    pub default: f64,
    /// Smallest accepted value.
    pub min: f64,
    /// Values must be below this.
    pub max_exclusive: f64,
    /// What it means, its unit and the source of its default.
    pub doc: &'static str,
}

/// One named scheme.
#[derive(Debug, Clone, Copy)]
pub struct Scheme {
    /// Name used with `--scheme` (kebab-case).
    pub name: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// The paper and section it follows.
    pub paper: &'static str,
    /// Config values it sets, as `key = TOML value` (applied above the preset, below any
    /// config file or `--set`).
    pub sets: &'static [(&'static str, &'static str)],
    /// Schemes whose settings it contains (left out of the composed label).
    pub implies: &'static [&'static str],
    /// Schemes it cannot run with, and why (inherited by the schemes that contain it).
    pub excludes: &'static [(&'static str, &'static str)],
    /// Whether it is in force in a resolved config; `None`: whenever it was requested (a
    /// scheme that sets no core key, only its own parameters and policies).
    pub active: Option<fn(&Config) -> bool>,
    /// Its own parameters (`[<name>]` table).
    pub params: &'static [Param],
    /// Puts its policy objects into the bundle the core calls.
    pub install: fn(&Config, &mut Policies),
}

/// Installs nothing: the scheme's settings select core behaviour through typed config keys.
pub(crate) fn no_policy(_: &Config, _: &mut Policies) {}

/// The scheme called `name`.
pub fn find(name: &str) -> Option<&'static Scheme> {
    SCHEMES.iter().copied().find(|s| s.name == name)
}

/// Why a requested scheme list cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemeError(pub String);

impl std::fmt::Display for SchemeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses `a+b+c` into registered schemes, in registry order, refusing unknown names,
/// repeats and pairs that cannot work together.
///
/// # Errors
/// [`SchemeError`] naming the unknown scheme, or both schemes of a refused pair and the reason.
pub fn parse(spec: &str) -> Result<Vec<&'static Scheme>, SchemeError> {
    let mut chosen: Vec<&'static Scheme> = Vec::new();
    for name in spec.split('+').map(str::trim) {
        if name.is_empty() {
            return Err(SchemeError(format!(
                "scheme `{spec}`: empty scheme name (schemes are joined by `+`, e.g. hotr+ipc)"
            )));
        }
        let s = find(name).ok_or_else(|| {
            SchemeError(format!(
                "unknown scheme `{name}` (known: {}; see `ssdlab schemes`)",
                SCHEMES
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if chosen.iter().any(|c| c.name == s.name) {
            return Err(SchemeError(format!("scheme `{name}` is named twice")));
        }
        for c in &chosen {
            if let Some(reason) = conflict(c, s) {
                return Err(SchemeError(format!(
                    "schemes `{}` and `{}` cannot be combined: {reason}",
                    c.name, s.name
                )));
            }
        }
        chosen.push(s);
    }
    chosen.sort_by_key(|s| position(s.name));
    Ok(chosen)
}

fn position(name: &str) -> usize {
    SCHEMES
        .iter()
        .position(|s| s.name == name)
        .unwrap_or(usize::MAX)
}

/// Why `a` and `b` cannot run together, if they cannot.
pub fn conflict(a: &Scheme, b: &Scheme) -> Option<String> {
    for (key, va) in a.sets {
        if let Some((_, vb)) = b.sets.iter().find(|(k, _)| k == key) {
            if va != vb {
                return Some(format!(
                    "both set `{key}` ({} sets {va}, {} sets {vb})",
                    a.name, b.name
                ));
            }
        }
    }
    // A scheme also refuses what the schemes it contains refuse.
    let says = |x: &Scheme, y: &Scheme| {
        std::iter::once(x)
            .chain(x.implies.iter().filter_map(|n| find(n)))
            .flat_map(|s| s.excludes.iter())
            .find(|(n, _)| *n == y.name || y.implies.contains(n))
            .map(|(_, r)| (*r).to_string())
    };
    says(a, b).or_else(|| says(b, a))
}

/// The settings of the chosen schemes as one TOML table.
///
/// # Panics
/// If a registered scheme's `key = value` is not TOML (a bug in its file; a unit test parses
/// every scheme's settings).
pub fn settings(chosen: &[&Scheme]) -> toml::Table {
    let mut table = toml::Table::new();
    for s in chosen {
        for (key, value) in s.sets {
            let one: toml::Table = toml::from_str(&format!("{key} = {value}"))
                .unwrap_or_else(|e| panic!("scheme {}: bad value for {key}: {e}", s.name));
            crate::config::merge(&mut table, one);
        }
    }
    table
}

/// The canonical composed name of the schemes in force in `cfg`, given those requested:
/// every scheme whose test holds (or, without a test, that was requested), minus those another
/// one in force contains, in registry order; `baseline` when none.
pub fn label(cfg: &Config, requested: &[&Scheme]) -> Vec<&'static Scheme> {
    let on: Vec<&'static Scheme> = SCHEMES
        .iter()
        .copied()
        .filter(|s| s.name != baseline::BASELINE.name)
        .filter(|s| match s.active {
            Some(test) => test(cfg),
            None => requested.iter().any(|r| r.name == s.name),
        })
        .collect();
    let shown: Vec<&'static Scheme> = on
        .iter()
        .copied()
        .filter(|s| !on.iter().any(|o| o.implies.contains(&s.name)))
        .collect();
    if shown.is_empty() {
        vec![&baseline::BASELINE]
    } else {
        shown
    }
}

/// The pair matrix as Markdown: a grid of every pair (✓ runs, ✗ refused, · same scheme) and
/// the refused pairs with their reasons. `docs/schemes/README.md` holds a copy (a test keeps
/// it current).
pub fn matrix_markdown() -> String {
    let mut o = String::from("| | ");
    let numbers: Vec<String> = (1..=SCHEMES.len()).map(|i| i.to_string()).collect();
    o.push_str(&numbers.join(" | "));
    o.push_str(" |\n|---|");
    o.push_str(&"---|".repeat(SCHEMES.len()));
    o.push('\n');
    let mut refused = Vec::new();
    for (i, a) in SCHEMES.iter().enumerate() {
        o.push_str(&format!("| {} `{}` |", i + 1, a.name));
        for (j, b) in SCHEMES.iter().enumerate() {
            let cell = if i == j {
                "·"
            } else if let Some(reason) = conflict(a, b) {
                if i < j {
                    refused.push(format!("- `{}` + `{}`: {reason}", a.name, b.name));
                }
                "✗"
            } else {
                "✓"
            };
            o.push_str(&format!(" {cell} |"));
        }
        o.push('\n');
    }
    o.push_str("\nRefused pairs:\n\n");
    o.push_str(&refused.join("\n"));
    o.push('\n');
    o
}

/// Joins scheme names with `+`.
pub fn join(schemes: &[&Scheme]) -> String {
    schemes.iter().map(|s| s.name).collect::<Vec<_>>().join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_their_settings_parse() {
        for (i, s) in SCHEMES.iter().enumerate() {
            assert!(
                SCHEMES[..i].iter().all(|o| o.name != s.name),
                "{} twice",
                s.name
            );
            let _ = settings(&[s]);
            for n in s.implies.iter().chain(s.excludes.iter().map(|(n, _)| n)) {
                assert!(find(n).is_some(), "{} names unknown scheme {n}", s.name);
            }
        }
    }

    #[test]
    fn composition_is_ordered_and_refuses_clashes() {
        let c = parse("ipc+hotr").unwrap();
        assert_eq!(join(&c), "hotr+ipc");
        let e = parse("hotr+deduphr").unwrap_err().0;
        assert!(
            e.contains("hotr") && e.contains("deduphr") && e.contains("staging.policy"),
            "{e}"
        );
        let e = parse("per+ips").unwrap_err().0;
        assert!(e.contains("per") && e.contains("ips"), "{e}");
        assert!(parse("hotr+nope")
            .unwrap_err()
            .0
            .contains("unknown scheme `nope`"));
        assert!(parse("rps+rps").unwrap_err().0.contains("twice"));
    }
}
