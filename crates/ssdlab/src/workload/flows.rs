//! Several I/O flows (tenants) in one run: each flow's own source (a trace, a synthetic spec
//! or a lengthened trace), start offset and time scale, merged into one stream by arrival.
//! Every request carries its flow's index ([`Request::flow`]); the simulator gives each flow
//! its own logical space and its own results (`sim/flows.rs`).
//!
//! A config file declares flows as `[[flow]]` tables ([`FlowSpec::from_toml`]):
//! ```toml
//! [[flow]]
//! name = "reader"
//! trace = "testdata/traces/msr_hm_0.csv"
//! [[flow]]
//! name = "writer"
//! synth = "requests=20000,write_ratio=0.9,iat_us=300,footprint_gib=1,seed=2"
//! start_us = 1000
//! ```

use super::extend::{ExtendSpec, Extended};
use super::synth::SynthSpec;
use super::trace::{TraceError, TraceOptions, TraceReader};
use super::Request;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most flows one run takes (each keeps its own latency histograms, about 0.9 MiB: see
/// `sim::flows::bytes`).
pub const MAX_FLOWS: usize = 256;

/// One I/O flow: a name, one source, and where its requests fall in the run's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Its name in results (letters, digits, `-`, `_`; unique in the run).
    pub name: String,
    /// A trace file (any format `ssdlab run --trace` reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,
    /// The trace's format (detected when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The trace's first N requests only (after `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Leave out the trace's first N requests.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skip: u64,
    /// Keep only this device / disk / ASU of the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// Lengthen the trace by a block bootstrap (a `trace extend` spec, `requests=N,...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend: Option<String>,
    /// A synthetic workload (`ssdlab synth` spec) instead of a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synth: Option<String>,
    /// The flow's first request arrives this long after the run starts, µs.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub start_us: f64,
    /// Multiplies the flow's inter-arrival times (before `host.time_scale`, which scales all).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub time_scale: f64,
    /// The flow's NVMe priority class, for `host.arbitration = "weighted-round-robin"`.
    #[serde(default, skip_serializing_if = "Priority::is_default")]
    pub priority: Priority,
    /// Most requests of the flow the drive holds at once (its submission queue's fetch limit,
    /// MQSim's per-queue `Queue_Fetch_Size`); later ones wait in the flow's queue, their
    /// response times counting from arrival. 0: no limit of its own.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub queue_depth: u32,
    /// The channels the flow's data may be placed on (MQSim's `Channel_IDs`; all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<u32>,
    /// The chips of each of those channels (MQSim's `Chip_IDs`; all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chips: Vec<u32>,
    /// The dies of each of those chips (MQSim's `Die_IDs`; all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dies: Vec<u32>,
    /// The planes of each of those dies (MQSim's `Plane_IDs`; all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub planes: Vec<u32>,
}

/// NVMe priority classes of a submission queue (NVMe base specification, weighted round robin
/// with urgent priority class arbitration): `urgent` before all others, then `high`,
/// `medium` and `low` by their weights (`host.arbitration_weights`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Priority {
    /// Served before every other class.
    Urgent,
    /// The first weighted class (MQSim's default class of a flow).
    #[default]
    High,
    /// The second weighted class.
    Medium,
    /// The third weighted class.
    Low,
}

impl Priority {
    fn is_default(&self) -> bool {
        *self == Priority::High
    }

    /// Its place in NVMe's order: 0 urgent, 1 high, 2 medium, 3 low.
    pub fn index(self) -> usize {
        match self {
            Priority::Urgent => 0,
            Priority::High => 1,
            Priority::Medium => 2,
            Priority::Low => 3,
        }
    }
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Deepest submission queue a flow may ask for (NVMe's largest I/O queue, 64 Ki entries).
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// A flow list that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    /// A flow's declaration is wrong; `origin` names the file and the flow.
    #[error("{origin}: {message}")]
    Spec {
        /// The file and the flow.
        origin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A flow's source cannot be read.
    #[error("flow `{flow}`: {source}")]
    Source {
        /// The flow.
        flow: String,
        /// The reader's error.
        source: TraceError,
    },
}

impl FlowSpec {
    /// The flow of a command-line `--flow NAME=trace:FILE` or `NAME=synth:SPEC` (its other
    /// keys at their defaults; [`FlowSpec::arg`] writes it).
    ///
    /// # Errors
    /// A malformed argument, quoted.
    pub fn from_arg(arg: &str) -> Result<Self, String> {
        let bad = || format!("--flow {arg}: expected NAME=trace:FILE or NAME=synth:SPEC");
        let (name, source) = arg.split_once('=').ok_or_else(bad)?;
        let (kind, value) = source.split_once(':').ok_or_else(bad)?;
        let mut spec = FlowSpec::named(name);
        match kind {
            "trace" => spec.trace = Some(value.into()),
            "synth" => spec.synth = Some(value.to_string()),
            _ => return Err(bad()),
        }
        Ok(spec)
    }

    /// The flow's name and source as a command-line `--flow` argument (that form takes only
    /// those: [`FlowSpec::arg_is_whole`] says whether they are all of the flow).
    pub fn arg(&self) -> String {
        match (&self.trace, &self.synth) {
            (Some(t), _) => format!("{}=trace:{}", self.name, t.display()),
            (None, s) => format!("{}=synth:{}", self.name, s.as_deref().unwrap_or_default()),
        }
    }

    /// Whether [`FlowSpec::arg`] is the whole flow: no key besides its name and source set.
    pub fn arg_is_whole(&self) -> bool {
        Self::from_arg(&self.arg()).as_ref() == Ok(self)
    }

    /// A flow named `name` with every key at its default and no source yet.
    pub fn named(name: &str) -> Self {
        FlowSpec {
            name: name.to_string(),
            trace: None,
            format: None,
            limit: None,
            skip: 0,
            device: None,
            extend: None,
            synth: None,
            start_us: 0.0,
            time_scale: 1.0,
            priority: Priority::High,
            queue_depth: 0,
            channels: Vec::new(),
            chips: Vec::new(),
            dies: Vec::new(),
            planes: Vec::new(),
        }
    }

    /// Whether the flow is confined to some channels, chips, dies or planes.
    pub fn partitioned(&self) -> bool {
        !(self.channels.is_empty()
            && self.chips.is_empty()
            && self.dies.is_empty()
            && self.planes.is_empty())
    }

    /// The flows of the `[[flow]]` tables `value` (the `flow` key of a TOML file `origin`),
    /// checked ([`FlowSpec::check_all`]).
    ///
    /// # Errors
    /// [`FlowError::Spec`] naming the flow (by number and name) and the key.
    pub fn from_toml(value: toml::Value, origin: &str) -> Result<Vec<FlowSpec>, FlowError> {
        let bad = |message: String| FlowError::Spec {
            origin: origin.to_string(),
            message,
        };
        let toml::Value::Array(items) = value else {
            return Err(bad(
                "`flow` must be an array of tables: write each flow as a `[[flow]]` table".into(),
            ));
        };
        let n = items.len();
        let mut flows = Vec::with_capacity(n);
        for (i, item) in items.into_iter().enumerate() {
            let name = item
                .get("name")
                .and_then(toml::Value::as_str)
                .map(|s| format!(" (`{s}`)"))
                .unwrap_or_default();
            let spec: FlowSpec = item.try_into().map_err(|e: toml::de::Error| {
                bad(format!(
                    "flow {} of {n}{name}: {}",
                    i + 1,
                    e.message().trim()
                ))
            })?;
            flows.push(spec);
        }
        Self::check_all(&flows).map_err(bad)?;
        Ok(flows)
    }

    /// The flows of a JSON list of objects with a `[[flow]]` table's keys (Python's
    /// `flows=`), as [`FlowSpec::from_toml`].
    ///
    /// # Errors
    /// As [`FlowSpec::from_toml`]; JSON that is not such a list.
    pub fn from_json(text: &str, origin: &str) -> Result<Vec<FlowSpec>, FlowError> {
        let bad = |message: String| FlowError::Spec {
            origin: origin.to_string(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let value = toml::Value::try_from(value).map_err(|e| {
            bad(format!(
                "expected a list of dicts of strings and numbers: {e}"
            ))
        })?;
        Self::from_toml(value, origin)
    }

    /// Checks one flow's keys; the message names the flow and the key.
    ///
    /// # Errors
    /// The first key that is wrong.
    pub fn check(&self) -> Result<(), String> {
        let name = &self.name;
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
        if !valid_name {
            // A flow's metrics are named `flows.<name>.<key>`: no dots in a name.
            return Err(format!(
                "flow name `{name}`: expected 1 to 64 letters, digits, `-` or `_`"
            ));
        }
        let at = |key: &str, what: String| Err(format!("flow `{name}`: `{key}`: {what}"));
        match (&self.trace, &self.synth) {
            (Some(_), Some(_)) => return at("synth", "give one source: `trace` or `synth`".into()),
            (None, None) => {
                return at(
                    "trace",
                    "give one source: `trace = FILE` or `synth = SPEC`".into(),
                )
            }
            (None, Some(spec)) => {
                for (key, set) in [
                    ("format", self.format.is_some()),
                    ("limit", self.limit.is_some()),
                    ("skip", self.skip > 0),
                    ("device", self.device.is_some()),
                    ("extend", self.extend.is_some()),
                ] {
                    if set {
                        return at(key, "reads a trace: this flow's source is `synth`".into());
                    }
                }
                if let Err(e) = spec.parse::<SynthSpec>().and_then(|s| s.validate()) {
                    return at("synth", e);
                }
            }
            (Some(_), None) => {
                if let Some(f) = &self.format {
                    if f != "auto" {
                        if let Err(e) = f.parse::<super::trace::Format>() {
                            return at("format", e);
                        }
                    }
                }
                if let Some(e) = &self.extend {
                    if let Err(e) = e.parse::<ExtendSpec>() {
                        return at("extend", e);
                    }
                }
            }
        }
        if !(self.start_us.is_finite() && (0.0..=1e12).contains(&self.start_us)) {
            return at(
                "start_us",
                format!("{}: expected a time from 0 to 1e12 µs", self.start_us),
            );
        }
        if !(self.time_scale.is_finite() && self.time_scale > 0.0 && self.time_scale <= 1e6) {
            return at(
                "time_scale",
                format!("{}: expected a factor > 0 and <= 1e6", self.time_scale),
            );
        }
        for (key, ids) in [
            ("channels", &self.channels),
            ("chips", &self.chips),
            ("dies", &self.dies),
            ("planes", &self.planes),
        ] {
            if ids.len() > 4096 {
                return at(key, format!("{} ids: at most 4096", ids.len()));
            }
            if let Some((i, id)) = ids
                .iter()
                .enumerate()
                .find(|(i, id)| ids[..*i].contains(id))
            {
                return at(key, format!("id {id} is given twice (entry {})", i + 1));
            }
        }
        if self.queue_depth > MAX_QUEUE_DEPTH {
            return at(
                "queue_depth",
                format!(
                    "{}: at most {MAX_QUEUE_DEPTH} (NVMe's largest queue; 0: no limit)",
                    self.queue_depth
                ),
            );
        }
        Ok(())
    }

    /// Checks every flow and that names are unique and flows at most [`MAX_FLOWS`].
    ///
    /// # Errors
    /// The first problem found.
    pub fn check_all(flows: &[FlowSpec]) -> Result<(), String> {
        if flows.is_empty() {
            return Err("no flow given: declare at least one `[[flow]]`".into());
        }
        if flows.len() > MAX_FLOWS {
            return Err(format!(
                "{} flows: at most {MAX_FLOWS} in one run",
                flows.len()
            ));
        }
        for (i, f) in flows.iter().enumerate() {
            f.check()?;
            if flows[..i].iter().any(|g| g.name == f.name) {
                return Err(format!("flow name `{}` is given twice", f.name));
            }
        }
        Ok(())
    }

    /// The flow with a relative trace path taken from `dir`.
    pub fn resolved(mut self, dir: &Path) -> Self {
        if let Some(t) = self.trace.as_mut() {
            if t.is_relative() {
                *t = dir.join(&*t);
            }
        }
        self
    }

    /// A stream of the flow's own requests (times from its own first request).
    ///
    /// # Errors
    /// The source cannot be opened, or its spec does not parse.
    pub fn open(&self) -> Result<Box<dyn Iterator<Item = Result<Request, TraceError>>>, FlowError> {
        let source = |source: TraceError| FlowError::Source {
            flow: self.name.clone(),
            source,
        };
        let spec_err = |message: String| FlowError::Spec {
            origin: format!("flow `{}`", self.name),
            message,
        };
        match (&self.trace, &self.synth) {
            (Some(path), _) => {
                let format = self
                    .format
                    .as_deref()
                    .filter(|f| *f != "auto")
                    .map(str::parse)
                    .transpose()
                    .map_err(spec_err)?;
                let opts = TraceOptions {
                    format,
                    limit: self.limit,
                    skip: self.skip,
                    device: self.device,
                    ..Default::default()
                };
                match &self.extend {
                    Some(e) => {
                        let spec: ExtendSpec = e.parse().map_err(spec_err)?;
                        Ok(Box::new(Extended::open(path, opts, &spec).map_err(source)?))
                    }
                    None => Ok(Box::new(TraceReader::open(path, opts).map_err(source)?)),
                }
            }
            (None, Some(spec)) => {
                let spec: SynthSpec = spec.parse().map_err(spec_err)?;
                Ok(Box::new(spec.generate().map_err(spec_err)?))
            }
            (None, None) => Err(spec_err("no source: give `trace` or `synth`".into())),
        }
    }
}

/// The requests of several flows merged by arrival time (ties: the earlier flow first), each
/// shifted by its flow's start and scaled by its time scale, and marked with its flow.
pub struct Merged {
    sources: Vec<Box<dyn Iterator<Item = Result<Request, TraceError>>>>,
    /// Each flow's next request (`None` once its source is done).
    heads: Vec<Option<Result<Request, TraceError>>>,
    start_ns: Vec<u64>,
    scale: Vec<f64>,
    specs: Vec<FlowSpec>,
}

impl Merged {
    /// Opens every flow.
    ///
    /// # Errors
    /// The first flow that cannot be opened.
    pub fn open(flows: &[FlowSpec]) -> Result<Self, FlowError> {
        let mut sources = Vec::with_capacity(flows.len());
        for f in flows {
            sources.push(f.open()?);
        }
        let mut m = Merged {
            heads: Vec::with_capacity(flows.len()),
            sources,
            start_ns: flows
                .iter()
                .map(|f| (f.start_us * 1e3).round() as u64)
                .collect(),
            scale: flows.iter().map(|f| f.time_scale).collect(),
            specs: flows.to_vec(),
        };
        for k in 0..m.sources.len() {
            let head = m.pull(k);
            m.heads.push(head);
        }
        Ok(m)
    }

    /// The flows, in flow order (what the simulator needs of them: [`crate::sim::RunOptions`]).
    pub fn specs(&self) -> &[FlowSpec] {
        &self.specs
    }

    fn pull(&mut self, k: usize) -> Option<Result<Request, TraceError>> {
        let item = self.sources[k].next()?;
        Some(item.map(|mut r| {
            r.time_ns = self.start_ns[k] + (r.time_ns as f64 * self.scale[k]).round() as u64;
            r.flow = k as u16;
            r
        }))
    }
}

impl Iterator for Merged {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        // A source's error comes out first; then the earliest request.
        let mut best: Option<(usize, u64)> = None;
        for (k, head) in self.heads.iter().enumerate() {
            match head {
                Some(Err(_)) => {
                    best = Some((k, 0));
                    break;
                }
                Some(Ok(r)) if best.is_none_or(|(_, t)| r.time_ns < t) => {
                    best = Some((k, r.time_ns));
                }
                _ => {}
            }
        }
        let (k, _) = best?;
        let next = self.pull(k);
        std::mem::replace(&mut self.heads[k], next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synth(name: &str, spec: &str) -> FlowSpec {
        FlowSpec {
            synth: Some(spec.into()),
            ..FlowSpec::named(name)
        }
    }

    #[test]
    fn merged_flows_come_in_arrival_order_with_their_flow_start_and_scale() {
        let mut late = synth("b", "requests=50,iat_us=100,seed=2");
        late.start_us = 1000.0;
        late.time_scale = 2.0;
        let flows = [synth("a", "requests=80,iat_us=100,seed=1"), late];
        let own: Vec<Vec<u64>> = flows
            .iter()
            .map(|f| f.open().unwrap().map(|r| r.unwrap().time_ns).collect())
            .collect();
        let merged: Vec<Request> = Merged::open(&flows).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(merged.len(), 130);
        assert!(merged.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
        for (k, times) in own.iter().enumerate() {
            let got: Vec<u64> = merged
                .iter()
                .filter(|r| usize::from(r.flow) == k)
                .map(|r| r.time_ns)
                .collect();
            let want: Vec<u64> = times
                .iter()
                .map(|&t| {
                    let f = &flows[k];
                    (f.start_us * 1e3) as u64 + (t as f64 * f.time_scale).round() as u64
                })
                .collect();
            assert_eq!(got, want, "flow {k}");
        }
    }

    #[test]
    fn flow_tables_are_read_and_bad_ones_named() {
        let ok: toml::Table = toml::from_str(
            "[[flow]]\nname = \"r\"\ntrace = \"t.csv\"\n[[flow]]\nname = \"w\"\nsynth = \"requests=10\"\nstart_us = 5\n",
        )
        .unwrap();
        let flows = FlowSpec::from_toml(ok["flow"].clone(), "f.toml").unwrap();
        assert_eq!(flows.len(), 2);
        assert_eq!(flows[1].start_us, 5.0);
        for (text, want) in [
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\nspeed = 2\n",
                "flow 1 of 1 (`r`): unknown field `speed`",
            ),
            (
                "[[flow]]\nname = \"r\"\n",
                "flow `r`: `trace`: give one source",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\nsynth = \"requests=1\"\n",
                "flow `r`: `synth`: give one source",
            ),
            (
                "[[flow]]\nname = \"r\"\nsynth = \"requests=1\"\nskip = 3\n",
                "flow `r`: `skip`: reads a trace",
            ),
            (
                "[[flow]]\nname = \"r\"\nsynth = \"bogus=1\"\n",
                "flow `r`: `synth`:",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\ntime_scale = 0\n",
                "flow `r`: `time_scale`: 0: expected",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\nstart_us = -1\n",
                "flow `r`: `start_us`: -1",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\nqueue_depth = 70000\n",
                "flow `r`: `queue_depth`: 70000: at most 65536",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\npriority = \"top\"\n",
                "unknown variant `top`",
            ),
            (
                "[[flow]]\nname = \"a b\"\ntrace = \"t\"\n",
                "flow name `a b`",
            ),
            (
                "[[flow]]\nname = \"r\"\ntrace = \"t\"\n[[flow]]\nname = \"r\"\ntrace = \"u\"\n",
                "`r` is given twice",
            ),
            ("flow = 3\n", "must be an array of tables"),
        ] {
            let t: toml::Table = toml::from_str(text).unwrap();
            let e = FlowSpec::from_toml(t["flow"].clone(), "f.toml")
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("f.toml: ") && e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_flow_argument_reads_back_and_other_keys_have_none() {
        for arg in ["r=trace:/x/t.csv", "w=synth:requests=5,seed=2"] {
            let f = FlowSpec::from_arg(arg).unwrap();
            assert_eq!(f.arg(), arg);
            assert!(f.arg_is_whole());
        }
        let late = FlowSpec {
            start_us: 5.0,
            ..FlowSpec::from_arg("w=synth:requests=5").unwrap()
        };
        assert_eq!(late.arg(), "w=synth:requests=5");
        assert!(!late.arg_is_whole());
        assert!(FlowSpec::from_arg("w=disk:x")
            .unwrap_err()
            .contains("--flow w=disk:x: expected"));
    }

    #[test]
    fn a_source_error_names_its_flow() {
        let mut f = synth("gone", "requests=1");
        f.synth = None;
        f.trace = Some("/nonexistent/trace.csv".into());
        let e = Merged::open(&[f]).err().expect("refused").to_string();
        assert!(
            e.starts_with("flow `gone`: ") && e.contains("/nonexistent/trace.csv"),
            "{e}"
        );
    }
}
