//! Every shared scenario file, through the library.

use std::path::PathBuf;

use gang_core::scenario::Scenario;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/scenarios exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_scenario_meets_its_expectations() {
    let files = files();
    assert!(files.len() >= 20, "scenario files missing: {}", files.len());
    let mut failed = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let scenario =
            Scenario::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            scenario.expect.is_some() || !scenario.steps.is_empty(),
            "{} has neither an expect block nor steps",
            path.display()
        );
        let report = scenario.check();
        if !report.passed() {
            failed.push(format!(
                "{}:\n  {}",
                path.display(),
                report.failures.join("\n  ")
            ));
        }
        // Determinism: a second run gives the same JSON, byte for byte.
        let again = scenario.check();
        let json = |r: &gang_core::scenario::ScenarioReport| match &r.outcome {
            Ok(o) => o.to_json(),
            Err(e) => e.to_json(),
        };
        assert_eq!(json(&report), json(&again), "{}", path.display());
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn scenarios_round_trip_through_json() {
    for path in files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let s = Scenario::from_json(&text).unwrap();
        let back = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(s, back, "{}", path.display());
    }
}

#[test]
fn a_broken_expectation_is_reported() {
    // The checker itself must be able to fail.
    let text = std::fs::read_to_string(files()[0].clone()).unwrap();
    let mut s = Scenario::from_json(&text).unwrap();
    let e = s.expect.as_mut().unwrap();
    e.status = Some("unschedulable".into());
    e.nodes.as_mut().unwrap().insert("a1".into(), 3);
    e.message_contains.push("no such text".into());
    let r = s.check();
    assert_eq!(r.failures.len(), 3, "{:?}", r.failures);
}

#[test]
fn scenario_parse_errors_name_the_path() {
    let e = Scenario::from_json(r#"{"topology": {"levels": []}, "nodes": [], "gang": {"name": "g", "roles": [{"name": "w", "count": -1}]}}"#).unwrap_err();
    assert_eq!(e.kind(), gang_core::ErrorKind::InvalidScenario);
    assert_eq!(e.field(), "gang.roles[0].count");
    let e = Scenario::from_json(r#"{"topology": {"levels": []}, "nodes": [{"name": "a", "colour": "red"}], "gang": {"name": "g", "roles": []}}"#).unwrap_err();
    assert!(e.field().starts_with("nodes[0]"), "{e}");
    assert!(e.to_string().contains("colour"), "{e}");
    let e = Scenario::from_json("{} trailing").unwrap_err();
    assert_eq!(e.kind(), gang_core::ErrorKind::InvalidScenario);
    let e = Scenario::from_json("not json").unwrap_err();
    assert_eq!(e.kind(), gang_core::ErrorKind::InvalidScenario);
}

/// The documents in `examples/scenarios/invalid/` are refused when read, each with the
/// error `expected.json` names (duplicate map keys, nesting beyond the parser's limit).
#[test]
fn invalid_documents_are_refused_with_the_expected_error() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/invalid");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let docs = expected["documents"].as_object().expect("documents");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "expected.json" {
            continue;
        }
        let want = docs
            .get(&name)
            .unwrap_or_else(|| panic!("{name} has no entry in expected.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        let err = Scenario::from_json(&text).expect_err(&name);
        assert_eq!(err.kind().as_str(), want["error_kind"], "{name}: {err}");
        if let Some(field) = want.get("error_field") {
            assert_eq!(err.field(), field, "{name}: {err}");
        }
        for sub in want["message_contains"].as_array().unwrap() {
            let sub = sub.as_str().unwrap();
            assert!(
                err.to_string().contains(sub),
                "{name}: {sub:?} not in {err}"
            );
        }
        seen += 1;
    }
    assert_eq!(seen, docs.len(), "every listed document exists");
}

/// The golden paragraph beside a scenario (`NAME.txt`, reviewed by hand against the
/// scenario's nodes) is the diagnosis's `Display`, and its sentences joined; the Python,
/// C and Go tests compare their faces' text with the same files.
#[test]
fn golden_paragraphs_are_the_diagnosis_display() {
    let mut checked = 0;
    for path in files() {
        let Ok(golden) = std::fs::read_to_string(path.with_extension("txt")) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let report = Scenario::from_json(&text).unwrap().check();
        let outcome = report.outcome.as_ref().unwrap();
        let d = outcome
            .diagnosis()
            .unwrap_or_else(|| panic!("{}", path.display()));
        assert_eq!(d.to_string(), golden.trim_end(), "{}", path.display());
        let joined: Vec<String> = d.sentences().into_iter().map(|(_, s)| s).collect();
        assert_eq!(joined.join(" "), golden.trim_end(), "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 6, "{checked} golden paragraphs");
}
