//! Reserve and release, inventory changes, replacement, spread replicas, admission.

use gang_core::lifecycle::{Admission, AdmitMode, Conflict, Replacement, Spread, SpreadOutcome};
use gang_core::{ErrorKind, Gang, Inventory, NodeSpec, Role, Topology};

const GPU: &str = "nvidia.com/gpu";

fn node(name: &str, block: &str, rack: &str, gpus: i64) -> NodeSpec {
    NodeSpec::new(name)
        .label("block", block)
        .label("rack", rack)
        .capacity(GPU, gpus)
        .capacity("cpu", 64)
}

fn cluster(nodes: Vec<NodeSpec>) -> Inventory {
    let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes(nodes)
        .build()
        .unwrap();
    inv.validate().unwrap();
    inv
}

fn workers(n: u32) -> Role {
    Role::new("worker", n).request(GPU, 1)
}

fn free(inv: &Inventory) -> Vec<(String, u64)> {
    inv.node_names()
        .map(|n| (n.to_owned(), inv.free(n, GPU).map_or(0, |q| q.millis())))
        .collect()
}

#[test]
fn reserve_then_release_is_the_identity() {
    let mut inv = cluster(vec![
        node("a1", "b1", "a", 4),
        node("a2", "b1", "a", 4),
        node("b1", "b1", "b", 8),
    ]);
    let before = free(&inv);
    let gang = Gang::new("g").role(workers(6)).required("rack");
    let p = inv.place(&gang).unwrap().placement().cloned().unwrap();
    let id = inv.reserve(&p).unwrap();
    inv.validate().unwrap();
    assert_eq!(inv.reservation(id).unwrap().member_count(), 6);
    assert_ne!(free(&inv), before);
    let usage = inv.reservation(id).unwrap().usage(&inv);
    let total: u64 = usage.iter().map(|u| u.2.millis()).sum();
    assert_eq!(total, 6000);
    inv.release(id).unwrap();
    inv.validate().unwrap();
    assert_eq!(free(&inv), before);
    // Releasing twice is an error and credits nothing.
    let e = inv.release(id).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownReservation);
    assert_eq!(free(&inv), before);
}

#[test]
fn a_stale_placement_conflicts_and_changes_nothing() {
    let mut inv = cluster(vec![node("a1", "b1", "a", 4), node("a2", "b1", "a", 4)]);
    let gang = Gang::new("g").role(workers(8)).required("rack");
    let p = inv.place(&gang).unwrap().placement().cloned().unwrap();
    inv.set_used("a2", GPU, 1).unwrap();
    let before = free(&inv);
    match inv.reserve(&p).map_err(|e| e.conflict().cloned()) {
        Err(Some(Conflict::Capacity {
            node,
            resource,
            needed,
            free,
        })) => {
            assert_eq!((node.as_str(), resource.as_str()), ("a2", GPU));
            assert_eq!((needed.millis(), free.millis()), (4000, 3000));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(free(&inv), before);
    assert_eq!(inv.reservations().count(), 0);
    inv.cordon("a1").unwrap();
    inv.set_used("a2", GPU, 0).unwrap();
    assert!(matches!(
        inv.reserve(&p).unwrap_err().conflict(),
        Some(Conflict::Unschedulable { .. })
    ));
    inv.uncordon("a1").unwrap();
    inv.reserve(&p).unwrap();
    inv.validate().unwrap();
}

#[test]
fn removing_a_node_reports_lost_members_and_replacement_stays_in_the_rack() {
    let mut inv = cluster(vec![
        node("a1", "b1", "a", 2),
        node("a2", "b1", "a", 2),
        node("a3", "b1", "a", 2),
        node("b1", "b1", "b", 8),
    ]);
    // At most two a node: rack b (one node) cannot hold four.
    let gang = Gang::new("train")
        .role(workers(4).max_per_node(2))
        .required("rack");
    let p = inv.place(&gang).unwrap().placement().cloned().unwrap();
    assert_eq!(p.domain_path(), "b1/a");
    let id = inv.reserve(&p).unwrap();
    let held_on = |inv: &Inventory| -> Vec<String> {
        inv.reservation(id)
            .unwrap()
            .assignments(inv)
            .into_iter()
            .map(|a| a.node)
            .collect()
    };
    let victim = held_on(&inv)[0].clone();
    let lost = inv.remove_node(&victim).unwrap();
    inv.validate().unwrap();
    assert_eq!(lost.len(), 1);
    assert_eq!(
        (lost[0].reservation, lost[0].role.as_str(), lost[0].count),
        (id, "worker", 2)
    );
    assert_eq!(inv.reservation(id).unwrap().lost().len(), 1);
    // Rack a still has a3 with 2 free: the replacement goes there, not to rack b.
    match inv.replace(id).unwrap() {
        Replacement::Placed { added } => {
            assert_eq!(added.iter().map(|a| a.count).sum::<u32>(), 2);
            assert!(added.iter().all(|a| a.node.starts_with('a')), "{added:?}");
        }
        Replacement::Pending(p) => panic!("{p}"),
    }
    inv.validate().unwrap();
    assert!(inv.reservation(id).unwrap().lost().is_empty());
    assert_eq!(inv.reservation(id).unwrap().member_count(), 4);
    // Lose another node: rack a is now full, rack b has room, and the answer says so.
    let victim = held_on(&inv)[0].clone();
    inv.fail_node(&victim).unwrap();
    inv.validate().unwrap();
    let before = free(&inv);
    match inv.replace(id).unwrap() {
        Replacement::Pending(p) => {
            let text = p.to_string();
            assert!(
                text.contains("rack b1/a has no room for 2 worker"),
                "{text}"
            );
            assert!(text.contains("short of nvidia.com/gpu"), "{text}");
            assert!(
                text.contains("rack b1/b has room, but the gang is bound to rack b1/a"),
                "{text}"
            );
            assert_eq!(p.domains[0].elsewhere, ["b1/b"]);
        }
        Replacement::Placed { added } => panic!("replaced outside the rack: {added:?}"),
    }
    assert_eq!(free(&inv), before);
    // The failed node comes back: the replacement fits again, on it.
    inv.uncordon(&victim).unwrap();
    assert!(matches!(
        inv.replace(id).unwrap(),
        Replacement::Placed { .. }
    ));
    inv.validate().unwrap();
}

#[test]
fn replacing_members_lost_on_several_nodes_at_once() {
    let nodes = (1..=6)
        .map(|i| node(&format!("a{i}"), "b1", "a", 1))
        .collect();
    let mut inv = cluster(nodes);
    let id = inv
        .reserve(
            inv.place(&Gang::new("g").role(workers(3)).required("rack"))
                .unwrap()
                .placement()
                .unwrap(),
        )
        .unwrap();
    let held: Vec<String> = inv
        .reservation(id)
        .unwrap()
        .assignments(&inv)
        .into_iter()
        .map(|a| a.node)
        .collect();
    inv.remove_node(&held[0]).unwrap();
    inv.fail_node(&held[1]).unwrap();
    assert_eq!(inv.reservation(id).unwrap().lost().len(), 2);
    let Replacement::Placed { added } = inv.replace(id).unwrap() else {
        panic!()
    };
    assert_eq!(added.len(), 2);
    assert_eq!(inv.reservation(id).unwrap().member_count(), 3);
    inv.validate().unwrap();
}

#[test]
fn replacement_respects_max_per_node_with_members_already_there() {
    let mut inv = cluster(vec![
        node("a1", "b1", "a", 8),
        node("a2", "b1", "a", 8),
        node("a3", "b1", "a", 8),
    ]);
    let gang = Gang::new("g")
        .role(workers(2).max_per_node(1))
        .required("rack");
    let id = inv
        .reserve(inv.place(&gang).unwrap().placement().unwrap())
        .unwrap();
    let held: Vec<String> = inv
        .reservation(id)
        .unwrap()
        .assignments(&inv)
        .into_iter()
        .map(|a| a.node)
        .collect();
    inv.fail_node(&held[0]).unwrap();
    let Replacement::Placed { added } = inv.replace(id).unwrap() else {
        panic!()
    };
    // Not on the node that already holds one.
    assert_ne!(added[0].node, held[1]);
    assert_ne!(added[0].node, held[0]);
}

#[test]
fn slices_replace_inside_the_lost_members_slice_domain() {
    // Three racks in one block, slices of 2 per rack: the gang takes racks a and b.
    let mut inv = cluster(vec![
        node("a1", "b1", "a", 1),
        node("a2", "b1", "a", 1),
        node("a3", "b1", "a", 1),
        node("b1", "b1", "b", 1),
        node("b2", "b1", "b", 1),
        node("c1", "b1", "c", 2),
    ]);
    let gang = Gang::new("g")
        .role(workers(4))
        .required("block")
        .slice("rack", 2);
    let p = inv.place(&gang).unwrap().placement().cloned().unwrap();
    let id = inv.reserve(&p).unwrap();
    let held = inv.reservation(id).unwrap().assignments(&inv);
    let in_a = held
        .iter()
        .find(|a| a.node.starts_with('a'))
        .expect("a slice in rack a")
        .node
        .clone();
    inv.remove_node(&in_a).unwrap();
    let Replacement::Placed { added } = inv.replace(id).unwrap() else {
        panic!()
    };
    // The slice was in rack a: the replacement stays in rack a (a3), not rack c.
    assert!(added.iter().all(|a| a.node.starts_with('a')), "{added:?}");
    inv.validate().unwrap();
}

#[test]
fn capacity_below_reservations_is_reported() {
    let mut inv = cluster(vec![node("a1", "b1", "a", 8)]);
    let id = inv
        .reserve(
            inv.place(&Gang::new("g").role(workers(6)))
                .unwrap()
                .placement()
                .unwrap(),
        )
        .unwrap();
    let over = inv.set_capacity("a1", GPU, 4).unwrap();
    assert_eq!(over.len(), 1);
    assert_eq!(
        (over[0].reserved.millis(), over[0].capacity.millis()),
        (6000, 4000)
    );
    assert_eq!(over[0].reservations, [id]);
    inv.validate().unwrap();
    assert!(inv.set_capacity("a1", GPU, 8).unwrap().is_empty());
    assert_eq!(inv.set_used("a1", GPU, 3).unwrap()[0].used.millis(), 3000);
    assert_eq!(
        inv.set_capacity("zz", GPU, 1).unwrap_err().kind(),
        ErrorKind::UnknownNode
    );
    assert_eq!(
        inv.set_capacity("a1", GPU, "x").unwrap_err().kind(),
        ErrorKind::InvalidQuantity
    );
    // A resource no node had before: a new column.
    inv.set_capacity("a1", "example.com/fpga", 2).unwrap();
    assert_eq!(inv.free("a1", "example.com/fpga").unwrap().millis(), 2000);
    inv.validate().unwrap();
}

#[test]
fn structural_changes_keep_reservations_and_recompile_gangs() {
    let mut inv = cluster(vec![node("a1", "b1", "a", 4), node("b1", "b1", "b", 4)]);
    let gang = Gang::new("g").role(workers(4)).required("rack");
    let compiled = inv.compile(&gang).unwrap();
    let id = inv
        .reserve(inv.place(&gang).unwrap().placement().unwrap())
        .unwrap();
    inv.add_node(node("a0", "b1", "a", 4)).unwrap();
    inv.validate().unwrap();
    assert_eq!(inv.reservation(id).unwrap().member_count(), 4);
    // The old compiled gang still works (recompiled on the fly).
    let out = inv
        .place_with(&mut gang_core::Solver::new(), &compiled)
        .unwrap();
    assert!(out.is_placed());
    // Relabel the reserved node into another rack: reported as displaced.
    let held = inv.reservation(id).unwrap().assignments(&inv)[0]
        .node
        .clone();
    let mut labels: Vec<(String, String)> = inv
        .node_spec(&held)
        .unwrap()
        .get_labels()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    labels.retain(|(k, _)| k != "rack");
    labels.push(("rack".into(), "z".into()));
    let displaced = inv.set_labels(&held, labels).unwrap();
    assert_eq!(displaced, [id]);
    inv.validate().unwrap();
    assert_eq!(
        inv.add_node(node("a0", "b1", "a", 1)).unwrap_err().kind(),
        ErrorKind::InvalidInventory
    );
    assert_eq!(
        inv.remove_node("nope").unwrap_err().kind(),
        ErrorKind::UnknownNode
    );
    inv.release(id).unwrap();
    inv.validate().unwrap();
}

#[test]
fn spread_replicas_sit_in_distinct_racks() {
    let nodes = ["a", "b", "c"]
        .iter()
        .map(|r| node(&format!("{r}1"), "b1", r, 4))
        .collect();
    let mut inv = cluster(nodes);
    let replica = Gang::new("serve").role(workers(2)).required("rack");
    let SpreadOutcome::Placed {
        reservations,
        placements,
    } = inv
        .spread(&Spread::new(replica.clone(), 3, "rack"))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(reservations.len(), 3);
    let mut racks: Vec<String> = placements.iter().map(|p| p.domain_path()).collect();
    racks.sort();
    racks.dedup();
    assert_eq!(racks.len(), 3);
    inv.validate().unwrap();
    // A fourth replica has no rack of its own: all or nothing.
    for id in reservations {
        inv.release(id).unwrap();
    }
    let before = free(&inv);
    let SpreadOutcome::Unschedulable { fit, needed, .. } = inv
        .spread(&Spread::new(replica.clone(), 4, "rack"))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!((fit, needed), (3, 4));
    assert_eq!(free(&inv), before);
    // With a declared minimum, three of four is enough.
    let SpreadOutcome::Placed { reservations, .. } = inv
        .spread(&Spread::new(replica.clone(), 4, "rack").min_replicas(3))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(reservations.len(), 3);
    // Spread over blocks but all inside one rack: contradictory, whatever the capacity.
    let e = inv
        .spread(&Spread::new(replica, 2, "block").within("rack"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Contradictory);
    assert_eq!(e.field(), "spread.within");
}

#[test]
fn two_gangs_of_eight_on_eight_gpus_one_waits_holding_nothing() {
    let mut inv = cluster(
        (1..=4)
            .map(|i| node(&format!("n{i}"), "b1", "a", 2))
            .collect(),
    );
    let job = |n: &str| Gang::new(n).role(workers(8)).required("rack");
    let out = inv
        .admit(&[job("first"), job("second")], AdmitMode::Fifo)
        .unwrap();
    let Admission::Placed { reservation, .. } = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(inv.reservation(*reservation).unwrap().member_count(), 8);
    let Admission::Waiting {
        diagnosis: Some(d),
        blocked_by: None,
    } = &out[1]
    else {
        panic!("{out:?}")
    };
    assert!(d.to_string().contains("fits 0 of 8 worker"), "{d}");
    assert_eq!(inv.reservations().count(), 1);
    inv.validate().unwrap();
}

#[test]
fn fifo_blocks_and_backfill_uses_only_what_the_head_cannot() {
    // Rack a: 4 GPU nodes; rack b: CPU-only nodes.
    let mut nodes: Vec<NodeSpec> = (1..=2)
        .map(|i| node(&format!("a{i}"), "b1", "a", 2))
        .collect();
    nodes.push(
        NodeSpec::new("c1")
            .label("block", "b1")
            .label("rack", "b")
            .capacity("cpu", 64),
    );
    let mut inv = cluster(nodes);
    let big = Gang::new("big").role(workers(8)).required("rack");
    let small_gpu = Gang::new("small-gpu").role(workers(1)).required("rack");
    let cpu_only = Gang::new("cpu")
        .role(Role::new("etl", 2).request("cpu", 8))
        .required("rack");
    let queue = [big.clone(), small_gpu.clone(), cpu_only.clone()];

    let fifo = inv.clone().admit(&queue, AdmitMode::Fifo).unwrap();
    assert!(!fifo[0].is_placed() && !fifo[1].is_placed() && !fifo[2].is_placed());
    assert!(matches!(&fifo[1], Admission::Waiting { blocked_by: Some(h), .. } if h == "big"));

    let out = inv.admit(&queue, AdmitMode::Backfill).unwrap();
    assert!(!out[0].is_placed());
    // The small GPU gang would take GPUs the head could use: it waits behind the head.
    assert!(
        matches!(&out[1], Admission::Waiting { blocked_by: Some(h), diagnosis: None } if h == "big")
    );
    // The CPU gang goes on the CPU-only node, which the head cannot use.
    let Admission::Placed { placement, .. } = &out[2] else {
        panic!("{out:?}")
    };
    assert_eq!(placement.node_counts(), [("c1", 2)]);
    inv.validate().unwrap();
    // An invalid gang in the queue changes nothing.
    let bad = Gang::new("bad").role(workers(1)).required("zone");
    let before = inv.reservations().count();
    assert_eq!(
        inv.admit(&[small_gpu, bad], AdmitMode::Fifo)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidRequest
    );
    assert_eq!(inv.reservations().count(), before);
}

#[test]
fn selectors_on_topology_labels_match_every_labelled_node() {
    // The rack label of nodes inside a rack domain is answered from the domain ranges;
    // a node with a rack label but no block label sits outside every rack domain and
    // must still match a selector on its rack label.
    let inv = Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .node(node("a1", "b1", "r1", 1))
        .node(node("a2", "b2", "r1", 1))
        .node(node("a3", "b1", "r2", 1))
        .node(NodeSpec::new("loose").label("rack", "r1").capacity(GPU, 1))
        .build()
        .unwrap();
    inv.validate().unwrap();
    let on_r1 = Gang::new("g").role(workers(3).selector("rack", "r1"));
    let p = inv.place(&on_r1).unwrap().placement().cloned().unwrap();
    let mut nodes: Vec<&str> = p.node_counts().into_iter().map(|n| n.0).collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["a1", "a2", "loose"]);
    assert!(!inv
        .place(&Gang::new("g").role(workers(4).selector("rack", "r1")))
        .unwrap()
        .is_placed());
    let not_r1 = Gang::new("g")
        .role(workers(1).requirement(gang_core::request::Requirement::not_in("rack", ["r1"])));
    assert_eq!(
        inv.place(&not_r1)
            .unwrap()
            .placement()
            .unwrap()
            .node_counts(),
        [("a3", 1)]
    );
    let without_block = Gang::new("g")
        .role(workers(1).requirement(gang_core::request::Requirement::does_not_exist("block")));
    assert_eq!(
        inv.place(&without_block)
            .unwrap()
            .placement()
            .unwrap()
            .node_counts(),
        [("loose", 1)]
    );
    let with_rack = Gang::new("g")
        .role(workers(4).requirement(gang_core::request::Requirement::exists("rack")));
    assert!(inv.place(&with_rack).unwrap().is_placed());
}

#[test]
fn gangs_of_one_shape_share_the_solver_cache_and_stay_exact() {
    let mut inv = cluster(
        (1..=6)
            .map(|i| node(&format!("n{i}"), "b1", if i <= 3 { "a" } else { "b" }, 4))
            .collect(),
    );
    let job = |name: &str| Gang::new(name).role(workers(4)).required("rack");
    let mut solver = gang_core::Solver::new();
    for round in 0..5 {
        // A new compiled gang each round, of the same shape: found in the cache by shape.
        let compiled = inv.compile(&job(&format!("job{round}"))).unwrap();
        let warm = inv.place_with(&mut solver, &compiled).unwrap();
        let fresh = inv.place(&job(&format!("job{round}"))).unwrap();
        assert_eq!(warm.to_json(), fresh.to_json(), "round {round}");
        match warm.placement() {
            Some(p) => {
                inv.reserve(p).unwrap();
            }
            None => assert!(
                round >= 4,
                "24 GPUs hold five gangs of four only if racks allow"
            ),
        }
        inv.validate().unwrap();
    }
}

/// `replace` with another inventory's reservation id is an error naming both
/// inventories, as `release` is (and changes nothing).
#[test]
fn replace_with_another_inventorys_id_names_both() {
    let mut a = cluster(vec![node("a1", "b1", "a", 4)]);
    let mut b = a.clone();
    let gang = Gang::new("g").role(workers(2)).required("rack");
    let p = a.place(&gang).unwrap().placement().cloned().unwrap();
    let id = a.reserve(&p).unwrap();
    let err = b.replace(id).unwrap_err();
    assert_eq!(err.kind(), gang_core::ErrorKind::UnknownReservation);
    let text = err.to_string();
    assert!(
        text.contains(&id.inventory().to_string()) && text.contains(&b.id().to_string()),
        "{text}"
    );
    a.validate().unwrap();
    b.validate().unwrap();
}
