//! One run from one document: where the cluster and the trace come from, and the
//! configuration ([`RunDocument`]); [`run_json`] runs it, JSON in, JSON out.

use serde::{Deserialize, Serialize};

use crate::config::{self, SimConfig};
use crate::error::SimError;
use crate::generate;
use crate::import;
use crate::load;
use crate::placer::Cluster;
use crate::sim::Simulation;
use crate::trace::Trace;
use crate::workload::WorkloadSpec;

/// The keys of a [`ClusterSource`] in a run document, in declaration order.
pub const CLUSTER_SOURCES: &[&str] = &["file", "inline", "generate", "openb_nodes"];
/// The keys of a [`TraceSource`] in a run document, in declaration order.
pub const TRACE_SOURCES: &[&str] = &["file", "inline", "jsonl", "csv", "generate"];
/// The formats a trace file is read in (`trace.file.format`).
pub const TRACE_FORMATS: &[&str] = &["jsonl", "csv", "sacct", "openb", "philly"];

/// Where the cluster comes from, in a [`RunDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ClusterSource {
    /// A file holding a cluster or scenario document.
    File(String),
    /// The document itself.
    Inline(serde_json::Value),
    /// A generated cluster.
    Generate(GenCluster),
    /// Alibaba openb node list (CSV file), see [`import::openb_nodes`].
    OpenbNodes {
        /// The CSV file.
        file: String,
        /// Group nodes into racks of this many (in file order); `null`: no racks.
        nodes_per_rack: Option<usize>,
    },
}

/// A generated cluster: `racks` racks of `flavor` (see [`generate`](crate::generate)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenCluster {
    /// `hgx` (32 × 8-GPU nodes per rack, 16 racks per block) or `nvl72` (18 × 4-GPU
    /// trays per rack, 8 racks per block).
    pub flavor: String,
    /// Number of racks.
    pub racks: usize,
    /// Share of GPUs already used by others, percent.
    pub used_pct: u32,
    /// Seed of the generator.
    pub seed: u64,
    /// Put in the benchmarks' awkward nodes (cordoned, tainted, unlabelled, another
    /// product).
    pub awkward: bool,
    /// Nodes per rack; `null`: the flavor's (hgx 32, nvl72 18).
    pub nodes_per_rack: Option<usize>,
    /// Racks per block; `null`: the flavor's (hgx 16, nvl72 8).
    pub racks_per_block: Option<usize>,
    /// Blocks per zone; `null`: the flavor's.
    pub blocks_per_zone: Option<usize>,
}

impl Default for GenCluster {
    fn default() -> Self {
        GenCluster {
            flavor: "hgx".into(),
            racks: 4,
            used_pct: 0,
            seed: 0,
            awkward: false,
            nodes_per_rack: None,
            racks_per_block: None,
            blocks_per_zone: None,
        }
    }
}

impl GenCluster {
    /// Builds the cluster.
    ///
    /// # Errors
    /// [`SimError::Config`] for an unknown flavor or zero racks.
    pub fn build(&self) -> Result<Cluster, SimError> {
        self.build_within(crate::config::Limits::default().max_nodes)
    }

    /// [`GenCluster::build`], making at most `max_nodes` nodes ([`crate::Limits`]).
    ///
    /// ```
    /// use gang_sim::GenCluster;
    /// let g = GenCluster { racks: 100_000_000, ..GenCluster::default() };
    /// let err = g.build().unwrap_err(); // refused before anything is allocated
    /// assert_eq!(err.field(), "cluster.generate.racks");
    /// assert!(err.to_string().contains("limits.max_nodes"), "{err}");
    /// ```
    ///
    /// # Errors
    /// As [`GenCluster::build`]; [`SimError::Config`] naming `cluster.generate.racks`
    /// when the cluster would have more than `max_nodes` nodes.
    pub fn build_within(&self, max_nodes: u64) -> Result<Cluster, SimError> {
        let flavor = match self.flavor.as_str() {
            "hgx" => generate::Flavor::Hgx,
            "nvl72" => generate::Flavor::Nvl72,
            other => {
                return Err(SimError::config(
                    "cluster.generate.flavor",
                    format!("unknown flavor {other:?}: hgx or nvl72"),
                ))
            }
        };
        if self.racks == 0 {
            return Err(SimError::config(
                "cluster.generate.racks",
                "at least one rack",
            ));
        }
        let mut spec = if self.awkward {
            let mut s = generate::Spec::of(flavor, generate::Size::K1, self.used_pct);
            s.racks = self.racks;
            s
        } else {
            generate::Spec::clean(flavor, self.racks)
        };
        for (field, value, slot) in [
            (
                "nodes_per_rack",
                self.nodes_per_rack,
                &mut spec.nodes_per_rack,
            ),
            (
                "racks_per_block",
                self.racks_per_block,
                &mut spec.racks_per_block,
            ),
            (
                "blocks_per_zone",
                self.blocks_per_zone,
                &mut spec.blocks_per_zone,
            ),
        ] {
            match value {
                Some(0) => {
                    return Err(SimError::config(
                        format!("cluster.generate.{field}"),
                        "at least 1",
                    ))
                }
                Some(n) => *slot = n,
                None => {}
            }
        }
        if self.used_pct > 100 {
            return Err(SimError::config(
                "cluster.generate.used_pct",
                format!("{} is not a percentage (0 to 100)", self.used_pct),
            ));
        }
        let nodes = (spec.racks as u64).saturating_mul(spec.nodes_per_rack as u64);
        if nodes > max_nodes {
            return Err(SimError::config(
                "cluster.generate.racks",
                format!(
                    "{} racks of {} nodes are {nodes} nodes, over limits.max_nodes \
                     ({max_nodes}); raise it to allow more",
                    self.racks, spec.nodes_per_rack
                ),
            ));
        }
        spec.used_pct = self.used_pct.min(100);
        spec.seed ^= self.seed;
        Ok(generate::SynthCluster::generate(&spec).cluster())
    }
}

/// Where the trace comes from, in a [`RunDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceSource {
    /// A file, read by format: `jsonl` (default), `csv`, `sacct`, `openb`, `philly`.
    File {
        /// Path.
        path: String,
        /// Format; `null`: by extension (`.csv` is CSV, else JSON Lines).
        #[serde(default)]
        format: Option<String>,
    },
    /// The jobs themselves, as JSON objects (JSON Lines fields).
    Inline(Vec<serde_json::Value>),
    /// JSON Lines text.
    Jsonl(String),
    /// CSV text.
    Csv(String),
    /// A generated workload.
    Generate(WorkloadSpec),
}

/// One JSON document for a whole run: `{"cluster", "trace", "config"}`.
///
/// ```
/// let doc = r#"{
///   "cluster": {"generate": {"flavor": "hgx", "racks": 2}},
///   "trace": {"jsonl": "{\"id\": \"a\", \"submit\": 0, \"duration\": 60, \"members\": 4, \"gpus\": 8}"},
///   "config": {"policy": "required(rack)", "seed": 1}
/// }"#;
/// let out: serde_json::Value = serde_json::from_str(&gang_sim::run_json(doc)?).unwrap();
/// assert_eq!(out["jobs"][0]["state"], "completed");
/// assert_eq!(out["jobs"][0]["span"], "topology.example.com/rack");
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDocument {
    /// The cluster.
    pub cluster: ClusterSource,
    /// The trace.
    pub trace: TraceSource,
    /// Everything else (defaults when absent).
    #[serde(default)]
    pub config: SimConfig,
}

impl RunDocument {
    /// Parses a run document.
    ///
    /// # Errors
    /// [`SimError::Config`] naming the JSON path.
    pub fn from_json(text: &str) -> Result<RunDocument, SimError> {
        let d: RunDocument = config::from_json_path(text, "")?;
        d.config.check()?;
        Ok(d)
    }

    /// Reads a run document from a file; relative paths inside it are taken relative to
    /// the file's folder.
    ///
    /// # Errors
    /// [`SimError::Io`], or as [`RunDocument::from_json`].
    pub fn from_file(path: &str) -> Result<RunDocument, SimError> {
        let text = read_text(path, crate::config::DEFAULT_MAX_INPUT_BYTES)?;
        let mut d = RunDocument::from_json(&text)?;
        let dir = std::path::Path::new(path)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        d.rebase(&dir);
        Ok(d)
    }

    /// Makes relative file paths relative to `dir`.
    pub fn rebase(&mut self, dir: &std::path::Path) {
        let fix = |p: &mut String| {
            if std::path::Path::new(p.as_str()).is_relative() {
                *p = dir.join(p.as_str()).to_string_lossy().into_owned();
            }
        };
        match &mut self.cluster {
            ClusterSource::File(p) => fix(p),
            ClusterSource::OpenbNodes { file, .. } => fix(file),
            ClusterSource::Inline(_) | ClusterSource::Generate(_) => {}
        }
        if let TraceSource::File { path, .. } = &mut self.trace {
            fix(path);
        }
    }

    /// Builds the cluster.
    ///
    /// # Errors
    /// Reading a file, or the cluster's own errors.
    pub fn cluster(&self) -> Result<Cluster, SimError> {
        Ok(match &self.cluster {
            ClusterSource::File(p) => {
                let text = read_text(p, self.config.limits.max_input_bytes)?;
                Cluster::from_json(&text)?
            }
            ClusterSource::Inline(v) => Cluster::from_json(&v.to_string())?,
            ClusterSource::Generate(g) => g.build_within(self.config.limits.max_nodes)?,
            ClusterSource::OpenbNodes {
                file,
                nodes_per_rack,
            } => {
                let text = read_text(file, self.config.limits.max_input_bytes)?;
                import::openb_nodes(&text, *nodes_per_rack)?
            }
        })
    }

    /// Builds the trace for `cluster` (a generated workload with a target `load` is
    /// rescaled to it on this cluster, see [`crate::offered_load`]).
    ///
    /// # Errors
    /// Reading a file, importing, or the trace's own errors.
    pub fn trace(&self, cluster: &Cluster) -> Result<Trace, SimError> {
        self.trace_with_warnings(cluster).map(|(t, _)| t)
    }

    /// [`RunDocument::trace`], with what was lost on the way in, as warnings for the
    /// run's summary: rows an importer skipped or rounded ([`import::Imported::warnings`],
    /// under `trace.file`), a generated workload's ([`WorkloadSpec::warnings`], under
    /// `trace.generate`).
    ///
    /// # Errors
    /// As [`RunDocument::trace`].
    pub fn trace_with_warnings(&self, cluster: &Cluster) -> Result<(Trace, Vec<String>), SimError> {
        let mut warnings = Vec::new();
        let mut imported = |i: import::Imported| {
            warnings.extend(i.warnings().into_iter().map(|w| format!("trace.file: {w}")));
            i.trace
        };
        let trace = match &self.trace {
            TraceSource::File { path, format } => {
                let text = read_text(path, self.config.limits.max_input_bytes)?;
                let fmt = format.clone().unwrap_or_else(|| {
                    if path.ends_with(".csv") {
                        "csv"
                    } else {
                        "jsonl"
                    }
                    .to_owned()
                });
                match fmt.as_str() {
                    "jsonl" => Trace::from_jsonl(&text)?,
                    "csv" => Trace::from_csv(&text)?,
                    "sacct" => imported(import::sacct(&text)?),
                    "openb" => imported(import::openb_pods(&text)?),
                    "philly" => imported(import::philly(&text)?),
                    other => {
                        return Err(SimError::config(
                            "trace.file.format",
                            format!("unknown format {other:?}: jsonl, csv, sacct, openb or philly"),
                        ))
                    }
                }
            }
            TraceSource::Inline(jobs) => {
                let text: String = jobs.iter().map(|j| format!("{j}\n")).collect();
                Trace::from_jsonl(&text)?
            }
            TraceSource::Jsonl(t) => Trace::from_jsonl(t.trim_start_matches('\u{feff}'))?,
            TraceSource::Csv(t) => Trace::from_csv(t.trim_start_matches('\u{feff}'))?,
            TraceSource::Generate(w) => {
                warnings.extend(
                    w.warnings()
                        .into_iter()
                        .map(|m| format!("trace.generate.{m}")),
                );
                let limits = &self.config.limits;
                let mut t = w.generate_within(limits.max_jobs).map_err(|e| match e {
                    SimError::Config {
                        field,
                        message,
                        core,
                    } => SimError::Config {
                        field: field.replacen("workload.", "trace.generate.", 1),
                        message,
                        core,
                    },
                    e => e,
                })?;
                if let Some(target) = w.load {
                    let resource = &self.config.gpu_resource;
                    let gpus = load::cluster_gpus(cluster, resource);
                    load::scale_to_load(&mut t, gpus, resource, target, "trace.generate.load")?;
                }
                t
            }
        };
        Ok((trace, warnings))
    }

    /// Builds the cluster, the trace and the simulation.
    ///
    /// # Errors
    /// As [`Simulation::new`], plus reading files and importing traces.
    pub fn simulation(&self) -> Result<Simulation, SimError> {
        let cluster = self.cluster()?;
        let (trace, warnings) = self.trace_with_warnings(&cluster)?;
        let mut sim = Simulation::new(cluster, trace, self.config.clone())?;
        sim.warn(warnings);
        Ok(sim)
    }
}

/// A text file's contents (at most `max` bytes, checked as UTF-8 as it is read) without
/// a leading byte-order mark (spreadsheets and Windows editors write one; it is not
/// part of the first column's name or the first line).
fn read_text(path: &str, max: u64) -> Result<String, SimError> {
    let text = crate::textio::read_sim_file(path, max)?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Runs the simulation a [`RunDocument`] describes and returns its result as JSON:
/// `{"jobs": [...], "summary": {...}, "timeline": [...]}`.
///
/// # Errors
/// Any [`SimError`]; [`SimError::to_json`] renders it for a caller across a language
/// boundary.
pub fn run_json(document: &str) -> Result<String, SimError> {
    let doc = RunDocument::from_json(document)?;
    let result = doc.simulation()?.run()?;
    Ok(result.to_json())
}
