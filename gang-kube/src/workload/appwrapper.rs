//! AppWrapper (`workload.codeflare.dev/v1beta2`): the pod sets of its components, as
//! Kueue reads them: `podSets[].replicas` pods of the pod template at `podSets[].path`
//! inside the component (`template.spec.template` for a Job). Without `podSets` (the
//! webhook fills them on admission) the component's pod template is found for a Pod or
//! a Job; other kinds must list their pod sets.

use serde::Deserialize;

use crate::error::Error;
use crate::model::appwrapper::AppWrapperObj;
use crate::model::core_v1::PodTemplate;
use crate::origin::Origin;
use crate::workload::controlled::{template_role, Controlled};
use crate::workload::fields::{bad, count};
use crate::workload::types::Framework;

/// The value at a dotted `path` (`template.spec.template`, `a.b[0].c`) inside `root`.
fn at_path<'v>(root: &'v serde_json::Value, path: &str) -> Option<&'v serde_json::Value> {
    let mut v = root;
    for part in path.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, rest)) => (k, Some(rest.strip_suffix(']')?.parse::<usize>().ok()?)),
            None => (part, None),
        };
        if !key.is_empty() {
            v = v.get(key)?;
        }
        if let Some(i) = index {
            v = v.get(i)?;
        }
    }
    Some(v)
}

pub(super) fn appwrapper<'a>(
    o: &'a AppWrapperObj,
    origin: &'a Origin,
) -> Result<Controlled<'a>, Error> {
    let mut warnings = Vec::new();
    let (mut roles, mut reqs) = (Vec::new(), Vec::new());
    for (c, comp) in o.spec.components.iter().enumerate() {
        let cf = format!("spec.components[{c}]");
        let kind = comp
            .template
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("");
        let inferred;
        let sets: Vec<(Option<i64>, &str, String)> = if comp.pod_sets.is_empty() {
            inferred = match kind {
                "Pod" => (None, "template"),
                "Job" => (
                    at_path(&comp.template, "spec.parallelism").and_then(|v| v.as_i64()),
                    "template.spec.template",
                ),
                other => {
                    return Err(bad(
                        origin,
                        format!("{cf}.podSets"),
                        other,
                        "not given: list the pod sets of this component (replicas and path), as the AppWrapper webhook records them (kubectl get appwrapper -o yaml)",
                    ))
                }
            };
            vec![(inferred.0, inferred.1, format!("{cf}.template"))]
        } else {
            comp.pod_sets
                .iter()
                .enumerate()
                .map(|(i, p)| (p.replicas, p.path.as_str(), format!("{cf}.podSets[{i}]")))
                .collect()
        };
        for (i, (replicas, path, pf)) in sets.into_iter().enumerate() {
            let replicas = count(origin, &format!("{pf}.replicas"), replicas, 1)?;
            if replicas == 0 {
                continue;
            }
            let rel = path
                .strip_prefix("template")
                .unwrap_or(path)
                .trim_start_matches('.');
            let value = if rel.is_empty() {
                Some(&comp.template)
            } else {
                at_path(&comp.template, rel)
            };
            let value = value.ok_or_else(|| {
                bad(
                    origin,
                    format!("{pf}.path"),
                    path,
                    "names nothing inside the component's template",
                )
            })?;
            let field = format!("{cf}.{path}");
            let tpl = PodTemplate::deserialize(value)
                .map_err(|e| bad(origin, &field, "", &format!("not a pod template: {e}")))?;
            let name =
                format!("{}{}", if kind.is_empty() { "component" } else { kind }, c).to_lowercase();
            let name = if i == 0 { name } else { format!("{name}-{i}") };
            let (r, q) = template_role(&name, replicas, &tpl, origin, &field, &mut warnings)?;
            roles.push(r);
            reqs.push(q);
        }
    }
    Ok(Controlled::new(
        origin,
        &o.metadata,
        Framework::AppWrapper,
        roles,
        reqs,
        warnings,
    ))
}
