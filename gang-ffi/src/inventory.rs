//! Nodes, the inventory builder, and the inventory.

use std::ffi::c_char;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};

use gang_core::lifecycle::PreemptSolver;
use gang_core::{Inventory, NodeSpec, Taint, Topology};

use crate::error::gang_error;
use crate::failure::Failure;
use crate::handle::{Handle, Kind, Out};
use crate::result::{gang_result, parse_taint_effect};
use crate::text::{arg_doc, arg_str, arg_strs};

/// A node being described: name, labels, capacity, external use, taints, schedulable.
///
/// Made by `gang_node_new`; filled by the `gang_node_*` setters; copied into an
/// inventory by `gang_inventory_builder_add_node` (the node stays yours and can be
/// changed and added again); freed with `gang_node_free`. One thread at a time.
///
/// Setters do not validate: names, labels and quantities are checked when the inventory
/// is built, and the error then names the node and field (`nodes[a1].capacity.cpu`).
pub struct gang_node {
    _private: [u8; 0],
}

unsafe impl Handle for gang_node {
    type Inner = NodeSpec;
    const KIND: Kind = Kind::Node;
}

/// Collects nodes over a topology, then builds a validated `gang_inventory`.
///
/// Made by `gang_inventory_builder_new`; freed with `gang_inventory_builder_free`. One
/// thread at a time.
pub struct gang_inventory_builder {
    _private: [u8; 0],
}

pub(crate) struct BuilderInner {
    topology: Topology,
    nodes: Vec<NodeSpec>,
}

unsafe impl Handle for gang_inventory_builder {
    type Inner = BuilderInner;
    const KIND: Kind = Kind::InventoryBuilder;
}

/// A validated cluster, ready to answer placement queries, holding reservations and
/// following node changes (the lifecycle).
///
/// Made by `gang_inventory_builder_build`, `gang_inventory_from_json` or
/// `gang_scenario_inventory`; freed with `gang_inventory_free`. Functions that take a
/// `const gang_inventory *` never change it, and any number of threads may call them on
/// one inventory at once (each placing with its own `gang_solver`). Functions that take
/// a `gang_inventory *` (`gang_inventory_reserve`, `_release`, `_add_node`,
/// `_remove_node`, `_fail_node`, `_cordon`, `_uncordon`, `_set_labels`,
/// `_set_capacity[_millis]`, `_set_used[_millis]`, `_replace`, `_spread`, `_admit`,
/// `_preempt_reserve`, `_add_evictable`, `_remove_evictable`)
/// change it and need it to themselves: no other call on the same inventory, on any
/// thread, during the call. Separate inventories are independent.
pub struct gang_inventory {
    _private: [u8; 0],
}

unsafe impl Handle for gang_inventory {
    type Inner = InventoryInner;
    const KIND: Kind = Kind::Inventory;
}

/// An inventory and its kept preemption solver (gang-core's [`PreemptSolver`]: the
/// candidate victims kept from one `gang_inventory_preempt` to the next, brought up to
/// date from the inventory's journal), with the default limits of `Inventory::preempt`.
/// Reads as the inventory it holds.
pub(crate) struct InventoryInner {
    inventory: Inventory,
    kept: Mutex<PreemptSolver>,
}

impl InventoryInner {
    pub(crate) fn new(inventory: Inventory) -> InventoryInner {
        InventoryInner {
            inventory,
            kept: Mutex::new(PreemptSolver::new()),
        }
    }

    /// The kept solver for a query on a shared inventory, or `None` while another
    /// thread's query holds it (that query then asks a solver of its own: the same
    /// answer). One that a panic left behind is replaced: its book may be half
    /// brought up to date.
    pub(crate) fn kept(&self) -> Option<MutexGuard<'_, PreemptSolver>> {
        match self.kept.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::WouldBlock) => None,
            Err(TryLockError::Poisoned(e)) => {
                let mut g = e.into_inner();
                *g = PreemptSolver::new();
                self.kept.clear_poison();
                Some(g)
            }
        }
    }

    /// The inventory and its kept solver, for a change that asks it first
    /// (`gang_inventory_preempt_reserve`).
    pub(crate) fn with_kept(&mut self) -> (&mut Inventory, &mut PreemptSolver) {
        if self.kept.is_poisoned() {
            self.kept = Mutex::new(PreemptSolver::new());
        }
        let kept = self.kept.get_mut().unwrap_or_else(|e| e.into_inner());
        (&mut self.inventory, kept)
    }
}

impl Deref for InventoryInner {
    type Target = Inventory;
    fn deref(&self) -> &Inventory {
        &self.inventory
    }
}

impl DerefMut for InventoryInner {
    fn deref_mut(&mut self) -> &mut Inventory {
        &mut self.inventory
    }
}

/// Makes a node named `name` (schedulable, no labels, no capacity).
///
/// Ownership: on `GANG_OK`, `*node_out` is a new node owned by the caller; free it
/// with `gang_node_free`. `name` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `node_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_node_new(
    name: *const c_char,
    node_out: *mut *mut gang_node,
) -> gang_result {
    ffi_boundary!({
        let name = arg_str(name, "name")?;
        let out = Out::new(node_out, "node_out")?;
        out.write(gang_node::into_raw(NodeSpec::new(name)));
        Ok(())
    })
}

/// Sets label `key` to `value` on the node (replacing an earlier value of `key`).
///
/// Ownership: `node` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; the strings
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_add_label(
    node: *mut gang_node,
    key: *const c_char,
    value: *const c_char,
) -> gang_result {
    ffi_boundary!({
        let n = gang_node::get_mut(node, "node")?;
        let key = arg_str(key, "key")?;
        let value = arg_str(value, "value")?;
        n.set_label(key.to_owned(), value.to_owned());
        Ok(())
    })
}

/// Sets the node's allocatable capacity of `resource` to a Kubernetes quantity
/// (`"8"`, `"96"`, `"1.5"`, `"16Gi"`, `"500m"`).
///
/// Ownership: `node` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument. A malformed
/// quantity is reported by `gang_inventory_builder_build` (`GANG_INVALID_QUANTITY`).
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; the strings
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_set_capacity(
    node: *mut gang_node,
    resource: *const c_char,
    quantity: *const c_char,
) -> gang_result {
    set_amount!(node.set_capacity(resource) = text quantity)
}

/// Sets the node's allocatable capacity of `resource` to `millis` milli-units (8 GPUs
/// is 8000; 1.5 CPUs is 1500). No parsing: the fast way in.
///
/// Ownership: `node` stays owned by the caller; `resource` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; `resource`
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_set_capacity_millis(
    node: *mut gang_node,
    resource: *const c_char,
    millis: u64,
) -> gang_result {
    set_amount!(node.set_capacity(resource) = millis millis)
}

/// Sets how much of `resource` is used on the node outside the library (other pods), as
/// a Kubernetes quantity. Free = capacity − used, never below zero.
///
/// Ownership: `node` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument. A malformed
/// quantity is reported by `gang_inventory_builder_build`.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; the strings
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_set_used(
    node: *mut gang_node,
    resource: *const c_char,
    quantity: *const c_char,
) -> gang_result {
    set_amount!(node.set_used(resource) = text quantity)
}

/// Sets how much of `resource` is used on the node outside the library, in
/// milli-units.
///
/// Ownership: `node` stays owned by the caller; `resource` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; `resource`
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_set_used_millis(
    node: *mut gang_node,
    resource: *const c_char,
    millis: u64,
) -> gang_result {
    set_amount!(node.set_used(resource) = millis millis)
}

/// Adds a taint `key=value:effect` to the node; `effect` is one of
/// `GANG_EFFECT_NO_SCHEDULE`, `GANG_EFFECT_PREFER_NO_SCHEDULE`, `GANG_EFFECT_NO_EXECUTE`.
/// `value` may be empty.
///
/// Ownership: `node` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT`, `GANG_INVALID_UTF8`, or `GANG_INVALID_ARGUMENT` for
/// another `effect` (including `GANG_EFFECT_ANY`).
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread; the strings
/// NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_node_add_taint(
    node: *mut gang_node,
    key: *const c_char,
    value: *const c_char,
    effect: u32,
) -> gang_result {
    ffi_boundary!({
        let n = gang_node::get_mut(node, "node")?;
        let key = arg_str(key, "key")?;
        let value = arg_str(value, "value")?;
        let effect = parse_taint_effect(effect).ok_or_else(|| {
            Failure::invalid_argument("effect", effect, "a gang_effect other than ANY")
        })?;
        n.add_taint(Taint::new(key, value, effect));
        Ok(())
    })
}

/// Marks the node schedulable (`true`, the default) or cordoned (`false`).
///
/// Ownership: `node` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `node` is NULL.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_node_set_schedulable(
    node: *mut gang_node,
    schedulable: bool,
) -> gang_result {
    ffi_boundary!({
        gang_node::get_mut(node, "node")?.set_schedulable(schedulable);
        Ok(())
    })
}

/// Frees a node. `gang_node_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `node`. Inventories built from it are unaffected (they
/// hold copies). Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `node` must be NULL or a live `gang_node` not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_node_free(node: *mut gang_node) {
    gang_node::free(node);
}

/// Starts an inventory over a topology: `n_levels` label keys, outermost first (e.g.
/// `"topology.example.com/block"`, `"topology.example.com/rack"`). The node is always
/// the innermost level; `"kubernetes.io/hostname"` may be named last.
///
/// Ownership: on `GANG_OK`, `*builder_out` is a new builder owned by the caller; free it
/// with `gang_inventory_builder_free`. The level strings are copied. On failure, a new
/// `gang_error` is stored in `*error_out` if `error_out` is not NULL (free it with
/// `gang_error_free`).
///
/// Returns `GANG_INVALID_INVENTORY` for a malformed or repeated level (field
/// `topology.levels[i]`), `GANG_NULL_ARGUMENT` (`levels` may be NULL only when
/// `n_levels` is 0) or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `levels` must be NULL or point at `n_levels` pointers, each NULL or NUL-terminated;
/// `builder_out` NULL or writable; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_builder_new(
    levels: *const *const c_char,
    n_levels: usize,
    builder_out: *mut *mut gang_inventory_builder,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let levels = arg_strs(levels, n_levels, "levels")?;
        let out = Out::new(builder_out, "builder_out")?;
        let topology = Topology::new(levels)?;
        out.write(gang_inventory_builder::into_raw(BuilderInner {
            topology,
            nodes: Vec::new(),
        }));
        Ok(())
    })
}

/// Adds a copy of `node` to the builder.
///
/// Ownership: `builder` and `node` stay owned by the caller; `node` can be changed and
/// added again, or freed.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `builder` must be NULL or a live builder and `node` NULL or a live node, neither used
/// by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_builder_add_node(
    builder: *mut gang_inventory_builder,
    node: *const gang_node,
) -> gang_result {
    ffi_boundary!({
        let b = gang_inventory_builder::get_mut(builder, "builder")?;
        let n = gang_node::get(node, "node")?;
        b.nodes.push(n.clone());
        Ok(())
    })
}

/// Validates every node added so far and builds the inventory.
///
/// The builder's nodes move into the inventory: afterwards (whether or not the build
/// succeeds) the builder is empty but keeps its topology and can be filled and built
/// again. It must still be freed with `gang_inventory_builder_free`.
///
/// Ownership: on `GANG_OK`, `*inventory_out` is a new inventory owned by the caller;
/// free it with `gang_inventory_free`. On failure, a new `gang_error` is stored in
/// `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_INVENTORY` (duplicate or malformed node name, bad label key or
/// value, resource name or taint) or `GANG_INVALID_QUANTITY` (bad capacity or used
/// amount); the error's field names the node (`nodes[a1].capacity.cpu`).
/// `GANG_NULL_ARGUMENT` for a NULL argument.
///
/// # Safety
/// `builder` must be NULL or a live builder not used by another thread; `inventory_out`
/// NULL or writable; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_builder_build(
    builder: *mut gang_inventory_builder,
    inventory_out: *mut *mut gang_inventory,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let b = gang_inventory_builder::get_mut(builder, "builder")?;
        let out = Out::new(inventory_out, "inventory_out")?;
        let nodes = std::mem::take(&mut b.nodes);
        let inventory = Inventory::builder(b.topology.clone())
            .nodes(nodes)
            .build()?;
        out.write(gang_inventory::into_raw(InventoryInner::new(inventory)));
        Ok(())
    })
}

/// Frees a builder and the nodes in it. `gang_inventory_builder_free(NULL)` does
/// nothing.
///
/// Ownership: takes ownership of `builder`. Inventories built from it are unaffected.
/// Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `builder` must be NULL or a live builder not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_builder_free(builder: *mut gang_inventory_builder) {
    gang_inventory_builder::free(builder);
}

/// Builds an inventory from a cluster JSON document of `len` bytes (UTF-8, need not be
/// NUL-terminated): `{"topology": {"levels": [...]}, "nodes": [...]}`, nodes as in the
/// scenario files. Unknown fields are errors.
///
/// Ownership: `json` is only read during the call. On `GANG_OK`, `*inventory_out` is a
/// new inventory owned by the caller; free it with `gang_inventory_free`. On failure, a
/// new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_SCENARIO` when the document does not parse (the field names
/// the JSON path), otherwise as `gang_inventory_builder_build`; `GANG_NULL_ARGUMENT`
/// (`json` may be NULL only when `len` is 0) or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `json` must be NULL or readable for `len` bytes; `inventory_out` NULL or writable;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_from_json(
    json: *const c_char,
    len: usize,
    inventory_out: *mut *mut gang_inventory,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let text = arg_doc(json, len, "json")?;
        let out = Out::new(inventory_out, "inventory_out")?;
        let inventory = Inventory::from_json(text)?;
        out.write(gang_inventory::into_raw(InventoryInner::new(inventory)));
        Ok(())
    })
}

/// Writes the number of nodes to `*count_out`.
///
/// Ownership: `inventory` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `count_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_node_count(
    inventory: *const gang_inventory,
    count_out: *mut usize,
) -> gang_result {
    ffi_read!(inventory => |inv| { count_out => inv.len() })
}

/// Writes the free amount (capacity − external use − reservations, never below zero)
/// of `resource` on `node`, in milli-units, to `*millis_out`.
///
/// Ownership: `inventory` stays owned by the caller.
///
/// Returns `GANG_NOT_FOUND` when the node or the resource is not in the inventory;
/// `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// the strings NULL or NUL-terminated; `millis_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_available_millis(
    inventory: *const gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    millis_out: *mut u64,
) -> gang_result {
    ffi_boundary!({
        let inv = gang_inventory::get(inventory, "inventory")?;
        let node = arg_str(node, "node")?;
        let resource = arg_str(resource, "resource")?;
        let out = Out::new(millis_out, "millis_out")?;
        match inv.free(node, resource) {
            Some(q) => {
                out.write(q.millis());
                Ok(())
            }
            None if inv.resources().any(|r| r == resource) => {
                Err(Failure::not_found("node", "node", node))
            }
            None => Err(Failure::not_found("resource", "resource", resource)),
        }
    })
}

/// Frees an inventory. `gang_inventory_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `inventory`, and with it the reservations it holds.
/// Compiled gangs, placements, diagnoses and the lifecycle's answers made from it stay
/// valid (they do not borrow it). No other thread may be using it.
/// Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_free(inventory: *mut gang_inventory) {
    gang_inventory::free(inventory);
}
