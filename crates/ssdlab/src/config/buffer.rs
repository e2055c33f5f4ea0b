//! `[buffer]`: the host and device write buffers.

use super::*;

/// The device-side DRAM buffer (LRU, write-back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    /// Capacity in pages (0 = no buffer: writes go straight to flash).
    pub device_pages: u32,
    /// Flushes of evicted dirty pages that may run in the background, device-wide: a write that
    /// evicts a dirty page completes from DRAM while fewer are in flight, else it waits for its
    /// eviction's flush (MQSim's destage buffer and its back-pressure bound). 0 (the default):
    /// every such write waits for its flush. Left out of the serialized config at 0.
    #[serde(default, skip_serializing_if = "super::is_zero_u32")]
    pub flush_backlog_pages: u32,
    /// What a background flush counts against `flush_backlog_pages` while in flight: a page
    /// (the default), or the 512-byte sectors of host data it writes back, against a bound of
    /// `flush_backlog_pages` times the sectors of a page (MQSim counts its back pressure in
    /// sectors). Left out of the serialized config at `page`.
    #[serde(default, skip_serializing_if = "FlushUnit::is_page")]
    pub flush_backlog_unit: FlushUnit,
    /// With `flush_backlog_pages`: a page written for the first time within this period is
    /// flushed at once and stays cached clean (MQSim's eager write-back of cold data, a bloom
    /// filter reset every second); 0 (the default): off. Left out of the serialized config at 0.
    #[serde(default, skip_serializing_if = "super::is_zero_f64")]
    pub eager_flush_period_ms: f64,
    /// Host-side page cache (the file system's, LRU write-back) in front of the device, pages
    /// (0 = none). Left out of the serialized config when 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub host_pages: u32,
    /// DRAM access time per page, ns (shadowgc.txt §4.1: 20 ns).
    pub dram_ns_per_page: u64,
    /// Whether the buffers also cache pages read from flash (a read/write cache: hire.txt §3.1
    /// counts read references of cached pages) or hold written pages only (the write buffers
    /// of shadowgc.txt; a read of a buffered page is still served from DRAM). Left out of the
    /// serialized config when true, so existing config hashes are unchanged.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub cache_reads: bool,
}

/// What a background flush counts against `buffer.flush_backlog_pages` while in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlushUnit {
    /// One page per flush.
    #[default]
    Page,
    /// The 512-byte sectors of host data the flush writes back: a write's own sectors of the
    /// page for an eager flush, every sector written to the page while it was buffered for an
    /// evicted one (MQSim's `back_pressure_buffer_depth`, Data_Cache_Manager_Flash_Advanced.cpp;
    /// partial-page writes count part of a page, so more flushes fit under the bound).
    Sector,
}

impl FlushUnit {
    fn is_page(&self) -> bool {
        *self == FlushUnit::Page
    }
}
