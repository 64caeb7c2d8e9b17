//! Inputs: `Quantity`, `Taint`, `Toleration`, `Requirement`, `Node`, `Role`, `Gang`.
//!
//! Each class is a frozen newtype over the core type. Keyword constructors convert
//! field by field; `from_dict` goes through the core's JSON format, so a dict and a
//! scenario file are read by the same code.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use gang_core::request::{Requirement, SelectorOperator, Slice, TolerationOperator};
use gang_core::{
    ErrorKind, Gang, NodeSpec, Policy, Quantity, Role, Taint, TaintEffect, Toleration,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::convert::{self, amount, amount_to_py, count, items, str_map, string};
use crate::errors::{core, edge_error};

/// Parses a JSON value into `T`, naming the JSON path (under `at`) on error.
pub fn parse_value<T: DeserializeOwned>(v: Value, at: &str) -> PyResult<T> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| path_error(e, at))
}

/// Parses JSON text into `T`, naming the JSON path (under `at`) on error.
pub fn parse_text<T: DeserializeOwned>(text: &str, at: &str) -> PyResult<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize::<_, T>(&mut de).map_err(|e| path_error(e, at))
}

fn path_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>, at: &str) -> PyErr {
    {
        let path = e.path().to_string();
        let field = match (at.is_empty(), path == ".") {
            (true, true) => "document".to_owned(),
            (true, false) => path,
            (false, true) => at.to_owned(),
            (false, false) => format!("{at}.{path}"),
        };
        edge_error(
            ErrorKind::InvalidScenario,
            &field,
            "",
            &e.into_inner().to_string(),
        )
    }
}

/// Converts a Python value (a spec object or a dict) into the core type `T`.
pub fn parse_py<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<T> {
    parse_text(&convert::to_json(obj, at)?, at)
}

pub fn json_of<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub fn hash_json<T: Serialize>(v: &T) -> isize {
    let mut h = DefaultHasher::new();
    json_of(v).to_string().hash(&mut h);
    h.finish() as isize
}

/// A core value as plain Python data, keys in the core's order (fields as declared,
/// maps as given): serialised to JSON text and read back by Python's `json`.
pub fn dict_of<'py, T: Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned());
    py.import("json")?.call_method1("loads", (text,))
}

fn reduce<'py, T: Serialize>(
    slf: &Bound<'py, PyAny>,
    v: &T,
) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
    let py = slf.py();
    let ctor = slf.get_type().getattr("from_dict")?;
    Ok((ctor, (dict_of(py, v)?,)))
}

fn repr_str(s: &str) -> String {
    format!("{s:?}").replace('"', "'")
}

/// The JSON text of a spec object (`Node`, `Role`, `Gang`, `Taint`, `Toleration`,
/// `Requirement`), if `obj` is one.
pub fn spec_json(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    fn text<T: Serialize>(v: &T) -> Option<String> {
        serde_json::to_string(v).ok()
    }
    Ok(if let Ok(v) = obj.cast::<PyNode>() {
        text(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyRole>() {
        text(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyGang>() {
        text(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyTaint>() {
        text(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyToleration>() {
        text(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyRequirement>() {
        text(&v.get().0)
    } else {
        None
    })
}

// ------------------------------------------------------------------------- Quantity

/// An exact, non-negative resource amount in integer milli-units (Kubernetes syntax).
///
/// >>> import gang
/// >>> gang.Quantity("1.5").millis
/// 1500
/// >>> str(gang.Quantity("16Gi")) == str(16 * 2**30)
/// True
/// >>> gang.Quantity("500m") < gang.Quantity(1)
/// True
/// >>> gang.Quantity("12 GB")
/// Traceback (most recent call last):
///   ...
/// gang.InvalidQuantity: invalid quantity at quantity: "12 GB": unknown suffix
#[pyclass(name = "Quantity", module = "gang", frozen, eq, ord, hash)]
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PyQuantity(pub Quantity);

#[pymethods]
impl PyQuantity {
    /// Parses an int (whole units), a Kubernetes quantity string, a float or a Quantity.
    #[new]
    fn new(amount: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = convert::amount(amount, "quantity")?;
        core(|| a.resolve("quantity")).map(PyQuantity)
    }

    /// A quantity of `millis` milli-units.
    #[staticmethod]
    fn from_millis(millis: u64) -> Self {
        PyQuantity(Quantity::from_millis(millis))
    }

    /// The amount in milli-units.
    #[getter]
    fn millis(&self) -> u64 {
        self.0.millis()
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

/// A node taint. `effect` is "NoSchedule" (default), "PreferNoSchedule" (never
/// excludes a node) or "NoExecute".
///
/// >>> import gang
/// >>> gang.Taint("dedicated", "training")
/// Taint('dedicated', 'training', 'NoSchedule')
#[pyclass(name = "Taint", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyTaint(pub Taint);

#[pymethods]
impl PyTaint {
    #[new]
    #[pyo3(signature = (key, value = "", effect = None))]
    fn new(key: String, value: &str, effect: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let effect = match effect {
            Some(e) => taint_effect(e, "taint.effect", ErrorKind::InvalidInventory)?,
            None => TaintEffect::NoSchedule,
        };
        Ok(PyTaint(Taint::new(key, value.to_owned(), effect)))
    }
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyTaint)
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
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn __repr__(&self) -> String {
        format!(
            "Taint({}, {}, {})",
            repr_str(&self.0.key),
            repr_str(&self.0.value),
            repr_str(effect_name(self.0.effect))
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}

// ------------------------------------------------------------------------- Toleration

/// A toleration, with Kubernetes matching rules: `operator` "Equal" (default) compares
/// key and value; "Exists" matches any value, and with an empty key every taint;
/// `effect` None matches every effect.
///
/// >>> import gang
/// >>> t = gang.Toleration.equal("dedicated", "training")
/// >>> t.tolerates(gang.Taint("dedicated", "training"))
/// True
/// >>> gang.Toleration.exists().tolerates(gang.Taint("anything", "at-all", "NoExecute"))
/// True
#[pyclass(name = "Toleration", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyToleration(pub Toleration);

#[pymethods]
impl PyToleration {
    #[new]
    #[pyo3(signature = (key = "", operator = "Equal", value = "", effect = None))]
    fn new(
        key: &str,
        operator: &str,
        value: &str,
        effect: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let op = match operator {
            "Equal" => TolerationOperator::Equal,
            "Exists" => TolerationOperator::Exists,
            other => {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "toleration.operator",
                    other,
                    "expected Equal or Exists",
                ))
            }
        };
        let effect = match effect.filter(|e| !e.is_none()) {
            Some(e) => Some(taint_effect(
                e,
                "toleration.effect",
                ErrorKind::InvalidRequest,
            )?),
            None => None,
        };
        Ok(PyToleration(Toleration {
            key: key.to_owned(),
            operator: op,
            value: value.to_owned(),
            effect,
        }))
    }
    /// Tolerates taints with this key and value.
    #[staticmethod]
    fn equal(key: String, value: String) -> Self {
        PyToleration(Toleration::equal(key, value))
    }
    /// Tolerates taints with this key, whatever the value (empty key: every taint).
    #[staticmethod]
    #[pyo3(signature = (key = ""))]
    fn exists(key: &str) -> Self {
        PyToleration(Toleration::exists(key))
    }
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyToleration)
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
        match self.0.operator {
            TolerationOperator::Equal => "Equal",
            TolerationOperator::Exists => "Exists",
        }
    }
    #[getter]
    fn value(&self) -> &str {
        &self.0.value
    }
    #[getter]
    fn effect(&self) -> Option<&'static str> {
        self.0.effect.map(effect_name)
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn __repr__(&self) -> String {
        let mut s = format!(
            "Toleration({}, {}, {}",
            repr_str(&self.0.key),
            repr_str(self.operator()),
            repr_str(&self.0.value)
        );
        if let Some(e) = self.effect() {
            s.push_str(&format!(", {}", repr_str(e)));
        }
        s.push(')');
        s
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}

// ------------------------------------------------------------------------- Requirement

/// A label requirement (node affinity): `key` `operator` `values`, with operator "In",
/// "NotIn", "Exists" or "DoesNotExist".
///
/// >>> import gang
/// >>> gang.Requirement("nvidia.com/gpu.product", "In", ["H100", "H200"])
/// Requirement('nvidia.com/gpu.product', 'In', ['H100', 'H200'])
#[pyclass(name = "Requirement", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRequirement(pub Requirement);

fn selector_op(op: SelectorOperator) -> &'static str {
    match op {
        SelectorOperator::In => "In",
        SelectorOperator::NotIn => "NotIn",
        SelectorOperator::Exists => "Exists",
        SelectorOperator::DoesNotExist => "DoesNotExist",
    }
}

#[pymethods]
impl PyRequirement {
    #[new]
    #[pyo3(signature = (key, operator, values = None))]
    fn new(key: String, operator: &str, values: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let op = match operator {
            "In" => SelectorOperator::In,
            "NotIn" => SelectorOperator::NotIn,
            "Exists" => SelectorOperator::Exists,
            "DoesNotExist" => SelectorOperator::DoesNotExist,
            other => {
                return Err(edge_error(
                    ErrorKind::InvalidRequest,
                    "match_expressions.operator",
                    other,
                    "expected In, NotIn, Exists or DoesNotExist",
                ))
            }
        };
        let mut vals = Vec::new();
        for (i, v) in items(values)?.iter().enumerate() {
            vals.push(string(
                v,
                &format!("match_expressions.values[{i}]"),
                ErrorKind::InvalidRequest,
            )?);
        }
        Ok(PyRequirement(Requirement {
            key,
            operator: op,
            values: vals,
        }))
    }
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyRequirement)
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
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn __repr__(&self) -> String {
        let vals: Vec<String> = self.0.values.iter().map(|v| repr_str(v)).collect();
        format!(
            "Requirement({}, {}, [{}])",
            repr_str(&self.0.key),
            repr_str(self.operator()),
            vals.join(", ")
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}

// ------------------------------------------------------------------------- Node

/// A node as the platform describes it. Quantities are ints (whole units) or
/// Kubernetes strings ("96", "1.5", "500m", "16Gi"); they are validated when the
/// inventory is built, and errors name the field (`nodes[a1].capacity.memory`).
///
/// >>> import gang
/// >>> n = gang.Node("a1", labels={"rack": "a"}, capacity={"nvidia.com/gpu": 8, "memory": "1Ti"},
/// ...               used={"nvidia.com/gpu": 6}, taints=[gang.Taint("dedicated", "training")])
/// >>> n.capacity["memory"], n.schedulable
/// ('1Ti', True)
/// >>> gang.Node.from_dict(n.to_dict()) == n
/// True
#[pyclass(name = "Node", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyNode(pub NodeSpec);

fn labels_from(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Vec<(String, String)>> {
    str_map(obj, field, |v, f| string(v, f, ErrorKind::InvalidInventory))
}

pub fn node_from(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<NodeSpec> {
    match obj.cast::<PyNode>() {
        Ok(n) => Ok(n.get().0.clone()),
        Err(_) => parse_py(obj, at),
    }
}

#[pymethods]
impl PyNode {
    #[new]
    #[pyo3(signature = (name, *, labels = None, capacity = None, used = None, taints = None, schedulable = true))]
    fn new(
        name: String,
        labels: Option<&Bound<'_, PyAny>>,
        capacity: Option<&Bound<'_, PyAny>>,
        used: Option<&Bound<'_, PyAny>>,
        taints: Option<&Bound<'_, PyAny>>,
        schedulable: bool,
    ) -> PyResult<Self> {
        let mut n = NodeSpec::new(name.clone());
        for (k, v) in labels_from(labels, &format!("nodes[{name}].labels"))? {
            n.set_label(k, v);
        }
        for (r, a) in str_map(capacity, &format!("nodes[{name}].capacity"), amount)? {
            n.set_capacity(r, a);
        }
        for (r, a) in str_map(used, &format!("nodes[{name}].used"), amount)? {
            n.set_used(r, a);
        }
        for (i, t) in items(taints)?.iter().enumerate() {
            let at = format!("nodes[{name}].taints[{i}]");
            n.add_taint(match t.cast::<PyTaint>() {
                Ok(t) => t.get().0.clone(),
                Err(_) => parse_py(t, &at)?,
            });
        }
        n.set_schedulable(schedulable);
        Ok(PyNode(n))
    }
    /// A node from a dict in the scenario format (`{"name", "labels", "capacity",
    /// "used", "taints", "schedulable"}`).
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyNode)
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
    /// Allocatable capacity per resource, as given (int or str).
    #[getter]
    fn capacity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.0.get_capacity() {
            d.set_item(k, amount_to_py(py, v)?)?;
        }
        Ok(d)
    }
    /// Amounts used outside gang, as given.
    #[getter]
    fn used<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.0.get_used() {
            d.set_item(k, amount_to_py(py, v)?)?;
        }
        Ok(d)
    }
    #[getter]
    fn taints(&self) -> Vec<PyTaint> {
        self.0.get_taints().iter().cloned().map(PyTaint).collect()
    }
    #[getter]
    fn schedulable(&self) -> bool {
        self.0.is_schedulable()
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut s = format!("Node({}", repr_str(self.0.get_name()));
        if !self.0.get_labels().len() == 0 {
            s.push_str(&format!(", labels={}", self.labels(py)?.repr()?));
        }
        if !self.0.get_capacity().len() == 0 {
            s.push_str(&format!(", capacity={}", self.capacity(py)?.repr()?));
        }
        if !self.0.get_used().len() == 0 {
            s.push_str(&format!(", used={}", self.used(py)?.repr()?));
        }
        if !self.0.get_taints().is_empty() {
            let t: Vec<String> = self.taints().iter().map(PyTaint::__repr__).collect();
            s.push_str(&format!(", taints=[{}]", t.join(", ")));
        }
        if !self.0.is_schedulable() {
            s.push_str(", schedulable=False");
        }
        s.push(')');
        Ok(s)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}

// ------------------------------------------------------------------------- Role

/// One kind of member: how many, what each needs on one node, where it may run.
///
/// `requests` are per member and must all fit on one node (devices never merge across
/// nodes). `min_count` makes the role elastic; `max_per_node` caps members per node;
/// `constrained=False` lets the role run anywhere (still all-or-nothing).
///
/// >>> import gang
/// >>> w = gang.Role("worker", 8, requests={"nvidia.com/gpu": 1, "cpu": "500m"},
/// ...               node_selector={"nvidia.com/gpu.product": "H200"},
/// ...               tolerations=[gang.Toleration.equal("dedicated", "training")])
/// >>> w.count, w.requests["cpu"], w.constrained
/// (8, '500m', True)
#[pyclass(name = "Role", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRole(pub Role);

pub fn role_from(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Role> {
    match obj.cast::<PyRole>() {
        Ok(r) => Ok(r.get().0.clone()),
        Err(_) => parse_py(obj, at),
    }
}

fn opt_count(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<u32>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => count(o, field, ErrorKind::InvalidRequest).map(Some),
    }
}

#[pymethods]
impl PyRole {
    #[new]
    #[pyo3(signature = (name, count, *, requests = None, min_count = None, node_selector = None,
                        match_expressions = None, tolerations = None, max_per_node = None,
                        constrained = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        count: &Bound<'_, PyAny>,
        requests: Option<&Bound<'_, PyAny>>,
        min_count: Option<&Bound<'_, PyAny>>,
        node_selector: Option<&Bound<'_, PyAny>>,
        match_expressions: Option<&Bound<'_, PyAny>>,
        tolerations: Option<&Bound<'_, PyAny>>,
        max_per_node: Option<&Bound<'_, PyAny>>,
        constrained: bool,
    ) -> PyResult<Self> {
        let at = format!("gang.roles[{name}]");
        let n = convert::count(count, &format!("{at}.count"), ErrorKind::InvalidRequest)?;
        let mut r = Role::new(name.clone(), n);
        r.set_min_count(opt_count(min_count, &format!("{at}.min_count"))?);
        r.set_max_per_node(opt_count(max_per_node, &format!("{at}.max_per_node"))?);
        for (res, a) in str_map(requests, &format!("{at}.requests"), amount)? {
            r.set_request(res, a);
        }
        let selector = str_map(node_selector, &format!("{at}.node_selector"), |v, f| {
            string(v, f, ErrorKind::InvalidRequest)
        })?;
        for (k, v) in selector {
            r.set_selector(k, v);
        }
        for (i, e) in items(match_expressions)?.iter().enumerate() {
            r.add_requirement(match e.cast::<PyRequirement>() {
                Ok(x) => x.get().0.clone(),
                Err(_) => parse_py(e, &format!("{at}.match_expressions[{i}]"))?,
            });
        }
        for (i, t) in items(tolerations)?.iter().enumerate() {
            r.add_toleration(match t.cast::<PyToleration>() {
                Ok(x) => x.get().0.clone(),
                Err(_) => parse_py(t, &format!("{at}.tolerations[{i}]"))?,
            });
        }
        r.set_constrained(constrained);
        Ok(PyRole(r))
    }
    /// A role from a dict in the scenario format.
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyRole)
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
    /// Per-member requests, as given (int or str).
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.0.get_requests() {
            d.set_item(k, amount_to_py(py, v)?)?;
        }
        Ok(d)
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
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut s = format!(
            "Role({}, {}",
            repr_str(self.0.get_name()),
            self.0.get_count()
        );
        if !self.0.get_requests().len() == 0 {
            s.push_str(&format!(", requests={}", self.requests(py)?.repr()?));
        }
        if let Some(m) = self.0.get_min_count() {
            s.push_str(&format!(", min_count={m}"));
        }
        if !self.0.get_node_selector().len() == 0 {
            s.push_str(&format!(
                ", node_selector={}",
                self.node_selector(py)?.repr()?
            ));
        }
        if !self.0.get_match_expressions().is_empty() {
            let v: Vec<String> = self
                .match_expressions()
                .iter()
                .map(PyRequirement::__repr__)
                .collect();
            s.push_str(&format!(", match_expressions=[{}]", v.join(", ")));
        }
        if !self.0.get_tolerations().is_empty() {
            let v: Vec<String> = self
                .tolerations()
                .iter()
                .map(PyToleration::__repr__)
                .collect();
            s.push_str(&format!(", tolerations=[{}]", v.join(", ")));
        }
        if let Some(m) = self.0.get_max_per_node() {
            s.push_str(&format!(", max_per_node={m}"));
        }
        if !self.0.is_constrained() {
            s.push_str(", constrained=False");
        }
        s.push(')');
        Ok(s)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}

// ------------------------------------------------------------------------- Gang

/// A group of members that must run together: roles, a topology constraint, a policy.
///
/// `required` is a level every constrained member must share one domain of;
/// `preferred` is tried first, walking up a level at a time (never above `required`).
/// `slices` is a list of `(level, size)` pairs, outermost first. `policy` is
/// "best-fit" (default), "most-free" or "balanced". The gang is validated against an
/// inventory when placed or compiled.
///
/// >>> import gang
/// >>> g = gang.Gang("train", [gang.Role("worker", 4, requests={"nvidia.com/gpu": 1})],
/// ...               required="topology.example.com/rack")
/// >>> g.required, g.policy, [r.name for r in g.roles]
/// ('topology.example.com/rack', 'best-fit', ['worker'])
/// >>> gang.Gang.from_json(g.to_json()) == g
/// True
#[pyclass(name = "Gang", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyGang(pub Gang);

pub fn gang_from(obj: &Bound<'_, PyAny>) -> PyResult<Gang> {
    match obj.cast::<PyGang>() {
        Ok(g) => Ok(g.get().0.clone()),
        Err(_) => parse_py(obj, ""),
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

fn opt_level(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => string(o, field, ErrorKind::InvalidRequest).map(Some),
    }
}

#[pymethods]
impl PyGang {
    #[new]
    #[pyo3(signature = (name, roles, *, required = None, preferred = None, slices = None, policy = None))]
    fn new(
        name: String,
        roles: &Bound<'_, PyAny>,
        required: Option<&Bound<'_, PyAny>>,
        preferred: Option<&Bound<'_, PyAny>>,
        slices: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut g = Gang::new(name);
        for (i, r) in items(Some(roles))?.iter().enumerate() {
            g.add_role(role_from(r, &format!("gang.roles[{i}]"))?);
        }
        g.set_required(opt_level(required, "gang.topology.required")?);
        g.set_preferred(opt_level(preferred, "gang.topology.preferred")?);
        for (i, s) in items(slices)?.iter().enumerate() {
            let at = format!("gang.topology.slices[{i}]");
            let slice = if s.is_instance_of::<PyTuple>() || s.is_instance_of::<PyList>() {
                let parts: Vec<Bound<'_, PyAny>> = items(Some(s))?;
                if parts.len() != 2 {
                    return Err(edge_error(
                        ErrorKind::InvalidRequest,
                        &at,
                        &s.repr()?.to_string(),
                        "a slice is a (level, size) pair",
                    ));
                }
                Slice {
                    level: string(&parts[0], &format!("{at}.level"), ErrorKind::InvalidRequest)?,
                    size: count(&parts[1], &format!("{at}.size"), ErrorKind::InvalidRequest)?,
                }
            } else {
                parse_py(s, &at)?
            };
            g.add_slice(slice.level, slice.size);
        }
        if let Some(p) = policy.filter(|p| !p.is_none()) {
            g.set_policy(policy_from(p)?);
        }
        Ok(PyGang(g))
    }
    /// A gang from a dict in the scenario format (the `gang` object of a scenario).
    ///
    /// >>> import gang
    /// >>> g = gang.Gang.from_dict({"name": "g", "roles": [{"name": "w", "count": 2}],
    /// ...                          "topology": {"required": "rack"}})
    /// >>> g.roles[0].count
    /// 2
    /// >>> gang.Gang.from_dict({"name": "g", "roles": [], "colour": "red"})
    /// Traceback (most recent call last):
    ///   ...
    /// gang.InvalidScenario: invalid scenario at colour: unknown field `colour`, expected one of `name`, `roles`, `topology`, `policy`...
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
        parse_py(doc, "").map(PyGang)
    }
    /// A gang from JSON text (the `gang` object of a scenario file).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = convert::json_text(text)?;
        core(|| Gang::from_json(&text)).map(PyGang)
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
    /// Total members requested (sum of role counts).
    #[getter]
    fn members(&self) -> u64 {
        self.0
            .get_roles()
            .iter()
            .map(|r| u64::from(r.get_count()))
            .sum()
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dict_of(py, &self.0)
    }
    fn to_json(&self) -> String {
        self.0.to_json()
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let roles: Vec<String> = self
            .roles()
            .iter()
            .map(|r| r.__repr__(py))
            .collect::<PyResult<_>>()?;
        let mut s = format!(
            "Gang({}, [{}]",
            repr_str(self.0.get_name()),
            roles.join(", ")
        );
        if let Some(r) = &self.0.get_topology().required {
            s.push_str(&format!(", required={}", repr_str(r)));
        }
        if let Some(p) = &self.0.get_topology().preferred {
            s.push_str(&format!(", preferred={}", repr_str(p)));
        }
        if !self.0.get_topology().slices.is_empty() {
            let v: Vec<String> = self
                .0
                .get_topology()
                .slices
                .iter()
                .map(|x| format!("({}, {})", repr_str(&x.level), x.size))
                .collect();
            s.push_str(&format!(", slices=[{}]", v.join(", ")));
        }
        if self.0.get_policy() != Policy::BestFit {
            s.push_str(&format!(
                ", policy={}",
                repr_str(self.0.get_policy().as_str())
            ));
        }
        s.push(')');
        Ok(s)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> isize {
        hash_json(&self.0)
    }
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any(), &slf.get().0)
    }
}
