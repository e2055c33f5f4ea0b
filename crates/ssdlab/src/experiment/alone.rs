//! Each I/O flow of a run by itself on the same drive: the runs a flow's slowdown and the
//! run's fairness are measured against ([`crate::metrics::Summary::add_alone`]).

use crate::config::Config;
use crate::metrics::Summary;
use crate::sim::{RunOptions, Simulation};
use crate::workload::flows::{FlowSpec, Merged};
use crate::workload::Requests;
use rayon::prelude::*;

/// The summaries of each flow of `flows` run alone (with the whole logical space, as a run of
/// one workload), with `opts`' seed and checks, in flow order; the runs share the machine's
/// cores (rayon's pool).
///
/// # Errors
/// The first flow whose run fails, named.
pub fn run_alone(
    cfg: &Config,
    opts: &RunOptions,
    flows: &[FlowSpec],
) -> Result<Vec<Summary>, String> {
    flows
        .par_iter()
        .map(|f| {
            let fail = |e: &dyn std::fmt::Display| format!("flow `{}` alone: {e}", f.name);
            // Alone, a flow has the whole drive (FLIN's and MQSim's reference): whatever it is
            // confined to beside the others does not apply.
            let f = &FlowSpec {
                channels: Vec::new(),
                chips: Vec::new(),
                dies: Vec::new(),
                planes: Vec::new(),
                ..f.clone()
            };
            let one = std::slice::from_ref(f);
            let mut pre = cfg
                .precondition
                .pre_process
                .then(|| Merged::open(one))
                .transpose()
                .map_err(|e| fail(&e))?;
            let mut workload = Merged::open(one).map_err(|e| fail(&e))?;
            let opts = RunOptions {
                flows: vec![f.clone()],
                ..opts.clone()
            };
            Simulation::build(
                cfg,
                opts,
                &mut workload,
                pre.as_mut().map(|p| p as &mut Requests),
                &|_, _| {},
            )
            .and_then(Simulation::run)
            .map_err(|e| fail(&e))
        })
        .collect()
}
