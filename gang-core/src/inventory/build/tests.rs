//! The memo of [`Input::read`] against the plain path: the same inventory, the same
//! errors, on generated clusters whose nodes share, reorder and vary their names.

use super::*;
use crate::model::node::TaintEffect;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Nodes that mostly look like their neighbours (one pool's labels, resources and taints
/// in one order) and sometimes do not: labels, resources and taints reordered, left out
/// or added, values changed, a level missing, cordoned nodes, repeated taints.
fn cluster(seed: u64, len: usize) -> Vec<NodeSpec> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let keys = [
        "zone",
        "block",
        "rack",
        "pool",
        "kubernetes.io/hostname",
        "gpu.product",
    ];
    let values = ["a", "b", "c", "h100", "x", "b"];
    let resources = ["cpu", "memory", "nvidia.com/gpu", "pods", "example.com/nic"];
    let taints = [
        Taint::new("nvidia.com/gpu", "present", TaintEffect::NoSchedule),
        Taint::new("nvidia.com/gpu", "present", TaintEffect::NoExecute),
        Taint::new("dedicated", "ml", TaintEffect::NoSchedule),
    ];
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        // Now and then a name given before: the build fails, the same way either way.
        let name = match rng.below(150) {
            0 => rng.below(i as u64 + 1) as usize,
            _ => i,
        };
        let mut spec = NodeSpec::new(format!("n{name}"));
        if rng.below(5) == 0 {
            spec = spec.cordoned();
        }
        let mut order: Vec<usize> = (0..keys.len()).collect();
        if rng.below(4) == 0 {
            order.swap(rng.below(6) as usize, rng.below(6) as usize);
        }
        for &k in &order {
            if rng.below(10) == 0 {
                continue;
            }
            let v = match k {
                4 => format!("n{i}"),
                2 => format!("r{}", i / 4 + rng.below(2) as usize),
                _ => rng.pick(&values).to_owned(),
            };
            spec = spec.label(keys[k], v);
        }
        let mut rs: Vec<usize> = (0..resources.len()).collect();
        if rng.below(4) == 0 {
            rs.swap(rng.below(5) as usize, rng.below(5) as usize);
        }
        for &r in &rs {
            if rng.below(6) != 0 {
                spec = spec.capacity(resources[r], rng.below(16) as i64);
            }
            if rng.below(3) == 0 {
                spec = spec.used(resources[r], rng.below(8) as i64);
            }
        }
        for _ in 0..rng.below(3) {
            spec = spec.taint(taints[rng.below(3) as usize].clone());
        }
        out.push(spec);
    }
    out
}

fn topologies() -> Vec<Topology> {
    vec![
        Topology::flat(),
        Topology::new(["zone", "block", "rack"]).unwrap(),
        Topology::new(["block", "kubernetes.io/hostname"]).unwrap(),
        Topology::new(["pool"]).unwrap(),
    ]
}

#[test]
fn the_memo_builds_what_the_plain_path_builds() {
    let mut built = 0;
    for seed in 0..60 {
        let nodes = cluster(seed, 1 + (seed as usize * 7) % 90);
        for t in topologies() {
            Inventory::check_build(t.clone(), &nodes)
                .unwrap_or_else(|d| panic!("seed {seed}, {t:?}:\n{d}"));
            built += usize::from(Inventory::from_nodes(t, &nodes).is_ok());
        }
    }
    // Most generated clusters build (a duplicate name is the usual error).
    assert!(built > 120, "{built}");
}

#[test]
fn the_memo_reports_what_the_plain_path_reports() {
    // A bad label value, resource name or taint after the neighbours' good ones, a bad
    // quantity, a duplicate name: the same error either way.
    let good = |i: usize| {
        NodeSpec::new(format!("n{i}"))
            .label("zone", "a")
            .label("rack", format!("r{i}"))
            .capacity("cpu", 4)
            .taint(Taint::new("k", "v", TaintEffect::NoSchedule))
    };
    let bad = [
        NodeSpec::new("b")
            .label("zone", "a")
            .label("rack", "bad value!"),
        NodeSpec::new("b").label("zone", "a").label("bad key!", "x"),
        NodeSpec::new("b")
            .label("zone", "a")
            .capacity("cpu", "lots"),
        NodeSpec::new("b")
            .label("zone", "a")
            .capacity("bad name!", 1),
        NodeSpec::new("b").taint(Taint::new("k", "bad value!", TaintEffect::NoSchedule)),
        NodeSpec::new("n1").label("zone", "a"),
    ];
    for b in bad {
        let nodes = vec![good(0), good(1), good(2), b, good(3)];
        let t = Topology::new(["zone", "rack"]).unwrap();
        assert!(Inventory::from_nodes(t.clone(), &nodes).is_err());
        Inventory::check_build(t, &nodes).unwrap();
    }
}

#[test]
fn a_pool_of_alike_nodes_builds_the_same_either_way() {
    // The snapshot's shape: every node the same keys, resources and taint in one order.
    let nodes: Vec<NodeSpec> = (0..300)
        .map(|i| {
            NodeSpec::new(format!("node-{i}"))
                .label("arch", "amd64")
                .label("block", format!("b{}", i / 100))
                .label("subblock", format!("s{}", i / 20))
                .label("host", format!("h{i}"))
                .label("kubernetes.io/hostname", format!("node-{i}"))
                .capacity("cpu", 206)
                .capacity("nvidia.com/gpu", 8)
                .capacity("pods", 110)
                .used("cpu", (i % 7) as i64)
                .taint(Taint::new(
                    "nvidia.com/gpu",
                    "present",
                    TaintEffect::NoSchedule,
                ))
        })
        .collect();
    let t = Topology::new(["block", "subblock", "host"]).unwrap();
    Inventory::check_build(t.clone(), &nodes).unwrap();
    let inv = Inventory::from_nodes(t, &nodes).unwrap();
    assert_eq!((inv.len(), inv.keys.len(), inv.taints.len()), (300, 5, 1));
}
