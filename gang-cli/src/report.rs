//! The answers of `place` and `explain` as data: computed here from gang-kube and
//! gang-core, worded in [`crate::render`], serialised as they are for `--output json|yaml`.

use std::collections::BTreeMap;

use gang_core::diagnosis::{LevelReport, Part};
use gang_core::{Diagnosis, Gang, Outcome, HOSTNAME_LEVEL};
use gang_kube::{
    workloads, Check, Cluster, ClusterOptions, ExcludedNode, Framework, LevelCoverage, Objects,
    PodCounts, Resources, RoleExclusions, TopologyChoice, TopologySource, WorkloadGang,
};
use serde::Serialize;

use crate::cli::WorkloadChoice;
use crate::error::{CliError, ErrorDocument, Exit};

/// What an answer says, as the reports and their documents spell it (`"placed"`,
/// `"unschedulable"`, `"undecided"`, `"invalid"`), and the exit status it gives.
///
/// ```
/// use gang_cli::{report::Status, Exit};
/// assert_eq!(Status::Unschedulable.exit(), Exit::DoesNotFit);
/// assert_eq!(serde_json::to_string(&Status::Placed).unwrap(), r#""placed""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It fits (exit 0).
    Placed,
    /// Valid, but it does not fit now (exit 1).
    Unschedulable,
    /// The search ran out of budget: it may fit (exit 3).
    Undecided,
    /// No gang could be built from the workload (exit 2).
    Invalid,
}

impl Status {
    /// The status of gang-core's answer.
    pub fn of(o: &Outcome) -> Status {
        match o {
            Outcome::Placed(_) => Status::Placed,
            Outcome::Unschedulable(_) => Status::Unschedulable,
            Outcome::Undecided(_) => Status::Undecided,
        }
    }

    /// The exit status this answer gives. See [`Exit`].
    pub fn exit(self) -> Exit {
        match self {
            Status::Placed => Exit::Placed,
            Status::Unschedulable => Exit::DoesNotFit,
            Status::Undecided => Exit::Undecided,
            Status::Invalid => Exit::Invalid,
        }
    }
}

/// The workload asked about, as read.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    /// `Kind/namespace/name`.
    pub object: String,
    /// What kind of workload.
    pub framework: Framework,
    /// The file (or kubectl command) it came from; empty for a group named only by pods.
    pub source: String,
    /// Where in the source.
    pub position: String,
    /// Whether the group object itself is in the input.
    pub found: bool,
    /// Members: pods, not GPUs.
    pub members: u32,
    /// The group minimum.
    pub minimum: u32,
    /// The field the minimum was read from.
    pub minimum_field: String,
    /// Member pods found in the input.
    pub member_pods: usize,
    /// Roles, leaders first.
    pub roles: Vec<RoleSummary>,
    /// The topology request as resolved against the cluster (absent when the gang
    /// could not be built).
    pub request: Option<RequestSummary>,
}

/// One role of the workload.
#[derive(Debug, Clone, Serialize)]
pub struct RoleSummary {
    /// Role name.
    pub name: String,
    /// Members of this role.
    pub members: u32,
    /// Elastic minimum, if any.
    pub min_count: Option<u32>,
    /// Bound by the topology request.
    pub constrained: bool,
    /// Per-member requests (with `pods: 1`).
    pub requests: Resources,
    /// `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations (the workload's and, for Kueue workloads, the flavor's).
    pub tolerations: usize,
}

/// The topology request of the gang, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    /// Every constrained member in one domain of this level.
    pub required: Option<String>,
    /// Try this level first, then walk up.
    pub preferred: Option<String>,
    /// Slices `(level, size)`, outermost first.
    pub slices: Vec<(String, u32)>,
}

/// What reading the cluster found.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterSummary {
    /// Node objects read.
    pub nodes: usize,
    /// Nodes that can take members.
    pub schedulable: usize,
    /// Excluded nodes and why.
    pub excluded: Vec<ExcludedNode>,
    /// How the pods were counted (`ignored`: the workload's own member pods).
    pub pods: PodCounts,
    /// Label coverage per level.
    pub levels: Vec<LevelCoverage>,
}

impl ClusterSummary {
    pub(crate) fn of(c: &Cluster) -> Self {
        let r = c.report();
        ClusterSummary {
            nodes: r.nodes,
            schedulable: r.schedulable,
            excluded: r.excluded.clone(),
            pods: r.pods.clone(),
            levels: r.levels.clone(),
        }
    }
}

/// `gang place`: where the workload would go.
#[derive(Debug, Clone, Serialize)]
pub struct PlaceReport {
    /// `"place"`.
    pub command: &'static str,
    /// `placed`, `unschedulable` or `undecided`.
    pub status: Status,
    /// The process exit code (a number in documents).
    pub exit_code: Exit,
    /// The workload.
    pub workload: WorkloadSummary,
    /// The topology chosen and why.
    pub topology: TopologyChoice,
    /// The cluster as read.
    pub cluster: ClusterSummary,
    /// gang-core's answer (`{"status": "placed", "level", "domain", "assignments", …}`
    /// or `{"status": "unschedulable", "message", "diagnosis"}`).
    pub result: serde_json::Value,
    /// The workload placed part by part (each child Job of a JobSet with exclusive
    /// topology, each Kueue PodSet or PodSet group with a request of its own; absent
    /// for a workload placed as one gang).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartAnswer>,
    /// Fields read but not honoured exactly, and notes.
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub(crate) outcome: Outcome,
}

/// One part of a workload placed on its own ([`gang_kube::Cluster::place_parts`]).
#[derive(Debug, Clone, Serialize)]
pub struct PartAnswer {
    /// A child Job (`REPLICATED-JOB-INDEX`), a PodSet group or a PodSet.
    pub name: String,
    /// The workload's roles in this part.
    pub roles: Vec<String>,
    /// Placed, or not after the parts before it.
    pub status: Status,
    /// The level and domain it would use.
    pub level: Option<String>,
    /// Domain path.
    pub domain: String,
    /// Members per role and node.
    pub assignments: Vec<gang_core::Assignment>,
}

impl PartAnswer {
    fn of(p: gang_kube::PartOutcome) -> Self {
        let placement = p.outcome.placement();
        PartAnswer {
            status: Status::of(&p.outcome),
            level: placement.and_then(|x| x.level().map(str::to_owned)),
            domain: placement.map(|x| x.domain_path()).unwrap_or_default(),
            assignments: placement
                .map(|x| x.assignments().to_vec())
                .unwrap_or_default(),
            name: p.name,
            roles: p.roles,
        }
    }
}

/// Each part's answer, when the workload is placed in parts.
fn parts_of(
    cluster: &Cluster,
    inventory: &gang_core::Inventory,
    w: &WorkloadGang,
) -> Result<Vec<PartAnswer>, gang_kube::Error> {
    Ok(cluster
        .place_parts(inventory, w)?
        .into_iter()
        .map(PartAnswer::of)
        .collect())
}

/// Objects found in the input.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectsFound {
    /// Objects read.
    pub total: usize,
    /// Sources, in the order given.
    pub sources: Vec<String>,
    /// Objects per kind.
    pub kinds: BTreeMap<String, usize>,
    /// Workloads found (`Kind/namespace/name`).
    pub workloads: Vec<String>,
}

/// How the best domain of one level does (a row of `explain`): gang-core's
/// [`LevelReport`], with the level's short name.
#[derive(Debug, Clone, Serialize)]
pub struct LevelRow {
    /// Short name (`rack`, `node`).
    pub name: String,
    /// gang-core's row (`level`, `requested`, `status`, `domain`, `fits`, `short_of`,
    /// `reason`, `dropped_slices`, `message`).
    #[serde(flatten)]
    pub report: LevelReport,
}

/// A change to the request that would place the workload now.
#[derive(Debug, Clone, Serialize)]
pub struct Relaxation {
    /// `coarser_level`, `without_topology` or `fewer_members`.
    pub kind: &'static str,
    /// The level it would be placed at.
    pub level: Option<String>,
    /// The domain.
    pub domain: String,
    /// Members it would place (`fewer_members`: the smaller minimum's placement).
    pub members: u64,
    /// gang-core's sentence.
    pub message: String,
    /// What to set in the workload (`fewer_members`: its minimum's field and value).
    pub set: Option<String>,
}

/// The answer part of `explain`.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// `placed`, `unschedulable`, `undecided`, or `invalid` (no gang could be built).
    pub status: Status,
    /// The level and domain it would use.
    pub level: Option<String>,
    /// Domain path.
    pub domain: String,
    /// Members per role and node (gang-core's assignments).
    pub assignments: Vec<gang_core::Assignment>,
    /// gang-core's paragraph when it does not fit.
    pub message: Option<String>,
    /// Each part's answer, when the workload is placed in parts (see
    /// [`PlaceReport::parts`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartAnswer>,
}

/// `gang explain`: the guides' checklist for a group that never becomes ready.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainReport {
    /// `"explain"`.
    pub command: &'static str,
    /// As [`Answer::status`].
    pub status: Status,
    /// The process exit code (a number in documents).
    pub exit_code: Exit,
    /// The workload.
    pub workload: WorkloadSummary,
    /// 1. Objects found.
    pub objects: ObjectsFound,
    /// The topology chosen and why.
    pub topology: TopologyChoice,
    /// The cluster as read.
    pub cluster: ClusterSummary,
    /// 1–4. The checks (objects, members vs minimum, member shape, scheduler, fit).
    pub checks: Vec<Check>,
    /// 4. Nodes excluded per role, by reason.
    pub exclusions: Vec<RoleExclusions>,
    /// 4. The best domain per level, outermost first, then one node.
    pub levels: Vec<LevelRow>,
    /// Where it would go, or why not.
    pub answer: Answer,
    /// The smallest changes that would place it now.
    pub relaxations: Vec<Relaxation>,
    /// What offline objects cannot show (checklist items 5 and 6).
    pub not_checked: &'static str,
    /// Fields read but not honoured exactly, and notes.
    pub warnings: Vec<String>,
    /// What preempting would take, when the workload has a priority (from
    /// `spec.priority`, a PriorityClass or the global default) and does not fit now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptAnswer>,
    /// Why no gang could be built (exit 2), if so.
    pub error: Option<ErrorDocument>,
    #[serde(skip)]
    pub(crate) failure: Option<CliError>,
    /// gang-core's diagnosis when it does not fit (its sentences word the answer).
    #[serde(skip)]
    pub(crate) diagnosis: Option<Diagnosis>,
    /// The workload as read (for preemption, without choosing it again).
    #[serde(skip)]
    pub(crate) workload_gang: WorkloadGang,
}

/// One running workload a preemption plan evicts, whole.
#[derive(Debug, Clone, Serialize)]
pub struct VictimDoc {
    /// The workload (`Job/ml/train-a`, `PodGroup/ml/eval-b`, or a lone `Pod/…`).
    pub workload: String,
    /// Its priority (the highest among its pods).
    pub priority: i32,
    /// What its pods hold, per resource, over all their nodes.
    pub evicted: Resources,
}

/// A preemption plan: the victims (none when it fits now) and where the workload goes
/// once they are gone.
#[derive(Debug, Clone, Serialize)]
pub struct PlanDoc {
    /// It fits now: nothing to evict.
    pub fits_now: bool,
    /// The workloads to evict, in gang-core's order.
    pub victims: Vec<VictimDoc>,
    /// Their total of each cost resource (`nvidia.com/gpu`).
    pub evicted: Resources,
    /// The level and domain it would use then.
    pub level: Option<String>,
    /// Domain path.
    pub domain: String,
    /// Members per role and node.
    pub assignments: Vec<gang_core::Assignment>,
    /// `false` when the search ran out of work first: a plan that evicts less may exist.
    pub search_complete: bool,
    /// gang-core's sentence (`evict … in rack r7`).
    pub message: String,
}

/// What preempting would take: a plan, or why there is none.
#[derive(Debug, Clone, Serialize)]
pub struct PreemptAnswer {
    /// `placed` (a plan), `unschedulable` (no eviction of lower-priority work makes it
    /// fit, or it may not preempt) or `undecided` (the search ran out of work).
    pub status: Status,
    /// The workload's priority and where it came from.
    pub priority: gang_kube::WorkloadPriority,
    /// Running workloads read, and how many have a strictly lower priority.
    pub running: usize,
    /// Of those, with a strictly lower priority (the only ones it may evict).
    pub lower_priority: usize,
    /// The plan, if there is one.
    pub plan: Option<PlanDoc>,
    /// The answer in words: the plan's sentence, or why there is none.
    pub message: String,
}

/// `gang preempt`: the what-if. Nothing is evicted.
#[derive(Debug, Clone, Serialize)]
pub struct PreemptReport {
    /// `"preempt"`.
    pub command: &'static str,
    /// As [`PreemptAnswer::status`].
    pub status: Status,
    /// The process exit code (a number in documents): 0 with a plan, 1 without, 3
    /// undecided.
    pub exit_code: Exit,
    /// The workload.
    pub workload: WorkloadSummary,
    /// The topology chosen and why.
    pub topology: TopologyChoice,
    /// The cluster as read.
    pub cluster: ClusterSummary,
    /// The answer.
    pub preemption: PreemptAnswer,
    /// Fields read but not honoured exactly, and notes.
    pub warnings: Vec<String>,
}

/// What offline objects cannot show.
pub const NOT_CHECKED: &str = "image pulls, storage mounts, worker logs and rendezvous (after placement), and what happens at the scheduling or readiness timeout: look at the pods' events and the controller";

/// The workload the options name among those in `objects`.
///
/// # Errors
/// [`CliError::Input`] when none matches, there is none, or several match without a
/// `--workload` to choose; [`CliError::Kube`] for workload objects gang-kube rejects.
pub fn pick_workload(
    objects: &Objects,
    choice: &WorkloadChoice,
    source: &str,
) -> Result<WorkloadGang, CliError> {
    let all = workloads(objects)?;
    let names = |ws: &[&WorkloadGang]| -> String {
        ws.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
    };
    let ns = choice.namespace.as_deref();
    let matching: Vec<&WorkloadGang> = match &choice.workload {
        Some(r) => all.iter().filter(|w| w.is(r, ns)).collect(),
        None => all
            .iter()
            .filter(|w| ns.is_none_or(|n| w.object.namespace.as_deref().unwrap_or("") == n))
            .collect(),
    };
    let every: Vec<&WorkloadGang> = all.iter().collect();
    if every.is_empty() {
        no_nodes(objects)?;
    }
    match (matching.len(), &choice.workload) {
        (1, _) => Ok(matching[0].clone()),
        (0, Some(r)) => Err(CliError::Input {
            source: "--workload".into(),
            object: None,
            field: None,
            reason: format!(
                "no workload {r}{} in {source}; found: {}",
                ns.map(|n| format!(" in namespace {n}")).unwrap_or_default(),
                if every.is_empty() {
                    "none".to_owned()
                } else {
                    names(&every)
                }
            ),
        }),
        (0, None) if every.is_empty() && !objects.unread().is_empty() => {
            let r = &objects.unread()[0];
            Err(CliError::Input {
                source: r.source.clone(),
                object: Some(format!("{r} ({})", r.position)),
                field: Some("kind".into()),
                reason: format!(
                    "Kind {} (apiVersion {}) in {} is not a workload gang reads; supported: {}",
                    r.kind,
                    r.api_version,
                    r.source,
                    gang_kube::WORKLOAD_KINDS.join(", ")
                ),
            })
        }
        (0, None) => Err(CliError::input(
            source,
            format!(
                "no workload{} (give one of: {}){}",
                ns.map(|n| format!(" in namespace {n}")).unwrap_or_default(),
                gang_kube::WORKLOAD_KINDS.join(", "),
                if every.is_empty() {
                    String::new()
                } else {
                    format!("; found: {}", names(&every))
                }
            ),
        )),
        (n, _) => Err(CliError::Input {
            source: source.to_owned(),
            object: None,
            field: None,
            reason: format!(
                "{n} workloads found ({}); choose one with --workload KIND/NAME (and -n NAMESPACE)",
                names(&matching)
            ),
        }),
    }
}

/// The cluster with the workload's own member pods left out of the usage (the question
/// is where the whole group would go).
///
/// # Errors
/// As [`Cluster::from_objects`].
pub fn cluster_for(
    objects: &Objects,
    topology: TopologySource,
    w: Option<&WorkloadGang>,
    extended_toleration: bool,
) -> Result<Cluster, CliError> {
    let mut opts = ClusterOptions::new()
        .topology(topology)
        .extended_resource_toleration(extended_toleration);
    if let Some(w) = w {
        opts = opts.ignore_pods(&w.member_pods);
    }
    cluster_with(objects, &opts)
}

/// [`Cluster::from_objects`] with a better message when the input has no Node.
pub(crate) fn cluster_with(objects: &Objects, opts: &ClusterOptions) -> Result<Cluster, CliError> {
    Cluster::from_objects(objects, opts).map_err(|e| {
        if e.kind() == gang_kube::ErrorKind::UnexpectedKind {
            if let Err(better) = no_nodes(objects) {
                return better;
            }
        }
        e.into()
    })
}

/// Without any Node, names the first object that looks like it was meant to be the
/// nodes (an object of a kind gang does not read), else the sources.
fn no_nodes(objects: &Objects) -> Result<(), CliError> {
    let refs = objects.refs();
    if refs.iter().any(|r| r.kind == "Node") {
        return Ok(());
    }
    match objects.unread().first() {
        Some(r) => Err(CliError::Input {
            source: r.source.clone(),
            object: Some(format!("{r} ({})", r.position)),
            field: Some("kind".into()),
            reason: format!(
                "expected Node objects (`kubectl get nodes,pods -A -o json`), found {} {}; the input has no Node",
                r.api_version, r.kind
            ),
        }),
        None => {
            let mut sources: Vec<&str> = refs.iter().map(|r| r.source.as_str()).collect();
            sources.dedup();
            Err(CliError::input(
                sources.join(", "),
                "no Node objects in the input (give `kubectl get nodes,pods -A -o json` too)",
            ))
        }
    }
}

pub(crate) fn summary(w: &WorkloadGang, gang: Option<&Gang>) -> WorkloadSummary {
    let tolerations = |name: &str, own: usize| -> usize {
        gang.and_then(|g| g.get_roles().iter().find(|r| r.get_name() == name))
            .map_or(own, |r| r.get_tolerations().len())
    };
    WorkloadSummary {
        object: w.name(),
        framework: w.framework,
        source: w.object.source.clone(),
        position: w.object.position.clone(),
        found: w.found,
        members: w.members,
        minimum: w.minimum,
        minimum_field: w.minimum_field.clone(),
        member_pods: w.member_pods.len(),
        roles: w
            .roles
            .iter()
            .map(|r| RoleSummary {
                name: r.name.clone(),
                members: r.members,
                min_count: r.min_count,
                constrained: r.constrained,
                requests: r.requests.clone(),
                node_selector: r.node_selector.clone(),
                tolerations: tolerations(&r.name, r.tolerations.len()),
            })
            .collect(),
        request: gang.map(|g| {
            let t = g.get_topology();
            RequestSummary {
                required: t.required.clone(),
                preferred: t.preferred.clone(),
                slices: t.slices.iter().map(|s| (s.level.clone(), s.size)).collect(),
            }
        }),
    }
}

pub(crate) fn warnings(c: &Cluster, w: &WorkloadGang, notes: &[String]) -> Vec<String> {
    let mut out: Vec<String> = notes.to_vec();
    out.extend(c.report().warnings.iter().cloned());
    out.extend(
        w.warnings
            .iter()
            .map(|x| format!("{}: {}", x.field, x.message)),
    );
    out
}

/// `gang place`: the workload against the cluster.
///
/// # Errors
/// Invalid input ([`CliError`]): objects gang-kube rejects, no workload to choose, a
/// workload that cannot become a gang (minimum above its members, unknown level).
pub fn place(
    objects: &Objects,
    choice: &WorkloadChoice,
    topology: TopologySource,
    source: &str,
    notes: &[String],
) -> Result<PlaceReport, CliError> {
    place_built(objects, choice, topology, source, notes).map(|(r, _)| r)
}

/// What [`place`] built to answer: the cluster and its inventory (the `gang` binary
/// leaks them, as it leaks the objects read: freeing 10k nodes costs milliseconds).
pub(crate) type Built = (Cluster, gang_core::Inventory);

/// [`place`], with what it built.
pub(crate) fn place_built(
    objects: &Objects,
    choice: &WorkloadChoice,
    topology: TopologySource,
    source: &str,
    notes: &[String],
) -> Result<(PlaceReport, Built), CliError> {
    let w = pick_workload(objects, choice, source)?;
    let cluster = cluster_for(
        objects,
        topology,
        Some(&w),
        choice.extended_resource_toleration,
    )?;
    let inventory = cluster.inventory()?;
    let gang = cluster.gang_for(&w)?;
    let outcome = cluster.place(&inventory, &w)?;
    let parts = parts_of(&cluster, &inventory, &w)?;
    let status = Status::of(&outcome);
    let report = PlaceReport {
        command: "place",
        status,
        exit_code: status.exit(),
        workload: summary(&w, Some(&gang)),
        topology: cluster.report().topology.clone(),
        cluster: ClusterSummary::of(&cluster),
        result: serde_json::to_value(&outcome).unwrap_or(serde_json::Value::Null),
        parts,
        warnings: warnings(&cluster, &w, notes),
        outcome,
    };
    Ok((report, (cluster, inventory)))
}

/// A level's short name, as gang-core's diagnoses word it (`rack`, `node`).
pub fn short_level(key: &str) -> &str {
    if key == HOSTNAME_LEVEL {
        return "node";
    }
    key.rsplit('/').next().unwrap_or(key)
}

/// The relaxations of a diagnosis, as gang-core computed and worded them; the CLI adds
/// the workload's minimum field to the elastic one.
fn relaxations(w: &WorkloadGang, d: Option<&Diagnosis>) -> Vec<Relaxation> {
    let Some(d) = d else {
        return Vec::new();
    };
    let sentence = |part: Part| {
        d.sentences()
            .into_iter()
            .find(|(p, _)| *p == part)
            .map(|(_, s)| s)
            .unwrap_or_default()
    };
    let needed: u64 = d.roles.iter().map(|r| u64::from(r.needed)).sum();
    let mut out = Vec::new();
    if let (Some(r), Some(_)) = (&d.relaxation, &d.level) {
        out.push(Relaxation {
            kind: if r.level.is_some() {
                "coarser_level"
            } else {
                "without_topology"
            },
            level: r.level.clone(),
            domain: r.domain.clone(),
            members: needed,
            message: sentence(Part::Relaxation),
            set: None,
        });
    }
    if let Some(f) = &d.fewer_members {
        out.push(Relaxation {
            kind: "fewer_members",
            level: f.level.clone(),
            domain: f.domain.clone(),
            members: f.members,
            message: sentence(Part::FewerMembers),
            set: Some(format!("{} {}", w.minimum_field, f.minimum)),
        });
    }
    out
}

fn objects_found(objects: &Objects, all: &[WorkloadGang]) -> ObjectsFound {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut sources: Vec<String> = Vec::new();
    for r in objects.refs() {
        *kinds.entry(r.kind).or_default() += 1;
        if sources.last() != Some(&r.source) && !sources.contains(&r.source) {
            sources.push(r.source);
        }
    }
    ObjectsFound {
        total: objects.len(),
        sources,
        kinds,
        workloads: all.iter().map(WorkloadGang::name).collect(),
    }
}

/// `gang explain`: the checklist, the best domain per level, the answer and the
/// smallest relaxation. A workload that cannot become a gang (its minimum above the
/// members found, no member pods) still gets its checklist, with `error` set and exit 2.
///
/// # Errors
/// Invalid input that leaves nothing to explain: unreadable objects, no workload.
pub fn explain(
    objects: &Objects,
    choice: &WorkloadChoice,
    topology: TopologySource,
    source: &str,
    notes: &[String],
) -> Result<ExplainReport, CliError> {
    let w = pick_workload(objects, choice, source)?;
    let all = workloads(objects)?;
    let cluster = cluster_for(
        objects,
        topology,
        Some(&w),
        choice.extended_resource_toleration,
    )?;
    let inventory = cluster.inventory()?;
    let mut checks = w.checks.clone();
    checks.extend(cluster.checks(&w));
    let exclusions: Vec<RoleExclusions> =
        w.roles.iter().map(|r| cluster.exclusions(&w, r)).collect();
    let gang = cluster.gang_for(&w);
    let explained = match &gang {
        Ok(_) => Some(cluster.explain(&inventory, &w)),
        Err(_) => None,
    };
    let mut report = ExplainReport {
        command: "explain",
        status: Status::Invalid,
        exit_code: Exit::Invalid,
        workload: summary(&w, gang.as_ref().ok()),
        objects: objects_found(objects, &all),
        topology: cluster.report().topology.clone(),
        cluster: ClusterSummary::of(&cluster),
        checks,
        exclusions,
        levels: Vec::new(),
        answer: Answer {
            status: Status::Invalid,
            level: None,
            domain: String::new(),
            assignments: Vec::new(),
            message: None,
            parts: Vec::new(),
        },
        relaxations: Vec::new(),
        not_checked: NOT_CHECKED,
        warnings: warnings(&cluster, &w, notes),
        preemption: None,
        error: None,
        failure: None,
        diagnosis: None,
        workload_gang: w.clone(),
    };
    let explained = match (gang, explained) {
        (Ok(_), Some(Ok(e))) => e,
        (Err(e), _) | (Ok(_), Some(Err(e))) => {
            let e = CliError::from(e);
            report.answer.message = Some(e.to_string());
            report.error = Some(e.document());
            report.failure = Some(e);
            return Ok(report);
        }
        (Ok(_), None) => unreachable!("explained whenever the gang was built"),
    };
    report.levels = explained
        .levels
        .into_iter()
        .map(|l| LevelRow {
            name: short_level(&l.level).to_owned(),
            report: l,
        })
        .collect();
    let outcome = explained.outcome;
    report.relaxations = relaxations(&w, outcome.diagnosis());
    report.diagnosis = outcome.diagnosis().cloned();
    report.status = Status::of(&outcome);
    report.exit_code = report.status.exit();
    // Capacity is there, but a check says the group cannot become ready as given (its
    // PodGroup is missing, say): never exit 0 after printing an error line.
    if report.exit_code == Exit::Placed
        && report
            .checks
            .iter()
            .any(|c| c.status == gang_kube::CheckStatus::Error)
    {
        report.exit_code = Exit::DoesNotFit;
    }
    let parts = parts_of(&cluster, &inventory, &w).unwrap_or_default();
    report.answer = match &outcome {
        Outcome::Placed(p) => Answer {
            status: Status::Placed,
            level: p.level().map(str::to_owned),
            domain: p.domain_path(),
            assignments: p.assignments().to_vec(),
            message: None,
            parts,
        },
        other => Answer {
            status: Status::of(other),
            level: other.diagnosis().and_then(|d| d.level.clone()),
            domain: String::new(),
            assignments: Vec::new(),
            message: other.diagnosis().map(ToString::to_string),
            parts,
        },
    };
    Ok(report)
}
