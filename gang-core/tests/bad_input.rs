//! Every kind of bad input gets a typed error naming the field and the value; none
//! panics, and none is reported as "does not fit".

use gang_core::request::{QuantitySpec, Requirement};
use gang_core::scenario::Scenario;
use gang_core::{
    ErrorKind, Gang, Inventory, NodeSpec, Role, Taint, TaintEffect, Toleration, Topology,
};

fn inv() -> Inventory {
    Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes((0..4).map(|i| {
            NodeSpec::new(format!("n{i}"))
                .label("block", "b1")
                .label("rack", format!("r{}", i / 2))
                .capacity("gpu", 8)
        }))
        .build()
        .unwrap()
}

fn worker(n: u32) -> Role {
    Role::new("w", n).request("gpu", 1)
}

/// Asserts that placing `gang` fails with `kind`, naming `field` and mentioning `value`.
#[track_caller]
fn rejects(gang: Gang, kind: ErrorKind, field: &str, value: &str) {
    let e = inv().place(&gang).unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    assert_eq!(e.field(), field, "{e}");
    assert!(
        e.to_string().contains(value),
        "{e} should mention {value:?}"
    );
}

#[test]
fn bad_requests() {
    let ok = || Gang::new("g").role(worker(2));
    rejects(
        Gang::new("").role(worker(1)),
        ErrorKind::InvalidRequest,
        "gang.name",
        "",
    );
    rejects(
        Gang::new("g"),
        ErrorKind::InvalidRequest,
        "gang.roles",
        "[]",
    );
    rejects(
        Gang::new("g").role(worker(0)),
        ErrorKind::InvalidRequest,
        "gang.roles[w].count",
        "0",
    );
    rejects(
        Gang::new("g").role(worker(2).min_count(3)),
        ErrorKind::InvalidRequest,
        "gang.roles[w].min_count",
        "3",
    );
    rejects(
        Gang::new("g").role(worker(2).min_count(0)),
        ErrorKind::InvalidRequest,
        "gang.roles",
        "min_count",
    );
    rejects(
        Gang::new("g").role(worker(1)).role(worker(1)),
        ErrorKind::InvalidRequest,
        "gang.roles[1].name",
        "w",
    );
    rejects(
        Gang::new("g").role(Role::new("bad name", 1)),
        ErrorKind::InvalidRequest,
        "gang.roles[0].name",
        "bad name",
    );
    rejects(
        Gang::new("g").role(worker(1).max_per_node(0)),
        ErrorKind::InvalidRequest,
        "gang.roles[w].max_per_node",
        "0",
    );
    rejects(
        ok().required("zone"),
        ErrorKind::InvalidRequest,
        "gang.topology.required",
        "zone",
    );
    rejects(
        ok().preferred("Not A Level"),
        ErrorKind::InvalidRequest,
        "gang.topology.preferred",
        "Not A Level",
    );
    rejects(
        ok().required("rack").preferred("block"),
        ErrorKind::Contradictory,
        "gang.topology.preferred",
        "block",
    );
    // Quantities in requests.
    for (amount, why) in [
        (QuantitySpec::from("1.5x"), "unknown suffix"),
        (QuantitySpec::from(-1), "negative"),
        (QuantitySpec::from("1n"), "finer than one milli-unit"),
        (QuantitySpec::from("100Ei"), "overflows"),
        (QuantitySpec::from(""), "empty"),
    ] {
        let e = inv()
            .place(&Gang::new("g").role(Role::new("w", 1).request("gpu", amount)))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidQuantity, "{e}");
        assert_eq!(e.field(), "gang.roles[w].requests.gpu");
        assert!(e.to_string().contains(why), "{e}");
    }
    rejects(
        Gang::new("g").role(Role::new("w", 1).request("Bad Resource", 1)),
        ErrorKind::InvalidRequest,
        "gang.roles[w].requests",
        "Bad Resource",
    );
    // Selectors and tolerations.
    rejects(
        Gang::new("g").role(worker(1).selector("bad key!", "x")),
        ErrorKind::InvalidRequest,
        "gang.roles[w].node_selector",
        "bad key!",
    );
    rejects(
        Gang::new("g").role(worker(1).selector("k", "bad value!")),
        ErrorKind::InvalidRequest,
        "gang.roles[w].node_selector.k",
        "bad value!",
    );
    rejects(
        Gang::new("g").role(worker(1).requirement(Requirement::is_in("k", Vec::<String>::new()))),
        ErrorKind::InvalidRequest,
        "gang.roles[w].match_expressions[0].values",
        "[]",
    );
    rejects(
        Gang::new("g").role(worker(1).requirement(Requirement {
            values: vec!["x".into()],
            ..Requirement::exists("k")
        })),
        ErrorKind::InvalidRequest,
        "gang.roles[w].match_expressions[0].values",
        "x",
    );
    rejects(
        Gang::new("g").role(worker(1).toleration(Toleration::equal("", "x"))),
        ErrorKind::InvalidRequest,
        "gang.roles[w].tolerations[0].key",
        "",
    );
    rejects(
        Gang::new("g").role(worker(1).toleration(Toleration {
            value: "v".into(),
            ..Toleration::exists("k")
        })),
        ErrorKind::InvalidRequest,
        "gang.roles[w].tolerations[0].value",
        "v",
    );
    // Slices.
    rejects(
        ok().required("block").slice("rack", 0),
        ErrorKind::InvalidRequest,
        "gang.topology.slices[0].size",
        "0",
    );
    rejects(
        ok().required("block").slice("rack", 4),
        ErrorKind::InvalidRequest,
        "gang.roles[w].count",
        "2",
    );
    rejects(
        Gang::new("g")
            .role(worker(8))
            .required("block")
            .slice("rack", 4)
            .slice("block", 2),
        ErrorKind::InvalidRequest,
        "gang.topology.slices[1].level",
        "block",
    );
    rejects(
        Gang::new("g")
            .role(worker(8))
            .required("block")
            .slice("block", 4)
            .slice("rack", 3),
        ErrorKind::InvalidRequest,
        "gang.topology.slices[1].size",
        "3",
    );
    rejects(
        Gang::new("g")
            .role(worker(8))
            .required("rack")
            .slice("block", 4),
        ErrorKind::Contradictory,
        "gang.topology.slices[0].level",
        "block",
    );
    rejects(
        Gang::new("g")
            .role(worker(4).unconstrained())
            .required("rack")
            .slice("rack", 2),
        ErrorKind::InvalidRequest,
        "gang.topology.slices",
        "2",
    );
    rejects(
        Gang::new("g")
            .role(worker(8).min_count(3))
            .required("block")
            .slice("rack", 2),
        ErrorKind::InvalidRequest,
        "gang.roles[w].min_count",
        "3",
    );
    // max_per_node that no rack (two nodes each) could ever satisfy.
    rejects(
        Gang::new("g")
            .role(worker(3).max_per_node(1))
            .required("rack"),
        ErrorKind::Contradictory,
        "gang.roles[w].max_per_node",
        "1",
    );
    rejects(
        Gang::new("g")
            .role(worker(8).max_per_node(1))
            .required("block")
            .slice("rack", 4),
        ErrorKind::Contradictory,
        "gang.roles[w].max_per_node",
        "1",
    );
}

#[test]
fn bad_inventories() {
    let topo = || Topology::new(["rack"]).unwrap();
    let cases: Vec<(Vec<NodeSpec>, ErrorKind, &str)> = vec![
        (
            vec![NodeSpec::new("a"), NodeSpec::new("a")],
            ErrorKind::InvalidInventory,
            "nodes[a].name",
        ),
        (
            vec![NodeSpec::new("has space")],
            ErrorKind::InvalidInventory,
            "nodes[].name",
        ),
        (
            vec![NodeSpec::new("a").label("-bad", "x")],
            ErrorKind::InvalidInventory,
            "nodes[a].labels",
        ),
        (
            vec![NodeSpec::new("a").label("rack", "x y")],
            ErrorKind::InvalidInventory,
            "nodes[a].labels.rack",
        ),
        (
            vec![NodeSpec::new("a").capacity("gpu", "eight")],
            ErrorKind::InvalidQuantity,
            "nodes[a].capacity.gpu",
        ),
        (
            vec![NodeSpec::new("a").capacity("gpu", -8)],
            ErrorKind::InvalidQuantity,
            "nodes[a].capacity.gpu",
        ),
        (
            vec![NodeSpec::new("a").used("gpu", "1e99")],
            ErrorKind::InvalidQuantity,
            "nodes[a].used.gpu",
        ),
        (
            vec![NodeSpec::new("a").capacity("Bad/Name/x", 1)],
            ErrorKind::InvalidInventory,
            "nodes[a].capacity",
        ),
        (
            vec![NodeSpec::new("a").taint(Taint::new("k", "bad value!", TaintEffect::NoExecute))],
            ErrorKind::InvalidInventory,
            "nodes[a].taints[0].value",
        ),
    ];
    for (nodes, kind, field) in cases {
        let e = Inventory::builder(topo()).nodes(nodes).build().unwrap_err();
        assert_eq!((e.kind(), e.field()), (kind, field), "{e}");
    }
    for (levels, field) in [
        (vec!["rack", "rack"], "topology.levels[1]"),
        (vec!["kubernetes.io/hostname", "rack"], "topology.levels[0]"),
        (vec!["Bad Level"], "topology.levels[0]"),
    ] {
        let e = Topology::new(levels).unwrap_err();
        assert_eq!(
            (e.kind(), e.field()),
            (ErrorKind::InvalidInventory, field),
            "{e}"
        );
    }
}

#[test]
fn bad_documents_and_lifecycle_calls() {
    for (doc, field) in [
        ("{", "document"),
        (
            r#"{"topology": {"levels": []}, "nodes": [], "gang": {"name": "g", "roles": []}, "x": 1}"#,
            "x",
        ),
        (
            r#"{"topology": {"levels": [1]}, "nodes": [], "gang": {"name": "g", "roles": []}}"#,
            "topology.levels[0]",
        ),
        (
            r#"{"topology": {}, "nodes": [{"name": "a", "schedulable": "yes"}], "gang": {"name": "g", "roles": []}}"#,
            "nodes[0].schedulable",
        ),
        (
            r#"{"topology": {}, "nodes": [], "gang": {"name": "g", "roles": [], "policy": "fastest"}}"#,
            "gang.policy",
        ),
        (
            r#"{"topology": {}, "nodes": [], "gang": {"name": "g", "roles": [{"name": "w", "count": 1, "requests": {"gpu": true}}]}}"#,
            "gang.roles[0].requests.gpu",
        ),
    ] {
        let e = Scenario::from_json(doc).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidScenario, "{e}");
        assert!(e.field().starts_with(field), "{doc}: {e}");
    }
    let mut inv = inv();
    assert_eq!(inv.cordon("zz").unwrap_err().kind(), ErrorKind::UnknownNode);
    assert_eq!(
        inv.fail_node("zz").unwrap_err().kind(),
        ErrorKind::UnknownNode
    );
    assert_eq!(
        inv.set_used("n0", "gpu", "-1").unwrap_err().kind(),
        ErrorKind::InvalidQuantity
    );
    assert_eq!(
        inv.release(gang_core::ReservationId(42))
            .unwrap_err()
            .kind(),
        ErrorKind::UnknownReservation
    );
    assert_eq!(
        inv.replace(gang_core::ReservationId(42))
            .unwrap_err()
            .kind(),
        ErrorKind::UnknownReservation
    );
    let spread = |k, min: Option<u32>| {
        let s = gang_core::lifecycle::Spread::new(Gang::new("s").role(worker(1)), k, "rack");
        match min {
            Some(m) => s.min_replicas(m),
            None => s,
        }
    };
    assert_eq!(
        inv.spread(&spread(0, None)).unwrap_err().field(),
        "spread.replicas"
    );
    assert_eq!(
        inv.spread(&spread(2, Some(3))).unwrap_err().field(),
        "spread.min_replicas"
    );
    let bad_level = gang_core::lifecycle::Spread::new(Gang::new("s").role(worker(1)), 2, "zone");
    assert_eq!(inv.spread(&bad_level).unwrap_err().field(), "spread.level");
    inv.validate().unwrap();
    // Every kind has a stable name and code.
    let kinds = [
        (ErrorKind::InvalidQuantity, "invalid_quantity", 1),
        (ErrorKind::InvalidInventory, "invalid_inventory", 2),
        (ErrorKind::InvalidRequest, "invalid_request", 3),
        (ErrorKind::Contradictory, "contradictory", 4),
        (ErrorKind::InvalidScenario, "invalid_scenario", 5),
        (ErrorKind::Conflict, "conflict", 6),
        (ErrorKind::UnknownReservation, "unknown_reservation", 7),
        (ErrorKind::UnknownNode, "unknown_node", 8),
    ];
    for (k, name, code) in kinds {
        assert_eq!((k.as_str(), k.code()), (name, code));
    }
}
