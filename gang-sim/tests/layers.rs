//! The layering rule of gang-sim (docs/ARCHITECTURE.md §3, "Layers inside gang-sim"):
//! modules form one-way layers in the order the data flows, and no two files import each
//! other in a circle. The check itself is the workspace's dev-only `gang-layers` crate,
//! shared with gang-core and gang-kube; file lengths are checked for the whole workspace
//! by `dev/layers/tests/workspace.rs`.

use gang_layers::Rules;

/// Layers, lowest first; modules of one layer may use each other (without a circle).
const RULES: Rules<'static> = Rules {
    layers: &[
        &["error", "rng", "csv", "textio", "unique"],
        &["config", "placer"],
        &["trace", "output", "table"],
        &["workload", "generate", "import", "load"],
        &["sim"],
        &["run", "experiment"],
    ],
    test_only: &[],
};

#[test]
fn every_dependency_points_down_and_no_files_form_a_circle() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    RULES.assert("gang-sim", &src);
}
