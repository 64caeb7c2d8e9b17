//! Everything a face shows about one gang on one inventory, placed or not: the answer,
//! each role's nodes by cause, and the best domain of every level. Data only; the
//! wording is in [`super::render`], the computation in `solve/explain.rs`.

use super::diagnosis::{RoleReport, Shortfall};
use super::Outcome;
use crate::model::request::Slice;

/// The answer to "where would this gang go, and if nowhere, why?", with what an
/// explaining face (`gang explain`, a scheduler's event) shows beside it. Built by
/// [`Inventory::explain`](crate::Inventory::explain).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology, HOSTNAME_LEVEL};
/// use gang_core::diagnosis::LevelStatus;
/// const GPU: &str = "nvidia.com/gpu";
/// let node = |name: &str, rack: &str, free: i64| {
///     NodeSpec::new(name).label("block", "b1").label("rack", rack).capacity(GPU, 8).used(GPU, 8 - free)
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "a", 2), node("a2", "a", 1), node("b1", "b", 2)])
///     .build()?;
/// let gang = Gang::new("train").role(Role::new("w", 4).request(GPU, 1)).required("rack");
/// let e = inv.explain(&gang)?;
/// assert!(!e.outcome.is_placed());
/// let rows: Vec<(&str, LevelStatus, &str, String)> = e
///     .levels
///     .iter()
///     .map(|l| (l.level.as_str(), l.status, l.domain.as_str(), l.to_string()))
///     .collect();
/// assert_eq!(rows, [
///     ("block", LevelStatus::Fits, "b1", "fits all 4 w".to_owned()),
///     ("rack", LevelStatus::Short, "b1/a", "fits 3 of 4 w (short of nvidia.com/gpu)".to_owned()),
///     (HOSTNAME_LEVEL, LevelStatus::Short, "a1", "fits 2 of 4 w (short of nvidia.com/gpu)".to_owned()),
/// ]);
/// assert!(e.levels[1].requested && !e.levels[0].requested);
/// assert_eq!(e.roles[0].fitting_nodes, 3);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Explanation {
    /// The answer, as [`Inventory::place`](crate::Inventory::place) gives it.
    pub outcome: Outcome,
    /// Per role: demand, cluster-wide fit, the nodes excluded by cause (the same as the
    /// diagnosis's when the gang does not fit).
    pub roles: Vec<RoleReport>,
    /// The best domain of every label level, outermost first, then of one node: the
    /// gang asked with that level required.
    pub levels: Vec<LevelReport>,
}

/// How the best domain of one level does: the gang asked with that level required
/// (slices of coarser levels left out).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct LevelReport {
    /// Level key ([`HOSTNAME_LEVEL`](crate::HOSTNAME_LEVEL) for the node row).
    pub level: String,
    /// The level the gang asks for (required, else preferred).
    pub requested: bool,
    /// Whether some domain of the level holds the gang.
    pub status: LevelStatus,
    /// The domain's path: where it would go, or the closest one (at the node level, the
    /// node's path when it fits, its name when it is the closest; empty when there is
    /// none).
    pub domain: String,
    /// Per constrained role: members placed there, or that fit.
    pub fits: Vec<LevelFit>,
    /// Resources short in that domain.
    pub short_of: Vec<String>,
    /// Why, when no single resource is short (never [`Shortfall::Resources`]).
    pub reason: Option<Shortfall>,
    /// Slices of coarser levels left out to ask about this level.
    pub dropped_slices: Vec<Slice>,
    /// For [`LevelStatus::Invalid`]: why the gang cannot be asked at this level.
    pub message: Option<String>,
}

/// Whether a level holds the gang. See [`LevelReport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum LevelStatus {
    /// Some domain holds the gang.
    Fits,
    /// None does.
    Short,
    /// The exact search ran out of budget.
    Undecided,
    /// The gang cannot be asked at this level (its slices do not fit in it).
    Invalid,
}

impl LevelStatus {
    /// A stable snake_case name (`"fits"`), as in JSON and the bindings.
    ///
    /// ```
    /// use gang_core::diagnosis::LevelStatus;
    /// assert_eq!(LevelStatus::Undecided.as_str(), "undecided");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            LevelStatus::Fits => "fits",
            LevelStatus::Short => "short",
            LevelStatus::Undecided => "undecided",
            LevelStatus::Invalid => "invalid",
        }
    }
}

/// Members of one role in the domain of a [`LevelReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct LevelFit {
    /// Role name.
    pub role: String,
    /// Members placed there (it fits) or that fit (at most `count`).
    pub fits: u64,
    /// Members needed (the role's minimum).
    pub needed: u32,
    /// Members the role has.
    pub count: u32,
}
