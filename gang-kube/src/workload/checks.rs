//! The checklist every workload gets (members vs minimum, the shape of each member), and
//! the gang when the objects alone define it.

use crate::requests::Resources;
use crate::workload::gang::standalone_gang;
use crate::workload::types::{Check, CheckStatus, WorkloadGang};

fn shape_text(r: &Resources) -> String {
    let parts: Vec<String> = r
        .iter()
        .map(|(k, v)| format!("{k} {}", v.human(k)))
        .collect();
    parts.join(", ")
}

pub(super) fn finish(mut w: WorkloadGang, min_field: &str) -> WorkloadGang {
    // 2. members vs minimum (members, not GPUs)
    let total_gpus: u64 = w
        .roles
        .iter()
        .map(|r| {
            r.requests
                .iter()
                .filter(|(k, _)| k.ends_with("/gpu"))
                .map(|(_, q)| q.millis() / 1000)
                .sum::<u64>()
                * u64::from(r.members)
        })
        .sum();
    let gpus = if total_gpus > 0 {
        format!(" ({total_gpus} GPUs: members are pods, not GPUs)")
    } else {
        String::new()
    };
    let min_check = if w.members == 0 {
        None
    } else if w.minimum > w.members {
        Some(Check::new(
            "minimum",
            CheckStatus::Error,
            format!(
                "{min_field} {} is more than the {} members{gpus}: the group can never become ready",
                w.minimum, w.members
            ),
        ))
    } else if w.minimum < w.members {
        Some(Check::new(
            "minimum",
            CheckStatus::Warning,
            format!(
                "{min_field} {} of {} members{gpus}: the group may start short; only safe if the application and its controller are elastic",
                w.minimum, w.members
            ),
        ))
    } else {
        Some(Check::new(
            "minimum",
            CheckStatus::Ok,
            format!("{min_field} {} = {} members{gpus}", w.minimum, w.members),
        ))
    };
    w.checks.extend(min_check);
    // 3. per-member shape
    for r in &w.roles {
        let only_pods = r.requests.keys().all(|k| k == "pods");
        let (status, extra) = if only_pods {
            (
                CheckStatus::Warning,
                ": requests no resources, so any node fits it (are requests set on its containers?)",
            )
        } else {
            (CheckStatus::Ok, "")
        };
        w.checks.push(
            Check::new(
                "member_shape",
                status,
                format!(
                    "{} × {}: {} per member{extra}",
                    r.members,
                    r.name,
                    shape_text(&r.requests)
                ),
            )
            .role(&r.name),
        );
    }
    w.gang = standalone_gang(&w);
    w
}
