//! What the lifecycle's placing operations answered: a replacement, a spread of
//! replicas, the admission of a queue.

use std::sync::OnceLock;

use gang_core::lifecycle::{Admission, Replacement, SpreadOutcome};
use gang_core::{Assignment, Diagnosis, Outcome, Placement};

use crate::failure::Failure;
use crate::handle::{Handle, Kind};
use crate::outcome::{gang_diagnosis, gang_placement, DiagnosisInner, PlacementInner};
use crate::result::{gang_result, gang_status};
use crate::text::{gang_str, Text};

/// A new placement handle holding a copy of `p`.
fn placement_handle(p: &Placement) -> *mut gang_placement {
    gang_placement::into_raw(PlacementInner::new(p.clone()))
}

/// A new diagnosis handle holding a copy of `d` (status `GANG_STATUS_UNSCHEDULABLE`),
/// or NULL.
fn diagnosis_handle(d: Option<&Diagnosis>) -> *mut gang_diagnosis {
    match d {
        Some(d) => gang_diagnosis::into_raw(DiagnosisInner::new(Outcome::Unschedulable(d.clone()))),
        None => std::ptr::null_mut(),
    }
}

/// What `gang_inventory_replace` answered: the members placed inside the gang's
/// domain (`GANG_STATUS_PLACED`; the reservation now holds them), or why not
/// (`GANG_STATUS_PENDING`; nothing was applied): which domain binds the gang, what it
/// lacks, and which other domains have room.
///
/// Made by `gang_inventory_replace`; freed with `gang_replacement_free`. It does not
/// borrow the inventory. Immutable: may be read from many threads at once.
pub struct gang_replacement {
    _private: [u8; 0],
}

pub(crate) struct ReplacementInner {
    replacement: Replacement,
    text: Text,
    json: OnceLock<Text>,
}

impl ReplacementInner {
    pub(crate) fn new(replacement: Replacement) -> ReplacementInner {
        let text = match &replacement {
            Replacement::Pending(p) => p.to_string(),
            Replacement::Placed { .. } => String::new(),
        };
        ReplacementInner {
            replacement,
            text: Text::new(text),
            json: OnceLock::new(),
        }
    }

    pub(crate) fn status(&self) -> gang_status {
        match self.replacement {
            Replacement::Placed { .. } => gang_status::GANG_STATUS_PLACED,
            Replacement::Pending(_) => gang_status::GANG_STATUS_PENDING,
        }
    }

    fn added(&self) -> &[Assignment] {
        match &self.replacement {
            Replacement::Placed { added } => added,
            Replacement::Pending(_) => &[],
        }
    }
}

unsafe impl Handle for gang_replacement {
    type Inner = ReplacementInner;
    const KIND: Kind = Kind::Replacement;
}

/// Writes the replacement's status, `GANG_STATUS_PLACED` or `GANG_STATUS_PENDING` (the
/// one `gang_inventory_replace` returned), to `*status_out`.
///
/// Ownership: `replacement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement; `status_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_status(
    replacement: *const gang_replacement,
    status_out: *mut gang_status,
) -> gang_result {
    ffi_read!(replacement => |r| { status_out => r.status() })
}

/// Writes the number of member groups added (one per role and node; 0 when pending, or
/// when nothing was lost) to `*len_out`.
///
/// Ownership: `replacement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_added_len(
    replacement: *const gang_replacement,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(replacement => |r| { len_out => r.added().len() })
}

/// Writes the `index`-th member group added: role and node names (views, not
/// NUL-terminated) and member count.
///
/// Ownership: the views borrow from `replacement` and are valid until
/// `gang_replacement_free(replacement)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_replacement_added_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_added_at(
    replacement: *const gang_replacement,
    index: usize,
    role_out: *mut gang_str,
    node_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(replacement, index, |r| r.added(), |a| {
        role_out => gang_str::of(&a.role),
        node_out => gang_str::of(&a.node),
        count_out => a.count,
    })
}

/// Writes why the replacement is pending, one readable sentence per binding domain
/// (NUL-terminated; empty when placed), to `*text_out`: "replacement for reservation #0
/// (gang train) is pending: rack b1/a has no room for 2 worker (fits 0 of 2 worker;
/// short of nvidia.com/gpu); rack b1/b has room, but the gang is bound to rack b1/a."
///
/// Ownership: the view borrows from `replacement` and is valid until
/// `gang_replacement_free(replacement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement; `text_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_text(
    replacement: *const gang_replacement,
    text_out: *mut gang_str,
) -> gang_result {
    ffi_read!(replacement => |r| { text_out => r.text.view() })
}

/// Writes the replacement as a JSON document (NUL-terminated) to `*json_out`:
/// `{"status": "placed", "added": [{"role", "node", "count"}]}` or `{"status":
/// "pending", "message": <the text>, "pending": {"reservation", "gang", "domains":
/// [{"level", "domain", "exists", "cordoned", "fits": [{"role", "fits", "needed"}],
/// "short_of", "elsewhere"}], "search_exhausted"}}`. Made on the first call, then kept.
///
/// Ownership: the view borrows from `replacement` and is valid until
/// `gang_replacement_free(replacement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement; `json_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_json(
    replacement: *const gang_replacement,
    json_out: *mut gang_str,
) -> gang_result {
    ffi_read!(replacement => |r| {
        json_out => r
            .json
            .get_or_init(|| Text::new(serde_json::to_string(&r.replacement).unwrap_or_default()))
            .view(),
    })
}

/// Frees a replacement. `gang_replacement_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `replacement`; it and every view of it are invalid
/// afterwards. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `replacement` must be NULL or a live replacement not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_replacement_free(replacement: *mut gang_replacement) {
    gang_replacement::free(replacement);
}

/// What `gang_inventory_spread` answered: the replicas placed and reserved, one
/// reservation each (`GANG_STATUS_PLACED`), or how many fit at most when fewer than
/// required did, with why the next did not (`GANG_STATUS_UNSCHEDULABLE`; nothing is
/// held).
///
/// Made by `gang_inventory_spread`; freed with `gang_spread_outcome_free`. It does not
/// borrow the inventory. Immutable: may be read from many threads at once.
pub struct gang_spread_outcome {
    _private: [u8; 0],
}

pub(crate) struct SpreadInner {
    outcome: SpreadOutcome,
    /// Replicas required (`min_replicas`, or all).
    needed: u32,
}

impl SpreadInner {
    pub(crate) fn new(outcome: SpreadOutcome, needed: u32) -> SpreadInner {
        SpreadInner { outcome, needed }
    }

    pub(crate) fn status(&self) -> gang_status {
        match self.outcome {
            SpreadOutcome::Placed { .. } => gang_status::GANG_STATUS_PLACED,
            _ => gang_status::GANG_STATUS_UNSCHEDULABLE,
        }
    }

    /// How many replicas fit (placed: how many were reserved; unschedulable: the most
    /// found).
    fn fit(&self) -> u32 {
        match &self.outcome {
            SpreadOutcome::Placed { reservations, .. } => {
                u32::try_from(reservations.len()).unwrap_or(u32::MAX)
            }
            SpreadOutcome::Unschedulable { fit, .. } => *fit,
        }
    }

    /// How many replicas were required.
    fn needed(&self) -> u32 {
        match &self.outcome {
            SpreadOutcome::Placed { .. } => self.needed,
            SpreadOutcome::Unschedulable { needed, .. } => *needed,
        }
    }

    fn replicas(&self) -> (&[gang_core::ReservationId], &[Placement]) {
        match &self.outcome {
            SpreadOutcome::Placed {
                reservations,
                placements,
            } => (reservations, placements),
            _ => (&[], &[]),
        }
    }
}

unsafe impl Handle for gang_spread_outcome {
    type Inner = SpreadInner;
    const KIND: Kind = Kind::SpreadOutcome;
}

/// Writes the spread's status, `GANG_STATUS_PLACED` or `GANG_STATUS_UNSCHEDULABLE`
/// (the one `gang_inventory_spread` returned), to `*status_out`.
///
/// Ownership: `spread` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; `status_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_status(
    spread: *const gang_spread_outcome,
    status_out: *mut gang_status,
) -> gang_result {
    ffi_read!(spread => |s| { status_out => s.status() })
}

/// Writes how many replicas fit (placed: how many were reserved; unschedulable: the
/// most found, below what was required) to `*fit_out` and how many were required
/// (`min_replicas`, or all) to `*needed_out`.
///
/// Ownership: `spread` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_fit(
    spread: *const gang_spread_outcome,
    fit_out: *mut u32,
    needed_out: *mut u32,
) -> gang_result {
    ffi_read!(spread => |s| {
        fit_out => s.fit(),
        needed_out => s.needed(),
    })
}

/// Writes the number of replicas placed and reserved (0 when unschedulable) to
/// `*len_out`.
///
/// Ownership: `spread` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_replicas_len(
    spread: *const gang_spread_outcome,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(spread => |s| { len_out => s.replicas().0.len() })
}

/// Writes the reservation id of the `index`-th replica (in placement order) to
/// `*id_out`. Release each replica with `gang_inventory_release`.
///
/// Ownership: `spread` stays owned by the caller.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below
/// `gang_spread_outcome_replicas_len`, `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_reservation_at(
    spread: *const gang_spread_outcome,
    index: usize,
    id_out: *mut u64,
) -> gang_result {
    ffi_at!(spread, index, |s| s.replicas().0, |id| { id_out => id.0 })
}

/// Writes a new placement, a copy of the `index`-th replica's, to `*placement_out`.
///
/// Ownership: `spread` stays owned by the caller. The new placement is owned by the
/// caller: free it with `gang_placement_free`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below
/// `gang_spread_outcome_replicas_len`, `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; `placement_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_placement_at(
    spread: *const gang_spread_outcome,
    index: usize,
    placement_out: *mut *mut gang_placement,
) -> gang_result {
    ffi_at!(spread, index, |s| s.replicas().1, |p| { placement_out => placement_handle(p) })
}

/// Writes a new diagnosis of why the next replica did not fit (status
/// `GANG_STATUS_UNSCHEDULABLE`) to `*diagnosis_out`, or NULL when there is none (all
/// replicas were placed).
///
/// Ownership: `spread` stays owned by the caller. A new diagnosis is owned by the
/// caller: free it with `gang_diagnosis_free`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome; `diagnosis_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_diagnosis(
    spread: *const gang_spread_outcome,
    diagnosis_out: *mut *mut gang_diagnosis,
) -> gang_result {
    ffi_read!(spread => |s| {
        diagnosis_out => diagnosis_handle(match &s.outcome {
            SpreadOutcome::Unschedulable { diagnosis, .. } => diagnosis.as_ref(),
            _ => None,
        }),
    })
}

/// Frees a spread outcome. `gang_spread_outcome_free(NULL)` does nothing. (The
/// replicas stay reserved: release them with `gang_inventory_release`.)
///
/// Ownership: takes ownership of `spread`. Placements and diagnoses made from it stay
/// valid. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `spread` must be NULL or a live spread outcome not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_spread_outcome_free(spread: *mut gang_spread_outcome) {
    gang_spread_outcome::free(spread);
}

/// What `gang_inventory_admit` answered, one entry per gang of the queue, in queue
/// order: placed whole and reserved (`GANG_STATUS_PLACED`), or waiting and holding
/// nothing (`GANG_STATUS_WAITING`). No gang ever holds part of its members.
///
/// Made by `gang_inventory_admit`; freed with `gang_admissions_free`. It does not
/// borrow the inventory. Immutable: may be read from many threads at once.
pub struct gang_admissions {
    _private: [u8; 0],
}

pub(crate) struct AdmissionsInner {
    /// `(gang name, admission)`, in queue order.
    items: Vec<(String, Admission)>,
}

impl AdmissionsInner {
    pub(crate) fn new(items: Vec<(String, Admission)>) -> AdmissionsInner {
        AdmissionsInner { items }
    }
}

unsafe impl Handle for gang_admissions {
    type Inner = AdmissionsInner;
    const KIND: Kind = Kind::Admissions;
}

/// Writes the number of gangs (the queue's length) to `*len_out`.
///
/// Ownership: `admissions` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_len(
    admissions: *const gang_admissions,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(admissions => |a| { len_out => a.items.len() })
}

/// Writes what happened to the `index`-th gang of the queue: its name (a view, not
/// NUL-terminated) to `*gang_out`, and `GANG_STATUS_PLACED` or `GANG_STATUS_WAITING` to
/// `*status_out`.
///
/// Ownership: the view borrows from `admissions` and is valid until
/// `gang_admissions_free(admissions)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_admissions_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; the out-pointers NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_at(
    admissions: *const gang_admissions,
    index: usize,
    gang_out: *mut gang_str,
    status_out: *mut gang_status,
) -> gang_result {
    ffi_at!(admissions, index, |a| &a.items, |entry| {
        gang_out => gang_str::of(&entry.0),
        status_out => if entry.1.is_placed() {
            gang_status::GANG_STATUS_PLACED
        } else {
            gang_status::GANG_STATUS_WAITING
        },
    })
}

/// Writes the reservation id of the `index`-th gang, when it was placed, to `*id_out`.
///
/// Ownership: `admissions` stays owned by the caller.
///
/// Returns `GANG_NOT_FOUND` when that gang waits (it holds nothing), `GANG_OUT_OF_RANGE`
/// when `index` is not below `gang_admissions_len`, `GANG_NULL_ARGUMENT` when an
/// argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_reservation(
    admissions: *const gang_admissions,
    index: usize,
    id_out: *mut u64,
) -> gang_result {
    ffi_at!(admissions, index, |a| &a.items, |entry| {
        id_out => match &entry.1 {
            Admission::Placed { reservation, .. } => reservation.0,
            _ => return Err(Failure::not_found("index", "placed gang", &entry.0)),
        },
    })
}

/// Writes a new placement, a copy of the `index`-th gang's, to `*placement_out`, or NULL
/// when that gang waits.
///
/// Ownership: `admissions` stays owned by the caller. A new placement is owned by the
/// caller: free it with `gang_placement_free`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_admissions_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; `placement_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_placement(
    admissions: *const gang_admissions,
    index: usize,
    placement_out: *mut *mut gang_placement,
) -> gang_result {
    ffi_at!(admissions, index, |a| &a.items, |entry| {
        placement_out => match &entry.1 {
            Admission::Placed { placement, .. } => placement_handle(placement),
            _ => std::ptr::null_mut(),
        },
    })
}

/// Writes a new diagnosis of why the `index`-th gang does not fit now (status
/// `GANG_STATUS_UNSCHEDULABLE`) to `*diagnosis_out`, or NULL when there is none: the
/// gang was placed, or it waits only because of the queue's head (strict FIFO never
/// tries gangs behind a waiting head; see `gang_admissions_blocked_by`).
///
/// Ownership: `admissions` stays owned by the caller. A new diagnosis is owned by the
/// caller: free it with `gang_diagnosis_free`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_admissions_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; `diagnosis_out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_diagnosis(
    admissions: *const gang_admissions,
    index: usize,
    diagnosis_out: *mut *mut gang_diagnosis,
) -> gang_result {
    ffi_at!(admissions, index, |a| &a.items, |entry| {
        diagnosis_out => match &entry.1 {
            Admission::Waiting { diagnosis, .. } => diagnosis_handle(diagnosis.as_ref()),
            _ => std::ptr::null_mut(),
        },
    })
}

/// Writes the name of the waiting head gang the `index`-th gang waits behind (a view,
/// not NUL-terminated; empty when none: the gang was placed, is the head, or does not
/// fit on its own — then `gang_admissions_diagnosis` says why) to `*name_out`.
///
/// Ownership: the view borrows from `admissions` and is valid until
/// `gang_admissions_free(admissions)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_admissions_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle; `name_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_blocked_by(
    admissions: *const gang_admissions,
    index: usize,
    name_out: *mut gang_str,
) -> gang_result {
    ffi_at!(admissions, index, |a| &a.items, |entry| {
        name_out => gang_str::of(match &entry.1 {
            Admission::Waiting { blocked_by: Some(b), .. } => b.as_str(),
            _ => "",
        }),
    })
}

/// Frees an admissions handle. `gang_admissions_free(NULL)` does nothing. (Placed gangs
/// stay reserved: release them with `gang_inventory_release`.)
///
/// Ownership: takes ownership of `admissions`. Placements and diagnoses made from it
/// stay valid. Freeing it twice is undefined behaviour: set your pointer to NULL.
///
/// # Safety
/// `admissions` must be NULL or a live admissions handle not freed before and not in
/// use.
#[no_mangle]
pub unsafe extern "C" fn gang_admissions_free(admissions: *mut gang_admissions) {
    gang_admissions::free(admissions);
}
