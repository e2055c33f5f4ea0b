//! Resolving `--scheme` into a configuration: the registry's side of
//! [`ConfigBuilder::build_with`] — parsing the request, the settings it brings, the label of
//! the schemes in force, the check that every requested scheme is in force, and scheme-owned
//! parameters (`[<scheme>]` tables). `ConfigBuilder::build` is defined here, with the registry.

use crate::config::{Config, ConfigBuilder, ConfigError, SchemeLayer, SchemeParams};
use crate::schemes::{self, Scheme, SCHEMES};

/// The registry as the configuration's scheme layer.
struct Registry;

impl SchemeLayer for Registry {
    type Request = Vec<&'static Scheme>;

    fn parse(&self, spec: &str) -> Result<Self::Request, String> {
        schemes::parse(spec).map_err(|e| e.0)
    }

    fn settings(&self, request: &Self::Request) -> toml::Table {
        schemes::settings(request)
    }

    fn describe(&self, request: &Self::Request) -> Option<String> {
        (!request.is_empty()).then(|| schemes::join(request))
    }

    fn take_params(&self, table: &mut toml::Table) -> toml::Table {
        take(table)
    }

    fn finish(
        &self,
        cfg: &mut Config,
        request: &Self::Request,
        params: toml::Table,
    ) -> Result<(), ConfigError> {
        finish(cfg, request, params)
    }
}

impl ConfigBuilder {
    /// Parses and validates the merged configuration, resolving `--scheme` with the registry.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] for unknown keys or wrong types (the key is named),
    /// [`ConfigError::Scheme`] for unknown or incompatible schemes,
    /// [`ConfigError::Invalid`] listing every violated constraint.
    pub fn build(self) -> Result<Config, ConfigError> {
        self.build_noting().map(|(cfg, _)| cfg)
    }

    /// As [`ConfigBuilder::build`], with the keys the user set that have no effect in this
    /// configuration (a feature's parameter while the feature is off), one note each.
    ///
    /// # Errors
    /// As [`ConfigBuilder::build`].
    pub fn build_noting(self) -> Result<(Config, Vec<String>), ConfigError> {
        self.build_with(&Registry)
    }
}

impl Config {
    /// The schemes in force (parsed from [`Config::scheme`]).
    pub fn schemes(&self) -> Vec<&'static Scheme> {
        self.scheme.split('+').filter_map(schemes::find).collect()
    }
}

/// Removes the tables named after schemes that own parameters from the merged table.
fn take(table: &mut toml::Table) -> toml::Table {
    let mut taken = toml::Table::new();
    for s in SCHEMES.iter().filter(|s| !s.params.is_empty()) {
        if let Some(v) = table.remove(s.name) {
            taken.insert(s.name.to_string(), v);
        }
    }
    taken
}

/// Sets the label, refuses requested schemes the values turn off, resolves parameters.
fn finish(
    cfg: &mut Config,
    requested: &[&'static Scheme],
    given: toml::Table,
) -> Result<(), ConfigError> {
    let shown = schemes::label(cfg, requested);
    for r in requested {
        if let Some(test) = r.active {
            if !test(cfg) {
                let sets: Vec<String> = r.sets.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                return Err(ConfigError::Scheme(format!(
                    "scheme `{}` is requested but not in force: a config file or an override (--set, `set`) turns off what it sets ({})",
                    r.name,
                    sets.join(", ")
                )));
            }
        }
    }
    cfg.scheme = schemes::join(&shown);
    cfg.params = resolve(&shown, given)?;
    Ok(())
}

fn resolve(shown: &[&Scheme], mut given: toml::Table) -> Result<SchemeParams, ConfigError> {
    let mut out = SchemeParams::new();
    for s in shown.iter().filter(|s| !s.params.is_empty()) {
        let mut table = match given.remove(s.name) {
            None => toml::Table::new(),
            Some(toml::Value::Table(t)) => t,
            Some(v) => {
                return Err(ConfigError::Scheme(format!(
                    "{} = {v}: expected a table of the scheme's parameters",
                    s.name
                )))
            }
        };
        let mut values = std::collections::BTreeMap::new();
        for p in s.params {
            let key = format!("{}.{}", s.name, p.key);
            let v = match table.remove(p.key) {
                None => p.default,
                Some(toml::Value::Float(f)) => f,
                Some(toml::Value::Integer(i)) => i as f64,
                Some(v) => {
                    return Err(ConfigError::Scheme(format!(
                        "{key} = {v}: expected a number"
                    )))
                }
            };
            if !(v.is_finite() && v >= p.min && v < p.max_exclusive) {
                return Err(ConfigError::Scheme(format!(
                    "{key} = {v}: must be in [{}, {}) ({})",
                    p.min, p.max_exclusive, p.doc
                )));
            }
            values.insert(p.key.to_string(), v);
        }
        if let Some(k) = table.keys().next() {
            let known: Vec<&str> = s.params.iter().map(|p| p.key).collect();
            return Err(ConfigError::Scheme(format!(
                "{}.{k}: unknown parameter of scheme {} (known: {})",
                s.name,
                s.name,
                known.join(", ")
            )));
        }
        out.insert(s.name.to_string(), values);
    }
    if let Some(name) = given.keys().next() {
        return Err(ConfigError::Scheme(format!(
            "[{name}]: parameters of scheme {name}, which is not selected (add --scheme {name})"
        )));
    }
    Ok(out)
}
