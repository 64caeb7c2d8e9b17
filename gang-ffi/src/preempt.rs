//! Preemption (issue 22): what it would take for a gang to fit — the running work to
//! evict, chosen exactly by gang-core — and evict-and-reserve in one step; the options
//! that weigh the work lost; evictable units declared on a live inventory.

use std::ffi::c_char;

use gang_core::lifecycle::{PreemptOptions, PreemptOutcome, PreemptSolver, VictimId};
use gang_core::{EvictableUnit, Quantity, ReservationId};

use crate::error::gang_error;
use crate::failure::Failure;
use crate::handle::{Handle, Kind, Out};
use crate::inventory::gang_inventory;
use crate::request::gang_gang;
use crate::result::{gang_result, gang_status};
use crate::string::gang_string;
use crate::text::{arg_opt_str, arg_str, arg_strs, Text};

/// How `gang_inventory_preempt_with` weighs the work its victims lose, and how much
/// work its search may do: gang-core's `PreemptOptions`. The objective's second key —
/// after the highest victim priority — is the work lost: first the sum of the costs
/// the caller gave the victims (`gang_preempt_options_set_reservation_cost`,
/// `_set_unit_cost`; work given none costs 0), then the amounts evicted of each cost
/// resource in order (`gang_preempt_options_set_cost_resources`; `nvidia.com/gpu` by
/// default), compared lexicographically; then the fewest victims.
///
/// Made by `gang_preempt_options_new` (the defaults); freed with
/// `gang_preempt_options_free`. The setters change it (one thread at a time); queries
/// only read it, and any number of threads may pass one options object to queries at
/// once.
pub struct gang_preempt_options {
    _private: [u8; 0],
}

unsafe impl Handle for gang_preempt_options {
    type Inner = PreemptOptions;
    const KIND: Kind = Kind::PreemptOptions;
}

/// Makes preemption options with the defaults: GPUs (`nvidia.com/gpu`) measure the
/// work lost, no given costs, and `GANG_DEFAULT_WORK` work units for the victim search.
///
/// Ownership: on `GANG_OK`, `*options_out` is new options owned by the caller; free
/// them with `gang_preempt_options_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when `options_out` is NULL.
///
/// # Safety
/// `options_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_new(
    options_out: *mut *mut gang_preempt_options,
) -> gang_result {
    ffi_boundary!({
        let out = Out::new(options_out, "options_out")?;
        out.write(gang_preempt_options::into_raw(PreemptOptions::default()));
        Ok(())
    })
}

/// Sets the resources whose evicted amounts measure the work lost, most important first
/// (`resources[0]` is compared first), replacing the list (the default is
/// `nvidia.com/gpu` alone). `n_resources` may be 0: then only the given costs, and
/// after them the number of victims, weigh a plan.
///
/// Ownership: `options` stays owned by the caller; the strings are copied. On failure,
/// a new `gang_error` is stored in `*error_out` if `error_out` is not NULL, and the
/// options are unchanged.
///
/// Returns `GANG_NULL_ARGUMENT` when `options` is NULL, when `resources` is NULL and
/// `n_resources` is not 0, or for a NULL string (field `resources[i]`);
/// `GANG_INVALID_UTF8` for a string that is not UTF-8.
///
/// # Safety
/// `options` must be NULL or live options no other thread uses during the call;
/// `resources` NULL or `n_resources` readable pointers to NUL-terminated strings;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_set_cost_resources(
    options: *mut gang_preempt_options,
    resources: *const *const c_char,
    n_resources: usize,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let o = gang_preempt_options::get_mut(options, "options")?;
        let names = arg_strs(resources, n_resources, "resources")?;
        *o = std::mem::take(o).cost_resources(names);
        Ok(())
    })
}

/// Gives live reservation `reservation` (its id, as `gang_inventory_reserve` wrote it)
/// a cost: what evicting it loses, e.g. its GPUs times the seconds since its last
/// checkpoint. Given costs are summed over a plan's victims and compared before the
/// evicted amounts. Setting it again replaces it; an id that names no running
/// reservation of the inventory asked is ignored there.
///
/// Ownership: `options` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `options` is NULL.
///
/// # Safety
/// `options` must be NULL or live options no other thread uses during the call;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_set_reservation_cost(
    options: *mut gang_preempt_options,
    reservation: u64,
    cost: u64,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let o = gang_preempt_options::get_mut(options, "options")?;
        let id = VictimId::Reservation(ReservationId(reservation));
        *o = std::mem::take(o).cost(id, cost);
        Ok(())
    })
}

/// Gives evictable unit `unit` (its id, as `gang_inventory_add_evictable` declared it)
/// a cost, as `gang_preempt_options_set_reservation_cost` does for a reservation.
///
/// Ownership: `options` stays owned by the caller; `unit` is copied. On failure, a new
/// `gang_error` is stored in `*error_out` if `error_out` is not NULL, and the options
/// are unchanged.
///
/// Returns `GANG_NULL_ARGUMENT` when `options` or `unit` is NULL; `GANG_INVALID_UTF8`
/// when `unit` is not UTF-8.
///
/// # Safety
/// `options` must be NULL or live options no other thread uses during the call; `unit`
/// NULL or NUL-terminated; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_set_unit_cost(
    options: *mut gang_preempt_options,
    unit: *const c_char,
    cost: u64,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let o = gang_preempt_options::get_mut(options, "options")?;
        let id = VictimId::Unit(arg_str(unit, "unit")?.to_owned());
        *o = std::mem::take(o).cost(id, cost);
        Ok(())
    })
}

/// Sets the work units one query may spend on its victim search (a branch is one unit,
/// a question to the solver 32; `GANG_DEFAULT_WORK` by default). A plan found when
/// they ran out is valid but not proven least: its JSON document says
/// `"search_complete": false`; no plan found then is `GANG_STATUS_UNDECIDED`, never a
/// false "nothing helps".
///
/// Ownership: `options` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `options` is NULL.
///
/// # Safety
/// `options` must be NULL or live options no other thread uses during the call;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_set_max_work(
    options: *mut gang_preempt_options,
    work: u64,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let o = gang_preempt_options::get_mut(options, "options")?;
        *o = std::mem::take(o).max_work(work);
        Ok(())
    })
}

/// Frees preemption options. `gang_preempt_options_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `options`. Freeing them twice is undefined behaviour:
/// set your pointer to NULL.
///
/// # Safety
/// `options` must be NULL or live options not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_preempt_options_free(options: *mut gang_preempt_options) {
    gang_preempt_options::free(options);
}

/// Says what it would take for `gang` to fit on `inventory` (issue 22): the placement
/// if it fits now, otherwise the running work to evict — whole reservations of strictly
/// lower priority that are not `"preemption_policy": "Never"`, and evictable units of
/// strictly lower priority — and the placement it gets once they are gone, chosen
/// exactly (the README's "Preemption": lowest highest victim priority, then fewest
/// GPUs evicted, then fewest victims, then the placement objective). Nothing changes.
///
/// Repeated queries on one inventory are cheap: the inventory keeps the candidate
/// victims (what each running reservation and evictable unit holds, per domain) from
/// one query to the next and brings them up to date from what changed since; the
/// answer is the one a fresh inventory of the same document gives. A query made while
/// another thread's query on the same inventory holds them uses candidates of its own
/// (the same answer).
///
/// On `GANG_OK`, writes the status to `*status_out` (`GANG_STATUS_PLACED`: a plan, with
/// no victims when the gang fits now; `GANG_STATUS_UNSCHEDULABLE`: no eviction of
/// lower-priority work makes it fit; `GANG_STATUS_UNDECIDED`: the search ran out first)
/// and the answer as a JSON document to a new string in `*json_out`: `{"status":
/// "placed", "message" (the plan in words), "victims": [{"id": {"kind", "id"}, "name",
/// "priority", "evicted", "cost"}…], "cost", "search_complete", "placement": {…}}`, or
/// the unschedulable / undecided document with its `"message"` and `"diagnosis"`.
///
/// Ownership: `inventory` and `gang` stay owned by the caller. The new string is owned
/// by the caller: free it with `gang_string_free`. On failure, nothing is written but a
/// new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// Returns errors as `gang_inventory_compile`; `GANG_NULL_ARGUMENT` when an argument
/// (other than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `gang` NULL or a live gang not being changed by another thread; the out-pointers NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_preempt(
    inventory: *const gang_inventory,
    gang: *const gang_gang,
    status_out: *mut gang_status,
    json_out: *mut *mut gang_string,
    error_out: *mut *mut gang_error,
) -> gang_result {
    gang_inventory_preempt_with(
        inventory,
        gang,
        std::ptr::null(),
        status_out,
        json_out,
        error_out,
    )
}

/// `gang_inventory_preempt` with `options` weighing the work lost and bounding the
/// search (`gang_preempt_options`); NULL `options` are the defaults (exactly
/// `gang_inventory_preempt`). Writes what `gang_inventory_preempt` writes.
///
/// Ownership: `inventory`, `gang` and `options` stay owned by the caller. The new
/// string is owned by the caller: free it with `gang_string_free`. On failure, nothing
/// is written but a new `gang_error` in `*error_out` if `error_out` is not NULL.
///
/// Returns errors as `gang_inventory_compile`; `GANG_NULL_ARGUMENT` when an argument
/// (other than `options` and `error_out`) is NULL; `GANG_INVALID_HANDLE` when `options`
/// is not NULL and not live options.
///
/// # Safety
/// As `gang_inventory_preempt`; `options` NULL or live options not being changed by
/// another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_preempt_with(
    inventory: *const gang_inventory,
    gang: *const gang_gang,
    options: *const gang_preempt_options,
    status_out: *mut gang_status,
    json_out: *mut *mut gang_string,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        let g = gang_gang::get(gang, "gang")?;
        let defaults;
        let options = if options.is_null() {
            defaults = PreemptOptions::default();
            &defaults
        } else {
            gang_preempt_options::get(options, "options")?
        };
        let status = Out::new(status_out, "status_out")?;
        let out = Out::new(json_out, "json_out")?;
        // The kept solver: `inv.preempt_with(…, options)`'s answer, its candidates kept
        // from the last query on this inventory.
        let compiled = inv.compile(g)?;
        let answer = match inv.kept() {
            Some(mut kept) => kept.preempt(inv, &compiled, options)?,
            None => PreemptSolver::new().preempt(inv, &compiled, options)?,
        };
        status.write(preempt_status(&answer));
        out.write(gang_string::into_raw(Text::new(answer.to_json())));
        Ok(())
    })
}

/// `gang_inventory_preempt_reserve` with `options` (NULL: the defaults), as
/// `gang_inventory_preempt_with` takes them. Writes what
/// `gang_inventory_preempt_reserve` writes.
///
/// Ownership: as `gang_inventory_preempt_reserve`; `options` stays owned by the caller.
///
/// Returns errors as `gang_inventory_preempt_reserve`, and `GANG_INVALID_HANDLE` when
/// `options` is not NULL and not live options.
///
/// # Safety
/// As `gang_inventory_preempt_reserve`; `options` NULL or live options not being
/// changed by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_preempt_reserve_with(
    inventory: *mut gang_inventory,
    gang: *const gang_gang,
    options: *const gang_preempt_options,
    status_out: *mut gang_status,
    id_out: *mut u64,
    json_out: *mut *mut gang_string,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let g = gang_gang::get(gang, "gang")?;
        let defaults;
        let options = if options.is_null() {
            defaults = PreemptOptions::default();
            &defaults
        } else {
            gang_preempt_options::get(options, "options")?
        };
        let status = Out::new(status_out, "status_out")?;
        let id = Out::new(id_out, "id_out")?;
        let out = Out::new(json_out, "json_out")?;
        let (inv, kept) = inv.with_kept();
        let compiled = inv.compile(g)?;
        let answer = kept.preempt(inv, &compiled, options)?;
        let reserved = match answer.preemption() {
            Some(plan) => inv.preempt_reserve(plan)?.reservation.0,
            None => 0,
        };
        status.write(preempt_status(&answer));
        id.write(reserved);
        out.write(gang_string::into_raw(Text::new(answer.to_json())));
        Ok(())
    })
}

/// Like `gang_inventory_preempt`, then applies the plan in one all-or-nothing step:
/// evicts its victims (reservations released whole, evictable units withdrawn) and
/// reserves the gang, writing the new reservation's id to `*id_out` (0 when the status
/// is not `GANG_STATUS_PLACED`: then nothing changed). `*json_out` is the plan as
/// `gang_inventory_preempt` writes it.
///
/// Ownership: as `gang_inventory_preempt`.
///
/// Returns errors as `gang_inventory_compile`, and `GANG_CONFLICT` if the plan cannot
/// be applied (the inventory is then unchanged); `GANG_NULL_ARGUMENT` when an argument
/// (other than `error_out`) is NULL.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `gang` NULL or a live gang; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_preempt_reserve(
    inventory: *mut gang_inventory,
    gang: *const gang_gang,
    status_out: *mut gang_status,
    id_out: *mut u64,
    json_out: *mut *mut gang_string,
    error_out: *mut *mut gang_error,
) -> gang_result {
    gang_inventory_preempt_reserve_with(
        inventory,
        gang,
        std::ptr::null(),
        status_out,
        id_out,
        json_out,
        error_out,
    )
}

/// One amount of an evictable unit (`gang_inventory_add_evictable`): how much of
/// `resource` it uses on `node` — the Kubernetes quantity `quantity` (`"2"`, `"16Gi"`,
/// `"500m"`) or, when `quantity` is NULL, `millis` milli-units. The strings are
/// NUL-terminated UTF-8, only read during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gang_evictable_amount {
    /// The node's name.
    pub node: *const c_char,
    /// The resource's name.
    pub resource: *const c_char,
    /// The amount as a quantity, or NULL to use `millis`.
    pub quantity: *const c_char,
    /// The amount in milli-units (`1000` is one GPU, one pod or one byte), used when
    /// `quantity` is NULL.
    pub millis: u64,
}

/// Declares an evictable unit on `inventory` (issue 22): running work gang did not
/// reserve — the pods of another workload, say — with an `id` unique among the units,
/// a `priority` (higher wins) and the `n_amounts` amounts it uses (`amounts[i]`: a
/// node, a resource, milli-units; a node given twice for one resource keeps the last
/// amount). From now on they count as used on their nodes, on top of each node's
/// `used`, exactly as a reservation's do; `gang_inventory_preempt` may evict the unit,
/// whole, for a gang of strictly higher priority. Amounts of a resource no node has
/// are ignored. All of it or nothing.
///
/// Ownership: `inventory` stays owned by the caller; `id` and the amounts' strings are
/// only read (copied). On failure, a new `gang_error` is stored in `*error_out` if
/// `error_out` is not NULL, and the inventory is unchanged.
///
/// Returns `GANG_INVALID_INVENTORY` for an empty `id` or one already declared (field
/// `evictable[id].id`); `GANG_UNKNOWN_NODE` for a node the inventory does not have;
/// `GANG_NULL_ARGUMENT` when `inventory` or `id` is NULL, when `amounts` is NULL and
/// `n_amounts` is not 0, or for a NULL string in `amounts[i]` (field `amounts[i]`);
/// `GANG_INVALID_UTF8` for a string that is not UTF-8; `GANG_INVALID_QUANTITY` for a
/// bad quantity (field `evictable[id].nodes[node].resource`).
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `id` NULL or NUL-terminated; `amounts` NULL or `n_amounts` readable elements whose
/// strings are NULL or NUL-terminated; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_add_evictable(
    inventory: *mut gang_inventory,
    id: *const c_char,
    priority: i32,
    amounts: *const gang_evictable_amount,
    n_amounts: usize,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let id = arg_str(id, "id")?;
        let amounts = if n_amounts == 0 {
            &[][..]
        } else if amounts.is_null() {
            return Err(Failure::null("amounts"));
        } else {
            std::slice::from_raw_parts(amounts, n_amounts)
        };
        let mut unit = EvictableUnit::new(id, priority);
        for (i, a) in amounts.iter().enumerate() {
            let node = arg_str(a.node, "amounts").map_err(|f| f.at_index(i))?;
            let resource = arg_str(a.resource, "amounts").map_err(|f| f.at_index(i))?;
            unit = match arg_opt_str(a.quantity, "amounts").map_err(|f| f.at_index(i))? {
                Some(q) => unit.amount(node, resource, q),
                None => unit.amount(node, resource, Quantity::from_millis(a.millis)),
            };
        }
        inv.add_evictable(unit)?;
        Ok(())
    })
}

/// Withdraws evictable unit `id` (it finished, or the caller evicted it), giving back
/// what it used.
///
/// Ownership: `inventory` stays owned by the caller; `id` is only read. On failure, a
/// new `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_INVENTORY` when no unit has this id (field `evictable[id]`;
/// nothing changes); `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory no other thread uses during the call;
/// `id` NULL or NUL-terminated; `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_remove_evictable(
    inventory: *mut gang_inventory,
    id: *const c_char,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get_mut(inventory, "inventory")?;
        let id = arg_str(id, "id")?;
        inv.remove_evictable(id)?;
        Ok(())
    })
}

fn preempt_status(answer: &PreemptOutcome) -> gang_status {
    match answer {
        PreemptOutcome::Placed(_) => gang_status::GANG_STATUS_PLACED,
        PreemptOutcome::Undecided(_) => gang_status::GANG_STATUS_UNDECIDED,
        _ => gang_status::GANG_STATUS_UNSCHEDULABLE,
    }
}
