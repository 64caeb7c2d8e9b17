//! Answers: what a placement query returns. A [`Placement`] when the gang fits, a
//! [`Diagnosis`] (data) when it does not, and its wording in [`render`].

pub(crate) mod diagnosis;
pub(crate) mod explanation;
pub(crate) mod placement;
pub(crate) mod render;

use diagnosis::Diagnosis;
use placement::Placement;

/// What a placement query answers.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Outcome, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 2))
///     .build()?;
/// let gang = |n| Gang::new("g").role(Role::new("w", n).request("gpu", 1));
/// match inv.place(&gang(4))? {
///     Outcome::Placed(p) => panic!("only 2 GPUs: {p}"),
///     Outcome::Unschedulable(d) => assert!(d.to_string().contains("2 of 4")),
///     Outcome::Undecided(_) => unreachable!("single-role gangs are always decided"),
/// }
/// let two = inv.place(&gang(2))?;
/// assert!(two.is_placed() && two.diagnosis().is_none());
/// assert_eq!((two.status(), two.placement().unwrap().member_count()), ("placed", 2));
/// let four = inv.place(&gang(4))?;
/// assert!(!four.is_placed() && four.placement().is_none());
/// assert_eq!((four.status(), four.diagnosis().unwrap().gang.as_str()), ("unschedulable", "g"));
/// # Ok::<(), gang_core::Error>(())
/// ```
///
/// [`Solver`](crate::Solver) shows [`Outcome::Undecided`].
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// Every member (or at least each role's `min_count`) has a node.
    Placed(Placement),
    /// Valid, but it does not fit now; the diagnosis says why.
    Unschedulable(Diagnosis),
    /// The exact multi-role search ran out of budget before deciding: a placement may
    /// exist. Never reported for single-role gangs.
    Undecided(Diagnosis),
}

impl Outcome {
    /// Whether the gang was placed. See [`Outcome`].
    pub fn is_placed(&self) -> bool {
        matches!(self, Outcome::Placed(_))
    }

    /// The placement, if placed. See [`Outcome`].
    pub fn placement(&self) -> Option<&Placement> {
        match self {
            Outcome::Placed(p) => Some(p),
            _ => None,
        }
    }

    /// The diagnosis, if not placed (unschedulable or undecided). See [`Outcome`].
    pub fn diagnosis(&self) -> Option<&Diagnosis> {
        match self {
            Outcome::Placed(_) => None,
            Outcome::Unschedulable(d) | Outcome::Undecided(d) => Some(d),
        }
    }

    /// `"placed"`, `"unschedulable"` or `"undecided"`, as in scenario files. See
    /// [`Outcome`].
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Placed(_) => "placed",
            Outcome::Unschedulable(_) => "unschedulable",
            Outcome::Undecided(_) => "undecided",
        }
    }
}
