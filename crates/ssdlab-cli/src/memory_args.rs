//! `--max-memory`, shared by `run` (args.rs) and the experiment commands (experiment.rs).

use clap::Args;

#[derive(Args, Debug)]
pub struct MemoryArgs {
    /// Refuse a run whose estimated memory exceeds this (512M, 8G, 1.5GiB, or `none`; default
    /// 80 % of the memory available when it starts). A sweep's points share it.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_memory: Option<String>,
}

impl MemoryArgs {
    /// The limit in bytes (`None`: no limit).
    pub fn limit(&self) -> anyhow::Result<Option<u64>> {
        match &self.max_memory {
            Some(s) => {
                ssdlab::sim::memory::parse_size(s).map_err(|e| anyhow::anyhow!("--max-memory {e}"))
            }
            None => Ok(ssdlab::sim::memory::default_limit()),
        }
    }
}
