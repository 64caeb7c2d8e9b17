//! Arbitrary bytes as a scenario document: never a panic; either a typed error or an
//! outcome whose placement passes `validate()` against a valid inventory.

#![no_main]

use gang_core::Outcome;
use gang_core::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = Scenario::from_json(text) else {
        return;
    };
    let Ok(inv) = scenario.inventory() else {
        return;
    };
    inv.validate().expect("inventory invariants");
    match inv.place(&scenario.gang) {
        Ok(Outcome::Placed(p)) => p.validate(&inv).expect("placement invariants"),
        Ok(o) => assert!(!o.diagnosis().unwrap().to_string().is_empty()),
        Err(e) => assert!(!e.field().is_empty()),
    }
    let _ = scenario.check();
});
