//! Fixtures shared by the unit tests of several modules.

use crate::{Gang, Inventory, NodeSpec, Placement, Topology};

pub const GPU: &str = "nvidia.com/gpu";

/// A node in rack `block`/`rack` with `gpus` GPUs.
pub fn node(name: &str, block: &str, rack: &str, gpus: i64) -> NodeSpec {
    on_path(name, &[block, rack]).capacity(GPU, gpus)
}

/// A node labelled with `path`'s values for the levels `block`, then `rack` (a shorter
/// path leaves the inner levels unlabelled).
pub fn on_path(name: &str, path: &[&str]) -> NodeSpec {
    ["block", "rack"]
        .iter()
        .zip(path)
        .fold(NodeSpec::new(name), |spec, (key, value)| {
            spec.label(*key, *value)
        })
}

/// `(block, rack (3: none), GPUs used)` per node, 8 GPUs each, named `n0`, `n1`, ...:
/// the small block/rack clusters the property tests of the cache, the masks and the
/// rack index draw.
pub fn eight_gpu_nodes(nodes: &[(u8, u8, i64)]) -> Inventory {
    let specs = nodes
        .iter()
        .enumerate()
        .map(|(i, &(b, r, used))| {
            let (block, rack) = (format!("b{b}"), format!("r{r}"));
            let path: Vec<&str> = match r {
                3 => vec![&block],
                _ => vec![&block, &rack],
            };
            on_path(&format!("n{i}"), &path)
                .capacity(GPU, 8)
                .used(GPU, used)
        })
        .collect();
    build(&["block", "rack"], specs)
}

/// A validated inventory of `nodes` with topology `levels`.
pub fn build(levels: &[&str], nodes: Vec<NodeSpec>) -> Inventory {
    let inv = Inventory::builder(Topology::new(levels.iter().copied()).unwrap())
        .nodes(nodes)
        .build()
        .unwrap();
    inv.validate().unwrap();
    inv
}

/// The placement of `gang`, which must fit, checked by `validate`.
pub fn placed(inv: &Inventory, gang: &Gang) -> Placement {
    let p = inv.place(gang).unwrap().placement().cloned().unwrap();
    p.validate(inv).unwrap();
    p
}
