//! Every committed figure: no label leaves its figure or runs into another label.

use std::path::PathBuf;

#[test]
fn no_committed_figure_has_a_label_outside_or_over_another() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut files = Vec::new();
    crate::files_with_ext(&root, "svg", &mut files);
    files.sort();
    assert!(files.len() > 50, "only {} figures found", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let svg = std::fs::read_to_string(f).unwrap();
        for p in ssdlab::report::text_problems(&svg) {
            bad.push(format!("{}: {p}", f.strip_prefix(&root).unwrap().display()));
        }
    }
    assert!(
        bad.is_empty(),
        "{} label problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
