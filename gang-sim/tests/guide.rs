//! The guides' questions, answered by the experiment files in `examples/sim/`, with
//! their conclusions asserted. Every expected number is worked out by hand in the
//! comments (init_time is 60 s unless a file says otherwise).

use gang_sim::{Experiment, FinalState, JobRecord, SimResult};

fn run(file: &str) -> Vec<(String, SimResult)> {
    let path = format!("{}/../examples/sim/{file}", env!("CARGO_MANIFEST_DIR"));
    Experiment::from_file(&path)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .run()
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn job<'a>(results: &'a [(String, SimResult)], variant: &str, id: &str) -> &'a JobRecord {
    let (_, r) = results
        .iter()
        .find(|(n, _)| n == variant)
        .unwrap_or_else(|| panic!("no variant {variant}"));
    r.job(id).unwrap_or_else(|| panic!("no job {id}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn small_low_sensitivity_experiment_should_not_insist_on_a_rack() {
    let r = run("01-small-experiment.json");
    let exp = |v| job(&r, v, "experiment");
    // Rack required: no rack has 4 free GPUs until bg1 ends (admitted 0, ready 60, runs
    // 10800: ends 10860); then one node holds all four (span node, x1.0): ready 10920,
    // ends 14520; submitted at 60: completion 14460, of which 10800 s waiting.
    let req = exp("rack required");
    assert_eq!(
        (req.queue_delay, req.completion),
        (Some(10_800.0), Some(14_460.0))
    );
    assert_eq!((req.run_time, req.span.as_deref()), (3600.0, Some("node")));
    // Unconstrained: 3 + 1 GPUs on two nodes of one block at once (x1.10 for low):
    // ready 120, runs 3960, ends 4080: completion 4020.
    let any = exp("unconstrained");
    assert_eq!((any.queue_delay, any.completion), (Some(0.0), Some(4020.0)));
    assert_eq!(any.span.as_deref(), Some("topology.example.com/block"));
    assert_eq!(any.slowdown, Some(1.10));
    // Preferred walks up at once: the same placement.
    assert_eq!(exp("rack preferred").completion, Some(4020.0));
    // Timed: rack for 600 s, then block: placed at 660, ready 720, ends 4680: 4620.
    let timed = exp("timed: rack for 10 min");
    assert_eq!(
        (timed.queue_delay, timed.completion),
        (Some(600.0), Some(4620.0))
    );
    // The conclusion: the rack run is faster, yet the job completes far later.
    assert!(req.run_time < any.run_time);
    assert!(any.completion < timed.completion && timed.completion < req.completion);
}

#[test]
fn communication_bound_job_is_worth_the_wait_for_a_block() {
    let r = run("02-communication-bound.json");
    let t = |v| job(&r, v, "train64");
    // 64 workers x 2 GPUs = 128 GPUs = two racks: never in one rack.
    let rack = t("rack required");
    assert_eq!(rack.state, FinalState::NeverFits);
    assert!(
        rack.reason.contains("does not fit in one rack"),
        "{}",
        rack.reason
    );
    assert!(rack.reason.contains("Relaxing to block"), "{}", rack.reason);
    assert_eq!((rack.attempts, rack.gpu_hours_held), (0, 0.0));
    // Block required: block b1 has two free racks when bg-b1-r1 ends (60 + 7200 = 7260):
    // ready 7320, 28800 x 3.5 (high, one block) = 100800: ends 108120; completion 108060.
    let block = t("block required");
    assert_eq!(
        (block.queue_delay, block.completion),
        (Some(7200.0), Some(108_060.0))
    );
    assert_eq!(block.span.as_deref(), Some("topology.example.com/block"));
    // Unconstrained: the free rack of two blocks at once, x6 beyond a block:
    // ready 120, 172800 s: completion 172860.
    let any = t("unconstrained");
    assert_eq!(
        (any.queue_delay, any.completion),
        (Some(0.0), Some(172_860.0))
    );
    assert_eq!(
        (any.span.as_deref(), any.slowdown),
        (Some("cluster"), Some(6.0))
    );
    // Timed relaxation gives up on the block after an hour and pays x6: 3660 + 60 +
    // 172800 - 60.
    assert_eq!(t("timed: block for 1 h").completion, Some(176_460.0));
    // The conclusion: waiting for the block wins, by 18 hours.
    assert_eq!(
        any.completion.unwrap() - block.completion.unwrap(),
        18.0 * 3600.0
    );
}

#[test]
fn a_gang_that_fits_runs_at_once() {
    let r = run("03a-fits.json");
    let j = job(&r, "gang", "fits");
    assert_eq!(j.state, FinalState::Completed);
    assert_eq!(
        (j.queue_delay, j.time_to_ready, j.completion),
        (Some(0.0), Some(60.0), Some(3660.0))
    );
    // 8 GPUs for 3660 s; only the 60 s of start-up before progress.
    assert!(close(j.gpu_hours_held, 8.0 * 3660.0 / 3600.0));
    assert!(close(j.gpu_hours_before_progress, 8.0 * 60.0 / 3600.0));
    assert_eq!(j.gpu_hours_wasted, 0.0);
}

#[test]
fn a_gang_that_cannot_fit_never_starts_holds_nothing_and_says_why() {
    let r = run("03b-never-fits.json");
    let big = job(&r, "gang", "too-big");
    assert_eq!(big.state, FinalState::NeverFits);
    assert_eq!(
        (big.attempts, big.first_admitted, big.gpu_hours_held),
        (0, None, 0.0)
    );
    assert!(
        big.reason.contains("Cluster-wide 2 of 4 worker fit"),
        "{}",
        big.reason
    );
    // Not retried, so it does not block the job behind it.
    assert_eq!(job(&r, "gang", "small").queue_delay, Some(0.0));
}

#[test]
fn two_competing_gangs_and_the_no_gang_deadlock() {
    let r = run("03c-competing.json");
    let (a, b) = (job(&r, "gang (FIFO)", "A"), job(&r, "gang (FIFO)", "B"));
    // A runs whole (ends 3660); B waits holding nothing, then runs whole.
    assert_eq!(
        (a.completion, b.queue_delay, b.completion),
        (Some(3660.0), Some(3660.0), Some(7320.0))
    );
    assert!(close(b.gpu_hours_held, 8.0 * 3660.0 / 3600.0)); // nothing while waiting
    assert!(close(b.gpu_hours_before_progress, 8.0 * 60.0 / 3600.0));
    // Without gang scheduling the members interleave: 4 + 4, and both wait for ever
    // (here until the 7200 s horizon), each holding 4 GPUs: 8 GPU-hours idle each.
    for id in ["A", "B"] {
        let j = job(&r, "no gang, no readiness timeout", id);
        assert_eq!(j.state, FinalState::Unfinished);
        assert!(
            j.reason.contains("deadlocked: holds 4 of 8 members"),
            "{}",
            j.reason
        );
        assert!(close(j.gpu_hours_held, 8.0) && close(j.gpu_hours_idle, 8.0));
        assert_eq!(j.all_ready, None);
    }
    // With a readiness timeout they release and retry together, deadlock again, and
    // fail after 5 attempts: 5 x 300 s x 4 GPUs = 1.667 GPU-hours each, all wasted.
    for id in ["A", "B"] {
        let j = job(&r, "no gang, readiness timeout 300 s", id);
        assert_eq!(
            (j.state, j.attempts, j.readiness_failures),
            (FinalState::Failed, 5, 5)
        );
        assert!(close(j.gpu_hours_wasted, 5.0 * 300.0 * 4.0 / 3600.0));
        assert!(j.reason.contains("only 4 of 8 members"), "{}", j.reason);
    }
}

#[test]
fn a_member_that_never_initialises_times_out_backs_off_and_fails() {
    let r = run("03d-init-failure.json");
    let j = job(&r, "gang", "broken");
    // Attempts at 0, 360 (300 + 60), 780 (660 + 120); the third times out at 1080.
    assert_eq!(
        (j.state, j.attempts, j.readiness_failures),
        (FinalState::Failed, 3, 3)
    );
    assert_eq!((j.admitted, j.end), (Some(780.0), Some(1080.0)));
    assert!(
        j.reason
            .contains("readiness timeout (300 s) on each of 3 attempts"),
        "{}",
        j.reason
    );
    // 3 x 300 s x 4 GPUs = 1 GPU-hour held before any progress, all of it wasted.
    assert!(close(j.gpu_hours_before_progress, 1.0));
    assert!(close(j.gpu_hours_wasted, 1.0) && close(j.gpu_hours_held, 1.0));
    assert_eq!(j.all_ready, None);
    let h = job(&r, "gang", "healthy");
    assert_eq!(
        (h.state, h.completion),
        (FinalState::Completed, Some(3660.0))
    );
}

#[test]
fn cancellation_while_waiting_releases_nothing_and_while_running_everything() {
    let r = run("03e-cancel.json");
    let waiter = job(&r, "gang (FIFO)", "waiter");
    assert_eq!(
        (waiter.state, waiter.gpu_hours_held, waiter.attempts),
        (FinalState::Cancelled, 0.0, 0)
    );
    assert!(waiter.reason.contains("while waiting"));
    let big = job(&r, "gang (FIFO)", "big");
    assert_eq!((big.state, big.end), (FinalState::Cancelled, Some(1000.0)));
    assert!(close(big.gpu_hours_held, 8.0 * 1000.0 / 3600.0));
    // `after` (submitted at 20) starts the moment big's GPUs come back.
    let after = job(&r, "gang (FIFO)", "after");
    assert_eq!(
        (after.queue_delay, after.completion),
        (Some(980.0), Some(1640.0))
    );
}

#[test]
fn node_failure_replacement_in_domain_versus_restart_from_checkpoint() {
    let r = run("03f-node-failure.json");
    // train runs on rack a from 60; a1 fails at 1800: 1740 s into the segment, two
    // 600 s checkpoints kept (1200 s of work), 540 s lost: 8 GPUs x 540 s = 1.2 GPU-h.
    for v in ["replace in domain", "restart from checkpoint"] {
        let t = job(&r, v, "train");
        assert_eq!(t.node_failures, 1);
        assert!(close(t.lost_work_hours, 540.0 / 3600.0), "{v}");
        assert!(close(t.gpu_hours_wasted, 1.2), "{v}");
        assert_eq!(t.span.as_deref(), Some("topology.example.com/rack"));
    }
    // Replace: rack a has no room until a1 is repaired (1800 + 86400 = 88200), even
    // after rack b frees at 10860; then 60 s start-up and the 2400 s left: 90660.
    let rep = job(&r, "replace in domain", "train");
    assert_eq!((rep.replacements, rep.restarts, rep.attempts), (1, 0, 1));
    assert_eq!(rep.completion, Some(90_660.0));
    // Restart: released at 1800, takes rack b when `other` ends (10860): ready 10920,
    // ends 13320.
    let res = job(&r, "restart from checkpoint", "train");
    assert_eq!((res.replacements, res.restarts, res.attempts), (0, 1, 2));
    assert_eq!(res.completion, Some(13_320.0));
    // Seen at 20000 s, the replacement is pending, bound to rack a although b has room.
    let seen = job(&r, "replace in domain, seen at 20000 s", "train");
    assert_eq!(seen.state, FinalState::Unfinished);
    assert!(
        seen.reason
            .contains("rack b has room, but the gang is bound to rack a"),
        "{}",
        seen.reason
    );
    assert!(seen.reason.contains("(job train)"), "{}", seen.reason);
}

#[test]
fn a_repeatedly_failing_workload_does_not_consume_the_queue() {
    let r = run("03g-failing-workload.json");
    let (_, with) = &r[0];
    let broken = with.job("broken").unwrap();
    assert_eq!((broken.state, broken.attempts), (FinalState::Failed, 5));
    // Stated bound: a healthy job waits at most the readiness timeout (300 s) plus two
    // healthy runs (2 x (60 + 600)): the broken job holds the cluster at most 300 s at
    // a time, and ahead of it run at most the two jobs the cluster holds.
    let bound = 300.0 + 2.0 * 660.0;
    let others = &with.summary.by_tenant["others"];
    assert_eq!(others.states["completed"], 24);
    let p95 = others.queue_delay.p95.unwrap();
    assert!(p95 <= bound, "p95 wait {p95} above {bound}");
    assert!(others.queue_delay.max.unwrap() <= bound);
    // Without a readiness timeout the broken job holds the whole cluster for ever.
    let (_, without) = &r[1];
    assert_eq!(without.summary.by_tenant["others"].states["unfinished"], 24);
    assert!(without
        .job("n0")
        .unwrap()
        .reason
        .contains("waiting when the simulation ended"));
}
