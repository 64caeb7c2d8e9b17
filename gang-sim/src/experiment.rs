//! One run document, several variants of its configuration: the shape of the guides'
//! questions ("is a hard same-rack rule worth the wait?").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::SimConfig;
use crate::error::SimError;
use crate::output::SimResult;
use crate::run::RunDocument;

/// A variant: a name and a patch merged into the run's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Name shown in reports.
    pub name: String,
    /// Fields of [`SimConfig`] to change (objects merge field by field; anything else
    /// replaces).
    #[serde(default)]
    pub config: Value,
}

/// A run document and the variants to compare.
///
/// ```
/// use gang_sim::Experiment;
/// let e = Experiment::from_json(r#"{
///   "description": "rack required vs unconstrained",
///   "run": {"cluster": {"generate": {"racks": 2}},
///           "trace": {"jsonl": "{\"id\": \"a\", \"submit\": 0, \"duration\": 60, \"members\": 40, \"gpus\": 8}"}},
///   "variants": [{"name": "rack", "config": {"policy": "required(rack)"}},
///                {"name": "any", "config": {"policy": "unconstrained"}}]
/// }"#)?;
/// let results = e.run()?;
/// // 40 nodes never fit one 32-node rack; unconstrained they span two racks of a block.
/// assert_eq!(results[0].1.jobs[0].state.as_str(), "never_fits");
/// assert_eq!(results[1].1.jobs[0].span.as_deref(), Some("topology.example.com/block"));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
    /// The run every variant starts from.
    pub run: RunDocument,
    /// The variants, in order.
    pub variants: Vec<Variant>,
}

/// A variant's merge: `patch` merged into `base`, objects field by field, anything
/// else (numbers, strings, lists, `null`) replacing what was there. What
/// [`Experiment::document`] does with a variant's `config`, and what the faces use for
/// their own variants (Python's `gang.sim.compare`).
///
/// ```
/// let mut base = serde_json::json!({"queue": {"discipline": "fifo", "x": 1}, "seed": 1});
/// gang_sim::merge_config(&mut base, &serde_json::json!({"queue": {"discipline": "backfill"}, "seed": [2]}));
/// assert_eq!(base, serde_json::json!({"queue": {"discipline": "backfill", "x": 1}, "seed": [2]}));
/// ```
pub fn merge_config(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge_config(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

impl Experiment {
    /// Parses an experiment document.
    ///
    /// # Errors
    /// [`SimError::Config`] naming the JSON path.
    pub fn from_json(text: &str) -> Result<Experiment, SimError> {
        let e: Experiment = crate::config::from_json_path(text, "")?;
        e.run.config.check()?;
        if e.variants.is_empty() {
            return Err(SimError::config(
                "variants",
                "an empty list: give at least one variant",
            ));
        }
        Ok(e)
    }

    /// Reads an experiment file; relative paths are taken from the file's folder.
    ///
    /// # Errors
    /// [`SimError::Io`], or as [`Experiment::from_json`].
    pub fn from_file(path: &str) -> Result<Experiment, SimError> {
        let text = crate::textio::read_sim_file(path, crate::config::DEFAULT_MAX_INPUT_BYTES)?;
        let mut e = Experiment::from_json(&text)?;
        let dir = std::path::Path::new(path)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        e.run.rebase(&dir);
        Ok(e)
    }

    /// The run document of variant `i`.
    ///
    /// # Errors
    /// [`SimError::Config`] when the patched configuration is invalid (fields named
    /// under `variants[i].config`).
    pub fn document(&self, i: usize) -> Result<RunDocument, SimError> {
        let v = self
            .variants
            .get(i)
            .ok_or_else(|| SimError::config(format!("variants[{i}]"), "no such variant"))?;
        let mut c = serde_json::to_value(&self.run.config)
            .map_err(|e| SimError::Internal(e.to_string()))?;
        if !v.config.is_null() {
            merge_config(&mut c, &v.config);
        }
        let config: SimConfig =
            crate::config::from_json_path(&c.to_string(), &format!("variants[{i}].config"))?;
        config.check()?;
        Ok(RunDocument {
            cluster: self.run.cluster.clone(),
            trace: self.run.trace.clone(),
            config,
        })
    }

    /// Runs every variant, in order.
    ///
    /// # Errors
    /// As [`RunDocument::simulation`] and [`crate::Simulation::run`].
    pub fn run(&self) -> Result<Vec<(String, SimResult)>, SimError> {
        (0..self.variants.len())
            .map(|i| {
                let r = self.document(i)?.simulation()?.run()?;
                Ok((self.variants[i].name.clone(), r))
            })
            .collect()
    }
}
