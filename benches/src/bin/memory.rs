//! Reports the heap bytes per node of built inventories.
//!
//! `cargo run --release -p gang-benches --bin memory [-- SIZE...]` with SIZE one of
//! `1k`, `10k`, `100k` (default `100k`).

use gang_benches::gen::{Cluster, Flavor, Size, Spec};

#[global_allocator]
static ALLOC: gang_benches::alloc::Counting = gang_benches::alloc::Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<Size> = if args.is_empty() {
        vec![Size::K100]
    } else {
        args.iter()
            .map(|a| match a.as_str() {
                "1k" => Size::K1,
                "10k" => Size::K10,
                "100k" => Size::K100,
                other => {
                    eprintln!("unknown size {other:?} (1k, 10k or 100k)");
                    std::process::exit(2);
                }
            })
            .collect()
    };
    for size in sizes {
        for flavor in [Flavor::Hgx, Flavor::Nvl72] {
            let cluster = Cluster::generate(&Spec::of(flavor, size, 50));
            let Some((report, inv)) = gang_benches::memory::measure(&cluster) else {
                eprintln!("the counting allocator is not installed");
                std::process::exit(1);
            };
            println!("== {} {} nodes, 50% used", flavor.as_str(), inv.len());
            println!("{report}\n");
        }
    }
}
