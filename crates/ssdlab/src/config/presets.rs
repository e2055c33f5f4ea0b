//! Built-in presets: embedded TOML overlays on `default.toml`.

/// The defaults every preset starts from.
pub(crate) const DEFAULT_TOML: &str = include_str!("presets/default.toml");

/// A named preset.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Name used with `--preset`.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// The overlay.
    pub toml: &'static str,
}

/// All presets, in the order `ssdlab presets` lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "tiny",
        summary: "1 channel x 1 chip x 1 die x 1 plane, 64 blocks x 64 pages of 4 KiB, SLC (tests)",
        toml: include_str!("presets/tiny.toml"),
    },
    Preset {
        name: "hotr",
        summary: "hotr.txt Table II / deduphr.txt Table 1: 10 chips x 8 planes x 2048 blocks x 64 pages, 4 KiB, 15 % OP, TLC",
        toml: include_str!("presets/hotr.toml"),
    },
    Preset {
        name: "deduphr",
        summary: "deduphr.txt Table 1: the hotr drive (10 chips x 8 planes x 2048 blocks x 64 pages, 4 KiB, 15 % OP, TLC)",
        toml: include_str!("presets/deduphr.toml"),
    },
    Preset {
        name: "pe-suspension-slc",
        summary: "pe-suspension.txt Table 1 SLC: 16 chips on 16 channels, 4 planes of 512 MB, 2 KiB pages, 30 % OP",
        toml: include_str!("presets/pe-suspension-slc.toml"),
    },
    Preset {
        name: "pe-suspension-mlc",
        summary: "pe-suspension.txt Table 1 MLC: 16 chips on 16 channels, 4 planes of 1 GB, 4 KiB pages, 30 % OP",
        toml: include_str!("presets/pe-suspension-mlc.toml"),
    },
    Preset {
        name: "shadowgc",
        summary: "shadowgc.txt §4.1: 1 TiB MLC, 512 pages/block, 16 KiB pages, 7 % OP, read 120 us, program 600 us, 128 MiB device buffer",
        toml: include_str!("presets/shadowgc.toml"),
    },
    Preset {
        name: "hire",
        summary: "hire.txt §4.1: 128 GiB, 8 channels x 8 chips, MLC, 90 us sense + 80 us transfer, 600 us program",
        toml: include_str!("presets/hire.toml"),
    },
    Preset {
        name: "disksim-ssd",
        summary: "DiskSim 4.0 SSD add-on validation drive: 8 elements x 8 planes x 2048 blocks x 64 pages of 4 KiB, 25/200/1500 us, foreground GC, starts full",
        toml: include_str!("presets/disksim-ssd.toml"),
    },
    Preset {
        name: "mqsim-default",
        summary: "MQSim's shipped ssdconfig.xml at 0d76b1d3: 8 ch x 4 chips x 2 dies x 2 planes x 2048 blocks x 256 pages of 8 KiB, MLC 75/75/3800 us, multi-plane, non-preemptive GC, 2 MiB mapping cache, PCIe 4 x 0.1 GB/s, 75 % steady-state fill",
        toml: include_str!("presets/mqsim-default.toml"),
    },
    Preset {
        name: "mqsim-2022",
        summary: "MQSim's ssdconfig.xml at 7ec40e3 (2022): as mqsim-default with programs of 750 us, PCIe 4 x 1.0 GB/s, no fill",
        toml: include_str!("presets/mqsim-2022.toml"),
    },
];

/// Names of all presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}
