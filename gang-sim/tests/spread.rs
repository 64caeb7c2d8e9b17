//! A spread job that cannot be placed must not hold back an unconstrained gang of the
//! same roles (issue 25, item 16). Hand-computed: two racks, one 4-GPU node each; `hold`
//! takes one node for 10 h at 0; a `spread(2, rack)` job of one 4-GPU member per
//! replica cannot be placed while `hold` runs; an unconstrained 1×4 job arriving at
//! 0.5 h fits on the other node at once, so it starts at 0.5 h (not at 10 h).

use gang_sim::{Cluster, NodeSpec, SimConfig, SimResult, Simulation, Trace};

fn cluster() -> Cluster {
    let node = |n: &str, r: &str| {
        NodeSpec::new(n)
            .label("topology.example.com/rack", r)
            .capacity("nvidia.com/gpu", 4)
    };
    Cluster::from_nodes(
        &["topology.example.com/rack"],
        vec![node("a1", "a"), node("b1", "b")],
    )
    .unwrap()
}

fn run(trace: &str) -> SimResult {
    let config = SimConfig::from_json(r#"{"readiness": {"init_time": 0}}"#).unwrap();
    let trace = Trace::from_jsonl(trace).unwrap();
    Simulation::new(cluster(), trace, config)
        .unwrap()
        .run()
        .unwrap()
}

const HOLD: &str = r#"{"id": "hold", "submit": 0, "duration": 36000, "members": 1, "gpus": 4}"#;

#[test]
fn a_waiting_spread_does_not_block_an_unconstrained_gang_of_the_same_roles() {
    // `later` has the higher priority: it goes before the waiting spread in the queue.
    let t = format!(
        "{HOLD}\n\
         {{\"id\": \"spread\", \"submit\": 0, \"duration\": 60, \"members\": 1, \"gpus\": 4, \"policy\": \"spread(2, rack)\"}}\n\
         {{\"id\": \"later\", \"submit\": 1800, \"duration\": 60, \"members\": 1, \"gpus\": 4, \"priority\": 10}}\n"
    );
    let r = run(&t);
    let later = r.job("later").unwrap();
    assert_eq!(later.queue_delay, Some(0.0), "{later:?}");
    assert_eq!(later.completion, Some(60.0), "{later:?}");
    // The spread itself still waits for both racks: it starts when `hold` ends.
    assert_eq!(r.job("spread").unwrap().queue_delay, Some(36000.0));
}

#[test]
fn a_cancelled_spread_does_not_block_an_unconstrained_gang_of_the_same_roles() {
    let t = format!(
        "{HOLD}\n\
         {{\"id\": \"spread\", \"submit\": 0, \"duration\": 60, \"members\": 1, \"gpus\": 4, \"policy\": \"spread(2, rack)\", \"cancel\": 900}}\n\
         {{\"id\": \"later\", \"submit\": 1800, \"duration\": 60, \"members\": 1, \"gpus\": 4}}\n"
    );
    let r = run(&t);
    assert_eq!(r.job("spread").unwrap().state.as_str(), "cancelled");
    let later = r.job("later").unwrap();
    assert_eq!(later.queue_delay, Some(0.0), "{later:?}");
}
