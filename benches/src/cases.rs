//! The gangs the benchmarks place, shared with the tests.
//!
//! Members request one GPU plus a share of CPU and memory (half the node's CPU per GPU,
//! a quarter of its memory per GPU), as a training worker pod would; GPUs are what
//! binds on a fragmented cluster.

use gang_core::{Gang, Role};

use crate::gen::{Spec, BLOCK, CPU, GPU, MEMORY, RACK};

/// The topology constraint of a single-role case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constraint {
    /// `required: rack`.
    RequiredRack,
    /// `required: block`.
    RequiredBlock,
    /// `preferred: rack` (walks up to block, zone, then splits cluster-wide).
    PreferredRack,
    /// Neither: cluster-wide, still all-or-nothing.
    Unconstrained,
}

impl Constraint {
    /// Every constraint, in report order.
    pub const ALL: [Constraint; 4] = [
        Constraint::RequiredRack,
        Constraint::RequiredBlock,
        Constraint::PreferredRack,
        Constraint::Unconstrained,
    ];

    /// `required-rack` style name.
    pub fn as_str(self) -> &'static str {
        match self {
            Constraint::RequiredRack => "required-rack",
            Constraint::RequiredBlock => "required-block",
            Constraint::PreferredRack => "preferred-rack",
            Constraint::Unconstrained => "unconstrained",
        }
    }

    /// Applies the constraint to `gang`.
    pub fn apply(self, gang: Gang) -> Gang {
        match self {
            Constraint::RequiredRack => gang.required(RACK),
            Constraint::RequiredBlock => gang.required(BLOCK),
            Constraint::PreferredRack => gang.preferred(RACK),
            Constraint::Unconstrained => gang,
        }
    }
}

/// Milli-CPU a worker asks for on `spec`'s nodes (half a GPU's share of the node).
pub fn worker_cpu_millis(spec: &Spec) -> u64 {
    spec.cpu_cores * 1000 / spec.gpus.max(1) / 2
}

/// Memory (GiB) a worker asks for (a quarter of a GPU's share of the node).
pub fn worker_memory_gib(spec: &Spec) -> u64 {
    spec.memory_gib / spec.gpus.max(1) / 4
}

/// A one-GPU worker role of `count` members. `salt` bytes are added to its memory
/// request: a different salt makes a new request shape (for cold queries) without
/// changing any answer in practice.
pub fn worker(spec: &Spec, count: u32, salt: u64) -> Role {
    Role::new("worker", count)
        .request(GPU, 1)
        .request(CPU, format!("{}m", worker_cpu_millis(spec)))
        .request(
            MEMORY,
            (worker_memory_gib(spec) * (1 << 30) + salt).to_string(),
        )
}

/// Requests of [`worker`] as `(resource index in RESOURCES, milli-units)`, for the floor.
pub fn worker_columns(spec: &Spec) -> [(usize, u64); 3] {
    [
        (0, 1000),
        (1, worker_cpu_millis(spec)),
        (2, worker_memory_gib(spec) * (1 << 30) * 1000),
    ]
}

/// A single-role gang of `count` workers under `constraint`.
pub fn single(spec: &Spec, constraint: Constraint, count: u32) -> Gang {
    single_salted(spec, constraint, count, 0)
}

/// [`single`] with a salted request shape (see [`worker`]).
pub fn single_salted(spec: &Spec, constraint: Constraint, count: u32, salt: u64) -> Gang {
    constraint.apply(Gang::new("train").role(worker(spec, count, salt)))
}

/// A launcher (CPU only, anywhere), 32 one-GPU workers and 4 CPU-heavy parameter
/// servers, the workers and servers in one rack (`salt`: see [`worker`]).
pub fn three_role(spec: &Spec, salt: u64) -> Gang {
    Gang::new("train-ps")
        .role(
            Role::new("launcher", 1)
                .request(CPU, 2)
                .request(MEMORY, "8Gi")
                .unconstrained(),
        )
        .role(worker(spec, 32, salt))
        .role(Role::new("ps", 4).request(CPU, 16).request(MEMORY, "128Gi"))
        .required(RACK)
}

/// 64 workers in one block, in slices of 16 per rack (`salt`: see [`worker`]).
pub fn sliced(spec: &Spec, salt: u64) -> Gang {
    Gang::new("train-sliced")
        .role(worker(spec, 64, salt))
        .required(BLOCK)
        .slice(RACK, 16)
}

/// One more whole-node worker than a rack has nodes, rack required: never fits, so
/// every call takes the diagnosis path (and its "relaxing to block" search).
pub fn infeasible(spec: &Spec) -> Gang {
    let count = spec.nodes_per_rack as u32 + 1;
    Gang::new("too-big")
        .role(
            Role::new("worker", count)
                .request(GPU, spec.gpus)
                .request(CPU, format!("{}m", worker_cpu_millis(spec))),
        )
        .required(RACK)
}

/// Racks of 4 nodes with 3 GPUs and 4 CPUs each, `nodes` in all: the multi-role
/// bench's cluster (`--bench multi`, `multiprobe`, `multidigest`).
pub fn racks_of_four(nodes: usize) -> gang_core::Inventory {
    gang_core::Inventory::builder(gang_core::Topology::new(["rack"]).unwrap())
        .nodes((0..nodes).map(|i| {
            gang_core::NodeSpec::new(format!("n{i:06}"))
                .label("rack", format!("r{:05}", i / 4))
                .capacity("gpu", 3)
                .capacity("cpu", 4)
        }))
        .build()
        .unwrap()
}

/// Roles a (4) and b (2) of two GPUs each, rack required (on [`racks_of_four`]: each
/// role alone fits a rack, both never); `elastic` gives them minimums 2 and 1,
/// `launcher` adds an unconstrained one-CPU launcher.
pub fn ab(elastic: bool, launcher: bool) -> Gang {
    let (a, b) = if elastic {
        (
            Role::new("a", 4).min_count(2).request("gpu", 2),
            Role::new("b", 2).min_count(1).request("gpu", 2),
        )
    } else {
        (
            Role::new("a", 4).request("gpu", 2),
            Role::new("b", 2).request("gpu", 2),
        )
    };
    let g = Gang::new("ab").role(a).role(b).required("rack");
    if launcher {
        g.role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
    } else {
        g
    }
}
