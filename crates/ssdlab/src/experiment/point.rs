//! One point of an experiment: how it is configured, identified (hashed) and run.

use super::spec::WorkloadSpec;
use super::{io_err, ExperimentError};
use crate::config::{Config, ConfigBuilder};
use crate::metrics::Summary;
use crate::sim::{RunOptions, Simulation};
use crate::workload::extend::{ExtendSpec, Extended};
use crate::workload::flows::{FlowSpec, Merged};
use crate::workload::synth::SynthSpec;
use crate::workload::trace::{TraceOptions, TraceReader};
use crate::workload::Requests;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where a point's requests come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum WorkloadRef {
    /// A trace file (absolute path).
    Trace {
        /// File.
        path: PathBuf,
        /// Format name, or detect.
        format: Option<String>,
        /// First N requests only (after `skip`).
        limit: Option<u64>,
        /// Leave out the first N requests; absent from the identity when 0.
        #[serde(default, skip_serializing_if = "is_zero")]
        skip: u64,
        /// Device filter.
        device: Option<u32>,
        /// Lengthened by a block bootstrap (`trace extend` spec); absent from the identity
        /// when not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extend: Option<String>,
    },
    /// A synthetic specification.
    Synth {
        /// `key=value,...`
        spec: String,
    },
    /// Several I/O flows (trace paths absolute).
    Flows {
        /// The flows.
        flows: Vec<FlowSpec>,
        /// Each flow also run alone (slowdowns, fairness).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        alone: bool,
    },
}

/// Adds the contents of the regular file `path` to `h`.
fn hash_file(path: &Path, h: &mut Sha256) -> Result<(), ExperimentError> {
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    // Only a regular file has contents that can be hashed and replayed the same way twice (a
    // device such as /dev/zero never ends; a pipe is consumed).
    if !f.metadata().map_err(io_err(path))?.is_file() {
        return Err(ExperimentError::Spec {
            path: path.display().to_string(),
            message: "an experiment's trace must be a regular file (its contents are hashed into the point's identity)".into(),
        });
    }
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io_err(path))?;
        if n == 0 {
            return Ok(());
        }
        h.update(&buf[..n]);
    }
}

impl WorkloadRef {
    /// The reference of a workload of an experiment in `dir`.
    pub fn of(w: &WorkloadSpec, dir: &Path) -> Self {
        if !w.flows.is_empty() {
            return WorkloadRef::Flows {
                flows: w.flows.iter().map(|f| f.clone().resolved(dir)).collect(),
                alone: w.alone,
            };
        }
        match (&w.trace, &w.synth) {
            (Some(t), _) => WorkloadRef::Trace {
                path: if t.is_absolute() {
                    t.clone()
                } else {
                    dir.join(t)
                },
                format: w.format.clone().filter(|f| f != "auto"),
                limit: w.limit,
                skip: w.skip,
                device: w.device,
                extend: w.extend.clone(),
            },
            (None, Some(s)) => WorkloadRef::Synth { spec: s.clone() },
            (None, None) => WorkloadRef::Synth {
                spec: String::new(),
            },
        }
    }

    /// The source of run `replica` of a point: a synthetic workload draws its stream from
    /// its own seed plus `replica` (its `seed` key, 1 when absent), and so does an extended
    /// trace's bootstrap; a trace is the same file.
    pub fn replica(self, replica: u32) -> Self {
        match self {
            WorkloadRef::Trace {
                path,
                format,
                limit,
                skip,
                device,
                extend: Some(e),
            } if replica > 0 => WorkloadRef::Trace {
                path,
                format,
                limit,
                skip,
                device,
                extend: Some(Self::extend_replica(e, replica)),
            },
            WorkloadRef::Flows { flows, alone } if replica > 0 => WorkloadRef::Flows {
                flows: flows
                    .into_iter()
                    .map(|mut f| {
                        // Each flow's own stream moves as a workload's does.
                        f.synth = f.synth.map(|spec| Self::synth_replica(spec, replica));
                        f.extend = f.extend.map(|e| Self::extend_replica(e, replica));
                        f
                    })
                    .collect(),
                alone,
            },
            WorkloadRef::Synth { spec } if replica > 0 => WorkloadRef::Synth {
                spec: Self::synth_replica(spec, replica),
            },
            other => other,
        }
    }

    /// Bootstrap spec `e` drawing its blocks with its seed plus `replica`.
    fn extend_replica(e: String, replica: u32) -> String {
        match e.parse::<ExtendSpec>() {
            Ok(mut spec) => {
                spec.seed = spec.seed.wrapping_add(u64::from(replica));
                spec.to_string()
            }
            // Running it reports the error.
            Err(_) => e,
        }
    }

    /// Synthetic spec `spec` drawing its stream from its seed plus `replica`.
    fn synth_replica(spec: String, replica: u32) -> String {
        // A spec that does not parse is left as is: running it reports the error.
        let Ok(parsed) = spec.parse::<SynthSpec>() else {
            return spec;
        };
        let seed = parsed.seed.wrapping_add(u64::from(replica)).to_string();
        with_spec_key(&spec, "seed", &seed)
    }

    /// A fingerprint of the requests: the trace's content hash with its reading options, or
    /// the synthetic spec.
    ///
    /// # Errors
    /// The trace cannot be read.
    pub fn fingerprint(&self) -> Result<String, ExperimentError> {
        let mut h = Sha256::new();
        match self {
            WorkloadRef::Trace {
                path,
                format,
                limit,
                skip,
                device,
                extend,
            } => {
                hash_file(path, &mut h)?;
                h.update(format!("{format:?}|{limit:?}|{device:?}").as_bytes());
                if *skip > 0 {
                    h.update(format!("|skip {skip}").as_bytes());
                }
                if let Some(e) = extend {
                    h.update(format!("|extend {e}").as_bytes());
                }
            }
            WorkloadRef::Synth { spec } => h.update(spec.as_bytes()),
            WorkloadRef::Flows { flows, alone } => {
                for f in flows {
                    // A trace by its contents (as a workload's: the same point wherever the
                    // experiment directory is), then every other key.
                    if let Some(t) = &f.trace {
                        hash_file(t, &mut h)?;
                    }
                    let keys = FlowSpec {
                        trace: None,
                        ..f.clone()
                    };
                    let keys = serde_json::to_string(&keys).expect("a flow serialises");
                    h.update(keys.as_bytes());
                }
                if *alone {
                    h.update(b"|alone");
                }
            }
        }
        Ok(hex(&h.finalize()[..8]))
    }
}

/// Synthetic spec `spec` with `key` set to `value` (its quotes removed), after every other
/// key as written: a key already there is replaced.
pub(super) fn with_spec_key(spec: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key}=");
    let mut parts: Vec<&str> = spec
        .split(',')
        .filter(|p| !p.trim().is_empty() && !p.trim().starts_with(&prefix))
        .collect();
    let set = format!("{key}={}", value.trim_matches('"'));
    parts.push(&set);
    parts.join(",")
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_first(r: &u32) -> bool {
    *r == 0
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The content hash of a sealed record (a result, a calibration entry): SHA-256 of the JSON
/// of `bare`, the record with its hash field empty.
pub(super) fn seal_digest(bare: &impl Serialize) -> String {
    let text = serde_json::to_string(bare).expect("sealed records serialise");
    hex(&Sha256::digest(text.as_bytes()))
}

/// One point: a workload, a variant and a grid combination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Unique id (file name of its result).
    pub id: String,
    /// Workload name.
    pub workload: String,
    /// Variant name.
    pub variant: String,
    /// Grid key → value.
    pub grid: BTreeMap<String, String>,
    /// Preset.
    pub preset: String,
    /// Scheme(s), applied above the preset and below the overrides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// Overrides in application order.
    pub sets: Vec<String>,
    /// Seed.
    pub seed: u64,
    /// Which run of the point this is (0 … `seeds` − 1; its seed is the experiment's + this).
    #[serde(default, skip_serializing_if = "is_first")]
    pub replica: u32,
    /// Verify the run.
    pub verify: bool,
    /// Requests.
    pub source: WorkloadRef,
}

/// A self-contained job: everything needed to run one point elsewhere.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    /// Experiment name.
    pub experiment: String,
    /// The point.
    pub point: Point,
    /// Hash identifying config + workload + seed.
    pub point_hash: String,
    /// The resolved configuration.
    pub config_toml: String,
}

/// The stored result of a point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResult {
    /// The point.
    pub point: Point,
    /// Hash identifying config + workload + seed (resume key).
    pub point_hash: String,
    /// Hash of the resolved configuration.
    pub config_hash: String,
    /// Tool and version that produced it.
    pub tool: String,
    /// Command that reproduces this single point.
    pub command: String,
    /// The run summary (as JSON).
    pub summary: serde_json::Value,
    /// SHA-256 of this result with this field empty (see [`PointResult::intact`]). Catches a
    /// result edited by hand or damaged; not a signature (anyone can recompute it).
    #[serde(default)]
    pub content_hash: String,
}

impl PointResult {
    /// The hash of the result's content: SHA-256 of its JSON with `content_hash` empty.
    fn digest(&self) -> String {
        let mut bare = self.clone();
        bare.content_hash.clear();
        seal_digest(&bare)
    }

    /// The result with its content hash set.
    pub fn sealed(mut self) -> Self {
        self.content_hash = self.digest();
        self
    }

    /// Whether the result is as `ssdlab` wrote it (its content hash matches).
    pub fn intact(&self) -> bool {
        self.content_hash == self.digest()
    }
}

impl Point {
    /// The point's validated configuration.
    ///
    /// # Errors
    /// [`ExperimentError::Config`] naming the point and the key.
    pub fn config(&self) -> Result<Config, ExperimentError> {
        ConfigBuilder::resolve(&self.preset, self.scheme.as_deref(), &self.sets).map_err(|source| {
            ExperimentError::Config {
                point: self.id.clone(),
                source,
            }
        })
    }

    /// Hash of resolved config + workload fingerprint + seed + verify: the resume key.
    ///
    /// # Errors
    /// Config or workload errors.
    pub fn hash(&self) -> Result<String, ExperimentError> {
        self.hash_with(&self.source.fingerprint()?)
    }

    /// [`Point::hash`] with the workload fingerprint already known (traces are hashed once per
    /// experiment, not once per point).
    ///
    /// # Errors
    /// Config errors.
    pub fn hash_with(&self, fingerprint: &str) -> Result<String, ExperimentError> {
        let cfg = self.config()?;
        let mut h = Sha256::new();
        h.update(cfg.to_toml().as_bytes());
        h.update(fingerprint.as_bytes());
        h.update(format!("seed={} verify={}", self.seed, self.verify).as_bytes());
        Ok(hex(&h.finalize()[..8]))
    }

    /// The `ssdlab run` command line that reproduces this point alone.
    pub fn command(&self) -> String {
        let mut c = format!("ssdlab run --preset {} --seed {}", self.preset, self.seed);
        if let Some(s) = &self.scheme {
            c.push_str(&format!(" --scheme {s}"));
        }
        for s in &self.sets {
            c.push_str(&format!(" --set '{s}'"));
        }
        match &self.source {
            WorkloadRef::Trace {
                path,
                format,
                limit,
                skip,
                device,
                extend,
            } => {
                c.push_str(&format!(" --trace {}", path.display()));
                if let Some(e) = extend {
                    c.push_str(&format!(" --extend '{e}'"));
                }
                if let Some(f) = format {
                    c.push_str(&format!(" --format {f}"));
                }
                if *skip > 0 {
                    c.push_str(&format!(" --skip {skip}"));
                }
                if let Some(l) = limit {
                    c.push_str(&format!(" --limit {l}"));
                }
                if let Some(d) = device {
                    c.push_str(&format!(" --device {d}"));
                }
            }
            WorkloadRef::Synth { spec } => c.push_str(&format!(" --synth '{spec}'")),
            WorkloadRef::Flows { flows, alone } => {
                for f in flows {
                    c.push_str(&format!(" --flow '{}'", f.arg()));
                }
                if *alone {
                    c.push_str(" --alone");
                }
                if !flows.iter().all(FlowSpec::arg_is_whole) {
                    c.push_str(" # with the other keys of the experiment's [[workload.flow]] tables, in a --config file");
                }
            }
        }
        if self.verify {
            c.push_str(" --verify");
        }
        c
    }

    /// Runs the point; `point_hash` is stored with the result as its resume key. A point whose
    /// estimated memory exceeds `max_memory` bytes is refused.
    ///
    /// # Errors
    /// Config, workload or simulation errors, naming the point.
    pub fn run(
        &self,
        point_hash: String,
        max_memory: Option<u64>,
    ) -> Result<PointResult, ExperimentError> {
        self.run_traced(point_hash, max_memory, None)
    }

    /// [`Point::run`], writing the run's timeline to `timeline` when given
    /// ([`Simulation::on_timeline`]; the result is the same).
    ///
    /// # Errors
    /// As [`Point::run`].
    pub fn run_traced(
        &self,
        point_hash: String,
        max_memory: Option<u64>,
        timeline: Option<Box<dyn crate::metrics::timeline::TimelineSink + '_>>,
    ) -> Result<PointResult, ExperimentError> {
        let cfg = self.config()?;
        let fail = |message: String| ExperimentError::Run {
            point: self.id.clone(),
            message,
        };
        let opts = RunOptions {
            seed: self.seed,
            verify: self.verify,
            power_loss_at_ns: None,
            max_memory_bytes: max_memory,
            full_events: false,
            full_versions: false,
            flows: match &self.source {
                WorkloadRef::Flows { flows, .. } => flows.clone(),
                _ => Vec::new(),
            },
        };
        let simulate = |w: &mut Requests, pre: Option<&mut Requests>| {
            let mut sim = Simulation::build(&cfg, opts.clone(), w, pre, &|_, _| {})
                .map_err(|e| fail(e.to_string()))?;
            if let Some(t) = timeline {
                sim.on_timeline(t);
            }
            sim.run().map_err(|e| fail(e.to_string()))
        };
        let summary: Summary = match &self.source {
            WorkloadRef::Trace {
                path,
                format,
                limit,
                skip,
                device,
                extend,
            } => {
                let format = format
                    .as_deref()
                    .map(str::parse)
                    .transpose()
                    .map_err(fail)?;
                let topts = TraceOptions {
                    format,
                    limit: *limit,
                    skip: *skip,
                    device: *device,
                    ..Default::default()
                };
                let open =
                    || TraceReader::open(path, topts.clone()).map_err(|e| fail(e.to_string()));
                if let Some(e) = extend {
                    // The bootstrap reads the trace whole; its counts are not the run's.
                    let spec: ExtendSpec = e.parse().map_err(fail)?;
                    let extended = || {
                        Extended::open(path, topts.clone(), &spec).map_err(|e| fail(e.to_string()))
                    };
                    let mut pre = cfg.precondition.pre_process.then(extended).transpose()?;
                    simulate(&mut extended()?, pre.as_mut().map(|r| r as &mut Requests))?
                } else {
                    let mut pre = cfg.precondition.pre_process.then(open).transpose()?;
                    let mut reader = open()?;
                    let mut s = simulate(&mut reader, pre.as_mut().map(|r| r as &mut Requests))?;
                    s.trace = Some(reader.counts.clone());
                    s
                }
            }
            WorkloadRef::Flows { flows, alone } => {
                let open = || Merged::open(flows).map_err(|e| fail(e.to_string()));
                let mut pre = cfg.precondition.pre_process.then(open).transpose()?;
                let alone = alone
                    .then(|| super::run_alone(&cfg, &opts, flows).map_err(fail))
                    .transpose()?;
                let mut s = simulate(&mut open()?, pre.as_mut().map(|r| r as &mut Requests))?;
                if let Some(alone) = alone {
                    s.add_alone(&alone);
                }
                s
            }
            WorkloadRef::Synth { spec } => {
                let spec: SynthSpec = spec.parse().map_err(fail)?;
                let mut pre = cfg
                    .precondition
                    .pre_process
                    .then(|| spec.generate())
                    .transpose()
                    .map_err(fail)?;
                simulate(
                    &mut spec.generate().map_err(fail)?,
                    pre.as_mut().map(|g| g as &mut Requests),
                )?
            }
        };
        Ok(PointResult {
            point: self.clone(),
            point_hash,
            config_hash: cfg.hash(),
            tool: format!("ssdlab {}", env!("CARGO_PKG_VERSION")),
            command: self.command(),
            summary: serde_json::to_value(&summary).map_err(|e| fail(e.to_string()))?,
            content_hash: String::new(),
        }
        .sealed())
    }
}
