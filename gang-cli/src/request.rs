//! A command line resolved once: where the objects come from ([`Source`]), what is
//! asked of them ([`Query`]), which topology, and how to print the answer. `gang …`
//! and `kubectl gang …` both become a [`Request`]; one `execute` answers every request,
//! so no subcommand is written once for files and again for kubectl.

use crate::cli::{
    Command, KubeAccess, KubectlCommand, OutputArgs, Snapshot, TopologyChoiceArgs, TreeArgs,
    WorkloadChoice,
};

/// Where the Kubernetes objects come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// JSON or YAML files, `-` for standard input, read in the order given.
    Files(Vec<String>),
    /// The live cluster, read with `kubectl get … -o json` (the kubectl plugin).
    Kubectl(KubeAccess),
    /// Nothing is read: the query brings its own input (`demo`'s built-in cluster,
    /// `simulate`'s run file).
    BuiltIn,
}

/// What is asked.
#[derive(Debug, Clone)]
pub enum Query {
    /// Where the workload would go, or why it does not fit.
    Place(WorkloadChoice),
    /// The checklist, the best domain per level, the answer and its relaxations.
    Explain(WorkloadChoice),
    /// What-if: the lower-priority work to evict so the workload fits.
    Preempt(WorkloadChoice),
    /// The domain tree with free capacity.
    Topology(TreeArgs),
    /// The built-in rack example.
    Demo {
        /// Which snapshot.
        snapshot: Snapshot,
        /// Also draw each snapshot's topology.
        topology: bool,
    },
    /// A gang-sim run document or experiment.
    Simulate {
        /// The file.
        file: String,
        /// Where to write each variant's files, if anywhere.
        out: Option<String>,
    },
}

/// One request: source, query, topology choice and output.
///
/// ```
/// use clap::Parser;
/// use gang_cli::cli::{Cli, KubectlCli};
/// use gang_cli::request::{Query, Request, Source};
/// let files = Request::from(Cli::parse_from(["gang", "explain", "a.json", "-w", "job/x"]).command);
/// assert!(matches!(files.source, Source::Files(ref f) if f == &["a.json"]));
/// assert!(matches!(files.query, Query::Explain(ref w) if w.workload.as_deref() == Some("job/x")));
/// // The plugin's `explain job/x -n ml` is the same query, read from the cluster.
/// let live = Request::from(KubectlCli::parse_from(["kubectl-gang", "explain", "job/x", "-n", "ml"]));
/// assert!(matches!(live.source, Source::Kubectl(_)));
/// assert!(matches!(live.query, Query::Explain(ref w)
///     if w.workload.as_deref() == Some("job/x") && w.namespace.as_deref() == Some("ml")));
/// ```
#[derive(Debug, Clone)]
pub struct Request {
    /// Where the objects come from.
    pub source: Source,
    /// What is asked.
    pub query: Query,
    /// Where the topology levels come from.
    pub topology: TopologyChoiceArgs,
    /// Output format and colour.
    pub output: OutputArgs,
}

impl Request {
    /// A request that reads nothing (demo, simulate).
    fn built_in(query: Query, output: OutputArgs) -> Self {
        Request {
            source: Source::BuiltIn,
            query,
            topology: TopologyChoiceArgs::default(),
            output,
        }
    }
}

impl From<Command> for Request {
    fn from(c: Command) -> Self {
        let files = |a: crate::cli::FilesArgs, query: fn(WorkloadChoice) -> Query| Request {
            source: Source::Files(a.files),
            query: query(a.workload),
            topology: a.topology,
            output: a.out,
        };
        match c {
            Command::Place(a) => files(a, Query::Place),
            Command::Explain(a) => files(a, Query::Explain),
            Command::Preempt(a) => files(a, Query::Preempt),
            Command::Topology(a) => Request {
                source: Source::Files(a.files),
                query: Query::Topology(a.tree),
                topology: a.topology,
                output: a.out,
            },
            Command::Demo(a) => Request::built_in(
                Query::Demo {
                    snapshot: a.snapshot,
                    topology: a.topology,
                },
                a.out,
            ),
            Command::Simulate(a) => Request::built_in(
                Query::Simulate {
                    file: a.file,
                    out: a.out,
                },
                a.out_format,
            ),
            Command::Kubectl(k) => Request::from(k),
        }
    }
}

impl From<crate::cli::KubectlCli> for Request {
    fn from(k: crate::cli::KubectlCli) -> Self {
        let live =
            |a: crate::cli::KubectlWorkloadArgs, query: fn(WorkloadChoice) -> Query| Request {
                source: Source::Kubectl(a.access),
                query: query(WorkloadChoice {
                    workload: Some(a.workload),
                    namespace: a.namespace,
                    extended_resource_toleration: a.extended_resource_toleration,
                }),
                topology: a.topology,
                output: a.out,
            };
        match k.command {
            KubectlCommand::Place(a) => live(a, Query::Place),
            KubectlCommand::Explain(a) => live(a, Query::Explain),
            KubectlCommand::Preempt(a) => live(a, Query::Preempt),
            KubectlCommand::Topology(a) => Request {
                source: Source::Kubectl(a.access),
                query: Query::Topology(a.tree),
                topology: a.topology,
                output: a.out,
            },
            KubectlCommand::Demo(a) => Request::from(Command::Demo(a)),
        }
    }
}
