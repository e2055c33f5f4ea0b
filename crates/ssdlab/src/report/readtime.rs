//! Every report's "where the read's time went": per variant, the mean read page's time split
//! into its own sense and transfer, the wait for the bus, and the waits in its die's queue
//! behind each kind of work (the summary's `read_wait_us`), averaged over the experiment's
//! workloads and grid points (each the mean of its runs).

use super::{estimate, figures, fmt, metric, Data, Figure, Table};

/// The parts of `read_wait_us`, in stacking order, with their labels.
const PARTS: [(&str, &str); 9] = [
    ("service", "own service (sense and transfer, or a rebuild)"),
    ("bus", "waiting for the bus"),
    ("read", "behind reads"),
    ("user_program", "behind host programs"),
    ("gc", "behind GC"),
    ("erase", "behind erases"),
    ("migration", "behind migration"),
    ("redundancy", "behind redundancy"),
    ("mapping", "behind translation pages"),
];

/// The figure, or `None` when no result has a read page served from flash.
pub(super) fn figure(d: &Data) -> Option<Figure> {
    let groups = d.groups(None);
    let parts: Vec<&(&str, &str)> = PARTS
        .iter()
        .filter(|(k, _)| {
            d.results.iter().any(|(_, r)| {
                r.as_ref()
                    .and_then(|r| metric(&r.summary, &format!("read_wait_us.{k}")))
                    .is_some_and(|v| v > 0.0)
            })
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    let mut values = Vec::new();
    for v in &d.spec.variants {
        let per_part: Vec<Option<f64>> = parts
            .iter()
            .map(|(k, _)| {
                let cells: Vec<Option<f64>> = groups
                    .iter()
                    .map(|(w, g, _)| {
                        let runs: Vec<Option<f64>> = d
                            .runs(w, g, &v.name)
                            .iter()
                            .map(|s| metric((*s)?, &format!("read_wait_us.{k}")))
                            .collect();
                        estimate(&runs).map(|e| e.mean)
                    })
                    .collect();
                estimate(&cells).map(|e| e.mean)
            })
            .collect();
        if per_part.iter().all(Option::is_none) {
            continue;
        }
        rows.push(v.name.clone());
        values.push(per_part);
    }
    if rows.is_empty() {
        return None;
    }
    let names: Vec<String> = parts.iter().map(|(_, l)| l.to_string()).collect();
    Some(
        Stacked {
            id: "read-time",
            title: "Where the mean read page's time went",
            x_label: "mean read page (us), over the workloads",
            caption: format!(
                "Per variant, the mean over the experiment's {} workload and grid point(s), each the mean of its runs, of a read page's time from entering its die's queue to its data leaving the die (`read_wait_us`, µs). Requests' time in the host queue and on the host link is not part of it.",
                groups.len()
            ),
            rows,
            parts: names,
            values,
            unit: "",
            total: true,
        }
        .figure(),
    )
}

/// A stacked-bar figure of per-variant means, `values[row][part]` (`None`: no value, drawn
/// as 0), with its table (headers carry `unit`; a `total` column when asked).
pub(super) struct Stacked<'a> {
    pub(super) id: &'a str,
    pub(super) title: &'a str,
    pub(super) x_label: &'a str,
    pub(super) caption: String,
    pub(super) rows: Vec<String>,
    pub(super) parts: Vec<String>,
    pub(super) values: Vec<Vec<Option<f64>>>,
    pub(super) unit: &'a str,
    pub(super) total: bool,
}

impl Stacked<'_> {
    pub(super) fn figure(self) -> Figure {
        let drawn: Vec<Vec<f64>> = self
            .values
            .iter()
            .map(|r| r.iter().map(|v| v.unwrap_or(0.0)).collect())
            .collect();
        let svg = figures::stacked(&figures::Stacked {
            title: self.title,
            x_label: self.x_label,
            rows: &self.rows,
            parts: &self.parts,
            values: &drawn,
        });
        let mut header = vec!["variant".to_string()];
        header.extend(self.parts.iter().map(|n| format!("{n}{}", self.unit)));
        if self.total {
            header.push("total".to_string());
        }
        let rows = self
            .rows
            .iter()
            .zip(&self.values)
            .map(|(name, r)| {
                let mut row = vec![name.clone()];
                row.extend(r.iter().map(|v| fmt(*v)));
                if self.total {
                    row.push(fmt(Some(r.iter().map(|v| v.unwrap_or(0.0)).sum())));
                }
                row
            })
            .collect();
        Figure {
            id: self.id.to_string(),
            title: self.title.to_string(),
            caption: self.caption,
            svg,
            table: Table { header, rows },
        }
    }
}
