//! The command line: `gang` (files) and `kubectl gang` (the live cluster).
//!
//! Each subcommand is one variant of [`Command`] (or [`KubectlCommand`]) holding its
//! arguments. Both become one [`crate::request::Request`] (where the objects come
//! from, what is asked, how to print it), answered by one `execute`: a new subcommand
//! is one more variant here, one more [`crate::request::Query`], and one more arm there.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::EXIT_CODES;

/// `gang`: can this gang be placed all together inside one topology domain, and if
/// not, why not — answered from the Kubernetes objects you already have.
#[derive(Debug, Parser)]
#[command(
    name = "gang",
    version,
    about = "Answers whether a gang (a PodGroup, a Kueue/Volcano/KAI job, a PyTorchJob…) fits together inside one topology domain of a Kubernetes cluster, and if not, why",
    long_about = None,
    after_help = EXIT_CODES,
    propagate_version = true,
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `gang`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Where the workload would go: its domain and nodes, or why it does not fit.
    #[command(after_help = EXIT_CODES)]
    Place(FilesArgs),
    /// The checklist for a group that never becomes ready, on one screen.
    #[command(after_help = EXIT_CODES)]
    Explain(FilesArgs),
    /// What-if: the lower-priority running work to evict so the workload fits, and
    /// where it would go then (nothing is evicted).
    #[command(after_help = EXIT_CODES)]
    Preempt(FilesArgs),
    /// The topology's domain tree with free capacity per domain.
    #[command(after_help = EXIT_CODES)]
    Topology(TopologyArgs),
    /// place and explain on a built-in cluster (the guides' rack example): no files.
    #[command(after_help = EXIT_CODES)]
    Demo(DemoArgs),
    /// Runs a simulation (a gang-sim run document or experiment file): completion time
    /// from submission, queue delay and run time per policy.
    #[command(after_help = EXIT_CODES)]
    Simulate(SimulateArgs),
    /// The kubectl plugin's commands, reading the live cluster through `kubectl`
    /// (as `kubectl gang …` when installed as `kubectl-gang`).
    #[command(after_help = EXIT_CODES)]
    Kubectl(KubectlCli),
}

/// `kubectl gang …` (the binary installed as `kubectl-gang`, or `gang kubectl …`).
#[derive(Debug, Parser)]
#[command(
    name = "kubectl gang",
    bin_name = "kubectl gang",
    version,
    about = "Places and explains gangs on the live cluster, read with `kubectl get … -o json`",
    after_help = EXIT_CODES,
)]
pub struct KubectlCli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: KubectlCommand,
}

/// The subcommands of `kubectl gang`.
#[derive(Debug, Subcommand)]
pub enum KubectlCommand {
    /// Where the workload would go now.
    #[command(after_help = EXIT_CODES)]
    Place(KubectlWorkloadArgs),
    /// The checklist for a group that never becomes ready.
    #[command(after_help = EXIT_CODES)]
    Explain(KubectlWorkloadArgs),
    /// What-if: the lower-priority running work to evict so the workload fits now.
    #[command(after_help = EXIT_CODES)]
    Preempt(KubectlWorkloadArgs),
    /// The cluster's domain tree with free capacity per domain.
    #[command(after_help = EXIT_CODES)]
    Topology(KubectlTopologyArgs),
    /// The built-in demo (reads nothing from the cluster).
    #[command(after_help = EXIT_CODES)]
    Demo(DemoArgs),
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// One YAML document.
    Yaml,
}

/// When to colour text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorMode {
    /// When standard output is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Output options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Colour in text output.
    #[arg(long, value_enum, default_value_t = ColorMode::Auto, value_name = "WHEN")]
    pub color: ColorMode,
}

/// Where the topology levels come from (default: a Kueue Topology in the input, else
/// detected from node labels).
#[derive(Debug, Clone, Default, Args)]
pub struct TopologyChoiceArgs {
    /// Topology levels: node label keys, outermost first (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "KEY,KEY…", conflicts_with_all = ["topology", "flavor", "detect"])]
    pub levels: Option<Vec<String>>,
    /// The Kueue (or KAI) Topology object of this name.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["flavor", "detect"])]
    pub topology: Option<String>,
    /// The Kueue ResourceFlavor of this name (its Topology, node labels, tolerations).
    #[arg(long, value_name = "NAME", conflicts_with = "detect")]
    pub flavor: Option<String>,
    /// Detect the levels from node labels, ignoring Topology objects.
    #[arg(long)]
    pub detect: bool,
}

/// Which workload, when the input holds several.
#[derive(Debug, Clone, Default, Args)]
pub struct WorkloadChoice {
    /// The workload, as kubectl names it: `job/train`, `pytorchjob/llama-ft`,
    /// `podgroup/training-workers`, or a bare name.
    #[arg(short = 'w', long, value_name = "KIND/NAME")]
    pub workload: Option<String>,
    /// Only workloads in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Pods requesting an extended resource (nvidia.com/gpu, google.com/tpu) tolerate
    /// NoSchedule taints of that name, as GKE's ExtendedResourceToleration admission
    /// adds (default: off, as a vanilla kube-apiserver).
    #[arg(long)]
    pub extended_resource_toleration: bool,
}

/// `gang place` / `gang explain` / `gang preempt`.
#[derive(Debug, Clone, Args)]
pub struct FilesArgs {
    /// JSON or YAML files (`-` for standard input): nodes and pods (`kubectl get
    /// nodes,pods -A -o json`), the workload, optionally Kueue Topology/ResourceFlavor.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub workload: WorkloadChoice,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub topology: TopologyChoiceArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutputArgs,
}

/// How the topology tree is drawn.
#[derive(Debug, Clone, Default, Args)]
pub struct TreeArgs {
    /// Resources to draw (repeatable; default: every `*/gpu` resource, else cpu).
    #[arg(short = 'r', long = "resource", value_name = "NAME")]
    pub resources: Vec<String>,
    /// Draw one row per node, and levels of one node per domain such as GKE's host
    /// (default: only when the cluster has at most 32 nodes).
    #[arg(long, conflicts_with = "no_nodes")]
    pub nodes: bool,
    /// Never draw node rows.
    #[arg(long)]
    pub no_nodes: bool,
    /// Draw only this many levels below the cluster.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
}

/// `gang topology`.
#[derive(Debug, Clone, Args)]
pub struct TopologyArgs {
    /// JSON or YAML files with the nodes (and pods, for usage); `-` for standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub topology: TopologyChoiceArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub tree: TreeArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutputArgs,
}

/// Which demo snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Snapshot {
    /// Rack a has four GPUs free: the group is placed.
    First,
    /// Seven GPUs free, no rack with four: the group waits.
    Second,
    /// Both, one after the other.
    Both,
}

/// `gang demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Which snapshot of the guides' rack example.
    #[arg(long, value_enum, default_value_t = Snapshot::Both)]
    pub snapshot: Snapshot,
    /// Also draw each snapshot's topology.
    #[arg(long)]
    pub topology: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutputArgs,
}

/// `gang simulate`.
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// A gang-sim run document (`{"cluster", "trace", "config"}`) or an experiment file
    /// (a run and its `variants`); paths inside it are relative to its folder.
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Also write each variant's jobs.jsonl, jobs.csv, summary.json and timeline.csv to
    /// `DIR/<variant>/`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out_format: OutputArgs,
}

/// How to reach the cluster (passed to `kubectl`).
#[derive(Debug, Clone, Args)]
pub struct KubeAccess {
    /// The kubeconfig context (`kubectl --context`).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The kubeconfig file (`kubectl --kubeconfig`).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<String>,
    /// Seconds kubectl may take per request (passed as `kubectl --request-timeout`);
    /// a kubectl still running 5 s later is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub request_timeout: u64,
}

impl Default for KubeAccess {
    fn default() -> Self {
        KubeAccess {
            context: None,
            kubeconfig: None,
            request_timeout: 30,
        }
    }
}

/// `kubectl gang place|explain|preempt WORKLOAD`.
#[derive(Debug, Clone, Args)]
pub struct KubectlWorkloadArgs {
    /// The workload as kubectl names it: `job/train`, `pytorchjob/llama-ft`,
    /// `podgroup/training-workers`.
    #[arg(value_name = "KIND/NAME")]
    pub workload: String,
    /// The workload's namespace (default: the context's).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Pods requesting an extended resource tolerate NoSchedule taints of that name, as
    /// GKE's ExtendedResourceToleration admission adds (default: off).
    #[arg(long)]
    pub extended_resource_toleration: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub access: KubeAccess,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub topology: TopologyChoiceArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutputArgs,
}

/// `kubectl gang topology`.
#[derive(Debug, Clone, Args)]
pub struct KubectlTopologyArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub access: KubeAccess,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub topology: TopologyChoiceArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub tree: TreeArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutputArgs,
}
