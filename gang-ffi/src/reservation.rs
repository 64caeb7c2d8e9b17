//! Reservations (snapshots of what a reservation holds) and the reports of inventory
//! changes (members lost, overcommitted nodes, displaced reservations).

use std::sync::OnceLock;

use gang_core::lifecycle::{Lost, Overcommit};
use gang_core::{Assignment, Inventory, Reservation, ReservationId};

use crate::accessor::item;
use crate::handle::{Handle, Kind};
use crate::result::gang_result;
use crate::text::{gang_str, Text};

/// A snapshot of one live reservation: its id, gang, domain, the members it holds (per
/// role and node), what that uses per node and resource, and the members it lost with
/// removed or failed nodes and that are not yet replaced.
///
/// Made by `gang_inventory_reservation`; freed with `gang_reservation_free`. A copy
/// taken at that moment: later changes to the inventory (a release, a replacement, a
/// node lost) do not change it, and it does not borrow the inventory. Immutable: may be
/// read from many threads at once.
pub struct gang_reservation {
    _private: [u8; 0],
}

pub(crate) struct ReservationInner {
    id: u64,
    gang: String,
    domain: Vec<(String, String)>,
    path: Text,
    members: Vec<Assignment>,
    member_count: u64,
    /// `(node, resource, milli-units)`.
    usage: Vec<(String, String, u64)>,
    lost: Vec<Lost>,
}

impl ReservationInner {
    pub(crate) fn of(r: &Reservation, inv: &Inventory) -> ReservationInner {
        let domain = r.domain().to_vec();
        let path = domain
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/");
        ReservationInner {
            id: r.id().0,
            gang: r.gang().get_name().to_owned(),
            path: Text::new(path),
            domain,
            members: r.assignments(inv),
            member_count: r.member_count(),
            usage: r
                .usage(inv)
                .into_iter()
                .map(|(node, res, q)| (node, res, q.millis()))
                .collect(),
            lost: r.lost().to_vec(),
        }
    }
}

unsafe impl Handle for gang_reservation {
    type Inner = ReservationInner;
    const KIND: Kind = Kind::Reservation;
}

/// Writes the reservation's id to `*id_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_id(
    reservation: *const gang_reservation,
    id_out: *mut u64,
) -> gang_result {
    ffi_read!(reservation => |r| { id_out => r.id })
}

/// Writes the reserved gang's name (not NUL-terminated) to `*name_out`.
///
/// Ownership: the view borrows from `reservation` and is valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `name_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_gang(
    reservation: *const gang_reservation,
    name_out: *mut gang_str,
) -> gang_result {
    ffi_read!(reservation => |r| { name_out => gang_str::of(&r.gang) })
}

/// Writes the values of the domain the gang was placed in, joined by `/` (`"b1/a"`;
/// empty cluster-wide; NUL-terminated), to `*path_out`. Replacements stay inside it.
///
/// Ownership: the view borrows from `reservation` and is valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `path_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_domain_path(
    reservation: *const gang_reservation,
    path_out: *mut gang_str,
) -> gang_result {
    ffi_read!(reservation => |r| { path_out => r.path.view() })
}

/// Writes the number of `(level, value)` pairs of the reservation's domain (outermost
/// first; 0 cluster-wide) to `*len_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_domain_len(
    reservation: *const gang_reservation,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(reservation => |r| { len_out => r.domain.len() })
}

/// Writes the domain's `index`-th `(level key, value)` pair, outermost first, to
/// `*level_out` and `*value_out` (not NUL-terminated).
///
/// Ownership: the views borrow from `reservation` and are valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_reservation_domain_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_domain_at(
    reservation: *const gang_reservation,
    index: usize,
    level_out: *mut gang_str,
    value_out: *mut gang_str,
) -> gang_result {
    ffi_at!(reservation, index, |r| &r.domain, |pair| {
        level_out => gang_str::of(&pair.0),
        value_out => gang_str::of(&pair.1),
    })
}

/// Writes the number of member groups held (one per role and node) to `*len_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_members_len(
    reservation: *const gang_reservation,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(reservation => |r| { len_out => r.members.len() })
}

/// Writes the `index`-th member group held: role and node names (views, not
/// NUL-terminated) and member count. Groups are ordered by role (as given in the gang),
/// then node (topology order).
///
/// Ownership: the views borrow from `reservation` and are valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_reservation_members_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_member_at(
    reservation: *const gang_reservation,
    index: usize,
    role_out: *mut gang_str,
    node_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(reservation, index, |r| &r.members, |a| {
        role_out => gang_str::of(&a.role),
        node_out => gang_str::of(&a.node),
        count_out => a.count,
    })
}

/// Writes the total number of members held (all roles; lost members not counted) to
/// `*count_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `count_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_member_count(
    reservation: *const gang_reservation,
    count_out: *mut u64,
) -> gang_result {
    ffi_read!(reservation => |r| { count_out => r.member_count })
}

/// Writes the number of `(node, resource)` pairs the reservation uses to `*len_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_usage_len(
    reservation: *const gang_reservation,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(reservation => |r| { len_out => r.usage.len() })
}

/// Writes the `index`-th use: node and resource names (views, not NUL-terminated) and
/// how much of the resource the reservation holds on the node, in milli-units — exactly
/// what releasing it gives back there.
///
/// Ownership: the views borrow from `reservation` and are valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_reservation_usage_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_usage_at(
    reservation: *const gang_reservation,
    index: usize,
    node_out: *mut gang_str,
    resource_out: *mut gang_str,
    millis_out: *mut u64,
) -> gang_result {
    ffi_at!(reservation, index, |r| &r.usage, |u| {
        node_out => gang_str::of(&u.0),
        resource_out => gang_str::of(&u.1),
        millis_out => u.2,
    })
}

/// Writes the number of lost member groups not yet replaced (members lost with a
/// removed or failed node; `gang_inventory_replace` places them again) to `*len_out`.
///
/// Ownership: `reservation` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_lost_len(
    reservation: *const gang_reservation,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(reservation => |r| { len_out => r.lost.len() })
}

/// Writes the `index`-th lost member group: role, the node the members were on (views,
/// not NUL-terminated) and how many.
///
/// Ownership: the views borrow from `reservation` and are valid until
/// `gang_reservation_free(reservation)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_reservation_lost_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_lost_at(
    reservation: *const gang_reservation,
    index: usize,
    role_out: *mut gang_str,
    node_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(reservation, index, |r| &r.lost, |l| {
        role_out => gang_str::of(&l.role),
        node_out => gang_str::of(&l.node),
        count_out => l.count,
    })
}

/// Frees a reservation snapshot. `gang_reservation_free(NULL)` does nothing. (This
/// does not release the reservation: `gang_inventory_release` does.)
///
/// Ownership: takes ownership of `reservation`; it and every view of it are invalid
/// afterwards. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `reservation` must be NULL or a live reservation not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_reservation_free(reservation: *mut gang_reservation) {
    gang_reservation::free(reservation);
}

/// What an inventory change reported: the members reservations lost (removing or
/// failing a node), the nodes whose capacity no longer covers what is used and reserved
/// on them (changing capacity or external use), and the reservations whose members left
/// their domain (relabelling a node). Each list may be empty.
///
/// Made by `gang_inventory_remove_node`, `gang_inventory_fail_node`,
/// `gang_inventory_set_labels`, `gang_inventory_set_capacity[_millis]` and
/// `gang_inventory_set_used[_millis]`; freed with `gang_change_free`. It does not
/// borrow the inventory. Immutable: may be read from many threads at once.
pub struct gang_change {
    _private: [u8; 0],
}

pub(crate) struct ChangeInner {
    lost: Vec<Lost>,
    overcommits: Vec<Overcommit>,
    displaced: Vec<u64>,
    json: OnceLock<Text>,
}

impl ChangeInner {
    pub(crate) fn lost(lost: Vec<Lost>) -> ChangeInner {
        ChangeInner::new(lost, Vec::new(), Vec::new())
    }

    pub(crate) fn overcommits(overcommits: Vec<Overcommit>) -> ChangeInner {
        ChangeInner::new(Vec::new(), overcommits, Vec::new())
    }

    pub(crate) fn displaced(ids: Vec<ReservationId>) -> ChangeInner {
        ChangeInner::new(
            Vec::new(),
            Vec::new(),
            ids.into_iter().map(|id| id.0).collect(),
        )
    }

    fn new(lost: Vec<Lost>, overcommits: Vec<Overcommit>, displaced: Vec<u64>) -> ChangeInner {
        ChangeInner {
            lost,
            overcommits,
            displaced,
            json: OnceLock::new(),
        }
    }
}

unsafe impl Handle for gang_change {
    type Inner = ChangeInner;
    const KIND: Kind = Kind::Change;
}

/// Writes the number of lost member groups (one per reservation, role and node) to
/// `*len_out`. Non-zero only for `gang_inventory_remove_node` and
/// `gang_inventory_fail_node`.
///
/// Ownership: `change` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_lost_len(
    change: *const gang_change,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(change => |c| { len_out => c.lost.len() })
}

/// Writes the `index`-th lost member group: the reservation that lost them, the role
/// and node (views, not NUL-terminated) and how many members. The reservation keeps its
/// other members and records these as lost until `gang_inventory_replace` places them
/// again.
///
/// Ownership: the views borrow from `change` and are valid until
/// `gang_change_free(change)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_change_lost_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_lost_at(
    change: *const gang_change,
    index: usize,
    reservation_out: *mut u64,
    role_out: *mut gang_str,
    node_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(change, index, |c| &c.lost, |l| {
        reservation_out => l.reservation.0,
        role_out => gang_str::of(&l.role),
        node_out => gang_str::of(&l.node),
        count_out => l.count,
    })
}

/// Writes the number of overcommitted `(node, resource)` pairs to `*len_out`. Non-zero
/// only for `gang_inventory_set_capacity[_millis]` and `gang_inventory_set_used[_millis]`.
///
/// Ownership: `change` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_overcommits_len(
    change: *const gang_change,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(change => |c| { len_out => c.overcommits.len() })
}

/// Writes the `index`-th overcommitted pair: node and resource (views, not
/// NUL-terminated), its capacity now, what is used outside the library and what
/// reservations hold there (milli-units; used + reserved > capacity), and how many
/// reservations hold it (read them with `gang_change_overcommit_reservation_at`). The
/// change was applied: free capacity there is zero until holders release or are
/// replaced.
///
/// Ownership: the views borrow from `change` and are valid until
/// `gang_change_free(change)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_change_overcommits_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_overcommit_at(
    change: *const gang_change,
    index: usize,
    node_out: *mut gang_str,
    resource_out: *mut gang_str,
    capacity_millis_out: *mut u64,
    used_millis_out: *mut u64,
    reserved_millis_out: *mut u64,
    reservations_len_out: *mut usize,
) -> gang_result {
    ffi_at!(change, index, |c| &c.overcommits, |o| {
        node_out => gang_str::of(&o.node),
        resource_out => gang_str::of(&o.resource),
        capacity_millis_out => o.capacity.millis(),
        used_millis_out => o.used.millis(),
        reserved_millis_out => o.reserved.millis(),
        reservations_len_out => o.reservations.len(),
    })
}

/// Writes the id of the `reservation_index`-th reservation holding the `index`-th
/// overcommitted pair to `*id_out` (ids in increasing order).
///
/// Ownership: `change` stays owned by the caller.
///
/// Returns `GANG_OUT_OF_RANGE` when an index is out of range, `GANG_NULL_ARGUMENT`
/// when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_overcommit_reservation_at(
    change: *const gang_change,
    index: usize,
    reservation_index: usize,
    id_out: *mut u64,
) -> gang_result {
    ffi_read!(change => |c| {
        id_out => {
            let o = item(&c.overcommits, index, "index")?;
            item(&o.reservations, reservation_index, "reservation_index")?.0
        },
    })
}

/// Writes the number of displaced reservations (whose constrained members are no
/// longer inside their domain after a relabelling) to `*len_out`. Non-zero only for
/// `gang_inventory_set_labels`.
///
/// Ownership: `change` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_displaced_len(
    change: *const gang_change,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(change => |c| { len_out => c.displaced.len() })
}

/// Writes the id of the `index`-th displaced reservation to `*id_out`. The library
/// does not move them: the caller decides (release and place again, or keep).
///
/// Ownership: `change` stays owned by the caller.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_change_displaced_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_displaced_at(
    change: *const gang_change,
    index: usize,
    id_out: *mut u64,
) -> gang_result {
    ffi_at!(change, index, |c| &c.displaced, |id| { id_out => *id })
}

/// Writes the report as a JSON document (NUL-terminated) to `*json_out`:
/// `{"lost": [{"reservation", "role", "node", "count"}], "overcommitted": [{"node",
/// "resource", "capacity", "used", "reserved", "reservations"}], "displaced": [ids]}`,
/// amounts as in the scenario files (whole units as integers, else `"1500m"`). Made on
/// the first call, then kept.
///
/// Ownership: the view borrows from `change` and is valid until
/// `gang_change_free(change)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `change` must be NULL or a live change; `json_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_change_json(
    change: *const gang_change,
    json_out: *mut gang_str,
) -> gang_result {
    ffi_read!(change => |c| {
        json_out => c
            .json
            .get_or_init(|| {
                let doc = serde_json::json!({
                    "lost": c.lost,
                    "overcommitted": c.overcommits,
                    "displaced": c.displaced,
                });
                Text::new(doc.to_string())
            })
            .view(),
    })
}

/// Frees a change report. `gang_change_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `change`; it and every view of it are invalid
/// afterwards. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `change` must be NULL or a live change not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_change_free(change: *mut gang_change) {
    gang_change::free(change);
}
