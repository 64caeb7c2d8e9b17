//! Placements and diagnoses: what a placement query answers.

use std::ffi::c_char;
use std::sync::OnceLock;

use gang_core::{Diagnosis, Outcome, Placement};

use crate::failure::Failure;
use crate::handle::{Handle, Kind, Out};
use crate::result::{gang_result, gang_status};
use crate::text::{arg_str, gang_str, Text};

/// Where a gang goes: the level and domain used, and how many members of each role on
/// which node. Every member (or each role's `min_count`) is placed; never part of a
/// gang.
///
/// Made by `gang_solver_place` or `gang_inventory_place` (status
/// `GANG_STATUS_PLACED`); freed with `gang_placement_free`. Immutable: may be read from
/// many threads at once. The accessors return views into the placement, never copies.
pub struct gang_placement {
    _private: [u8; 0],
}

pub(crate) struct PlacementInner {
    pub(crate) placement: Placement,
    path: OnceLock<Text>,
    json: OnceLock<Text>,
}

unsafe impl Handle for gang_placement {
    type Inner = PlacementInner;
    const KIND: Kind = Kind::Placement;
}

impl PlacementInner {
    pub(crate) fn new(placement: Placement) -> PlacementInner {
        PlacementInner {
            placement,
            path: OnceLock::new(),
            json: OnceLock::new(),
        }
    }
}

/// Why a valid gang does not fit now (or, when undecided, why the search stopped): the
/// best domain and how many members it takes, what it is short of, nodes excluded by
/// reason, what relaxing the constraint would give.
///
/// Made by `gang_solver_place` or `gang_inventory_place` (status
/// `GANG_STATUS_UNSCHEDULABLE` or `GANG_STATUS_UNDECIDED`); freed with
/// `gang_diagnosis_free`. Immutable: may be read from many threads at once.
pub struct gang_diagnosis {
    _private: [u8; 0],
}

pub(crate) struct DiagnosisInner {
    /// `Unschedulable` or `Undecided`.
    outcome: Outcome,
    text: OnceLock<Text>,
    json: OnceLock<Text>,
}

impl DiagnosisInner {
    /// `outcome` must be `Unschedulable` or `Undecided`.
    pub(crate) fn new(outcome: Outcome) -> DiagnosisInner {
        DiagnosisInner {
            outcome,
            text: OnceLock::new(),
            json: OnceLock::new(),
        }
    }

    fn diagnosis(&self) -> Result<&Diagnosis, Failure> {
        self.outcome
            .diagnosis()
            .ok_or_else(|| Failure::internal("a diagnosis handle without a diagnosis"))
    }
}

unsafe impl Handle for gang_diagnosis {
    type Inner = DiagnosisInner;
    const KIND: Kind = Kind::Diagnosis;
}

/// Checked out-parameters of a placement query: status, placement, diagnosis.
pub(crate) struct OutcomeOut {
    status: Out<gang_status>,
    placement: Out<*mut gang_placement>,
    diagnosis: Out<*mut gang_diagnosis>,
}

impl OutcomeOut {
    /// # Safety
    /// Each pointer must be NULL or writable.
    pub(crate) unsafe fn new(
        status: *mut gang_status,
        placement: *mut *mut gang_placement,
        diagnosis: *mut *mut gang_diagnosis,
    ) -> Result<OutcomeOut, Failure> {
        Ok(OutcomeOut {
            status: Out::new(status, "status_out")?,
            placement: Out::new(placement, "placement_out")?,
            diagnosis: Out::new(diagnosis, "diagnosis_out")?,
        })
    }

    /// Writes the outcome: the status, and a placement or a diagnosis (the other NULL).
    pub(crate) fn write(self, outcome: Outcome) {
        match outcome {
            Outcome::Placed(placement) => {
                self.status.write(gang_status::GANG_STATUS_PLACED);
                self.placement
                    .write(gang_placement::into_raw(PlacementInner::new(placement)));
                self.diagnosis.write(std::ptr::null_mut());
            }
            other => {
                self.status.write(match other {
                    Outcome::Undecided(_) => gang_status::GANG_STATUS_UNDECIDED,
                    _ => gang_status::GANG_STATUS_UNSCHEDULABLE,
                });
                self.placement.write(std::ptr::null_mut());
                self.diagnosis
                    .write(gang_diagnosis::into_raw(DiagnosisInner::new(other)));
            }
        }
    }
}

/// Writes the gang's name to `*name_out` (not NUL-terminated).
///
/// Ownership: the view borrows from `placement` and is valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `name_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_gang(
    placement: *const gang_placement,
    name_out: *mut gang_str,
) -> gang_result {
    ffi_read!(placement => |p| { name_out => gang_str::of(p.placement.gang()) })
}

/// Writes the level whose single domain holds the constrained members (a topology level
/// key, or `"kubernetes.io/hostname"` for one node) to `*level_out`, not NUL-terminated.
/// It is empty when the gang was placed cluster-wide (unconstrained, or split above the
/// top level).
///
/// Ownership: the view borrows from `placement` and is valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `level_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_level(
    placement: *const gang_placement,
    level_out: *mut gang_str,
) -> gang_result {
    ffi_read!(placement => |p| { level_out => gang_str::of(p.placement.level().unwrap_or("")) })
}

/// Writes the domain's values joined by `/` (`"b1/r1"`; empty cluster-wide;
/// NUL-terminated) to `*path_out`.
///
/// Ownership: the view borrows from `placement` and is valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `path_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_domain_path(
    placement: *const gang_placement,
    path_out: *mut gang_str,
) -> gang_result {
    ffi_read!(placement => |p| {
        path_out => p.path.get_or_init(|| Text::new(p.placement.domain_path())).view(),
    })
}

/// Writes the number of `(level, value)` pairs of the domain (outermost first; 0
/// cluster-wide) to `*len_out`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_domain_len(
    placement: *const gang_placement,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(placement => |p| { len_out => p.placement.domain().len() })
}

/// Writes the domain's `index`-th `(level key, value)` pair, outermost first, to
/// `*level_out` and `*value_out` (not NUL-terminated).
///
/// Ownership: the views borrow from `placement` and are valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below `gang_placement_domain_len`,
/// `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_domain_at(
    placement: *const gang_placement,
    index: usize,
    level_out: *mut gang_str,
    value_out: *mut gang_str,
) -> gang_result {
    ffi_at!(placement, index, |p| p.placement.domain(), |pair| {
        level_out => gang_str::of(&pair.0),
        value_out => gang_str::of(&pair.1),
    })
}

/// Writes the number of assignments (one per role and node with members) to `*len_out`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_assignments_len(
    placement: *const gang_placement,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(placement => |p| { len_out => p.placement.assignments().len() })
}

/// Writes the `index`-th assignment: role name and node name (views, not
/// NUL-terminated) and member count. Assignments are ordered by role (as given), then
/// node (topology order): the same inventory and request give the same sequence.
///
/// Ownership: the views borrow from `placement` and are valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below
/// `gang_placement_assignments_len`, `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_assignment_at(
    placement: *const gang_placement,
    index: usize,
    role_out: *mut gang_str,
    node_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(placement, index, |p| p.placement.assignments(), |a| {
        role_out => gang_str::of(&a.role),
        node_out => gang_str::of(&a.node),
        count_out => a.count,
    })
}

/// Writes the total number of members placed (all roles) to `*members_out`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `members_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_members(
    placement: *const gang_placement,
    members_out: *mut u64,
) -> gang_result {
    ffi_read!(placement => |p| { members_out => p.placement.member_count() })
}

/// Writes the number of members placed for the role named `role` (below its count only
/// for elastic roles) to `*placed_out`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NOT_FOUND` when the gang has no such role, `GANG_NULL_ARGUMENT` or
/// `GANG_INVALID_UTF8` for a bad argument.
///
/// # Safety
/// `placement` must be NULL or a live placement; `role` NULL or NUL-terminated;
/// `placed_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_placed(
    placement: *const gang_placement,
    role: *const c_char,
    placed_out: *mut u32,
) -> gang_result {
    ffi_boundary!({
        let p = gang_placement::get(placement, "placement")?;
        let role = arg_str(role, "role")?;
        let out = Out::new(placed_out, "placed_out")?;
        let n = p
            .placement
            .placed(role)
            .ok_or_else(|| Failure::not_found("role", "role", role))?;
        out.write(n);
        Ok(())
    })
}

/// Writes the number of levels reported by `gang_placement_domains_used_at` (every
/// topology level, then the node level) to `*len_out`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_domains_used_len(
    placement: *const gang_placement,
    len_out: *mut usize,
) -> gang_result {
    ffi_read!(placement => |p| { len_out => p.placement.domains_used().len() })
}

/// Writes, for the `index`-th level (outermost first, the node level
/// `"kubernetes.io/hostname"` last), its key (a view, not NUL-terminated) and how many
/// distinct domains of it the placement uses.
///
/// Ownership: the view borrows from `placement` and is valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_OUT_OF_RANGE` when `index` is not below
/// `gang_placement_domains_used_len`, `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_domains_used_at(
    placement: *const gang_placement,
    index: usize,
    level_out: *mut gang_str,
    count_out: *mut u32,
) -> gang_result {
    ffi_at!(placement, index, |p| p.placement.domains_used(), |used| {
        level_out => gang_str::of(&used.0),
        count_out => used.1,
    })
}

/// Writes `false` to `*complete_out` when the exact multi-role search ran out of budget
/// at a tighter level before this placement was found (so a tighter placement might
/// exist), else `true`.
///
/// Ownership: `placement` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `complete_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_search_complete(
    placement: *const gang_placement,
    complete_out: *mut bool,
) -> gang_result {
    ffi_read!(placement => |p| { complete_out => p.placement.search_complete() })
}

/// Writes the placement as a JSON document (NUL-terminated) to `*json_out`:
/// `{"status": "placed", "gang", "level", "domain", "assignments": [{"role", "node",
/// "count"}], "placed", "domains_used", "search_complete"}` — byte for byte the core's
/// `Outcome::to_json`. Made on the first call, then kept.
///
/// Ownership: the view borrows from `placement` and is valid until
/// `gang_placement_free(placement)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement; `json_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_json(
    placement: *const gang_placement,
    json_out: *mut gang_str,
) -> gang_result {
    ffi_read!(placement => |p| {
        json_out => p
            .json
            .get_or_init(|| Text::new(serde_json::to_string(&p.placement).unwrap_or_default()))
            .view(),
    })
}

/// Frees a placement. `gang_placement_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `placement`; it and every view of it are invalid
/// afterwards; no other thread may be using it. Freeing it twice is undefined
/// behaviour: set your pointer to NULL.
///
/// # Safety
/// `placement` must be NULL or a live placement not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_placement_free(placement: *mut gang_placement) {
    gang_placement::free(placement);
}

/// Writes the diagnosis' status, `GANG_STATUS_UNSCHEDULABLE` or `GANG_STATUS_UNDECIDED`
/// (the one the placement query returned), to `*status_out`.
///
/// Ownership: `diagnosis` stays owned by the caller.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis; `status_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_status(
    diagnosis: *const gang_diagnosis,
    status_out: *mut gang_status,
) -> gang_result {
    ffi_read!(diagnosis => |d| {
        status_out => match d.outcome {
            Outcome::Undecided(_) => gang_status::GANG_STATUS_UNDECIDED,
            _ => gang_status::GANG_STATUS_UNSCHEDULABLE,
        },
    })
}

/// Writes the gang's name (not NUL-terminated) to `*name_out`.
///
/// Ownership: the view borrows from `diagnosis` and is valid until
/// `gang_diagnosis_free(diagnosis)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis; `name_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_gang(
    diagnosis: *const gang_diagnosis,
    name_out: *mut gang_str,
) -> gang_result {
    ffi_read!(diagnosis => |d| { name_out => gang_str::of(&d.diagnosis()?.gang) })
}

/// Writes the level the gang was asked to fit in (not NUL-terminated; empty when the
/// gang was unconstrained) to `*level_out`.
///
/// Ownership: the view borrows from `diagnosis` and is valid until
/// `gang_diagnosis_free(diagnosis)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis; `level_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_level(
    diagnosis: *const gang_diagnosis,
    level_out: *mut gang_str,
) -> gang_result {
    ffi_read!(diagnosis => |d| {
        level_out => gang_str::of(d.diagnosis()?.level.as_deref().unwrap_or("")),
    })
}

/// Writes the diagnosis as one readable paragraph (NUL-terminated) to `*text_out`, e.g.
/// "gang train (4 worker) does not fit in one rack (…). Best rack: rack b1/a fits 3 of
/// 4 worker (short of nvidia.com/gpu). … Relaxing to block: block b1 fits all 4 now".
/// Made on the first call, then kept.
///
/// Ownership: the view borrows from `diagnosis` and is valid until
/// `gang_diagnosis_free(diagnosis)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis; `text_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_text(
    diagnosis: *const gang_diagnosis,
    text_out: *mut gang_str,
) -> gang_result {
    ffi_read!(diagnosis => |d| {
        text_out => {
            let diag = d.diagnosis()?;
            d.text.get_or_init(|| Text::new(diag.to_string())).view()
        },
    })
}

/// Writes the diagnosis as data, a JSON document (NUL-terminated), to `*json_out`:
/// `{"status": "unschedulable" | "undecided", "message": <the text>, "diagnosis": {…}}`
/// — byte for byte the core's `Outcome::to_json`. Made on the first call, then kept.
///
/// Ownership: the view borrows from `diagnosis` and is valid until
/// `gang_diagnosis_free(diagnosis)`.
///
/// Returns `GANG_NULL_ARGUMENT` when an argument is NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis; `json_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_json(
    diagnosis: *const gang_diagnosis,
    json_out: *mut gang_str,
) -> gang_result {
    ffi_read!(diagnosis => |d| {
        json_out => d.json.get_or_init(|| Text::new(d.outcome.to_json())).view(),
    })
}

/// Frees a diagnosis. `gang_diagnosis_free(NULL)` does nothing.
///
/// Ownership: takes ownership of `diagnosis`; it and every view of it are invalid
/// afterwards; no other thread may be using it. Freeing it twice is undefined
/// behaviour: set your pointer to NULL.
///
/// # Safety
/// `diagnosis` must be NULL or a live diagnosis not freed before and not in use.
#[no_mangle]
pub unsafe extern "C" fn gang_diagnosis_free(diagnosis: *mut gang_diagnosis) {
    gang_diagnosis::free(diagnosis);
}
