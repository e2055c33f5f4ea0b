//! Raw → validated configuration. Every violated constraint is reported, each naming its key.

use super::{
    Config, ConfigError, FlushUnit, FtlConfig, GeometryConfig, PeIdealization, RawConfig,
    RedundancyScheme, ShadowConfig, StagingConfig, StagingDesign, StagingPolicy, SuspendPolicy,
    VoltageConfig, VoltagePolicy,
};

pub(super) fn resolve(raw: RawConfig) -> Result<Config, ConfigError> {
    let mut errs = Vec::new();
    check_geometry(&raw, &mut errs);
    let flash = raw.flash.resolve(raw.geometry.page_size_bytes, &mut errs);
    if raw.suspend.policy != SuspendPolicy::Off && flash.pe_idealization != PeIdealization::None {
        errs.push(format!(
            "suspend.policy = {:?}: must be \"off\" with flash.pe_idealization = {:?} (the idealised program/erase has no phases to suspend)",
            raw.suspend.policy, flash.pe_idealization
        ).to_lowercase());
    }
    let s = &raw.suspend;
    if s.resume_overlap && (s.policy == SuspendPolicy::Off || !s.shadow_buffer) {
        errs.push(
            "suspend.resume_overlap = true: needs suspend.policy other than \"off\" and suspend.shadow_buffer = true (a page re-sent over the bus would need the cache register the read page leaves through)"
                .to_string(),
        );
    }
    check_ftl(&raw, &mut errs);
    check_rest(&raw, &mut errs);
    if !errs.is_empty() {
        return Err(ConfigError::Invalid(errs));
    }
    let cfg = Config {
        scheme: String::new(),
        geometry: raw.geometry,
        flash,
        ftl: raw.ftl,
        precondition: raw.precondition,
        sched: raw.sched,
        suspend: raw.suspend,
        buffer: raw.buffer,
        voltage: raw.voltage,
        staging: raw.staging,
        dedup: raw.dedup,
        shadow: raw.shadow,
        redundancy: raw.redundancy,
        host: raw.host,
        params: Default::default(),
    };
    // Derived quantities the checks above do not bound on their own.
    if cfg.logical_pages() == 0 {
        return Err(ConfigError::Invalid(vec![format!(
            "ftl.over_provisioning = {}: leaves no logical page on this drive (at least one is needed)",
            cfg.ftl.over_provisioning
        )]));
    }
    Ok(cfg)
}

fn check_geometry(raw: &RawConfig, errs: &mut Vec<String>) {
    let g = &raw.geometry;
    for (key, v) in [
        ("geometry.channels", g.channels),
        ("geometry.chips_per_channel", g.chips_per_channel),
        ("geometry.dies_per_chip", g.dies_per_chip),
        ("geometry.planes_per_die", g.planes_per_die),
        ("geometry.blocks_per_plane", g.blocks_per_plane),
        ("geometry.pages_per_block", g.pages_per_block),
        ("geometry.page_size_bytes", g.page_size_bytes),
    ] {
        if v == 0 {
            errs.push(format!("{key} = 0: must be >= 1"));
        }
    }
    if g.page_size_bytes % 512 != 0 {
        errs.push(format!(
            "geometry.page_size_bytes = {}: must be a multiple of 512 (the sector size)",
            g.page_size_bytes
        ));
    }
    let pages = [
        g.channels,
        g.chips_per_channel,
        g.dies_per_chip,
        g.planes_per_die,
        g.blocks_per_plane,
        g.pages_per_block,
    ]
    .iter()
    .map(|&v| u128::from(v))
    .product::<u128>();
    if pages >= u128::from(u32::MAX) {
        errs.push(format!(
            "geometry: {pages} physical pages: must be below 2^32 - 1 (page numbers are 32-bit)"
        ));
    }
    if g.pages_per_block > u32::from(u16::MAX) {
        errs.push(format!(
            "geometry.pages_per_block = {}: must be <= 65535",
            g.pages_per_block
        ));
    }
}

fn check_ftl(raw: &RawConfig, errs: &mut Vec<String>) {
    let g = &raw.geometry;
    let t = &raw.ftl;
    if t.plane_choice == super::PlaneChoice::MostFree
        && (t.allocation != super::Allocation::Static
            || raw.redundancy.scheme != RedundancyScheme::None
            || raw.staging.design != StagingDesign::None)
    {
        errs.push(
            "ftl.plane_choice = \"most-free\": needs ftl.allocation = \"static\" (dynamic allocation chooses the plane itself) and no redundancy or staging scheme (they place pages plane for plane)".to_string(),
        );
    }
    if t.summary_pages > 0
        && (raw.redundancy.scheme != RedundancyScheme::None
            || raw.staging.design != StagingDesign::None)
    {
        errs.push(format!(
            "ftl.summary_pages = {}: not modelled with redundancy.scheme = {:?} or staging.design = {:?} (their mirrors, parity and copies place pages block for block); use 0",
            t.summary_pages, raw.redundancy.scheme, raw.staging.design
        ).to_lowercase());
    }
    if t.mapping_cache_entries > 0 && t.mapping_cache_bytes > 0 {
        errs.push(format!(
            "ftl.mapping_cache_entries = {} and ftl.mapping_cache_bytes = {}: set one of them",
            t.mapping_cache_entries, t.mapping_cache_bytes
        ));
    }
    if t.mapping_cache_entries > u64::from(u32::MAX) {
        errs.push(format!(
            "ftl.mapping_cache_entries = {}: must be at most {} (a logical page number is 32 bits)",
            t.mapping_cache_entries,
            u32::MAX
        ));
    }
    if (t.mapping_cache_entries > 0 || t.mapping_cache_bytes > 0)
        && (raw.dedup.enabled
            || raw.redundancy.scheme != RedundancyScheme::None
            || raw.staging.design != StagingDesign::None
            || raw.buffer.host_pages > 0)
    {
        errs.push(
            "ftl.mapping_cache_*: not modelled with dedup, a redundancy or staging scheme or a host buffer (their tables are per logical page and would need the translation pages too); leave the cache at 0".to_string(),
        );
    }
    if t.static_wl_threshold > 0 && t.gc_mode == super::GcMode::Foreground {
        errs.push(format!(
            "ftl.static_wl_threshold = {}: not with ftl.gc_mode = \"foreground\" (it cleans only in front of a waiting request, one block at a time)",
            t.static_wl_threshold
        ));
    }
    if !(1..=64).contains(&t.gc_jobs_per_plane) {
        errs.push(format!(
            "ftl.gc_jobs_per_plane = {}: must be in 1..=64",
            t.gc_jobs_per_plane
        ));
    }
    if t.summary_pages >= g.pages_per_block && g.pages_per_block > 0 {
        errs.push(format!(
            "ftl.summary_pages = {}: must be below geometry.pages_per_block = {} (a block needs a data page)",
            t.summary_pages, g.pages_per_block
        ));
    }
    if !(0.0..1.0).contains(&t.over_provisioning) {
        errs.push(format!(
            "ftl.over_provisioning = {}: must be in [0, 1) (a fraction of the physical pages)",
            t.over_provisioning
        ));
    }
    if !(0.0..1.0).contains(&t.gc_threshold) {
        errs.push(format!(
            "ftl.gc_threshold = {}: must be in [0, 1) (a fraction of the blocks per plane)",
            t.gc_threshold
        ));
    } else if g.blocks_per_plane > 0 {
        let threshold = gc_threshold_blocks(t.gc_threshold, g.blocks_per_plane);
        if threshold + 2 > g.blocks_per_plane {
            errs.push(format!(
                "ftl.gc_threshold = {}: gives {threshold} free blocks per plane, leaving fewer than 2 blocks for data out of geometry.blocks_per_plane = {}",
                t.gc_threshold, g.blocks_per_plane
            ));
        } else if g.pages_per_block > 0 && (0.0..1.0).contains(&t.over_provisioning) {
            let parts = (
                &raw.geometry,
                &raw.ftl,
                &raw.voltage,
                &raw.shadow,
                &raw.staging,
            );
            if let Err(e) = plane_room(parts, 1) {
                errs.push(e);
            }
        }
    }
}

/// The configuration sections [`plane_room`] reads.
pub(crate) type RoomParts<'a> = (
    &'a GeometryConfig,
    &'a FtlConfig,
    &'a VoltageConfig,
    &'a ShadowConfig,
    &'a StagingConfig,
);

/// Whether the logical data of a plane fits beside the GC reserve and the blocks held open by
/// the write streams of `flows` flows with blocks of their own (1: flows share blocks), or GC
/// could find no victim. The GC threshold must be valid.
pub(crate) fn plane_room(parts: RoomParts, flows: u32) -> Result<(), String> {
    let (g, t, voltage, shadow, staging) = parts;
    let threshold = gc_threshold_blocks(t.gc_threshold, g.blocks_per_plane);
    // One host and one GC stream per level in use, per flow.
    let levels = if voltage.policy == VoltagePolicy::Hire {
        3
    } else {
        1
    };
    // ShadowGC variants that separate zombies keep one more GC block open.
    let separates = u32::from(shadow.gc.separates());
    let open = flows * (2 * levels + separates) - 1;
    // HIRE's GC relocates into a stream per level, and each flow into its own: the reserve
    // (and with it the threshold GC starts at) is a free block per GC stream
    // (`Ftl::relocate_into_levels`, `Ftl::own_flow_blocks`).
    let threshold = threshold.max(flows * levels * (1 + separates));
    let reserved = if staging.design == StagingDesign::ReservedBlocks {
        staging.reserved_blocks_per_plane
    } else {
        0
    };
    // Data pages per block: the summary pages hold none.
    let data_ppb = g.pages_per_block.saturating_sub(t.summary_pages);
    let usable = u64::from(
        g.blocks_per_plane
            .saturating_sub(threshold + open + reserved),
    ) * u64::from(data_ppb);
    let per_plane =
        (1.0 - t.over_provisioning) * (u64::from(g.blocks_per_plane) * u64::from(data_ppb)) as f64;
    // One block's worth of slack, so that GC always finds a victim with invalid pages.
    if per_plane + f64::from(data_ppb) > usable as f64 {
        let flows = if flows > 1 {
            format!(" ({flows} I/O flows with ftl.flow_blocks = \"own\", each with its own open blocks and GC reserve)")
        } else {
            String::new()
        };
        return Err(format!(
            "ftl.over_provisioning = {}: logical data per plane ({per_plane:.0} pages) must leave one block free below the pages outside the GC reserve, the {open} extra open blocks{flows} and any staging blocks ({usable}); raise over_provisioning or geometry.blocks_per_plane, or lower ftl.gc_threshold",
            t.over_provisioning
        ));
    }
    Ok(())
}

fn check_staging(raw: &RawConfig, errs: &mut Vec<String>) {
    let st = &raw.staging;
    if st.design == StagingDesign::ReservedBlocks && st.reserved_blocks_per_plane == 0 {
        errs.push("staging.reserved_blocks_per_plane = 0: must be >= 1 with staging.design = \"reserved-blocks\"".into());
    }
    if st.policy == StagingPolicy::Deduphr {
        if !raw.dedup.enabled {
            errs.push("staging.policy = \"deduphr\": needs dedup.enabled = true (reference counts come from the dedup layer)".into());
        }
        if st.design == StagingDesign::None {
            errs.push("staging.policy = \"deduphr\": needs a staging space (staging.design = \"extra-chip\" or \"reserved-blocks\")".into());
        }
        if st.refcount_threshold < 2 {
            errs.push(format!(
                "staging.refcount_threshold = {}: must be >= 2 (a content is unstaged when its count falls back to 1)",
                st.refcount_threshold
            ));
        }
    }
    if st.design != StagingDesign::None && st.max_queued_copies == 0 {
        errs.push("staging.max_queued_copies = 0: must be >= 1 with a staging space".into());
    }
    check_shadow(raw, errs);
    let b = &raw.buffer;
    if b.flush_backlog_pages > 0 && (b.device_pages == 0 || b.host_pages > 0) {
        errs.push(format!(
            "buffer.flush_backlog_pages = {}: needs a device buffer (buffer.device_pages > 0) and no host buffer (buffer.host_pages = 0: its drops of evicted pages are defined for in-line flushes)",
            b.flush_backlog_pages
        ));
    }
    if b.flush_backlog_unit == FlushUnit::Sector {
        let page = raw.geometry.page_size_bytes;
        if b.flush_backlog_pages == 0 || page % 512 != 0 || page / 512 > 64 {
            errs.push(format!(
                "buffer.flush_backlog_unit = \"sector\": needs buffer.flush_backlog_pages > 0 (it is {}) and a page of whole 512-byte sectors, at most 64 of them (geometry.page_size_bytes = {page})",
                b.flush_backlog_pages
            ));
        }
    }
    if b.eager_flush_period_ms != 0.0
        && (b.flush_backlog_pages == 0
            || !(b.eager_flush_period_ms > 0.0 && b.eager_flush_period_ms.is_finite()))
    {
        errs.push(format!(
            "buffer.eager_flush_period_ms = {}: must be a positive number of ms, with buffer.flush_backlog_pages > 0",
            b.eager_flush_period_ms
        ));
    }
    if raw.dedup.enabled && raw.buffer.device_pages > 0 {
        errs.push(format!("dedup.enabled = true: not supported with a device buffer (buffer.device_pages = {}); set one of them off", raw.buffer.device_pages));
    }
    if !(0.0..=1.0).contains(&st.hot_fraction) {
        errs.push(format!(
            "staging.hot_fraction = {}: must be in [0, 1]",
            st.hot_fraction
        ));
    }
}

fn check_shadow(raw: &RawConfig, errs: &mut Vec<String>) {
    let sh = &raw.shadow;
    if !(sh.fast_program_us.is_finite() && sh.fast_program_us > 0.0) {
        errs.push(format!(
            "shadow.fast_program_us = {}: must be > 0",
            sh.fast_program_us
        ));
    }
    if !(sh.power_off_h.is_finite()
        && sh.power_off_h >= 0.0
        && sh.fast_retention_h.is_finite()
        && sh.fast_retention_h > sh.power_off_h)
    {
        errs.push(format!("shadow.fast_retention_h = {}, shadow.power_off_h = {}: need retention > power-off >= 0 (fast blocks are refreshed every T - D)", sh.fast_retention_h, sh.power_off_h));
    }
    if !(sh.ecc_decode_us.is_finite() && sh.ecc_decode_us >= 0.0) {
        errs.push(format!(
            "shadow.ecc_decode_us = {}: must be >= 0",
            sh.ecc_decode_us
        ));
    }
    if sh.gc.fast() && raw.suspend.policy != SuspendPolicy::Off {
        errs.push(format!("shadow.gc = {:?}: fast-mode programs have no suspension phases; needs suspend.policy = \"off\"", sh.gc).to_lowercase());
    }
    if (sh.gc.delays() || sh.gc.separates()) && raw.buffer.host_pages == 0 {
        errs.push(format!("shadow.gc = {:?}: needs a host buffer (buffer.host_pages > 0): its zombies are pages dirty there", sh.gc).to_lowercase());
    }
    if sh.gc.from_buffer() && raw.buffer.device_pages == 0 {
        errs.push(format!(
            "shadow.gc = {}: needs a device buffer (buffer.device_pages > 0; the `shadowgc` preset has the paper's 128 MB, 8,192 pages of 16 KiB, or set buffer.device_pages)",
            format!("{:?}", sh.gc).to_lowercase()
        ));
    }
    if raw.buffer.host_pages > 0 && raw.dedup.enabled {
        errs.push("buffer.host_pages: not supported with dedup.enabled = true".into());
    }
}

fn check_redundancy(raw: &RawConfig, errs: &mut Vec<String>) {
    let r = &raw.redundancy;
    let g = &raw.geometry;
    match r.scheme {
        RedundancyScheme::Rails if g.channels % 2 != 0 => {
            errs.push(format!("redundancy.scheme = \"rails\": geometry.channels = {} must be even (the second half mirrors the first)", g.channels));
        }
        RedundancyScheme::Ttflash => {
            let dies = g.channels * g.chips_per_channel * g.dies_per_chip;
            // k + 1 computed without overflow: a k of u32::MAX is as wrong as any other misfit.
            let fits = r
                .ttflash_k
                .checked_add(1)
                .is_some_and(|stripe| r.ttflash_k > 0 && dies % stripe == 0);
            if !fits {
                errs.push(format!(
                    "redundancy.ttflash_k = {}: the {dies} dies must split into stripes of k+1",
                    r.ttflash_k
                ));
            }
        }
        _ => {}
    }
    if r.rails_switch_us > 1_000_000_000_000 {
        errs.push(format!(
            "redundancy.rails_switch_us = {}: must be at most 1e12 us (a period in nanoseconds must fit simulated time)",
            r.rails_switch_us
        ));
    }
    if r.rails_switch_us > 0 && r.scheme != RedundancyScheme::Rails {
        errs.push(format!(
            "redundancy.rails_switch_us = {}: role switching needs redundancy.scheme = \"rails\"",
            r.rails_switch_us
        ));
    }
    if r.scheme != RedundancyScheme::None && raw.staging.design != StagingDesign::None {
        errs.push("redundancy.scheme: combining Rails or TTFlash with a HotR staging space is not supported".into());
    }
}

fn check_rest(raw: &RawConfig, errs: &mut Vec<String>) {
    check_staging(raw, errs);
    check_redundancy(raw, errs);
    let p = &raw.precondition;
    if !(0.0..=1.0).contains(&p.fill) {
        errs.push(format!("precondition.fill = {}: must be in [0, 1]", p.fill));
    }
    if !(p.overwrite.is_finite() && (0.0..=100.0).contains(&p.overwrite)) {
        errs.push(format!(
            "precondition.overwrite = {}: must be in [0, 100]",
            p.overwrite
        ));
    }
    if p.pattern == super::FillPattern::SteadyState {
        if p.method != super::FillMethod::Direct {
            errs.push("precondition.pattern = \"steady-state\": needs precondition.method = \"direct\" (the state is built at block level, not written page by page)".into());
        }
        if raw
            .ftl
            .gc_victim
            .mean_field_d(raw.geometry.blocks_per_plane)
            .is_none()
        {
            errs.push("precondition.pattern = \"steady-state\": no steady-state model for ftl.gc_victim = \"cost-benefit\" (the mean-field model covers greedy, random and rga)".into());
        }
    }
    if p.pre_process && raw.dedup.enabled {
        errs.push("precondition.pre_process = true: not with dedup.enabled = true (the dedup layer maps host pages to contents the trace gives only at its writes)".into());
    }
    if p.pre_process && raw.redundancy.scheme != RedundancyScheme::None {
        errs.push("precondition.pre_process = true: not with a redundancy scheme (pages written before the run would have no parity or replica)".into());
    }
    let v = &raw.voltage;
    if v.rewrite_clean_read_hot
        && v.rewrite_when == super::RewriteWhen::Idle
        && v.rewrite_backlog_pages == 0
    {
        errs.push("voltage.rewrite_backlog_pages = 0: must be at least 1 while clean read-hot pages are rewritten in idle time (or set voltage.rewrite_when = \"queued\")".to_string());
    }
    if !(0.5..1.0).contains(&v.hot_threshold) {
        errs.push(format!("voltage.hot_threshold = {}: must be in [0.5, 1) (a page cannot be both read-hot and write-hot)", v.hot_threshold));
    }
    if v.policy == VoltagePolicy::Hire && raw.buffer.device_pages == 0 {
        errs.push("voltage.policy = \"hire\": needs buffer.device_pages > 0 (hotness comes from the buffer; the `hire` preset has one of 4,096 pages, or set buffer.device_pages)".to_string());
    }
    for (key, volts) in [
        ("voltage.high_volts", &v.high_volts),
        ("voltage.normal_volts", &v.normal_volts),
        ("voltage.low_volts", &v.low_volts),
    ] {
        if volts.is_empty() || volts.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            errs.push(format!(
                "{key} = {volts:?}: must be one or more positive voltages"
            ));
        }
    }
    for (key, t) in [
        ("voltage.high_read_factor", v.high_read_factor),
        ("voltage.high_transfer_factor", v.high_transfer_factor),
        ("voltage.low_read_factor", v.low_read_factor),
        ("voltage.low_transfer_factor", v.low_transfer_factor),
    ] {
        if !(t.is_finite() && (0.0..=1e3).contains(&t)) {
            errs.push(format!(
                "{key} = {t}: must be a finite factor between 0 and 1000"
            ));
        }
    }
    let h = &raw.host;
    if h.max_pages_in_flight == 0 {
        errs.push("host.max_pages_in_flight = 0: must be >= 1".to_string());
    }
    if h.queue_depth == 0 {
        errs.push("host.queue_depth = 0: must be >= 1".to_string());
    }
    if h.arbitration_weights.iter().any(|w| !(1..=256).contains(w)) {
        errs.push(format!(
            "host.arbitration_weights = {:?}: each must be 1-256 (NVMe's weights)",
            h.arbitration_weights
        ));
    }
    let custom = h.link == crate::config::HostLink::Custom;
    if custom && !(h.link_mb_s.is_finite() && (1e-3..=1e9).contains(&h.link_mb_s)) {
        errs.push(format!(
            "host.link_mb_s = {}: host.link = \"custom\" needs a data rate between 0.001 and 1e9 MB/s",
            h.link_mb_s
        ));
    }
    if !custom && (h.link_mb_s != 0.0 || h.link_command_bytes != [0, 0] || h.link_full_duplex) {
        errs.push(
            "host.link_mb_s / link_command_bytes / link_full_duplex: only for host.link = \"custom\" (the presets fix them)"
                .to_string(),
        );
    }
    if !(h.link_command_us.is_finite() && (0.0..=1e6).contains(&h.link_command_us)) {
        errs.push(format!(
            "host.link_command_us = {}: must be between 0 and 1e6 us",
            h.link_command_us
        ));
    }
    if !(h.time_scale.is_finite() && h.time_scale > 0.0) {
        errs.push(format!("host.time_scale = {}: must be > 0", h.time_scale));
    }
}

/// Free blocks per plane at or below which GC runs: `ceil(fraction × blocks)`, at least 2
/// (one block is always kept for GC's own destination).
pub fn gc_threshold_blocks(fraction: f64, blocks_per_plane: u32) -> u32 {
    ((fraction * f64::from(blocks_per_plane)).ceil() as u32).max(2)
}

#[cfg(test)]
mod tests {
    use crate::config::ConfigBuilder;

    fn violations(sets: &[&str]) -> String {
        let mut b = ConfigBuilder::preset("tiny").unwrap();
        for s in sets {
            b = b.set(s).unwrap();
        }
        b.build().unwrap_err().to_string()
    }

    #[test]
    fn impossible_geometry_names_every_field() {
        let e = violations(&["geometry.pages_per_block=0", "geometry.channels=0"]);
        assert!(
            e.contains("geometry.pages_per_block = 0") && e.contains("geometry.channels = 0"),
            "{e}"
        );
    }

    #[test]
    fn steady_state_fill_needs_direct_method_and_a_mean_field_victim_rule() {
        let e = violations(&[
            "precondition.pattern=\"steady-state\"",
            "precondition.method=\"simulated\"",
            "ftl.gc_victim=\"cost-benefit\"",
        ]);
        assert!(
            e.contains("precondition.method = \"direct\"") && e.contains("cost-benefit"),
            "{e}"
        );
        let ok = ConfigBuilder::preset("tiny").unwrap();
        assert!(ok
            .set("precondition.pattern=\"steady-state\"")
            .unwrap()
            .build()
            .is_ok());
    }

    #[test]
    fn op_of_one_is_rejected() {
        assert!(violations(&["ftl.over_provisioning=1.0"]).contains("ftl.over_provisioning"));
    }

    #[test]
    fn gc_threshold_beyond_blocks_is_rejected() {
        assert!(violations(&["ftl.gc_threshold=0.99"]).contains("ftl.gc_threshold"));
    }

    #[test]
    fn zero_op_cannot_fit_the_gc_reserve() {
        assert!(violations(&["ftl.over_provisioning=0.0"]).contains("GC reserve"));
    }

    #[test]
    fn derived_quantities_no_logical_pages_is_rejected() {
        let e = violations(&["ftl.over_provisioning=0.9998", "ftl.gc_threshold=0.0"]);
        assert!(
            e.contains("ftl.over_provisioning") && e.contains("logical"),
            "{e}"
        );
    }

    #[test]
    fn integer_overflow_in_stripe_width_is_rejected() {
        let e = violations(&[
            "redundancy.scheme=\"ttflash\"",
            "redundancy.ttflash_k=4294967295",
        ]);
        assert!(e.contains("redundancy.ttflash_k = 4294967295"), "{e}");
    }

    #[test]
    fn unbounded_per_op_state_is_rejected() {
        let e = violations(&["suspend.policy=\"ips\"", "flash.ispp_iterations=2147483647"]);
        assert!(e.contains("flash.ispp_iterations"), "{e}");
        // A million iterations would round every phase to 0 ns and make programs free.
        let e = violations(&["flash.ispp_iterations=1000000"]);
        assert!(e.contains("flash.ispp_iterations"), "{e}");
    }

    #[test]
    fn resume_overlap_needs_a_suspension_policy_and_the_shadow_buffer() {
        for sets in [
            &["suspend.resume_overlap=true"][..],
            &[
                "suspend.resume_overlap=true",
                "suspend.policy=\"ipc\"",
                "suspend.shadow_buffer=false",
            ],
        ] {
            let e = violations(sets);
            assert!(e.contains("suspend.resume_overlap"), "{sets:?}: {e}");
        }
    }

    #[test]
    fn every_duration_key_is_validated() {
        for v in ["-1", "-inf", "nan", "inf"] {
            let e = violations(&[&format!("flash.erase_verify_us={v}")]);
            assert!(e.contains("flash.erase_verify_us"), "{v}: {e}");
        }
    }
}
