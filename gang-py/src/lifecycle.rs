//! Lifecycle results: `ReservationId`, `Reservation`, `Lost`, `Overcommit`, `Admission`,
//! `SpreadOutcome`, and the `Pending` exception of `replace`. The operations themselves
//! are methods of `Inventory` (inventory.rs) that call the core under the inventory's
//! write lock.
//!
//! Every class here is an immutable snapshot taken when the operation returned (ask
//! the inventory again, `reservation(id)` or `reservations`, for the current state);
//! each compares by content, converts `to_dict()`, pickles and copies.

use gang_core::lifecycle::{Lost, Overcommit, Pending, ReservationSnapshot};
use gang_core::{ErrorKind, ReservationId};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::convert::repr_str;
use crate::dunder::{value_class, Repr};
use crate::errors::{edge_error, raise};
use crate::outcome::{PyAssignment, PyDiagnosis, PyPlacement};
use crate::pyde::{self, number, Number};
use crate::pyser::to_py;
use crate::spec::{PyGang, PyQuantity};

/// A reservation id given as a `Reservation`, a `ReservationId` or its int value.
pub fn reservation_id(obj: &Bound<'_, PyAny>) -> PyResult<ReservationId> {
    if let Ok(r) = obj.cast::<PyReservation>() {
        return Ok(r.get().0.id);
    }
    if let Ok(r) = obj.cast::<PyReservationId>() {
        return Ok(r.get().0);
    }
    match number(obj) {
        Ok(Some(Number::Int(i))) if i >= 0 => Ok(ReservationId(i as u64)),
        Ok(Some(Number::UInt(u))) => Ok(ReservationId(u)),
        _ => Err(edge_error(
            ErrorKind::InvalidRequest,
            "reservation",
            &pyde::obj_repr(obj),
            "expected a Reservation or its id (a ReservationId or its int value)",
        )),
    }
}

/// Python's hash of a non-negative int (so a ReservationId hashes like its int).
fn int_hash(v: u64) -> isize {
    (v % ((1u64 << 61) - 1)) as isize
}

/// Identifies a reservation: the inventory that made it and its serial number there
/// (`#0`, `#1`… in the order they were made). Only the inventory that made it (and
/// copies of it) accept it: another inventory raises `UnknownReservation` naming both.
/// `int(id)` is its value as the C ABI and Go carry it.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
/// >>> r = inv.reserve(inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})])))
/// >>> r.id.serial, r.id.inventory == inv.id, str(r.id)
/// (0, True, '#0')
/// >>> gang.ReservationId(int(r.id)) == r.id
/// True
#[pyclass(name = "ReservationId", module = "gang", frozen)]
#[derive(Clone, Copy)]
pub struct PyReservationId(pub ReservationId);

#[pymethods]
impl PyReservationId {
    /// The id with this int value (`int(id)`).
    #[new]
    fn new(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::convert::int_in(value, "reservation", ErrorKind::InvalidRequest, 0, u64::MAX)
            .map(|v| PyReservationId(ReservationId(v)))
    }
    /// The serial number in its inventory (0, 1, 2…).
    #[getter]
    fn serial(&self) -> u64 {
        self.0.serial()
    }
    /// The id of the inventory that made it (`Inventory.id`).
    #[getter]
    fn inventory(&self) -> u32 {
        self.0.inventory().get()
    }
    fn __int__(&self) -> u64 {
        self.0 .0
    }
    fn __index__(&self) -> u64 {
        self.0 .0
    }
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let o = if let Ok(r) = other.cast::<PyReservationId>() {
            r.get().0 .0
        } else {
            match number(other) {
                Ok(Some(Number::Int(i))) if i >= 0 => i as u64,
                Ok(Some(Number::UInt(u))) => u,
                _ => return py.NotImplemented(),
            }
        };
        match op {
            CompareOp::Eq | CompareOp::Ne => {
                pyo3::types::PyBool::new(py, op.matches(self.0 .0.cmp(&o)))
                    .to_owned()
                    .into_any()
                    .unbind()
            }
            _ => py.NotImplemented(),
        }
    }
    fn __hash__(&self) -> isize {
        int_hash(self.0 .0)
    }
    fn __str__(&self) -> String {
        self.0.to_string()
    }
    fn __repr__(&self) -> String {
        format!(
            "ReservationId({} of inventory {})",
            self.0,
            self.0.inventory().get()
        )
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (u64,))> {
        Ok((slf.get_type().into_any(), (slf.get().0 .0,)))
    }
}

fn path(domain: &[(String, String)]) -> String {
    domain
        .iter()
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join("/")
}

/// A reservation: capacity held for a placed gang, under an id. A snapshot taken when
/// the operation returned; `Inventory.reservation(id)` gives the current one.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
/// >>> r = inv.reserve(inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})])))
/// >>> r.id.serial, r.members, inv.free("a1", "gpu")
/// (0, [Assignment(role='w', node='a1', count=2)], Quantity('0'))
/// >>> inv.release(r).member_count, inv.free("a1", "gpu")
/// (2, Quantity('8'))
#[pyclass(name = "Reservation", module = "gang", frozen)]
pub struct PyReservation(pub ReservationSnapshot);

impl Repr for PyReservation {
    fn repr(&self) -> String {
        let lost: u64 = self.0.lost.iter().map(|l| u64::from(l.count)).sum();
        format!(
            "Reservation(id={}, gang={}, domain={}, members={}, lost={lost})",
            self.0.id,
            repr_str(self.0.gang.get_name()),
            repr_str(&path(&self.0.domain)),
            self.member_count()
        )
    }
}

impl PyReservation {
    fn member_count(&self) -> u64 {
        self.0.members.iter().map(|a| u64::from(a.count)).sum()
    }
}

value_class!(PyReservation, "_from_dict", {
    /// Rebuilds a reservation snapshot from its dict form (for pickling).
    #[classmethod]
    fn _from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut r: ReservationSnapshot =
            pyde::read(doc, "reservation", ErrorKind::InvalidScenario)?;
        r.gang = crate::spec::exact_gang(r.gang);
        Ok(PyReservation(r))
    }
    /// The reservation's id (what `release`, `replace` and `reservation` take).
    #[getter]
    fn id(&self) -> PyReservationId {
        PyReservationId(self.0.id)
    }
    /// The gang as placed.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang::of(self.0.gang.clone())
    }
    /// The domain's full path ("b1/a"; "" cluster-wide).
    #[getter]
    fn domain(&self) -> String {
        path(&self.0.domain)
    }
    /// The label value at the placement's level (None cluster-wide).
    #[getter]
    fn domain_value(&self) -> Option<&str> {
        self.0.domain.last().map(|(_, v)| v.as_str())
    }
    /// The domain as {level: value}, outermost first.
    #[getter]
    fn domain_labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.0.domain {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Members held, per role and node.
    #[getter]
    fn members(&self) -> Vec<PyAssignment> {
        self.0.members.iter().cloned().map(PyAssignment).collect()
    }
    /// Total members held.
    #[getter(member_count)]
    fn py_member_count(&self) -> u64 {
        self.member_count()
    }
    /// Members lost with removed or failed nodes and not yet replaced.
    #[getter]
    fn lost(&self) -> Vec<PyLost> {
        self.0.lost.iter().cloned().map(PyLost).collect()
    }
    /// What the reservation holds: `(node, resource, Quantity)` triples.
    #[getter]
    fn usage(&self) -> Vec<(String, String, PyQuantity)> {
        self.0
            .usage
            .iter()
            .map(|(n, r, q)| (n.clone(), r.clone(), PyQuantity(*q)))
            .collect()
    }
    /// The id's int value.
    fn __int__(&self) -> u64 {
        self.0.id.0
    }
});

/// Members of a reservation lost with a removed or failed node.
#[pyclass(name = "Lost", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyLost(pub Lost);

impl Repr for PyLost {
    fn repr(&self) -> String {
        format!(
            "Lost(reservation={}, role={}, node={}, count={})",
            self.0.reservation,
            repr_str(&self.0.role),
            repr_str(&self.0.node),
            self.0.count
        )
    }
}

value_class!(PyLost, "_from_dict", {
    #[classmethod]
    fn _from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        pyde::read(doc, "lost", ErrorKind::InvalidScenario).map(PyLost)
    }
    /// The reservation's id.
    #[getter]
    fn reservation(&self) -> PyReservationId {
        PyReservationId(self.0.reservation)
    }
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    #[getter]
    fn node(&self) -> &str {
        &self.0.node
    }
    #[getter]
    fn count(&self) -> u32 {
        self.0.count
    }
});

pub fn lost_list(v: Vec<Lost>) -> Vec<PyLost> {
    v.into_iter().map(PyLost).collect()
}

/// A node and resource whose capacity, after a change, is below what is used and
/// reserved there; the change is applied and these reservations are reported.
#[pyclass(name = "Overcommit", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyOvercommit(pub Overcommit);

impl Repr for PyOvercommit {
    fn repr(&self) -> String {
        let ids: Vec<String> = self.0.reservations.iter().map(|r| r.to_string()).collect();
        format!(
            "Overcommit(node={}, resource={}, capacity=Quantity('{}'), used=Quantity('{}'), reserved=Quantity('{}'), reservations=[{}])",
            repr_str(&self.0.node),
            repr_str(&self.0.resource),
            self.0.capacity,
            self.0.used,
            self.0.reserved,
            ids.join(", ")
        )
    }
}

value_class!(PyOvercommit, "_from_dict", {
    #[classmethod]
    fn _from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        pyde::read(doc, "overcommit", ErrorKind::InvalidScenario).map(PyOvercommit)
    }
    #[getter]
    fn node(&self) -> &str {
        &self.0.node
    }
    #[getter]
    fn resource(&self) -> &str {
        &self.0.resource
    }
    #[getter]
    fn capacity(&self) -> PyQuantity {
        PyQuantity(self.0.capacity)
    }
    #[getter]
    fn used(&self) -> PyQuantity {
        PyQuantity(self.0.used)
    }
    #[getter]
    fn reserved(&self) -> PyQuantity {
        PyQuantity(self.0.reserved)
    }
    /// Ids of the reservations holding capacity there.
    #[getter]
    fn reservations(&self) -> Vec<PyReservationId> {
        self.0
            .reservations
            .iter()
            .copied()
            .map(PyReservationId)
            .collect()
    }
});

fn py_eq<'py>(a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> bool {
    a.eq(b).unwrap_or(false)
}

fn opt_to_dict<'py, T: pyo3::PyClass>(
    py: Python<'py>,
    v: &Option<Py<T>>,
) -> PyResult<Bound<'py, PyAny>> {
    match v {
        None => Ok(py.None().into_bound(py)),
        Some(o) => o.bind(py).as_any().call_method0("to_dict"),
    }
}

/// What happened to one gang of an admitted queue: placed whole and reserved, or
/// waiting, holding nothing.
#[pyclass(name = "Admission", module = "gang", frozen)]
pub struct PyAdmission {
    pub gang: String,
    pub reservation: Option<Py<PyReservation>>,
    pub placement: Option<Py<PyPlacement>>,
    pub diagnosis: Option<Py<PyDiagnosis>>,
    pub blocked_by: Option<String>,
}

#[pymethods]
impl PyAdmission {
    /// Rebuilds an admission from its parts (for pickling).
    #[classmethod]
    fn _from_parts(
        _cls: &Bound<'_, PyType>,
        gang: String,
        reservation: Option<Py<PyReservation>>,
        placement: Option<Py<PyPlacement>>,
        diagnosis: Option<Py<PyDiagnosis>>,
        blocked_by: Option<String>,
    ) -> Self {
        PyAdmission {
            gang,
            reservation,
            placement,
            diagnosis,
            blocked_by,
        }
    }
    /// The gang's name.
    #[getter]
    fn gang(&self) -> &str {
        &self.gang
    }
    /// Whether the gang was placed (and reserved).
    #[getter]
    fn placed(&self) -> bool {
        self.reservation.is_some()
    }
    #[getter]
    fn reservation(&self, py: Python<'_>) -> Option<Py<PyReservation>> {
        self.reservation.as_ref().map(|r| r.clone_ref(py))
    }
    #[getter]
    fn placement(&self, py: Python<'_>) -> Option<Py<PyPlacement>> {
        self.placement.as_ref().map(|r| r.clone_ref(py))
    }
    /// Why it does not fit now (None when placed, or not tried behind a waiting head).
    #[getter]
    fn diagnosis(&self, py: Python<'_>) -> Option<Py<PyDiagnosis>> {
        self.diagnosis.as_ref().map(|r| r.clone_ref(py))
    }
    /// The head gang it waits behind, if any.
    #[getter]
    fn blocked_by(&self) -> Option<&str> {
        self.blocked_by.as_deref()
    }
    /// `{"status": "placed" | "waiting", "gang", "reservation", "placement",
    /// "diagnosis", "blocked_by"}` (None where it does not apply).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("status", if self.placed() { "placed" } else { "waiting" })?;
        d.set_item("gang", &self.gang)?;
        d.set_item("reservation", opt_to_dict(py, &self.reservation)?)?;
        d.set_item("placement", opt_to_dict(py, &self.placement)?)?;
        d.set_item("diagnosis", opt_to_dict(py, &self.diagnosis)?)?;
        d.set_item("blocked_by", self.blocked_by.as_deref())?;
        Ok(d)
    }
    /// The summary record of its placement or diagnosis (see `Placement.summary`),
    /// with status "placed" or "waiting".
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rec = match (&self.placement, &self.diagnosis) {
            (Some(p), _) => p.bind(py).call_method0("summary")?,
            (None, Some(d)) => d.bind(py).call_method0("summary")?,
            (None, None) => {
                let d = PyDict::new(py);
                for k in [
                    "level",
                    "domain",
                    "domain_value",
                    "best_domain",
                    "best_fits",
                    "short_of",
                ] {
                    d.set_item(k, py.None())?;
                }
                d.set_item("gang", &self.gang)?;
                d.set_item("members", 0)?;
                d.set_item("nodes_used", 0)?;
                d.into_any()
            }
        };
        if !self.placed() {
            rec.set_item("status", "waiting")?;
        }
        Ok(rec)
    }
    fn __repr__(&self) -> String {
        let state = match (&self.reservation, &self.blocked_by) {
            (Some(_), _) => "placed".to_owned(),
            (None, Some(b)) => format!("waiting behind {}", repr_str(b)),
            (None, None) => "waiting".to_owned(),
        };
        format!("Admission(gang={}, {state})", repr_str(&self.gang))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(o) = other.cast::<Self>() else {
            return Ok(py.NotImplemented());
        };
        let eq = py_eq(
            &self.to_dict(py)?.into_any(),
            &o.get().to_dict(py)?.into_any(),
        );
        Ok(pyo3::types::PyBool::new(py, eq)
            .to_owned()
            .into_any()
            .unbind())
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        let a = slf.get();
        let args = (
            a.gang.clone(),
            a.reservation.as_ref().map(|r| r.clone_ref(py)),
            a.placement.as_ref().map(|r| r.clone_ref(py)),
            a.diagnosis.as_ref().map(|r| r.clone_ref(py)),
            a.blocked_by.clone(),
        )
            .into_pyobject(py)?
            .into_any();
        Ok((slf.get_type().getattr("_from_parts")?, args))
    }
}

/// The answer to `Inventory.spread`: at least `min_replicas` replicas placed, each
/// reserved in a distinct domain of the spread level — or nothing held.
#[pyclass(name = "SpreadOutcome", module = "gang", frozen)]
pub struct PySpreadOutcome {
    pub reservations: Vec<Py<PyReservation>>,
    pub placements: Vec<Py<PyPlacement>>,
    pub fit: u32,
    pub needed: u32,
    pub diagnosis: Option<Py<PyDiagnosis>>,
}

#[pymethods]
impl PySpreadOutcome {
    /// Rebuilds a spread outcome from its parts (for pickling).
    #[classmethod]
    fn _from_parts(
        _cls: &Bound<'_, PyType>,
        reservations: Vec<Py<PyReservation>>,
        placements: Vec<Py<PyPlacement>>,
        fit: u32,
        needed: u32,
        diagnosis: Option<Py<PyDiagnosis>>,
    ) -> Self {
        PySpreadOutcome {
            reservations,
            placements,
            fit,
            needed,
            diagnosis,
        }
    }
    /// Whether the replicas were placed (and reserved).
    #[getter]
    fn placed(&self) -> bool {
        !self.reservations.is_empty()
    }
    /// One reservation per replica, in order (empty when not placed).
    #[getter]
    fn reservations(&self, py: Python<'_>) -> Vec<Py<PyReservation>> {
        self.reservations.iter().map(|r| r.clone_ref(py)).collect()
    }
    /// The replicas' placements, in order.
    #[getter]
    fn placements(&self, py: Python<'_>) -> Vec<Py<PyPlacement>> {
        self.placements.iter().map(|r| r.clone_ref(py)).collect()
    }
    /// Replicas placed, or (when not placed) the most that fit.
    #[getter]
    fn fit(&self) -> u32 {
        self.fit
    }
    /// Replicas required.
    #[getter]
    fn needed(&self) -> u32 {
        self.needed
    }
    /// Why the next replica did not fit, when not placed.
    #[getter]
    fn diagnosis(&self, py: Python<'_>) -> Option<Py<PyDiagnosis>> {
        self.diagnosis.as_ref().map(|r| r.clone_ref(py))
    }
    /// `{"status": "placed" | "unschedulable", "fit", "needed", "reservations",
    /// "placements", "diagnosis"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item(
            "status",
            if self.placed() {
                "placed"
            } else {
                "unschedulable"
            },
        )?;
        d.set_item("fit", self.fit)?;
        d.set_item("needed", self.needed)?;
        let rs: Vec<Bound<'py, PyAny>> = self
            .reservations
            .iter()
            .map(|r| r.bind(py).call_method0("to_dict"))
            .collect::<PyResult<_>>()?;
        d.set_item("reservations", rs)?;
        let ps: Vec<Bound<'py, PyAny>> = self
            .placements
            .iter()
            .map(|r| r.bind(py).call_method0("to_dict"))
            .collect::<PyResult<_>>()?;
        d.set_item("placements", ps)?;
        d.set_item("diagnosis", opt_to_dict(py, &self.diagnosis)?)?;
        Ok(d)
    }
    fn __repr__(&self) -> String {
        format!(
            "SpreadOutcome(placed={}, fit={}, needed={})",
            if self.placed() { "True" } else { "False" },
            self.fit,
            self.needed
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(o) = other.cast::<Self>() else {
            return Ok(py.NotImplemented());
        };
        let eq = py_eq(
            &self.to_dict(py)?.into_any(),
            &o.get().to_dict(py)?.into_any(),
        );
        Ok(pyo3::types::PyBool::new(py, eq)
            .to_owned()
            .into_any()
            .unbind())
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        let s = slf.get();
        let args = (
            s.reservations
                .iter()
                .map(|r| r.clone_ref(py))
                .collect::<Vec<_>>(),
            s.placements
                .iter()
                .map(|r| r.clone_ref(py))
                .collect::<Vec<_>>(),
            s.fit,
            s.needed,
            s.diagnosis.as_ref().map(|r| r.clone_ref(py)),
        )
            .into_pyobject(py)?
            .into_any();
        Ok((slf.get_type().getattr("_from_parts")?, args))
    }
}

/// The `Pending` exception of `replace`: the domain that binds the gang has no room
/// for the lost members now; nothing was applied.
pub fn pending(py: Python<'_>, p: Pending) -> PyErr {
    let any = |b: PyResult<Bound<'_, PyAny>>| b.ok().map(Bound::unbind);
    let message = p.to_string();
    raise(
        "Pending",
        message.clone(),
        &[
            (
                "kind",
                any("pending"
                    .into_pyobject(py)
                    .map(Bound::into_any)
                    .map_err(Into::into)),
            ),
            (
                "reason",
                any(message
                    .into_pyobject(py)
                    .map(Bound::into_any)
                    .map_err(Into::into)),
            ),
            (
                "reservation",
                any(Bound::new(py, PyReservationId(p.reservation)).map(Bound::into_any)),
            ),
            (
                "gang",
                any(p
                    .gang
                    .clone()
                    .into_pyobject(py)
                    .map(Bound::into_any)
                    .map_err(Into::into)),
            ),
            (
                "search_exhausted",
                any(p
                    .search_exhausted
                    .into_pyobject(py)
                    .map(|b| b.to_owned().into_any())
                    .map_err(Into::into)),
            ),
            ("domains", any(to_py(py, &p.domains))),
        ],
    )
}
