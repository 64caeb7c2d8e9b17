//! Result codes, outcome statuses and the enumerations passed in as `uint32_t`.
//!
//! Every value here is explicit and never renumbered; new values are only ever added.

use std::ffi::c_char;

use gang_core::lifecycle::AdmitMode;
use gang_core::request::{SelectorOperator, TolerationOperator};
use gang_core::{ErrorKind, Policy, TaintEffect};

/// What a function returns: `GANG_OK` or why it failed.
///
/// Codes 1–99 are `gang-core`'s error kinds, one to one with `ErrorKind::code()` (codes
/// 9–99 are reserved for kinds the core adds later, with the same numbers). Codes from
/// 100 are this binding's own. A valid request that does not fit is not an error (see
/// [`gang_status`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_result {
    /// Success; the out-parameters were written.
    GANG_OK = 0,
    /// A quantity is malformed, negative, finer than 1m, or overflows
    /// (`invalid_quantity`).
    GANG_INVALID_QUANTITY = 1,
    /// The cluster description is invalid: duplicate node, bad label, bad level…
    /// (`invalid_inventory`).
    GANG_INVALID_INVENTORY = 2,
    /// The gang request is invalid: unknown level, bad count, bad slice…
    /// (`invalid_request`).
    GANG_INVALID_REQUEST = 3,
    /// The request's constraints can never hold together (`contradictory`).
    GANG_CONTRADICTORY = 4,
    /// A JSON document does not parse or does not match the format (`invalid_scenario`).
    GANG_INVALID_SCENARIO = 5,
    /// A placement could not be applied because the inventory changed since it was
    /// computed; nothing was applied (`conflict`).
    GANG_CONFLICT = 6,
    /// No live reservation has this id: never made, or already released
    /// (`unknown_reservation`).
    GANG_UNKNOWN_RESERVATION = 7,
    /// No node has this name (`unknown_node`).
    GANG_UNKNOWN_NODE = 8,
    /// A required pointer argument was NULL (`null_argument`).
    GANG_NULL_ARGUMENT = 100,
    /// A string argument is not valid UTF-8 (`invalid_utf8`).
    GANG_INVALID_UTF8 = 101,
    /// An enumeration argument has a value outside its enumeration
    /// (`invalid_argument`).
    GANG_INVALID_ARGUMENT = 102,
    /// An index is not below the length it indexes (`out_of_range`).
    GANG_OUT_OF_RANGE = 103,
    /// A name given to a look-up (role, node, resource) is not there, or an answer has
    /// no such part (the reservation of a waiting gang) (`not_found`).
    GANG_NOT_FOUND = 104,
    /// A handle argument is not a live handle of its type: a handle of another type
    /// (a `gang_role *` passed as a `gang_gang *`), one already freed, or not a handle
    /// at all (`invalid_handle`). Nothing was read or written through it. Detection is
    /// best-effort: a freed handle is recognised only while the allocator has not
    /// handed its memory out again. Passing anything but a live handle remains the
    /// caller's bug.
    GANG_INVALID_HANDLE = 105,
    /// `gang-core` reported an error kind this build of the binding does not know
    /// (`unknown_error`). The error object still carries the core's kind name and message.
    GANG_UNKNOWN_ERROR = 198,
    /// A bug in the library, caught at the boundary (a panic or a broken internal
    /// invariant; `internal_error`). The host process is intact; please report the
    /// message.
    GANG_INTERNAL_ERROR = 199,
}

/// Every code, in numeric order.
const ALL_RESULTS: [gang_result; 17] = [
    gang_result::GANG_OK,
    gang_result::GANG_INVALID_QUANTITY,
    gang_result::GANG_INVALID_INVENTORY,
    gang_result::GANG_INVALID_REQUEST,
    gang_result::GANG_CONTRADICTORY,
    gang_result::GANG_INVALID_SCENARIO,
    gang_result::GANG_CONFLICT,
    gang_result::GANG_UNKNOWN_RESERVATION,
    gang_result::GANG_UNKNOWN_NODE,
    gang_result::GANG_NULL_ARGUMENT,
    gang_result::GANG_INVALID_UTF8,
    gang_result::GANG_INVALID_ARGUMENT,
    gang_result::GANG_OUT_OF_RANGE,
    gang_result::GANG_NOT_FOUND,
    gang_result::GANG_INVALID_HANDLE,
    gang_result::GANG_UNKNOWN_ERROR,
    gang_result::GANG_INTERNAL_ERROR,
];

impl gang_result {
    /// The stable snake_case name; for core kinds, the core's `ErrorKind::as_str()`.
    pub fn name(self) -> &'static str {
        let c = self.c_name();
        &c[..c.len() - 1]
    }

    /// [`gang_result::name`] with a trailing NUL.
    const fn c_name(self) -> &'static str {
        match self {
            gang_result::GANG_OK => "ok\0",
            gang_result::GANG_INVALID_QUANTITY => "invalid_quantity\0",
            gang_result::GANG_INVALID_INVENTORY => "invalid_inventory\0",
            gang_result::GANG_INVALID_REQUEST => "invalid_request\0",
            gang_result::GANG_CONTRADICTORY => "contradictory\0",
            gang_result::GANG_INVALID_SCENARIO => "invalid_scenario\0",
            gang_result::GANG_CONFLICT => "conflict\0",
            gang_result::GANG_UNKNOWN_RESERVATION => "unknown_reservation\0",
            gang_result::GANG_UNKNOWN_NODE => "unknown_node\0",
            gang_result::GANG_NULL_ARGUMENT => "null_argument\0",
            gang_result::GANG_INVALID_UTF8 => "invalid_utf8\0",
            gang_result::GANG_INVALID_ARGUMENT => "invalid_argument\0",
            gang_result::GANG_OUT_OF_RANGE => "out_of_range\0",
            gang_result::GANG_NOT_FOUND => "not_found\0",
            gang_result::GANG_INVALID_HANDLE => "invalid_handle\0",
            gang_result::GANG_UNKNOWN_ERROR => "unknown_error\0",
            gang_result::GANG_INTERNAL_ERROR => "internal_error\0",
        }
    }

    /// The code for a core error kind: the same number (`ErrorKind::code()`).
    pub fn from_kind(kind: ErrorKind) -> gang_result {
        match kind {
            ErrorKind::InvalidQuantity => gang_result::GANG_INVALID_QUANTITY,
            ErrorKind::InvalidInventory => gang_result::GANG_INVALID_INVENTORY,
            ErrorKind::InvalidRequest => gang_result::GANG_INVALID_REQUEST,
            ErrorKind::Contradictory => gang_result::GANG_CONTRADICTORY,
            ErrorKind::InvalidScenario => gang_result::GANG_INVALID_SCENARIO,
            ErrorKind::Conflict => gang_result::GANG_CONFLICT,
            ErrorKind::UnknownReservation => gang_result::GANG_UNKNOWN_RESERVATION,
            ErrorKind::UnknownNode => gang_result::GANG_UNKNOWN_NODE,
            // A kind added to the core after this binding was written: still an error,
            // never a success; the error object keeps the core's kind name.
            _ => gang_result::GANG_UNKNOWN_ERROR,
        }
    }
}

/// The stable snake_case name of a result code (`"invalid_request"`, `"null_argument"`);
/// `"unknown"` for a value that is not a code.
///
/// Ownership: returns a static NUL-terminated string; never NULL; do not free it.
#[no_mangle]
pub extern "C" fn gang_result_name(code: u32) -> *const c_char {
    let name = ALL_RESULTS
        .iter()
        .find(|r| **r as u32 == code)
        .map_or("unknown\0", |r| r.c_name());
    name.as_ptr().cast()
}

/// What a placement query answered (written by `gang_solver_place` and
/// `gang_inventory_place` on `GANG_OK`), and what the lifecycle operations answered
/// (`gang_inventory_replace`, `gang_inventory_spread`, `gang_admissions_at`). Zero is
/// never a status; each value keeps its meaning, new ones are only added.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_status {
    /// Every member (or each role's `min_count`) has a node: a `gang_placement` was
    /// returned. For the lifecycle: the replacements, replicas or queued gang were
    /// placed and are held.
    GANG_STATUS_PLACED = 1,
    /// Valid, but it does not fit now: a `gang_diagnosis` says why. For a spread: fewer
    /// than the required replicas fit, and nothing is held.
    GANG_STATUS_UNSCHEDULABLE = 2,
    /// The exact multi-role search ran out of budget before deciding (a placement may
    /// exist): a `gang_diagnosis` is returned. Never for single-role gangs.
    GANG_STATUS_UNDECIDED = 3,
    /// A replacement (`gang_inventory_replace`) cannot be placed inside the domain that
    /// binds the gang, even if other domains have room; nothing was applied and the lost
    /// members stay lost. The `gang_replacement` says which domain and what it lacks.
    GANG_STATUS_PENDING = 4,
    /// A gang of an admitted queue (`gang_inventory_admit`) was not placed and holds
    /// nothing: it does not fit now, or it waits behind the queue's head.
    GANG_STATUS_WAITING = 5,
}

/// How `gang_inventory_admit` treats a gang that does not fit.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_admit_mode {
    /// Strict FIFO: the first gang that waits blocks every later one.
    GANG_ADMIT_FIFO = 1,
    /// FIFO with backfill: a later gang may go ahead of the waiting head, but only on
    /// nodes where no role of the head fits a member now, so it never takes capacity the
    /// head could use.
    GANG_ADMIT_BACKFILL = 2,
}

/// Taint effects (`gang_node_add_taint`), and the effect a toleration matches
/// (`gang_role_add_toleration`, where `GANG_EFFECT_ANY` matches every effect).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_effect {
    /// Tolerations only: match every effect.
    GANG_EFFECT_ANY = 0,
    /// Untolerated, the node is excluded.
    GANG_EFFECT_NO_SCHEDULE = 1,
    /// Soft: never excludes a node.
    GANG_EFFECT_PREFER_NO_SCHEDULE = 2,
    /// Like `NoSchedule` for placement.
    GANG_EFFECT_NO_EXECUTE = 3,
}

/// Toleration operators (`gang_role_add_toleration`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_toleration_operator {
    /// Key and value must match.
    GANG_TOLERATION_EQUAL = 1,
    /// Key must match, any value; an empty key tolerates every taint.
    GANG_TOLERATION_EXISTS = 2,
}

/// Label requirement operators (`gang_role_add_match_expression`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_selector_operator {
    /// The label's value is one of the values.
    GANG_SELECTOR_IN = 1,
    /// The label is absent or its value is none of the values.
    GANG_SELECTOR_NOT_IN = 2,
    /// The label is present (no values).
    GANG_SELECTOR_EXISTS = 3,
    /// The label is absent (no values).
    GANG_SELECTOR_DOES_NOT_EXIST = 4,
}

/// How to choose among feasible domains (`gang_gang_set_policy`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum gang_policy {
    /// The tightest domain that fits (the default).
    GANG_POLICY_BEST_FIT = 1,
    /// The domain with the most spare member slots.
    GANG_POLICY_MOST_FREE = 2,
    /// Like best-fit; split placements get even counts per domain.
    GANG_POLICY_BALANCED = 3,
}

pub(crate) fn parse_taint_effect(v: u32) -> Option<TaintEffect> {
    match v {
        1 => Some(TaintEffect::NoSchedule),
        2 => Some(TaintEffect::PreferNoSchedule),
        3 => Some(TaintEffect::NoExecute),
        _ => None,
    }
}

pub(crate) fn parse_toleration_effect(v: u32) -> Option<Option<TaintEffect>> {
    if v == gang_effect::GANG_EFFECT_ANY as u32 {
        Some(None)
    } else {
        parse_taint_effect(v).map(Some)
    }
}

pub(crate) fn parse_toleration_operator(v: u32) -> Option<TolerationOperator> {
    match v {
        1 => Some(TolerationOperator::Equal),
        2 => Some(TolerationOperator::Exists),
        _ => None,
    }
}

pub(crate) fn parse_selector_operator(v: u32) -> Option<SelectorOperator> {
    match v {
        1 => Some(SelectorOperator::In),
        2 => Some(SelectorOperator::NotIn),
        3 => Some(SelectorOperator::Exists),
        4 => Some(SelectorOperator::DoesNotExist),
        _ => None,
    }
}

pub(crate) fn parse_admit_mode(v: u32) -> Option<AdmitMode> {
    match v {
        1 => Some(AdmitMode::Fifo),
        2 => Some(AdmitMode::Backfill),
        _ => None,
    }
}

pub(crate) fn parse_policy(v: u32) -> Option<Policy> {
    match v {
        1 => Some(Policy::BestFit),
        2 => Some(Policy::MostFree),
        3 => Some(Policy::Balanced),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn core_kinds_map_one_to_one() {
        for kind in [
            ErrorKind::InvalidQuantity,
            ErrorKind::InvalidInventory,
            ErrorKind::InvalidRequest,
            ErrorKind::Contradictory,
            ErrorKind::InvalidScenario,
            ErrorKind::Conflict,
            ErrorKind::UnknownReservation,
            ErrorKind::UnknownNode,
        ] {
            let r = gang_result::from_kind(kind);
            assert_eq!(r as u32, kind.code(), "{kind}");
            assert_eq!(r.name(), kind.as_str());
        }
    }

    #[test]
    fn codes_are_never_renumbered() {
        use gang_result::*;
        let table = [
            (GANG_OK, 0),
            (GANG_INVALID_QUANTITY, 1),
            (GANG_INVALID_INVENTORY, 2),
            (GANG_INVALID_REQUEST, 3),
            (GANG_CONTRADICTORY, 4),
            (GANG_INVALID_SCENARIO, 5),
            (GANG_CONFLICT, 6),
            (GANG_UNKNOWN_RESERVATION, 7),
            (GANG_UNKNOWN_NODE, 8),
            (GANG_NULL_ARGUMENT, 100),
            (GANG_INVALID_UTF8, 101),
            (GANG_INVALID_ARGUMENT, 102),
            (GANG_OUT_OF_RANGE, 103),
            (GANG_NOT_FOUND, 104),
            (GANG_INVALID_HANDLE, 105),
            (GANG_UNKNOWN_ERROR, 198),
            (GANG_INTERNAL_ERROR, 199),
        ];
        assert_eq!(table.len(), ALL_RESULTS.len());
        for (r, n) in table {
            assert_eq!(r as u32, n);
            let name = unsafe { CStr::from_ptr(gang_result_name(n)) };
            assert_eq!(name.to_str().unwrap(), r.name());
        }
        let unknown = unsafe { CStr::from_ptr(gang_result_name(77)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown");
        assert_eq!(gang_status::GANG_STATUS_PLACED as u32, 1);
        assert_eq!(gang_status::GANG_STATUS_UNSCHEDULABLE as u32, 2);
        assert_eq!(gang_status::GANG_STATUS_UNDECIDED as u32, 3);
        assert_eq!(gang_status::GANG_STATUS_PENDING as u32, 4);
        assert_eq!(gang_status::GANG_STATUS_WAITING as u32, 5);
        assert_eq!(gang_admit_mode::GANG_ADMIT_FIFO as u32, 1);
        assert_eq!(gang_admit_mode::GANG_ADMIT_BACKFILL as u32, 2);
    }

    #[test]
    fn enum_inputs_reject_unknown_values() {
        assert!(parse_policy(0).is_none() && parse_policy(4).is_none());
        assert_eq!(
            parse_policy(gang_policy::GANG_POLICY_BALANCED as u32),
            Some(Policy::Balanced)
        );
        assert!(parse_taint_effect(0).is_none());
        assert_eq!(parse_toleration_effect(0), Some(None));
        assert!(parse_toleration_effect(9).is_none());
        assert!(parse_toleration_operator(0).is_none());
        assert!(parse_selector_operator(5).is_none());
        assert!(parse_admit_mode(0).is_none() && parse_admit_mode(3).is_none());
        assert_eq!(
            parse_admit_mode(gang_admit_mode::GANG_ADMIT_BACKFILL as u32),
            Some(AdmitMode::Backfill)
        );
    }
}
