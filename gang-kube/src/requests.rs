//! A pod's resource requests, counted exactly as kube-scheduler counts them.
//!
//! This follows `PodRequests` in Kubernetes' `k8s.io/component-helpers/resource`
//! (which the scheduler's `NodeResourcesFit` plugin and its node accounting call):
//!
//! 1. Regular containers are summed.
//! 2. Init containers are taken in order. A restartable init container
//!    (`restartPolicy: Always`, a sidecar) keeps running: its requests join the regular
//!    sum, and the running total of sidecars grows. A plain init container runs alone
//!    with the sidecars started before it: its peak is its own requests plus that total.
//! 3. Per resource, the pod takes the larger of (containers + sidecars) and the highest
//!    init peak.
//! 4. Pod-level `spec.resources.requests` (PodLevelResources), where set for a resource
//!    the feature supports (`cpu`, `memory`, `hugepages-*`), replace that aggregate.
//! 5. `spec.overhead` (RuntimeClass overhead) is added.
//!
//! Every pod also counts one against the node's `pods` allocatable; that is added by the
//! callers, not here.
//!
//! Decisions:
//! - **Limits as requests.** The API server defaults a container's missing request to its
//!   limit, per resource (and pod-level requests from pod-level limits), when the pod is
//!   created. Live objects (`kubectl get -o json`) are already defaulted, so applying the
//!   same rule changes nothing for them; pod templates (a Job's `spec.template`) are not,
//!   and the rule gives the requests their pods will have. So gang-kube always applies it.
//! - **In-place resize.** For pods already bound to a node, the scheduler counts, per
//!   container, the larger of the spec, the kubelet's `allocatedResources` and the
//!   applied `resources` in `status.containerStatuses` (only the latter two when the
//!   resize is `Infeasible`), as `InPlacePodVerticalScaling` (on by default) does. So does
//!   gang-kube, for bound pods. Pod-level in-place resize (alpha) is not read.
//! - DRA resource claims are not counted (the claims' devices are not node resources);
//!   a workload whose pods use them gets a warning.

use std::collections::BTreeMap;

use gang_core::Quantity;

use crate::model::core_v1::{Container, ContainerStatus, PodSpec, PodStatus};
use crate::model::de::ResourceList;

/// Resource amounts by name (`cpu`, `memory`, `nvidia.com/gpu`), in name order, exact.
pub type Resources = BTreeMap<String, Quantity>;

/// The sum overflowed u64 milli-units; carries the resource name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Overflow(pub String);

/// Amounts by resource name, borrowing the names from the pod (a handful of entries:
/// a vector is faster than a map and allocates no strings; held inline up to eight
/// names, so rolling up a pod's requests allocates nothing).
pub(crate) type Acc<'a> = smallvec::SmallVec<[(&'a str, u64); 8]>;

fn add_one<'a>(acc: &mut Acc<'a>, name: &'a str, v: u64) -> Result<(), Overflow> {
    match acc.iter_mut().find(|(k, _)| *k == name) {
        Some((_, have)) => {
            *have = have
                .checked_add(v)
                .ok_or_else(|| Overflow(name.to_owned()))?
        }
        None => acc.push((name, v)),
    }
    Ok(())
}

fn add_all<'a>(acc: &mut Acc<'a>, other: &Acc<'a>) -> Result<(), Overflow> {
    for &(k, v) in other {
        add_one(acc, k, v)?;
    }
    Ok(())
}

fn max_into<'a>(acc: &mut Acc<'a>, other: &Acc<'a>) {
    for &(k, v) in other {
        match acc.iter_mut().find(|(n, _)| *n == k) {
            Some((_, have)) => *have = (*have).max(v),
            None => acc.push((k, v)),
        }
    }
}

fn set<'a>(acc: &mut Acc<'a>, k: &'a str, v: u64) {
    match acc.iter_mut().find(|(n, _)| *n == k) {
        Some((_, have)) => *have = v,
        None => acc.push((k, v)),
    }
}

/// Whether PodLevelResources applies to `name`.
fn pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

fn list(l: &ResourceList) -> Acc<'_> {
    l.iter().map(|(k, v)| (k, v.0.millis())).collect()
}

/// A container's requests as the API server leaves them: missing requests default to
/// limits, per resource.
fn spec_requests(c: &Container) -> Acc<'_> {
    let mut out = list(&c.resources.requests);
    for (k, v) in &c.resources.limits {
        if !c.resources.requests.contains_key(k) {
            out.push((k, v.0.millis()));
        }
    }
    out
}

/// The sidecar-aware aggregate over containers, each container's list given by `get`.
fn aggregate<'a>(
    spec: &'a PodSpec,
    get: impl Fn(&'a Container) -> Option<Acc<'a>>,
) -> Result<Acc<'a>, Overflow> {
    let mut result = Acc::new();
    for c in &spec.containers {
        if let Some(r) = get(c) {
            add_all(&mut result, &r)?;
        }
    }
    if spec.init_containers.is_empty() {
        return Ok(result);
    }
    let mut sidecars = Acc::new();
    let mut init_peak = Acc::new();
    for c in &spec.init_containers {
        let r = get(c).unwrap_or_default();
        if c.restart_policy == "Always" {
            add_all(&mut result, &r)?;
            add_all(&mut sidecars, &r)?;
            max_into(&mut init_peak, &sidecars);
        } else {
            let mut running = r;
            add_all(&mut running, &sidecars)?;
            max_into(&mut init_peak, &running);
        }
    }
    max_into(&mut result, &init_peak);
    Ok(result)
}

fn find_status<'a>(status: &'a PodStatus, name: &str) -> Option<&'a ContainerStatus> {
    status
        .container_statuses
        .iter()
        .chain(&status.init_container_statuses)
        .find(|s| s.name == name)
}

/// The requests kube-scheduler counts for a pod (see the module docs), as names and
/// milli-units borrowed from the pod. `status` is given for pods bound to a node, whose
/// in-place resizes count.
pub(crate) fn pod_requests_acc<'a>(
    spec: &'a PodSpec,
    status: Option<&'a PodStatus>,
) -> Result<Acc<'a>, Overflow> {
    let resized = status.is_some_and(|st| {
        st.container_statuses
            .iter()
            .chain(&st.init_container_statuses)
            .any(|cs| cs.allocated_resources.is_some() || cs.resources.is_some())
            || st.conditions.iter().any(|c| c.type_ == "PodResizePending")
    });
    let mut reqs = match status {
        // Without resize information in the status, allocated and actuated equal the spec.
        Some(st) if resized => {
            let infeasible = st
                .conditions
                .iter()
                .any(|c| c.type_ == "PodResizePending" && c.reason == "Infeasible");
            let allocated = |c: &'a Container| match find_status(st, &c.name) {
                Some(ContainerStatus {
                    allocated_resources: Some(a),
                    ..
                }) => Some(list(a)),
                _ if infeasible => None,
                _ => Some(spec_requests(c)),
            };
            let actuated = |c: &'a Container| {
                if let Some(r) = find_status(st, &c.name).and_then(|cs| cs.resources.as_ref()) {
                    if !r.requests.is_empty() {
                        return Some(list(&r.requests));
                    }
                }
                allocated(c)
            };
            let mut out = aggregate(spec, actuated)?;
            max_into(&mut out, &aggregate(spec, allocated)?);
            if !infeasible {
                max_into(&mut out, &aggregate(spec, |c| Some(spec_requests(c)))?);
            }
            out
        }
        _ => aggregate(spec, |c| Some(spec_requests(c)))?,
    };
    if let Some(pod_level) = &spec.resources {
        let mut pod_reqs = list(&pod_level.requests);
        if !pod_level.limits.is_empty() {
            // The API server's pod-level defaulting: hugepages from the containers'
            // aggregate, then every supported resource with a pod-level limit.
            let containers = aggregate(spec, |c| Some(spec_requests(c)))?;
            for &(k, v) in &containers {
                if k.starts_with("hugepages-") && !pod_reqs.iter().any(|(n, _)| *n == k) {
                    pod_reqs.push((k, v));
                }
            }
            for (k, v) in &pod_level.limits {
                if pod_level_resource(k) && !pod_reqs.iter().any(|(n, _)| *n == k) {
                    pod_reqs.push((k, v.0.millis()));
                }
            }
        }
        for (k, v) in pod_reqs {
            if pod_level_resource(k) {
                set(&mut reqs, k, v);
            }
        }
    }
    for (k, v) in &spec.overhead {
        add_one(&mut reqs, k, v.0.millis())?;
    }
    Ok(reqs)
}

/// [`pod_requests_acc`] as owned, name-ordered [`Resources`].
pub(crate) fn pod_requests(
    spec: &PodSpec,
    status: Option<&PodStatus>,
) -> Result<Resources, Overflow> {
    Ok(pod_requests_acc(spec, status)?
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Quantity::from_millis(v)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::core_v1::{Pod, PodTemplate};

    fn spec(json: serde_json::Value) -> PodSpec {
        serde_json::from_value::<PodTemplate>(serde_json::json!({ "spec": json }))
            .unwrap()
            .spec
    }

    fn show(r: &Resources) -> Vec<(String, String)> {
        r.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
    }

    fn want(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Quantity::parse(v).unwrap().to_string()))
            .collect()
    }

    fn c(name: &str, req: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"name": name, "resources": {"requests": req}})
    }

    #[test]
    fn containers_are_summed() {
        let s = spec(serde_json::json!({"containers": [
            c("a", serde_json::json!({"cpu": "500m", "memory": "1Gi"})),
            c("b", serde_json::json!({"cpu": "1.5", "nvidia.com/gpu": 2})),
        ]}));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "2"), ("memory", "1Gi"), ("nvidia.com/gpu", "2")])
        );
    }

    #[test]
    fn plain_init_container_peak_is_a_max() {
        // 2 CPU init, 1 CPU app: the pod needs 2 CPU; memory 1Gi app, 512Mi init: 1Gi.
        let s = spec(serde_json::json!({
            "initContainers": [c("init", serde_json::json!({"cpu": "2", "memory": "512Mi"}))],
            "containers": [c("app", serde_json::json!({"cpu": "1", "memory": "1Gi"}))],
        }));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "2"), ("memory", "1Gi")])
        );
    }

    #[test]
    fn sidecars_add_to_the_running_total_and_to_later_init_peaks() {
        // sidecar 1 CPU (restartPolicy Always) starts first; then a plain init of 3 CPU
        // runs beside it: peak 1 + 3 = 4. Running: app 2 + sidecar 1 = 3. Pod: 4.
        let mut sidecar = c("proxy", serde_json::json!({"cpu": "1", "memory": "100Mi"}));
        sidecar["restartPolicy"] = "Always".into();
        let s = spec(serde_json::json!({
            "initContainers": [sidecar, c("migrate", serde_json::json!({"cpu": "3"}))],
            "containers": [c("app", serde_json::json!({"cpu": "2", "memory": "1Gi"}))],
        }));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "4"), ("memory", "1124Mi")])
        );
    }

    #[test]
    fn a_plain_init_before_the_sidecar_runs_without_it() {
        // init 3 CPU runs alone (the sidecar starts after it): peak 3. Running: 2 + 1 = 3.
        let mut sidecar = c("proxy", serde_json::json!({"cpu": "1"}));
        sidecar["restartPolicy"] = "Always".into();
        let s = spec(serde_json::json!({
            "initContainers": [c("migrate", serde_json::json!({"cpu": "3"})), sidecar],
            "containers": [c("app", serde_json::json!({"cpu": "2"}))],
        }));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "3")])
        );
        // Order matters: with the init after the sidecar it is 4 (previous test).
    }

    #[test]
    fn limits_default_missing_requests() {
        let s = spec(serde_json::json!({"containers": [{
            "name": "a",
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "nvidia.com/gpu": 8}}
        }]}));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "1"), ("nvidia.com/gpu", "8")])
        );
    }

    #[test]
    fn pod_level_requests_replace_the_aggregate_for_cpu_and_memory_only() {
        let s = spec(serde_json::json!({
            "resources": {"requests": {"cpu": "6", "nvidia.com/gpu": 1}},
            "containers": [c("a", serde_json::json!({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 4}))],
        }));
        // cpu replaced; memory kept from the containers; the GPU is not a pod-level
        // resource, so the containers' 4 stand.
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "6"), ("memory", "1Gi"), ("nvidia.com/gpu", "4")])
        );
        // Pod-level limits without requests default the requests (API server rule).
        let s = spec(serde_json::json!({
            "resources": {"limits": {"memory": "8Gi"}},
            "containers": [c("a", serde_json::json!({"memory": "1Gi"}))],
        }));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("memory", "8Gi")])
        );
    }

    #[test]
    fn overhead_is_added() {
        let s = spec(serde_json::json!({
            "overhead": {"cpu": "250m", "memory": "120Mi"},
            "resources": {"requests": {"cpu": "2"}},
            "containers": [c("a", serde_json::json!({"cpu": "1", "memory": "1Gi"}))],
        }));
        assert_eq!(
            show(&pod_requests(&s, None).unwrap()),
            want(&[("cpu", "2250m"), ("memory", "1144Mi")])
        );
    }

    #[test]
    fn resized_bound_pods_count_the_larger_of_spec_and_status() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "spec": {"nodeName": "n1", "containers": [c("a", serde_json::json!({"cpu": "1", "memory": "1Gi"}))]},
            "status": {"containerStatuses": [{"name": "a",
                "allocatedResources": {"cpu": "3", "memory": "512Mi"},
                "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}]}
        }))
        .unwrap();
        assert_eq!(
            show(&pod_requests(&pod.spec, Some(&pod.status)).unwrap()),
            want(&[("cpu", "3"), ("memory", "1Gi")])
        );
        // Infeasible resize: the spec is ignored; allocated and actuated count.
        let mut pod = pod;
        pod.status
            .conditions
            .push(crate::model::core_v1::Condition {
                type_: "PodResizePending".into(),
                status: "True".into(),
                reason: "Infeasible".into(),
                message: String::new(),
            });
        assert_eq!(
            show(&pod_requests(&pod.spec, Some(&pod.status)).unwrap()),
            want(&[("cpu", "3"), ("memory", "512Mi")])
        );
    }

    #[test]
    fn overflow_is_reported() {
        let big = format!("{}", u64::MAX / 1000);
        let s = spec(serde_json::json!({"containers": [
            c("a", serde_json::json!({"cpu": big})),
            c("b", serde_json::json!({"cpu": big})),
        ]}));
        assert_eq!(pod_requests(&s, None), Err(Overflow("cpu".into())));
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        const NAMES: [&str; 4] = ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi"];

        #[derive(Debug, Clone)]
        struct C {
            req: Vec<Option<u32>>,
            lim: Vec<Option<u32>>,
            sidecar: bool,
        }

        fn container() -> impl Strategy<Value = C> {
            (
                proptest::collection::vec(proptest::option::of(0u32..5000), 4),
                proptest::collection::vec(proptest::option::of(0u32..5000), 4),
                any::<bool>(),
            )
                .prop_map(|(req, lim, sidecar)| C { req, lim, sidecar })
        }

        fn list(v: &[Option<u32>]) -> serde_json::Value {
            let mut m = serde_json::Map::new();
            for (i, q) in v.iter().enumerate() {
                if let Some(q) = q {
                    m.insert(NAMES[i].into(), format!("{q}m").into());
                }
            }
            m.into()
        }

        fn to_json(c: &C, i: usize) -> serde_json::Value {
            let mut j = serde_json::json!({"name": format!("c{i}"),
                "resources": {"requests": list(&c.req), "limits": list(&c.lim)}});
            if c.sidecar {
                j["restartPolicy"] = "Always".into();
            }
            j
        }

        /// The request of resource `r` by a container after defaulting, in millis.
        fn eff(c: &C, r: usize) -> Option<u64> {
            c.req[r].or(c.lim[r]).map(u64::from)
        }

        /// A straightforward reading of the rules, one resource at a time.
        fn reference(
            containers: &[C],
            inits: &[C],
            pod_req: &[Option<u32>],
            pod_lim: &[Option<u32>],
            overhead: &[Option<u32>],
        ) -> Vec<(String, u64)> {
            let mut out = Vec::new();
            for r in 0..4 {
                let mut present = false;
                let mut regular = 0u64;
                for c in containers {
                    if let Some(q) = eff(c, r) {
                        present = true;
                        regular += q;
                    }
                }
                let mut peak = 0u64;
                for (i, c) in inits.iter().enumerate() {
                    let before: u64 = inits[..i]
                        .iter()
                        .filter(|s| s.sidecar)
                        .filter_map(|s| eff(s, r))
                        .sum();
                    let own = eff(c, r);
                    if own.is_some() {
                        present = true;
                    }
                    if c.sidecar {
                        regular += own.unwrap_or(0);
                        peak = peak.max(before + own.unwrap_or(0));
                    } else {
                        peak = peak.max(before + own.unwrap_or(0));
                    }
                    if !c.sidecar && before > 0 {
                        present = true;
                    }
                }
                let mut total = regular.max(peak);
                // Pod level: only cpu, memory, hugepages (index 2 is the GPU).
                let pod_level_ok = r != 2;
                let any_limits = pod_lim.iter().any(Option::is_some);
                let mut pod_level = pod_req[r].map(u64::from);
                if pod_level.is_none() && any_limits && pod_level_ok {
                    if r == 3 && present {
                        pod_level = Some(total);
                    } else if let Some(l) = pod_lim[r] {
                        pod_level = Some(u64::from(l));
                    }
                }
                if let (true, Some(p)) = (pod_level_ok, pod_level) {
                    total = p;
                    present = true;
                }
                if let Some(o) = overhead[r] {
                    total += u64::from(o);
                    present = true;
                }
                if present {
                    out.push((NAMES[r].to_owned(), total));
                }
            }
            out.sort();
            out
        }

        proptest! {
            #[test]
            fn aggregation_matches_the_reference(
                containers in proptest::collection::vec(container(), 0..4),
                inits in proptest::collection::vec(container(), 0..5),
                pod_req in proptest::collection::vec(proptest::option::weighted(0.2, 0u32..9000), 4),
                pod_lim in proptest::collection::vec(proptest::option::weighted(0.2, 0u32..9000), 4),
                overhead in proptest::collection::vec(proptest::option::weighted(0.3, 0u32..500), 4),
            ) {
                let mut pod = serde_json::json!({
                    "containers": containers.iter().enumerate().map(|(i, c)| to_json(c, i)).collect::<Vec<_>>(),
                    "initContainers": inits.iter().enumerate().map(|(i, c)| to_json(c, 100 + i)).collect::<Vec<_>>(),
                    "overhead": list(&overhead),
                });
                if pod_req.iter().chain(&pod_lim).any(Option::is_some) {
                    pod["resources"] = serde_json::json!({"requests": list(&pod_req), "limits": list(&pod_lim)});
                }
                let got: Vec<(String, u64)> = pod_requests(&spec(pod), None)
                    .unwrap()
                    .into_iter()
                    .map(|(k, v)| (k, v.millis()))
                    .collect();
                let want = reference(&containers, &inits, &pod_req, &pod_lim, &overhead);
                // Keys whose every contribution is absent are absent in both; a key
                // present with zero is compared as zero.
                prop_assert_eq!(got, want);
            }
        }
    }
}
