//! Preemption in the simulation (`"preemption": "lower-priority"`), on a case worked
//! out by hand.
//!
//! One node `n1` with 8 GPUs in rack `a`; every job `required(rack)`, members start at
//! once (`init_time` 0), so a job runs from the moment it is placed, on one node
//! (slowdown 1).
//!
//! - `low`: priority 0, submitted at 0, 8 one-GPU workers, 3,600 s of work, a
//!   checkpoint every 600 s. It takes the whole node at 0.
//! - `high`: priority 10, submitted at 1,000, 4 one-GPU workers, 600 s of work.
//!
//! With preemption on, at 1,000 `high` does not fit (0 GPUs free) and gang-core's plan
//! evicts `low` (the only lower-priority job). `low` has run 1,000 s: its checkpoint
//! at 600 s is kept, 400 s are lost — 8 GPUs × 400 s = 3,200 GPU·s = 0.888… GPU-hours.
//! `low` re-enters the queue with 3,600 − 600 = 3,000 s of work left; `high` runs
//! 1,000–1,600 (completion 600 s). `low` cannot evict `high` (lower priority) and waits
//! until `high` ends at 1,600, then runs 1,600–4,600: completion 4,600 s, run time
//! 1,000 + 3,000 = 4,000 s, two attempts.
//!
//! With preemption off, `high` waits for `low` to finish at 3,600 and runs 3,600–4,200
//! (completion 3,200 s); nothing is evicted and no preemption field is written. With
//! `low` marked `"preemption_policy": "Never"`, preemption changes nothing.

use gang_sim::{
    Cluster, JobSpec, NodeSpec, PreemptionPolicy, SimConfig, SimResult, Simulation, Trace,
};

fn run(preemption: &str, low_policy: Option<PreemptionPolicy>) -> SimResult {
    let cluster = Cluster::from_nodes(
        &["rack"],
        vec![NodeSpec::new("n1")
            .label("rack", "a")
            .capacity("nvidia.com/gpu", 8)],
    )
    .unwrap();
    let mut low = JobSpec::new("low", 0.0, 3600.0, 8, 1);
    low.checkpoint = Some(600.0);
    low.preemption_policy = low_policy;
    let mut high = JobSpec::new("high", 1000.0, 600.0, 4, 1);
    high.priority = 10;
    let config = SimConfig::from_json(&format!(
        r#"{{"policy": "required(rack)", "readiness": {{"init_time": 0}},
            "preemption": "{preemption}", "check_invariants": true}}"#
    ))
    .unwrap();
    Simulation::new(cluster, Trace::new(vec![low, high]), config)
        .unwrap()
        .run()
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn the_high_priority_job_evicts_the_low_one_which_loses_its_work_since_the_checkpoint() {
    let r = run("lower-priority", None);
    let (low, high) = (r.job("low").unwrap(), r.job("high").unwrap());
    assert_eq!(high.first_admitted, Some(1000.0));
    assert_eq!(high.queue_delay, Some(0.0));
    assert_eq!(high.completion, Some(600.0));
    assert_eq!(low.first_admitted, Some(0.0));
    assert_eq!(low.admitted, Some(1600.0));
    assert_eq!(low.completion, Some(4600.0));
    assert_eq!(low.run_time, 4000.0);
    assert_eq!(low.attempts, 2);
    assert_eq!((low.restarts, low.lost_work_hours), (0, 0.0)); // not a node failure
    let lp = low.preemption.as_ref().unwrap();
    assert_eq!((lp.evictions, lp.preemptions), (1, 0));
    assert!(close(lp.lost_work_hours, 400.0 / 3600.0));
    assert!(close(lp.gpu_hours_lost, 8.0 * 400.0 / 3600.0));
    // The lost work is the job's only waste; its useful GPU-time is the full job.
    assert!(close(low.gpu_hours_wasted, 8.0 * 400.0 / 3600.0));
    assert!(close(low.gpu_hours_useful, 8.0 * 3600.0 / 3600.0));
    let hp = high.preemption.as_ref().unwrap();
    assert_eq!((hp.evictions, hp.preemptions), (0, 1));
    let s = r.summary.preemption.as_ref().unwrap();
    assert_eq!((s.evictions, s.jobs_evicted, s.preemptions), (1, 1, 1));
    assert!(close(s.gpu_hours_lost, 8.0 * 400.0 / 3600.0));
    assert_eq!(r.summary.all.states["completed"], 2);
}

#[test]
fn with_preemption_off_the_high_job_waits_and_no_preemption_field_is_written() {
    let r = run("off", None);
    let (low, high) = (r.job("low").unwrap(), r.job("high").unwrap());
    assert_eq!(low.completion, Some(3600.0));
    assert_eq!(high.first_admitted, Some(3600.0));
    assert_eq!(high.completion, Some(3200.0));
    assert!(low.preemption.is_none() && r.summary.preemption.is_none());
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["summary"].get("preemption").is_none());
    assert!(json["jobs"][0].get("preemption").is_none());
    // The configuration document does not name the option either.
    let config = serde_json::to_value(SimConfig::default()).unwrap();
    assert!(config.get("preemption").is_none());
}

/// The summary row (`summary_row`, the tables gang.sim builds) carries what preemption
/// did: the case above's one eviction, one job evicted, one preemption, 8 GPUs × 400 s;
/// empty with preemption off, and in a tenant's row (it is counted over the run).
#[test]
fn the_summary_row_carries_evictions_and_gpu_hours_lost() {
    use gang_sim::{summary_row, CompletionBasis};
    let row = |preemption: &str, tenant: Option<&str>| {
        let summary = serde_json::to_value(&run(preemption, None).summary).unwrap();
        summary_row("v", &summary, tenant, CompletionBasis::Censored).unwrap()
    };
    let on = row("lower-priority", None);
    assert_eq!(
        (
            on["evictions"].as_u64(),
            on["jobs_evicted"].as_u64(),
            on["preemptions"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert!(close(
        on["gpu_hours_lost"].as_f64().unwrap(),
        8.0 * 400.0 / 3600.0
    ));
    let off = row("off", None);
    for k in ["evictions", "jobs_evicted", "preemptions", "gpu_hours_lost"] {
        assert!(off[k].is_null(), "{k}: {}", off[k]);
        assert!(row("lower-priority", Some("default"))[k].is_null(), "{k}");
    }
}

#[test]
fn a_never_job_is_not_evicted() {
    let r = run("lower-priority", Some(PreemptionPolicy::Never));
    let (low, high) = (r.job("low").unwrap(), r.job("high").unwrap());
    assert_eq!(low.completion, Some(3600.0));
    assert_eq!(high.completion, Some(3200.0));
    assert_eq!(low.preemption.as_ref().unwrap().evictions, 0);
    assert_eq!(r.summary.preemption.as_ref().unwrap().evictions, 0);
}

#[test]
fn the_trace_reads_the_preemption_policy_and_rejects_an_unknown_one() {
    let t = Trace::from_jsonl(
        r#"{"id": "a", "submit": 0, "duration": 60, "members": 1, "gpus": 1, "preemption_policy": "Never"}"#,
    )
    .unwrap();
    assert_eq!(t.jobs[0].preemption_policy, Some(PreemptionPolicy::Never));
    let again = Trace::from_jsonl(&t.jobs[0].to_json().to_string()).unwrap();
    assert_eq!(
        again.jobs[0].preemption_policy,
        Some(PreemptionPolicy::Never)
    );
    assert!(JobSpec::new("b", 0.0, 1.0, 1, 1)
        .to_json()
        .get("preemption_policy")
        .is_none());
    let err = Trace::from_jsonl(
        r#"{"id": "a", "submit": 0, "duration": 60, "members": 1, "gpus": 1, "preemption_policy": "Sometimes"}"#,
    )
    .unwrap_err();
    assert_eq!(err.field(), "preemption_policy");
    let csv =
        Trace::from_csv("id,submit,duration,members,gpus,preemption_policy\na,0,60,1,1,Never\n")
            .unwrap();
    assert_eq!(csv.jobs[0].preemption_policy, Some(PreemptionPolicy::Never));
}

#[test]
fn a_priority_beyond_32_bits_is_an_error_naming_the_field_when_preemption_is_on() {
    let cluster = Cluster::from_nodes(
        &["rack"],
        vec![NodeSpec::new("n1")
            .label("rack", "a")
            .capacity("nvidia.com/gpu", 8)],
    )
    .unwrap();
    let mut j = JobSpec::new("j", 0.0, 60.0, 1, 1);
    j.priority = i64::from(i32::MAX) + 1;
    let on = SimConfig::from_json(r#"{"preemption": "lower-priority"}"#).unwrap();
    let err = Simulation::new(cluster.clone(), Trace::new(vec![j.clone()]), on)
        .err()
        .unwrap();
    assert_eq!((err.kind(), err.field()), ("invalid_trace", "priority"));
    // Off: priorities only order the queue, any i64 is fine.
    assert!(Simulation::new(cluster, Trace::new(vec![j]), SimConfig::default()).is_ok());
}

mod random {
    use gang_sim::{
        Cluster, FinalState, JobSpec, NodeSpec, RecoveryMode, SimConfig, Simulation, Trace,
    };
    use proptest::prelude::*;

    fn cluster() -> Cluster {
        let node = |n: String, rack: &str| {
            NodeSpec::new(n)
                .label("rack", rack)
                .capacity("nvidia.com/gpu", 4)
        };
        let nodes = ["a", "b"]
            .iter()
            .flat_map(|r| (0..2).map(move |i| node(format!("{r}{i}"), r)))
            .collect();
        Cluster::from_nodes(&["rack"], nodes).unwrap()
    }

    const POLICIES: [&str; 5] = [
        "required(rack)",
        "unconstrained",
        "timed(rack, 300)",
        "spread(2, rack)",
        "no-gang",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

        /// Random traces with preemption on: every invariant holds after every event
        /// (checks on), the GPU-time adds up, only one-gang jobs take part, and every
        /// evicted job had a lower priority than some job that preempted.
        #[test]
        fn invariants_hold_with_preemption_on(
            jobs in prop::collection::vec(
                (0u32..3000, 1u32..4000, 1u32..6, 1u64..4, 0usize..5, 0i64..3,
                 prop::option::of(1u32..1000), any::<bool>(), prop::bool::weighted(0.2)),
                1..10),
            rate in prop::sample::select(vec![0.0, 0.5]),
            seed in 0u64..1000,
        ) {
            let trace = Trace::new(
                jobs.iter()
                    .enumerate()
                    .map(|(i, &(submit, duration, members, gpus, p, priority, checkpoint, replace, never))| {
                        let mut s = JobSpec::new(&format!("j{i}"), f64::from(submit), f64::from(duration), members, gpus);
                        s.policy = Some(serde_json::from_value(POLICIES[p].into()).unwrap());
                        s.priority = priority;
                        s.checkpoint = checkpoint.map(f64::from);
                        s.recovery = Some(if replace { RecoveryMode::Replace } else { RecoveryMode::Restart });
                        if never {
                            s.preemption_policy = Some(gang_sim::PreemptionPolicy::Never);
                        }
                        s
                    })
                    .collect(),
            );
            let config = SimConfig::from_json(&format!(
                r#"{{"seed": {seed}, "check_invariants": true, "preemption": "lower-priority",
                    "failures": {{"node_rate_per_hour": {rate}, "repair_time": 900}},
                    "horizon": 200000, "sample_interval": 250}}"#
            ))
            .unwrap();
            let r = Simulation::new(cluster(), trace, config).unwrap().run()
                .map_err(|e| TestCaseError::fail(format!("{e}")))?;
            let top = r.jobs.iter()
                .filter(|j| j.preemption.as_ref().unwrap().preemptions > 0)
                .map(|j| j.priority)
                .max();
            for (j, input) in r.jobs.iter().zip(&jobs) {
                let sum = j.gpu_hours_useful + j.gpu_hours_wasted + j.gpu_hours_idle;
                prop_assert!((j.gpu_hours_held - sum).abs() < 1e-9);
                let p = j.preemption.as_ref().unwrap();
                prop_assert!(p.gpu_hours_lost <= j.gpu_hours_wasted + 1e-9);
                if p.evictions > 0 {
                    prop_assert!(input.4 < 3, "{} is spread or no-gang", j.id);
                    prop_assert!(!input.8, "{} is Never", j.id);
                    prop_assert!(top.is_some_and(|t| t > j.priority));
                }
                if p.preemptions > 0 {
                    prop_assert!(input.4 < 3);
                }
                if j.state == FinalState::Completed {
                    prop_assert!(j.completion.unwrap() + 1e-9 >= f64::from(input.1));
                }
            }
            let s = r.summary.preemption.as_ref().unwrap();
            prop_assert_eq!(s.evictions, r.jobs.iter().map(|j| u64::from(j.preemption.as_ref().unwrap().evictions)).sum::<u64>());
        }
    }
}
