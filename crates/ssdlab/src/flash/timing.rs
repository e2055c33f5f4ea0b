//! Cell-type timing presets and the per-operation times used by the dies.

use crate::config::{FlashConfig, VoltageConfig};
use crate::time::us_to_ns;

/// Operation times in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Array read (sense).
    pub read_ns: u64,
    /// Array program.
    pub program_ns: u64,
    /// Array program in fast mode (shadowgc.txt: large ISPP step, short retention).
    pub fast_program_ns: u64,
    /// Block erase.
    pub erase_ns: u64,
    /// One page over the channel bus.
    pub transfer_ns: u64,
    /// Command overhead per array operation.
    pub command_ns: u64,
    /// ISPP iterations of a program.
    pub ispp_iterations: u32,
    /// Program phase of one ISPP iteration.
    pub ispp_program_ns: u64,
    /// Verify phase of one ISPP iteration.
    pub ispp_verify_ns: u64,
    /// Verify after the erase pulse.
    pub erase_verify_ns: u64,
    /// Voltage reset when a phase is cut short.
    pub voltage_reset_ns: u64,
    /// Page-buffer reload from the shadow buffer.
    pub buffer_reload_ns: u64,
    /// Sensing time by threshold-voltage level (low, normal, high).
    pub level_read_ns: [u64; 3],
    /// Read transfer time by level (more sensing levels, more bits to move).
    pub level_transfer_ns: [u64; 3],
    /// The controller's ECC decode of a page read off the chip before it is reprogrammed
    /// (GC relocation; copy-back skips it).
    pub ecc_decode_ns: u64,
}

impl Timing {
    /// Times of a resolved config: the flash and voltage sections, fast-mode programs
    /// (`shadow.fast_program_us`) and ECC decoding (`shadow.ecc_decode_us`).
    pub fn of(cfg: &crate::config::Config) -> Self {
        Timing {
            fast_program_ns: us_to_ns(cfg.shadow.fast_program_us),
            ecc_decode_ns: us_to_ns(cfg.shadow.ecc_decode_us),
            ..Timing::new(&cfg.flash, &cfg.voltage)
        }
    }

    /// Times of a resolved flash and voltage config.
    pub fn new(f: &FlashConfig, v: &VoltageConfig) -> Self {
        Timing {
            read_ns: us_to_ns(f.read_us),
            program_ns: us_to_ns(f.program_us),
            fast_program_ns: us_to_ns(f.program_us),
            erase_ns: us_to_ns(f.erase_us),
            transfer_ns: us_to_ns(f.transfer_us),
            command_ns: us_to_ns(f.command_us),
            ispp_iterations: f.ispp_iterations,
            ispp_program_ns: us_to_ns(f.ispp_program_us),
            ispp_verify_ns: us_to_ns(f.ispp_verify_us),
            erase_verify_ns: us_to_ns(f.erase_verify_us),
            voltage_reset_ns: us_to_ns(f.voltage_reset_us),
            buffer_reload_ns: us_to_ns(f.buffer_reload_us),
            level_read_ns: [v.low_read_factor, 1.0, v.high_read_factor]
                .map(|k| us_to_ns(f.read_us * k)),
            level_transfer_ns: [v.low_transfer_factor, 1.0, v.high_transfer_factor]
                .map(|k| us_to_ns(f.transfer_us * k)),
            ecc_decode_ns: 0,
        }
    }
}
