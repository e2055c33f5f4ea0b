//! Building a [`Config`]: preset, then config files and `--set` overrides merged as TOML, the
//! scheme layer asked through [`SchemeLayer`] (the registry above implements it), then
//! validation; and the notes on keys that have no effect.

use super::*;

/// Builds a [`Config`] from a preset, optional config files and `key=value` overrides.
///
/// Layers, lowest first: the built-in defaults, the preset (the drive), the settings of the
/// requested schemes (`scheme` key), then config files and `--set` overrides in order.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    /// Defaults and preset.
    base: toml::Table,
    /// Config files and overrides, including the `scheme` key.
    user: toml::Table,
}

impl ConfigBuilder {
    /// Starts from the named preset.
    ///
    /// # Errors
    /// [`ConfigError::UnknownPreset`] if the name is not a preset.
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        let preset = PRESETS
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ConfigError::UnknownPreset(name.to_string()))?;
        let mut base = parse_table(presets::DEFAULT_TOML, "built-in defaults")?;
        merge(
            &mut base,
            parse_table(preset.toml, &format!("preset {name}"))?,
        );
        Ok(ConfigBuilder {
            base,
            user: toml::Table::new(),
        })
    }

    /// Overlays a TOML document (e.g. a `--config` file's contents).
    ///
    /// # Errors
    /// [`ConfigError::Parse`] on TOML syntax errors.
    pub fn overlay_toml(mut self, text: &str, origin: &str) -> Result<Self, ConfigError> {
        merge(&mut self.user, parse_table(text, origin)?);
        Ok(self)
    }

    /// Overlays a TOML file.
    ///
    /// # Errors
    /// [`ConfigError::Io`] or [`ConfigError::Parse`].
    pub fn overlay_file(self, path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = crate::files::read_text(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        self.overlay_toml(&text, &path.display().to_string())
    }

    /// Takes the `[[flow]]` tables the overlaid files hold: they describe the workload's I/O
    /// flows (`workload::flows`), not the drive, and a build that finds them refuses them.
    pub fn take_flows(&mut self) -> Option<toml::Value> {
        self.user.remove("flow")
    }

    /// Selects schemes by name (`hotr`, `hotr+ipc`; see `ssdlab schemes`), replacing any
    /// selection made before.
    pub fn scheme(mut self, spec: &str) -> Self {
        self.user
            .insert("scheme".into(), toml::Value::String(spec.to_string()));
        self
    }

    /// Applies one `dotted.key=value` override; the value is read as TOML, else as a string.
    ///
    /// # Errors
    /// [`ConfigError::BadSet`] when there is no `=` or the key is empty.
    pub fn set(mut self, assignment: &str) -> Result<Self, ConfigError> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::BadSet(assignment.to_string()))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(ConfigError::BadSet(assignment.to_string()));
        }
        let value = value.trim();
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        let mut node = &mut self.user;
        let parts: Vec<&str> = key.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            let entry = node
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            node = match entry {
                toml::Value::Table(t) => t,
                _ => {
                    return Err(ConfigError::BadSet(format!(
                        "{assignment} ({part} is not a table)"
                    )))
                }
            };
        }
        node.insert(parts[parts.len() - 1].to_string(), parsed);
        Ok(self)
    }

    /// Whether the override `assignment` (`key=value`, the value possibly an inline table)
    /// sets the dotted `key`: `host={time_scale=0.5}` sets `host.time_scale`.
    pub fn assignment_sets(assignment: &str, key: &str) -> bool {
        let empty = ConfigBuilder {
            base: toml::Table::new(),
            user: toml::Table::new(),
        };
        let Ok(b) = empty.set(assignment) else {
            return false;
        };
        let mut node = &toml::Value::Table(b.user);
        for part in key.split('.') {
            match node.get(part) {
                Some(v) => node = v,
                None => return false,
            }
        }
        true
    }

    /// The configuration of `preset`, then `scheme` (if any), then each `key=value` of
    /// `sets` in order: what a run, an experiment point or the Python API name.
    ///
    /// # Errors
    /// As [`ConfigBuilder::preset`], [`ConfigBuilder::set`] and [`ConfigBuilder::build`].
    pub fn resolve(
        preset: &str,
        scheme: Option<&str>,
        sets: &[String],
    ) -> Result<Config, ConfigError> {
        let mut b = ConfigBuilder::preset(preset)?;
        if let Some(s) = scheme {
            b = b.scheme(s);
        }
        for s in sets {
            b = b.set(s)?;
        }
        b.build()
    }

    /// Parses and validates the merged configuration, with `layer` resolving the `scheme` key
    /// (`crate::schemes` holds the registry and calls this from `ConfigBuilder::build`); also
    /// returns the keys the user set that have no effect in this configuration (a feature's
    /// parameter while the feature is off), one note each.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] for unknown keys or wrong types (the key is named),
    /// [`ConfigError::Scheme`] for unknown or incompatible schemes,
    /// [`ConfigError::Invalid`] listing every violated constraint.
    pub fn build_with<L: SchemeLayer>(
        self,
        layer: &L,
    ) -> Result<(Config, Vec<String>), ConfigError> {
        let (user_keys, base) = (self.user.clone(), self.base.clone());
        let cfg = self.build_inner(layer)?;
        let notes = inert_keys(&user_keys, &base, &cfg);
        Ok((cfg, notes))
    }

    fn build_inner<L: SchemeLayer>(self, layer: &L) -> Result<Config, ConfigError> {
        let ConfigBuilder {
            base: mut table,
            mut user,
        } = self;
        if user.contains_key("flow") {
            return Err(ConfigError::Parse {
                origin: "configuration".into(),
                message: "`[[flow]]` tables describe the workload's I/O flows, not the drive: give the file to `ssdlab run --config` (or a workload's `flows` in an experiment)".into(),
            });
        }
        let requested = match user.remove("scheme") {
            None => L::Request::default(),
            Some(toml::Value::String(spec)) => layer.parse(&spec).map_err(ConfigError::Scheme)?,
            Some(v) => {
                return Err(ConfigError::Scheme(format!(
                    "scheme = {v}: expected a string such as \"hotr\" or \"hotr+ipc\""
                )))
            }
        };
        merge(&mut table, layer.settings(&requested));
        merge(&mut table, user);
        let params = layer.take_params(&mut table);
        let text = toml::to_string(&table).map_err(|e| ConfigError::Parse {
            origin: "merged configuration".into(),
            message: e.to_string(),
        })?;
        let raw: RawConfig = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            origin: "configuration".into(),
            message: at_key(&text, &e),
        })?;
        let mut cfg = validate::resolve(raw).map_err(|e| match e {
            ConfigError::Invalid(mut lines) => {
                if let Some(names) = layer.describe(&requested) {
                    lines.push(format!(
                        "(with --scheme {names}; `ssdlab schemes` lists what each scheme sets and needs)"
                    ));
                }
                ConfigError::Invalid(lines)
            }
            e => e,
        })?;
        layer.finish(&mut cfg, &requested, params)?;
        Ok(cfg)
    }
}

/// What [`ConfigBuilder::build_with`] asks of the scheme layer above the configuration (the
/// registry, `crate::schemes`), so the configuration never names a scheme: parse the `scheme`
/// key, the settings the requested schemes bring, their own parameter tables, and the label
/// and checks once the values are resolved.
pub trait SchemeLayer {
    /// A parsed request (empty by default: no `scheme` key).
    type Request: Default;
    /// Parses a `scheme` value (`"hotr+ipc"`).
    ///
    /// # Errors
    /// The message for an unknown scheme or a pair that cannot run together.
    fn parse(&self, spec: &str) -> Result<Self::Request, String>;
    /// The config values the requested schemes set, to merge under config files and overrides.
    fn settings(&self, request: &Self::Request) -> toml::Table;
    /// The requested schemes' names for an error message (`None`: none requested).
    fn describe(&self, request: &Self::Request) -> Option<String>;
    /// Removes and returns the tables of scheme-owned parameters from the merged table.
    fn take_params(&self, table: &mut toml::Table) -> toml::Table;
    /// Sets `cfg.scheme` and `cfg.params` from the resolved values.
    ///
    /// # Errors
    /// [`ConfigError::Scheme`] for a requested scheme the values turn off or a bad parameter.
    fn finish(
        &self,
        cfg: &mut Config,
        request: &Self::Request,
        params: toml::Table,
    ) -> Result<(), ConfigError>;
}

/// A deserialisation error of the merged configuration `text` told by the dotted key it is
/// about (`staging.policy = "none": unknown variant …`), not by a line of a document the user
/// never wrote.
fn at_key(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(start) = e.span().map(|s| s.start) else {
        return message.to_string();
    };
    let before = &text[..start.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let section = before[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        (l.starts_with('[') && l.ends_with(']')).then(|| l.trim_matches(['[', ']']).to_string())
    });
    match line.split_once('=') {
        Some((key, value)) => {
            let key = key.trim();
            let dotted = section.map_or(key.to_string(), |s| format!("{s}.{key}"));
            format!("{dotted} = {}: {message}", value.trim())
        }
        None => message.to_string(),
    }
}

/// Keys set in `user` (config files and `--set`) to a value other than the preset's that `cfg`
/// does not use: the parameters of a feature that is off (a full dump of `config show` sets
/// every key to its value and is not noted). Each note names the key and the setting that
/// turns it on.
fn inert_keys(user: &toml::Table, base: &toml::Table, cfg: &Config) -> Vec<String> {
    // Every `section.key` the user set to a value the preset does not have.
    let mut changed = Vec::new();
    for (section, v) in user {
        let (Some(t), preset) = (
            v.as_table(),
            base.get(section).and_then(toml::Value::as_table),
        ) else {
            continue;
        };
        for (k, v) in t {
            if preset.and_then(|p| p.get(k)) != Some(v) {
                changed.push(format!("{section}.{k}"));
            }
        }
    }
    let r = &cfg.redundancy.scheme;
    // (the feature is off, the keys of its parameters, what turns it on)
    type Rule<'a> = (bool, &'a dyn Fn(&str) -> bool, &'a str);
    let no_cache = cfg.ftl.mapping_cache_entries == 0 && cfg.ftl.mapping_cache_bytes == 0;
    let rules: [Rule; 7] = [
        (
            *r != RedundancyScheme::Ttflash,
            &|k| matches!(k, "redundancy.ttflash_k" | "redundancy.parity_update"),
            "TTFlash is off (redundancy.scheme = \"ttflash\" or --scheme ttflash turns it on)",
        ),
        (
            *r != RedundancyScheme::Rails,
            &|k| k == "redundancy.rails_switch_us",
            "Rails is off (redundancy.scheme = \"rails\" or --scheme rails turns it on)",
        ),
        (
            cfg.suspend.policy == SuspendPolicy::Off,
            &|k| k.starts_with("suspend.") && k != "suspend.policy",
            "suspension is off (suspend.policy or a P/E-suspension scheme turns it on)",
        ),
        (
            cfg.host.mode == HostMode::Open,
            &|k| k == "host.queue_depth",
            "host.mode = \"open\" replays the timestamps (host.mode = \"closed\" keeps queue_depth requests outstanding)",
        ),
        (
            cfg.host.link == HostLink::None,
            &|k| {
                matches!(
                    k,
                    "host.link_mb_s" | "host.link_command_bytes" | "host.link_full_duplex"
                )
            },
            "host.link = \"none\" charges no transfers (host.link = \"custom\" uses these)",
        ),
        (
            no_cache,
            &|k| k == "sched.mapping_reads_first",
            "there is no mapping cache, hence no translation reads (ftl.mapping_cache_entries or ftl.mapping_cache_bytes makes one)",
        ),
        (
            cfg.precondition.pattern == FillPattern::SteadyState,
            &|k| k == "precondition.overwrite",
            "precondition.pattern = \"steady-state\" writes each page once where the writes lead (overwrite applies to \"random\" and \"sequential-rewrite\")",
        ),
    ];
    rules
        .iter()
        .filter(|(off, _, _)| *off)
        .flat_map(|(_, applies, why)| {
            changed
                .iter()
                .filter(|k| applies(k))
                .map(move |k| format!("{k} has no effect: {why}"))
        })
        .collect()
}
