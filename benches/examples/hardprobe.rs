//! Probe: one instance of `benches/data/issue15-hardest` placed once (`hardprobe i018`):
//! its domain, node count, whether the search was complete, and the time.
use gang_core::scenario::Scenario;
use gang_core::{Outcome, Solver};
use std::time::Instant;
fn main() {
    let name = std::env::args().nth(1).unwrap();
    let text =
        std::fs::read_to_string(format!("benches/data/issue15-hardest/{name}.json")).unwrap();
    let s = Scenario::from_json(&text).unwrap();
    let inv = s.inventory().unwrap();
    let c = inv.compile(&s.gang).unwrap();
    let mut solver = Solver::new();
    let t = Instant::now();
    let out = inv.place_with(&mut solver, &c).unwrap();
    let el = t.elapsed();
    match &out {
        Outcome::Placed(p) => println!(
            "{} nodes {} complete {} in {:?}",
            p.domain_path(),
            p.node_counts().len(),
            p.search_complete(),
            el
        ),
        o => println!("{:?} in {:?}", o.is_placed(), el),
    }
}
