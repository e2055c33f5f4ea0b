//! The library's layers (docs/extending.md): a module imports only from layers below its own,
//! so the arrows between modules point one way and there is no cycle. Read from the source:
//! every `crate::<module>` path outside comments and test code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's layers, bottom to top. Modules of one layer do not import each other.
const LAYERS: &[&[&str]] = &[
    &["time", "files", "rng", "buffer"],
    &["engine", "config"],
    &["flash"],
    &["sched"],
    &["ftl"],
    &["dedup", "verify"],
    &["workload"],
    &["metrics"],
    &["sim"],
    &["schemes"],
    &["experiment"],
    &["calibrate", "report"],
];

/// The CLI's modules (crates/ssdlab-cli/src), bottom to top; `main.rs`, the crate root, sits
/// above them all.
const CLI_LAYERS: &[&[&str]] = &[
    &[
        "output",
        "memory_args",
        "timeline_out",
        "table",
        "compare",
        "explain",
    ],
    &["requests_out", "summary_csv", "experiment"],
    &["args"],
    &["trace_cmd"],
];

/// The top-level modules `src` names as `crate::<module>`, outside comments and test code.
fn imports(src: &str) -> BTreeSet<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::X, b, c::{Y, Z}}`: the first segment of each top-level item.
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        start = false;
                        out.insert(ident(&group[j..]));
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty() && m != "self" && m != "super");
    out
}

/// Every arrow of the crate at `src` that does not point to a lower layer of `layers`.
fn upward_arrows(src: &Path, layers: &[&[&str]], root: &str) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut files = Vec::new();
    crate::files_with_ext(src, "rs", &mut files);
    assert!(
        files.len() > 5,
        "{}: only {} files",
        src.display(),
        files.len()
    );
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == root || rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(&own) = rank.get(module.as_str()) else {
            wrong.push(format!(
                "{}: module `{module}` is in no layer",
                rel.display()
            ));
            continue;
        };
        for m in imports(&std::fs::read_to_string(f).unwrap()) {
            match rank.get(m.as_str()) {
                _ if m == module => {}
                Some(&r) if r < own => {}
                Some(&r) => wrong.push(format!(
                    "{}: `{module}` (layer {own}) imports `{m}` (layer {r})",
                    rel.display()
                )),
                None => wrong.push(format!("{}: imports `{m}`, in no layer", rel.display())),
            }
        }
    }
    wrong
}

#[test]
fn every_module_imports_only_from_layers_below_its_own() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut wrong = upward_arrows(&crates.join("ssdlab/src"), LAYERS, "lib");
    wrong.extend(upward_arrows(
        &crates.join("ssdlab-cli/src"),
        CLI_LAYERS,
        "main",
    ));
    assert!(
        wrong.is_empty(),
        "arrows pointing up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn imports_are_read_from_paths_and_groups_not_comments() {
    let src = "use crate::{config::Config, flash::{Geometry, Ppn}, time};\n\
               // crate::schemes in a comment\n\
               fn f() { crate::ftl::logical_pages(); }\n\
               #[cfg(test)]\nmod tests { use crate::sim::Simulation; }";
    let got: Vec<String> = imports(src).into_iter().collect();
    assert_eq!(got, ["config", "flash", "ftl", "time"]);
}
