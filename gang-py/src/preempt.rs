//! Preemption's Python face (issue 22): the `Preemption` plan `Inventory.preempt`
//! returns, and evictable units read from Python.
//!
//! A plan reads as the core's document (`plan["status"]`, `plan["victims"]`, …: a
//! read-only mapping, equal to the dict it stands for) and as records for tables:
//! `to_records()` is one flat dict per victim, `summary()` one flat dict for the plan
//! (the same columns for every plan, placed or not), so `pandas.DataFrame(
//! plan.to_records())` and `gang.to_pandas([plan, …])` take them directly. Everything
//! in it is the core's answer; nothing is decided here.

use gang_core::lifecycle::{PreemptOptions, PreemptOutcome, VictimId};
use gang_core::{Error, ErrorKind, EvictableUnit, Gang, Limits, Quantity, ReservationId, Solver};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use crate::convert::{self, items, repr_str};
use crate::errors::edge_error;
use crate::html;
use crate::lifecycle::reservation_id;
use crate::pyde;
use crate::pyser::to_py;
use crate::state::InvState;

/// `Inventory.preempt_reserve`'s work, the GIL released: `inv.preempt(&g)`'s answer
/// with `options` (the default budget, no deadline), from a kept solver of the pool,
/// then the plan applied (the new reservation's id; `None` when there is no plan).
pub fn reserve(
    state: &InvState,
    g: &Gang,
    options: &PreemptOptions,
) -> Result<(PreemptOutcome, Option<ReservationId>), Error> {
    state.with_inventory_mut(false, |inv| {
        let compiled = inv.compile(g)?;
        let budget = Solver::DEFAULT_SEARCH_BUDGET;
        let answer = state.with_solver(budget, |s| {
            s.solver().set_limits(Limits::work(budget));
            s.preempt(inv, &compiled, options)
        })?;
        let id = match answer.preemption() {
            Some(plan) => Some(inv.preempt_reserve(plan)?.reservation),
            None => None,
        };
        Ok((answer, id))
    })
}

/// gang-core's `PreemptOptions` from `preempt`'s keywords: `cost_resources` (resource
/// names, most important first; `None`: GPUs), `costs` (a mapping from a reservation —
/// a `Reservation`, `ReservationId` or its int — or an evictable unit's id (a `str`) to
/// a non-negative integer cost), `max_work` (`None`: the default). Errors are
/// `InvalidRequest` naming the keyword (and the key).
pub fn options_from(
    cost_resources: Option<&Bound<'_, PyAny>>,
    costs: Option<&Bound<'_, PyAny>>,
    max_work: Option<&Bound<'_, PyAny>>,
) -> PyResult<PreemptOptions> {
    let k = ErrorKind::InvalidRequest;
    let mut o = PreemptOptions::new();
    if let Some(r) = cost_resources.filter(|r| !r.is_none()) {
        let names = items(Some(r), "cost_resources", k)?
            .iter()
            .enumerate()
            .map(|(i, x)| convert::string(x, &format!("cost_resources[{i}]"), k))
            .collect::<PyResult<Vec<String>>>()?;
        o = o.cost_resources(names);
    }
    if let Some(m) = costs.filter(|m| !m.is_none()) {
        let pairs = m.call_method0("items").map_err(|_| {
            edge_error(
                k,
                "costs",
                &pyde::obj_repr(m),
                "expected a mapping (a dict)",
            )
        })?;
        for pair in pairs.try_iter()? {
            let (key, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?.extract()?;
            let id = if let Ok(s) = key.cast::<PyString>() {
                VictimId::Unit(convert::string(s.as_any(), "costs", k)?)
            } else {
                VictimId::Reservation(reservation_id(&key).map_err(|_| {
                    edge_error(
                        k,
                        "costs",
                        &pyde::obj_repr(&key),
                        "keys are reservations (a Reservation, ReservationId or int) or evictable unit ids (str)",
                    )
                })?)
            };
            let at = format!("costs[{}]", pyde::obj_repr(&key));
            let cost = convert::int_in(&v, &at, k, 0, u64::MAX)?;
            o = o.cost(id, cost);
        }
    }
    if let Some(w) = max_work.filter(|w| !w.is_none()) {
        o = o.max_work(convert::int_in(w, "max_work", k, 0, u64::MAX)?);
    }
    Ok(o)
}

/// A victim's pickled state: name, kind, reservation, priority, cost, evicted (resource,
/// milli-units).
type VictimState = (String, String, Option<u64>, i32, u64, Vec<(String, u64)>);

/// A plan's pickled state (`Preemption.__reduce__`): the document, gang, status, level,
/// domain, victims, whether the search was complete, the words.
type State<'py> = (
    Bound<'py, PyDict>,
    String,
    String,
    Option<String>,
    Option<String>,
    Vec<VictimState>,
    bool,
    String,
);

/// One victim, as a table row has it.
struct Row {
    name: String,
    kind: &'static str,
    reservation: Option<u64>,
    priority: i32,
    cost: u64,
    evicted: Vec<(String, Quantity)>,
}

/// A quantity in its resource's natural unit (devices, cores, bytes), as a table cell.
fn units(q: Quantity) -> f64 {
    q.millis() as f64 / 1000.0
}

/// The column of the amount of `resource` evicted.
fn evicted_column(resource: &str) -> String {
    format!("evicted.{resource}")
}

/// What preempting would take for a gang (`Inventory.preempt`), or what was done
/// (`Inventory.preempt_reserve`): the victims to evict — whole reservations and
/// evictable units, of strictly lower priority — and the placement the gang gets once
/// they are gone; or why no eviction helps (`status` "unschedulable", or "undecided"
/// when the search ran out of work).
///
/// Read it as the core's document (`plan["status"]`, `plan["victims"]`,
/// `plan["placement"]`, `plan["diagnosis"]`; `to_dict()` is the dict, and a plan equals
/// it), or as records: `to_records()` has one row per victim (`gang`, `victim`, `kind`
/// "gang" or "unit", `reservation`, `priority`, `cost`, `level`, `domain`, and
/// `evicted.<resource>` for every resource a victim holds, in the resource's natural
/// unit), `summary()` one row for the plan (`status`, `gang`, `level`, `domain`,
/// `victims`, `highest_priority`, `cost`, `evicted.<resource>`, `search_complete`).
///
/// >>> import gang
/// >>> inv = gang.Inventory(["rack"], [gang.Node(n, labels={"rack": "r"}, capacity={"gpu": 4}) for n in ("n1", "n2")])
/// >>> inv.add_evictable("batch", priority=0, nodes={"n1": {"gpu": 4}})
/// >>> inv.add_evictable("eval", priority=5, nodes={"n2": {"gpu": 2}})
/// >>> plan = inv.preempt(gang.Gang("train", [gang.Role("w", 7, requests={"gpu": 1})], required="rack", priority=10))
/// >>> plan
/// Preemption(gang='train', status='placed', victims=['batch', 'eval'], domain='r')
/// >>> [(r["victim"], r["kind"], r["priority"], r["evicted.gpu"]) for r in plan.to_records()]
/// [('batch', 'unit', 0, 4.0), ('eval', 'unit', 5, 2.0)]
/// >>> s = plan.summary()
/// >>> s["victims"], s["highest_priority"], s["evicted.gpu"]
/// (2, 5, 6.0)
/// >>> plan["status"], plan["victims"][0]["id"]
/// ('placed', {'kind': 'unit', 'id': 'batch'})
#[pyclass(name = "Preemption", module = "gang", frozen)]
pub struct PyPreemption {
    doc: Py<PyDict>,
    gang: String,
    status: &'static str,
    level: Option<String>,
    domain: Option<String>,
    victims: Vec<Row>,
    search_complete: bool,
    /// The answer in gang-core's words (`str(plan)`).
    message: String,
}

impl PyPreemption {
    /// The plan of `outcome` for the gang named `gang`; `reservation`: the id
    /// `preempt_reserve` made (added to the document as `"reservation"`).
    pub fn new(
        py: Python<'_>,
        gang: &str,
        outcome: &PreemptOutcome,
        reservation: Option<Option<u64>>,
    ) -> PyResult<Self> {
        let doc = to_py(py, outcome)?.cast_into::<PyDict>()?;
        if let Some(id) = reservation {
            doc.set_item("reservation", id)?;
        }
        let (level, domain, victims, search_complete) = match outcome.preemption() {
            Some(plan) => {
                let p = plan.placement();
                let victims = plan
                    .victims()
                    .iter()
                    .map(|v| Row {
                        name: v.name.clone(),
                        kind: match v.id {
                            VictimId::Reservation(_) => "gang",
                            _ => "unit",
                        },
                        reservation: match v.id {
                            VictimId::Reservation(id) => Some(id.0),
                            _ => None,
                        },
                        priority: v.priority,
                        cost: v.cost,
                        evicted: v.evicted.clone(),
                    })
                    .collect();
                (
                    p.level().map(str::to_owned),
                    Some(p.domain_path()),
                    victims,
                    plan.search_complete(),
                )
            }
            None => (None, None, Vec::new(), false),
        };
        Ok(PyPreemption {
            doc: doc.unbind(),
            gang: gang.to_owned(),
            status: outcome.status(),
            level,
            domain,
            victims,
            search_complete,
            message: outcome.to_string(),
        })
    }

    /// Every resource a victim holds, in first-seen order.
    fn resources(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (r, _) in self.victims.iter().flat_map(|v| &v.evicted) {
            if !out.contains(&r.as_str()) {
                out.push(r);
            }
        }
        out
    }

    fn evicted_total(&self, resource: &str) -> Quantity {
        Quantity::from_millis(
            self.victims
                .iter()
                .flat_map(|v| &v.evicted)
                .filter(|(r, _)| r == resource)
                .fold(0u64, |a, (_, q)| a.saturating_add(q.millis())),
        )
    }
}

#[pymethods]
impl PyPreemption {
    /// `"placed"` (a plan: evict `victims`, then the gang fits; none when it fits now),
    /// `"unschedulable"` (no eviction of lower-priority work helps) or `"undecided"`.
    #[getter]
    fn status(&self) -> &'static str {
        self.status
    }
    /// The gang asked about.
    #[getter]
    fn gang(&self) -> &str {
        &self.gang
    }
    /// False when the search ran out of work before proving the plan the best (it is a
    /// valid plan either way), and when there is no plan.
    #[getter]
    fn search_complete(&self) -> bool {
        self.search_complete
    }
    /// One dict per victim, in the plan's order (see the class docs): ready for
    /// `pandas.DataFrame`, `polars.DataFrame`, `pyarrow.Table.from_pylist`.
    fn to_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let resources = self.resources();
        let out = PyList::empty(py);
        for v in &self.victims {
            let d = PyDict::new(py);
            d.set_item("gang", &self.gang)?;
            d.set_item("victim", &v.name)?;
            d.set_item("kind", v.kind)?;
            d.set_item("reservation", v.reservation)?;
            d.set_item("priority", v.priority)?;
            d.set_item("cost", v.cost)?;
            d.set_item("level", self.level.as_deref())?;
            d.set_item("domain", self.domain.as_deref())?;
            for r in &resources {
                let q = v
                    .evicted
                    .iter()
                    .find(|(x, _)| x == r)
                    .map_or(Quantity::from_millis(0), |(_, q)| *q);
                d.set_item(evicted_column(r), units(q))?;
            }
            out.append(d)?;
        }
        Ok(out)
    }
    /// One flat record for the plan (see the class docs); `gang.to_pandas` of several
    /// plans is one table.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("status", self.status)?;
        d.set_item("gang", &self.gang)?;
        d.set_item("level", self.level.as_deref())?;
        d.set_item("domain", self.domain.as_deref())?;
        // The domain's own label value (the last segment of its path).
        d.set_item(
            "domain_value",
            self.domain.as_deref().and_then(|p| p.rsplit('/').next()),
        )?;
        d.set_item("victims", self.victims.len())?;
        d.set_item(
            "highest_priority",
            self.victims.iter().map(|v| v.priority).max(),
        )?;
        d.set_item(
            "cost",
            self.victims
                .iter()
                .fold(0u64, |a, v| a.saturating_add(v.cost)),
        )?;
        for r in self.resources() {
            d.set_item(evicted_column(r), units(self.evicted_total(r)))?;
        }
        d.set_item("search_complete", self.search_complete)?;
        Ok(d)
    }
    /// Pickles as its state (the document and the rows it was read into): an unpickled
    /// plan reads, compares and prints as the original. It is data: to apply a plan,
    /// ask `preempt_reserve` on the live inventory.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyTuple>,))> {
        let py = slf.py();
        let p = slf.get();
        let victims = PyList::empty(py);
        for v in &p.victims {
            let evicted: Vec<(&str, u64)> = v
                .evicted
                .iter()
                .map(|(r, q)| (r.as_str(), q.millis()))
                .collect();
            victims.append((
                v.name.as_str(),
                v.kind,
                v.reservation,
                v.priority,
                v.cost,
                evicted,
            ))?;
        }
        let state = PyTuple::new(
            py,
            [
                p.doc.bind(py).clone().into_any(),
                p.gang.as_str().into_pyobject(py)?.into_any(),
                p.status.into_pyobject(py)?.into_any(),
                p.level.as_deref().into_pyobject(py)?.into_any(),
                p.domain.as_deref().into_pyobject(py)?.into_any(),
                victims.into_any(),
                pyo3::types::PyBool::new(py, p.search_complete)
                    .to_owned()
                    .into_any(),
                p.message.as_str().into_pyobject(py)?.into_any(),
            ],
        )?;
        Ok((slf.get_type().getattr("_from_state")?, (state,)))
    }
    /// Rebuilds a plan from `__reduce__`'s state.
    #[classmethod]
    fn _from_state(_cls: &Bound<'_, PyType>, state: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let (doc, gang, status, level, domain, victims, search_complete, message): State<'_> =
            state.extract()?;
        let status = match status.as_str() {
            "placed" => "placed",
            "unschedulable" => "unschedulable",
            "undecided" => "undecided",
            other => {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "status",
                    other,
                    "not a Preemption's state",
                ))
            }
        };
        let victims = victims
            .into_iter()
            .map(|(name, kind, reservation, priority, cost, evicted)| Row {
                name,
                kind: if kind == "gang" { "gang" } else { "unit" },
                reservation,
                priority,
                cost,
                evicted: evicted
                    .into_iter()
                    .map(|(r, m)| (r, Quantity::from_millis(m)))
                    .collect(),
            })
            .collect();
        Ok(PyPreemption {
            doc: doc.unbind(),
            gang,
            status,
            level,
            domain,
            victims,
            search_complete,
            message,
        })
    }
    /// The core's document as a dict (a copy).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("copy")?
            .call_method1("deepcopy", (self.doc.bind(py),))
    }
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.doc
            .bind(py)
            .get_item(key)?
            .ok_or_else(|| PyKeyError::new_err(key.to_owned()))
    }
    fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.doc.bind(py).contains(key)
    }
    fn __len__(&self, py: Python<'_>) -> usize {
        self.doc.bind(py).len()
    }
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.doc
            .bind(py)
            .keys()
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }
    /// The document's keys.
    fn keys<'py>(&self, py: Python<'py>) -> Bound<'py, PyList> {
        self.doc.bind(py).keys()
    }
    /// `plan[key]`, or `default` when the document has no `key`.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.doc.bind(py).get_item(key)? {
            Some(v) => v,
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }
    /// Equal to another plan, or to a dict, with the same document.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(o) = other.cast::<PyPreemption>() {
            return self.doc.bind(py).eq(o.get().doc.bind(py));
        }
        if other.cast::<PyDict>().is_ok() {
            return self.doc.bind(py).eq(other);
        }
        Ok(false)
    }
    /// The answer in words, as gang-core and the CLI say it.
    fn __str__(&self) -> String {
        self.message.clone()
    }
    fn __repr__(&self) -> String {
        let names: Vec<String> = self.victims.iter().map(|v| repr_str(&v.name)).collect();
        format!(
            "Preemption(gang={}, status={}, victims=[{}], domain={})",
            repr_str(&self.gang),
            repr_str(self.status),
            names.join(", "),
            self.domain.as_deref().map_or("None".to_owned(), repr_str)
        )
    }
    /// For notebooks: one row per victim.
    fn _repr_html_(&self) -> String {
        let resources = self.resources();
        let mut head = vec!["victim".to_owned(), "kind".into(), "priority".into()];
        head.extend(resources.iter().map(|r| format!("evicted {r}")));
        let rows: Vec<Vec<String>> = self
            .victims
            .iter()
            .map(|v| {
                let mut row = vec![v.name.clone(), v.kind.to_owned(), v.priority.to_string()];
                row.extend(resources.iter().map(|r| {
                    v.evicted
                        .iter()
                        .find(|(x, _)| x == r)
                        .map_or_else(|| "0".to_owned(), |(_, q)| q.to_string())
                }));
                row
            })
            .collect();
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        let caption = match &self.domain {
            Some(d) => format!(
                "Preemption for {}: {} victim(s), then in {d}",
                self.gang,
                self.victims.len()
            ),
            None => format!("Preemption for {}: {}", self.gang, self.status),
        };
        html::table(&caption, &head, &rows)
    }
}

/// An evictable unit from `add_evictable`'s arguments: amounts read as `Node`'s are,
/// errors naming `evictable[id].nodes[node].resource`.
pub fn unit_from(
    id: &Bound<'_, PyAny>,
    priority: &Bound<'_, PyAny>,
    nodes: Option<&Bound<'_, PyAny>>,
) -> PyResult<EvictableUnit> {
    let py = id.py();
    let id = convert::string(id, "evictable.id", ErrorKind::InvalidInventory)?;
    let at = format!("evictable[{id}]");
    let priority = convert::priority(
        priority,
        &format!("{at}.priority"),
        ErrorKind::InvalidInventory,
    )?;
    let mut unit = EvictableUnit::new(id.clone(), priority);
    let k = ErrorKind::InvalidInventory;
    let keep = |v: &Bound<'_, PyAny>, _: &str| Ok(v.clone().unbind());
    for (node, amounts) in convert::str_map(nodes, &format!("{at}.nodes"), k, keep)? {
        let at = format!("{at}.nodes[{node}]");
        let amounts = amounts.bind(py);
        for (res, a) in convert::str_map(Some(amounts), &at, k, convert::exact)? {
            unit = unit.amount(node.clone(), res, a);
        }
    }
    Ok(unit)
}
