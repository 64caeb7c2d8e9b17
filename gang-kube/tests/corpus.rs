//! Issue 24's corpus: manifests shaped like the upstream examples of 16 kinds (the
//! shapes of each project's samples and API types, as recorded in
//! `fixtures/users/*.yaml`; written here as small generators), each read or refused. For
//! each: the members, the minimum and the required level Kueue / the scheduler would
//! use, worked out by hand in the table; or the field a refusal must name.

use gang_kube::{workloads, Level, Objects};

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
fn the_corpus_is_read_or_refused_as_the_schedulers_would() {
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
        (
            "pytorch min",
            kubeflow(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                &[("Master", 1), ("Worker", 3)],
                Some(2),
                r,
            ),
            Read(4, 2, r),
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
                r,
            ),
            Read(5, 3, r),
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
