//! Runnable examples for `gang`; see `quickstart.rs` and `place.rs`. The shared
//! scenario files live in `scenarios/` beside this file.

use std::path::PathBuf;

/// The directory of the shared scenario files.
pub fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Every scenario file, sorted by name.
pub fn scenario_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "json"));
    v.sort();
    v
}
