//! Why a gang does not fit: structured data (its wording is in [`super::render`]).

/// Why a valid gang cannot be placed now.
///
/// Data for programs, and a [`Display`](std::fmt::Display) paragraph for people:
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 3))
///     .node(NodeSpec::new("b1").label("rack", "b").capacity("nvidia.com/gpu", 2))
///     .node(NodeSpec::new("b2").label("rack", "b").capacity("nvidia.com/gpu", 2))
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("worker", 5).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
/// let best = d.best.as_ref().unwrap();
/// assert_eq!((best.domain.as_str(), best.fits[0].fits), ("b", 4));
/// assert_eq!(d.roles[0].cluster_fit, 7);
/// assert!(d.to_string().contains("rack b fits 4 of 5 worker"));
/// assert!(d.to_string().contains("short of nvidia.com/gpu"));
/// assert!(!d.search_exhausted && d.relaxation.is_some()); // 7 fit across both racks
/// // Four fit in rack b: a placement, so no diagnosis.
/// let four = Gang::new("train").role(Role::new("worker", 4).request("nvidia.com/gpu", 1));
/// assert!(inv.place(&four.required("rack"))?.diagnosis().is_none());
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct Diagnosis {
    /// Gang name.
    pub gang: String,
    /// The level asked for (required, else preferred); `None` when unconstrained.
    pub level: Option<String>,
    /// Per role: demand, cluster-wide fit, excluded nodes.
    pub roles: Vec<RoleReport>,
    /// The domain at `level` closest to fitting (the whole cluster when `level` is `None`).
    pub best: Option<DomainReport>,
    /// What relaxing the required level would give now, if anything fits then.
    pub relaxation: Option<Relaxation>,
    /// For an elastic gang (a role with a `min_count`): what the best domain takes now
    /// with each constrained role's minimum lowered to what that domain holds.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub fewer_members: Option<FewerMembers>,
    /// Per slice level, how close the best domain comes.
    pub slices: Vec<SliceReport>,
    /// The exact multi-role search ran out of budget: a placement may exist.
    pub search_exhausted: bool,
    /// How far the query got before its limits stopped it (only when
    /// `search_exhausted`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub search_progress: Option<SearchProgress>,
}

/// How far a multi-role query got before its [`Limits`](crate::Limits) stopped it: the
/// candidate domains (at every level tried) it proved unable to hold the gang, those it
/// could not decide, and the work it spent.
///
/// ```
/// use gang_core::{Gang, Inventory, Limits, NodeSpec, Outcome, Role, Solver, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .nodes((1..=3).map(|i| NodeSpec::new(format!("n{i}")).label("rack", "a").capacity("gpu", 8)))
///     .build()?;
/// // Two 5-GPU and four 3-GPU members: greedy packing fails, the exact search does not.
/// let gang = Gang::new("g")
///     .role(Role::new("a", 2).request("gpu", 5))
///     .role(Role::new("b", 4).request("gpu", 3))
///     .required("rack");
/// let c = inv.compile(&gang)?;
/// let out = inv.place_with(&mut Solver::with_limits(Limits::work(0)), &c)?;
/// let Outcome::Undecided(d) = out else { panic!() };
/// let p = d.search_progress.unwrap();
/// assert_eq!((p.ruled_out, p.undecided, p.work), (0, 1, 0)); // rack a: not even looked at
/// assert!(d.to_string().contains("1 undecided"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct SearchProgress {
    /// Candidate domains proven unable to hold the gang.
    pub ruled_out: u32,
    /// Candidate domains left undecided.
    pub undecided: u32,
    /// Work units spent.
    pub work: u64,
}

/// One role's side of a [`Diagnosis`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 4))
///     .node(NodeSpec::new("b1").label("rack", "b").capacity("nvidia.com/gpu", 4))
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("launcher", 1).request("cpu", 1).unconstrained()) // no node has cpu
///     .role(Role::new("worker", 8).min_count(6).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
/// let (launcher, worker) = (&d.roles[0], &d.roles[1]);
/// assert_eq!(launcher.unknown_resources, ["cpu"]);
/// assert_eq!((launcher.constrained, launcher.cluster_fit), (false, 0));
/// assert_eq!((worker.role.as_str(), worker.count, worker.needed), ("worker", 8, 6));
/// assert_eq!((worker.cluster_fit, worker.fitting_nodes), (8, 2));
/// assert_eq!(worker.excluded.total(), 0);
/// assert!(d.to_string().contains("No node offers cpu (needed by launcher)"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct RoleReport {
    /// Role name.
    pub role: String,
    /// Members requested.
    pub count: u32,
    /// Members required (`min_count`).
    pub needed: u32,
    /// Bound by the topology constraint.
    pub constrained: bool,
    /// Members of this role that fit cluster-wide, ignoring topology and other roles.
    pub cluster_fit: u64,
    /// Nodes that could take at least one member.
    pub fitting_nodes: u32,
    /// Nodes that cannot, by first reason.
    pub excluded: Exclusions,
    /// The same nodes by first reason and what it is about (the taint's key, the
    /// selector's label key, the level, the resource), in the order of [`Exclusions`]
    /// and then by key; the counts of one reason add up to its count in `excluded`
    /// (`too_small` is split into [`ExclusionReason::TooSmall`] and
    /// [`ExclusionReason::Full`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub causes: Vec<ExclusionCause>,
    /// Requested resources that no node offers.
    pub unknown_resources: Vec<String>,
}

/// Nodes excluded for a role, each counted once under its first reason in this order.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Taint, TaintEffect, Topology};
/// use gang_core::diagnosis::Exclusions;
/// const GPU: &str = "nvidia.com/gpu";
/// const PRODUCT: &str = "nvidia.com/gpu.product";
/// let h200 = |n: &str| {
///     NodeSpec::new(n).label("rack", "a").label(PRODUCT, "H200").capacity(GPU, 8)
/// };
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(h200("a1").cordoned())
///     .node(h200("a2").label(PRODUCT, "A100"))
///     .node(h200("a3").taint(Taint::new("dedicated", "serving", TaintEffect::NoSchedule)))
///     .node(NodeSpec::new("x1").label(PRODUCT, "H200").capacity(GPU, 8)) // no rack label
///     .node(h200("a4").used(GPU, 8))
///     .node(h200("a5"))
///     .build()?;
/// let worker = Role::new("worker", 9).request(GPU, 1).selector(PRODUCT, "H200");
/// let d = inv.place(&Gang::new("train").role(worker).required("rack"))?;
/// let report = &d.diagnosis().unwrap().roles[0];
/// let e = report.excluded;
/// assert_eq!([e.cordoned, e.selector, e.taint, e.missing_label, e.too_small], [1; 5]);
/// assert_eq!(report.excluded.total(), 5);
/// assert_eq!(report.fitting_nodes, 1); // a5
/// assert_eq!(Exclusions::default().total(), 0);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct Exclusions {
    /// Unschedulable (cordoned).
    pub cordoned: u32,
    /// Labels do not match the node selector or match expressions.
    pub selector: u32,
    /// A `NoSchedule`/`NoExecute` taint the role does not tolerate.
    pub taint: u32,
    /// Lacks the label of the requested level (or of a slice level): outside every domain.
    pub missing_label: u32,
    /// Eligible, but too little free capacity for one member.
    pub too_small: u32,
}

impl Exclusions {
    /// Total excluded nodes, over all reasons. See [`Exclusions`].
    pub fn total(&self) -> u32 {
        self.cordoned + self.selector + self.taint + self.missing_label + self.too_small
    }
}

/// Nodes excluded for a role for one reason about one thing: `3` nodes with the
/// untolerated taint `dedicated`, `1` node short of `nvidia.com/gpu` now.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Taint, TaintEffect, Topology};
/// use gang_core::diagnosis::{ExclusionCause, ExclusionReason};
/// const GPU: &str = "nvidia.com/gpu";
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity(GPU, 8).used(GPU, 8))
///     .node(NodeSpec::new("a2").label("rack", "a").capacity(GPU, 2))
///     .node(NodeSpec::new("a3").label("rack", "a").capacity(GPU, 8)
///         .taint(Taint::new("dedicated", "serving", TaintEffect::NoSchedule)))
///     .build()?;
/// let d = inv.place(&Gang::new("g").role(Role::new("w", 2).request(GPU, 4)).required("rack"))?;
/// let d = d.diagnosis().unwrap();
/// let causes: Vec<(ExclusionReason, &str, u32)> =
///     d.roles[0].causes.iter().map(|c| (c.reason, c.key.as_str(), c.nodes)).collect();
/// assert_eq!(causes, [
///     (ExclusionReason::Taint, "dedicated", 1),
///     (ExclusionReason::TooSmall, GPU, 1), // a2: 2 GPUs, never 4
///     (ExclusionReason::Full, GPU, 1),     // a1: 8 GPUs, all in use now
/// ]);
/// assert_eq!(d.roles[0].causes[2].to_string(), "1 short of nvidia.com/gpu now");
/// assert!(d.to_string().contains(
///     "Nodes excluded for w: 1 with untolerated taint dedicated, \
///      1 too small in nvidia.com/gpu, 1 short of nvidia.com/gpu now."), "{d}");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct ExclusionCause {
    /// The first reason that applies to these nodes.
    pub reason: ExclusionReason,
    /// What it is about: the taint key, the selector's label key, the missing level's
    /// key, the resource (`pods`: pod slots); empty for cordoned nodes.
    pub key: String,
    /// Nodes.
    pub nodes: u32,
}

/// Why a node cannot take a member of a role, in the order reasons are tried (each
/// node is counted under the first that applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ExclusionReason {
    /// Unschedulable (cordoned; a face may say why: not ready, outside a flavor).
    Cordoned,
    /// Fails the node selector or a match expression on this label key.
    Selector,
    /// Has a `NoSchedule`/`NoExecute` taint of this key that the role does not tolerate.
    Taint,
    /// Lacks the label of this level: outside every domain of it.
    MissingLabel,
    /// Its capacity of this resource is below one member's request: it never fits one.
    TooSmall,
    /// It could hold a member when empty, but too little of this resource is free now.
    Full,
}

impl ExclusionReason {
    /// A stable snake_case name (`"too_small"`), as in JSON and the bindings.
    ///
    /// ```
    /// use gang_core::diagnosis::ExclusionReason;
    /// assert_eq!(ExclusionReason::MissingLabel.as_str(), "missing_label");
    /// assert_eq!(ExclusionReason::Full.as_str(), "full");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ExclusionReason::Cordoned => "cordoned",
            ExclusionReason::Selector => "selector",
            ExclusionReason::Taint => "taint",
            ExclusionReason::MissingLabel => "missing_label",
            ExclusionReason::TooSmall => "too_small",
            ExclusionReason::Full => "full",
        }
    }
}

/// The elastic answer of a [`Diagnosis`]: with each constrained role's minimum lowered
/// to what the best domain holds, where the gang goes now and how many members it gets.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// const GPU: &str = "nvidia.com/gpu";
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity(GPU, 3))
///     .node(NodeSpec::new("b1").label("rack", "b").capacity(GPU, 2))
///     .build()?;
/// let elastic = Role::new("w", 6).min_count(4).request(GPU, 1);
/// let d = inv.place(&Gang::new("g").role(elastic).required("rack"))?;
/// let d = d.diagnosis().unwrap();
/// let f = d.fewer_members.as_ref().unwrap();
/// assert_eq!((f.level.as_deref(), f.domain.as_str(), f.members, f.minimum), (Some("rack"), "a", 3, 3));
/// assert!(d.to_string().contains("With a minimum of 3 instead of 4, rack a takes 3 members now."), "{d}");
/// // A rigid gang (no min_count) gets no such answer.
/// let rigid = Role::new("w", 4).request(GPU, 1);
/// let d = inv.place(&Gang::new("g").role(rigid).required("rack"))?;
/// assert_eq!(d.diagnosis().unwrap().fewer_members, None);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct FewerMembers {
    /// The level it would be placed at (`None`: cluster-wide).
    pub level: Option<String>,
    /// The domain path (empty cluster-wide).
    pub domain: String,
    /// Members it would place.
    pub members: u64,
    /// The lowered minimum, over all roles.
    pub minimum: u64,
    /// The minimum asked for, over all roles.
    pub needed: u64,
}

/// How much of the gang one domain can take: the best domain of a [`Diagnosis`].
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::{RoleFit, Shortfall};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 3))
///     .node(NodeSpec::new("b1").label("rack", "b").capacity("nvidia.com/gpu", 2))
///     .node(NodeSpec::new("b2").label("rack", "b").capacity("nvidia.com/gpu", 2))
///     .build()?;
/// let gang = |n| Gang::new("train").role(Role::new("worker", n).request("nvidia.com/gpu", 1));
/// assert!(inv.place(&gang(4).required("rack"))?.is_placed());
/// let d = inv.place(&gang(5).required("rack"))?.diagnosis().cloned().unwrap();
/// let best = d.best.unwrap();
/// assert_eq!((best.level.as_deref(), best.domain.as_str()), (Some("rack"), "b"));
/// let fit = &best.fits[0];
/// assert_eq!((best.fits.len(), fit.role.as_str(), fit.fits, fit.needed), (1, "worker", 4, 5));
/// assert_eq!(best.short_of, ["nvidia.com/gpu"]);
/// assert_eq!(best.reason, Shortfall::Resources);
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct DomainReport {
    /// Level key (`None`: the whole cluster).
    pub level: Option<String>,
    /// Domain path (`"b1/r2"`; empty for the cluster).
    pub domain: String,
    /// Per constrained role (every role when cluster-wide).
    pub fits: Vec<RoleFit>,
    /// Resources that are short for some role on their own.
    pub short_of: Vec<String>,
    /// Why, when no single resource is short.
    pub reason: Shortfall,
}

/// Members of one role that fit in a domain (one per constrained role of a
/// [`DomainReport`] or [`PendingDomain`](crate::lifecycle::PendingDomain)).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::RoleFit;
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 8)
///         .capacity("cpu", 8))
///     .build()?;
/// let gang = Gang::new("train")
///     .role(Role::new("launcher", 1).request("cpu", 4))
///     .role(Role::new("worker", 10).request("nvidia.com/gpu", 1))
///     .required("rack");
/// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
/// let fits = d.best.unwrap().fits;
/// let shape = |f: &RoleFit| (f.role.clone(), f.fits, f.needed);
/// assert_eq!(shape(&fits[0]), ("launcher".into(), 2, 1));
/// assert_eq!(shape(&fits[1]), ("worker".into(), 8, 10));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct RoleFit {
    /// Role name.
    pub role: String,
    /// Members that fit (single-role, slices respected).
    pub fits: u64,
    /// Members required.
    pub needed: u32,
}

/// The kind of shortfall in the best domain (see [`DomainReport::reason`]; slices are
/// shown in [`SliceReport`]).
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::Shortfall;
/// const GPU: &str = "nvidia.com/gpu";
/// let reason = |inv: &Inventory, gang: &Gang| -> Result<_, gang_core::Error> {
///     Ok(inv.place(gang)?.diagnosis().and_then(|d| d.best.as_ref()).map(|b| b.reason))
/// };
/// // GPUs on one node, CPUs on another: enough of each, never together.
/// let split = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("gpu1").capacity(GPU, 8).capacity("cpu", 0))
///     .node(NodeSpec::new("cpu1").capacity("cpu", 96))
///     .build()?;
/// let both = Gang::new("g").role(Role::new("w", 2).request(GPU, 1).request("cpu", 4));
/// assert_eq!(reason(&split, &both)?, Some(Shortfall::Fragmented));
/// let gpus_only = Gang::new("g").role(Role::new("w", 2).request(GPU, 1));
/// assert_eq!(reason(&split, &gpus_only)?, None); // placed: no diagnosis
///
/// // One 8-GPU node: a 6-GPU and a 4-GPU member each fit, not both.
/// let one = Inventory::builder(Topology::flat())
///     .node(NodeSpec::new("n1").capacity(GPU, 8))
///     .build()?;
/// let pair = Gang::new("g")
///     .role(Role::new("a", 1).request(GPU, 6))
///     .role(Role::new("b", 1).request(GPU, 4));
/// assert_eq!(reason(&one, &pair)?, Some(Shortfall::RolesTogether));
/// let nine = Gang::new("g").role(Role::new("w", 9).request(GPU, 1));
/// assert_eq!(reason(&one, &nine)?, Some(Shortfall::Resources));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Shortfall {
    /// Some resource is short (see `short_of`).
    Resources,
    /// Enough of each resource, but not together on the same nodes.
    Fragmented,
    /// Enough room for the members, but not in whole slices.
    Slices,
    /// Each role fits on its own, but not all roles together.
    RolesTogether,
    /// The exact search ran out of budget before deciding.
    Undecided,
}

impl Shortfall {
    /// A stable snake_case name (`"roles_together"`), as in JSON and the bindings.
    ///
    /// ```
    /// use gang_core::diagnosis::Shortfall;
    /// assert_eq!(Shortfall::RolesTogether.as_str(), "roles_together");
    /// assert_eq!(Shortfall::Resources.as_str(), "resources");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Shortfall::Resources => "resources",
            Shortfall::Fragmented => "fragmented",
            Shortfall::Slices => "slices",
            Shortfall::RolesTogether => "roles_together",
            Shortfall::Undecided => "undecided",
        }
    }
}

/// What relaxing the required level would give now: the tightest coarser level at
/// which the gang fits.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::Relaxation;
/// let node = |name: &str, block: &str, rack: &str, free: i64| {
///     NodeSpec::new(name)
///         .label("block", block)
///         .label("rack", rack)
///         .capacity("nvidia.com/gpu", 8)
///         .used("nvidia.com/gpu", 8 - free)
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "b1", "a", 3), node("b1", "b1", "b", 2)])
///     .nodes([node("c1", "b2", "c", 2), node("d1", "b2", "d", 2)])
///     .build()?;
/// let relax = |n| -> Result<_, gang_core::Error> {
///     let gang = Gang::new("g").role(Role::new("w", n).request("nvidia.com/gpu", 1));
///     Ok(inv.place(&gang.required("rack"))?.diagnosis().cloned().unwrap().relaxation)
/// };
/// let shape = |r: Relaxation| (r.level, r.domain, r.spans, r.outside);
/// // Block b1: 3 + 2 free.
/// assert_eq!(relax(5)?.map(shape), Some((Some("block".into()), "b1".into(), 2, 0)));
/// // All four racks together.
/// assert_eq!(relax(9)?.map(shape), Some((None, String::new(), 4, 0)));
/// assert_eq!(relax(10)?, None); // only 9 GPUs are free in the whole cluster
/// # Ok::<(), gang_core::Error>(())
/// ```
///
/// Members on nodes that lack the required level's label are in no domain of it:
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 4))
///     .node(NodeSpec::new("x1").capacity("nvidia.com/gpu", 4)) // no rack label
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 6).request("nvidia.com/gpu", 1)).required("rack");
/// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
/// let r = d.relaxation.as_ref().unwrap();
/// assert_eq!(r.level, None);
/// assert_eq!((r.spans, r.outside), (1, 1));
/// assert!(d.to_string().contains("across 1 rack and 1 node without a rack label"), "{d}");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct Relaxation {
    /// The tightest coarser level that fits (`None`: only without any topology).
    pub level: Option<String>,
    /// The domain that would be used (empty when cluster-wide).
    pub domain: String,
    /// How many domains of the originally required level the gang would span.
    pub spans: u32,
    /// Nodes it would use that lack the required level's label (in no domain of it).
    pub outside: u32,
}

/// How close the best domain comes to holding whole slices of one level.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::{Shortfall, SliceReport};
/// let node = |name: &str, rack: &str, free: i64| {
///     NodeSpec::new(name)
///         .label("block", "b1")
///         .label("rack", rack)
///         .capacity("nvidia.com/gpu", 8)
///         .used("nvidia.com/gpu", 8 - free)
/// };
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .nodes([node("a1", "a", 1), node("a2", "a", 2), node("b1", "b", 1)])
///     .build()?;
/// // Four workers in one block, in slices of two per rack: rack a has 3 free, rack b 1.
/// let gang = |slice| {
///     Gang::new("g")
///         .role(Role::new("worker", 4).request("nvidia.com/gpu", 1))
///         .required("block")
///         .slice("rack", slice)
/// };
/// assert!(inv.place(&gang(1))?.is_placed());
/// let d = inv.place(&gang(2))?.diagnosis().cloned().unwrap();
/// assert_eq!(d.best.as_ref().unwrap().reason, Shortfall::Slices);
/// let s = &d.slices[0];
/// assert_eq!((d.slices.len(), s.level.as_str(), s.size, s.role.as_str()), (1, "rack", 2, "worker"));
/// assert_eq!((s.largest, s.largest_domain.as_str()), (3, "b1/a"));
/// assert_eq!((s.available, s.needed), (1, 2));
/// assert!(d.to_string().contains("the largest rack (b1/a) holds 3; 1 of 2 slices fit"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct SliceReport {
    /// Slice level key.
    pub level: String,
    /// Members per slice.
    pub size: u32,
    /// The role the numbers are about (the first constrained role).
    pub role: String,
    /// Most members any one domain of the slice level can take (ignoring slices).
    pub largest: u64,
    /// That domain's path.
    pub largest_domain: String,
    /// Whole slices of this level available in the best domain.
    pub available: u64,
    /// Slices of this level the role needs.
    pub needed: u64,
}
