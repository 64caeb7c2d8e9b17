//! The layering rule of gang-kube (docs/ARCHITECTURE.md §3): its rooms form one-way
//! layers in the order the data flows (text → objects → cluster and workloads → a
//! workload against a cluster), and no two files import each other in a circle. The
//! check itself is the workspace's dev-only `gang-layers` crate, shared with gang-core.

use gang_layers::Rules;

/// Layers, lowest first; modules of one layer may use each other (without a circle).
const RULES: Rules<'static> = Rules {
    layers: &[
        &["origin"],
        &["error"],
        &["model"],
        &["objects"],
        &["convert", "requests", "admission"],
        &["topology"],
        &["cluster", "workload", "priority"],
        &["place"],
    ],
    test_only: &[],
};

#[test]
fn every_dependency_points_down_and_no_files_form_a_circle() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    RULES.assert("gang-kube", &src);
}
