//! Issue 24: the objects users actually have (generateName, no namespace, more kinds,
//! what admission adds, constraints that must not be dropped). Fixtures are in
//! `fixtures/users/`, each written for these tests from the upstream API types and
//! docs (the header of each file says which); the expected answers are worked out in
//! the comments here.

use gang_core::Outcome;
use gang_kube::{workloads, Cluster, ClusterOptions, ErrorKind, Objects, WorkloadGang};

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
