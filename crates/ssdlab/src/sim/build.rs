//! Building a simulation: the drive, its schemes, preconditioning (fill, pre-processing, the
//! streams the schemes open) and the empty event state, checked with `--verify` before the run.

use super::policy::Policies;
use super::*;
use crate::config::FillPattern;
use crate::ftl::blocks::Stream;

impl<'w> Simulation<'w> {
    /// Builds the drive with the policies of its schemes (`crate::schemes` fills them from
    /// the registry: `Simulation::new` and its siblings are defined there), preconditions it
    /// (with `pre_pass`, a second pass over the workload, when `precondition.pre_process` asks
    /// for one; `progress` hears how far the fill is) and prepares to replay `workload`.
    ///
    /// # Errors
    /// [`SimError::MemoryLimit`] if the estimate exceeds `opts.max_memory_bytes`;
    /// [`SimError::Precondition`] if the fill cannot be placed; [`SimError::PreProcess`] if
    /// pre-processing is asked for without `pre_pass` or the pass holds too many pages; the
    /// pass's own trace errors.
    pub fn assemble(
        cfg: &Config,
        opts: RunOptions,
        workload: &'w mut Requests<'w>,
        pre_pass: Option<&mut Requests>,
        progress: crate::ftl::precondition::FillProgress,
        mut policies: Policies,
    ) -> Result<Self, SimError> {
        if flows::queued(&opts.flows) && cfg.host.mode == crate::config::HostMode::Closed {
            return Err(SimError::Flows(
                "host.mode = \"closed\" keeps one queue of host.queue_depth requests: with I/O flows give each flow its queue_depth (open loop) instead".into(),
            ));
        }
        if let Some(limit) = opts.max_memory_bytes {
            let mut estimate = memory::estimate_with(cfg, &policies, opts.keeps_full_versions());
            if opts.flows.len() > 1 {
                estimate.parts.push((
                    format!("{} I/O flows (metrics, queues)", opts.flows.len()),
                    flows::bytes(opts.flows.len()),
                ));
                if cfg.ftl.flow_blocks == crate::config::FlowBlocks::Own {
                    let planes = u64::from(Geometry::of(cfg).planes());
                    estimate.parts.push((
                        "open-block slots of flows with blocks of their own".into(),
                        planes * crate::ftl::blocks::PlaneInfo::flow_bytes(opts.flows.len() as u16),
                    ));
                }
            }
            if estimate.total() > limit {
                return Err(SimError::MemoryLimit { limit, estimate });
            }
        }
        let rngs = Rngs::new(opts.seed);
        let geo = Geometry::of(cfg);
        let started = Instant::now();
        let tables = crate::ftl::mapping::VersionTables::kept(opts.keeps_full_versions());
        let mut ftl = Ftl::new(cfg, rngs.stream("gc-victim"), tables)?;
        // The host's pages, before any policy appends pages of its own.
        let host_logical = ftl.map.logical_pages();
        let spaces = flows::Spaces::new(
            &opts.flows,
            &geo,
            |lpn| ftl.home_plane(lpn).0,
            u64::from(host_logical),
        )
        .map_err(SimError::Flows)?;
        if opts.flows.len() > 1 && cfg.ftl.flow_blocks == crate::config::FlowBlocks::Own {
            cfg.plane_room(opts.flows.len() as u32)
                .map_err(SimError::Flows)?;
            ftl.own_flow_blocks(spaces.owner(u64::from(host_logical)));
        }
        if !spaces.parts().is_empty() {
            let why = if cfg.ftl.allocation != crate::config::Allocation::Static
                || cfg.ftl.plane_choice != crate::config::PlaneChoice::Static
            {
                Some("ftl.allocation = \"static\" and ftl.plane_choice = \"static\" (a flow's pages are its planes' by striping)")
            } else if policies.mapper().is_some() {
                Some("no scheme that maps host pages to others (deduplication)")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(SimError::Flows(format!(
                    "flows confined to channels, chips, dies or planes need {why}"
                )));
            }
        }
        ftl.relocate_into_levels(policies.relocation_levels());
        let pre = match (cfg.precondition.pre_process, pre_pass) {
            (false, _) => None,
            (true, Some(it)) => Some(preprocess::scan(
                it,
                u64::from(geo.page_size_bytes),
                u64::from(host_logical),
                &spaces,
            )?),
            (true, None) => {
                return Err(SimError::PreProcess(
                    "needs the workload twice, and this one can be read once (a trace on standard input); give a file or a synthetic spec".into(),
                ))
            }
        };
        // The drive was formatted under the same level policy.
        let fill_level = policies.fill_level();
        let mut fill_rng = rngs.stream("precondition");
        let mut written =
            ftl.precondition(&cfg.precondition, &mut fill_rng, fill_level, progress)?;
        let pre_processed = match &pre {
            Some(pre) => {
                let n = preprocess::write(&mut ftl, &mut policies, cfg.voltage.hot_threshold, pre)?;
                written += n;
                Some(n)
            }
            None => None,
        };
        // A steady-state fill starts the run as MQSim's preconditioning does: no cleaning, and
        // the host and GC write frontiers empty blocks.
        let steady = written > 0 && cfg.precondition.pattern == FillPattern::SteadyState;
        let fill_stream = Stream::user(fill_level);
        // Every flow with blocks of its own keeps each stream open.
        let flows = ftl.block_flows();
        let of_flows = |streams: &[Stream]| -> Vec<Stream> {
            (0..flows)
                .flat_map(|f| streams.iter().map(move |s| s.of_flow(f)))
                .collect()
        };
        if written > 0 {
            ftl.open_streams(
                &of_flows(&policies.streams()),
                fill_stream,
                &mut fill_rng,
                !steady,
            )?;
        }
        // Translation pages are programmed at the level of every page the level policy does
        // not class (a level outside its own would need a GC stream its reserve leaves no
        // block for).
        ftl.start_mapping_cache(cfg, opts.verify, fill_stream)?;
        if steady {
            ftl.empty_frontiers(&of_flows(&[fill_stream, Stream::gc(fill_level)]))?;
        }
        ftl.keep_gc_reserve()?;
        let mut sim = Simulation {
            host_logical,
            timing: Timing::of(cfg),
            now: SimTime::ZERO,
            events: EventQueue::default(),
            cur_seq: 0,
            elision: elide::Elision::new(
                geo.channels,
                !opts.full_events
                    && cfg.suspend.policy == crate::config::SuspendPolicy::Off
                    && !cfg.flash.cache_read,
            ),
            events_handled: 0,
            dies: (0..geo.dies()).map(|_| Die::default()).collect(),
            channels: (0..geo.channels).map(|_| Channel::default()).collect(),
            ops: Vec::new(),
            read_snapshots: Vec::new(),
            free_ops: Vec::new(),
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            place: alloc::policy(cfg, &geo, ftl.map.logical_pages()),
            sched: sched::policy(cfg.sched.policy),
            policies,
            gc_jobs: Vec::new(),
            free_jobs: Vec::new(),
            gc_moves: Vec::new(),
            pe: (0..geo.dies()).map(|_| None).collect(),
            ipc_rng: rngs.stream("ipc-redo"),
            buffer: (cfg.buffer.device_pages > 0)
                .then(|| crate::buffer::LruBuffer::new(cfg.buffer.device_pages)),
            fill_level,
            touched_dies: Vec::new(),
            seq: 0,
            host: HostState::default(),
            metrics: Metrics::default(),
            flows: flows::FlowState::all(&opts.flows),
            spaces,
            flow_class: Vec::new(),
            workload,
            progress: None,
            precondition_wall_s: started.elapsed().as_secs_f64(),
            failed: None,
            spare_cmds: Vec::new(),
            link: link::Link::of(&cfg.host),
            reads_after_write: FxHashMap::default(),
            ready_reads: Vec::new(),
            trims_after_reads: Vec::new(),
            request_sink: None,
            details: Vec::new(),
            issued: 0,
            timeline: None,
            cache_flash: Default::default(),
            destage: Default::default(),
            foreground: Vec::new(),
            placed: vec![0; geo.planes() as usize],
            idle_work: vec![std::collections::VecDeque::new(); geo.dies() as usize],
            fill_blocks: if cfg.voltage.split_fill_wear {
                ftl.blocks.iter().map(|b| b.write_ptr > 0).collect()
            } else {
                Vec::new()
            },
            cfg: cfg.clone(),
            opts,
            geo,
            ftl,
        };
        sim.metrics.pre_processed_pages = pre_processed;
        if cfg.sched.flow_priority {
            sim.flow_class = flows::classes(&sim.opts.flows);
            for die in &mut sim.dies {
                die.queues.reads =
                    crate::sched::ClassQueue::with_classes(cfg.host.arbitration_weights);
                die.queues.writes =
                    crate::sched::ClassQueue::with_classes(cfg.host.arbitration_weights);
            }
        }
        if flows::queued(&sim.opts.flows) {
            let flows = &sim.opts.flows;
            sim.host.queues = vec![Default::default(); flows.len()];
            sim.host.flow_outstanding = vec![0; flows.len()];
            sim.host.arbiter = Some(super::arbiter::Arbiter::new(
                cfg.host.arbitration,
                cfg.host.arbitration_weights,
                flows,
            ));
        }
        if sim
            .policies
            .gc_exec
            .as_ref()
            .is_some_and(|g| g.waits_for_host())
        {
            sim.foreground = vec![ForegroundDie::default(); sim.geo.dies() as usize];
        }
        sim.each_policy::<()>(|p, cx| p.start(cx).map(|()| None))?;
        sim.ftl.forget_block_takes();
        if sim.opts.verify {
            verify::check_ftl(&sim.ftl, &|_| false)?;
        }
        Ok(sim)
    }
}
