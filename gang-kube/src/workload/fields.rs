//! Reading the fields every workload has: counts, topology levels, and a pod spec as a
//! role (requests, selector, affinity, tolerations).

use gang_core::Quantity;

use crate::convert::toleration;
use crate::error::{Error, ErrorKind};
use crate::model::core_v1::PodSpec;
use crate::origin::Origin;
use crate::requests::pod_requests;
use crate::workload::types::{LabelRequirement, Level, MemberRole, Warning};

pub(super) fn bad(
    origin: &Origin,
    field: impl Into<String>,
    value: impl Into<String>,
    reason: &str,
) -> Error {
    Error::new(ErrorKind::InvalidValue, &origin.source, reason.to_owned())
        .at(origin)
        .with_field(field)
        .with_value(value)
}

pub(super) fn count(
    origin: &Origin,
    field: &str,
    v: Option<i64>,
    default: u32,
) -> Result<u32, Error> {
    match v {
        None => Ok(default),
        Some(n) if n < 0 => Err(bad(
            origin,
            field,
            n.to_string(),
            "must be a count (0 or more)",
        )),
        Some(n) => u32::try_from(n).map_err(|_| {
            bad(
                origin,
                field,
                n.to_string(),
                &format!("is more than the {} members gang can place", u32::MAX),
            )
        }),
    }
}

/// A role of `members` pods of `spec` (read at `field`, e.g. `spec.template.spec`).
pub(super) fn role_from_spec(
    name: &str,
    members: u32,
    spec: &PodSpec,
    origin: &Origin,
    field: &str,
    warnings: &mut Vec<Warning>,
) -> Result<MemberRole, Error> {
    let mut requests = pod_requests(spec, None).map_err(|o| {
        Error::new(
            ErrorKind::InvalidValue,
            &origin.source,
            format!("the requests of {} overflow", o.0),
        )
        .at(origin)
        .with_field(field.to_owned())
    })?;
    requests.retain(|_, q| *q != Quantity::ZERO);
    requests.insert("pods".to_owned(), Quantity::from_units(1));
    let warn = |warnings: &mut Vec<Warning>, f: &str, m: String| {
        warnings.push(Warning {
            field: format!("{field}.{f}"),
            message: m,
        })
    };
    let mut requirements = Vec::new();
    if let Some(na) = &spec.affinity.node_affinity {
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            let terms = &req.node_selector_terms;
            if terms.len() > 1 {
                warn(
                    warnings,
                    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                    format!(
                        "{} node selector terms are alternatives (OR); gang-core takes one set of requirements: only the first term is used, so fewer nodes may be eligible",
                        terms.len()
                    ),
                );
            }
            if let Some(term) = terms.first() {
                let tf = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
                for (i, e) in term.match_expressions.iter().enumerate() {
                    match e.operator.as_str() {
                        "In" | "NotIn" | "Exists" | "DoesNotExist" => {
                            requirements.push(LabelRequirement {
                                key: e.key.clone(),
                                operator: e.operator.clone(),
                                values: e.values.clone(),
                            })
                        }
                        "Gt" | "Lt" => warn(
                            warnings,
                            &format!("{tf}.matchExpressions[{i}]"),
                            format!(
                                "{} {} {:?} is not expressible in gang-core and is not applied (more nodes may look eligible)",
                                e.key, e.operator, e.values
                            ),
                        ),
                        other => {
                            return Err(bad(
                                origin,
                                format!("{field}.{tf}.matchExpressions[{i}].operator"),
                                other,
                                "unknown operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)",
                            ))
                        }
                    }
                }
                if !term.match_fields.is_empty() {
                    warn(
                        warnings,
                        &format!("{tf}.matchFields"),
                        "matchFields (node names) are not applied".into(),
                    );
                }
            }
        }
        if !na
            .preferred_during_scheduling_ignored_during_execution
            .is_empty()
        {
            warn(
                warnings,
                "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                "preferred node affinity is a scoring preference; placement ignores it".into(),
            );
        }
    }
    if spec.affinity.pod_affinity.is_some() || spec.affinity.pod_anti_affinity.is_some() {
        warn(
            warnings,
            "affinity",
            "pod affinity and anti-affinity are not applied; the gang's topology request is".into(),
        );
    }
    if !spec.topology_spread_constraints.is_empty() {
        warn(
            warnings,
            "topologySpreadConstraints",
            "topology spread constraints are not applied".into(),
        );
    }
    if !spec.resource_claims.is_empty() {
        warn(
            warnings,
            "resourceClaims",
            "DRA resource claims are not counted (only node resources are)".into(),
        );
    }
    let mut tolerations = Vec::new();
    for (i, t) in spec.tolerations.iter().enumerate() {
        tolerations.push(
            toleration(t).map_err(|e| e.under(&format!("{field}.tolerations[{i}]")).at(origin))?,
        );
    }
    let priority = match spec.priority {
        None => None,
        Some(v) => Some(i32::try_from(v).map_err(|_| {
            Error::new(
                ErrorKind::InvalidValue,
                &origin.source,
                "a priority is a 32-bit integer",
            )
            .at(origin)
            .with_field(format!("{field}.priority"))
            .with_value(v.to_string())
        })?),
    };
    Ok(MemberRole {
        name: name.to_owned(),
        members,
        min_count: None,
        requests,
        node_selector: spec.node_selector.clone(),
        requirements,
        tolerations,
        constrained: true,
        from: field.to_owned(),
        pods: Vec::new(),
        priority,
        priority_class_name: Some(spec.priority_class_name.clone()).filter(|c| !c.is_empty()),
    })
}

pub(super) fn level_value(origin: &Origin, field: &str, v: &str) -> Result<Level, Error> {
    let ok = !v.is_empty()
        && v.len() <= 316
        && !v.contains(char::is_whitespace)
        && v.rsplit('/').next().is_some_and(|n| !n.is_empty());
    if ok {
        Ok(Level::Key(v.to_owned()))
    } else {
        Err(bad(
            origin,
            field,
            v,
            "not a topology level (a node label key)",
        ))
    }
}
