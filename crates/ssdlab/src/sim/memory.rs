//! A run's memory, estimated from its configuration before anything is allocated, so a drive
//! or window too large for the machine is refused with a breakdown instead of an abort or an
//! OOM kill. Every part is an upper bound of what the run keeps for its whole length; none
//! grows with the trace's length (in-flight work is bounded by `host.max_pages_in_flight`).

use super::{Op, ReqState};
use crate::config::Config;
use crate::flash::Geometry;
use crate::ftl::blocks::{BlockInfo, PlaneInfo};
use crate::ftl::mapping::VersionTables;

/// Bytes of per-page state of an LRU buffer (slot plus index entry at the hash map's worst
/// load).
pub const LRU_BYTES_PER_PAGE: u64 = 32 + 18;

/// Bytes per entry of the mapping cache: the `lru` crate's boxed node (key, dirty flag, two
/// links: 24 B, plus the allocator's 16), its hash-table slot at the table's worst load, and a
/// dirty-list slot. With `--verify`, 4 B per logical page more (the flash copy it checks).
pub const CMT_BYTES_PER_ENTRY: u64 = 24 + 16 + 18 + 4;

/// Bytes of a logical page's record in the mapping (`ftl/mapping.rs`: programs in flight,
/// sparse versions, pins): key and value, 24 B, in a hash table that may be half empty after it
/// grew.
pub const RECORD_BYTES: u64 = 48;

/// Process overhead besides the tables: code, histograms, I/O buffers, allocator slack.
const BASE_BYTES: u64 = 16 << 20;

/// Sizes the estimate works from.
#[derive(Debug, Clone, Copy)]
pub struct Tables {
    /// Logical pages of the FTL.
    pub logical: u64,
    /// Physical pages.
    pub physical: u64,
    /// Blocks.
    pub blocks: u64,
}

/// Estimated bytes per part (see [`estimate_with`]).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MemoryEstimate {
    /// (what, bytes), largest parts first.
    pub parts: Vec<(String, u64)>,
}

impl MemoryEstimate {
    /// All parts.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|(_, b)| b).sum()
    }
}

impl std::fmt::Display for MemoryEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(what, b)| format!("{what} {}", mib(*b)))
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// `b` bytes in MiB, for messages.
pub fn mib(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / f64::from(1 << 20))
}

/// Bytes one in-flight host page may hold: its operation and its slot's read snapshot, its
/// queue slot, the mapping's record of its page, a share of its request, an event.
pub fn bytes_per_page_in_flight() -> u64 {
    let snapshot = std::mem::size_of::<[u64; crate::sched::OpClass::COUNT]>();
    (std::mem::size_of::<Op>() + snapshot + 4 + std::mem::size_of::<ReqState>() + 32) as u64
        + RECORD_BYTES
}

/// The memory a run of `cfg` with `policies` (the slots its schemes fill) needs, by part;
/// `crate::schemes::memory_estimate` fills the policies from the registry.
pub fn estimate_with(
    cfg: &Config,
    policies: &super::policy::Policies,
    full_versions: bool,
) -> MemoryEstimate {
    let geo = Geometry::of(cfg);
    let t = Tables {
        logical: u64::from(crate::ftl::logical_pages(cfg)),
        physical: u64::from(geo.pages()),
        blocks: u64::from(geo.blocks()),
    };
    let tables = VersionTables::kept(full_versions);
    let mut parts = vec![
        (
            match tables {
                VersionTables::Full => "mapping (8 B per logical and per physical page: full version tables)",
                VersionTables::Sparse => "mapping (4 B per logical and per physical page, a written bit per logical page)",
            }
            .to_string(),
            tables.bytes(t.logical, t.physical)
                // Sparse tables keep a record of each dirty page of the device buffer.
                + match tables {
                    VersionTables::Full => 0,
                    VersionTables::Sparse => u64::from(cfg.buffer.device_pages) * RECORD_BYTES,
                },
        ),
        (
            "block state".to_string(),
            t.blocks * (std::mem::size_of::<BlockInfo>() as u64 + 1 + 2 + 8)
                + u64::from(geo.planes()) * std::mem::size_of::<PlaneInfo>() as u64,
        ),
        (
            "pages in flight (host.max_pages_in_flight)".to_string(),
            u64::from(cfg.host.max_pages_in_flight) * bytes_per_page_in_flight(),
        ),
        (
            "preconditioning scratch".to_string(),
            (4.0 * t.logical as f64 * cfg.precondition.fill) as u64,
        ),
        ("process".to_string(), BASE_BYTES),
    ];
    if cfg.sched.max_outstanding_writes > 0 {
        // A VecDeque at its bound may hold twice its length while it grows.
        parts.push((
            "writes held by the write-queue bound".to_string(),
            2 * super::admit::MAX_HELD_WRITES as u64
                * std::mem::size_of::<(crate::time::SimTime, crate::workload::Request)>() as u64,
        ));
    }
    if let Some((entries, _)) = crate::ftl::mapping_cache_shape(cfg, &geo) {
        parts.push((
            "mapping cache (ftl.mapping_cache_*)".to_string(),
            u64::from(entries) * CMT_BYTES_PER_ENTRY,
        ));
    }
    if cfg.buffer.device_pages > 0 {
        parts.push((
            "device buffer".to_string(),
            u64::from(cfg.buffer.device_pages) * LRU_BYTES_PER_PAGE,
        ));
    }
    if policies.relocation_levels() > 1 {
        parts.push((
            "hotness field (2 bits per logical page)".to_string(),
            t.logical.div_ceil(4),
        ));
    }
    if cfg.voltage.rewrite_clean_read_hot {
        parts.push((
            "rewrites held for idle time".to_string(),
            u64::from(geo.dies())
                * u64::from(cfg.voltage.rewrite_backlog_pages)
                * bytes_per_page_in_flight(),
        ));
    }
    for p in policies.list.iter().flatten() {
        if let Some((what, bytes)) = p.table_bytes(cfg, &t) {
            parts.push((what.to_string(), bytes));
        }
    }
    parts.retain(|(_, b)| *b > 0);
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    MemoryEstimate { parts }
}

/// Memory the machine can give now (Linux: `MemAvailable` of `/proc/meminfo`), bytes.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Share of the available memory a run may plan to use when no limit is given.
pub const DEFAULT_SHARE: f64 = 0.8;

/// The default limit: [`DEFAULT_SHARE`] of [`available_bytes`] (`None` where the machine does
/// not say).
pub fn default_limit() -> Option<u64> {
    available_bytes().map(|b| (b as f64 * DEFAULT_SHARE) as u64)
}

/// Parses a memory size: bytes, or a number with K/M/G/T (powers of 1024, optional `iB`/`B`),
/// e.g. `512M`, `1.5GiB`; `none` for no limit.
///
/// # Errors
/// A message saying what was expected.
pub fn parse_size(s: &str) -> Result<Option<u64>, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, shift) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 10),
        Some('m') => (&body[..body.len() - 1], 20),
        Some('g') => (&body[..body.len() - 1], 30),
        Some('t') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let bad = || format!("`{s}`: expected a size like 512M, 8G, 1.5GiB or a byte count, or `none`");
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let bytes = v * f64::from(1u32 << (shift / 2)) * f64::from(1u32 << (shift - shift / 2));
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(bad());
    }
    Ok(Some(bytes as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512M"), Ok(Some(512 << 20)));
        assert_eq!(parse_size("1.5GiB"), Ok(Some(3 << 29)));
        assert_eq!(parse_size("2t"), Ok(Some(2 << 40)));
        assert_eq!(parse_size("4096"), Ok(Some(4096)));
        assert_eq!(parse_size("none"), Ok(None));
        for bad in ["", "-1G", "nanG", "1e300", "12Q", "0"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
