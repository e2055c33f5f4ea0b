//! The host interface (`host.link`): every request's command, data and completion cross one
//! link between host and drive, in the order they are queued on it.
//!
//! A write's command and data go to the device before its pages enter the drive; a request's
//! completion (with a read's data) goes to the host after its last page is done, so a read's
//! flash work and its data transfer do not overlap (store and forward per request: this
//! overstates a large read's latency by at most its size over the data rate). A full-duplex
//! link (PCIe, SAS) has one queue per direction; a half-duplex one (SATA) one queue for both.
//! Transfers never preempt each other. Protocol framing beyond the command and completion
//! frames (PCIe TLP headers are folded into the data rate) and controller processing (see
//! `host.link_command_us`) are not modelled.

use crate::config::{HostConfig, HostLink};
use crate::time::SimTime;

/// A link's parameters and the time each direction is next free.
#[derive(Debug, Clone)]
pub(super) struct Link {
    ns_per_byte: f64,
    /// Bytes of a command's submission and of its completion.
    command: [u64; 2],
    full_duplex: bool,
    command_ns: u64,
    /// When each direction (to the device, to the host) is free; half duplex uses the first.
    free_at: [SimTime; 2],
}

impl Link {
    /// The link of `h`, if any.
    pub(super) fn of(h: &HostConfig) -> Option<Link> {
        // (MB/s per direction, submission bytes, completion bytes, full duplex)
        let (mb_s, sub, done, full) = match h.link {
            HostLink::None => return None,
            // Register H2D FIS (20 B) + DMA Setup FIS (28 B); Set Device Bits FIS (8 B).
            HostLink::Sata3 => (600.0, 48, 8, false),
            // SSP COMMAND frame: 24 B header + 28 B COMMAND IU + 4 B CRC; RESPONSE frame:
            // 24 B header + 24 B RESPONSE IU + 4 B CRC.
            HostLink::Sas12 => (1200.0, 56, 52, true),
            // 64-B submission queue entry; 16-B completion queue entry + 4-B MSI-X write.
            HostLink::Pcie3x4 => (pcie_mb_s(8.0), 64, 20, true),
            HostLink::Pcie4x4 => (pcie_mb_s(16.0), 64, 20, true),
            HostLink::Custom => (
                h.link_mb_s,
                h.link_command_bytes[0],
                h.link_command_bytes[1],
                h.link_full_duplex,
            ),
        };
        Some(Link {
            ns_per_byte: 1e3 / mb_s,
            command: [u64::from(sub), u64::from(done)],
            full_duplex: full,
            command_ns: (h.link_command_us * 1e3).round() as u64,
            free_at: [SimTime::ZERO; 2],
        })
    }

    /// Queues `bytes` in direction `dir` (0: to the device, 1: to the host) at `now`; returns
    /// when they have crossed.
    fn transfer(&mut self, now: SimTime, dir: usize, bytes: u64) -> SimTime {
        let d = if self.full_duplex { dir } else { 0 };
        let start = now.max(self.free_at[d]);
        let end = SimTime(start.ns() + (bytes as f64 * self.ns_per_byte).ceil() as u64);
        self.free_at[d] = end;
        end
    }

    /// A request's command (with a write's `data` bytes) goes to the device at `now`; returns
    /// when the drive has it.
    pub(super) fn submit(&mut self, now: SimTime, data: u64) -> SimTime {
        let at = self.transfer(now, 0, self.command[0] + data);
        SimTime(at.ns() + self.command_ns)
    }

    /// A finished request's completion (with a read's `data` bytes) goes to the host at `now`;
    /// returns when the host has it.
    pub(super) fn complete(&mut self, now: SimTime, data: u64) -> SimTime {
        self.transfer(now, 1, self.command[1] + data)
    }
}

/// PCIe x4 data rate per direction, MB/s, at `gt_s` GT/s per lane: 128b/130b line coding and
/// 256-B TLP payloads carrying 24 B of framing, sequence number, header and LCRC each.
fn pcie_mb_s(gt_s: f64) -> f64 {
    gt_s * 1e3 * 4.0 / 8.0 * 128.0 / 130.0 * 256.0 / 280.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(sets: &[&str]) -> Link {
        let mut b = crate::config::ConfigBuilder::preset("tiny").unwrap();
        for s in sets {
            b = b.set(s).unwrap();
        }
        Link::of(&b.build().unwrap().host).unwrap()
    }

    #[test]
    fn presets_have_their_spec_rates() {
        // 4 KiB of data plus the command frame, by hand.
        let at = |l: &mut Link| l.submit(SimTime::ZERO, 4096).ns();
        assert_eq!(
            at(&mut link(&["host.link=\"sata3\""])),
            ((4096.0 + 48.0) / 0.6_f64).ceil() as u64
        );
        assert_eq!(
            at(&mut link(&["host.link=\"sas12\""])),
            ((4096.0 + 56.0) / 1.2_f64).ceil() as u64
        );
        let pcie3: f64 = 8.0 * 4.0 / 8.0 * 128.0 / 130.0 * 256.0 / 280.0; // bytes per ns
        assert_eq!(
            at(&mut link(&["host.link=\"pcie3x4\""])),
            ((4096.0 + 64.0) / pcie3).ceil() as u64
        );
        assert_eq!(
            at(&mut link(&["host.link=\"pcie4x4\""])),
            ((4096.0 + 64.0) / (2.0 * pcie3)).ceil() as u64
        );
    }

    #[test]
    fn half_duplex_shares_one_queue_full_duplex_has_two() {
        let mut sata = link(&["host.link=\"sata3\""]);
        let a = sata.submit(SimTime::ZERO, 6000);
        // A completion queued meanwhile waits for the submission on a half-duplex link.
        let b = sata.complete(SimTime::ZERO, 0);
        assert_eq!(b.ns(), a.ns() + (8.0_f64 / 0.6).ceil() as u64);
        let mut sas = link(&["host.link=\"sas12\""]);
        sas.submit(SimTime::ZERO, 6000);
        assert_eq!(
            sas.complete(SimTime::ZERO, 0).ns(),
            (52.0_f64 / 1.2).ceil() as u64
        );
        // Transfers in one direction queue in order.
        let c = sas.submit(SimTime::ZERO, 0);
        assert_eq!(
            c.ns(),
            ((6056.0_f64) / 1.2).ceil() as u64 + (56.0_f64 / 1.2).ceil() as u64
        );
    }
}
