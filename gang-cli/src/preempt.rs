//! Preemption as the CLI asks it: `gang preempt` (the what-if), and the line `gang
//! explain` adds when a workload with a priority does not fit. The running pods are
//! read as evictable work, one unit per workload (gang-kube), and gang-core chooses
//! the victims and words the answer (`Display` of its plan, [`no_plan_words`]); this
//! module only puts the pieces together.

use gang_core::lifecycle::{no_plan_words, PreemptOptions, PreemptOutcome};
use gang_core::{Outcome, Quantity};
use gang_kube::{ClusterOptions, Objects, PrioritySource, Resources, TopologySource, WorkloadGang};

use crate::cli::WorkloadChoice;
use crate::error::CliError;
use crate::report::{
    cluster_with, pick_workload, summary, warnings, ClusterSummary, ExplainReport, PlanDoc,
    PreemptAnswer, PreemptReport, Status, VictimDoc,
};

/// What gang-core's plan evicts and where the gang goes, as data and in its words.
fn plan_doc(plan: &gang_core::lifecycle::Preemption, resources: &[String]) -> PlanDoc {
    let p = plan.placement();
    let mut evicted = Resources::new();
    for r in resources {
        let q = plan.evicted(r);
        if q != Quantity::ZERO {
            evicted.insert(r.clone(), q);
        }
    }
    PlanDoc {
        fits_now: plan.victims().is_empty(),
        victims: plan
            .victims()
            .iter()
            .map(|v| VictimDoc {
                workload: v.name.clone(),
                priority: v.priority,
                evicted: v
                    .evicted
                    .iter()
                    .filter(|(_, q)| *q != Quantity::ZERO)
                    .cloned()
                    .collect(),
            })
            .collect(),
        evicted,
        level: p.level().map(str::to_owned),
        domain: p.domain_path(),
        assignments: p.assignments().to_vec(),
        search_complete: plan.search_complete(),
        message: plan.to_string(),
    }
}

/// What preempting would take for `w`: the cluster read again with the running pods
/// as evictable units, then gang-core's exact plan. A workload whose PriorityClass
/// says `preemptionPolicy: Never` gets no plan (it waits for room, as Kubernetes has
/// it).
///
/// # Errors
/// As [`gang_kube::Cluster::from_objects`] and [`gang_kube::Cluster::priority_of`] (a
/// `priorityClassName` no PriorityClass in the input has).
fn answer(
    objects: &Objects,
    topology: TopologySource,
    w: &WorkloadGang,
    extended_toleration: bool,
) -> Result<(PreemptAnswer, gang_kube::Cluster), CliError> {
    let opts = ClusterOptions::new()
        .topology(topology)
        .extended_resource_toleration(extended_toleration)
        .ignore_pods(&w.member_pods)
        .evictable_pods(true);
    let cluster = cluster_with(objects, &opts)?;
    let priority = cluster.priority_of(w)?;
    let inventory = cluster.inventory()?;
    let running = cluster.evictable().len();
    let lower_priority = cluster
        .evictable()
        .iter()
        .filter(|u| u.get_priority() < priority.value)
        .count();
    let options = PreemptOptions::default();
    let resources = options.get_cost_resources().to_vec();
    let mut a = PreemptAnswer {
        status: Status::Unschedulable,
        priority,
        running,
        lower_priority,
        plan: None,
        message: String::new(),
    };
    // Placing first maps an invalid request to the workload's fields, as `place` does.
    let outcome = cluster.place(&inventory, w)?;
    let undecided_now = matches!(outcome, Outcome::Undecided(_));
    let preempted = match outcome {
        Outcome::Placed(_) | Outcome::Undecided(_) if !a.priority.preempts => None,
        Outcome::Unschedulable(_) if !a.priority.preempts => {
            let class = a.priority.class.clone().unwrap_or_default();
            a.message = format!(
                "its PriorityClass {class} has preemptionPolicy: Never: it waits for room and evicts nothing"
            );
            return Ok((a, cluster));
        }
        _ => {
            let gang = cluster.gang_for(w)?;
            let compiled = inventory
                .compile(&gang)
                .map_err(|e| CliError::input(w.name(), e.to_string()))?;
            Some(
                inventory
                    .preempt_with(&mut gang_core::Solver::new(), &compiled, &options)
                    .map_err(|e| CliError::input(w.name(), e.to_string()))?,
            )
        }
    };
    match preempted {
        None => {
            a.status = if undecided_now {
                Status::Undecided
            } else {
                Status::Placed
            };
            a.message = "it fits now: nothing to evict".to_owned();
        }
        Some(PreemptOutcome::Placed(plan)) => {
            let doc = plan_doc(&plan, &resources);
            a.status = Status::Placed;
            a.message = doc.message.clone();
            a.plan = Some(doc);
        }
        Some(PreemptOutcome::Unschedulable(d)) => {
            let context = format!(
                "{} of {} running workloads have a lower priority than {}",
                a.lower_priority, a.running, a.priority.value
            );
            a.message = format!("{}: {d}", no_plan_words(false, Some(&context)));
        }
        Some(PreemptOutcome::Undecided(d)) => {
            a.status = Status::Undecided;
            a.message = format!("{}: {d}", no_plan_words(true, None));
        }
    }
    Ok((a, cluster))
}

/// `gang preempt`: the lower-priority running work to evict so the workload fits, and
/// where it goes then. Nothing is evicted.
///
/// # Errors
/// As [`crate::report::place`]; a `priorityClassName` no PriorityClass in the input
/// has.
pub fn preempt(
    objects: &Objects,
    choice: &WorkloadChoice,
    topology: TopologySource,
    source: &str,
    notes: &[String],
) -> Result<PreemptReport, CliError> {
    let w = pick_workload(objects, choice, source)?;
    let (preemption, cluster) = answer(objects, topology, &w, choice.extended_resource_toleration)?;
    let gang = cluster.gang_for(&w)?;
    Ok(PreemptReport {
        command: "preempt",
        status: preemption.status,
        exit_code: preemption.status.exit(),
        workload: summary(&w, Some(&gang)),
        topology: cluster.report().topology.clone(),
        cluster: ClusterSummary::of(&cluster),
        warnings: warnings(&cluster, &w, notes),
        preemption,
    })
}

/// Adds to an `explain` report what preempting would take, when the workload does not
/// fit now and has a priority of its own (`spec.priority`, a PriorityClass, or the
/// global default). A class the input lacks becomes a warning, not an error: the rest
/// of the checklist still stands.
///
/// # Errors
/// None: what stops the answer (a class the input lacks) becomes a warning.
pub fn add_to_explain(
    r: &mut ExplainReport,
    objects: &Objects,
    topology: TopologySource,
    extended_toleration: bool,
) -> Result<(), CliError> {
    if r.status != Status::Unschedulable {
        return Ok(());
    }
    let w = &r.workload_gang;
    // Without a priority of its own (no spec.priority, class or global default) there
    // is nothing to say, and the cluster is not read again.
    match gang_kube::workload_priority(objects, w) {
        Ok(p) if p.source == PrioritySource::None => return Ok(()),
        Ok(_) => {}
        Err(e) => {
            r.warnings.push(format!("preemption not answered: {e}"));
            return Ok(());
        }
    }
    match answer(objects, topology, w, extended_toleration) {
        Ok((a, _)) => r.preemption = Some(a),
        Err(e) => r.warnings.push(format!("preemption not answered: {e}")),
    }
    Ok(())
}
