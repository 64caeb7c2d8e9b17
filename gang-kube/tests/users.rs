//! Issue 24: the objects users actually have (generateName, no namespace, more kinds,
//! what admission adds, constraints that must not be dropped). Fixtures are in
//! `fixtures/users/`, each written for these tests from the upstream API types and
//! docs (the header of each file says which); the expected answers are worked out in
//! the comments here.

use gang_core::Outcome;
use gang_kube::{
    workloads, CheckStatus, Cluster, ClusterOptions, ErrorKind, Framework, Level, Objects,
    WorkloadGang,
};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/users/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The nodes file and the named fixtures, namespaced as `kubectl -n default` would.
fn objects(files: &[&str]) -> Objects {
    let mut o = Objects::parse("nodes-racks.yaml", &fixture("nodes-racks.yaml")).unwrap();
    for f in files {
        o.add(f, &fixture(f)).unwrap();
    }
    o.apply_namespace("default");
    o
}

fn only_workload(o: &Objects) -> WorkloadGang {
    let mut w = workloads(o).unwrap();
    assert_eq!(
        w.len(),
        1,
        "{:?}",
        w.iter().map(|w| w.name()).collect::<Vec<_>>()
    );
    w.remove(0)
}

/// Places the only workload; the node counts, or the outcome's kind.
fn place(o: &Objects) -> Result<Vec<(String, u32)>, String> {
    let w = only_workload(o);
    let c = Cluster::from_objects(o, &ClusterOptions::new()).unwrap();
    let inv = c.inventory().unwrap();
    match c.place(&inv, &w).map_err(|e| e.to_string())? {
        Outcome::Placed(p) => Ok(p
            .node_counts()
            .into_iter()
            .map(|(n, k)| (n.to_owned(), k))
            .collect()),
        other => Err(format!("{other:?}")),
    }
}

// ---------------------------------------------------------------------------------------
// 1. generateName

#[test]
fn an_object_with_only_generate_name_is_named_from_it_and_says_so() {
    let o = objects(&["generate-name-job.yaml"]);
    let w = only_workload(&o);
    assert_eq!(w.name(), "Job/default/tas-sample-job-");
    assert!(w.is("job/tas-sample-job-", Some("default")));
    let warn = w
        .warnings
        .iter()
        .find(|x| x.field == "metadata.generateName")
        .expect("a warning on metadata.generateName");
    assert!(warn.message.contains("five random characters"), "{warn:?}");
    // 3 pods of 3 CPUs, one rack: 2 nodes of 8 CPUs hold 2 each, so 2 + 1 in rack r1.
    let counts = place(&o).unwrap();
    assert_eq!(counts.iter().map(|c| c.1).sum::<u32>(), 3);
    assert!(
        counts.iter().all(|(n, _)| n.starts_with("r1-")),
        "{counts:?}"
    );
}

#[test]
fn an_object_with_neither_name_is_refused_at_metadata_name_not_a_gang_core_path() {
    let text =
        fixture("generate-name-job.yaml").replace("generateName: tas-sample-job-", "labels2: {}");
    let mut o = Objects::parse("nodes-racks.yaml", &fixture("nodes-racks.yaml")).unwrap();
    o.add("job.yaml", &text).unwrap();
    let w = only_workload(&o);
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let err = c.place(&c.inventory().unwrap(), &w).unwrap_err();
    assert_eq!(err.field(), Some("metadata.name"), "{err}");
    assert!(
        err.to_string()
            .contains("neither metadata.name nor metadata.generateName"),
        "{err}"
    );
    assert!(!err.to_string().contains("gang.name"), "{err}");
    // Refused when its gang is built, so a face building every workload's gang reports
    // this one's error rather than failing the whole read.
    let err = c.gang_for(&w).unwrap_err();
    assert_eq!(err.field(), Some("metadata.name"), "{err}");
}

#[test]
fn a_gang_core_role_error_is_named_at_the_role_template() {
    // A selector value gang-core refuses (whitespace) is reported on the template.
    let text = fixture("generate-name-job.yaml").replace(
        "      containers:",
        "      nodeSelector: {\"disk\": \"a b\"}\n      containers:",
    );
    let mut o = Objects::parse("nodes-racks.yaml", &fixture("nodes-racks.yaml")).unwrap();
    o.add("job.yaml", &text).unwrap();
    let w = only_workload(&o);
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let err = c.place(&c.inventory().unwrap(), &w).unwrap_err();
    assert_eq!(err.field(), Some("spec.template.spec"), "{err}");
    assert!(!err.to_string().contains("gang.roles"), "{err}");
}

// ---------------------------------------------------------------------------------------
// 2. namespaces applied like kubectl

#[test]
fn objects_without_a_namespace_join_the_one_applied_so_a_group_meets_its_pods() {
    let text = fixture("podgroup-no-namespace.yaml");
    let raw = Objects::parse("pg.yaml", &text).unwrap();
    // As written: the group and three pods in no namespace, one pod in default.
    assert_eq!(workloads(&raw).unwrap().len(), 2);
    let o = objects(&["podgroup-no-namespace.yaml"]);
    let w = only_workload(&o);
    assert_eq!(w.name(), "PodGroup/default/nginx");
    // minMember is kept: 4 pods, at least 3.
    assert_eq!((w.members, w.minimum), (4, 3));
    assert_eq!(w.member_pods.len(), 4);
    // A namespace given wins over none, never over one written.
    let mut o = Objects::parse("pg.yaml", &text).unwrap();
    o.apply_namespace("ml");
    let names: Vec<String> = workloads(&o).unwrap().iter().map(|w| w.name()).collect();
    assert_eq!(names, ["PodGroup/ml/nginx", "PodGroup/default/nginx"]);
    // Cluster-scoped objects stay without one.
    let n = objects(&[]);
    assert!(n.refs().iter().all(|r| r.namespace.is_none()));
}

// ---------------------------------------------------------------------------------------
// 3. More kinds Kueue TAS supports

fn by_name<'a>(ws: &'a [WorkloadGang], name: &str) -> &'a WorkloadGang {
    ws.iter()
        .find(|w| w.object.name == name)
        .unwrap_or_else(|| {
            panic!(
                "{name} not among {:?}",
                ws.iter().map(|w| w.name()).collect::<Vec<_>>()
            )
        })
}

fn roles(w: &WorkloadGang) -> Vec<(String, u32)> {
    w.roles
        .iter()
        .map(|r| (r.name.clone(), r.members))
        .collect()
}

fn required(w: &WorkloadGang) -> Option<String> {
    w.topology.required.as_ref().map(|l| match &l.level {
        Level::Key(k) => k.clone(),
        Level::Tier(t) => format!("tier {t}"),
    })
}

#[test]
fn a_leader_worker_set_is_one_group_of_size_pods_leader_first() {
    let o = objects(&["lws.yaml"]);
    let w = only_workload(&o);
    assert_eq!(w.framework, Framework::LeaderWorkerSet);
    // size 4: the leader and 3 workers; replicas 2 groups are independent gangs.
    assert_eq!(
        roles(&w),
        [("leader".to_owned(), 1), ("worker".to_owned(), 3)]
    );
    assert_eq!((w.members, w.minimum), (4, 4));
    assert_eq!(required(&w).as_deref(), Some("topology.kubernetes.io/rack"));
    assert!(w.roles.iter().all(|r| r.constrained));
    assert!(w
        .warnings
        .iter()
        .any(|x| x.field == "spec.replicas" && x.message.contains("2 groups of 4")));
    // Shared podset-group-name: no "stricter than Kueue" warning.
    assert!(
        !w.warnings.iter().any(|x| x.message.contains("stricter")),
        "{:?}",
        w.warnings
    );
    // 3 workers × 2 GPUs = 6 of the rack's 8, the leader's 2 CPUs beside them.
    let counts = place(&o).unwrap();
    assert_eq!(counts.iter().map(|c| c.1).sum::<u32>(), 4);
    let rack: std::collections::HashSet<&str> = counts.iter().map(|(n, _)| &n[..2]).collect();
    assert_eq!(rack.len(), 1, "{counts:?}");
}

#[test]
fn jax_xgboost_and_paddle_jobs_are_read_by_replica_type() {
    let o = objects(&["kubeflow-more.yaml"]);
    let ws = workloads(&o).unwrap();
    let jax = by_name(&ws, "jax-simple");
    assert_eq!(
        (jax.framework, roles(jax)),
        (Framework::JaxJob, vec![("worker".to_owned(), 2)])
    );
    assert!(jax.kueue);
    let xgb = by_name(&ws, "xgboost-dist-iris");
    assert_eq!(xgb.framework, Framework::XgBoostJob);
    assert_eq!(
        roles(xgb),
        [("master".to_owned(), 1), ("worker".to_owned(), 2)]
    );
    let paddle = by_name(&ws, "paddle-simple-gpu");
    assert_eq!(paddle.framework, Framework::PaddleJob);
    assert_eq!((paddle.members, paddle.minimum), (4, 3));
    assert_eq!(
        paddle.minimum_field,
        "spec.runPolicy.schedulingPolicy.minAvailable"
    );
}

#[test]
fn ray_clusters_count_the_head_and_replicas_times_hosts() {
    let o = objects(&["ray.yaml"]);
    let ws = workloads(&o).unwrap();
    let rc = by_name(&ws, "raycluster-kuberay");
    assert_eq!(rc.framework, Framework::RayCluster);
    // 1 head + 2 replicas × 2 hosts.
    assert_eq!(
        roles(rc),
        [("head".to_owned(), 1), ("workergroup".to_owned(), 4)]
    );
    let rj = by_name(&ws, "rayjob-sample");
    assert_eq!(rj.framework, Framework::RayJob);
    assert_eq!(rj.members, 4);
    assert!(rj
        .warnings
        .iter()
        .any(|x| x.field == "spec.submitterPodTemplate"));
    // A RayJob on an existing cluster names what to give instead.
    let text = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: on-existing}\nspec:\n  clusterSelector: {ray.io/cluster: c}\n";
    let err = workloads(&Objects::parse("rj.yaml", text).unwrap()).unwrap_err();
    assert_eq!(
        (err.kind(), err.field()),
        (ErrorKind::InvalidValue, Some("spec.rayClusterSpec"))
    );
    assert_eq!(err.object(), Some("RayJob/on-existing"));
}

#[test]
fn an_app_wrapper_is_the_pod_sets_of_its_components() {
    let o = objects(&["appwrapper.yaml"]);
    let w = only_workload(&o);
    assert_eq!(w.framework, Framework::AppWrapper);
    assert_eq!(
        roles(&w),
        [
            ("job0".to_owned(), 2),
            ("pytorchjob1".to_owned(), 1),
            ("pytorchjob1-1".to_owned(), 2)
        ]
    );
    let gpu = &w.roles[2].requests["nvidia.com/gpu"];
    assert_eq!(gpu.millis(), 1000);
    // A path naming nothing is refused at the pod set.
    let text = fixture("appwrapper.yaml").replace("Worker.template}", "Wrkr.template}");
    let err = workloads(&Objects::parse("aw.yaml", &text).unwrap()).unwrap_err();
    assert_eq!(
        err.field(),
        Some("spec.components[1].podSets[1].path"),
        "{err}"
    );
    assert_eq!(
        err.value(),
        Some("template.spec.pytorchReplicaSpecs.Wrkr.template")
    );
}

#[test]
fn kueue_plain_pods_with_a_group_name_are_one_gang() {
    let o = objects(&["kueue-pod-group.yaml"]);
    let w = only_workload(&o);
    assert_eq!(w.framework, Framework::KueuePodGroup);
    assert_eq!(w.name(), "PodGroup/default/sample-group");
    assert_eq!((w.members, w.minimum), (3, 3));
    assert_eq!(required(&w).as_deref(), Some("topology.kubernetes.io/rack"));
    // 3 pods of 3 CPUs: 2 fit on a node of 8, so 2 + 1 in one rack.
    let counts = place(&o).unwrap();
    let rack: std::collections::HashSet<&str> = counts.iter().map(|(n, _)| &n[..2]).collect();
    assert_eq!(
        (counts.iter().map(|c| c.1).sum::<u32>(), rack.len()),
        (3, 1)
    );
    // The group says 4 pods, 3 are there: the check fails.
    let text = fixture("kueue-pod-group.yaml").replace("total-count: \"3\"", "total-count: \"4\"");
    let w = &workloads(&Objects::parse("g.yaml", &text).unwrap()).unwrap()[0];
    let c = w.checks.iter().find(|c| c.id == "members_found").unwrap();
    assert_eq!(c.status, CheckStatus::Error, "{c:?}");
    // Pods disagreeing on the count: refused, naming the pod.
    let text =
        fixture("kueue-pod-group.yaml").replacen("total-count: \"3\"", "total-count: \"2\"", 1);
    let err = workloads(&Objects::parse("g.yaml", &text).unwrap()).unwrap_err();
    assert_eq!(err.object(), Some("Pod/sample-worker-1"), "{err}");
    assert_eq!(
        err.field(),
        Some("metadata.annotations.kueue.x-k8s.io/pod-group-total-count")
    );
}

#[test]
fn objects_of_kinds_gang_does_not_read_are_listed_as_unread() {
    let o = objects(&["deployment.yaml"]);
    assert!(workloads(&o).unwrap().is_empty());
    let unread = o.unread();
    assert_eq!(unread.len(), 1);
    assert_eq!(
        (unread[0].kind.as_str(), unread[0].api_version.as_str()),
        ("Deployment", "apps/v1")
    );
}

// ---------------------------------------------------------------------------------------
// 4. What admission adds

fn request(w: &WorkloadGang, role: usize, resource: &str) -> Option<u64> {
    w.roles[role].requests.get(resource).map(|q| q.millis())
}

#[test]
fn a_limit_range_gives_containers_without_requests_its_defaults() {
    let o = objects(&["limitrange-pi.yaml"]);
    let w = only_workload(&o);
    // defaultRequest cpu 0.5: the pod counts 500m, not just `pods 1`.
    assert_eq!(request(&w, 0, "cpu"), Some(500));
    assert!(
        w.warnings
            .iter()
            .any(|x| x.message.contains("LimitRange default/cpu-limit-range")),
        "{:?}",
        w.warnings
    );
    // Without the LimitRange: nothing requested, and a warning says what to give.
    let text = fixture("limitrange-pi.yaml");
    let job = text.split("---").nth(1).unwrap();
    let mut o = Objects::parse("pi.yaml", job).unwrap();
    o.apply_namespace("default");
    let w = only_workload(&o);
    assert_eq!(request(&w, 0, "cpu"), None);
    let warn = w
        .warnings
        .iter()
        .find(|x| x.field == "spec.template.spec.containers")
        .expect("a warning");
    assert!(
        warn.message.contains("no LimitRange of namespace default"),
        "{warn:?}"
    );
    // A LimitRange of another namespace does not apply.
    let mut o = Objects::parse(
        "lr.yaml",
        &text.replace(
            "metadata: {name: cpu-limit-range}",
            "metadata: {name: cpu-limit-range, namespace: other}",
        ),
    )
    .unwrap();
    o.apply_namespace("default");
    assert_eq!(request(&only_workload(&o), 0, "cpu"), None);
}

#[test]
fn a_limit_range_keeps_what_a_container_sets() {
    // A container with a cpu limit of 2 and no request: the API server already made the
    // request 2 (the limit); the LimitRange's 0.5 does not replace it.
    let text = fixture("limitrange-pi.yaml").replace(
        "        image: perl:5.34.0",
        "        image: perl:5.34.0\n        resources: {limits: {cpu: \"2\"}, requests: {memory: 1Gi}}",
    );
    let mut o = Objects::parse("pi.yaml", &text).unwrap();
    o.apply_namespace("default");
    let w = only_workload(&o);
    assert_eq!(request(&w, 0, "cpu"), Some(2000));
    assert_eq!(request(&w, 0, "memory"), Some(1024 * 1024 * 1024 * 1000));
}

#[test]
fn a_runtime_class_adds_its_pod_overhead() {
    let o = objects(&["runtimeclass.yaml"]);
    let w = only_workload(&o);
    // 2 CPUs + 250m overhead; 100Mi + 120Mi memory.
    assert_eq!(request(&w, 0, "cpu"), Some(2250));
    assert_eq!(request(&w, 0, "memory"), Some(220 * 1024 * 1024 * 1000));
    // Without the RuntimeClass: the overhead is unknown, and said so.
    let text = fixture("runtimeclass.yaml");
    let job = text.split("---").nth(1).unwrap();
    let w = only_workload(&Objects::parse("job.yaml", job).unwrap());
    assert_eq!(request(&w, 0, "cpu"), Some(2000));
    assert!(
        w.warnings
            .iter()
            .any(|x| x.field == "spec.template.spec.runtimeClassName"),
        "{:?}",
        w.warnings
    );
}

// ---------------------------------------------------------------------------------------
// 5. Constraints that must not be dropped

#[test]
fn jobset_exclusive_jobs_puts_each_child_job_alone_in_a_domain() {
    // 3 Jobs, 2 racks: JobSet leaves one pending, though 6 CPUs fit in one rack.
    let o = objects(&["jobset-exclusive.yaml"]);
    let w = only_workload(&o);
    let x = w
        .topology
        .exclusive
        .as_ref()
        .expect("the exclusive request");
    assert_eq!(
        (x.size, &x.level),
        (2, &Level::Key("topology.kubernetes.io/rack".into()))
    );
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let check = c
        .checks(&w)
        .into_iter()
        .find(|c| c.id == "exclusive_jobs")
        .unwrap();
    assert_eq!(check.status, CheckStatus::Error, "{check:?}");
    assert!(check.message.contains("2 have room"), "{check:?}");
    assert!(place(&o).unwrap_err().contains("Unschedulable"));
    // 2 Jobs: one rack each fits. (The placement shown is the whole gang's, in slices
    // of one Job: it may put both Jobs in one rack; the check is what says they fit apart.)
    let text = fixture("jobset-exclusive.yaml").replace("replicas: 3", "replicas: 2");
    let mut o = objects(&[]);
    o.add("js.yaml", &text).unwrap();
    o.apply_namespace("default");
    let counts = place(&o).unwrap();
    assert_eq!(counts.iter().map(|c| c.1).sum::<u32>(), 4, "{counts:?}");
    let w = only_workload(&o);
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let check = c
        .checks(&w)
        .into_iter()
        .find(|c| c.id == "exclusive_jobs")
        .unwrap();
    assert_eq!(check.status, CheckStatus::Ok, "{check:?}");
}

#[test]
fn volcano_hard_mode_without_levels_is_an_error_not_unconstrained() {
    // A Volcano Job (batch.volcano.sh/v1alpha1, networkTopology from Volcano's
    // network-topology-aware scheduling docs) on nodes without topology labels.
    let text = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: network-topology-job, namespace: default}
spec:
  schedulerName: volcano
  minAvailable: 2
  networkTopology: {mode: hard, highestTierAllowed: 2}
  tasks:
  - name: t0
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
"#;
    let o = Objects::parse("v.yaml", text).unwrap();
    let w = only_workload(&o);
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let err = c.gang_for(&w).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownLevel, "{err}");
    assert_eq!(err.field(), Some("spec.networkTopology.highestTierAllowed"));
    assert!(err.to_string().contains("no levels"), "{err}");
    // Soft mode stays a preference: placed anywhere.
    let o = Objects::parse("v.yaml", &text.replace("mode: hard", "mode: soft")).unwrap();
    assert!(place(&o).is_ok());
}

#[test]
fn a_jobset_joining_a_pod_group_takes_its_topology_and_minimum() {
    let o = objects(&["jobset-scheduling-group.yaml"]);
    let w = only_workload(&o);
    assert!(w.is("jobset/js", Some("default")));
    assert_eq!(required(&w).as_deref(), Some("topology.kubernetes.io/rack"));
    let field = &w.topology.required.as_ref().unwrap().field;
    assert!(
        field.starts_with("PodGroup/default/js-group: spec.schedulingConstraints"),
        "{field}"
    );
    assert_eq!((w.members, w.minimum), (4, 4));
    // 4 pods × 2 GPUs = 8: exactly one rack (2 nodes × 4 GPUs).
    let counts = place(&o).unwrap();
    let rack: std::collections::HashSet<&str> = counts.iter().map(|(n, _)| &n[..2]).collect();
    assert_eq!(rack.len(), 1, "{counts:?}");
}

// ---------------------------------------------------------------------------------------
// 7. GKE's ExtendedResourceToleration, as an option

#[test]
fn extended_resource_toleration_is_off_by_default_and_said_so() {
    let o = Objects::parse("gke.yaml", &fixture("gke-gpu-taint.yaml")).unwrap();
    let w = only_workload(&o);
    // Vanilla: the GPU taint keeps both nodes away.
    let c = Cluster::from_objects(&o, &ClusterOptions::new()).unwrap();
    let note = c
        .report()
        .warnings
        .iter()
        .find(|m| m.contains("ExtendedResourceToleration"))
        .expect("a note");
    assert!(
        note.contains("off (a vanilla kube-apiserver)") && note.contains("2 node(s)"),
        "{note}"
    );
    assert!(matches!(
        c.place(&c.inventory().unwrap(), &w).unwrap(),
        Outcome::Unschedulable(_)
    ));
    // As GKE: the pods tolerate it.
    let c = Cluster::from_objects(
        &o,
        &ClusterOptions::new().extended_resource_toleration(true),
    )
    .unwrap();
    assert!(c
        .report()
        .warnings
        .iter()
        .any(|m| m.contains("ExtendedResourceToleration on")));
    match c.place(&c.inventory().unwrap(), &w).unwrap() {
        Outcome::Placed(p) => assert_eq!(p.node_counts().len(), 2),
        other => panic!("{other:?}"),
    }
    // No such taint: nothing to say.
    let c = Cluster::from_objects(&objects(&[]), &ClusterOptions::new()).unwrap();
    assert!(!c
        .report()
        .warnings
        .iter()
        .any(|m| m.contains("ExtendedResourceToleration")));
}

#[test]
fn member_pods_without_requests_give_one_warning_with_the_count() {
    // The coscheduling fixture's pods, without their requests and without a LimitRange.
    let text =
        fixture("podgroup-no-namespace.yaml").replace(", resources: {requests: {cpu: \"1\"}}", "");
    let mut o = Objects::parse("pg.yaml", &text).unwrap();
    o.apply_namespace("default");
    let w = only_workload(&o);
    let notes: Vec<_> = w
        .warnings
        .iter()
        .filter(|x| x.message.contains("request nothing"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].message.ends_with("(and 3 more pods)"), "{notes:?}");
}

// ---------------------------------------------------------------------------------------
// Minimums as the schedulers default them, and a minimum of 0 in Kubernetes terms.

#[test]
fn a_volcano_job_without_min_available_takes_its_tasks_minimums_as_volcano_does() {
    // volcano-min-partitions.yaml: no minAvailable; the task's is minPartitions ×
    // partitionSize = 2 (Volcano's webhook), the job's the sum, 2.
    let o = objects(&["volcano-min-partitions.yaml"]);
    let w = only_workload(&o);
    assert_eq!((w.members, w.minimum), (6, 2));
    assert_eq!(w.roles[0].min_count, Some(2));
    assert!(
        !w.warnings
            .iter()
            .any(|x| x.field.ends_with("minPartitions")),
        "{:?}",
        w.warnings
    );
    assert_eq!((w.topology.slices.len(), w.topology.slices[0].size), (1, 2));
    // One pod a node: the block's 4 nodes hold 2 partitions, each in a rack.
    let counts = place(&o).unwrap();
    assert_eq!(counts.iter().map(|c| c.1).sum::<u32>(), 4, "{counts:?}");
    for rack in ["r1", "r2"] {
        assert_eq!(
            counts.iter().filter(|(n, _)| n.starts_with(rack)).count(),
            2,
            "{counts:?}"
        );
    }
    // minAvailable 0 is "not set" to Volcano's webhook: the same sum.
    let text = fixture("volcano-min-partitions.yaml").replace(
        "  schedulerName: volcano\n",
        "  schedulerName: volcano\n  minAvailable: 0\n",
    );
    let w = only_workload(&Objects::parse("v.yaml", &text).unwrap());
    assert_eq!(w.minimum, 2);
    // Without minPartitions the task's minimum is its replicas, all 6.
    let text = fixture("volcano-min-partitions.yaml").replace("      minPartitions: 1\n", "");
    let w = only_workload(&Objects::parse("v.yaml", &text).unwrap());
    assert_eq!((w.minimum, w.roles[0].min_count), (6, None));
    // The task's own minAvailable wins over minPartitions, which is then not applied.
    let text = fixture("volcano-min-partitions.yaml").replace(
        "    replicas: 6\n",
        "    replicas: 6\n    minAvailable: 4\n",
    );
    let w = only_workload(&Objects::parse("v.yaml", &text).unwrap());
    assert_eq!((w.minimum, w.roles[0].min_count), (4, Some(4)));
    assert!(w
        .warnings
        .iter()
        .any(|x| x.field == "spec.tasks[0].partitionPolicy.minPartitions"));
    // More partitions required than there are: refused at minPartitions.
    let text =
        fixture("volcano-min-partitions.yaml").replace("minPartitions: 1", "minPartitions: 4");
    let err = workloads(&Objects::parse("v.yaml", &text).unwrap()).unwrap_err();
    assert_eq!(
        err.field(),
        Some("spec.tasks[0].partitionPolicy.minPartitions"),
        "{err}"
    );
}

#[test]
fn a_minimum_of_0_is_no_gang_said_so_and_read_as_all_members() {
    // minMember 0 / minAvailable 0: the scheduler starts the pods one by one; gang
    // answers for all of them together, and says so. Never gang-core's `min_count`.
    let cases = [
        (
            "podgroup-no-namespace.yaml",
            "minMember: 3",
            "minMember: 0",
            "spec.minMember",
            4,
        ),
        (
            "kueue-pytorchjob-min.yaml",
            "minAvailable: 2",
            "minAvailable: 0",
            "spec.runPolicy.schedulingPolicy.minAvailable",
            4,
        ),
    ];
    for (file, from, to, field, members) in cases {
        let text = fixture(file).replace(from, to);
        assert_ne!(text, fixture(file), "{file}");
        let mut o = Objects::parse(file, &text).unwrap();
        o.apply_namespace("default");
        let w = only_workload(&o);
        assert_eq!((w.members, w.minimum), (members, members), "{file}");
        let x = w
            .warnings
            .iter()
            .find(|x| x.field == field)
            .unwrap_or_else(|| panic!("{file}: {:?}", w.warnings));
        assert!(x.message.starts_with("0: no gang"), "{x:?}");
    }
    // Every Volcano task's minAvailable 0: nothing to place, refused in the job's terms.
    let text = r#"
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vz, namespace: default}
spec:
  schedulerName: volcano
  tasks:
  - name: a
    replicas: 2
    minAvailable: 0
    template: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
"#;
    let mut o = objects(&[]);
    o.add("vz.yaml", text).unwrap();
    let err = place(&o).unwrap_err();
    assert!(
        err.contains("spec.minAvailable: \"0\": no member is required")
            && err.ends_with("give at least one role a minimum of 1 or more (at document 1)"),
        "{err}"
    );
    assert!(
        !err.contains("min_count") && !err.contains("gang.roles"),
        "{err}"
    );
}
