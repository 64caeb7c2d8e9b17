//! Inputs: `Quantity`, `Taint`, `Toleration`, `Requirement`, `Node`, `Role`, `Gang`.
//!
//! Each class is a frozen newtype over the core type with value semantics: amounts are
//! exact quantities from the moment the object is built (so `{"memory": "1Gi"}` and
//! `{"memory": 1073741824}` are the same node), whatever can be checked without an
//! inventory is checked when the object is built, with the core's own rules (a node by
//! building a one-node inventory, a role or gang by compiling it against an empty one,
//! its topology left out), and equality and hashing are by content.

use std::sync::OnceLock;

use gang_core::request::{QuantitySpec, Requirement, SelectorOperator, TolerationOperator};
use gang_core::{
    ErrorKind, Gang, Inventory, NodeSpec, Policy, PreemptionPolicy, Quantity, Role, Taint,
    TaintEffect, Toleration, Topology,
};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

pub use crate::classes::{
    PyGang, PyNode, PyQuantity, PyRequirement, PyRole, PyTaint, PyToleration,
};
use crate::convert::{self, count, exact, items, opt_count, opt_string, repr_str, str_map, string};
use crate::dunder::{value_class, Repr};
use crate::errors::{core, edge_error, to_py_err};
use crate::pyde::{self, number, Number};

fn list_repr<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
    format!("[{}]", v.iter().map(f).collect::<Vec<_>>().join(", "))
}

fn dict_repr<'a>(pairs: impl Iterator<Item = (&'a str, String)>) -> String {
    let items: Vec<String> = pairs
        .map(|(k, v)| format!("{}: {v}", repr_str(k)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

// ------------------------------------------------------------------------- Quantity

/// Python's hash of the rational number `millis / 1000`, so that a `Quantity` hashes
/// like the int or float it equals (`hash(Quantity(2)) == hash(2)`,
/// `hash(Quantity("1.5")) == hash(1.5)`).
fn numeric_hash(millis: u64) -> isize {
    const P: u128 = (1 << 61) - 1;
    fn pow(mut b: u128, mut e: u128) -> u128 {
        let mut r = 1;
        b %= P;
        while e > 0 {
            if e & 1 == 1 {
                r = r * b % P;
            }
            b = b * b % P;
            e >>= 1;
        }
        r
    }
    let h = (u128::from(millis) % P) * pow(1000, P - 2) % P;
    h as isize
}

impl PyQuantity {
    /// `other` as exact milli-units (a Quantity, or a number/amount in natural units),
    /// or `None` when it is not a number at all.
    fn other_millis(other: &Bound<'_, PyAny>) -> Option<f64> {
        if let Ok(q) = other.cast::<PyQuantity>() {
            return Some(q.get().0.millis() as f64);
        }
        match number(other).ok()? {
            Some(Number::Int(i)) => Some(i as f64 * 1000.0),
            Some(Number::UInt(u)) => Some(u as f64 * 1000.0),
            Some(Number::Float(f)) => Some(f * 1000.0),
            _ => None,
        }
    }

    fn operand(other: &Bound<'_, PyAny>) -> PyResult<Option<Quantity>> {
        let text = other.is_instance_of::<pyo3::types::PyString>();
        if !text && other.cast::<PyQuantity>().is_err() && number(other).ok().flatten().is_none() {
            return Ok(None);
        }
        convert::amount(other, "quantity").map(Some)
    }
}

#[pymethods]
impl PyQuantity {
    /// Parses anything with `__index__` (whole units), anything `float()` accepts, a
    /// Kubernetes quantity string, or a Quantity.
    #[new]
    fn new(amount: &Bound<'_, PyAny>) -> PyResult<Self> {
        convert::amount(amount, "quantity").map(PyQuantity)
    }

    /// A quantity of `millis` milli-units.
    ///
    /// >>> import gang
    /// >>> gang.Quantity.from_millis(1500)
    /// Quantity('1500m')
    #[staticmethod]
    fn from_millis(millis: &Bound<'_, PyAny>) -> PyResult<Self> {
        convert::int_in(millis, "millis", ErrorKind::InvalidQuantity, 0, u64::MAX)
            .map(|m| PyQuantity(Quantity::from_millis(m)))
    }

    /// The amount in milli-units.
    #[getter]
    fn millis(&self) -> u64 {
        self.0.millis()
    }

    /// Whole units, rounded down (as `int()` of a float).
    fn __int__(&self) -> u64 {
        self.0.millis() / 1000
    }

    /// The amount in units.
    fn __float__(&self) -> f64 {
        self.0.millis() as f64 / 1000.0
    }

    fn __bool__(&self) -> bool {
        self.0.millis() != 0
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let Some(o) = PyQuantity::other_millis(other) else {
            return py.NotImplemented();
        };
        let exact = other.cast::<PyQuantity>().ok().map(|q| q.get().0.millis());
        let ord = match exact {
            Some(m) => self.0.millis().cmp(&m),
            None => match (self.0.millis() as f64).partial_cmp(&o) {
                Some(ord) => ord,
                None => {
                    return pyo3::types::PyBool::new(py, matches!(op, CompareOp::Ne))
                        .to_owned()
                        .into_any()
                        .unbind()
                }
            },
        };
        pyo3::types::PyBool::new(py, op.matches(ord))
            .to_owned()
            .into_any()
            .unbind()
    }

    fn __hash__(&self) -> isize {
        numeric_hash(self.0.millis())
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match PyQuantity::operand(other)? {
            None => Ok(py.NotImplemented()),
            Some(q) => match self.0.millis().checked_add(q.millis()) {
                Some(m) => Ok(Py::new(py, PyQuantity(Quantity::from_millis(m)))?.into_any()),
                None => Err(edge_error(
                    ErrorKind::InvalidQuantity,
                    "quantity",
                    &format!("{} + {}", self.0, q),
                    "overflows",
                )),
            },
        }
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.__add__(other)
    }

    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match PyQuantity::operand(other)? {
            None => Ok(py.NotImplemented()),
            Some(q) => match self.0.millis().checked_sub(q.millis()) {
                Some(m) => Ok(Py::new(py, PyQuantity(Quantity::from_millis(m)))?.into_any()),
                None => Err(edge_error(
                    ErrorKind::InvalidQuantity,
                    "quantity",
                    &format!("{} - {}", self.0, q),
                    "a quantity cannot be negative",
                )),
            },
        }
    }

    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match PyQuantity::operand(other)? {
            None => Ok(py.NotImplemented()),
            Some(q) => PyQuantity(q).__sub__(Bound::new(py, *self)?.as_any()),
        }
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Quantity('{}')", self.0)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().into_any(), (slf.get().0.to_string(),)))
    }
}

/// A dict of exact amounts, as Quantity objects.
fn amounts<'py, 'a>(
    py: Python<'py>,
    it: impl Iterator<Item = (&'a str, &'a QuantitySpec)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in it {
        match v.resolve(k) {
            Ok(q) => d.set_item(k, PyQuantity(q))?,
            Err(_) => d.set_item(k, pyo3::types::PyString::new(py, &format!("{v:?}")))?,
        }
    }
    Ok(d)
}

fn amounts_repr<'a>(it: impl Iterator<Item = (&'a str, &'a QuantitySpec)>) -> String {
    dict_repr(it.map(|(k, v)| {
        let shown = match v.resolve(k) {
            Ok(q) if q.millis() % 1000 == 0 => (q.millis() / 1000).to_string(),
            Ok(q) => format!("'{q}'"),
            Err(_) => format!("{v:?}"),
        };
        (k, shown)
    }))
}

// ------------------------------------------------------------------------- Taint

fn taint_effect(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<TaintEffect> {
    match string(obj, field, kind)?.as_str() {
        "NoSchedule" => Ok(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Ok(TaintEffect::PreferNoSchedule),
        "NoExecute" => Ok(TaintEffect::NoExecute),
        other => Err(edge_error(
            kind,
            field,
            other,
            "expected NoSchedule, PreferNoSchedule or NoExecute",
        )),
    }
}

fn effect_name(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

impl Repr for PyTaint {
    fn repr(&self) -> String {
        format!(
            "Taint({}, {}, {})",
            repr_str(&self.0.key),
            repr_str(&self.0.value),
            repr_str(effect_name(self.0.effect))
        )
    }
}

value_class!(PyTaint, "from_dict", {
    #[new]
    #[pyo3(signature = (key, value = None, effect = None))]
    fn new(
        key: &Bound<'_, PyAny>,
        value: Option<&Bound<'_, PyAny>>,
        effect: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidInventory;
        let key = string(key, "taint.key", k)?;
        let value = opt_string(value, "taint.value", k)?.unwrap_or_default();
        let effect = match effect.filter(|e| !e.is_none()) {
            Some(e) => taint_effect(e, "taint.effect", k)?,
            None => TaintEffect::NoSchedule,
        };
        Ok(PyTaint(Taint::new(key, value, effect)))
    }
    /// A taint from a dict in the scenario format (`{"key", "value", "effect"}`).
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        pyde::read(doc, "", ErrorKind::InvalidScenario).map(PyTaint)
    }
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }
    #[getter]
    fn value(&self) -> &str {
        &self.0.value
    }
    #[getter]
    fn effect(&self) -> &'static str {
        effect_name(self.0.effect)
    }
});

// ------------------------------------------------------------------------- Toleration

fn toleration_operator(t: &Toleration) -> &'static str {
    match t.operator {
        TolerationOperator::Equal => "Equal",
        TolerationOperator::Exists => "Exists",
    }
}

impl Repr for PyToleration {
    fn repr(&self) -> String {
        let mut s = format!(
            "Toleration({}, {}, {}",
            repr_str(&self.0.key),
            repr_str(toleration_operator(&self.0)),
            repr_str(&self.0.value)
        );
        if let Some(e) = self.0.effect {
            s.push_str(&format!(", {}", repr_str(effect_name(e))));
        }
        s.push(')');
        s
    }
}

value_class!(PyToleration, "from_dict", {
    #[new]
    #[pyo3(signature = (key = None, operator = None, value = None, effect = None))]
    fn new(
        key: Option<&Bound<'_, PyAny>>,
        operator: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
        effect: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        let key = opt_string(key, "toleration.key", k)?.unwrap_or_default();
        let value = opt_string(value, "toleration.value", k)?.unwrap_or_default();
        let op = match opt_string(operator, "toleration.operator", k)?.as_deref() {
            None | Some("Equal") => TolerationOperator::Equal,
            Some("Exists") => TolerationOperator::Exists,
            Some(other) => {
                return Err(edge_error(
                    k,
                    "toleration.operator",
                    other,
                    "expected Equal or Exists",
                ))
            }
        };
        let effect = match effect.filter(|e| !e.is_none()) {
            Some(e) => Some(taint_effect(e, "toleration.effect", k)?),
            None => None,
        };
        Ok(PyToleration(Toleration {
            key,
            operator: op,
            value,
            effect,
        }))
    }
    /// Tolerates taints with this key and value.
    #[staticmethod]
    fn equal(key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        Ok(PyToleration(Toleration::equal(
            string(key, "toleration.key", k)?,
            string(value, "toleration.value", k)?,
        )))
    }
    /// Tolerates taints with this key, whatever the value (empty key: every taint).
    #[staticmethod]
    #[pyo3(signature = (key = None))]
    fn exists(key: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let key = opt_string(key, "toleration.key", ErrorKind::InvalidRequest)?.unwrap_or_default();
        Ok(PyToleration(Toleration::exists(key)))
    }
    /// A toleration from a dict in the scenario format.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        pyde::read(doc, "", ErrorKind::InvalidRequest).map(PyToleration)
    }
    /// Whether this toleration tolerates `taint`.
    fn tolerates(&self, taint: &PyTaint) -> bool {
        self.0.tolerates(&taint.0)
    }
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }
    #[getter]
    fn operator(&self) -> &'static str {
        toleration_operator(&self.0)
    }
    #[getter]
    fn value(&self) -> &str {
        &self.0.value
    }
    #[getter]
    fn effect(&self) -> Option<&'static str> {
        self.0.effect.map(effect_name)
    }
});

// ------------------------------------------------------------------------- Requirement

fn selector_op(op: SelectorOperator) -> &'static str {
    match op {
        SelectorOperator::In => "In",
        SelectorOperator::NotIn => "NotIn",
        SelectorOperator::Exists => "Exists",
        SelectorOperator::DoesNotExist => "DoesNotExist",
    }
}

impl Repr for PyRequirement {
    fn repr(&self) -> String {
        format!(
            "Requirement({}, {}, {})",
            repr_str(&self.0.key),
            repr_str(selector_op(self.0.operator)),
            list_repr(&self.0.values, |v| repr_str(v))
        )
    }
}

value_class!(PyRequirement, "from_dict", {
    #[new]
    #[pyo3(signature = (key, operator, values = None))]
    fn new(
        key: &Bound<'_, PyAny>,
        operator: &Bound<'_, PyAny>,
        values: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        let key = string(key, "match_expressions.key", k)?;
        let op = match string(operator, "match_expressions.operator", k)?.as_str() {
            "In" => SelectorOperator::In,
            "NotIn" => SelectorOperator::NotIn,
            "Exists" => SelectorOperator::Exists,
            "DoesNotExist" => SelectorOperator::DoesNotExist,
            other => {
                return Err(edge_error(
                    k,
                    "match_expressions.operator",
                    other,
                    "expected In, NotIn, Exists or DoesNotExist",
                ))
            }
        };
        let mut vals = Vec::new();
        for (i, v) in items(values, "match_expressions.values", k)?
            .iter()
            .enumerate()
        {
            vals.push(string(v, &format!("match_expressions.values[{i}]"), k)?);
        }
        Ok(PyRequirement(Requirement {
            key,
            operator: op,
            values: vals,
        }))
    }
    /// A requirement from a dict in the scenario format.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        pyde::read(doc, "", ErrorKind::InvalidRequest).map(PyRequirement)
    }
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }
    #[getter]
    fn operator(&self) -> &'static str {
        selector_op(self.0.operator)
    }
    #[getter]
    fn values(&self) -> Vec<String> {
        self.0.values.clone()
    }
});

// ------------------------------------------------------------------------- Node

/// Checks a node alone with the core's rules (by building a one-node inventory), and
/// makes its amounts exact.
fn checked_node(mut n: NodeSpec) -> PyResult<NodeSpec> {
    core(|| Inventory::builder(Topology::flat()).node(n.clone()).build())?;
    let cap: Vec<(String, QuantitySpec)> = n
        .get_capacity()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect();
    let used: Vec<(String, QuantitySpec)> = n
        .get_used()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect();
    for (k, v) in cap {
        let q = v.resolve(&k).map_err(to_py_err)?;
        n.set_capacity(k, QuantitySpec::Exact(q));
    }
    for (k, v) in used {
        let q = v.resolve(&k).map_err(to_py_err)?;
        n.set_used(k, QuantitySpec::Exact(q));
    }
    Ok(n)
}

/// A node from a `Node` or a dict.
pub fn node_from(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<NodeSpec> {
    match obj.cast::<PyNode>() {
        Ok(n) => Ok(n.get().0.clone()),
        Err(_) => pyde::read(obj, at, ErrorKind::InvalidScenario),
    }
}

impl Repr for PyNode {
    fn repr(&self) -> String {
        let n = &self.0;
        let mut s = format!("Node({}", repr_str(n.get_name()));
        if n.get_labels().len() > 0 {
            s.push_str(&format!(
                ", labels={}",
                dict_repr(n.get_labels().map(|(k, v)| (k, repr_str(v))))
            ));
        }
        if n.get_capacity().len() > 0 {
            s.push_str(&format!(", capacity={}", amounts_repr(n.get_capacity())));
        }
        if n.get_used().len() > 0 {
            s.push_str(&format!(", used={}", amounts_repr(n.get_used())));
        }
        if !n.get_taints().is_empty() {
            s.push_str(&format!(
                ", taints={}",
                list_repr(n.get_taints(), |t| PyTaint(t.clone()).repr())
            ));
        }
        if !n.is_schedulable() {
            s.push_str(", schedulable=False");
        }
        s.push(')');
        s
    }
}

value_class!(PyNode, "from_dict", {
    #[new]
    #[pyo3(signature = (name, *, labels = None, capacity = None, used = None, taints = None, schedulable = true))]
    fn new(
        name: &Bound<'_, PyAny>,
        labels: Option<&Bound<'_, PyAny>>,
        capacity: Option<&Bound<'_, PyAny>>,
        used: Option<&Bound<'_, PyAny>>,
        taints: Option<&Bound<'_, PyAny>>,
        schedulable: bool,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidInventory;
        let name = string(name, "nodes[].name", k)?;
        let at = format!("nodes[{name}]");
        let mut n = NodeSpec::new(name);
        for (key, v) in str_map(labels, &format!("{at}.labels"), k, |v, f| string(v, f, k))? {
            n.set_label(key, v);
        }
        for (r, a) in str_map(capacity, &format!("{at}.capacity"), k, exact)? {
            n.set_capacity(r, a);
        }
        for (r, a) in str_map(used, &format!("{at}.used"), k, exact)? {
            n.set_used(r, a);
        }
        for (i, t) in items(taints, &format!("{at}.taints"), k)?
            .iter()
            .enumerate()
        {
            n.add_taint(match t.cast::<PyTaint>() {
                Ok(t) => t.get().0.clone(),
                Err(_) => pyde::read(t, &format!("{at}.taints[{i}]"), k)?,
            });
        }
        n.set_schedulable(schedulable);
        checked_node(n).map(PyNode)
    }
    /// A node from a dict in the scenario format (`{"name", "labels", "capacity",
    /// "used", "taints", "schedulable"}`), checked as when built.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        checked_node(pyde::read(doc, "", ErrorKind::InvalidScenario)?).map(PyNode)
    }
    #[getter]
    fn name(&self) -> &str {
        self.0.get_name()
    }
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.0.get_labels() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Allocatable capacity per resource, as Quantity objects.
    #[getter]
    fn capacity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts(py, self.0.get_capacity())
    }
    /// Amounts used outside gang, as Quantity objects.
    #[getter]
    fn used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts(py, self.0.get_used())
    }
    #[getter]
    fn taints(&self) -> Vec<PyTaint> {
        self.0.get_taints().iter().cloned().map(PyTaint).collect()
    }
    #[getter]
    fn schedulable(&self) -> bool {
        self.0.is_schedulable()
    }
});

// ------------------------------------------------------------------------- Role

/// An inventory with no nodes and no levels: roles and gangs are checked against it
/// (their topology left out) when they are built.
fn probe() -> &'static Inventory {
    static PROBE: OnceLock<Inventory> = OnceLock::new();
    PROBE.get_or_init(|| {
        Inventory::builder(Topology::flat())
            .build()
            .unwrap_or_else(|e| unreachable!("an empty inventory is valid: {e}"))
    })
}

/// Checks what can be checked about a gang without an inventory (names, counts,
/// min_count, max_per_node, duplicate roles, requests, selectors, tolerations), by
/// compiling it without its topology against an empty inventory.
fn check_alone(g: &Gang, whole: bool) -> PyResult<()> {
    let mut bare = Gang::new(g.get_name());
    for r in g.get_roles() {
        bare.add_role(r.clone());
    }
    match probe().compile(&bare) {
        Ok(_) => Ok(()),
        // A single role may have min_count 0 (the gang's other roles may not).
        Err(e) if !whole && e.field() == "gang.roles" => Ok(()),
        Err(e) => Err(to_py_err(e)),
    }
}

/// Makes every request amount exact (they were checked already).
fn exact_role(mut r: Role) -> Role {
    let reqs: Vec<(String, QuantitySpec)> = r
        .get_requests()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect();
    for (k, v) in reqs {
        if let Ok(q) = v.resolve(&k) {
            r.set_request(k, QuantitySpec::Exact(q));
        }
    }
    r
}

pub fn exact_gang(g: Gang) -> Gang {
    let mut out = Gang::new(g.get_name());
    for r in g.get_roles() {
        out.add_role(exact_role(r.clone()));
    }
    out.set_required(g.get_topology().required.clone());
    out.set_preferred(g.get_topology().preferred.clone());
    for s in &g.get_topology().slices {
        out.add_slice(s.level.clone(), s.size);
    }
    out.set_policy(g.get_policy());
    out.set_priority(g.get_priority());
    out.set_preemption_policy(g.get_preemption_policy());
    out
}

/// A role from a `Role` or a dict (checked alone).
pub fn role_from(obj: &Bound<'_, PyAny>, at: &str, kind: ErrorKind) -> PyResult<Role> {
    match obj.cast::<PyRole>() {
        Ok(r) => Ok(r.get().0.clone()),
        Err(_) => {
            let r: Role = pyde::read(obj, at, kind)?;
            check_alone(&Gang::new("g").role(r.clone()), false)?;
            Ok(exact_role(r))
        }
    }
}

impl Repr for PyRole {
    fn repr(&self) -> String {
        let r = &self.0;
        let mut s = format!("Role({}, {}", repr_str(r.get_name()), r.get_count());
        if r.get_requests().len() > 0 {
            s.push_str(&format!(", requests={}", amounts_repr(r.get_requests())));
        }
        if let Some(m) = r.get_min_count() {
            s.push_str(&format!(", min_count={m}"));
        }
        if r.get_node_selector().len() > 0 {
            s.push_str(&format!(
                ", node_selector={}",
                dict_repr(r.get_node_selector().map(|(k, v)| (k, repr_str(v))))
            ));
        }
        if !r.get_match_expressions().is_empty() {
            s.push_str(&format!(
                ", match_expressions={}",
                list_repr(r.get_match_expressions(), |e| PyRequirement(e.clone())
                    .repr())
            ));
        }
        if !r.get_tolerations().is_empty() {
            s.push_str(&format!(
                ", tolerations={}",
                list_repr(r.get_tolerations(), |t| PyToleration(t.clone()).repr())
            ));
        }
        if let Some(m) = r.get_max_per_node() {
            s.push_str(&format!(", max_per_node={m}"));
        }
        if !r.is_constrained() {
            s.push_str(", constrained=False");
        }
        s.push(')');
        s
    }
}

value_class!(PyRole, "from_dict", {
    #[new]
    #[pyo3(signature = (name, count, *, requests = None, min_count = None, node_selector = None,
                        match_expressions = None, tolerations = None, max_per_node = None,
                        constrained = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
        requests: Option<&Bound<'_, PyAny>>,
        min_count: Option<&Bound<'_, PyAny>>,
        node_selector: Option<&Bound<'_, PyAny>>,
        match_expressions: Option<&Bound<'_, PyAny>>,
        tolerations: Option<&Bound<'_, PyAny>>,
        max_per_node: Option<&Bound<'_, PyAny>>,
        constrained: bool,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        let name = string(name, "gang.roles[].name", k)?;
        let at = format!("gang.roles[{name}]");
        let n = convert::count(count, &format!("{at}.count"), k)?;
        let mut r = Role::new(name, n);
        r.set_min_count(opt_count(min_count, &format!("{at}.min_count"), k)?);
        r.set_max_per_node(opt_count(max_per_node, &format!("{at}.max_per_node"), k)?);
        for (res, a) in str_map(requests, &format!("{at}.requests"), k, exact)? {
            r.set_request(res, a);
        }
        for (key, v) in str_map(node_selector, &format!("{at}.node_selector"), k, |v, f| {
            string(v, f, k)
        })? {
            r.set_selector(key, v);
        }
        for (i, e) in items(match_expressions, &format!("{at}.match_expressions"), k)?
            .iter()
            .enumerate()
        {
            r.add_requirement(match e.cast::<PyRequirement>() {
                Ok(x) => x.get().0.clone(),
                Err(_) => pyde::read(e, &format!("{at}.match_expressions[{i}]"), k)?,
            });
        }
        for (i, t) in items(tolerations, &format!("{at}.tolerations"), k)?
            .iter()
            .enumerate()
        {
            r.add_toleration(match t.cast::<PyToleration>() {
                Ok(x) => x.get().0.clone(),
                Err(_) => pyde::read(t, &format!("{at}.tolerations[{i}]"), k)?,
            });
        }
        r.set_constrained(constrained);
        check_alone(&Gang::new("g").role(r.clone()), false)?;
        Ok(PyRole(r))
    }
    /// A role from a dict in the scenario format, checked as when built.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        role_from(doc, "", ErrorKind::InvalidRequest).map(PyRole)
    }
    #[getter]
    fn name(&self) -> &str {
        self.0.get_name()
    }
    #[getter]
    fn count(&self) -> u32 {
        self.0.get_count()
    }
    #[getter]
    fn min_count(&self) -> Option<u32> {
        self.0.get_min_count()
    }
    /// Per-member requests, as Quantity objects.
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        amounts(py, self.0.get_requests())
    }
    #[getter]
    fn node_selector<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.0.get_node_selector() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    #[getter]
    fn match_expressions(&self) -> Vec<PyRequirement> {
        self.0
            .get_match_expressions()
            .iter()
            .cloned()
            .map(PyRequirement)
            .collect()
    }
    #[getter]
    fn tolerations(&self) -> Vec<PyToleration> {
        self.0
            .get_tolerations()
            .iter()
            .cloned()
            .map(PyToleration)
            .collect()
    }
    #[getter]
    fn max_per_node(&self) -> Option<u32> {
        self.0.get_max_per_node()
    }
    #[getter]
    fn constrained(&self) -> bool {
        self.0.is_constrained()
    }
});

// ------------------------------------------------------------------------- Gang

impl PyGang {
    /// Wraps a core gang (from a scenario, a reservation…) with its amounts exact, so
    /// it equals the same gang built in Python.
    pub fn of(g: Gang) -> PyGang {
        PyGang(exact_gang(g))
    }
}

impl PyNode {
    /// Wraps a core node description with its valid amounts exact.
    pub fn of(mut n: NodeSpec) -> PyNode {
        let cap: Vec<(String, QuantitySpec)> = n
            .get_capacity()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        let used: Vec<(String, QuantitySpec)> = n
            .get_used()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        for (k, v) in cap {
            if let Ok(q) = v.resolve(&k) {
                n.set_capacity(k, QuantitySpec::Exact(q));
            }
        }
        for (k, v) in used {
            if let Ok(q) = v.resolve(&k) {
                n.set_used(k, QuantitySpec::Exact(q));
            }
        }
        PyNode(n)
    }
}

/// A gang from a `Gang` or a dict in the scenario format (checked alone).
pub fn gang_from(obj: &Bound<'_, PyAny>) -> PyResult<Gang> {
    match obj.cast::<PyGang>() {
        Ok(g) => Ok(g.get().0.clone()),
        Err(_) => checked_gang(pyde::read(obj, "", ErrorKind::InvalidRequest)?),
    }
}

fn checked_gang(g: Gang) -> PyResult<Gang> {
    check_alone(&g, true)?;
    Ok(exact_gang(g))
}

fn preemption_policy_from(obj: &Bound<'_, PyAny>) -> PyResult<PreemptionPolicy> {
    let k = ErrorKind::InvalidRequest;
    match string(obj, "gang.preemption_policy", k)?.as_str() {
        "PreemptLowerPriority" => Ok(PreemptionPolicy::PreemptLowerPriority),
        "Never" => Ok(PreemptionPolicy::Never),
        other => Err(edge_error(
            k,
            "gang.preemption_policy",
            other,
            "expected \"PreemptLowerPriority\" or \"Never\"",
        )),
    }
}

fn policy_from(obj: &Bound<'_, PyAny>) -> PyResult<Policy> {
    match string(obj, "gang.policy", ErrorKind::InvalidRequest)?.as_str() {
        "best-fit" => Ok(Policy::BestFit),
        "most-free" => Ok(Policy::MostFree),
        "balanced" => Ok(Policy::Balanced),
        other => Err(edge_error(
            ErrorKind::InvalidRequest,
            "gang.policy",
            other,
            "expected best-fit, most-free or balanced",
        )),
    }
}

impl Repr for PyGang {
    fn repr(&self) -> String {
        let g = &self.0;
        let mut s = format!(
            "Gang({}, {}",
            repr_str(g.get_name()),
            list_repr(g.get_roles(), |r| PyRole(r.clone()).repr())
        );
        if let Some(r) = &g.get_topology().required {
            s.push_str(&format!(", required={}", repr_str(r)));
        }
        if let Some(p) = &g.get_topology().preferred {
            s.push_str(&format!(", preferred={}", repr_str(p)));
        }
        if !g.get_topology().slices.is_empty() {
            s.push_str(&format!(
                ", slices={}",
                list_repr(&g.get_topology().slices, |x| format!(
                    "({}, {})",
                    repr_str(&x.level),
                    x.size
                ))
            ));
        }
        if g.get_policy() != Policy::BestFit {
            s.push_str(&format!(", policy={}", repr_str(g.get_policy().as_str())));
        }
        if g.get_priority() != 0 {
            s.push_str(&format!(", priority={}", g.get_priority()));
        }
        if g.get_preemption_policy() != PreemptionPolicy::PreemptLowerPriority {
            s.push_str(&format!(
                ", preemption_policy={}",
                repr_str(g.get_preemption_policy().as_str())
            ));
        }
        s.push(')');
        s
    }
}

value_class!(PyGang, "from_dict", {
    #[new]
    #[pyo3(signature = (name, roles, *, required = None, preferred = None, slices = None, policy = None,
                        priority = None, preemption_policy = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &Bound<'_, PyAny>,
        roles: &Bound<'_, PyAny>,
        required: Option<&Bound<'_, PyAny>>,
        preferred: Option<&Bound<'_, PyAny>>,
        slices: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
        priority: Option<&Bound<'_, PyAny>>,
        preemption_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let k = ErrorKind::InvalidRequest;
        let mut g = Gang::new(string(name, "gang.name", k)?);
        for (i, r) in items(Some(roles), "gang.roles", k)?.iter().enumerate() {
            g.add_role(role_from(r, &format!("gang.roles[{i}]"), k)?);
        }
        g.set_required(opt_string(required, "gang.topology.required", k)?);
        g.set_preferred(opt_string(preferred, "gang.topology.preferred", k)?);
        for (i, s) in items(slices, "gang.topology.slices", k)?.iter().enumerate() {
            let at = format!("gang.topology.slices[{i}]");
            if s.is_instance_of::<PyTuple>() || s.is_instance_of::<PyList>() {
                let parts = items(Some(s), &at, k)?;
                if parts.len() != 2 {
                    return Err(edge_error(
                        k,
                        &at,
                        &pyde::obj_repr(s),
                        "a slice is a (level, size) pair",
                    ));
                }
                g.add_slice(
                    string(&parts[0], &format!("{at}.level"), k)?,
                    count(&parts[1], &format!("{at}.size"), k)?,
                );
            } else {
                let slice: gang_core::request::Slice = pyde::read(s, &at, k)?;
                g.add_slice(slice.level, slice.size);
            }
        }
        if let Some(p) = policy.filter(|p| !p.is_none()) {
            g.set_policy(policy_from(p)?);
        }
        if let Some(p) = priority.filter(|p| !p.is_none()) {
            g.set_priority(convert::priority(p, "gang.priority", k)?);
        }
        if let Some(p) = preemption_policy.filter(|p| !p.is_none()) {
            g.set_preemption_policy(preemption_policy_from(p)?);
        }
        checked_gang(g).map(PyGang)
    }
    /// A gang from a dict in the scenario format (the `gang` object of a scenario),
    /// checked as when built.
    ///
    /// >>> import gang
    /// >>> g = gang.Gang.from_dict({"name": "g", "roles": [{"name": "w", "count": 2}],
    /// ...                          "topology": {"required": "rack"}})
    /// >>> g.roles[0].count
    /// 2
    /// >>> gang.Gang.from_dict({"name": "g", "roles": [], "colour": "red"})
    /// Traceback (most recent call last):
    ///   ...
    /// gang.InvalidRequest: invalid request at colour: "red": unknown field `colour`, expected one of `name`, `roles`, `topology`, `policy`...
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        gang_from(doc).map(PyGang)
    }
    /// A gang from JSON text (the `gang` object of a scenario file).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = convert::json_text(text)?;
        checked_gang(convert::parse_request_json(&text)?).map(PyGang)
    }
    /// The gang of a Kubernetes workload (a PodGroup with its pods, a Job, JobSet,
    /// PyTorchJob, …): `gang.kube.load(*sources, …)`'s gang. With several workloads in
    /// the sources, `workload` (kubectl style: `job/train`) picks one.
    ///
    /// >>> import gang
    /// >>> job = '{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"}, "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}}}'
    /// >>> node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a1"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}'
    /// >>> g = gang.Gang.from_kube(("job.json", job), ("node.json", node))
    /// >>> g.name, g.roles[0].count
    /// ('train', 2)
    #[classmethod]
    #[pyo3(signature = (*sources, topology=None, workload=None, namespace=None))]
    fn from_kube(
        _cls: &Bound<'_, PyType>,
        sources: &Bound<'_, PyTuple>,
        topology: Option<&Bound<'_, PyAny>>,
        workload: Option<&str>,
        namespace: Option<&str>,
    ) -> PyResult<Self> {
        let doc = crate::kube::load_document(sources, topology, workload, namespace)?;
        let workloads = doc["workloads"].as_array().cloned().unwrap_or_default();
        let gangs: Vec<&serde_json::Value> = workloads
            .iter()
            .map(|w| &w["gang"])
            .filter(|g| !g.is_null())
            .collect();
        if let [only] = gangs.as_slice() {
            let text = only.to_string();
            return checked_gang(core(|| Gang::from_json(&text))?).map(PyGang);
        }
        let names: Vec<&str> = workloads
            .iter()
            .filter_map(|w| w["name"].as_str())
            .collect();
        Err(crate::errors::edge_error(
            ErrorKind::InvalidRequest,
            "workload",
            &names.join(", "),
            &format!(
                "{} gangs in the sources ({}): name one with workload=",
                gangs.len(),
                names.join(", ")
            ),
        ))
    }
    #[getter]
    fn name(&self) -> &str {
        self.0.get_name()
    }
    #[getter]
    fn roles(&self) -> Vec<PyRole> {
        self.0.get_roles().iter().cloned().map(PyRole).collect()
    }
    #[getter]
    fn required(&self) -> Option<&str> {
        self.0.get_topology().required.as_deref()
    }
    #[getter]
    fn preferred(&self) -> Option<&str> {
        self.0.get_topology().preferred.as_deref()
    }
    /// Slice levels as `(level, size)` pairs, outermost first.
    #[getter]
    fn slices(&self) -> Vec<(String, u32)> {
        self.0
            .get_topology()
            .slices
            .iter()
            .map(|s| (s.level.clone(), s.size))
            .collect()
    }
    #[getter]
    fn policy(&self) -> &'static str {
        self.0.get_policy().as_str()
    }
    /// The priority (Kubernetes PriorityClass semantics: higher wins; default 0).
    #[getter]
    fn priority(&self) -> i32 {
        self.0.get_priority()
    }
    /// `"PreemptLowerPriority"` (the default: its reservation may be evicted for a gang
    /// of strictly higher priority) or `"Never"` (never evicted).
    #[getter]
    fn preemption_policy(&self) -> &'static str {
        self.0.get_preemption_policy().as_str()
    }
    /// Total members requested (sum of role counts).
    #[getter]
    fn members(&self) -> u64 {
        self.0
            .get_roles()
            .iter()
            .map(|r| u64::from(r.get_count()))
            .sum()
    }
    /// The gang as JSON text (what `from_json` reads).
    fn to_json(&self) -> String {
        self.0.to_json()
    }
});
