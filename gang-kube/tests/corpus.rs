//! Issue 24's corpus, in two parts, each manifest read or refused as its scheduler
//! would, the answers worked out by hand in the tables:
//!
//! - `fixtures/corpus/*.yaml`: manifests shaped like the upstream examples (Kueue's
//!   site samples, JobSet's, LeaderWorkerSet's, KubeRay's, AppWrapper's, Volcano's,
//!   KAI's, scheduler-plugins', the Kubernetes docs; each file's header names its
//!   shape and works out the answer), of 22 kinds: members, minimum, roles, the
//!   topology request (required, preferred, slices, Kueue parts, exclusive Jobs), the
//!   warnings due; or the object, field and what to do a refusal names; or the kind
//!   named as one gang does not read.
//! - Generated variants of those shapes (counts, minimums, bad values), below.

use gang_kube::{workloads, Level, Objects, WorkloadGang};

const RACK: &str = "topology.kubernetes.io/rack";
const ANN: &str = "kueue.x-k8s.io/podset-required-topology";

/// A pod template: `gpus` GPUs, and the Kueue required-topology annotation at `level`.
fn tpl(indent: usize, gpus: u32, level: Option<&str>) -> String {
    let pad = " ".repeat(indent);
    let meta = match level {
        Some(l) => format!("{pad}metadata: {{annotations: {{{ANN}: \"{l}\"}}}}\n"),
        None => String::new(),
    };
    format!("{meta}{pad}spec:\n{pad}  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n")
}

fn job(parallelism: i64, level: Option<&str>, min: Option<&str>) -> String {
    let ann = min.map_or(String::new(), |m| {
        format!("  annotations: {{kueue.x-k8s.io/job-min-parallelism: \"{m}\"}}\n")
    });
    format!("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n{ann}spec:\n  parallelism: {parallelism}\n  template:\n{}", tpl(4, 1, level))
}

fn jobset(replicas: i64, parallelism: i64, level: Option<&str>) -> String {
    format!("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: w\n    replicas: {replicas}\n    template:\n      spec:\n        parallelism: {parallelism}\n        template:\n{}", tpl(10, 1, level))
}

fn lws(replicas: i64, size: i64, level: Option<&str>) -> String {
    format!("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  replicas: {replicas}\n  leaderWorkerTemplate:\n    size: {size}\n    workerTemplate:\n{}", tpl(6, 1, level))
}

fn kubeflow(
    kind: &str,
    field: &str,
    types: &[(&str, i64)],
    min: Option<i64>,
    level: Option<&str>,
) -> String {
    let mut s =
        format!("apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata: {{name: k}}\nspec:\n");
    if let Some(m) = min {
        s.push_str(&format!(
            "  runPolicy: {{schedulingPolicy: {{minAvailable: {m}}}}}\n"
        ));
    }
    s.push_str(&format!("  {field}:\n"));
    for (t, n) in types {
        s.push_str(&format!(
            "    {t}:\n      replicas: {n}\n      template:\n{}",
            tpl(8, 1, level)
        ));
    }
    s
}

fn ray(kind: &str, replicas: i64, hosts: i64, level: Option<&str>) -> String {
    let (head, pad) = if kind == "RayJob" {
        ("  rayClusterSpec:\n", "  ")
    } else {
        ("", "")
    };
    format!("apiVersion: ray.io/v1\nkind: {kind}\nmetadata: {{name: r}}\nspec:\n{head}{pad}  headGroupSpec:\n{pad}    template:\n{}{pad}  workerGroupSpecs:\n{pad}  - groupName: g\n{pad}    replicas: {replicas}\n{pad}    numOfHosts: {hosts}\n{pad}    template:\n{}",
        tpl(6 + pad.len(), 0, level), tpl(6 + pad.len(), 1, level))
}

fn appwrapper(replicas: i64, path: &str, level: Option<&str>) -> String {
    format!("apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: aw}}\nspec:\n  components:\n  - podSets: [{{replicas: {replicas}, path: {path}}}]\n    template:\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {{name: j}}\n      spec:\n        parallelism: {replicas}\n        template:\n{}", tpl(10, 1, level))
}

fn volcano(tasks: &[(&str, i64)], min: i64, mode: &str) -> String {
    let mut s = format!("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec:\n  minAvailable: {min}\n  networkTopology: {{mode: {mode}, highestTierAllowed: 1}}\n  tasks:\n");
    for (t, n) in tasks {
        s.push_str(&format!(
            "  - name: {t}\n    replicas: {n}\n    template:\n{}",
            tpl(6, 1, None)
        ));
    }
    s
}

fn pods(n: usize, meta: &str) -> String {
    (0..n)
        .map(|i| format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, {meta}}}\nspec: {{containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]}}\n"))
        .collect()
}

fn native_group(min: i64, key: &str, n: usize) -> String {
    format!("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: g}}\nspec:\n  schedulingPolicy: {{gang: {{minCount: {min}}}}}\n  schedulingConstraints: {{topology: [{{key: {key}}}]}}\n{}",
        (0..n).map(|i| format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  schedulingGroup: {{podGroupName: g}}\n  containers: [{{name: c}}]\n")).collect::<String>())
}

fn coscheduling(min: i64, n: usize) -> String {
    format!("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: g}}\nspec: {{minMember: {min}}}\n{}", pods(n, "labels: {scheduling.x-k8s.io/pod-group: g}"))
}

fn kueue_pods(total: usize, n: usize) -> String {
    pods(n, &format!("labels: {{kueue.x-k8s.io/pod-group-name: g}}, annotations: {{kueue.x-k8s.io/pod-group-total-count: \"{total}\", {ANN}: {RACK}}}"))
}

enum Want {
    /// members, minimum, required level (a key, or `tier N`).
    Read(u32, u32, Option<&'static str>),
    /// The field the refusal names.
    Refused(&'static str),
}
use Want::*;

#[test]
fn generated_variants_are_read_or_refused_as_the_schedulers_would() {
    let r = Some(RACK);
    let cases: Vec<(&str, String, Want)> = vec![
        ("job", job(4, r, None), Read(4, 4, r)),
        ("job partial admission", job(4, r, Some("2")), Read(4, 2, r)),
        ("job no topology", job(3, None, None), Read(3, 3, None)),
        (
            "job bad level",
            job(2, Some("a b"), None),
            Refused("spec.template.metadata.annotations.kueue.x-k8s.io/podset-required-topology"),
        ),
        (
            "job min above",
            job(2, r, Some("3")),
            Refused("metadata.annotations.kueue.x-k8s.io/job-min-parallelism"),
        ),
        (
            "job negative",
            job(-1, r, None),
            Refused("spec.parallelism"),
        ),
        ("jobset", jobset(2, 4, r), Read(8, 8, r)),
        ("jobset one", jobset(1, 1, None), Read(1, 1, None)),
        (
            "jobset bad replicas",
            jobset(-2, 1, r),
            Refused("spec.replicatedJobs[0].replicas"),
        ),
        ("lws", lws(3, 4, r), Read(4, 4, r)),
        ("lws leader only", lws(1, 1, None), Read(1, 1, None)),
        (
            "lws size 0",
            lws(1, 0, r),
            Refused("spec.leaderWorkerTemplate.size"),
        ),
        (
            "pytorch",
            kubeflow(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                &[("Master", 1), ("Worker", 3)],
                None,
                r,
            ),
            Read(4, 4, r),
        ),
        // Kueue-managed (the rack annotation): admitted whole, minAvailable aside.
        (
            "pytorch min",
            kubeflow(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                &[("Master", 1), ("Worker", 3)],
                Some(2),
                r,
            ),
            Read(4, 4, r),
        ),
        (
            "pytorch min, no kueue",
            kubeflow(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                &[("Master", 1), ("Worker", 3)],
                Some(2),
                None,
            ),
            Read(4, 2, None),
        ),
        (
            "pytorch min above",
            kubeflow(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                &[("Worker", 2)],
                Some(3),
                r,
            ),
            Refused("spec.runPolicy.schedulingPolicy.minAvailable"),
        ),
        (
            "mpi",
            kubeflow(
                "MPIJob",
                "mpiReplicaSpecs",
                &[("Launcher", 1), ("Worker", 2)],
                None,
                r,
            ),
            Read(3, 3, r),
        ),
        (
            "tf",
            kubeflow(
                "TFJob",
                "tfReplicaSpecs",
                &[("Chief", 1), ("PS", 1), ("Worker", 2)],
                None,
                None,
            ),
            Read(4, 4, None),
        ),
        (
            "jax",
            kubeflow("JAXJob", "jaxReplicaSpecs", &[("Worker", 4)], None, r),
            Read(4, 4, r),
        ),
        (
            "jax bad replicas",
            kubeflow("JAXJob", "jaxReplicaSpecs", &[("Worker", -4)], None, r),
            Refused("spec.jaxReplicaSpecs.Worker.replicas"),
        ),
        (
            "xgboost",
            kubeflow(
                "XGBoostJob",
                "xgbReplicaSpecs",
                &[("Master", 1), ("Worker", 2)],
                None,
                r,
            ),
            Read(3, 3, r),
        ),
        (
            "xgboost min",
            kubeflow(
                "XGBoostJob",
                "xgbReplicaSpecs",
                &[("Master", 1), ("Worker", 2)],
                Some(1),
                None,
            ),
            Read(3, 1, None),
        ),
        (
            "paddle",
            kubeflow("PaddleJob", "paddleReplicaSpecs", &[("Worker", 2)], None, r),
            Read(2, 2, r),
        ),
        (
            "paddle min",
            kubeflow(
                "PaddleJob",
                "paddleReplicaSpecs",
                &[("Master", 1), ("Worker", 4)],
                Some(3),
                None,
            ),
            Read(5, 3, None),
        ),
        (
            "paddle min, kueue",
            kubeflow(
                "PaddleJob",
                "paddleReplicaSpecs",
                &[("Master", 1), ("Worker", 4)],
                Some(3),
                r,
            ),
            Read(5, 5, r),
        ),
        (
            "job min zero",
            job(4, r, Some("0")),
            Refused("metadata.annotations.kueue.x-k8s.io/job-min-parallelism"),
        ),
        ("raycluster", ray("RayCluster", 2, 2, r), Read(5, 5, r)),
        (
            "raycluster no workers",
            ray("RayCluster", 0, 1, None),
            Read(1, 1, None),
        ),
        (
            "raycluster bad hosts",
            ray("RayCluster", 1, -1, r),
            Refused("spec.workerGroupSpecs[0].numOfHosts"),
        ),
        ("rayjob", ray("RayJob", 3, 1, r), Read(4, 4, r)),
        (
            "rayjob bad replicas",
            ray("RayJob", -3, 1, r),
            Refused("spec.rayClusterSpec.workerGroupSpecs[0].replicas"),
        ),
        (
            "appwrapper",
            appwrapper(3, "template.spec.template", r),
            Read(3, 3, r),
        ),
        (
            "appwrapper bad path",
            appwrapper(2, "template.spec.nothing", r),
            Refused("spec.components[0].podSets[0].path"),
        ),
        (
            "appwrapper bad replicas",
            appwrapper(-1, "template.spec.template", r),
            Refused("spec.components[0].podSets[0].replicas"),
        ),
        (
            "volcano",
            volcano(&[("master", 1), ("worker", 3)], 4, "hard"),
            Read(4, 4, Some("tier 1")),
        ),
        (
            "volcano min",
            volcano(&[("worker", 4)], 2, "hard"),
            Read(4, 2, Some("tier 1")),
        ),
        (
            "volcano bad mode",
            volcano(&[("worker", 2)], 2, "strict"),
            Refused("spec.networkTopology.mode"),
        ),
        (
            "volcano min above",
            volcano(&[("worker", 2)], 3, "soft"),
            Refused("spec.minAvailable"),
        ),
        ("native podgroup", native_group(3, RACK, 4), Read(4, 3, r)),
        (
            "native podgroup bad key",
            native_group(2, "\"a b\"", 2),
            Refused("spec.schedulingConstraints.topology[0].key"),
        ),
        ("coscheduling", coscheduling(2, 3), Read(3, 2, None)),
        (
            "coscheduling min above",
            coscheduling(5, 3),
            Read(3, 5, None),
        ),
        ("kueue pod group", kueue_pods(3, 3), Read(3, 3, r)),
        (
            "kueue pod group bad count",
            kueue_pods(0, 2),
            Refused("metadata.annotations.kueue.x-k8s.io/pod-group-total-count"),
        ),
        (
            "generateName job",
            job(2, r, None).replace("  name: j\n", "  generateName: j-\n"),
            Read(2, 2, r),
        ),
    ];
    assert!(cases.len() >= 40, "{}", cases.len());
    for (name, text, want) in cases {
        let read = Objects::parse(name, &text).and_then(|mut o| {
            o.apply_namespace("default");
            workloads(&o)
        });
        match (want, read) {
            (Read(members, minimum, level), Ok(ws)) => {
                assert_eq!(ws.len(), 1, "{name}: {ws:?}");
                let w = &ws[0];
                assert_eq!((w.members, w.minimum), (members, minimum), "{name}");
                let got = w.topology.required.as_ref().map(|l| match &l.level {
                    Level::Key(k) => k.clone(),
                    Level::Tier(t) => format!("tier {t}"),
                });
                assert_eq!(got.as_deref(), level, "{name}");
            }
            (Refused(field), Err(e)) => {
                assert_eq!(e.field(), Some(field), "{name}: {e}");
                assert!(e.object().is_some(), "{name}: {e}");
                assert_eq!(e.source_name(), name);
            }
            (Read(..), Err(e)) => panic!("{name}: refused: {e}\n{text}"),
            (Refused(f), Ok(ws)) => panic!("{name}: read, {f} not refused: {ws:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The upstream-shaped manifests of fixtures/corpus/.

const BLOCK: &str = "topology.kubernetes.io/block";
const POOL: &str = "cloud.google.com/gke-nodepool";
const KUEUE: &str = "kueue.x-k8s.io/queue-name";

/// What a manifest reads as, worked out by hand from its upstream shape.
#[derive(Default)]
struct Shape {
    members: u32,
    minimum: u32,
    /// (name, members, per-role minimum), in the scheduler's order.
    roles: &'static [(&'static str, u32, Option<u32>)],
    /// Levels as keys, or `tier N`.
    required: Option<&'static str>,
    preferred: Option<&'static str>,
    slices: &'static [(&'static str, u32)],
    /// Kueue parts, in PodSet order (empty: one gang).
    parts: &'static [&'static str],
    /// JobSet exclusive Jobs: level and pods per Job.
    exclusive: Option<(&'static str, u32)>,
    kueue: bool,
    /// Fields a warning must name.
    warned: &'static [&'static str],
}

enum Expect {
    Reads(Shape),
    /// The object, the field, and what the message says to do.
    Refuses(&'static str, &'static str, &'static str),
    /// Not a workload gang reads: kind and apiVersion, named.
    Unread(&'static str, &'static str),
}

fn level(l: &Level) -> String {
    match l {
        Level::Key(k) => k.clone(),
        Level::Tier(t) => format!("tier {t}"),
    }
}

fn check_reads(file: &str, w: &WorkloadGang, want: &Shape) {
    assert_eq!(
        (w.members, w.minimum),
        (want.members, want.minimum),
        "{file}: members, minimum"
    );
    let roles: Vec<(&str, u32, Option<u32>)> = w
        .roles
        .iter()
        .map(|r| (r.name.as_str(), r.members, r.min_count))
        .collect();
    assert_eq!(roles, want.roles, "{file}: roles");
    let t = &w.topology;
    assert_eq!(
        t.required.as_ref().map(|l| level(&l.level)).as_deref(),
        want.required,
        "{file}: required"
    );
    assert_eq!(
        t.preferred.as_ref().map(|l| level(&l.level)).as_deref(),
        want.preferred,
        "{file}: preferred"
    );
    let slices: Vec<(String, u32)> = t.slices.iter().map(|s| (level(&s.level), s.size)).collect();
    let want_slices: Vec<(String, u32)> = want
        .slices
        .iter()
        .map(|(l, n)| ((*l).to_owned(), *n))
        .collect();
    assert_eq!(slices, want_slices, "{file}: slices");
    let parts: Vec<&str> = t.parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(parts, want.parts, "{file}: parts");
    assert_eq!(
        t.exclusive.as_ref().map(|x| (level(&x.level), x.size)),
        want.exclusive.map(|(l, n)| (l.to_owned(), n)),
        "{file}: exclusive"
    );
    assert_eq!(w.kueue, want.kueue, "{file}: managed by Kueue");
    for f in want.warned {
        assert!(
            w.warnings.iter().any(|x| x.field.ends_with(f)),
            "{file}: no warning on {f}: {:?}",
            w.warnings
        );
    }
}

#[test]
fn upstream_shaped_manifests_are_read_or_refused_as_their_schedulers_would() {
    use Expect::*;
    let r = Some(RACK);
    let b = Some(BLOCK);
    #[rustfmt::skip]
    let table: Vec<(&str, Expect)> = vec![
        // batch/v1 Job
        ("job-tas-required.yaml", Reads(Shape { members: 40, minimum: 40, roles: &[("main", 40, None)], required: b, kueue: true, warned: &["metadata.generateName"], ..Shape::default() })),
        ("job-tas-preferred.yaml", Reads(Shape { members: 40, minimum: 40, roles: &[("main", 40, None)], preferred: b, kueue: true, warned: &["metadata.generateName"], ..Shape::default() })),
        ("job-tas-unconstrained.yaml", Reads(Shape { members: 6, minimum: 6, roles: &[("main", 6, None)], kueue: true, ..Shape::default() })),
        ("job-partial-admission.yaml", Reads(Shape { members: 20, minimum: 5, roles: &[("main", 20, Some(5))], kueue: true, ..Shape::default() })),
        ("job-partial-admission-all.yaml", Refuses("Job/default/partial-all", "metadata.annotations.kueue.x-k8s.io/job-min-parallelism", "remove it to admit all")),
        ("job-kueue-sample.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("main", 3, None)], kueue: true, ..Shape::default() })),
        ("job-completions-below-parallelism.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("main", 2, None)], kueue: true, ..Shape::default() })),
        ("job-kai.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("main", 2, None)], warned: &["spec.template.spec.schedulerName"], ..Shape::default() })),
        ("job-bad-parallelism.yaml", Refuses("Job/default/negative", "spec.parallelism", "must be a count (0 or more)")),
        // JobSet
        ("jobset-tas-required.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("workers", 4, None)], required: r, kueue: true, ..Shape::default() })),
        ("jobset-tas-sliced.yaml", Reads(Shape { members: 8, minimum: 8, roles: &[("workers", 8, None)], slices: &[(RACK, 4)], kueue: true, ..Shape::default() })),
        ("jobset-tas-combined.yaml", Reads(Shape { members: 8, minimum: 8, roles: &[("workers", 8, None)], required: b, slices: &[(RACK, 4)], kueue: true, ..Shape::default() })),
        ("jobset-multilayer.yaml", Reads(Shape { members: 16, minimum: 16, roles: &[("workers", 16, None)], required: b, slices: &[(RACK, 8), ("kubernetes.io/hostname", 4)], kueue: true, ..Shape::default() })),
        ("jobset-driver-workers.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("workers", 1, None), ("driver", 1, None)], kueue: true, ..Shape::default() })),
        ("jobset-parallel-jobs.yaml", Reads(Shape { members: 13, minimum: 13, roles: &[("workers", 12, None), ("driver", 1, None)], ..Shape::default() })),
        ("jobset-exclusive-placement.yaml", Reads(Shape { members: 9, minimum: 9, roles: &[("workers", 9, None)], exclusive: Some((POOL, 3)), ..Shape::default() })),
        ("jobset-tpu-multislice.yaml", Reads(Shape { members: 8, minimum: 8, roles: &[("slice", 8, None)], exclusive: Some((POOL, 4)), kueue: true, ..Shape::default() })),
        ("jobset-workload-aware.yaml", Reads(Shape { members: 6, minimum: 6, roles: &[("rj", 6, None)], ..Shape::default() })),
        ("jobset-leader-workers-group.yaml", Reads(Shape { members: 7, minimum: 7, roles: &[("leader", 1, None), ("workers", 6, None)], required: r, kueue: true, ..Shape::default() })),
        ("jobset-group-without-leader.yaml", Refuses("JobSet/default/two-leaders", "spec.replicatedJobs[0].template.spec.template.metadata.annotations.kueue.x-k8s.io/podset-group-name", "give it to a PodSet of 1")),
        ("jobset-podsets-each-own.yaml", Reads(Shape { members: 9, minimum: 9, roles: &[("leader", 1, None), ("workers", 8, None)], required: b, parts: &["leader", "workers"], kueue: true, ..Shape::default() })),
        // LeaderWorkerSet
        ("lws-sample.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("leader", 1, None), ("worker", 3, None)], warned: &["spec.replicas"], ..Shape::default() })),
        ("lws-kueue-tas.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("leader", 1, None), ("worker", 2, None)], required: r, kueue: true, warned: &["spec.replicas"], ..Shape::default() })),
        ("lws-exclusive-placement.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("leader", 1, None), ("worker", 3, None)], required: Some(POOL), warned: &["leaderworkerset.sigs.k8s.io/exclusive-topology"], ..Shape::default() })),
        ("lws-volcano.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("leader", 1, None), ("worker", 3, None)], warned: &["spec.replicas"], ..Shape::default() })),
        ("lws-size-zero.yaml", Refuses("LeaderWorkerSet/default/empty-groups", "spec.leaderWorkerTemplate.size", "at least its leader (1 or more)")),
        // Kubeflow
        ("pytorchjob-kueue.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("master", 1, None), ("worker", 1, None)], kueue: true, ..Shape::default() })),
        ("pytorchjob-kai.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("master", 1, None), ("worker", 2, None)], ..Shape::default() })),
        ("pytorchjob-volcano-min.yaml", Reads(Shape { members: 4, minimum: 2, roles: &[("master", 1, None), ("worker", 3, Some(1))], warned: &["spec.runPolicy.schedulingPolicy.minAvailable"], ..Shape::default() })),
        ("pytorchjob-kueue-min.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("master", 1, None), ("worker", 3, None)], required: r, kueue: true, warned: &["spec.runPolicy.schedulingPolicy.minAvailable"], ..Shape::default() })),
        ("mpijob-v2beta1.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("launcher", 1, None), ("worker", 2, None)], kueue: true, ..Shape::default() })),
        ("tfjob-kueue.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("ps", 1, None), ("worker", 2, None)], kueue: true, ..Shape::default() })),
        ("tfjob-bad-replicas.yaml", Refuses("TFJob/default/tensorflow-negative", "spec.tfReplicaSpecs.Worker.replicas", "must be a count (0 or more)")),
        ("jaxjob-kueue.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("worker", 2, None)], kueue: true, ..Shape::default() })),
        ("xgboostjob-kueue.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("master", 1, None), ("worker", 2, None)], kueue: true, ..Shape::default() })),
        ("paddlejob-kueue.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("worker", 2, None)], kueue: true, ..Shape::default() })),
        // Ray
        ("raycluster-kueue.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("head", 1, None), ("small-group", 1, None)], kueue: true, ..Shape::default() })),
        ("rayjob-kueue.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("head", 1, None), ("small-group", 1, None)], kueue: true, warned: &["spec.submitterPodTemplate"], ..Shape::default() })),
        ("rayjob-existing-cluster.yaml", Refuses("RayJob/default/rayjob-use-existing-raycluster", "spec.rayClusterSpec", "give that RayCluster instead")),
        ("raycluster-tpu-multihost.yaml", Reads(Shape { members: 9, minimum: 9, roles: &[("head", 1, None), ("tpu-group", 8, None)], kueue: true, ..Shape::default() })),
        // AppWrapper
        ("appwrapper-job.yaml", Reads(Shape { members: 1, minimum: 1, roles: &[("job0", 1, None)], kueue: true, ..Shape::default() })),
        ("appwrapper-pytorch-no-podsets.yaml", Refuses("AppWrapper/default/sample-pytorch-job", "spec.components[0].podSets", "list the pod sets of this component")),
        ("appwrapper-pytorch-podsets.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("pytorchjob0", 1, None), ("pytorchjob0-1", 2, None)], kueue: true, ..Shape::default() })),
        ("appwrapper-deployment.yaml", Refuses("AppWrapper/default/sample-deployment", "spec.components[0].podSets", "list the pod sets of this component")),
        // Volcano Job
        ("volcano-job.yaml", Reads(Shape { members: 6, minimum: 3, roles: &[("default-nginx", 6, Some(3))], ..Shape::default() })),
        ("volcano-mpi.yaml", Reads(Shape { members: 3, minimum: 3, roles: &[("mpimaster", 1, None), ("mpiworker", 2, None)], ..Shape::default() })),
        ("volcano-tf-no-minavailable.yaml", Reads(Shape { members: 3, minimum: 2, roles: &[("ps", 1, None), ("worker", 2, Some(1))], ..Shape::default() })),
        ("volcano-minavailable-deny.yaml", Refuses("Job/default/test-job-webhook-disallow", "spec.minAvailable", "more than the 4 members (pods) the workload defines")),
        ("volcano-network-topology.yaml", Reads(Shape { members: 4, minimum: 4, roles: &[("t0", 4, None)], required: Some("tier 2"), warned: &["spec.networkTopology.highestTierAllowed"], ..Shape::default() })),
        ("volcano-soft-topology.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("t0", 2, None)], preferred: Some("tier 1"), ..Shape::default() })),
        ("volcano-partitions.yaml", Reads(Shape { members: 8, minimum: 8, roles: &[("worker", 8, None)], required: Some("tier 2"), slices: &[("tier 1", 2)], ..Shape::default() })),
        ("volcano-partitions-mismatch.yaml", Refuses("Job/default/partitioned-badly", "spec.tasks[0].partitionPolicy.totalPartitions", "must equal the task's 8 replicas")),
        // PodGroups and their pods, Kueue plain pods
        ("coscheduling-podgroup.yaml", Reads(Shape { members: 4, minimum: 3, roles: &[("nginx", 4, Some(3))], ..Shape::default() })),
        ("volcano-podgroup.yaml", Reads(Shape { members: 4, minimum: 3, roles: &[("ps", 1, None), ("worker", 3, Some(2))], ..Shape::default() })),
        ("kai-podgroup.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("train", 2, None)], required: r, ..Shape::default() })),
        ("native-podgroup.yaml", Reads(Shape { members: 4, minimum: 3, roles: &[("training-workers", 4, Some(3))], required: r, ..Shape::default() })),
        ("native-podgroup-bad-key.yaml", Refuses("PodGroup/default/bad-key", "spec.schedulingConstraints.topology[0].key", "not a topology level (a node label key)")),
        ("kueue-pod-group.yaml", Reads(Shape { members: 2, minimum: 2, roles: &[("sample", 2, None)], kueue: true, ..Shape::default() })),
        // What admission adds
        ("limitrange-pi.yaml", Reads(Shape { members: 1, minimum: 1, roles: &[("main", 1, None)], warned: &["spec.template.spec.containers"], ..Shape::default() })),
        // Kinds gang does not read
        ("deployment.yaml", Unread("Deployment", "apps/v1")),
        ("statefulset.yaml", Unread("StatefulSet", "apps/v1")),
        ("cronjob.yaml", Unread("CronJob", "batch/v1")),
        ("rayservice.yaml", Unread("RayService", "ray.io/v1")),
    ];
    let dir = format!("{}/tests/fixtures/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = table.iter().map(|(f, _)| (*f).to_owned()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "every corpus file has its answer, once");
    assert!(table.len() >= 40, "{}", table.len());
    let kinds: std::collections::BTreeSet<String> = table
        .iter()
        .map(|(f, _)| {
            let text = std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
            let o = Objects::parse(f, &text).unwrap();
            let refs = o.refs();
            let main = refs.iter().rfind(|r| r.kind != "Pod").unwrap_or(&refs[0]);
            format!(
                "{}/{}",
                main.api_version.split('/').next().unwrap(),
                main.kind
            )
        })
        .collect();
    assert!(kinds.len() >= 10, "{kinds:?}");
    let mut unread_seen = 0;
    for (file, want) in &table {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let read = Objects::parse(file, &text).and_then(|mut o| {
            o.apply_namespace("default");
            workloads(&o).map(|w| (w, o))
        });
        match (want, read) {
            (Reads(want), Ok((ws, _))) => {
                assert_eq!(
                    ws.len(),
                    1,
                    "{file}: {:?}",
                    ws.iter().map(|w| w.name()).collect::<Vec<_>>()
                );
                check_reads(file, &ws[0], want);
                assert_eq!(ws[0].object.source, *file);
                if want.kueue {
                    assert!(
                        text.contains(KUEUE) || text.contains("kueue.x-k8s.io/podset-"),
                        "{file}"
                    );
                }
            }
            (Refuses(object, field, to_do), Err(e)) => {
                assert_eq!(e.object(), Some(*object), "{file}: {e}");
                assert_eq!(e.field(), Some(*field), "{file}: {e}");
                assert!(
                    e.reason().contains(to_do),
                    "{file}: what to do ({to_do}): {e}"
                );
                assert_eq!(e.source_name(), *file);
                // Kubernetes' words, never gang-core's paths (`gang.roles`, `min_count`).
                let text = e.to_string();
                assert!(
                    !text.contains("gang.")
                        && !text.contains("gang-core")
                        && !text.contains("min_count"),
                    "{file}: {e}"
                );
            }
            (Unread(kind, api_version), Ok((ws, o))) => {
                assert!(ws.is_empty(), "{file}: {ws:?}");
                let u = o.unread();
                assert_eq!(
                    u.iter()
                        .map(|r| (r.kind.as_str(), r.api_version.as_str()))
                        .collect::<Vec<_>>(),
                    [(*kind, *api_version)],
                    "{file}"
                );
                unread_seen += 1;
            }
            (_, Err(e)) => panic!("{file}: refused: {e}"),
            (_, Ok((ws, _))) => panic!(
                "{file}: read as {:?}",
                ws.iter().map(|w| w.name()).collect::<Vec<_>>()
            ),
        }
    }
    assert_eq!(unread_seen, 4);
}
