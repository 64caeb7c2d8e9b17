//! `Inventory` and `CompiledGang`: placement queries with the GIL released, the
//! lifecycle operations, and the inventory as a document.
//!
//! The Python `Inventory` holds the core inventory behind a read-write lock (queries
//! share it, changes take it alone) and a small pool of solvers so that repeated
//! queries reuse scratch space: gang-core's kept `PreemptSolver`s, whose `solver()`
//! answers placement queries and which keep `preempt`'s candidate victims from one
//! query to the next (gang-core brings them up to date from the inventory's journal,
//! and builds them afresh for another inventory value). It keeps no model of its own:
//! node paths, documents and snapshots all come from the core.
//!
//! A placement reads its node paths lazily (so `place` costs no more than the core
//! call); it keeps the inventory's current [`Generation`]. Before a change that moves
//! nodes (add, remove, relabel), if placements of the current generation are alive,
//! the generation is closed with a copy of the inventory as it was, which those
//! placements then read.

use std::sync::Arc;
use std::time::Instant;

use gang_core::lifecycle::{
    Admission, AdmitMode, PreemptSolver, Replacement, ReservationSnapshot, Spread, SpreadOutcome,
};
use gang_core::{
    CompiledGang, Error, ErrorKind, Gang, Inventory, InventoryDocument, Limits, NodeSpec, Outcome,
    Placement, ReservationId, Topology, HOSTNAME_LEVEL,
};
use indexmap::IndexMap;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};

use crate::convert::{self, items, json_text, parse_json, repr_str};
use crate::errors::{core, edge_error, guard, to_py_err};
use crate::html;
use crate::lifecycle::{
    self, reservation_id, PyAdmission, PyLost, PyOvercommit, PyReservation, PyReservationId,
    PySpreadOutcome,
};
use crate::outcome::{not_placed, PyAssignment, PyDiagnosis, PyPlacement};
use crate::preempt::{self, PyPreemption};
use crate::pyde;
use crate::spec::{gang_from, node_from, PyGang, PyNode, PyQuantity};
use crate::state::{Generation, InvState, Source};

/// The label levels of an inventory (its levels without the node level).
pub(crate) fn label_levels(inv: &Inventory) -> Vec<String> {
    inv.topology()
        .levels()
        .iter()
        .filter(|l| *l != HOSTNAME_LEVEL)
        .cloned()
        .collect()
}

/// A query's answer; both variants are moved once, straight into Python objects.
#[allow(clippy::large_enum_variant)]
enum Solved {
    Placed(Placement),
    NotPlaced(gang_core::Diagnosis, Vec<String>),
}

/// A cluster snapshot, ready for placement queries, that can be changed in place.
///
/// Build it from topology levels (outermost first; an empty list means no label levels,
/// so only the node level `kubernetes.io/hostname` is a domain) and nodes (`Node`
/// objects or dicts in the scenario format), from a dict (`from_dict`) or JSON text
/// (`from_json`), or take it from a scenario (`load_scenario(path).inventory`).
/// Queries release the GIL and may run from several threads at once; changes
/// (`set_used`, `add_node`, `reserve`…) take it alone. Changing one inventory in place
/// is the fast way to sweep what-ifs; `copy.copy` / `copy.deepcopy` give an
/// independent copy with the same reservations (their ids valid in both), and pickling
/// keeps everything (see `to_dict`).
///
/// >>> import gang
/// >>> BLOCK, RACK = "topology.example.com/block", "topology.example.com/rack"
/// >>> def node(name, rack, used):
/// ...     return gang.Node(name, labels={BLOCK: "b1", RACK: rack},
/// ...                      capacity={"nvidia.com/gpu": 8, "cpu": "96"}, used={"nvidia.com/gpu": used})
/// >>> inv = gang.Inventory([BLOCK, RACK], [node("a1", "a", 6), node("a2", "a", 6), node("b1", "b", 5)])
/// >>> inv
/// Inventory(levels=['topology.example.com/block', 'topology.example.com/rack'], nodes=3, resources=['cpu', 'nvidia.com/gpu'], reservations=0)
/// >>> workers = gang.Role("worker", 4, requests={"nvidia.com/gpu": 1, "cpu": "500m"})
/// >>> inv.place(gang.Gang("train", [workers], required=RACK)).nodes
/// {'a1': 2, 'a2': 2}
/// >>> inv.place(gang.Gang("train", [gang.Role("worker", 5, requests={"nvidia.com/gpu": 1})], required=RACK))
/// Traceback (most recent call last):
///   ...
/// gang.Unschedulable: gang train (5 worker) does not fit in one rack (topology.example.com/rack). Best rack: rack b1/a fits 4 of 5 worker (short of nvidia.com/gpu). Cluster-wide, ignoring topology, 7 worker fit. Relaxing to block: block b1 fits all 5 now (across 2 racks).
/// >>> gang.Inventory(RACK, [])
/// Traceback (most recent call last):
///   ...
/// TypeError: Inventory(levels, nodes): levels must be a list of level names, not a str ('topology.example.com/rack'); write ['topology.example.com/rack']
#[pyclass(name = "Inventory", module = "gang", frozen)]
pub struct PyInventory {
    pub state: Arc<InvState>,
}

/// What `place` accepts: a `Gang`, a gang dict, or a `CompiledGang`.
enum Target {
    Gang(Py<PyGang>),
    Parsed(Gang),
    Compiled(Py<PyCompiledGang>),
}

impl Target {
    fn extract(obj: &Bound<'_, PyAny>) -> PyResult<Target> {
        if let Ok(g) = obj.cast::<PyGang>() {
            return Ok(Target::Gang(g.clone().unbind()));
        }
        if let Ok(c) = obj.cast::<PyCompiledGang>() {
            return Ok(Target::Compiled(c.clone().unbind()));
        }
        Ok(Target::Parsed(gang_from(obj)?))
    }
}

/// The levels argument: a list of strings (a `str` is a `TypeError`: it would be read
/// as a list of one-letter levels).
fn levels_arg(levels: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if levels.is_instance_of::<PyString>() || levels.is_instance_of::<PyBytes>() {
        let r = pyde::obj_repr(levels);
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "Inventory(levels, nodes): levels must be a list of level names, not a str ({r}); write [{r}]"
        )));
    }
    let mut out = Vec::new();
    for (i, l) in items(Some(levels), "topology.levels", ErrorKind::InvalidInventory)?
        .iter()
        .enumerate()
    {
        out.push(convert::string(
            l,
            &format!("topology.levels[{i}]"),
            ErrorKind::InvalidInventory,
        )?);
    }
    Ok(out)
}

impl PyInventory {
    pub fn from_inventory(inv: Inventory) -> Self {
        PyInventory {
            state: Arc::new(InvState::new(inv)),
        }
    }

    pub fn build(py: Python<'_>, levels: Vec<String>, specs: Vec<NodeSpec>) -> PyResult<Self> {
        let inv = py.detach(|| {
            core(|| {
                Inventory::builder(Topology::new(levels)?)
                    .nodes(specs)
                    .build()
            })
        })?;
        Ok(PyInventory::from_inventory(inv))
    }

    fn from_document(py: Python<'_>, doc: InventoryDocument) -> PyResult<Self> {
        let inv = py.detach(|| core(|| Inventory::from_document(doc)))?;
        Ok(PyInventory::from_inventory(inv))
    }

    fn document(&self) -> InventoryDocument {
        self.state.with_inventory(|inv| inv.to_document())
    }

    fn source(&self) -> Source {
        Source {
            state: self.state.clone(),
            generation: self.state.read().generation.clone(),
        }
    }

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        limits: (Option<&Bound<'_, PyAny>>, Option<&Bound<'_, PyAny>>),
        ask: impl Send + FnOnce(&mut PreemptSolver, &Inventory, &CompiledGang) -> Result<T, Error>,
    ) -> PyResult<(T, Generation)> {
        let target = Target::extract(gang)?;
        let budget = convert::budget(limits.0)?;
        // The deadline counts from the call, conversion included.
        let deadline = convert::timeout(limits.1)?.and_then(|t| Instant::now().checked_add(t));
        let limits = match deadline {
            Some(at) => Limits::work(budget).deadline(at),
            None => Limits::work(budget),
        };
        if let Target::Compiled(c) = &target {
            if !Arc::ptr_eq(&c.get().inventory, &self.state) {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "compiled",
                    c.get().compiled.gang().get_name(),
                    "compiled against a different inventory; compile the gang again",
                ));
            }
        }
        let state = &self.state;
        py.detach(|| {
            core(|| {
                let inner = state.read();
                let fresh;
                let compiled = match &target {
                    Target::Gang(g) => {
                        fresh = inner.inv.compile(&g.get().0)?;
                        &fresh
                    }
                    Target::Parsed(g) => {
                        fresh = inner.inv.compile(g)?;
                        &fresh
                    }
                    Target::Compiled(c) => &c.get().compiled,
                };
                let answer = state.with_solver(budget, |s| {
                    s.solver().set_limits(limits);
                    ask(s, &inner.inv, compiled)
                })?;
                // The generation under the same lock: what the placement's paths are read from.
                Ok((answer, inner.generation.clone()))
            })
        })
    }

    /// Places a gang: the placement, or the diagnosis of why not.
    fn place_or_diagnose(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        limits: (Option<&Bound<'_, PyAny>>, Option<&Bound<'_, PyAny>>),
    ) -> PyResult<(Solved, Generation)> {
        self.run(py, gang, limits, |solver, inv, compiled| {
            Ok(match inv.place_with(solver.solver(), compiled)? {
                Outcome::Placed(p) => Solved::Placed(p),
                Outcome::Unschedulable(d) | Outcome::Undecided(d) => {
                    Solved::NotPlaced(d, label_levels(inv))
                }
            })
        })
    }

    fn wrap(&self, p: Placement) -> PyPlacement {
        PyPlacement::new(p, self.source())
    }

    fn wrap_in(&self, p: Placement, generation: Generation) -> PyPlacement {
        PyPlacement::new(
            p,
            Source {
                state: self.state.clone(),
                generation,
            },
        )
    }

    fn diagnosis(&self, d: gang_core::Diagnosis) -> PyDiagnosis {
        let levels = self.state.with_inventory(label_levels);
        PyDiagnosis::new(d, levels)
    }
}

/// A snapshot of the live reservation `id`.
fn reservation_data(inv: &Inventory, id: ReservationId) -> Result<ReservationSnapshot, Error> {
    inv.live_reservation(id).map(|r| r.snapshot(inv))
}

#[pymethods]
impl PyInventory {
    /// Builds and validates an inventory from topology levels (a list, outermost
    /// first) and nodes (`Node` objects or dicts).
    #[new]
    fn new(py: Python<'_>, levels: &Bound<'_, PyAny>, nodes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let levels = levels_arg(levels)?;
        let mut specs = Vec::new();
        for (i, n) in items(Some(nodes), "nodes", ErrorKind::InvalidInventory)?
            .iter()
            .enumerate()
        {
            specs.push(node_from(n, &format!("nodes[{i}]"))?);
        }
        PyInventory::build(py, levels, specs)
    }

    /// An inventory from a dict in the scenario format — `{"topology": {"levels":
    /// [...]}, "nodes": [...]}`, nodes may be `Node` objects — plus, as `to_dict`
    /// writes them, its reservations.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory.from_dict({"topology": {"levels": ["rack"]},
    /// ...     "nodes": [{"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 8}}]})
    /// >>> len(inv), inv.free("a1", "gpu")
    /// (1, Quantity('8'))
    /// >>> gang.Inventory.from_dict({"topology": {"levels": ["rack"]},
    /// ...     "nodes": [{"name": "a1", "capacity": {"memory": "12 GB"}}]})
    /// Traceback (most recent call last):
    ///   ...
    /// gang.InvalidQuantity: invalid quantity at nodes[a1].capacity.memory: "12 GB": unknown suffix
    #[classmethod]
    fn from_dict(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        doc: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let doc: InventoryDocument = pyde::read(doc, "", ErrorKind::InvalidScenario)?;
        PyInventory::from_document(py, doc)
    }

    /// The inventory of Kubernetes objects (`kubectl get nodes,pods -o json`, Kueue
    /// objects): `gang.kube.load(*sources, …)`'s inventory. Naming a `workload` leaves
    /// its own bound pods out of the usage.
    ///
    /// >>> import gang
    /// >>> node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a1", "labels": {"rack": "a"}}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}'
    /// >>> inv = gang.Inventory.from_kube(("node.json", node), topology=["rack"])
    /// >>> inv.levels, inv.free("a1", "nvidia.com/gpu")
    /// (['rack'], Quantity('8'))
    #[classmethod]
    #[pyo3(signature = (*sources, topology=None, workload=None, namespace=None))]
    fn from_kube(
        _cls: &Bound<'_, PyType>,
        sources: &Bound<'_, pyo3::types::PyTuple>,
        topology: Option<&Bound<'_, PyAny>>,
        workload: Option<&str>,
        namespace: Option<&str>,
    ) -> PyResult<Self> {
        let doc = crate::kube::load_document(sources, topology, workload, namespace)?;
        let cluster: InventoryDocument = parse_json(&doc["cluster"].to_string())?;
        PyInventory::from_document(sources.py(), cluster)
    }

    /// An inventory from JSON text in the same format.
    #[classmethod]
    fn from_json(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let text = json_text(text)?;
        let doc: InventoryDocument = py.detach(|| parse_json(&text))?;
        PyInventory::from_document(py, doc)
    }

    /// Everything the inventory holds, as a dict: the cluster document of scenario
    /// files (`topology`, `nodes` in topology order with exact amounts, external use in
    /// `used`) and, when there are any, its live `reservations` (what each holds) and
    /// `next_reservation`. `from_dict` builds the same inventory back: a new one (with
    /// its own `id`), holding the same reservations under the same serial numbers.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
    /// >>> r = inv.reserve(inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})])))
    /// >>> again = gang.Inventory.from_dict(inv.to_dict())
    /// >>> again == inv, again.free("a1", "gpu"), [x.id.serial for x in again.reservations]
    /// (True, Quantity('0'), [0])
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::pyser::to_py(py, &self.document())
    }

    /// `to_dict()` as JSON text.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.document()).unwrap_or_default()
    }

    /// This inventory's identity (what its reservation ids carry; a copy has its own).
    #[getter]
    fn id(&self) -> u32 {
        self.state.with_inventory(|inv| inv.id().get())
    }

    /// Topology levels as given, outermost first.
    #[getter]
    fn levels(&self) -> Vec<String> {
        self.state
            .with_inventory(|inv| inv.topology().levels().to_vec())
    }

    /// Node names in topology order.
    #[getter]
    fn node_names(&self) -> Vec<String> {
        self.state
            .with_inventory(|inv| inv.node_names().map(str::to_owned).collect())
    }

    /// The nodes as `Node` objects, in topology order (also `list(inventory)`).
    #[getter]
    fn nodes(&self) -> Vec<PyNode> {
        self.state.with_inventory(|inv| {
            inv.node_names()
                .filter_map(|n| inv.node_spec(n))
                .map(PyNode)
                .collect()
        })
    }

    /// Resource names known to the inventory, sorted.
    #[getter]
    fn resources(&self) -> Vec<String> {
        self.state
            .with_inventory(|inv| inv.resources().map(str::to_owned).collect())
    }

    /// The node called `name`; `UnknownNode` (a `KeyError` too) if there is none.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory([], [gang.Node("a1", capacity={"gpu": 8})])
    /// >>> inv.node("a1") == gang.Node("a1", capacity={"gpu": "8"})
    /// True
    /// >>> inv.node("a2")
    /// Traceback (most recent call last):
    ///   ...
    /// gang.UnknownNode: unknown node "a2"
    fn node(&self, name: &Bound<'_, PyAny>) -> PyResult<PyNode> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        self.state
            .with_inventory(|inv| inv.node_spec(&name))
            .map(PyNode)
            .ok_or_else(|| to_py_err(Error::UnknownNode { name }))
    }

    /// Free amount of `resource` on `node` (capacity minus external use minus what
    /// reservations hold, never below zero). An unknown node is `UnknownNode`; a
    /// resource the node does not have has nothing free: `Quantity(0)`.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory([], [gang.Node("a1", capacity={"gpu": 8})])
    /// >>> inv.free("a1", "gpu"), inv.free("a1", "fpga")
    /// (Quantity('8'), Quantity('0'))
    /// >>> inv.free("typo", "gpu")
    /// Traceback (most recent call last):
    ///   ...
    /// gang.UnknownNode: unknown node "typo"
    fn free(&self, node: &Bound<'_, PyAny>, resource: &Bound<'_, PyAny>) -> PyResult<PyQuantity> {
        let node = convert::string(node, "node", ErrorKind::UnknownNode)?;
        let resource = convert::string(resource, "resource", ErrorKind::InvalidRequest)?;
        self.state.with_inventory(|inv| {
            if inv.node_spec(&node).is_none() {
                return Err(to_py_err(Error::UnknownNode { name: node.clone() }));
            }
            Ok(PyQuantity(
                inv.free(&node, &resource)
                    .unwrap_or(gang_core::Quantity::ZERO),
            ))
        })
    }

    /// Domain paths of `level` ("b1/a"), in topology order; node names at the node
    /// level.
    fn domains(&self, level: &str) -> PyResult<Vec<String>> {
        self.state
            .with_inventory(|inv| inv.domain_paths(level))
            .ok_or_else(|| {
                edge_error(
                    ErrorKind::InvalidRequest,
                    "level",
                    level,
                    "not a level of the inventory's topology",
                )
            })
    }

    /// Validates `gang` against this inventory once, for repeated `place` calls.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
    /// >>> c = inv.compile(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})]))
    /// >>> [inv.place(c).members for _ in range(3)]
    /// [2, 2, 2]
    fn compile(&self, py: Python<'_>, gang: &Bound<'_, PyAny>) -> PyResult<PyCompiledGang> {
        let g = gang_from(gang)?;
        let state = &self.state;
        let compiled = py.detach(|| core(|| state.with_inventory(|inv| inv.compile(&g))))?;
        Ok(PyCompiledGang {
            compiled,
            inventory: self.state.clone(),
        })
    }

    /// Places `gang` (a `Gang`, a gang dict, or a `CompiledGang` from this inventory):
    /// all of it, or nothing. Returns the `Placement`; raises `Unschedulable` (with
    /// `.diagnosis`) when it does not fit, `Undecided` when a multi-role search ran out
    /// of `search_budget` (default 1,000,000 work units) or of `timeout` (seconds for
    /// this call, none by default; the answer then depends on the machine's speed), and
    /// an `InvalidRequest` /
    /// `Contradictory` / `InvalidQuantity` for an invalid gang. The GIL is
    /// released while the solver runs.
    #[pyo3(signature = (gang, *, search_budget = None, timeout = None))]
    fn place(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyPlacement> {
        match self.place_or_diagnose(py, gang, (search_budget, timeout))? {
            (Solved::Placed(p), g) => Ok(self.wrap_in(p, g)),
            (Solved::NotPlaced(d, levels), _) => Err(not_placed(py, d, levels)),
        }
    }

    /// What it would take for `gang` to fit (issue 22): a `Preemption`, the placement
    /// if it fits now (no victims), otherwise the running work to evict — whole
    /// reservations of strictly lower priority whose gang is not `preemption_policy=
    /// "Never"`, and evictable units of strictly lower priority (`add_evictable`) — and
    /// the placement it gets once they are gone, chosen exactly (README "Preemption");
    /// or `status` "unschedulable" / "undecided" with the diagnosis. It reads as the
    /// core's document (`plan["status"]`, `plan["victims"]`: `{"status": "placed",
    /// "victims": [{"id": {"kind", "id"}, "name", "priority", "evicted", "cost"}, …],
    /// "cost", "search_complete", "placement"}`, or `{"status", "message",
    /// "diagnosis"}`) and as records (`to_records()`, one row per victim; `summary()`).
    /// Nothing changes; invalid input raises as `place` does. The GIL is released while
    /// it runs.
    ///
    /// How the work lost is weighed (the objective's second key), and the work allowed:
    /// `cost_resources` — the resources whose evicted amounts are compared, most
    /// important first (default `["nvidia.com/gpu"]`); `costs` — a cost per running
    /// gang or unit (e.g. GPUs × seconds since its last checkpoint), keyed by its
    /// reservation (a `Reservation`, `ReservationId` or int) or the unit's id (a `str`),
    /// compared before the amounts (work not given one costs 0; a key that names no
    /// running work is ignored); `max_work` — the victim search's work units (default
    /// 1,000,000; a plan found when they ran out has `search_complete` False). Bad values
    /// raise `InvalidRequest` naming the keyword.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory.from_json('{"topology": {"levels": []}, "nodes": [{"name": "n1", '
    /// ...     '"capacity": {"gpu": 4}}], "evictable": [{"id": "batch", "nodes": {"n1": {"gpu": 4}}}]}')
    /// >>> plan = inv.preempt(gang.Gang.from_dict({"name": "g", "priority": 1,
    /// ...     "roles": [{"name": "w", "count": 4, "requests": {"gpu": 1}}]}))
    /// >>> plan["status"], [v["name"] for v in plan["victims"]]
    /// ('placed', ['batch'])
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (gang, *, search_budget = None, timeout = None, cost_resources = None, costs = None, max_work = None))]
    fn preempt(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
        cost_resources: Option<&Bound<'_, PyAny>>,
        costs: Option<&Bound<'_, PyAny>>,
        max_work: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyPreemption> {
        let options = preempt::options_from(cost_resources, costs, max_work)?;
        let ((name, outcome), _) = self.run(
            py,
            gang,
            (search_budget, timeout),
            |solver, inv, compiled| {
                // The kept solver: the answer of `inv.preempt_with(solver, …)`, its
                // candidates kept from the last query on this inventory.
                let out = solver.preempt(inv, compiled, &options)?;
                Ok((compiled.gang().get_name().to_owned(), out))
            },
        )?;
        PyPreemption::new(py, &name, &outcome, None)
    }

    /// `preempt`, then the plan applied in one all-or-nothing step: the victims evicted
    /// (reservations released whole, evictable units withdrawn) and the gang reserved.
    /// Returns the `Preemption`, its document with `"reservation"`: the new
    /// reservation's id (or `None` when it is not placed; then nothing changed). A plan
    /// that cannot be applied raises `Conflict` and changes nothing. `cost_resources`,
    /// `costs` and `max_work` as `preempt`'s.
    #[pyo3(signature = (gang, *, cost_resources = None, costs = None, max_work = None))]
    fn preempt_reserve(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        cost_resources: Option<&Bound<'_, PyAny>>,
        costs: Option<&Bound<'_, PyAny>>,
        max_work: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyPreemption> {
        let options = preempt::options_from(cost_resources, costs, max_work)?;
        let g: Gang = match Target::extract(gang)? {
            Target::Gang(g) => g.get().0.clone(),
            Target::Parsed(g) => g,
            Target::Compiled(c) => c.get().compiled.gang().clone(),
        };
        let (answer, id) = py.detach(|| core(|| preempt::reserve(&self.state, &g, &options)))?;
        PyPreemption::new(py, g.get_name(), &answer, Some(id.map(|i| i.0)))
    }

    /// Declares an evictable unit (issue 22): running work gang did not reserve — the
    /// pods of another workload — with a `priority` and what it uses per node
    /// (`nodes={"n1": {"nvidia.com/gpu": 2}}`, amounts as `Node` takes them). Its
    /// amounts count as used from now on, and `preempt` may evict it, whole, for a gang
    /// of strictly higher priority. Raises `InvalidInventory` for an empty id or one
    /// already declared, `UnknownNode`, `InvalidQuantity`; nothing changes then.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory([], [gang.Node("n1", capacity={"gpu": 8})])
    /// >>> inv.add_evictable("pod-a", priority=5, nodes={"n1": {"gpu": 3}})
    /// >>> inv.free("n1", "gpu"), inv.evictable_units()
    /// (Quantity('5'), [{'id': 'pod-a', 'priority': 5, 'nodes': {'n1': {'gpu': 3}}}])
    #[pyo3(signature = (id, priority = None, nodes = None))]
    fn add_evictable(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        priority: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let zero = 0i32.into_pyobject(py)?.into_any();
        let unit = preempt::unit_from(id, priority.unwrap_or(&zero), nodes)?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.add_evictable(unit))))
    }

    /// Withdraws an evictable unit (it finished, or the caller evicted it), giving back
    /// what it used; returns it as declared (a dict). Raises `InvalidInventory` when no
    /// unit has this id.
    fn remove_evictable<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = convert::string(id, "evictable.id", ErrorKind::InvalidInventory)?;
        let state = &self.state;
        let unit = py
            .detach(|| core(|| state.with_inventory_mut(false, |inv| inv.remove_evictable(&id))))?;
        crate::pyser::to_py(py, &unit)
    }

    /// The evictable units declared, as dicts (`{"id", "priority", "nodes"}`), in the
    /// order they were declared.
    fn evictable_units<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let units: Vec<gang_core::EvictableUnit> = self
            .state
            .with_inventory(|inv| inv.evictable_units().cloned().collect());
        let out = PyList::empty(py);
        for u in &units {
            out.append(crate::pyser::to_py(py, u)?)?;
        }
        Ok(out)
    }

    /// Like `place`, but returns the `Diagnosis` instead of raising when the gang is
    /// not placed (check `diagnosis.status`: "unschedulable" or "undecided"). Invalid
    /// input still raises.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    /// >>> inv.try_place(gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})]))
    /// Diagnosis(gang='g', status='unschedulable', level=None, best='')
    #[pyo3(signature = (gang, *, search_budget = None, timeout = None))]
    fn try_place(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Ok(
            match self.place_or_diagnose(py, gang, (search_budget, timeout))? {
                (Solved::Placed(p), g) => Py::new(py, self.wrap_in(p, g))?.into_any(),
                (Solved::NotPlaced(d, levels), _) => {
                    Py::new(py, PyDiagnosis::new(d, levels))?.into_any()
                }
            },
        )
    }

    /// Like `place`, but answers "not now" with `None` instead of building a diagnosis:
    /// for a loop that asks again and again about gangs that keep waiting (a
    /// diagnosis costs far more than the answer). `None` covers unschedulable and
    /// undecided alike; call `place` or `try_place` for the reason. A placement found
    /// is the one `place` returns. Invalid input still raises.
    ///
    /// >>> import gang
    /// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    /// >>> inv.find(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 1})])).nodes
    /// {'a1': 2}
    /// >>> inv.find(gang.Gang("g", [gang.Role("w", 4, requests={"gpu": 1})])) is None
    /// True
    #[pyo3(signature = (gang, *, search_budget = None, timeout = None))]
    fn find(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        search_budget: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<PyPlacement>> {
        let (found, g) = self.run(
            py,
            gang,
            (search_budget, timeout),
            |solver, inv, compiled| inv.find_with(solver.solver(), compiled),
        )?;
        Ok(found.map(|p| self.wrap_in(p, g)))
    }

    // ------------------------------------------------------------------ lifecycle

    /// Applies a placement atomically: re-checks every member against the inventory
    /// as it is now and, if all still fit, holds their capacity under a new id.
    /// Raises `Conflict` (naming the node and resource) and changes nothing otherwise.
    fn reserve(&self, py: Python<'_>, placement: &Bound<'_, PyAny>) -> PyResult<PyReservation> {
        let Ok(placement) = placement.cast::<PyPlacement>() else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "placement",
                &pyde::obj_repr(placement),
                "expected a Placement (from place, try_place or find)",
            ));
        };
        let placement = placement.get();
        let Some(p) = placement.core() else {
            return Err(edge_error(
                ErrorKind::InvalidRequest,
                "placement",
                placement.gang_name(),
                "an unpickled placement cannot be reserved; place the gang again here",
            ));
        };
        let state = &self.state;
        py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let id = inv.reserve(p)?;
                    reservation_data(inv, id)
                })
            })
        })
        .map(PyReservation)
    }

    /// Gives back exactly what a reservation holds, and forgets it; returns it as it
    /// was. Raises `UnknownReservation` when it is not live here: released already
    /// (nothing is ever credited twice), or made by another inventory (the message
    /// names both).
    fn release(&self, py: Python<'_>, reservation: &Bound<'_, PyAny>) -> PyResult<PyReservation> {
        let id = reservation_id(reservation)?;
        let state = &self.state;
        py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let data = reservation_data(inv, id)?;
                    inv.release(id)?;
                    Ok(data)
                })
            })
        })
        .map(PyReservation)
    }

    /// The live reservation with this id; None when this inventory made it and it was
    /// released. An id of another inventory raises `UnknownReservation`.
    fn reservation(&self, reservation: &Bound<'_, PyAny>) -> PyResult<Option<PyReservation>> {
        let id = reservation_id(reservation)?;
        self.state
            .with_inventory(|inv| match inv.live_reservation(id) {
                Ok(r) => Ok(Some(PyReservation(r.snapshot(inv)))),
                Err(Error::UnknownReservation { .. }) => Ok(None),
                Err(e) => Err(to_py_err(e)),
            })
    }

    /// Live reservations, by id.
    #[getter]
    fn reservations(&self) -> Vec<PyReservation> {
        self.state.with_inventory(|inv| {
            inv.reservations()
                .map(|r| PyReservation(r.snapshot(inv)))
                .collect()
        })
    }

    /// Places the members a reservation lost (with `remove_node` / `fail_node`) inside
    /// the gang's original domain, and nowhere else; returns the members added. Raises
    /// `Pending` (saying which domain binds the gang and what it lacks) when that
    /// domain has no room now; nothing is applied then.
    fn replace(
        &self,
        py: Python<'_>,
        reservation: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyAssignment>> {
        let id = reservation_id(reservation)?;
        let state = &self.state;
        let r = py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    // An id of another inventory is reported as such, naming both.
                    inv.live_reservation(id)?;
                    inv.replace(id)
                })
            })
        })?;
        match r {
            Replacement::Placed { added } => Ok(added.into_iter().map(PyAssignment).collect()),
            Replacement::Pending(p) => Err(lifecycle::pending(py, p)),
        }
    }

    /// Adds a node (a `Node` or a dict).
    fn add_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let spec = node_from(node, "node")?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.add_node(spec))))
    }

    /// Removes a node; returns what reservations lost with it (see `replace`).
    fn remove_node(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Vec<PyLost>> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.remove_node(&name))))
            .map(lifecycle::lost_list)
    }

    /// Marks a node failed: it is cordoned and reservations lose their members there
    /// (their capacity is given back); returns what was lost.
    fn fail_node(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Vec<PyLost>> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.fail_node(&name))))
            .map(lifecycle::lost_list)
    }

    /// Cordons a node: nothing new is placed on it; reservations there stay.
    fn cordon(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.cordon(&name))))
    }

    /// Uncordons a node.
    fn uncordon(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(false, |inv| inv.uncordon(&name))))
    }

    /// Replaces a node's labels; returns the ids of reservations whose constrained
    /// members are no longer inside their domain.
    fn set_labels(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyReservationId>> {
        let name = convert::string(name, "node", ErrorKind::UnknownNode)?;
        let k = ErrorKind::InvalidInventory;
        let labels: IndexMap<String, String> =
            convert::str_map(Some(labels), &format!("nodes[{name}].labels"), k, |v, f| {
                convert::string(v, f, k)
            })?
            .into_iter()
            .collect();
        let state = &self.state;
        py.detach(|| core(|| state.with_inventory_mut(true, |inv| inv.set_labels(&name, labels))))
            .map(|ids| ids.into_iter().map(PyReservationId).collect())
    }

    /// Sets a node's allocatable capacity of a resource (any amount `Node` takes);
    /// returns where capacity is now below what is used and reserved (the change is
    /// applied; those reservations are reported).
    fn set_capacity(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        resource: &Bound<'_, PyAny>,
        amount: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyOvercommit>> {
        let node = convert::string(node, "node", ErrorKind::UnknownNode)?;
        let resource = convert::string(resource, "resource", ErrorKind::InvalidInventory)?;
        let a = convert::exact(amount, &format!("nodes[{node}].capacity.{resource}"))?;
        let state = &self.state;
        py.detach(|| {
            core(|| state.with_inventory_mut(false, |inv| inv.set_capacity(&node, &resource, a)))
        })
        .map(|v| v.into_iter().map(PyOvercommit).collect())
    }

    /// Sets the amount of a resource used on a node by workloads gang did not place;
    /// reports overcommitment like `set_capacity`. With numpy or pandas values too:
    /// anything with `__index__` or that `float()` accepts.
    fn set_used(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        resource: &Bound<'_, PyAny>,
        amount: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyOvercommit>> {
        let node = convert::string(node, "node", ErrorKind::UnknownNode)?;
        let resource = convert::string(resource, "resource", ErrorKind::InvalidInventory)?;
        let a = convert::exact(amount, &format!("nodes[{node}].used.{resource}"))?;
        let state = &self.state;
        py.detach(|| {
            core(|| state.with_inventory_mut(false, |inv| inv.set_used(&node, &resource, a)))
        })
        .map(|v| v.into_iter().map(PyOvercommit).collect())
    }

    /// Places and reserves up to `replicas` replicas of `gang`, each in its own domain
    /// of `level` (all of them, or at least `min_replicas`, or nothing); with `within`,
    /// all replicas inside one domain of that level.
    #[pyo3(signature = (gang, replicas, level, *, min_replicas = None, within = None))]
    fn spread(
        &self,
        py: Python<'_>,
        gang: &Bound<'_, PyAny>,
        replicas: &Bound<'_, PyAny>,
        level: &Bound<'_, PyAny>,
        min_replicas: Option<&Bound<'_, PyAny>>,
        within: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySpreadOutcome> {
        let k = ErrorKind::InvalidRequest;
        let g = gang_from(gang)?;
        let replicas = convert::count(replicas, "spread.replicas", k)?;
        let level = convert::string(level, "spread.level", k)?;
        let mut spread = Spread::new(g, replicas, level);
        if let Some(m) = convert::opt_count(min_replicas, "spread.min_replicas", k)? {
            spread = spread.min_replicas(m);
        }
        if let Some(w) = convert::opt_string(within, "spread.within", k)? {
            spread = spread.within(w);
        }
        let state = &self.state;
        let (out, reservations) = py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let out = inv.spread(&spread)?;
                    let data = match &out {
                        SpreadOutcome::Placed { reservations, .. } => reservations
                            .iter()
                            .map(|&id| reservation_data(inv, id))
                            .collect::<Result<Vec<_>, _>>()?,
                        _ => Vec::new(),
                    };
                    Ok((out, data))
                })
            })
        })?;
        Ok(match out {
            SpreadOutcome::Placed { placements, .. } => PySpreadOutcome {
                fit: reservations.len() as u32,
                needed: spread.get_min_replicas().unwrap_or(spread.get_replicas()),
                reservations: reservations
                    .into_iter()
                    .map(|d| Py::new(py, PyReservation(d)))
                    .collect::<PyResult<_>>()?,
                placements: placements
                    .into_iter()
                    .map(|p| Py::new(py, self.wrap(p)))
                    .collect::<PyResult<_>>()?,
                diagnosis: None,
            },
            SpreadOutcome::Unschedulable {
                fit,
                needed,
                diagnosis,
            } => PySpreadOutcome {
                reservations: Vec::new(),
                placements: Vec::new(),
                fit,
                needed,
                diagnosis: diagnosis
                    .map(|d| Py::new(py, self.diagnosis(d)))
                    .transpose()?,
            },
        })
    }

    /// Admits a queue of gangs in order: each is placed whole and reserved, or waits
    /// holding nothing. `mode` is "fifo" (the first gang that does not fit blocks the
    /// rest) or "backfill" (later gangs may go ahead, only on nodes the waiting head
    /// cannot use).
    #[pyo3(signature = (queue, mode = None))]
    fn admit(
        &self,
        py: Python<'_>,
        queue: &Bound<'_, PyAny>,
        mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyAdmission>> {
        let mode = match convert::opt_string(mode, "mode", ErrorKind::InvalidRequest)?.as_deref() {
            None | Some("fifo") => AdmitMode::Fifo,
            Some("backfill") => AdmitMode::Backfill,
            Some(other) => {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "mode",
                    other,
                    "expected fifo or backfill",
                ))
            }
        };
        let gangs: Vec<Gang> = items(Some(queue), "queue", ErrorKind::InvalidRequest)?
            .iter()
            .map(|g| gang_from(g))
            .collect::<PyResult<_>>()?;
        let state = &self.state;
        let (out, data) = py.detach(|| {
            core(|| {
                state.with_inventory_mut(false, |inv| {
                    let out = inv.admit(&gangs, mode)?;
                    let data = out
                        .iter()
                        .map(|a| match a {
                            Admission::Placed { reservation, .. } => {
                                reservation_data(inv, *reservation).map(Some)
                            }
                            Admission::Waiting { .. } => Ok(None),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((out, data))
                })
            })
        })?;
        gangs
            .iter()
            .zip(out)
            .zip(data)
            .map(|((g, a), data)| {
                Ok(match a {
                    Admission::Placed { placement, .. } => PyAdmission {
                        gang: g.get_name().to_owned(),
                        reservation: data.map(|d| Py::new(py, PyReservation(d))).transpose()?,
                        placement: Some(Py::new(py, self.wrap(placement))?),
                        diagnosis: None,
                        blocked_by: None,
                    },
                    Admission::Waiting {
                        diagnosis,
                        blocked_by,
                    } => PyAdmission {
                        gang: g.get_name().to_owned(),
                        reservation: None,
                        placement: None,
                        diagnosis: diagnosis
                            .map(|d| Py::new(py, self.diagnosis(d)))
                            .transpose()?,
                        blocked_by,
                    },
                })
            })
            .collect()
    }

    /// Re-checks the inventory's internal invariants (for tests); raises
    /// `InternalError` describing the first broken one.
    fn _validate(&self) -> PyResult<()> {
        guard(|| self.state.with_inventory(|inv| inv.validate()))?
            .map_err(crate::errors::InternalError::new_err)
    }

    fn __len__(&self) -> usize {
        self.state.with_inventory(|inv| inv.len())
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> bool {
        match name.cast::<PyString>() {
            Ok(s) => self
                .state
                .with_inventory(|inv| inv.node_spec(&s.to_string_lossy()).is_some()),
            Err(_) => name.cast::<PyNode>().is_ok_and(|n| {
                self.state.with_inventory(|inv| {
                    inv.node_spec(n.get().0.get_name()).as_ref() == Some(&n.get().0)
                })
            }),
        }
    }

    /// The nodes, in topology order.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nodes = self.nodes().into_pyobject(py)?;
        nodes.try_iter().map(Bound::into_any)
    }

    /// Equal when both hold the same nodes (as they stand now) and the same
    /// reservations (by serial number): `to_dict()` is equal. Inventories change, so
    /// they are not hashable.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<Self>() {
            Ok(o) => {
                let same = Arc::ptr_eq(&o.get().state, &self.state)
                    || o.get().document() == self.document();
                pyo3::types::PyBool::new(py, same)
                    .to_owned()
                    .into_any()
                    .unbind()
            }
            Err(_) => py.NotImplemented(),
        }
    }

    fn __repr__(&self) -> String {
        let (levels, n, res, r) = self.state.with_inventory(|inv| {
            (
                inv.topology().levels().to_vec(),
                inv.len(),
                inv.resources().map(str::to_owned).collect::<Vec<_>>(),
                inv.reservations().count(),
            )
        });
        let q = |v: &[String]| {
            format!(
                "[{}]",
                v.iter().map(|s| repr_str(s)).collect::<Vec<_>>().join(", ")
            )
        };
        format!(
            "Inventory(levels={}, nodes={n}, resources={}, reservations={r})",
            q(&levels),
            q(&res)
        )
    }

    /// For notebooks: one row per node, with its labels at each level and free amounts.
    fn _repr_html_(&self) -> String {
        self.state.with_inventory(|inv| {
            let levels = label_levels(inv);
            let res: Vec<String> = inv.resources().map(str::to_owned).collect();
            let mut head: Vec<String> = vec!["node".into()];
            head.extend(levels.iter().cloned());
            head.extend(res.iter().map(|r| format!("free {r}")));
            head.push("schedulable".into());
            const SHOWN: usize = 50;
            let rows: Vec<Vec<String>> = inv
                .node_names()
                .take(SHOWN)
                .filter_map(|n| inv.node_spec(n))
                .map(|s| {
                    let mut row = vec![s.get_name().to_owned()];
                    row.extend(
                        levels
                            .iter()
                            .map(|l| s.get_label(l).unwrap_or("").to_owned()),
                    );
                    row.extend(res.iter().map(|r| {
                        inv.free(s.get_name(), r)
                            .map(|q| q.to_string())
                            .unwrap_or_default()
                    }));
                    row.push(s.is_schedulable().to_string());
                    row
                })
                .collect();
            let more = if inv.len() > SHOWN {
                format!(" (first {SHOWN} shown)")
            } else {
                String::new()
            };
            let head: Vec<&str> = head.iter().map(String::as_str).collect();
            html::table(
                &format!(
                    "Inventory: {} nodes, {} reservations{more}",
                    inv.len(),
                    inv.reservations().count()
                ),
                &head,
                &rows,
            )
        })
    }

    /// Pickles as its document (`to_json`): nodes, free capacity and reservations.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().getattr("from_json")?, (slf.get().to_json(),)))
    }

    /// An independent copy holding the same reservations under the same ids.
    fn __copy__(&self) -> Self {
        PyInventory::from_inventory(self.state.with_inventory(Inventory::clone))
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.__copy__()
    }
}

/// A gang validated against one inventory, for repeated `Inventory.place` calls.
/// Tied to that inventory (placing it on another raises `InvalidRequest`); not
/// picklable — pickle the `Gang` and compile again.
#[pyclass(name = "CompiledGang", module = "gang", frozen)]
pub struct PyCompiledGang {
    compiled: CompiledGang,
    inventory: Arc<InvState>,
}

#[pymethods]
impl PyCompiledGang {
    /// The gang as given.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang::of(self.compiled.gang().clone())
    }
    fn __repr__(&self) -> String {
        format!(
            "CompiledGang({}, inventory of {} nodes)",
            repr_str(self.compiled.gang().get_name()),
            self.inventory.with_inventory(|inv| inv.len())
        )
    }
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "a CompiledGang is tied to its inventory and cannot be pickled or copied; pickle the Gang and compile it again",
        ))
    }
}
