//! Flash timing: cell-type defaults, the ISPP phase structure used by P/E suspension, the PER
//! and PE0 idealisations, and the suspension settings.

use serde::{Deserialize, Serialize};

/// NAND cell types with preset timings (SPEC.md, "Flash-type presets").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CellType {
    /// 1 bit per cell.
    Slc,
    /// 2 bits per cell.
    Mlc,
    /// 3 bits per cell.
    Tlc,
    /// 4 bits per cell.
    Qlc,
    /// 64-layer 3D TLC.
    #[serde(rename = "3d-tlc")]
    Tlc3d,
}

impl CellType {
    /// Preset (read, program, erase) times in µs. SLC/MLC/TLC: vendor white-paper ranges
    /// (upper ends); QLC: typical datasheet class; 3D-TLC: deduphr.txt §4.3.
    pub fn timing_us(self) -> (f64, f64, f64) {
        match self {
            CellType::Slc => (25.0, 300.0, 1500.0),
            CellType::Mlc => (50.0, 900.0, 3000.0),
            CellType::Tlc => (75.0, 1350.0, 4500.0),
            CellType::Qlc => (140.0, 3000.0, 10000.0),
            CellType::Tlc3d => (90.0, 900.0, 10000.0),
        }
    }
}

/// Flash timing as written in a config: values left out come from the cell-type preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlash {
    cell: CellType,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    program_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    erase_us: Option<f64>,
    bus_mb_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    transfer_us: Option<f64>,
    command_us: f64,
    copyback: bool,
    multi_plane: bool,
    #[serde(default, skip_serializing_if = "MultiPlaneRule::is_default")]
    multi_plane_rule: MultiPlaneRule,
    cache_read: bool,
    pe_idealization: PeIdealization,
    #[serde(skip_serializing_if = "Option::is_none")]
    ispp_iterations: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ispp_program_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ispp_verify_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    erase_verify_us: Option<f64>,
    voltage_reset_us: f64,
    buffer_reload_us: f64,
}

/// The papers' idealisations of program and erase (pe-suspension.txt §3.2), applied to the
/// array times after everything else is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeIdealization {
    /// Real program and erase times.
    None,
    /// PER: program and erase take the read (sense) time.
    Per,
    /// PE0: program and erase take no array time (data transfers remain).
    Pe0,
}

/// Which operations a multi-plane command may gang (`flash.multi_plane_rule`): ONFI
/// multi-plane program and read commands address the same page in each plane, and many parts
/// also require blocks of alternating parity (even/odd) on a two-plane die.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiPlaneRule {
    /// Same page offset in every plane (MQSim's rule).
    #[default]
    SamePage,
    /// Same page offset, and block numbers (within the plane) of the same parity.
    SamePageBlockParity,
    /// Any operations of one kind on different planes (an idealisation: it overstates
    /// multi-plane parallelism).
    Any,
}

impl MultiPlaneRule {
    fn is_default(&self) -> bool {
        *self == MultiPlaneRule::SamePage
    }
}

/// Resolved flash timing and options.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlashConfig {
    /// Cell type whose preset supplied the timings not given explicitly.
    pub cell: CellType,
    /// Array read (sense) time per page, µs.
    pub read_us: f64,
    /// Array program time per page, µs (= ISPP iterations × (program + verify phase)).
    pub program_us: f64,
    /// Block erase time, µs (= erase pulse + erase verify).
    pub erase_us: f64,
    /// Channel bus rate, MB/s (10^6 bytes per second); sets `transfer_us` when that is not given.
    pub bus_mb_per_s: f64,
    /// Bus time to move one page between controller and die, µs.
    pub transfer_us: f64,
    /// Command/address overhead added to every array operation, µs.
    pub command_us: f64,
    /// GC moves pages inside the plane (copy-back) without crossing the bus.
    pub copyback: bool,
    /// Reads and programs on different planes of a die run as one multi-plane operation (one
    /// array time, one bus transfer per page), under `multi_plane_rule`.
    pub multi_plane: bool,
    /// Which operations may share a multi-plane command (left out of the serialized config
    /// at its default, so existing config hashes are unchanged).
    #[serde(default, skip_serializing_if = "MultiPlaneRule::is_default")]
    pub multi_plane_rule: MultiPlaneRule,
    /// Cache read: a sensed page moves to the cache register and the die can start its next
    /// array operation while the page goes out over the bus.
    pub cache_read: bool,
    /// PER / PE0 idealisation (already applied to `program_us` and `erase_us`).
    pub pe_idealization: PeIdealization,
    /// ISPP iterations of a program (N_w_cycle).
    pub ispp_iterations: u32,
    /// Program phase of one ISPP iteration, µs (T_w_program).
    pub ispp_program_us: f64,
    /// Verify phase of one ISPP iteration, µs (T_verify).
    pub ispp_verify_us: f64,
    /// Verify after the erase pulse, µs; the pulse is `erase_us − erase_verify_us`.
    pub erase_verify_us: f64,
    /// Time to reset the operating voltages when a phase is cut short, µs (T_voltage_reset).
    pub voltage_reset_us: f64,
    /// Time to reload the page buffer from the shadow buffer on resume, µs (T_buffer).
    pub buffer_reload_us: f64,
}

/// When a program or erase in progress yields to reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuspendPolicy {
    /// Never: reads wait for the program or erase to finish.
    Off,
    /// Only erases suspend (pulse after a voltage reset, keeping its progress; verify redone).
    Erase,
    /// Inter-Phase Suspension: programs stop at the end of the current program or verify
    /// phase; erases as `erase`.
    Ips,
    /// Intra-Phase Cancellation: the phase in progress is cancelled after a voltage reset;
    /// erases as `erase`.
    Ipc,
    /// The read starts at once and the program or erase loses no time (the "optimal" system).
    Ideal,
}

/// How IPC decides whether a cancelled program phase must be redone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IpcRedo {
    /// Redone with probability 1 − (fraction of the phase completed when cancelled), drawn
    /// from the seeded stream `ipc-redo`.
    Progress,
    /// Always redone (worst case).
    Always,
}

/// Program/erase suspension settings (pe-suspension.txt §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspendConfig {
    /// Policy.
    pub policy: SuspendPolicy,
    /// Resume reloads the page buffer from the on-chip shadow buffer (`flash.buffer_reload_us`);
    /// without it the controller re-sends the page over the bus (`flash.transfer_us`).
    pub shadow_buffer: bool,
    /// Reads served per suspension before resuming (0 = while any are queued).
    pub max_reads_per_suspension: u32,
    /// Suspensions allowed per operation; beyond it reads wait (prevents starving writes).
    pub max_suspensions_per_op: u32,
    /// IPC's model of a cancelled program phase.
    pub ipc_redo: IpcRedo,
    /// A read served during a suspension leaves through the cache register while the operation
    /// resumes, instead of holding the die until its page is out (the paper is silent).
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub resume_overlap: bool,
}

/// ISPP iterations per cell type when not given: pe-suspension.txt Table 1 gives 5 (SLC) and
/// 15 (MLC); denser cells are not given and take the MLC count.
/// Upper bound of `flash.ispp_iterations`: real ISPP programs take 5-30 iterations; the bound
/// keeps each operation's phase list small (a phased program holds one entry per phase).
const MAX_ISPP_ITERATIONS: u32 = 1000;

fn default_iterations(cell: CellType) -> u32 {
    if cell == CellType::Slc {
        5
    } else {
        15
    }
}

/// Program-phase share of an ISPP iteration when not given: Table 1's 20/28 (SLC) and 20/44
/// (MLC); denser cells take the MLC share.
fn program_share(cell: CellType) -> f64 {
    if cell == CellType::Slc {
        20.0 / 28.0
    } else {
        20.0 / 44.0
    }
}

fn check_duration(errs: &mut Vec<String>, key: &str, v: f64) {
    if !(v.is_finite() && (0.0..=1e9).contains(&v)) {
        errs.push(format!(
            "{key} = {v}: must be a finite duration between 0 and 1e9 us"
        ));
    }
}

impl RawFlash {
    pub(super) fn resolve(&self, page_size_bytes: u32, errs: &mut Vec<String>) -> FlashConfig {
        let f = self;
        let (read_d, prog_d, erase_d) = f.cell.timing_us();
        let read_us = f.read_us.unwrap_or(read_d);
        let mut program_us = f.program_us.unwrap_or(prog_d);
        let mut erase_us = f.erase_us.unwrap_or(erase_d);
        let n = f.ispp_iterations.unwrap_or(default_iterations(f.cell));
        if !(1..=MAX_ISPP_ITERATIONS).contains(&n) {
            errs.push(format!(
                "flash.ispp_iterations = {n}: must be in 1..={MAX_ISPP_ITERATIONS} (an ISPP program has tens of iterations)"
            ));
        }
        let n = n.clamp(1, MAX_ISPP_ITERATIONS);
        let cycle = program_us / f64::from(n.max(1));
        let ispp_program_us = f.ispp_program_us.unwrap_or(cycle * program_share(f.cell));
        let ispp_verify_us = f.ispp_verify_us.unwrap_or(cycle - ispp_program_us);
        let ispp_total = f64::from(n) * (ispp_program_us + ispp_verify_us);
        // An idealised program has no phases (and its resolved program_us is the idealised
        // time, which is what `config show` prints and reloads).
        if f.pe_idealization == PeIdealization::None
            && (ispp_total - program_us).abs() > 1e-6 * program_us.max(1.0)
        {
            errs.push(format!(
                "flash.ispp_*: {n} iterations x ({ispp_program_us} + {ispp_verify_us}) us = {ispp_total} us must equal flash.program_us = {program_us}"
            ));
        }
        // A value derived from flash.program_us is named with its source, so a user who set
        // only the program time sees what the check is about.
        let derived = |key: &str, set: bool| {
            if set {
                key.to_string()
            } else {
                format!("{key} (not set: derived from flash.program_us = {program_us} over {n} ISPP iterations)")
            }
        };
        let erase_verify_us = f.erase_verify_us.unwrap_or(ispp_verify_us);
        let ev_key = derived("flash.erase_verify_us", f.erase_verify_us.is_some());
        check_duration(errs, &ev_key, erase_verify_us);
        if erase_verify_us > erase_us {
            errs.push(format!(
                "{ev_key} = {erase_verify_us}: must not exceed flash.erase_us = {erase_us}"
            ));
        }
        let (ip_key, iv_key) = (
            derived("flash.ispp_program_us", f.ispp_program_us.is_some()),
            derived("flash.ispp_verify_us", f.ispp_verify_us.is_some()),
        );
        match f.pe_idealization {
            PeIdealization::None => {}
            PeIdealization::Per => (program_us, erase_us) = (read_us, read_us),
            PeIdealization::Pe0 => (program_us, erase_us) = (0.0, 0.0),
        }
        let flash = FlashConfig {
            cell: f.cell,
            read_us,
            program_us,
            erase_us,
            bus_mb_per_s: f.bus_mb_per_s,
            transfer_us: f
                .transfer_us
                .unwrap_or(f64::from(page_size_bytes) / f.bus_mb_per_s),
            command_us: f.command_us,
            copyback: f.copyback,
            multi_plane: f.multi_plane,
            multi_plane_rule: f.multi_plane_rule,
            cache_read: f.cache_read,
            pe_idealization: f.pe_idealization,
            ispp_iterations: n,
            ispp_program_us,
            ispp_verify_us,
            erase_verify_us: erase_verify_us.min(erase_us),
            voltage_reset_us: f.voltage_reset_us,
            buffer_reload_us: f.buffer_reload_us,
        };
        for (key, v) in [
            ("flash.read_us", flash.read_us),
            ("flash.program_us", flash.program_us),
            ("flash.erase_us", flash.erase_us),
            ("flash.transfer_us", flash.transfer_us),
            ("flash.command_us", flash.command_us),
            (ip_key.as_str(), flash.ispp_program_us),
            (iv_key.as_str(), flash.ispp_verify_us),
            ("flash.voltage_reset_us", flash.voltage_reset_us),
            ("flash.buffer_reload_us", flash.buffer_reload_us),
        ] {
            check_duration(errs, key, v);
        }
        if !(flash.bus_mb_per_s.is_finite() && flash.bus_mb_per_s > 0.0) {
            errs.push(format!(
                "flash.bus_mb_per_s = {}: must be > 0",
                flash.bus_mb_per_s
            ));
        }
        flash
    }
}
