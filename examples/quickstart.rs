//! The main job on a built-in example: place a 4-worker rack-required gang, then look at
//! a snapshot where seven GPUs are free but no rack has four, and show the diagnosis and
//! what `preferred` would do instead.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```

use gang_core::{Error, Gang, Inventory, NodeSpec, Outcome, Role, Topology};

const BLOCK: &str = "topology.example.com/block";
const RACK: &str = "topology.example.com/rack";
const GPU: &str = "nvidia.com/gpu";

/// Two blocks, three racks, two 8-GPU nodes per rack, with `used[i]` GPUs taken.
fn cluster(used: [i64; 6]) -> Result<Inventory, Error> {
    let racks = [
        ("b1", "a"),
        ("b1", "a"),
        ("b1", "b"),
        ("b1", "b"),
        ("b2", "c"),
        ("b2", "c"),
    ];
    let nodes = racks
        .iter()
        .zip(used)
        .enumerate()
        .map(|(i, ((block, rack), used))| {
            NodeSpec::new(format!("{rack}{}", i % 2 + 1))
                .label(BLOCK, *block)
                .label(RACK, *rack)
                .capacity(GPU, 8)
                .capacity("cpu", 96)
                .used(GPU, used)
        });
    Inventory::builder(Topology::new([BLOCK, RACK])?)
        .nodes(nodes)
        .build()
}

fn show(title: &str, outcome: &Outcome) {
    println!("== {title}");
    match outcome {
        Outcome::Placed(p) => println!("{p}"),
        Outcome::Unschedulable(d) | Outcome::Undecided(d) => println!("{d}"),
    }
    println!();
}

fn main() -> Result<(), Error> {
    let workers = Role::new("worker", 4).request(GPU, 1);
    let required = Gang::new("training-workers")
        .role(workers.clone())
        .required(RACK);
    let preferred = Gang::new("training-workers").role(workers).preferred(RACK);

    let quiet = cluster([6, 6, 8, 8, 8, 8])?;
    show(
        "rack a has four free GPUs; rack required",
        &quiet.place(&required)?,
    );

    let busy = cluster([6, 7, 6, 8, 7, 7])?;
    show(
        "seven GPUs free, no rack has four; rack required",
        &busy.place(&required)?,
    );
    show(
        "the same snapshot; rack only preferred",
        &busy.place(&preferred)?,
    );
    Ok(())
}
