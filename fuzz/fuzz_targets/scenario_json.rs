//! Arbitrary bytes as a scenario document: never a panic; either a typed error naming a
//! field, or a scenario that reads back from its own JSON unchanged, builds a valid
//! inventory, and whose outcome passes `validate()`; its lifecycle `steps` never break
//! the inventory's invariants. Seeded with `examples/scenarios/*.json`; the dictionary
//! `fuzz/scenario_json.dict` holds the format's keys and values.

#![no_main]

use gang_core::scenario::Scenario;
use gang_core::{ErrorKind, Outcome};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match Scenario::from_json(text) {
        Ok(s) => s,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidScenario, "{e}");
            assert!(!e.field().is_empty(), "{e}");
            return;
        }
    };
    // What `to_json` writes, `from_json` reads back as the same scenario.
    let again = Scenario::from_json(&scenario.to_json()).expect("a scenario's own JSON");
    assert_eq!(
        again, scenario,
        "to_json then from_json changed the scenario"
    );
    let inv = match scenario.inventory() {
        Ok(inv) => inv,
        Err(e) => {
            assert!(!e.field().is_empty(), "{e}");
            return;
        }
    };
    inv.validate().expect("inventory invariants");
    // `check` places the gang once more (and validates the placement), then runs the
    // steps, validating the inventory after each.
    let report = scenario.check();
    match &report.outcome {
        Ok(Outcome::Placed(p)) => {
            p.validate(&inv).expect("placement invariants");
            assert!(report.outcome.as_ref().unwrap().to_json().starts_with('{'));
        }
        Ok(o) => assert!(!o.diagnosis().unwrap().to_string().is_empty()),
        Err(e) => {
            assert!(!e.field().is_empty(), "{e}");
            assert!(e.to_json().starts_with('{'));
        }
    }
    for f in &report.failures {
        assert!(!broken_invariant(f), "{f}");
    }
});

/// Whether a failure of `check` is a broken invariant rather than an unmet expectation:
/// `placement invalid: …`, or `step {i} ({op}): inventory invariant broken: …`. Only
/// the prefix is read: user text (names, messages) comes after it.
fn broken_invariant(f: &str) -> bool {
    if f.starts_with("placement invalid:") {
        return true;
    }
    let Some(rest) = f.strip_prefix("step ") else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let Some(rest) = rest.strip_prefix(" (") else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    rest.starts_with("): inventory invariant broken")
}
