//! One `execute` for every [`Request`]: read the objects from the request's source
//! (files or kubectl, once, the same way for every query), then answer the query.

use std::io::Read;

use gang_kube::Objects;
use serde::Serialize;

use crate::cli::{Format, Snapshot, TopologyChoiceArgs, TreeArgs, WorkloadChoice};
use crate::error::{CliError, Exit};
use crate::input;
use crate::output::{done, Done};
use crate::preempt;
use crate::render::{self, Style};
use crate::report;
use crate::request::{Query, Request, Source};
use crate::simulate;
use crate::tree;

/// What `execute` needs from the process besides the request.
pub(crate) struct Context<'a> {
    /// Standard input (for `-`).
    pub(crate) stdin: &'a mut dyn Read,
    /// The kubectl program.
    pub(crate) kubectl: &'a str,
    /// Leak the parsed objects (the process exits right after).
    pub(crate) leak: bool,
    /// Text styling.
    pub(crate) style: Style,
    /// The most bytes of one input (a file, standard input, what kubectl prints).
    pub(crate) max_input_bytes: u64,
}

/// The objects a request read, where from, and the workload asked about; leaked on
/// drop when the process is about to exit anyway (freeing 100k pods costs a quarter of
/// a second).
struct Input {
    objects: Objects,
    /// Notes about the reading (Kueue not installed…).
    notes: Vec<String>,
    /// The workload as the source resolves it (kubectl: in the namespace of the object
    /// kubectl returned).
    choice: WorkloadChoice,
    /// `a.json, b.yaml` or `kubectl`.
    label: String,
    leak: bool,
}

impl Drop for Input {
    fn drop(&mut self) {
        if self.leak {
            std::mem::forget(std::mem::take(&mut self.objects));
        }
    }
}

/// Answers one request. Every failure is a [`CliError`]; answers that do not fit are
/// ordinary [`Done`]s with their own exit status.
pub(crate) fn execute(request: Request, cx: &mut Context<'_>) -> Result<Done, CliError> {
    let format = request.output.output;
    let style = cx.style.clone();
    let choice = match &request.query {
        Query::Place(c) | Query::Explain(c) | Query::Preempt(c) => Some(c),
        Query::Topology(_) => None,
        Query::Demo { snapshot, topology } => return demo(*snapshot, *topology, format, style),
        Query::Simulate { file, out } => {
            return simulate::run(file, out.as_deref(), format, cx.max_input_bytes)
        }
    };
    let priorities = matches!(request.query, Query::Explain(_) | Query::Preempt(_));
    let input = read(&request.source, choice, priorities, &request.topology, cx)?;
    let topology = input::topology_source(&request.topology)?;
    let (objects, choice, label, notes) =
        (&input.objects, &input.choice, &input.label, &input.notes);
    match &request.query {
        Query::Place(_) => {
            let (r, built) = report::place_built(objects, choice, topology, label, notes)?;
            if cx.leak {
                std::mem::forget(built);
            }
            let text = text_of(format, || render::place_text(&r, &style));
            Ok(done(&r, text, format, r.exit_code))
        }
        Query::Explain(_) => {
            let mut r = report::explain(objects, choice, topology.clone(), label, notes)?;
            preempt::add_to_explain(
                &mut r,
                objects,
                topology,
                choice.extended_resource_toleration,
            )?;
            let text = text_of(format, || render::explain_text(&r, &style));
            let mut d = done(&r, text, format, r.exit_code);
            d.error = r.failure.clone();
            Ok(d)
        }
        Query::Preempt(_) => {
            let r = preempt::preempt(objects, choice, topology, label, notes)?;
            let text = text_of(format, || render::preempt_text(&r, &style));
            Ok(done(&r, text, format, r.exit_code))
        }
        Query::Topology(tree_args) => {
            let r = topology_report(objects, topology, tree_args, notes)?;
            let text = text_of(format, || render::topology_text(&r, &style));
            Ok(done(&r, text, format, Exit::Placed))
        }
        Query::Demo { .. } | Query::Simulate { .. } => Err(CliError::input(
            "gang",
            "this command reads no Kubernetes objects",
        )),
    }
}

fn text_of(format: Format, text: impl FnOnce() -> String) -> String {
    if format == Format::Text {
        text()
    } else {
        String::new()
    }
}

/// Reads the request's objects. For kubectl the workload comes first (a wrong name
/// fails before the cluster is read), then the nodes and pods, then the Kueue objects,
/// then (`priorities`: explain, preempt) the PriorityClasses.
fn read(
    source: &Source,
    choice: Option<&WorkloadChoice>,
    priorities: bool,
    topology: &TopologyChoiceArgs,
    cx: &mut Context<'_>,
) -> Result<Input, CliError> {
    let mut input = Input {
        objects: Objects::new(),
        notes: Vec::new(),
        choice: choice.cloned().unwrap_or_default(),
        label: String::new(),
        leak: cx.leak,
    };
    match source {
        Source::Files(files) => {
            input.objects = input::read_files(files, cx.stdin, cx.max_input_bytes)?;
            // As `kubectl apply -n NS -f`: objects naming no namespace are in -n, else
            // `default` (a PodGroup and its pods then meet).
            let ns = input.choice.namespace.as_deref().unwrap_or("default");
            input.objects.apply_namespace(ns);
            input.label = files.join(", ");
        }
        Source::Kubectl(access) => {
            let k = input::Kubectl {
                program: cx.kubectl,
                access,
                max_bytes: cx.max_input_bytes,
            };
            let topology = input::topology_source(topology)?;
            if let Some(workload) = input.choice.workload.clone() {
                // As kubectl: -n, else the current context's namespace, else `default`;
                // the workload is looked up there, and only there.
                let ns = match &input.choice.namespace {
                    Some(ns) => ns.clone(),
                    None => k.context_namespace(),
                };
                k.add(
                    &mut input.objects,
                    &["get", &workload, "-n", &ns, "-o", "json"],
                )?;
                input.choice.namespace = Some(ns);
            }
            k.cluster(&mut input.objects, &topology, &mut input.notes)?;
            if let Some(ns) = &input.choice.namespace {
                input.objects.apply_namespace(ns);
            }
            if priorities {
                k.priority_classes(&mut input.objects, &mut input.notes)?;
            }
            input.label = "kubectl".to_owned();
        }
        Source::BuiltIn => {
            return Err(CliError::input(
                "gang",
                "this command needs files or the cluster to read",
            ))
        }
    }
    Ok(input)
}

fn topology_report(
    objects: &Objects,
    topology: gang_kube::TopologySource,
    tree_args: &TreeArgs,
    notes: &[String],
) -> Result<tree::TopologyReport, CliError> {
    let cluster = report::cluster_for(objects, topology, None, false)?;
    // What gang-core would refuse (a node name, a label value) is refused here too,
    // not drawn (issue 25).
    cluster.inventory()?;
    let resources = tree::default_resources(&cluster, &tree_args.resources)?;
    let mut warnings: Vec<String> = notes.to_vec();
    warnings.extend(cluster.report().warnings.iter().cloned());
    Ok(tree::TopologyReport {
        command: "topology",
        topology: cluster.report().topology.clone(),
        tree: tree::tree(&cluster, &resources, tree_args),
        resources,
        warnings,
    })
}

/// `gang demo` as data.
#[derive(Serialize)]
struct DemoReport {
    command: &'static str,
    description: &'static str,
    snapshots: Vec<DemoSnapshot>,
}

#[derive(Serialize)]
struct DemoSnapshot {
    snapshot: u8,
    description: &'static str,
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    place: Option<report::PlaceReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<report::ExplainReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    topology: Option<tree::TopologyReport>,
}

const DEMO: &str = "the guides' rack example (keep-workers-close): four 1-GPU workers of the PodGroup training-workers must share a rack";

fn demo(snapshot: Snapshot, draw: bool, format: Format, style: Style) -> Result<Done, CliError> {
    let mut snaps = Vec::new();
    let mut text = format!("{}: {DEMO}.\n", style.bold("gang demo"));
    let want = |n: u8| match snapshot {
        Snapshot::First => n == 1,
        Snapshot::Second => n == 2,
        Snapshot::Both => true,
    };
    let none = WorkloadChoice::default();
    for n in [1u8, 2] {
        if !want(n) {
            continue;
        }
        let objects = crate::demo::objects(n)?;
        let sources = format!("demo/snapshot-{n}.yaml demo/training-workers.yaml");
        let (description, cmd) = if n == 1 {
            ("rack a has 4 GPUs free: the group is placed", "place")
        } else {
            (
                "still 7 GPUs free across the cluster, but no rack has 4: the group waits",
                "explain",
            )
        };
        let command = format!("gang {cmd} {sources}");
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!("\n── Snapshot {n}: {description}\n$ {command}\n"),
        );
        let mut s = DemoSnapshot {
            snapshot: n,
            description,
            command,
            place: None,
            explain: None,
            topology: None,
        };
        let auto = gang_kube::TopologySource::Auto;
        if n == 1 {
            let r = report::place(&objects, &none, auto, &sources, &[])?;
            text.push_str(&render::place_text(&r, &style));
            s.place = Some(r);
        } else {
            let r = report::explain(&objects, &none, auto, &sources, &[])?;
            text.push_str(&render::explain_text(&r, &style));
            s.explain = Some(r);
        }
        if draw {
            let r = topology_report(
                &objects,
                gang_kube::TopologySource::Auto,
                &TreeArgs::default(),
                &[],
            )?;
            let _ = std::fmt::Write::write_fmt(
                &mut text,
                format_args!("$ gang topology demo/snapshot-{n}.yaml\n"),
            );
            text.push_str(&render::topology_text(&r, &style));
            s.topology = Some(r);
        }
        snaps.push(s);
    }
    let r = DemoReport {
        command: "demo",
        description: DEMO,
        snapshots: snaps,
    };
    Ok(done(&r, text, format, Exit::Placed))
}
