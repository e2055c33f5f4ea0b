//! `[host]`: replay mode, time scale, the host link and the window of pages in flight.

use super::*;

/// Host replay modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostMode {
    /// Requests arrive at their (scaled) trace timestamps.
    Open,
    /// Timestamps ignored; `queue_depth` requests kept outstanding.
    Closed,
}

/// Host settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Open- or closed-loop replay.
    pub mode: HostMode,
    /// Outstanding requests in closed-loop mode.
    pub queue_depth: u32,
    /// Multiplies every inter-arrival time (0.5 halves them).
    pub time_scale: f64,
    /// Host pages the controller works on at once (the page window): the pages of admitted
    /// requests not yet done. A request's pages beyond it are issued, in order, as earlier
    /// pages finish, and later requests wait behind it, so a huge request costs memory for the
    /// window, not for all its pages. A simulator resource bound, not a device property: the
    /// default (2^20 pages, 4 GiB of 4 KiB pages) never binds on the bundled traces or the
    /// committed experiments (checked by re-running them) and bounds in-flight state to about
    /// 200 MiB. Left out of the serialized config at its default.
    #[serde(default = "default_window", skip_serializing_if = "is_default_window")]
    pub max_pages_in_flight: u32,
    /// Open-loop replay: requests the drive holds at once (NVMe's fetch limit: MQSim's
    /// `Queue_Fetch_Size`); later arrivals wait on the host side, in order, and their response
    /// times count from their trace arrival. 0 (the default): no limit. Left out of the
    /// serialized config at 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_requests_in_flight: u32,
    /// The host interface whose transfers are charged to every request (`none`: none, the
    /// default). See [`HostLink`] and `sim::link`. Left out of the serialized config when
    /// `none`.
    #[serde(default, skip_serializing_if = "HostLink::is_none")]
    pub link: HostLink,
    /// `link = "custom"`: data rate per direction, MB/s (10^6 bytes per second).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub link_mb_s: f64,
    /// `link = "custom"`: bytes of one command's submission (host to device) and of its
    /// completion (device to host).
    #[serde(default, skip_serializing_if = "is_zero_pair")]
    pub link_command_bytes: [u32; 2],
    /// `link = "custom"`: both directions at once (PCIe, SAS) or one at a time (SATA).
    #[serde(default, skip_serializing_if = "is_false")]
    pub link_full_duplex: bool,
    /// Fixed time per request at the interface (command processing, interrupt), µs, added to
    /// every link's transfers; 0 by default (no source gives one value for all controllers).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub link_command_us: f64,
    /// With several I/O flows: which flow's waiting request the drive takes next when it has
    /// room (`max_requests_in_flight`, each flow's `queue_depth`). Left out of the serialized
    /// config at its default, `fifo`.
    #[serde(default, skip_serializing_if = "Arbitration::is_fifo")]
    pub arbitration: Arbitration,
    /// `arbitration = "weighted-round-robin"`: requests taken from the high, medium and low
    /// priority classes per round (1-256 each, NVMe's 8-bit weights plus one). The default,
    /// 4/2/1, is MQSim's (`IO_Flow_Priority_Class::get_scheduling_weight`).
    #[serde(
        default = "default_weights",
        skip_serializing_if = "is_default_weights"
    )]
    pub arbitration_weights: [u32; 3],
}

/// How the drive picks among the I/O flows' waiting requests (`host.arbitration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// The earliest arrival first, whatever its flow (ties: the flow given first).
    #[default]
    Fifo,
    /// NVMe round robin: the flows take turns, one request each.
    RoundRobin,
    /// NVMe weighted round robin with an urgent class: urgent flows first (in turn), then the
    /// high, medium and low classes by `arbitration_weights` (each class's flows in turn).
    WeightedRoundRobin,
}

impl Arbitration {
    fn is_fifo(&self) -> bool {
        *self == Arbitration::Fifo
    }
}

/// MQSim's class weights (high, medium, low).
pub const DEFAULT_WEIGHTS: [u32; 3] = [4, 2, 1];

fn default_weights() -> [u32; 3] {
    DEFAULT_WEIGHTS
}

fn is_default_weights(w: &[u32; 3]) -> bool {
    *w == DEFAULT_WEIGHTS
}

/// Host interfaces (`host.link`). Data rates are per direction after line encoding; command
/// sizes are the protocol's command and completion frames (sources in docs/config.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostLink {
    /// No interface: a request enters the drive at its arrival and is done with its last page.
    #[default]
    None,
    /// SATA 3.x, 6 Gb/s, 8b/10b: 600 MB/s, half duplex.
    Sata3,
    /// SAS-3, 12 Gb/s, 8b/10b: 1,200 MB/s per direction, full duplex.
    Sas12,
    /// PCIe 3.0 x4 (NVMe): 8 GT/s × 4 × 128b/130b, 256-B payloads with 24 B of TLP overhead:
    /// 3,600 MB/s per direction, full duplex.
    Pcie3x4,
    /// PCIe 4.0 x4 (NVMe): twice PCIe 3.0 x4: 7,201 MB/s per direction, full duplex.
    Pcie4x4,
    /// `link_mb_s`, `link_command_bytes`, `link_full_duplex`.
    Custom,
}

impl HostLink {
    fn is_none(&self) -> bool {
        *self == HostLink::None
    }
}

pub(crate) fn is_false(v: &bool) -> bool {
    !*v
}

/// Default page window, pages.
pub const DEFAULT_PAGE_WINDOW: u32 = 1 << 20;
