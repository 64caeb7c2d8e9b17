//! The layering rule of gang-core (docs/ARCHITECTURE.md): modules form one-way layers in
//! the order the data flows, and no two files import each other in a circle.
//!
//! The check (the workspace's dev-only `gang-layers` crate, shared with the other
//! crates) reads the crate's own sources, finds every `crate::…` and `super::…` path
//! outside `#[cfg(test)]` modules and doc comments, resolves each to the file that
//! defines it, and fails on
//! - an import from a lower layer to a higher one,
//! - a circle of imports between files (within a layer too),
//! - a path through the crate root's re-exports (`crate::Inventory`) outside `lib.rs`,
//!   which would hide the real edge.
//!
//! A directory's `mod.rs` declares its files and may use what they define; that is
//! ownership, not an import edge. A file using its parent (`super::Inventory`) is one.

use gang_layers::Rules;

/// Layers, lowest first. A file's layer is the first segment of its module path.
const RULES: Rules<'static> = Rules {
    layers: &[
        &["model"],
        &["inventory"],
        &["compile"],
        &["answer"],
        &["solve"],
        &["lifecycle"],
        &["json"],
        &["scenario"],
    ],
    // Modules that only tests compile.
    test_only: &["testkit"],
};

#[test]
fn every_dependency_points_down_and_no_files_form_a_circle() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    RULES.assert("gang-core", &src);
}
