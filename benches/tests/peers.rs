//! The side-by-side's export (`gang_benches::peers`): the JSON the Kueue harness reads
//! describes the generated cluster node for node, and the placement spread counts what
//! a placement uses.

use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec, BLOCK, RACK, RESOURCES, ZONE};
use gang_benches::peers::{self, NodeIndex, Query, Spread, HOSTNAME, MAX_PODS};
use serde_json::Value;

fn milli(q: &str) -> u64 {
    match q.strip_suffix('m') {
        Some(m) => m.parse().unwrap(),
        None => q.parse::<u64>().unwrap() * 1000,
    }
}

#[test]
fn names_parse_back() {
    for name in [
        "hgx-1k-50",
        "hgx-10k-85",
        "hgx-100k-0",
        "nvl72-1k-50",
        "nvl72-100k-85",
    ] {
        let spec = peers::parse_cluster(name).unwrap();
        assert_eq!(peers::cluster_name(&spec), name);
    }
    assert_eq!(
        peers::parse_cluster("hgx-1k-50"),
        Some(Spec::hgx(Size::K1, 50))
    );
    for bad in [
        "hgx",
        "hgx-2k-50",
        "hgx-1k-101",
        "dgx-1k-50",
        "hgx-1k-50-x",
        "hgx-1k-",
    ] {
        assert_eq!(peers::parse_cluster(bad), None, "{bad}");
    }
}

#[test]
fn quantities_are_exact() {
    assert_eq!(peers::quantity(8000), "8");
    assert_eq!(peers::quantity(8500), "8500m");
    assert_eq!(peers::quantity(0), "0");
    assert_eq!(
        milli(&peers::quantity(68_719_476_736_000)),
        68_719_476_736_000
    );
}

#[test]
fn queries_cover_every_constraint_and_count() {
    let q = peers::queries();
    assert_eq!(q.len(), Constraint::ALL.len() * peers::COUNTS.len());
    let names: Vec<String> = q.iter().map(Query::name).collect();
    for n in [
        "required-rack-4",
        "required-block-256",
        "preferred-rack-512",
        "unconstrained-512",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} missing");
    }
}

#[test]
fn export_describes_the_cluster_node_for_node() {
    let spec = Spec::hgx(Size::K1, 50);
    let cluster = Cluster::generate(&spec);
    let queries = peers::queries();
    let mut buf = Vec::new();
    peers::write_json(&cluster, &queries, &mut buf).unwrap();
    let v: Value = serde_json::from_slice(&buf).expect("valid JSON");

    assert_eq!(v["name"], "hgx-1k-50");
    let levels: Vec<&str> = v["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(levels, [ZONE, BLOCK, RACK, HOSTNAME]);

    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), cluster.len());
    let mut free_gpus = 0;
    for (j, n) in nodes.iter().zip(&cluster.nodes) {
        assert_eq!(j["name"], n.name.as_str());
        assert_eq!(j["labels"][HOSTNAME], n.name.as_str());
        for (k, val) in &n.labels {
            assert_eq!(j["labels"][*k], val.as_str());
        }
        assert_eq!(
            j["labels"].as_object().unwrap().len(),
            n.labels.len() + 1,
            "{}",
            n.name
        );
        for (r, key) in RESOURCES.iter().enumerate() {
            assert_eq!(
                milli(j["allocatable"][*key].as_str().unwrap()),
                n.capacity[r]
            );
            let used = j["used"][*key].as_str().map_or(0, milli);
            assert_eq!(used, n.used[r], "{} {key}", n.name);
        }
        assert_eq!(
            milli(j["allocatable"]["pods"].as_str().unwrap()),
            MAX_PODS * 1000
        );
        assert_eq!(j["unschedulable"], !n.schedulable);
        let taints = j["taints"].as_array().unwrap();
        assert_eq!(taints.len(), n.taints.len());
        let mut excluded = !n.schedulable;
        for (jt, t) in taints.iter().zip(&n.taints) {
            assert_eq!(jt["key"], t.key.as_str());
            assert_eq!(jt["value"], t.value.as_str());
            let effect = jt["effect"].as_str().unwrap();
            assert_eq!(effect != "PreferNoSchedule", t.effect.excludes());
            excluded |= effect != "PreferNoSchedule";
        }
        if !excluded {
            free_gpus += (milli(j["allocatable"][RESOURCES[0]].as_str().unwrap())
                - j["used"][RESOURCES[0]].as_str().map_or(0, milli))
                / 1000;
        }
    }
    assert_eq!(free_gpus, peers::usable_free_gpus(&cluster));
    // The generator's awkward nodes are there to be read: cordoned, tainted, unlabelled.
    assert!(nodes.iter().any(|n| n["unschedulable"] == true));
    assert!(nodes.iter().any(|n| n["labels"].get(RACK).is_none()));

    let jq = v["queries"].as_array().unwrap();
    assert_eq!(jq.len(), queries.len());
    for (j, q) in jq.iter().zip(&queries) {
        assert_eq!(j["name"], q.name().as_str());
        assert_eq!(j["mode"], q.mode());
        assert_eq!(j["level"].as_str(), q.level());
        assert_eq!(j["count"], q.count);
        for (r, m) in cases::worker_columns(&spec) {
            assert_eq!(milli(j["requests"][RESOURCES[r]].as_str().unwrap()), m);
        }
    }
}

#[test]
fn spread_counts_domains_by_full_path() {
    let cluster = Cluster::generate(&Spec::hgx(Size::K1, 0));
    let index = NodeIndex::new(&cluster);
    // Rack values repeat across blocks: r00 of b00 and r00 of b01 are two racks.
    let find = |b: &str, r: &str, k: &str| {
        cluster
            .nodes
            .iter()
            .find(|n| n.name == format!("hgx-{b}-{r}-{k}"))
            .map(|n| n.name.as_str())
            .unwrap()
    };
    let s = Spread::of(
        &index,
        [
            (find("b0", "r00", "n00"), 8),
            (find("b0", "r00", "n01"), 3),
            (find("b1", "r00", "n00"), 1),
        ],
    );
    assert_eq!(
        s,
        Spread {
            members: 12,
            zones: 1,
            blocks: 2,
            racks: 2,
            nodes: 3,
            max_per_node: 8
        }
    );
    assert_eq!(
        s.render(),
        "members=12 zones=1 blocks=2 racks=2 nodes=3 max/node=8"
    );
}

#[test]
fn spread_of_a_gang_placement() {
    let spec = Spec::hgx(Size::K1, 50);
    let cluster = Cluster::generate(&spec);
    let inv = cluster.inventory();
    let index = NodeIndex::new(&cluster);
    let out = inv
        .place(&cases::single(&spec, Constraint::RequiredRack, 4))
        .unwrap();
    let s = Spread::of_placement(&index, out.placement().expect("fits"));
    assert_eq!((s.members, s.zones, s.blocks, s.racks), (4, 1, 1, 1));
    assert!(s.nodes >= 1 && s.max_per_node >= 1);
}
