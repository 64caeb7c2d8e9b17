//! Every shared scenario file through the `place` example binary.

use std::path::PathBuf;
use std::process::Command;

use gang_examples::scenario_files;

/// `target/<profile>/examples/place`, built by `cargo test` along with this test.
fn place_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples")
        .join(format!("place{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn every_scenario_through_the_binary() {
    let bin = place_binary();
    assert!(bin.exists(), "{} not built", bin.display());
    for path in scenario_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Lifecycle-only scenarios have steps and no top-level status to compare.
        let want = doc["expect"]["status"].as_str().unwrap_or("").to_owned();

        let out = Command::new(&bin).arg(&path).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: serde_json::Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{}: output is not JSON ({e}): {stdout}", path.display()));
        if !want.is_empty() {
            assert_eq!(got["status"], want.as_str(), "{}: {stdout}", path.display());
        }
        let code = out.status.code();
        if want == "error" {
            assert_eq!(code, Some(2), "{}", path.display());
            assert_eq!(
                got["kind"],
                doc["expect"]["error_kind"],
                "{}",
                path.display()
            );
            assert!(
                !out.stderr.is_empty(),
                "{}: no message on stderr",
                path.display()
            );
        } else {
            assert_eq!(code, Some(0), "{}", path.display());
        }

        let check = Command::new(&bin)
            .arg("--check")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let bin = place_binary();
    let dir = std::env::temp_dir().join(format!("gang-place-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"topology": {"levels": []}, "nodes": [], "gang": {"name": "g", "roles": [{"name": "w", "count": "four"}]}}"#).unwrap();
    let out = Command::new(&bin).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gang.roles[0].count"), "{err}");
    let missing = Command::new(&bin)
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let none = Command::new(&bin).output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    // A failing expectation makes --check fail.
    let wrong = dir.join("wrong.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&scenario_files()[0]).unwrap()).unwrap();
    doc["expect"]["status"] = "unschedulable".into();
    std::fs::write(&wrong, doc.to_string()).unwrap();
    let out = Command::new(&bin)
        .arg("--check")
        .arg(&wrong)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).ok();
}
