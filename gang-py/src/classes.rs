//! The input classes' declarations: `Quantity`, `Taint`, `Toleration`, `Requirement`,
//! `Node`, `Role`, `Gang` — each a frozen newtype over the core type, its docstring
//! here and its methods in [`crate::spec`].
//!
//! They sit below the readers (`pyde`, `convert`) so that a reader can recognise a
//! spec object inside a document (a `Node` in a list of dicts, a `Quantity` as an
//! amount) without importing the module that builds them from those readers.

use gang_core::request::Requirement;
use gang_core::{Gang, NodeSpec, Quantity, Role, Taint, Toleration};
use pyo3::prelude::*;

/// The JSON document a spec object stands for, when `obj` is one (for spec objects
/// inside documents given as dicts).
pub fn spec_document(obj: &Bound<'_, PyAny>) -> Option<serde_json::Value> {
    fn doc<T: serde::Serialize>(v: &T) -> Option<serde_json::Value> {
        serde_json::to_value(v).ok()
    }
    if let Ok(v) = obj.cast::<PyNode>() {
        doc(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyRole>() {
        doc(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyGang>() {
        doc(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyTaint>() {
        doc(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyToleration>() {
        doc(&v.get().0)
    } else if let Ok(v) = obj.cast::<PyRequirement>() {
        doc(&v.get().0)
    } else {
        None
    }
}

/// An exact, non-negative resource amount in integer milli-units (Kubernetes syntax),
/// and a number in the resource's natural unit (cores, bytes, devices): `int()` and
/// `float()` convert it, it compares with other quantities and with numbers, and `+`,
/// `-` and `sum()` work.
///
/// >>> import gang
/// >>> gang.Quantity("1.5").millis
/// 1500
/// >>> int(gang.Quantity("16Gi")) == 16 * 2**30, float(gang.Quantity("500m"))
/// (True, 0.5)
/// >>> gang.Quantity("500m") < 1 and gang.Quantity(2) == 2
/// True
/// >>> sum([gang.Quantity("1.5"), gang.Quantity("500m")]) + 1
/// Quantity('3')
/// >>> gang.Quantity("12 GB")
/// Traceback (most recent call last):
///   ...
/// gang.InvalidQuantity: invalid quantity at quantity: "12 GB": unknown suffix
#[pyclass(name = "Quantity", module = "gang", frozen)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PyQuantity(pub Quantity);

/// A node taint. `effect` is "NoSchedule" (default), "PreferNoSchedule" (never
/// excludes a node) or "NoExecute".
///
/// >>> import gang
/// >>> gang.Taint("dedicated", "training")
/// Taint('dedicated', 'training', 'NoSchedule')
#[pyclass(name = "Taint", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyTaint(pub Taint);

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

/// A label requirement (node affinity): `key` `operator` `values`, with operator "In",
/// "NotIn", "Exists" or "DoesNotExist".
///
/// >>> import gang
/// >>> gang.Requirement("nvidia.com/gpu.product", "In", ["H100", "H200"])
/// Requirement('nvidia.com/gpu.product', 'In', ['H100', 'H200'])
#[pyclass(name = "Requirement", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRequirement(pub Requirement);

/// A node as the platform describes it. Quantities are anything with `__index__`
/// (whole units), numbers, Kubernetes strings ("96", "1.5", "500m", "16Gi") or
/// Quantity objects; the node is checked when built, and errors name the field
/// (`nodes[a1].capacity.memory`). Two nodes are equal when they describe the same
/// node: `capacity={"memory": "1Gi"}` equals `capacity={"memory": 2**30}`, and a node
/// you built equals `inventory.node(name)`.
///
/// >>> import gang
/// >>> n = gang.Node("a1", labels={"rack": "a"}, capacity={"nvidia.com/gpu": 8, "memory": "1Ti"},
/// ...               used={"nvidia.com/gpu": 6}, taints=[gang.Taint("dedicated", "training")])
/// >>> n.capacity["memory"] == 2**40, n.schedulable
/// (True, True)
/// >>> gang.Node.from_dict(n.to_dict()) == n == gang.Node("a1", labels={"rack": "a"},
/// ...     capacity={"memory": 2**40, "nvidia.com/gpu": "8"}, used={"nvidia.com/gpu": 6.0},
/// ...     taints=[gang.Taint("dedicated", "training")])
/// True
/// >>> gang.Node("a1", capacity={"memory": "12 GB"})
/// Traceback (most recent call last):
///   ...
/// gang.InvalidQuantity: invalid quantity at nodes[a1].capacity.memory: "12 GB": unknown suffix
#[pyclass(name = "Node", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyNode(pub NodeSpec);

/// One kind of member: how many, what each needs on one node, where it may run.
///
/// `requests` are per member and must all fit on one node (devices never merge across
/// nodes). `min_count` makes the role elastic; `max_per_node` caps members per node;
/// `constrained=False` lets the role run anywhere (still all-or-nothing). Checked when
/// built (count at least 1, min_count at most count, valid names and amounts).
///
/// >>> import gang
/// >>> w = gang.Role("worker", 8, requests={"nvidia.com/gpu": 1, "cpu": "500m"},
/// ...               node_selector={"nvidia.com/gpu.product": "H200"},
/// ...               tolerations=[gang.Toleration.equal("dedicated", "training")])
/// >>> w.count, w.requests["cpu"], w.constrained
/// (8, Quantity('500m'), True)
/// >>> gang.Role("w", 1, requests={"gpu": 1}) == gang.Role("w", 1, requests={"gpu": "1"})
/// True
/// >>> gang.Role("worker", 2, min_count=3)
/// Traceback (most recent call last):
///   ...
/// gang.InvalidRequest: invalid request at gang.roles[worker].min_count: "3": min_count exceeds count 2
#[pyclass(name = "Role", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyRole(pub Role);

/// A group of members that must run together: roles, a topology constraint, a policy.
///
/// `required` is a level every constrained member must share one domain of;
/// `preferred` is tried first, walking up a level at a time (never above `required`).
/// `slices` is a list of `(level, size)` pairs, outermost first. `policy` is
/// "best-fit" (default), "most-free" or "balanced". What can be checked without an
/// inventory is checked when the gang is built; its levels are checked against an
/// inventory when it is placed or compiled.
///
/// >>> import gang
/// >>> g = gang.Gang("train", [gang.Role("worker", 4, requests={"nvidia.com/gpu": 1})],
/// ...               required="topology.example.com/rack")
/// >>> g.required, g.policy, [r.name for r in g.roles]
/// ('topology.example.com/rack', 'best-fit', ['worker'])
/// >>> gang.Gang.from_json(g.to_json()) == g
/// True
/// >>> gang.Gang("g", [])
/// Traceback (most recent call last):
///   ...
/// gang.InvalidRequest: invalid request at gang.roles: "[]": a gang needs at least one role
#[pyclass(name = "Gang", module = "gang", frozen)]
#[derive(Clone)]
pub struct PyGang(pub Gang);
