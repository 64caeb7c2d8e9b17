//! Lifecycle results: `Reservation`, `Lost`, `Overcommit`, `Admission`, `SpreadOutcome`,
//! and the `Pending` exception of `replace`. The operations themselves are methods of
//! `Inventory` (inventory.rs) that call the core under the inventory's write lock.
//!
//! Every class here is an immutable snapshot of plain data, taken when the operation
//! returned; ask the inventory again (`reservation(id)`, `reservations`) for the
//! current state.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use gang_core::lifecycle::{Lost, Overcommit, Pending, ReservationSnapshot};
use gang_core::ReservationId;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::convert::json_text;
use crate::errors::{edge_error, Pending as PendingError};
use crate::outcome::{PyAssignment, PyDiagnosis, PyPlacement};
use crate::spec::{dict_of, parse_text, PyGang, PyQuantity};

/// A reservation id given as an int or a `Reservation`.
pub fn reservation_id(obj: &Bound<'_, PyAny>) -> PyResult<ReservationId> {
    if let Ok(r) = obj.cast::<PyReservation>() {
        return Ok(r.get().data.id);
    }
    match obj.extract::<u64>() {
        Ok(id) => Ok(ReservationId(id)),
        Err(_) => Err(edge_error(
            gang_core::ErrorKind::InvalidRequest,
            "reservation",
            &obj.repr()?.to_string(),
            "expected a Reservation or its id (an int)",
        )),
    }
}

/// A reservation: capacity held for a placed gang, under an id. A snapshot taken when
/// the operation returned; `Inventory.reservation(id)` gives the current one.
///
/// >>> import gang
/// >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8})])
/// >>> r = inv.reserve(inv.place(gang.Gang("g", [gang.Role("w", 2, requests={"gpu": 4})])))
/// >>> r.id, r.members, inv.free("a1", "gpu").millis
/// (0, [Assignment(role='w', node='a1', count=2)], 0)
/// >>> inv.release(r).member_count, inv.free("a1", "gpu").millis
/// (2, 8000)
#[pyclass(name = "Reservation", module = "gang", frozen)]
pub struct PyReservation {
    pub data: ReservationSnapshot,
}

#[pymethods]
impl PyReservation {
    /// The reservation's id (what `release`, `replace` and `reservation` take).
    #[getter]
    fn id(&self) -> u64 {
        self.data.id.0
    }
    /// The gang as placed.
    #[getter]
    fn gang(&self) -> PyGang {
        PyGang(self.data.gang.clone())
    }
    /// The domain of the placement, {level: value}.
    #[getter]
    fn domain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.data.domain {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Members held, per role and node.
    #[getter]
    fn members(&self) -> Vec<PyAssignment> {
        self.data
            .members
            .iter()
            .map(|a| PyAssignment::new(a.role.clone(), a.node.clone(), a.count))
            .collect()
    }
    /// Total members held.
    #[getter]
    fn member_count(&self) -> u64 {
        self.data.members.iter().map(|a| u64::from(a.count)).sum()
    }
    /// Members lost with removed or failed nodes and not yet replaced.
    #[getter]
    fn lost(&self) -> Vec<PyLost> {
        self.data.lost.iter().cloned().map(PyLost).collect()
    }
    /// What the reservation holds: `(node, resource, Quantity)` triples.
    #[getter]
    fn usage(&self) -> Vec<(String, String, PyQuantity)> {
        self.data
            .usage
            .iter()
            .map(|(n, r, q)| (n.clone(), r.clone(), PyQuantity(*q)))
            .collect()
    }
    fn __repr__(&self) -> String {
        format!(
            "Reservation(id={}, gang={:?}, members={}, lost={})",
            self.data.id.0,
            self.data.gang.get_name(),
            self.member_count(),
            self.data
                .lost
                .iter()
                .map(|l| u64::from(l.count))
                .sum::<u64>()
        )
        .replace('"', "'")
    }
    fn __int__(&self) -> u64 {
        self.data.id.0
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().data == self.data)
    }
    fn __hash__(&self) -> isize {
        let mut h = DefaultHasher::new();
        serde_json::to_string(&self.data)
            .unwrap_or_default()
            .hash(&mut h);
        h.finish() as isize
    }
    /// Rebuilds a reservation snapshot from its pickled state.
    #[classmethod]
    fn _from_state(_cls: &Bound<'_, PyType>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = json_text(state)?;
        Ok(PyReservation {
            data: parse_text(&text, "reservation")?,
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let state = serde_json::to_string(&slf.get().data).unwrap_or_default();
        Ok((slf.get_type().getattr("_from_state")?, (state,)))
    }
}

/// Members of a reservation lost with a removed or failed node.
#[pyclass(name = "Lost", module = "gang", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyLost(pub Lost);

#[pymethods]
impl PyLost {
    /// The reservation's id.
    #[getter]
    fn reservation(&self) -> u64 {
        self.0.reservation.0
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
    fn __repr__(&self) -> String {
        format!(
            "Lost(reservation={}, role={:?}, node={:?}, count={})",
            self.0.reservation.0, self.0.role, self.0.node, self.0.count
        )
        .replace('"', "'")
    }
}

pub fn lost_list(v: Vec<Lost>) -> Vec<PyLost> {
    v.into_iter().map(PyLost).collect()
}

/// A node and resource whose capacity, after a change, is below what is used and
/// reserved there; the change is applied and these reservations are reported.
#[pyclass(name = "Overcommit", module = "gang", frozen)]
pub struct PyOvercommit(pub Overcommit);

#[pymethods]
impl PyOvercommit {
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
    fn reservations(&self) -> Vec<u64> {
        self.0.reservations.iter().map(|r| r.0).collect()
    }
    fn __repr__(&self) -> String {
        format!(
            "Overcommit(node={:?}, resource={:?}, capacity='{}', used='{}', reserved='{}', reservations={:?})",
            self.0.node,
            self.0.resource,
            self.0.capacity,
            self.0.used,
            self.0.reserved,
            self.reservations()
        )
        .replace('"', "'")
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
    fn __repr__(&self) -> String {
        let state = match (&self.reservation, &self.blocked_by) {
            (Some(_), _) => "placed".to_owned(),
            (None, Some(b)) => format!("waiting behind {b:?}"),
            (None, None) => "waiting".to_owned(),
        };
        format!("Admission(gang={:?}, {state})", self.gang).replace('"', "'")
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
    fn __repr__(&self) -> String {
        format!(
            "SpreadOutcome(placed={}, fit={}, needed={})",
            if self.placed() { "True" } else { "False" },
            self.fit,
            self.needed
        )
    }
}

/// The `Pending` exception of `replace`: the domain that binds the gang has no room
/// for the lost members now; nothing was applied.
pub fn pending(py: Python<'_>, p: Pending) -> PyErr {
    let err = PendingError::new_err(p.to_string());
    let v = err.value(py);
    let _ = v.setattr("reservation", p.reservation.0);
    let _ = v.setattr("gang", p.gang.clone());
    let _ = v.setattr("search_exhausted", p.search_exhausted);
    if let Ok(domains) = dict_of(py, &p.domains) {
        let _ = v.setattr("domains", domains);
    }
    err
}
