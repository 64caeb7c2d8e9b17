//! The lifecycle on a live inventory: reserve and release placements, change nodes,
//! replace lost members, spread replicas, admit queues.
//!
//! These functions change the inventory and take a non-`const` `gang_inventory *`: the
//! call needs the inventory to itself (no other call on it, `const` or not, on another
//! thread at the same time). Calls on different inventories are independent.

use std::ffi::c_char;

use gang_core::lifecycle::Spread;
use gang_core::request::QuantitySpec;
use gang_core::{Error, Gang, NodeSpec, ReservationId};

use crate::answers::{
    gang_admissions, gang_replacement, gang_spread_outcome, AdmissionsInner, ReplacementInner,
    SpreadInner,
};
use crate::error::gang_error;
use crate::failure::Failure;
use crate::handle::{Handle, Out};
use crate::inventory::{gang_inventory, gang_node};
use crate::outcome::gang_placement;
use crate::request::gang_gang;
use crate::reservation::{gang_change, gang_reservation, ChangeInner, ReservationInner};
use crate::result::{gang_result, gang_status, parse_admit_mode};
use crate::string::gang_string;
use crate::text::{arg_opt_str, arg_str, arg_strs, Text};

/// Reserves a placement on `inventory`: re-checks every member against the inventory
/// as it is now (capacity, cordons, eligibility; a placement made before nodes were
/// added, removed or relabelled is matched to the current nodes by name) and, if all
/// of it still fits, holds its capacity under a new id written to `*id_out`. All of it
/// or nothing.
///
/// Ownership: `inventory` and `placement` stay owned by the caller; the placement may be
/// freed afterwards (the reservation keeps what it needs). On failure, nothing is
/// written but a new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_CONFLICT` when any part no longer fits (the message names the node
/// and resource, e.g. "conflict: node a1 has 0 nvidia.com/gpu free, the placement needs
/// 4"); the inventory is then unchanged. `GANG_NULL_ARGUMENT` when an argument (other
/// than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `placement` NULL or a live placement; `id_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_reserve(
    inventory: *mut gang_inventory,
    placement: *const gang_placement,
    id_out: *mut u64,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let p = gang_placement::get(placement, "placement")?;
        let out = Out::new(id_out, "id_out")?;
        let id = inv.reserve(&p.placement)?;
        out.write(id.0);
        Ok(())
    })
}

/// Releases reservation `id`: gives back exactly what it holds, and forgets it. (To
/// keep a record of what it held, take a `gang_inventory_reservation` snapshot first.)
///
/// Ownership: `inventory` stays owned by the caller. On failure, a new `gang_error` is
/// stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_RESERVATION` when `id` is not live (never made, or released
/// already): nothing is credited, so releasing twice never gives capacity back twice.
/// `GANG_NULL_ARGUMENT` when `inventory` is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_release(
    inventory: *mut gang_inventory,
    id: u64,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        inv.release(ReservationId(id))?;
        Ok(())
    })
}

/// Takes a snapshot of live reservation `id`: gang, domain, members held, usage per
/// node and resource, members lost and not yet replaced.
///
/// Ownership: `inventory` stays owned by the caller. On `GANG_OK`, `*reservation_out`
/// is a new snapshot owned by the caller: free it with `gang_reservation_free`. It does
/// not borrow the inventory and does not change with it. On failure, a new `gang_error`
/// is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_RESERVATION` when `id` is not live (released, or made by
/// another inventory: the message names both); `GANG_NULL_ARGUMENT` when an argument
/// (other than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `reservation_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_reservation(
    inventory: *const gang_inventory,
    id: u64,
    reservation_out: *mut *mut gang_reservation,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        let out = Out::new(reservation_out, "reservation_out")?;
        let r = inv.live_reservation(ReservationId(id))?;
        out.write(gang_reservation::into_raw(ReservationInner::of(r, inv)));
        Ok(())
    })
}

/// Lists the live reservations: writes how many there are to `*count_out`, and the
/// first `min(capacity, count)` of their ids, in increasing order, to `ids_out[0..]`.
/// Call it with `capacity` 0 (and `ids_out` NULL) to learn the count.
///
/// Ownership: `inventory` stays owned by the caller; `ids_out` is the caller's buffer.
///
/// Returns `GANG_NULL_ARGUMENT` when `inventory` or `count_out` is NULL, or `ids_out`
/// is NULL while `capacity` is not 0.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `ids_out` NULL or writable for `capacity` ids; `count_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_reservation_ids(
    inventory: *const gang_inventory,
    ids_out: *mut u64,
    capacity: usize,
    count_out: *mut usize,
) -> gang_result {
    ffi_boundary!({
        let inv = gang_inventory::get(inventory, "inventory")?;
        if ids_out.is_null() && capacity > 0 {
            return Err(Failure::null("ids_out"));
        }
        let count_out = Out::new(count_out, "count_out")?;
        let mut count = 0usize;
        for r in inv.reservations() {
            if count < capacity {
                // SAFETY: non-NULL (checked) and writable for `capacity` ids (the
                // caller's promise); `count < capacity`.
                ids_out.add(count).write(r.id().0);
            }
            count += 1;
        }
        count_out.write(count);
        Ok(())
    })
}

/// Adds a copy of `node` to the inventory (as `gang_inventory_builder_add_node` then
/// build would). Gangs compiled before still place correctly, but each placement
/// compiles them again on the fly: compile them again for the fast path.
///
/// Ownership: `inventory` and `node` stay owned by the caller (the node is copied). On
/// failure, a new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns the errors of `gang_inventory_builder_build` (`GANG_INVALID_INVENTORY` for a
/// duplicate name or a bad label, `GANG_INVALID_QUANTITY` for a bad amount); the
/// inventory is then unchanged. `GANG_NULL_ARGUMENT` for a NULL argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `node` NULL or a live node not being changed by another thread; `error_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_add_node(
    inventory: *mut gang_inventory,
    node: *const gang_node,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let n = gang_node::get(node, "node")?;
        inv.add_node(n.clone())?;
        Ok(())
    })
}

/// The common shape of `remove_node` and `fail_node`.
unsafe fn lose_node(
    inventory: *mut gang_inventory,
    name: *const c_char,
    change_out: *mut *mut gang_change,
    fail: bool,
) -> Result<(), Failure> {
    let inv = gang_inventory::get_mut(inventory, "inventory")?;
    let name = arg_str(name, "name")?;
    let out = Out::new(change_out, "change_out")?;
    let lost = if fail {
        inv.fail_node(name)?
    } else {
        inv.remove_node(name)?
    };
    out.write(gang_change::into_raw(ChangeInner::lost(lost)));
    Ok(())
}

/// Removes node `name`. Members of reservations on it are lost: each reservation keeps
/// its other members and records the lost ones (see `gang_inventory_replace`). Gangs
/// compiled before are compiled again on the fly, as after `gang_inventory_add_node`.
///
/// Ownership: `inventory` stays owned by the caller; `name` is only read. On `GANG_OK`,
/// `*change_out` is a new report of the members lost (`gang_change_lost_len`,
/// `gang_change_lost_at`), owned by the caller: free it with `gang_change_free`. On
/// failure, a new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name (nothing changes);
/// `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `name` NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_remove_node(
    inventory: *mut gang_inventory,
    name: *const c_char,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, { lose_node(inventory, name, change_out, false) })
}

/// Marks node `name` failed: it is cordoned, and the members of reservations on it are
/// lost (their capacity there is given back). The node stays in the inventory;
/// `gang_inventory_uncordon` makes it schedulable again.
///
/// Ownership: as `gang_inventory_remove_node`: on `GANG_OK`, `*change_out` is a new
/// report of the members lost, owned by the caller (free it with `gang_change_free`).
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name (nothing changes);
/// `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `name` NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_fail_node(
    inventory: *mut gang_inventory,
    name: *const c_char,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, { lose_node(inventory, name, change_out, true) })
}

/// Cordons node `name` (`schedulable = false`) or uncordons it.
unsafe fn set_cordon(
    inventory: *mut gang_inventory,
    name: *const c_char,
    cordon: bool,
) -> Result<(), Failure> {
    let inv = gang_inventory::get_mut(inventory, "inventory")?;
    let name = arg_str(name, "name")?;
    if cordon {
        inv.cordon(name)?;
    } else {
        inv.uncordon(name)?;
    }
    Ok(())
}

/// Cordons node `name`: nothing new is placed on it; reservations there stay.
///
/// Ownership: `inventory` stays owned by the caller; `name` is only read. On failure, a
/// new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name; `GANG_NULL_ARGUMENT` or
/// `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `name` NULL or NUL-terminated; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_cordon(
    inventory: *mut gang_inventory,
    name: *const c_char,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, { set_cordon(inventory, name, true) })
}

/// Makes a cordoned (or failed) node `name` schedulable again.
///
/// Ownership: `inventory` stays owned by the caller; `name` is only read. On failure, a
/// new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name; `GANG_NULL_ARGUMENT` or
/// `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `name` NULL or NUL-terminated; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_uncordon(
    inventory: *mut gang_inventory,
    name: *const c_char,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, { set_cordon(inventory, name, false) })
}

/// Replaces all labels of node `name` with the `n_labels` pairs `keys[i]=values[i]` (a
/// key given twice keeps its last value). Gangs compiled before are compiled again on
/// the fly, as after `gang_inventory_add_node`.
///
/// Ownership: `inventory` stays owned by the caller; the strings are only read. On
/// `GANG_OK`, `*change_out` is a new report of the reservations whose constrained
/// members are no longer inside their domain (`gang_change_displaced_len`,
/// `gang_change_displaced_at`; the library does not move them), owned by the caller:
/// free it with `gang_change_free`. On failure, a new `gang_error` is stored in
/// `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name, `GANG_INVALID_INVENTORY` for
/// an invalid label (the inventory is then unchanged); `GANG_NULL_ARGUMENT` (`keys` and
/// `values` may be NULL only when `n_labels` is 0) or `GANG_INVALID_UTF8` (the field
/// names the array and index, e.g. `values[2]`).
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `name` NULL or NUL-terminated; `keys` and `values` NULL or pointing at `n_labels`
/// pointers, each NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_set_labels(
    inventory: *mut gang_inventory,
    name: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n_labels: usize,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let name = arg_str(name, "name")?;
        let keys = arg_strs(keys, n_labels, "keys")?;
        let values = arg_strs(values, n_labels, "values")?;
        let out = Out::new(change_out, "change_out")?;
        // The node description's own label map (an `IndexMap`, in the order given).
        let mut spec = NodeSpec::new(name);
        for (k, v) in keys.into_iter().zip(values) {
            spec.set_label(k, v);
        }
        let displaced = inv.set_labels(name, spec.get_labels())?;
        out.write(gang_change::into_raw(ChangeInner::displaced(displaced)));
        Ok(())
    })
}

/// The common shape of the four amount setters (the amount is checked after the
/// inventory, node and resource arguments, as the builder setters do).
unsafe fn change_amount(
    inventory: *mut gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    amount: Result<QuantitySpec, Failure>,
    change_out: *mut *mut gang_change,
    capacity: bool,
) -> Result<(), Failure> {
    let inv = gang_inventory::get_mut(inventory, "inventory")?;
    let node = arg_str(node, "node")?;
    let resource = arg_str(resource, "resource")?;
    let amount = amount?;
    let out = Out::new(change_out, "change_out")?;
    let over = if capacity {
        inv.set_capacity(node, resource, amount)?
    } else {
        inv.set_used(node, resource, amount)?
    };
    out.write(gang_change::into_raw(ChangeInner::overcommits(over)));
    Ok(())
}

/// Sets the allocatable capacity of `resource` on `node` to a Kubernetes quantity
/// (`"8"`, `"1.5"`, `"16Gi"`). Applied even when it falls below what is used and
/// reserved there (it is a fact about the node): that is reported as an overcommit, not
/// refused, and free capacity is then zero. A resource no node had before is added.
///
/// Ownership: `inventory` stays owned by the caller; the strings are only read. On
/// `GANG_OK`, `*change_out` is a new report of the overcommitted node, if any
/// (`gang_change_overcommits_len`, `gang_change_overcommit_at`), owned by the caller:
/// free it with `gang_change_free`. On failure, a new `gang_error` is stored in
/// `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name, `GANG_INVALID_QUANTITY` for a
/// malformed quantity (field `nodes[<node>].capacity.<resource>`), `GANG_INVALID_INVENTORY`
/// for a malformed new resource name; the inventory is then unchanged.
/// `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// the strings NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_set_capacity(
    inventory: *mut gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    quantity: *const c_char,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let amount = amount_arg!(text quantity);
        change_amount(inventory, node, resource, amount, change_out, true)
    })
}

/// Sets the allocatable capacity of `resource` on `node` to `millis` milli-units (8
/// GPUs is 8000). Otherwise as `gang_inventory_set_capacity`.
///
/// Ownership: as `gang_inventory_set_capacity`: on `GANG_OK`, `*change_out` is a new
/// report owned by the caller (free it with `gang_change_free`).
///
/// Returns `GANG_UNKNOWN_NODE`, `GANG_INVALID_INVENTORY` (a malformed new resource
/// name), `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// the strings NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_set_capacity_millis(
    inventory: *mut gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    millis: u64,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let amount = amount_arg!(millis millis);
        change_amount(inventory, node, resource, amount, change_out, true)
    })
}

/// Sets how much of `resource` is used on `node` by workloads the library did not place
/// (other pods), as a Kubernetes quantity. Reports overcommitment like
/// `gang_inventory_set_capacity`.
///
/// Ownership: as `gang_inventory_set_capacity`: on `GANG_OK`, `*change_out` is a new
/// report owned by the caller (free it with `gang_change_free`).
///
/// Returns `GANG_UNKNOWN_NODE`, `GANG_INVALID_QUANTITY` (field
/// `nodes[<node>].used.<resource>`), `GANG_INVALID_INVENTORY` (a malformed new resource
/// name), `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8`; on error the inventory is
/// unchanged.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// the strings NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_set_used(
    inventory: *mut gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    quantity: *const c_char,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let amount = amount_arg!(text quantity);
        change_amount(inventory, node, resource, amount, change_out, false)
    })
}

/// Sets how much of `resource` is used on `node` outside the library, in milli-units.
/// Otherwise as `gang_inventory_set_used`.
///
/// Ownership: as `gang_inventory_set_capacity`: on `GANG_OK`, `*change_out` is a new
/// report owned by the caller (free it with `gang_change_free`).
///
/// Returns `GANG_UNKNOWN_NODE`, `GANG_INVALID_INVENTORY` (a malformed new resource
/// name), `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// the strings NULL or NUL-terminated; `change_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_set_used_millis(
    inventory: *mut gang_inventory,
    node: *const c_char,
    resource: *const c_char,
    millis: u64,
    change_out: *mut *mut gang_change,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let amount = amount_arg!(millis millis);
        change_amount(inventory, node, resource, amount, change_out, false)
    })
}

/// Places the members reservation `id` lost (with `gang_inventory_remove_node` or
/// `gang_inventory_fail_node`) inside the gang's original domain at its required level
/// — with slices, inside each lost member's slice domain — and nowhere else.
///
/// On `GANG_OK`, writes the status to `*status_out` and a new `gang_replacement` to
/// `*replacement_out`: `GANG_STATUS_PLACED` (the reservation now holds the members
/// added, `gang_replacement_added_at`; also when nothing was lost) or
/// `GANG_STATUS_PENDING` (that domain has no room now, even if others do; nothing was
/// applied and the members stay lost; `gang_replacement_text` says which domain binds
/// the gang and what it lacks). Pending is an ordinary answer, not an error.
///
/// Ownership: `inventory` stays owned by the caller. The new replacement is owned by
/// the caller: free it with `gang_replacement_free`. On failure, nothing is written but
/// a new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_RESERVATION` when `id` is not live (released, or made by
/// another inventory: the message names both); `GANG_NULL_ARGUMENT` when an argument
/// (other than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_replace(
    inventory: *mut gang_inventory,
    id: u64,
    status_out: *mut gang_status,
    replacement_out: *mut *mut gang_replacement,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let status_out = Out::new(status_out, "status_out")?;
        let out = Out::new(replacement_out, "replacement_out")?;
        let id = ReservationId(id);
        // An id of another inventory is reported as such (naming both) before replacing.
        inv.live_reservation(id)?;
        let r = ReplacementInner::new(inv.replace(id)?);
        status_out.write(r.status());
        out.write(gang_replacement::into_raw(r));
        Ok(())
    })
}

/// Places and reserves `replicas` replicas of `gang`, each satisfying the gang's own
/// topology constraint, in pairwise distinct domains of `level` (only constrained roles
/// are spread): all of them, or at least `min_replicas` (0: all), or nothing. With
/// `within` (NULL: none), every replica sits inside one domain of that level; every
/// such domain is tried and the one holding the most replicas wins. Replicas are placed
/// one at a time by the exact solver (not an exact search over all combinations).
///
/// On `GANG_OK`, writes the status to `*status_out` — `GANG_STATUS_PLACED` (each replica
/// reserved under its own id: `gang_spread_outcome_reservation_at`) or
/// `GANG_STATUS_UNSCHEDULABLE` (fewer than required fit; nothing is held) — and a new
/// `gang_spread_outcome` to `*spread_out`.
///
/// Ownership: `inventory` and `gang` stay owned by the caller (the gang is copied); the
/// strings are only read. The new outcome is owned by the caller: free it with
/// `gang_spread_outcome_free` (the replicas stay reserved). On failure, nothing is
/// written but a new `gang_error` in `*error_out` if `error_out` is not NULL, and the
/// inventory is unchanged.
///
/// Returns `GANG_INVALID_REQUEST` (no replicas, `min_replicas` above `replicas`, a level
/// that is not a topology level, an invalid gang), `GANG_CONTRADICTORY` when `within` is
/// at or inside `level` while two or more replicas are required (they could never be
/// apart), `GANG_INVALID_QUANTITY`; `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a
/// bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `gang` NULL or a live gang not being changed by another thread; `level` NULL or
/// NUL-terminated; `within` NULL or NUL-terminated; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_spread(
    inventory: *mut gang_inventory,
    gang: *const gang_gang,
    replicas: u32,
    min_replicas: u32,
    level: *const c_char,
    within: *const c_char,
    status_out: *mut gang_status,
    spread_out: *mut *mut gang_spread_outcome,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let g = gang_gang::get(gang, "gang")?;
        let level = arg_str(level, "level")?;
        let within = arg_opt_str(within, "within")?;
        let status_out = Out::new(status_out, "status_out")?;
        let out = Out::new(spread_out, "spread_out")?;
        let mut spread = Spread::new(g.clone(), replicas, level);
        if min_replicas != 0 {
            spread = spread.min_replicas(min_replicas);
        }
        if let Some(w) = within {
            spread = spread.within(w);
        }
        let needed = spread.get_min_replicas().unwrap_or(spread.get_replicas());
        let s = SpreadInner::new(inv.spread(&spread)?, needed);
        status_out.write(s.status());
        out.write(gang_spread_outcome::into_raw(s));
        Ok(())
    })
}

/// Admits a queue of `n_queue` gangs in order: each is placed whole and reserved, or
/// waits holding nothing — no gang ever holds part of its members. `mode` is
/// `GANG_ADMIT_FIFO` (the first gang that waits blocks every later one) or
/// `GANG_ADMIT_BACKFILL` (a later gang may go ahead, but only on nodes where no role of
/// the waiting head fits a member now). Every gang is validated before anything is
/// placed, so an invalid queue changes nothing.
///
/// Ownership: `inventory` and the gangs stay owned by the caller (they are copied). On
/// `GANG_OK`, `*admissions_out` is a new `gang_admissions` (one entry per gang, in queue
/// order) owned by the caller: free it with `gang_admissions_free` (placed gangs stay
/// reserved). On failure, nothing is written but a new `gang_error` in `*error_out` if
/// `error_out` is not NULL.
///
/// Returns the errors of `gang_inventory_compile` for the first invalid gang;
/// `GANG_INVALID_ARGUMENT` for another `mode`; `GANG_NULL_ARGUMENT` (`queue` may be
/// NULL only when `n_queue` is 0; field `queue[i]` for a NULL gang).
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `queue` NULL or pointing at `n_queue` pointers, each NULL or a live gang not being
/// changed by another thread; `admissions_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_admit(
    inventory: *mut gang_inventory,
    queue: *const *const gang_gang,
    n_queue: usize,
    mode: u32,
    admissions_out: *mut *mut gang_admissions,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let gangs: Vec<Gang> = if n_queue == 0 {
            Vec::new()
        } else if queue.is_null() {
            return Err(Failure::null("queue"));
        } else {
            std::slice::from_raw_parts(queue, n_queue)
                .iter()
                .enumerate()
                .map(|(i, &g)| {
                    gang_gang::get(g, "queue")
                        .cloned()
                        .map_err(|f| f.at_index(i))
                })
                .collect::<Result<_, _>>()?
        };
        let mode = parse_admit_mode(mode).ok_or_else(|| {
            Failure::invalid_argument("mode", mode, "GANG_ADMIT_FIFO or GANG_ADMIT_BACKFILL")
        })?;
        let out = Out::new(admissions_out, "admissions_out")?;
        let admitted = inv.admit(&gangs, mode)?;
        let items = gangs
            .into_iter()
            .map(|g| g.get_name().to_owned())
            .zip(admitted)
            .collect();
        out.write(gang_admissions::into_raw(AdmissionsInner::new(items)));
        Ok(())
    })
}

/// Describes node `name` as it stands now, as a JSON document (the node format of the
/// scenario files: `{"name", "labels", "capacity", "used", "taints", "schedulable"}`,
/// amounts exact), in a new string written to `*json_out`.
///
/// Ownership: `inventory` stays owned by the caller; `name` is only read. The new
/// string is owned by the caller: read it with `gang_string_view`, free it with
/// `gang_string_free`. On failure, a new `gang_error` is stored in `*error_out` if
/// `error_out` is not NULL.
///
/// Returns `GANG_UNKNOWN_NODE` when no node has this name; `GANG_NULL_ARGUMENT` or
/// `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `name` NULL or NUL-terminated; `json_out` and `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_node_json(
    inventory: *const gang_inventory,
    name: *const c_char,
    json_out: *mut *mut gang_string,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        let name = arg_str(name, "name")?;
        let out = Out::new(json_out, "json_out")?;
        let spec = inv.node_spec(name).ok_or_else(|| Error::UnknownNode {
            name: name.to_owned(),
        })?;
        let json = serde_json::to_string(&spec)
            .map_err(|e| Failure::internal(&format!("node {name} as JSON: {e}")))?;
        out.write(gang_string::into_raw(Text::new(json)));
        Ok(())
    })
}

/// Checks the inventory's internal invariants (per-domain summaries, free = capacity −
/// used − reserved, reserved = the sum of live reservations, no partial reservation).
/// For tests and fuzzing: it walks the whole inventory.
///
/// Ownership: `inventory` stays owned by the caller. On failure, a new `gang_error` is
/// stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INTERNAL_ERROR` (a bug; the message names the first broken invariant),
/// `GANG_NULL_ARGUMENT` when `inventory` is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_validate(
    inventory: *const gang_inventory,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        inv.validate()
            .map_err(|e| Failure::internal(&format!("inventory invariant broken: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answers::gang_replacement_json;
    use crate::error::{gang_error_free, gang_error_json};
    use crate::inventory::gang_inventory_free;
    use crate::outcome::gang_placement_free;
    use crate::request::gang_gang_free;
    use crate::reservation::{gang_change_free, gang_change_json};
    use crate::solve::gang_inventory_place;
    use crate::text::gang_str;
    use gang_core::lifecycle::Replacement;
    use gang_core::Inventory;
    use std::ptr;

    const CLUSTER: &str = r#"{"topology": {"levels": ["rack"]}, "nodes": [
        {"name": "a1", "labels": {"rack": "a"}, "capacity": {"gpu": 2}},
        {"name": "a2", "labels": {"rack": "a"}, "capacity": {"gpu": 2}},
        {"name": "b1", "labels": {"rack": "b"}, "capacity": {"gpu": 4}}]}"#;
    // At most two per node, so that rack b (one node) cannot hold the gang: it lands in
    // rack a, where losing a node leaves no room.
    const GANG: &str = r#"{"name": "g", "roles": [{"name": "w", "count": 4,
        "requests": {"gpu": 1}, "max_per_node": 2}], "topology": {"required": "rack"}}"#;

    unsafe fn text(v: gang_str) -> String {
        let b = std::slice::from_raw_parts(v.data.cast::<u8>(), v.len);
        String::from_utf8(b.to_vec()).unwrap()
    }

    /// The same operations straight through the core and through the ABI give the same
    /// answers, byte for byte where there is a document.
    #[test]
    fn the_abi_agrees_with_the_core() {
        let mut core = Inventory::from_json(CLUSTER).unwrap();
        let gang = gang_core::Gang::from_json(GANG).unwrap();
        let placed = core.place(&gang).unwrap();
        let id = core.reserve(placed.placement().unwrap()).unwrap();
        let mut lost = core.remove_node("a1").unwrap();
        let Replacement::Pending(mut pending) = core.replace(id).unwrap() else {
            panic!("rack a has no room left");
        };
        let next = ReservationId::new(id.inventory(), id.serial() + 1);
        assert_eq!(
            core.release(next).unwrap_err(),
            Error::UnknownReservation { id: next }
        );

        unsafe {
            let mut inv = ptr::null_mut();
            crate::inventory::gang_inventory_from_json(
                CLUSTER.as_ptr().cast(),
                CLUSTER.len(),
                &mut inv,
                ptr::null_mut(),
            );
            let mut g = ptr::null_mut();
            crate::request::gang_gang_from_json(
                GANG.as_ptr().cast(),
                GANG.len(),
                &mut g,
                ptr::null_mut(),
            );
            let (mut status, mut p, mut d) = (
                gang_status::GANG_STATUS_PLACED,
                ptr::null_mut(),
                ptr::null_mut(),
            );
            let rc = gang_inventory_place(inv, g, &mut status, &mut p, &mut d, ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_OK);
            let mut rid = u64::MAX;
            assert_eq!(
                gang_inventory_reserve(inv, p, &mut rid, ptr::null_mut()),
                gang_result::GANG_OK
            );
            // The same serial, in the ABI's own inventory.
            let rid_core = ReservationId(rid);
            assert_eq!(rid_core.serial(), id.serial());
            assert_ne!(rid_core.inventory(), id.inventory());
            for l in &mut lost {
                l.reservation = rid_core;
            }
            pending.reservation = rid_core;
            let unknown = Error::UnknownReservation {
                id: ReservationId::new(rid_core.inventory(), rid_core.serial() + 1),
            };

            let mut change = ptr::null_mut();
            let rc = gang_inventory_remove_node(inv, c"a1".as_ptr(), &mut change, ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_OK);
            let mut json = gang_str::of("");
            gang_change_json(change, &mut json);
            let want = serde_json::json!({"lost": lost, "overcommitted": [], "displaced": []});
            assert_eq!(text(json), want.to_string());
            gang_change_free(change);

            let mut rep = ptr::null_mut();
            let rc = gang_inventory_replace(inv, rid, &mut status, &mut rep, ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_OK);
            assert_eq!(status, gang_status::GANG_STATUS_PENDING);
            gang_replacement_json(rep, &mut json);
            let doc: serde_json::Value = serde_json::from_str(&text(json)).unwrap();
            assert_eq!(doc["message"], pending.to_string());
            assert_eq!(doc["pending"], serde_json::to_value(&pending).unwrap());
            crate::answers::gang_replacement_free(rep);

            let mut err = ptr::null_mut();
            let rc = gang_inventory_release(inv, rid + 1, &mut err);
            assert_eq!(rc, gang_result::GANG_UNKNOWN_RESERVATION);
            gang_error_json(err, &mut json);
            assert_eq!(text(json), unknown.to_json());
            gang_error_free(err);

            // Released once: credited; twice: an error, nothing credited.
            assert_eq!(
                gang_inventory_release(inv, rid, ptr::null_mut()),
                gang_result::GANG_OK
            );
            let rc = gang_inventory_release(inv, rid, ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_UNKNOWN_RESERVATION);
            assert_eq!(
                gang_inventory_validate(inv, ptr::null_mut()),
                gang_result::GANG_OK
            );
            let mut count = 9;
            gang_inventory_reservation_ids(inv, ptr::null_mut(), 0, &mut count);
            assert_eq!(count, 0);

            gang_placement_free(p);
            gang_gang_free(g);
            gang_inventory_free(inv);
        }
    }

    /// Out-parameters are checked before anything changes: a NULL one leaves the
    /// inventory as it was.
    #[test]
    fn a_null_out_parameter_changes_nothing() {
        unsafe {
            let mut inv = ptr::null_mut();
            crate::inventory::gang_inventory_from_json(
                CLUSTER.as_ptr().cast(),
                CLUSTER.len(),
                &mut inv,
                ptr::null_mut(),
            );
            let rc =
                gang_inventory_remove_node(inv, c"a1".as_ptr(), ptr::null_mut(), ptr::null_mut());
            assert_eq!(rc, gang_result::GANG_NULL_ARGUMENT);
            let rc = gang_inventory_set_capacity(
                inv,
                c"a1".as_ptr(),
                c"gpu".as_ptr(),
                c"1".as_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            );
            assert_eq!(rc, gang_result::GANG_NULL_ARGUMENT);
            let mut millis = 0;
            crate::inventory::gang_inventory_available_millis(
                inv,
                c"a1".as_ptr(),
                c"gpu".as_ptr(),
                &mut millis,
            );
            assert_eq!(millis, 2000);
            let mut count = 0;
            crate::inventory::gang_inventory_node_count(inv, &mut count);
            assert_eq!(count, 3);
            gang_inventory_free(inv);
        }
    }
}
