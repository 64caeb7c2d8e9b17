//! Roles, gangs, and gangs compiled against an inventory.

use std::ffi::c_char;

use gang_core::request::Requirement;
use gang_core::{CompiledGang, Gang, Role, Toleration};

use crate::error::gang_error;
use crate::failure::Failure;
use crate::handle::{Handle, Kind, Out};
use crate::inventory::gang_inventory;
use crate::result::{
    gang_result, parse_policy, parse_selector_operator, parse_toleration_effect,
    parse_toleration_operator,
};
use crate::text::{arg_doc, arg_opt_str, arg_str, arg_strs};

/// One role of a gang: a count of members with one per-member shape, node selector,
/// tolerations, `min_count`, `max_per_node`, and whether it is bound by the gang's
/// topology constraint.
///
/// Made by `gang_role_new`; filled by the `gang_role_*` setters; copied into a gang by
/// `gang_gang_add_role`; freed with `gang_role_free`. One thread at a time. Setters do
/// not validate: the gang is validated when compiled or placed.
pub struct gang_role {
    _private: [u8; 0],
}

unsafe impl Handle for gang_role {
    type Inner = Role;
    const KIND: Kind = Kind::Role;
}

/// A gang request: roles, topology constraint (`required`, `preferred`, slices) and
/// policy.
///
/// Made by `gang_gang_new`, `gang_gang_from_json` or `gang_scenario_gang`; freed with
/// `gang_gang_free`. One thread at a time while being changed; once complete it is only
/// read (by `gang_inventory_compile`, `gang_inventory_place`).
pub struct gang_gang {
    _private: [u8; 0],
}

unsafe impl Handle for gang_gang {
    type Inner = Gang;
    const KIND: Kind = Kind::Gang;
}

/// A gang validated and compiled against one inventory: the hot path places it again
/// and again with a `gang_solver`.
///
/// Made by `gang_inventory_compile`; freed with `gang_compiled_free`. Immutable: may be
/// used from many threads at once. It does not borrow the inventory or the gang (free
/// them in any order). Placing it on another inventory, or on one whose nodes changed
/// since, compiles it again on the fly (the slow path).
pub struct gang_compiled {
    _private: [u8; 0],
}

unsafe impl Handle for gang_compiled {
    type Inner = CompiledGang;
    const KIND: Kind = Kind::Compiled;
}

/// Makes a role named `name` of `count` members (constrained, no requests).
///
/// Ownership: on `GANG_OK`, `*role_out` is a new role owned by the caller; free it with
/// `gang_role_free`. `name` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument. A bad name or
/// count (0) is reported when the gang is compiled (`GANG_INVALID_REQUEST`).
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `role_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_role_new(
    name: *const c_char,
    count: u32,
    role_out: *mut *mut gang_role,
) -> gang_result {
    ffi_boundary!({
        let name = arg_str(name, "name")?;
        let out = Out::new(role_out, "role_out")?;
        out.write(gang_role::into_raw(Role::new(name, count)));
        Ok(())
    })
}

/// Makes the role elastic: place at least `min_count` members, up to its count, as many
/// as fit.
///
/// Ownership: `role` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `role` is NULL.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_role_set_min_count(
    role: *mut gang_role,
    min_count: u32,
) -> gang_result {
    ffi_boundary!({
        gang_role::get_mut(role, "role")?.set_min_count(Some(min_count));
        Ok(())
    })
}

/// Puts at most `max_per_node` members of the role on one node.
///
/// Ownership: `role` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `role` is NULL.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_role_set_max_per_node(
    role: *mut gang_role,
    max_per_node: u32,
) -> gang_result {
    ffi_boundary!({
        gang_role::get_mut(role, "role")?.set_max_per_node(Some(max_per_node));
        Ok(())
    })
}

/// Sets the per-member request of `resource` to a Kubernetes quantity (`"1"`, `"500m"`,
/// `"16Gi"`). Each member needs all its requests on one node.
///
/// Ownership: `role` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument. A malformed
/// quantity is reported when the gang is compiled (`GANG_INVALID_QUANTITY`).
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread; the strings NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_role_set_request(
    role: *mut gang_role,
    resource: *const c_char,
    quantity: *const c_char,
) -> gang_result {
    set_amount!(role.set_request(resource) = text quantity)
}

/// Sets the per-member request of `resource` to `millis` milli-units (one GPU is 1000).
///
/// Ownership: `role` stays owned by the caller; `resource` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread; `resource` NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_role_set_request_millis(
    role: *mut gang_role,
    resource: *const c_char,
    millis: u64,
) -> gang_result {
    set_amount!(role.set_request(resource) = millis millis)
}

/// Requires node label `key` to equal `value` (node selector).
///
/// Ownership: `role` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread; the strings NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_role_add_selector(
    role: *mut gang_role,
    key: *const c_char,
    value: *const c_char,
) -> gang_result {
    ffi_boundary!({
        let r = gang_role::get_mut(role, "role")?;
        let key = arg_str(key, "key")?;
        let value = arg_str(value, "value")?;
        r.set_selector(key.to_owned(), value.to_owned());
        Ok(())
    })
}

/// Adds a label requirement `key operator values` (Kubernetes node affinity);
/// `operator` is a `gang_selector_operator`. `In` and `NotIn` take values; `Exists` and
/// `DoesNotExist` take none (`n_values` 0).
///
/// Ownership: `role` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_INVALID_ARGUMENT` for an unknown operator, `GANG_NULL_ARGUMENT`
/// (`values` may be NULL only when `n_values` is 0) or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread; `key` NULL or
/// NUL-terminated; `values` NULL or `n_values` pointers, each NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_role_add_match_expression(
    role: *mut gang_role,
    key: *const c_char,
    operator: u32,
    values: *const *const c_char,
    n_values: usize,
) -> gang_result {
    ffi_boundary!({
        let r = gang_role::get_mut(role, "role")?;
        let key = arg_str(key, "key")?;
        let op = parse_selector_operator(operator).ok_or_else(|| {
            Failure::invalid_argument("operator", operator, "a gang_selector_operator")
        })?;
        let values = arg_strs(values, n_values, "values")?;
        r.add_requirement(Requirement {
            key: key.to_owned(),
            operator: op,
            values,
        });
        Ok(())
    })
}

/// Adds a toleration. `operator` is a `gang_toleration_operator`: `EQUAL` matches `key`
/// and `value`; `EXISTS` matches `key` whatever the value (`value` should be `""`), and
/// with an empty `key` tolerates every taint. `effect` is a `gang_effect`;
/// `GANG_EFFECT_ANY` matches every effect.
///
/// Ownership: `role` stays owned by the caller; the strings are copied.
///
/// Returns `GANG_INVALID_ARGUMENT` for an unknown operator or effect,
/// `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8`.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread; the strings NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_role_add_toleration(
    role: *mut gang_role,
    key: *const c_char,
    operator: u32,
    value: *const c_char,
    effect: u32,
) -> gang_result {
    ffi_boundary!({
        let r = gang_role::get_mut(role, "role")?;
        let key = arg_str(key, "key")?;
        let op = parse_toleration_operator(operator).ok_or_else(|| {
            Failure::invalid_argument("operator", operator, "a gang_toleration_operator")
        })?;
        let value = arg_str(value, "value")?;
        let effect = parse_toleration_effect(effect)
            .ok_or_else(|| Failure::invalid_argument("effect", effect, "a gang_effect"))?;
        r.add_toleration(Toleration {
            key: key.to_owned(),
            operator: op,
            value: value.to_owned(),
            effect,
        });
        Ok(())
    })
}

/// Binds the role by the gang's topology constraint (`true`, the default) or lets it
/// run anywhere (`false`, e.g. a launcher) — still all-or-nothing with the rest.
///
/// Ownership: `role` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `role` is NULL.
///
/// # Safety
/// `role` must be NULL or a live role not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_role_set_constrained(
    role: *mut gang_role,
    constrained: bool,
) -> gang_result {
    ffi_boundary!({
        gang_role::get_mut(role, "role")?.set_constrained(constrained);
        Ok(())
    })
}

/// Frees a role. `gang_role_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `role`. Gangs it was added to are unaffected (they hold
/// copies). Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `role` must be NULL or a live role not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_role_free(role: *mut gang_role) {
    gang_role::free(role);
}

/// Makes an empty gang named `name` (no roles, unconstrained, best-fit).
///
/// Ownership: on `GANG_OK`, `*gang_out` is a new gang owned by the caller; free it with
/// `gang_gang_free`. `name` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `gang_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_new(
    name: *const c_char,
    gang_out: *mut *mut gang_gang,
) -> gang_result {
    ffi_boundary!({
        let name = arg_str(name, "name")?;
        let out = Out::new(gang_out, "gang_out")?;
        out.write(gang_gang::into_raw(Gang::new(name)));
        Ok(())
    })
}

/// Adds a copy of `role` to the gang (roles keep the order they are added in).
///
/// Ownership: `gang` and `role` stay owned by the caller; `role` can be changed and
/// added again, or freed.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `gang` must be NULL or a live gang and `role` NULL or a live role, neither used by
/// another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_add_role(
    gang: *mut gang_gang,
    role: *const gang_role,
) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        let r = gang_role::get(role, "role")?;
        g.add_role(r.clone());
        Ok(())
    })
}

/// Requires every constrained member in one domain of `level` (a topology level key, or
/// `"kubernetes.io/hostname"` for one node); `level` NULL removes the requirement.
///
/// Ownership: `gang` stays owned by the caller; `level` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` when `gang` is NULL, `GANG_INVALID_UTF8`. An unknown
/// level is reported when the gang is compiled.
///
/// # Safety
/// `gang` must be NULL or a live gang not used by another thread; `level` NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_set_required(
    gang: *mut gang_gang,
    level: *const c_char,
) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        g.set_required(arg_opt_str(level, "level")?.map(str::to_owned));
        Ok(())
    })
}

/// Prefers one domain of `level`, walking up one level at a time when none fits (never
/// above the required level); `level` NULL removes the preference.
///
/// Ownership: `gang` stays owned by the caller; `level` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` when `gang` is NULL, `GANG_INVALID_UTF8`.
///
/// # Safety
/// `gang` must be NULL or a live gang not used by another thread; `level` NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_set_preferred(
    gang: *mut gang_gang,
    level: *const c_char,
) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        g.set_preferred(arg_opt_str(level, "level")?.map(str::to_owned));
        Ok(())
    })
}

/// Adds a slice level: members are cut into slices of `size`, each inside one domain of
/// `level`. Add slices outermost first.
///
/// Ownership: `gang` stays owned by the caller; `level` is copied.
///
/// Returns `GANG_NULL_ARGUMENT` or `GANG_INVALID_UTF8` for a bad argument. Sizes and
/// levels are checked when the gang is compiled.
///
/// # Safety
/// `gang` must be NULL or a live gang not used by another thread; `level` NULL or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_add_slice(
    gang: *mut gang_gang,
    level: *const c_char,
    size: u32,
) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        let level = arg_str(level, "level")?;
        g.add_slice(level, size);
        Ok(())
    })
}

/// Sets the gang's priority (Kubernetes PriorityClass semantics: higher wins; 0 by
/// default). `gang_inventory_preempt` evicts only work of strictly lower priority for
/// it, and a reservation of it only for a gang of strictly higher priority.
///
/// Ownership: `gang` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when `gang` is NULL.
///
/// # Safety
/// `gang` must be NULL or a live gang not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_set_priority(
    gang: *mut gang_gang,
    priority: i32,
) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        g.set_priority(priority);
        Ok(())
    })
}

/// Sets how to choose among feasible domains; `policy` is a `gang_policy`.
///
/// Ownership: `gang` stays owned by the caller.
///
/// Returns `GANG_INVALID_ARGUMENT` for an unknown policy, `GANG_NULL_ARGUMENT` when
/// `gang` is NULL.
///
/// # Safety
/// `gang` must be NULL or a live gang not used by another thread.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_set_policy(gang: *mut gang_gang, policy: u32) -> gang_result {
    ffi_boundary!({
        let g = gang_gang::get_mut(gang, "gang")?;
        g.set_policy(
            parse_policy(policy)
                .ok_or_else(|| Failure::invalid_argument("policy", policy, "a gang_policy"))?,
        );
        Ok(())
    })
}

/// Parses a gang JSON document of `len` bytes (the `gang` object of a scenario file;
/// UTF-8, need not be NUL-terminated). Unknown fields are errors.
///
/// Ownership: `json` is only read during the call. On `GANG_OK`, `*gang_out` is a new
/// gang owned by the caller; free it with `gang_gang_free`. On failure, a new
/// `gang_error` is stored in `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_SCENARIO` when the document does not parse (the field names
/// the JSON path); `GANG_NULL_ARGUMENT` (`json` may be NULL only when `len` is 0) or
/// `GANG_INVALID_UTF8`. The gang itself is validated when compiled or placed.
///
/// # Safety
/// `json` must be NULL or readable for `len` bytes; `gang_out` NULL or writable;
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_from_json(
    json: *const c_char,
    len: usize,
    gang_out: *mut *mut gang_gang,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let text = arg_doc(json, len, "json")?;
        let out = Out::new(gang_out, "gang_out")?;
        let gang = Gang::from_json(text)?;
        out.write(gang_gang::into_raw(gang));
        Ok(())
    })
}

/// Frees a gang. `gang_gang_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `gang`. Compiled gangs and placements made from it are
/// unaffected. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `gang` must be NULL or a live gang not freed before.
#[no_mangle]
pub unsafe extern "C" fn gang_gang_free(gang: *mut gang_gang) {
    gang_gang::free(gang);
}

/// Validates `gang` against `inventory` and compiles it for repeated placement.
///
/// Ownership: `inventory` and `gang` stay owned by the caller and are not borrowed
/// afterwards. On `GANG_OK`, `*compiled_out` is a new compiled gang owned by the caller;
/// free it with `gang_compiled_free`. On failure, a new `gang_error` is stored in
/// `*error_out` if `error_out` is not NULL.
///
/// Returns `GANG_INVALID_REQUEST` (unknown level, bad count, name, label, resource or
/// slice), `GANG_INVALID_QUANTITY` (bad request amount) or `GANG_CONTRADICTORY`
/// (constraints that can never hold together), with the field named
/// (`gang.roles[worker].count`); `GANG_NULL_ARGUMENT` for a NULL argument.
///
/// # Safety
/// `inventory` must be NULL or a live inventory not being changed by another thread;
/// `gang` NULL or a live gang not being changed by another thread; `compiled_out` and
/// `error_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_inventory_compile(
    inventory: *const gang_inventory,
    gang: *const gang_gang,
    compiled_out: *mut *mut gang_compiled,
    error_out: *mut *mut gang_error,
) -> gang_result {
    ffi_boundary!(error_out, {
        let inv = gang_inventory::get(inventory, "inventory")?;
        let g = gang_gang::get(gang, "gang")?;
        let out = Out::new(compiled_out, "compiled_out")?;
        let compiled = inv.compile(g)?;
        out.write(gang_compiled::into_raw(compiled));
        Ok(())
    })
}

/// Frees a compiled gang. `gang_compiled_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `compiled`; no other thread may be using it. Freeing
/// it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `compiled` must be NULL or a live compiled gang not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_compiled_free(compiled: *mut gang_compiled) {
    gang_compiled::free(compiled);
}
