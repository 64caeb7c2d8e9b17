//! The bytes-per-node measurement works (the figure itself is reported by
//! `cargo run --release -p gang-benches --bin memory`, not asserted).

#[global_allocator]
static ALLOC: gang_benches::alloc::Counting = gang_benches::alloc::Counting;

use gang_benches::gen::{Cluster, Size, Spec};

#[test]
fn measures_an_inventory() {
    let cluster = Cluster::generate(&Spec::hgx(Size::K1, 50));
    let (report, inv) = gang_benches::memory::measure(&cluster).expect("allocator installed");
    assert_eq!(report.nodes, inv.len());
    assert!(report.inventory > report.names + report.labels);
    assert!(report.per_node_beyond_names_labels() > 0.0);
    assert!(report.per_node_beyond_strict() >= report.per_node_beyond_names_labels());
    assert!(report.build_peak >= report.inventory);
    assert!(report.to_string().contains("beyond names and labels"));
}
