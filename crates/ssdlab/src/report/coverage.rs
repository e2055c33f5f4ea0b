//! Every report with a staging scheme (HotR, DedupHR): what became of the scheme's blocked
//! read pages — redirected to a copy, or not, and why not (no hot-list entry or content not
//! staged, an entry whose copy is not made yet, the copy's die busy too) — per variant, as
//! shares of its blocked read pages averaged over the workloads and grid points.

use super::{estimate, metric, Data, Figure};

/// The fates counted in the summary's `staging`, in stacking order, with their labels.
const FATES: [(&str, &str); 4] = [
    ("staging.redirected", "redirected"),
    ("staging.misses", "no entry / content not staged"),
    ("staging.hits_without_copy", "entry, no copy yet"),
    ("staging.copy_busy", "copy's die busy"),
];

/// One run's shares (%) of its blocked read pages, the rest last.
fn shares(s: &serde_json::Value) -> Option<[f64; 5]> {
    let pages = metric(s, "reads_blocked")?;
    if pages <= 0.0 {
        return None;
    }
    let mut out = [0.0; 5];
    for (i, (k, _)) in FATES.iter().enumerate() {
        out[i] = metric(s, k)? / pages * 100.0;
    }
    out[4] = (100.0 - out[..4].iter().sum::<f64>()).max(0.0);
    Some(out)
}

/// The figure, or `None` when no variant stages copies.
pub(super) fn figure(d: &Data) -> Option<Figure> {
    let groups = d.groups(None);
    let mut rows = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = Vec::new();
    for v in &d.spec.variants {
        let per: Vec<Vec<Option<f64>>> = groups
            .iter()
            .map(|(w, g, _)| {
                let runs: Vec<Option<[f64; 5]>> = d
                    .runs(w, g, &v.name)
                    .iter()
                    .map(|s| shares((*s)?))
                    .collect();
                (0..5)
                    .map(|i| {
                        estimate(&runs.iter().map(|r| r.map(|r| r[i])).collect::<Vec<_>>())
                            .map(|e| e.mean)
                    })
                    .collect()
            })
            .collect();
        let means: Vec<Option<f64>> = (0..5)
            .map(|i| estimate(&per.iter().map(|c| c[i]).collect::<Vec<_>>()).map(|e| e.mean))
            .collect();
        // A variant stages copies when some of its blocked pages were redirected or refused
        // for a staging reason.
        if means[..4].iter().flatten().sum::<f64>() > 0.0 {
            rows.push(v.name.clone());
            values.push(means);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut names: Vec<String> = FATES.iter().map(|(_, l)| l.to_string()).collect();
    names.push("other".to_string());
    Some(
        super::readtime::Stacked {
            id: "coverage-loss",
            title: "What became of the blocked read pages of staging schemes",
            x_label: "% of the variant's blocked read pages, over the workloads",
            caption: format!(
                "Per variant that stages copies, the mean over the experiment's {} workload and grid point(s), each the mean of its runs, of its blocked read pages (`reads_blocked`) by what became of them (`staging.*`); \"other\" is what the four counters leave (0 when they account for every blocked page).",
                groups.len()
            ),
            rows,
            parts: names,
            values,
            unit: " (%)",
            total: false,
        }
        .figure(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_of_the_blocked_pages_and_the_rest_is_other() {
        let s = serde_json::json!({
            "reads_blocked": 200.0,
            "staging": {"redirected": 40.0, "misses": 60.0, "hits_without_copy": 20.0, "copy_busy": 10.0}
        });
        assert_eq!(shares(&s), Some([20.0, 30.0, 10.0, 5.0, 35.0]));
        let none_blocked = serde_json::json!({"reads_blocked": 0.0, "staging": {}});
        assert_eq!(shares(&none_blocked), None);
        let no_staging = serde_json::json!({"reads_blocked": 5.0});
        assert_eq!(shares(&no_staging), None);
    }
}
