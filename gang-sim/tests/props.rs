//! Determinism, and every invariant on small random traces (the simulation checks them
//! after every event when `check_invariants` is on; a violation is an error).

use gang_sim::{
    Cluster, FinalState, JobSpec, NodeSpec, Policy, RecoveryMode, SimConfig, SimResult, Simulation,
    Trace, WorkloadSpec,
};
use proptest::prelude::*;

const RACK: &str = "topology.example.com/rack";
const BLOCK: &str = "topology.example.com/block";

fn small_cluster() -> Cluster {
    let mut nodes = Vec::new();
    for (b, racks) in [("b1", ["r1", "r2"]), ("b2", ["r1", "r2"])] {
        for r in racks {
            for n in 0..2 {
                nodes.push(
                    NodeSpec::new(format!("{b}-{r}-n{n}"))
                        .label(BLOCK, b)
                        .label(RACK, r)
                        .capacity("nvidia.com/gpu", 4),
                );
            }
        }
    }
    Cluster::from_nodes(&[BLOCK, RACK], nodes).unwrap()
}

fn busy_run(seed: u64, workload_seed: u64) -> SimResult {
    busy_run_with(seed, workload_seed, false)
}

fn busy_run_with(seed: u64, workload_seed: u64, via_admit: bool) -> SimResult {
    let w = WorkloadSpec {
        jobs: 60,
        seed: workload_seed,
        max_members: 8,
        member_gpus: 2,
        duration_median: 1800.0,
        arrival: gang_sim::Arrival::Poisson { per_hour: 20.0 },
        ..WorkloadSpec::default()
    };
    let mut trace = w.generate().unwrap();
    for (i, j) in trace.jobs.iter_mut().enumerate() {
        j.policy = Some(match i % 5 {
            0 => Policy::Required {
                level: "rack".into(),
            },
            1 => Policy::Timed {
                level: "rack".into(),
                after: 600.0,
            },
            2 => Policy::Preferred {
                level: "rack".into(),
            },
            3 => Policy::NoGang,
            _ => Policy::Unconstrained,
        });
        if i % 7 == 0 {
            j.recovery = Some(RecoveryMode::Replace);
        }
    }
    let config = SimConfig::from_json(&format!(
        r#"{{"seed": {seed}, "check_invariants": true,
            "queue": {{"discipline": "backfill", "via_admit": {via_admit}}},
            "readiness": {{"init_failure": 0.05}},
            "failures": {{"node_rate_per_hour": 0.02, "repair_time": 1800}},
            "sample_interval": 300}}"#
    ))
    .unwrap();
    Simulation::new(small_cluster(), trace, config)
        .unwrap()
        .run()
        .unwrap()
}

#[test]
fn same_seed_same_bytes_different_seed_different_run() {
    let a = busy_run(7, 3);
    let b = busy_run(7, 3);
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.jobs_csv(), b.jobs_csv());
    assert_eq!(a.timeline_csv(), b.timeline_csv());
    assert_eq!(a.summary_json(), b.summary_json());
    // Something random happened at all (or the comparison below would prove nothing).
    assert!(
        a.jobs.iter().any(|j| j.node_failures > 0),
        "no node failure"
    );
    assert!(
        a.jobs.iter().any(|j| j.readiness_failures > 0),
        "no init failure"
    );
    // Another seed of the simulation (failures, init failures) changes the run.
    let c = busy_run(8, 3);
    assert_ne!(a.to_json(), c.to_json());
    // Another workload seed changes the trace itself.
    let d = busy_run(7, 4);
    assert_ne!(a.jobs_csv(), d.jobs_csv());
}

#[test]
fn backfill_on_the_warm_solver_equals_gang_core_admit() {
    for w in [3, 9] {
        let fast = busy_run_with(7, w, false);
        let reference = busy_run_with(7, w, true);
        assert_eq!(
            fast.jobs_jsonl(),
            reference.jobs_jsonl(),
            "workload seed {w}"
        );
        // Jobs did overtake earlier ones (by backfill, or relaxation), so the runs are
        // not trivially equal.
        let waited_behind = fast.jobs.iter().any(|j| {
            fast.jobs.iter().any(|k| {
                k.submit < j.submit
                    && k.first_admitted
                        .zip(j.first_admitted)
                        .is_some_and(|(a, b)| a > b)
            })
        });
        assert!(waited_behind, "no job ever went ahead of an earlier one");
    }
}

#[test]
fn run_json_is_deterministic_too() {
    let doc = r#"{"cluster": {"generate": {"flavor": "nvl72", "racks": 4}},
                  "trace": {"generate": {"jobs": 40, "seed": 2, "max_members": 16, "member_gpus": 4}},
                  "config": {"seed": 5, "policy": "timed(rack, 900)",
                             "failures": {"node_rate_per_hour": 0.01}}}"#;
    let a = gang_sim::run_json(doc).unwrap();
    assert_eq!(a, gang_sim::run_json(doc).unwrap());
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["jobs"].as_array().unwrap().len(), 40);
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Unconstrained),
        Just(Policy::Required {
            level: "rack".into()
        }),
        Just(Policy::Required {
            level: "block".into()
        }),
        Just(Policy::Preferred {
            level: "rack".into()
        }),
        (0u32..3).prop_map(|k| Policy::Timed {
            level: "rack".into(),
            after: f64::from(k) * 300.0
        }),
        Just(Policy::NoGang),
        Just(Policy::Spread {
            replicas: 2,
            level: "rack".into()
        }),
    ]
}

#[derive(Debug, Clone)]
struct JobIn {
    submit: u32,
    duration: u32,
    members: u32,
    gpus: u64,
    policy: Policy,
    cancel: Option<u32>,
    failing: u32,
    replace: bool,
    checkpoint: Option<u32>,
    priority: i64,
}

fn job_strategy() -> impl Strategy<Value = JobIn> {
    (
        (0u32..3000, 1u32..4000, 1u32..7, 1u64..5),
        policy_strategy(),
        prop::option::weighted(0.2, 0u32..4000),
        prop::bool::weighted(0.1),
        any::<bool>(),
        prop::option::of(1u32..1000),
        0i64..3,
    )
        .prop_map(
            |(
                (submit, duration, members, gpus),
                policy,
                cancel,
                failing,
                replace,
                checkpoint,
                priority,
            )| JobIn {
                submit,
                duration,
                members,
                gpus,
                policy,
                cancel,
                failing: u32::from(failing),
                replace,
                checkpoint,
                priority,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_traces(
        jobs in prop::collection::vec(job_strategy(), 1..10),
        backfill in any::<bool>(),
        timeout in prop::option::of(100u32..700),
        rate in prop::sample::select(vec![0.0, 0.05, 0.5]),
        init_failure in prop::sample::select(vec![0.0, 0.1]),
        replace_timeout in prop::option::of(0u32..2000),
        seed in 0u64..1000,
    ) {
        let trace = Trace::new(
            jobs.iter()
                .enumerate()
                .map(|(i, j)| {
                    let mut s = JobSpec::new(&format!("j{i}"), f64::from(j.submit), f64::from(j.duration), j.members, j.gpus);
                    s.policy = Some(j.policy.clone());
                    s.cancel = j.cancel.map(|c| f64::from(j.submit + c));
                    s.failing_members = j.failing;
                    s.recovery = Some(if j.replace { RecoveryMode::Replace } else { RecoveryMode::Restart });
                    s.checkpoint = j.checkpoint.map(f64::from);
                    s.priority = j.priority;
                    s
                })
                .collect(),
        );
        let config = SimConfig::from_json(&format!(
            r#"{{"seed": {seed}, "check_invariants": true,
                "queue": {{"discipline": "{}"}},
                "readiness": {{"timeout": {}, "init_failure": {init_failure}, "max_attempts": 3}},
                "failures": {{"node_rate_per_hour": {rate}, "repair_time": 900}},
                "recovery": {{"replace_timeout": {}}},
                "horizon": 200000, "sample_interval": 250}}"#,
            if backfill { "backfill" } else { "fifo" },
            timeout.map_or("null".to_owned(), |t| t.to_string()),
            replace_timeout.map_or("null".to_owned(), |t| t.to_string()),
        ))
        .unwrap();
        let r = Simulation::new(small_cluster(), trace, config).unwrap().run();
        let r = match r {
            Ok(r) => r,
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        prop_assert_eq!(r.jobs.len(), jobs.len());
        for (j, input) in r.jobs.iter().zip(&jobs) {
            let sum = j.gpu_hours_useful + j.gpu_hours_wasted + j.gpu_hours_idle;
            prop_assert!((j.gpu_hours_held - sum).abs() < 1e-9, "{}: {} vs {}", j.id, j.gpu_hours_held, sum);
            prop_assert!(j.gpu_hours_before_progress <= j.gpu_hours_held + 1e-9);
            if let Some(q) = j.queue_delay {
                prop_assert!(q >= 0.0);
            }
            match j.state {
                FinalState::Completed => {
                    // At least the ideal run time (slowdowns are >= 1), after start-up.
                    let c = j.completion.unwrap();
                    prop_assert!(c + 1e-9 >= f64::from(input.duration) + 60.0, "{}: {c}", j.id);
                    prop_assert!(j.all_ready.is_some() && j.end.is_some());
                    prop_assert!(input.failing == 0);
                }
                FinalState::NeverFits => {
                    prop_assert_eq!(j.gpu_hours_held, 0.0);
                    prop_assert_eq!(j.attempts, 0);
                    prop_assert!(!j.reason.is_empty());
                }
                FinalState::Cancelled => prop_assert!(input.cancel.is_some()),
                FinalState::Failed => prop_assert!(j.readiness_failures == 3),
                FinalState::Unfinished => prop_assert!(!j.reason.is_empty()),
            }
        }
        // Jobs hold what the cluster held, in total.
        let held: f64 = r.jobs.iter().map(|j| j.gpu_hours_held).sum();
        prop_assert!((held - r.summary.all.gpu_hours_held).abs() < 1e-6);
        prop_assert!(r.timeline.windows(2).all(|w| w[0].time < w[1].time));
        prop_assert!(r.timeline.iter().all(|s| s.held_gpus <= r.summary.cluster_gpus + 1e-9));
    }
}
