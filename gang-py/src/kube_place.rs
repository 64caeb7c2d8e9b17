//! `gang.kube.Loaded`'s placing half: a workload of Kubernetes objects placed on a
//! `gang.Inventory` by gang-kube — `Cluster::place` (`_kube_place`, what `gang place`
//! answers) and `Cluster::place_parts` (`_kube_place_parts`). The objects are read as
//! `_kube_load` reads them ([`crate::kube`]); the answers are the inventory's own
//! classes (a `Placement` on it, `Unschedulable` / `Undecided`) or JSON text; nothing
//! is decided here that gang-kube does not decide.

use gang_core::{Inventory, Outcome};
use gang_kube::{workloads, Cluster, ClusterOptions, Objects, WorkloadGang};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::{json, Value};

use crate::errors::guard;
use crate::inventory::{label_levels, PyInventory};
use crate::kube::{
    load_error, read_sources, serde_value, topology_arg, topology_source, LoadError,
};
use crate::outcome::{not_placed, PyPlacement};
use crate::state::Source;

/// What `_kube_load` was given besides the sources: the topology, the namespace for
/// objects naming none, ExtendedResourceToleration.
struct Read {
    topology: String,
    namespace: Option<String>,
    extended_toleration: bool,
}

impl Read {
    /// The private functions' keyword arguments, converted at the edge.
    fn new(
        topology: Option<&Bound<'_, PyAny>>,
        namespace: Option<&str>,
        extended_toleration: bool,
    ) -> PyResult<Read> {
        Ok(Read {
            topology: topology_arg(topology)?,
            namespace: namespace.map(str::to_owned),
            extended_toleration,
        })
    }
}

/// The cluster of `sources` (read as `_kube_load` reads them) and its workload named
/// `name` (`Kind/namespace/name`, exactly as `_kube_load` names it).
fn cluster_and_workload(
    sources: &[(String, String)],
    read: &Read,
    name: &str,
) -> Result<(Cluster, WorkloadGang), LoadError> {
    let topology = read.topology.as_str();
    let mut objects = Objects::new();
    for (source, text) in sources {
        objects.add(source, text)?;
    }
    // The namespace `_kube_load` applied (`name` is the name it gave).
    objects.apply_namespace(read.namespace.as_deref().unwrap_or("default"));
    let spec: Value = serde_json::from_str(topology)
        .map_err(|e| LoadError::Arg("topology", topology.to_owned(), e.to_string()))?;
    let source =
        topology_source(&spec).map_err(|m| LoadError::Arg("topology", spec.to_string(), m))?;
    let all = workloads(&objects)?;
    let names: Vec<String> = all.iter().map(|w| w.name()).collect();
    let Some(w) = all.into_iter().find(|w| w.name() == name) else {
        return Err(LoadError::Arg(
            "workload",
            name.to_owned(),
            format!("no such workload among {}", names.join(", ")),
        ));
    };
    let options = ClusterOptions::new()
        .topology(source)
        .extended_resource_toleration(read.extended_toleration);
    let cluster = Cluster::from_objects(&objects, &options)?;
    Ok((cluster, w))
}

/// Each part of the workload named `name` placed by gang-kube's `Cluster::place_parts`
/// on `inventory`, as JSON: one record per part, in order, up to the first that does
/// not fit.
fn place_parts(
    sources: &[(String, String)],
    read: &Read,
    name: &str,
    inventory: &Inventory,
) -> Result<String, LoadError> {
    let (cluster, w) = cluster_and_workload(sources, read, name)?;
    let parts = cluster.place_parts(inventory, &w)?;
    let out: Vec<Value> = parts
        .iter()
        .map(|p| {
            let placement = p.outcome.placement();
            json!({
                "name": p.name,
                "roles": p.roles,
                "status": p.outcome.status(),
                "level": placement.and_then(|x| x.level()),
                "domain": placement.map(|x| x.domain_path()),
                "nodes": placement.map(|x| {
                    x.node_counts().into_iter().map(|(n, c)| (n.to_owned(), json!(c)))
                        .collect::<serde_json::Map<String, Value>>()
                }),
                "assignments": placement.map(|x| serde_value(&x.assignments())),
                "message": p.outcome.diagnosis().map(|d| d.to_string()),
            })
        })
        .collect();
    Ok(Value::Array(out).to_string())
}

/// Places the workload `workload` (its `Kind/namespace/name`) part by part on
/// `inventory` (a `gang.Inventory`), reading `sources` and `topology` as `_kube_load`
/// does, and returns the JSON text of one record per part: `name`, `roles`, `status`,
/// `level`, `domain`, `nodes`, `assignments`, `message` (an empty list for a workload
/// placed as one gang; `namespace` and `extended_resource_toleration` as
/// `_kube_load`'s).
///
/// Private: use `gang.kube.Loaded.place_parts`.
#[pyfunction]
#[pyo3(signature = (*sources, workload, inventory, topology=None, namespace=None, extended_resource_toleration=false))]
pub fn _kube_place_parts(
    py: Python<'_>,
    sources: &Bound<'_, PyTuple>,
    workload: &str,
    inventory: PyRef<'_, PyInventory>,
    topology: Option<&Bound<'_, PyAny>>,
    namespace: Option<&str>,
    extended_resource_toleration: bool,
) -> PyResult<String> {
    let sources = read_sources(sources)?;
    let read = Read::new(topology, namespace, extended_resource_toleration)?;
    let inv = inventory.state.with_inventory(Inventory::clone);
    let workload = workload.to_owned();
    py.detach(|| guard(|| place_parts(&sources, &read, &workload, &inv)))?
        .map_err(load_error)
}

/// Places the workload `workload` (its `Kind/namespace/name`) on `inventory` (a
/// `gang.Inventory`) as gang-kube's `Cluster::place` does — what `gang place` answers:
/// the whole gang, after checking that its parts fit (a JobSet's exclusive child Jobs
/// in distinct domains, Kueue's PodSets each in its own domain on what the earlier
/// ones left; the first part that does not fit is the answer). Reads `sources` and
/// `topology` as `_kube_load` does. Returns a `Placement` made on `inventory` (it can
/// be reserved there); raises `Unschedulable` / `Undecided` with the diagnosis, as
/// `Inventory.place` does, and gang-kube's errors as `_kube_load` (`namespace` and
/// `extended_resource_toleration` as its).
///
/// Private: use `gang.kube.Loaded.place`.
#[pyfunction]
#[pyo3(signature = (*sources, workload, inventory, topology=None, namespace=None, extended_resource_toleration=false))]
pub fn _kube_place(
    py: Python<'_>,
    sources: &Bound<'_, PyTuple>,
    workload: &str,
    inventory: PyRef<'_, PyInventory>,
    topology: Option<&Bound<'_, PyAny>>,
    namespace: Option<&str>,
    extended_resource_toleration: bool,
) -> PyResult<PyPlacement> {
    let sources = read_sources(sources)?;
    let read = Read::new(topology, namespace, extended_resource_toleration)?;
    let workload = workload.to_owned();
    let state = inventory.state.clone();
    let answer = py.detach(|| {
        guard(|| {
            let (cluster, w) = cluster_and_workload(&sources, &read, &workload)?;
            // Read under the inventory's lock: the placement keeps the generation it
            // was made in, as Inventory.place's do.
            let inner = state.read();
            let outcome = cluster.place(&inner.inv, &w)?;
            Ok::<_, LoadError>((outcome, inner.generation.clone(), label_levels(&inner.inv)))
        })
    })?;
    let (outcome, generation, levels) = answer.map_err(load_error)?;
    match outcome {
        Outcome::Placed(p) => Ok(PyPlacement::new(p, Source { state, generation })),
        Outcome::Unschedulable(d) | Outcome::Undecided(d) => Err(not_placed(py, d, levels)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_kube_place_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_kube_place, m)?)?;
    Ok(())
}
