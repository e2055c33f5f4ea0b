//! Threshold-voltage controllers (hire.txt): faster reads against less wear.
//!
//! HVC and LVC program every page (and formatted the drive) at the high or low level. HIRE
//! classes each page leaving the device buffer by its hit counts: read-hot pages are
//! programmed at the high level (fast reads), write-hot ones at the low level (less wear),
//! mixed ones at the normal level. HIRE programs at the chosen level only what is written
//! anyway (evicted dirty pages, GC moves): hire.txt never says a clean page is rewritten, and
//! its overhead (§3.3: the counters and a 2-bit field) and write latency (§4.2: no negative
//! effect) argue against it. `voltage.rewrite_clean_read_hot` adds such rewrites as our
//! extension (the data is in DRAM: a program only). The class is kept per logical page, and
//! GC moves a page at the level of its last class.

use super::{Policies, ProgramLevel, Scheme};
use crate::buffer::Hotness;
use crate::config::{Config, VoltagePolicy};
use crate::flash::Level;

fn install(cfg: &Config, p: &mut Policies) {
    p.level = Some(Box::new(Controller {
        policy: cfg.voltage.policy,
        rewrite_clean_read_hot: cfg.voltage.rewrite_clean_read_hot,
        gc_relevel: cfg.voltage.gc_relevel,
        hotness: HotnessField::default(),
    }));
}

/// The level slot's object.
#[derive(Debug, Clone)]
struct Controller {
    policy: VoltagePolicy,
    rewrite_clean_read_hot: bool,
    /// HIRE: GC moves pages at their class's level (else at their victim's).
    gc_relevel: bool,
    /// HIRE: the class each logical page last left the buffer with (hire.txt §3.3).
    hotness: HotnessField,
}

/// A 2-bit hotness field per logical page, packed four to a byte (hire.txt §3.3 extends each
/// mapping entry with one): 0 = never classed, else 1 + the [`Hotness`] index. Grows with the
/// highest page classed, so it costs at most a quarter byte per logical page.
#[derive(Debug, Clone, Default)]
struct HotnessField(Vec<u8>);

impl HotnessField {
    fn set(&mut self, lpn: u32, class: Hotness) {
        let (byte, shift) = ((lpn / 4) as usize, (lpn % 4) * 2);
        if byte >= self.0.len() {
            self.0.resize(byte + 1, 0);
        }
        let code = 1 + class as u8;
        self.0[byte] = (self.0[byte] & !(3 << shift)) | (code << shift);
    }

    fn get(&self, lpn: u32) -> Option<Hotness> {
        let (byte, shift) = ((lpn / 4) as usize, (lpn % 4) * 2);
        match self.0.get(byte).map_or(0, |b| (b >> shift) & 3) {
            0 => None,
            code => Some(Hotness::ALL[usize::from(code - 1)]),
        }
    }
}

impl ProgramLevel for Controller {
    fn fill_level(&self) -> Level {
        match self.policy {
            VoltagePolicy::Hvc => Level::High,
            VoltagePolicy::Lvc => Level::Low,
            VoltagePolicy::Baseline | VoltagePolicy::Hire => Level::Normal,
        }
    }

    fn level(&self, class: Option<Hotness>) -> Level {
        match (self.policy, class) {
            (VoltagePolicy::Hire, Some(Hotness::ReadHot)) => Level::High,
            (VoltagePolicy::Hire, Some(Hotness::WriteHot)) => Level::Low,
            _ => self.fill_level(),
        }
    }

    fn rewrite_clean(&self, class: Hotness) -> bool {
        self.policy == VoltagePolicy::Hire
            && self.rewrite_clean_read_hot
            && class == Hotness::ReadHot
    }

    fn classified(&mut self, lpn: u32, class: Hotness) {
        if self.policy == VoltagePolicy::Hire {
            self.hotness.set(lpn, class);
        }
    }

    /// HIRE re-decides the level of a page GC moves from its hotness field (unless
    /// `voltage.gc_relevel` is off); a page never classed keeps its block's level, as do all
    /// pages under the other controllers.
    fn relocation_level(&self, lpn: u32, victim: Level) -> Level {
        match self.hotness.get(lpn).filter(|_| self.relevels()) {
            Some(class) => self.level(Some(class)),
            None => victim,
        }
    }

    fn relevels(&self) -> bool {
        self.policy == VoltagePolicy::Hire && self.gc_relevel
    }

    fn levels(&self) -> &'static [Level] {
        match self.policy {
            VoltagePolicy::Hvc => &[Level::High],
            VoltagePolicy::Lvc => &[Level::Low],
            VoltagePolicy::Baseline => &[Level::Normal],
            VoltagePolicy::Hire => &Level::ALL,
        }
    }
}

/// Every page programmed at the high threshold-voltage level.
pub const HVC: Scheme = Scheme {
    name: "hvc",
    summary: "HVC: every page programmed at the high Vth level (fast reads, more wear)",
    paper: "hire.txt §4.1 (HVC baseline)",
    sets: &[("voltage.policy", "\"hvc\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Hvc),
    params: &[],
    install,
};

/// Every page programmed at the low threshold-voltage level.
pub const LVC: Scheme = Scheme {
    name: "lvc",
    summary: "LVC: every page programmed at the low Vth level (slow reads, less wear)",
    paper: "hire.txt §4.1 (LVC baseline)",
    sets: &[("voltage.policy", "\"lvc\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Lvc),
    params: &[],
    install,
};

/// HIRE: the device buffer classes evicted pages and picks their level.
pub const HIRE: Scheme = Scheme {
    name: "hire",
    summary: "HIRE: buffer hit counts class evicted pages read-hot (high Vth) / write-hot (low) / mixed (normal); needs a device buffer",
    paper: "hire.txt §3 (w = 95 %: §4.1)",
    sets: &[("voltage.policy", "\"hire\"")],
    implies: &[],
    excludes: &[],
    active: Some(|c| c.voltage.policy == VoltagePolicy::Hire),
    params: &[],
    install,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::policy::ProgramLevel as _;

    #[test]
    fn gc_relevels_from_the_hotness_field_only_when_asked() {
        let mut c = Controller {
            policy: VoltagePolicy::Hire,
            rewrite_clean_read_hot: false,
            gc_relevel: true,
            hotness: HotnessField::default(),
        };
        c.classified(7, Hotness::ReadHot);
        assert_eq!(c.relocation_level(7, Level::Low), Level::High);
        // Never classed: the victim's level.
        assert_eq!(c.relocation_level(8, Level::Low), Level::Low);
        assert!(c.relevels());
        c.gc_relevel = false;
        assert_eq!(c.relocation_level(7, Level::Low), Level::Low);
        assert!(!c.relevels());
    }
}
