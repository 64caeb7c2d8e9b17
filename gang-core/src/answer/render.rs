//! The answers in words: the one place where a diagnosis, a level row and an exclusion
//! are worded. The data is in [`super::diagnosis`] and [`super::explanation`]; every
//! face (the CLI, Python's `str()`, C and Go's text) shows these words, and a face that
//! shows some parts elsewhere (a table of levels, a list of nodes by role) takes the
//! other sentences from [`Diagnosis::sentences`].

use std::fmt;

use super::diagnosis::{
    Diagnosis, DomainReport, ExclusionCause, ExclusionReason, FewerMembers, RoleFit, Shortfall,
};
use super::explanation::{LevelFit, LevelReport, LevelStatus};
use crate::model::names::short_level;
use crate::model::Quantity;

/// What one sentence of a [`Diagnosis`] is about, in the order the paragraph says them.
///
/// ```
/// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
/// use gang_core::diagnosis::Part;
/// let inv = Inventory::builder(Topology::new(["block", "rack"])?)
///     .node(NodeSpec::new("a1").label("block", "b1").label("rack", "a").capacity("gpu", 2))
///     .node(NodeSpec::new("b1").label("block", "b1").label("rack", "b").capacity("gpu", 2))
///     .build()?;
/// let gang = Gang::new("g").role(Role::new("w", 3).request("gpu", 1)).required("rack");
/// let d = inv.place(&gang)?.diagnosis().cloned().unwrap();
/// let parts: Vec<Part> = d.sentences().iter().map(|(p, _)| *p).collect();
/// assert_eq!(parts, [Part::Summary, Part::Best, Part::ClusterWide, Part::Relaxation]);
/// // The paragraph is the sentences, joined.
/// let joined: Vec<String> = d.sentences().into_iter().map(|(_, s)| s).collect();
/// assert_eq!(d.to_string(), joined.join(" "));
/// assert_eq!(d.sentences()[3].1, "Relaxing to block: block b1 fits all 3 now (across 2 racks).");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Part {
    /// What was asked and that it does not fit (and whether the search was complete).
    Summary,
    /// The best domain at the asked level, how much it takes and what it lacks.
    Best,
    /// How many of each role fit cluster-wide, ignoring topology.
    ClusterWide,
    /// Per slice level, how close the best domain comes.
    Slices,
    /// Requested resources no node offers.
    UnknownResources,
    /// The nodes excluded for a role, by cause.
    Excluded,
    /// What relaxing the required level would give now.
    Relaxation,
    /// What the best domain takes now with lower minimums (elastic gangs).
    FewerMembers,
}

impl Part {
    /// A stable snake_case name (`"fewer_members"`), as the bindings give it.
    ///
    /// ```
    /// use gang_core::diagnosis::Part;
    /// assert_eq!(Part::ClusterWide.as_str(), "cluster_wide");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Part::Summary => "summary",
            Part::Best => "best",
            Part::ClusterWide => "cluster_wide",
            Part::Slices => "slices",
            Part::UnknownResources => "unknown_resources",
            Part::Excluded => "excluded",
            Part::Relaxation => "relaxation",
            Part::FewerMembers => "fewer_members",
        }
    }
}

impl Diagnosis {
    /// The paragraph as sentences, each with what it is about; [`Display`](fmt::Display)
    /// joins them with spaces. See [`Part`].
    pub fn sentences(&self) -> Vec<(Part, String)> {
        let mut out = Vec::new();
        let level = self.level.as_deref().map(short_level);
        let demand: Vec<String> = self
            .roles
            .iter()
            .map(|r| format!("{} {}", r.needed, r.role))
            .collect();
        let mut s = format!("gang {} ({}) does not fit", self.gang, demand.join(", "));
        match (&self.level, level) {
            (Some(key), Some(short)) => s.push_str(&format!(" in one {short} ({key})")),
            _ => s.push_str(" in the cluster"),
        }
        if self.search_exhausted {
            s.push_str(" within the search budget; a placement may still exist");
            if let Some(p) = &self.search_progress {
                s.push_str(&format!(
                    " (candidate domains: {} ruled out, {} undecided; {} work units)",
                    p.ruled_out, p.undecided, p.work
                ));
            }
        }
        s.push('.');
        out.push((Part::Summary, s));
        if let Some(b) = &self.best {
            let head = match level {
                Some(short) => format!("Best {short}: {short} {} fits ", b.domain),
                None => "Cluster-wide ".to_owned(),
            };
            let verb = if level.is_some() { "" } else { " fit" };
            out.push((
                Part::Best,
                format!("{head}{}{verb}{}.", fits_list(&b.fits), shortfall(b)),
            ));
        }
        if level.is_some() {
            let fits: Vec<String> = self
                .roles
                .iter()
                .map(|r| {
                    // A role with no requests and no max_per_node fits without bound.
                    if r.cluster_fit >= u64::from(u32::MAX) {
                        format!("any number of {}", r.role)
                    } else {
                        format!("{} {}", r.cluster_fit, r.role)
                    }
                })
                .collect();
            out.push((
                Part::ClusterWide,
                format!("Cluster-wide, ignoring topology, {} fit.", fits.join(", ")),
            ));
        }
        for s in &self.slices {
            let l = short_level(&s.level);
            out.push((
                Part::Slices,
                format!(
                    "Slices of {} {} per {l}: the largest {l} ({}) holds {}; {} of {} slices fit.",
                    s.size,
                    s.role,
                    s.largest_domain,
                    s.largest,
                    s.available.min(s.needed),
                    s.needed
                ),
            ));
        }
        for r in &self.roles {
            if !r.unknown_resources.is_empty() {
                out.push((
                    Part::UnknownResources,
                    format!(
                        "No node offers {} (needed by {}).",
                        r.unknown_resources.join(", "),
                        r.role
                    ),
                ));
            }
            if !r.causes.is_empty() {
                let parts: Vec<String> = r.causes.iter().map(ToString::to_string).collect();
                out.push((
                    Part::Excluded,
                    format!("Nodes excluded for {}: {}.", r.role, parts.join(", ")),
                ));
            }
        }
        if let (Some(r), Some(orig)) = (&self.relaxation, level) {
            let needed: u32 = self.roles.iter().map(|r| r.needed).sum();
            // Only the parts that are there: "2 racks", "1 node without a rack label",
            // or both joined by "and" (never "0 racks and …").
            let mut parts = Vec::new();
            if r.spans > 0 || r.outside == 0 {
                parts.push(plural(r.spans, orig));
            }
            if r.outside > 0 {
                parts.push(format!(
                    "{} without a {orig} label",
                    plural(r.outside, "node")
                ));
            }
            let across = parts.join(" and ");
            out.push((
                Part::Relaxation,
                match &r.level {
                    Some(k) => format!(
                        "Relaxing to {l}: {l} {} fits all {needed} now (across {across}).",
                        r.domain,
                        l = short_level(k),
                    ),
                    None => format!(
                        "Without the topology constraint all {needed} fit now, across {across}."
                    ),
                },
            ));
        }
        if let Some(f) = &self.fewer_members {
            out.push((Part::FewerMembers, f.to_string()));
        }
        out
    }
}

impl fmt::Display for Diagnosis {
    /// One paragraph: what was asked, the closest domain and what it lacks, the
    /// cluster-wide fit, excluded nodes by cause, and what relaxing would give (the
    /// [`Diagnosis::sentences`], joined).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (_, s)) in self.sentences().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(s)?;
        }
        Ok(())
    }
}

impl fmt::Display for ExclusionCause {
    /// `3 with untolerated taint dedicated`, `1 short of nvidia.com/gpu now`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, key) = (self.nodes, self.key.as_str());
        let pods = key == crate::inventory::PODS;
        match self.reason {
            ExclusionReason::Cordoned => write!(f, "{n} cordoned"),
            ExclusionReason::Selector => write!(f, "{n} not matching the selector on {key}"),
            ExclusionReason::Taint => write!(f, "{n} with untolerated taint {key}"),
            ExclusionReason::MissingLabel => write!(f, "{n} missing label {key}"),
            ExclusionReason::TooSmall if pods => write!(f, "{n} allowing no pods"),
            ExclusionReason::TooSmall => write!(f, "{n} too small in {key}"),
            ExclusionReason::Full if pods => write!(f, "{n} out of pod slots now"),
            // No requested resource is short as the inventory stands, yet no member
            // fits: the node is outside what the request may use now (a domain
            // another replica of a spread holds), or per-node rounding: nothing to
            // name.
            ExclusionReason::Full if key.is_empty() => {
                write!(f, "{n} not available to a member now")
            }
            ExclusionReason::Full => write!(f, "{n} short of {key} now"),
        }
    }
}

impl fmt::Display for FewerMembers {
    /// `With a minimum of 3 instead of 4, rack a takes 3 members now.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.level {
            Some(l) => format!("{} {}", short_level(l), self.domain),
            None => "the cluster".to_owned(),
        };
        write!(
            f,
            "With a minimum of {} instead of {}, {place} takes {} members now.",
            self.minimum, self.needed, self.members
        )
    }
}

impl fmt::Display for LevelReport {
    /// What the level's best domain takes: `fits all 4 w`, `fits 3 of 4 w (short of
    /// nvidia.com/gpu)`, `fits 0 of 4 w: no node in it can take one member now`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.status == LevelStatus::Invalid {
            return write!(f, "not asked: {}", self.message.as_deref().unwrap_or(""));
        }
        let mut notes = Vec::new();
        if self.fits.is_empty() {
            f.write_str("no constrained role")?;
        } else if self.status == LevelStatus::Fits {
            let parts: Vec<String> = self.fits.iter().map(placed_text).collect();
            write!(f, "fits {}", parts.join(", "))?;
        } else {
            let parts: Vec<String> = self
                .fits
                .iter()
                .map(|x| fit_text(x.fits, x.needed, &x.role))
                .collect();
            write!(f, "fits {}", parts.join(", "))?;
            if self.fits.iter().all(|x| x.fits == 0) {
                f.write_str(": no node in it can take one member now")?;
            } else if let Some(why) = reason_words(self.reason, &self.short_of) {
                notes.push(why);
            }
        }
        if !self.dropped_slices.is_empty() {
            let dropped: Vec<String> = self
                .dropped_slices
                .iter()
                .map(|s| format!("{} of {}", short_level(&s.level), s.size))
                .collect();
            notes.push(format!("without slices {}", dropped.join(", ")));
        }
        if !notes.is_empty() {
            write!(f, " ({})", notes.join("; "))?;
        }
        Ok(())
    }
}

/// `all 4 w`, or `3 of 6 w (minimum 2)` for a role placed below its count.
fn placed_text(x: &LevelFit) -> String {
    if x.fits >= u64::from(x.count) {
        format!("all {} {}", x.count, x.role)
    } else {
        format!(
            "{} of {} {} (minimum {})",
            x.fits, x.count, x.role, x.needed
        )
    }
}

/// `3 of 4 w` (never more than needed).
fn fit_text(fits: u64, needed: u32, role: &str) -> String {
    format!("{} of {needed} {role}", fits.min(u64::from(needed)))
}

impl fmt::Display for RoleFit {
    /// `3 of 4 worker` (never more than needed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fit_text(self.fits, self.needed, &self.role))
    }
}

fn fits_list(fits: &[RoleFit]) -> String {
    let parts: Vec<String> = fits.iter().map(ToString::to_string).collect();
    parts.join(", ")
}

/// ` (short of nvidia.com/gpu)` or the reason, for the best domain's sentence.
fn shortfall(b: &DomainReport) -> String {
    // The summary already says when the search ran out.
    let reason =
        (!matches!(b.reason, Shortfall::Resources | Shortfall::Undecided)).then_some(b.reason);
    reason_words(reason, &b.short_of)
        .map(|w| format!(" ({w})"))
        .unwrap_or_default()
}

/// What a domain lacks, in words: the resources short (`pods` said as what it means,
/// the nodes' free pod slots), else why no single resource is.
fn reason_words(reason: Option<Shortfall>, short_of: &[String]) -> Option<String> {
    if !short_of.is_empty() {
        return Some(format!("short of {}", resource_words(short_of)));
    }
    match reason? {
        Shortfall::Resources => None,
        Shortfall::Undecided => Some("the search ran out of budget".into()),
        Shortfall::Fragmented => {
            Some("enough of each resource, but not together on the same nodes".into())
        }
        Shortfall::Slices => Some("room for the members, but not in whole slices".into()),
        Shortfall::RolesTogether => Some("each role fits alone, but not all roles together".into()),
    }
}

/// `1 rack`, `2 racks`.
fn plural(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Resources a domain is short of, in words (as the best domain's sentence says them):
/// `pods` said as what it means, the nodes' free pod slots.
pub(crate) fn resource_words(resources: &[String]) -> String {
    let words: Vec<&str> = resources
        .iter()
        .map(|r| {
            if r == crate::inventory::PODS {
                "pod slots"
            } else {
                r.as_str()
            }
        })
        .collect();
    words.join(", ")
}

/// The words of a preemption answer without a plan, before its diagnosis (that of the
/// gang with every candidate evicted): no eviction of lower-priority work makes it fit,
/// with what the face adds in `context` (how many running workloads have a lower
/// priority); or, `undecided`, the search ran out of work first.
///
/// ```
/// use gang_core::lifecycle::no_plan_words;
/// assert_eq!(no_plan_words(false, None), "no eviction of lower-priority work makes it fit; even with all of it gone");
/// assert_eq!(
///     no_plan_words(false, Some("1 of 4 running workloads have a lower priority than 50")),
///     "no eviction of lower-priority work makes it fit (1 of 4 running workloads have a lower priority than 50); even with all of them gone",
/// );
/// assert_eq!(no_plan_words(true, None), "the search ran out of work before finding a plan");
/// ```
pub fn no_plan_words(undecided: bool, context: Option<&str>) -> String {
    match (undecided, context) {
        (true, _) => "the search ran out of work before finding a plan".to_owned(),
        (false, None) => {
            "no eviction of lower-priority work makes it fit; even with all of it gone".to_owned()
        }
        (false, Some(c)) => {
            format!(
                "no eviction of lower-priority work makes it fit ({c}); even with all of them gone"
            )
        }
    }
}

/// Said after a plan's words when the search ran out of work before proving it least.
pub const INCOMPLETE_PLAN: &str =
    "the search ran out of work first: a plan that evicts less may exist";

/// A preemption plan in words, as every face says it: what to evict (each victim with
/// its priority and what it holds of the cost resources, in their order) and where the
/// gang goes then. `victims` are `(name, priority, amounts evicted)`, in the plan's
/// order ([`Preemption::victims`](crate::lifecycle::Preemption::victims)); `level`
/// and `domain` are the placement's ([`Placement::level`](crate::Placement::level),
/// [`Placement::domain_path`](crate::Placement::domain_path)).
///
/// ```
/// use gang_core::lifecycle::preemption_words;
/// use gang_core::Quantity;
/// let gpus = |n| vec![("nvidia.com/gpu".to_owned(), Quantity::from_units(n))];
/// let (a, b) = (gpus(8), gpus(2));
/// let victims = [("training-a", 100, a.as_slice()), ("eval-b", 50, b.as_slice())];
/// let cost = ["nvidia.com/gpu".to_owned()];
/// assert_eq!(
///     preemption_words(victims, &cost, Some("topology.example.com/rack"), "r7"),
///     "evict training-a (priority 100, 8 nvidia.com/gpu) and eval-b (priority 50, 2 nvidia.com/gpu) in rack r7"
/// );
/// // Nothing to evict: it fits now.
/// assert_eq!(preemption_words([], &cost, None, ""), "nothing to evict: it fits now across the cluster");
/// ```
pub fn preemption_words<'a>(
    victims: impl IntoIterator<Item = (&'a str, i32, &'a [(String, Quantity)])>,
    resources: &[String],
    level: Option<&str>,
    domain: &str,
) -> String {
    let place = match level {
        Some(l) => format!("in {} {domain}", short_level(l)),
        None => "across the cluster".to_owned(),
    };
    let words: Vec<String> = victims
        .into_iter()
        .map(|(name, priority, evicted)| {
            let mut held = vec![format!("priority {priority}")];
            for r in resources {
                let q = evicted
                    .iter()
                    .filter(|(res, _)| res == r)
                    .fold(0u64, |a, (_, q)| a.saturating_add(q.millis()));
                if q > 0 {
                    held.push(format!("{} {r}", Quantity::from_millis(q).human(r)));
                }
            }
            format!("{name} ({})", held.join(", "))
        })
        .collect();
    match words.split_last() {
        None => format!("nothing to evict: it fits now {place}"),
        Some((last, [])) => format!("evict {last} {place}"),
        Some((last, rest)) => format!("evict {} and {last} {place}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use crate::answer::diagnosis::{ExclusionCause, ExclusionReason};

    #[test]
    fn a_full_node_with_no_resource_short_names_none() {
        let cause = |key: &str| ExclusionCause {
            reason: ExclusionReason::Full,
            key: key.to_owned(),
            nodes: 4,
        };
        assert_eq!(cause("cpu").to_string(), "4 short of cpu now");
        assert_eq!(cause("").to_string(), "4 not available to a member now");
        assert_eq!(cause("pods").to_string(), "4 out of pod slots now");
    }
}
