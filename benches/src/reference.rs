//! The reference placer: what a peer scheduler does, a full scan per call.
//!
//! It keeps nodes as plain records (names, string labels, string-keyed free amounts,
//! taints) and, on every call, recomputes every node's fit and every domain's sum from
//! scratch, then picks a domain. It implements the *single-role* semantics of
//! `gang-core` (README "Semantics") independently of the core's data
//! structures, so it serves both as the correctness oracle for the domain choice and as
//! the speed baseline:
//!
//! - a node's fit is the least over requested resources of `free / request`, capped by
//!   `max_per_node`; zero when cordoned, when the selector does not match, or when a
//!   `NoSchedule`/`NoExecute` taint is not tolerated;
//! - a node belongs to a domain of depth `d` when it carries the labels of the first
//!   `d` levels; depth 0 is the whole cluster (every node);
//! - levels tried: `required` only → that level; `preferred` → that level, then one level
//!   up at a time, down to `required` if given, else to the whole cluster; neither (or an
//!   unconstrained role) → the whole cluster;
//! - at a level, a domain takes `min(count, capacity)` members and is feasible when that
//!   is at least `min_count` (and not zero); the most members wins, then the policy on
//!   spare slots (`capacity − members`): `best-fit`/`balanced` the fewest, `most-free`
//!   the most; ties go to the first domain in topology order, label values compared as
//!   text.
//!
//! Multi-role gangs, slices and the node (`kubernetes.io/hostname`) level are outside
//! its scope and are reported as [`RefError::Unsupported`].

use std::collections::HashMap;
use std::fmt;

use gang_core::request::SelectorOperator;
use gang_core::{Gang, Policy, Taint, HOSTNAME_LEVEL};

/// One node as a peer scheduler would keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefNode {
    /// Node name.
    pub name: String,
    /// Labels.
    pub labels: Vec<(String, String)>,
    /// Free amount per resource name, milli-units (absent: zero).
    pub free: Vec<(String, u64)>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// `false` when cordoned.
    pub schedulable: bool,
}

impl RefNode {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn free_of(&self, resource: &str) -> u64 {
        self.free
            .iter()
            .find(|(r, _)| r == resource)
            .map_or(0, |&(_, f)| f)
    }
}

/// A cluster as plain node records plus the topology level keys.
#[derive(Debug, Clone)]
pub struct RefCluster {
    levels: Vec<String>,
    nodes: Vec<RefNode>,
}

/// Capacity per domain: label values (outermost first) and the sum of node fits.
pub type DomainCaps = Vec<(Vec<String>, u64)>;

/// What the reference placer answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefAnswer {
    /// Whether the gang fits.
    pub feasible: bool,
    /// Depth of the chosen domain (0: whole cluster); when infeasible, the first depth
    /// tried.
    pub depth: usize,
    /// Level key of the chosen domain, `None` cluster-wide.
    pub level: Option<String>,
    /// Label values of the chosen domain, outermost first (empty cluster-wide or when
    /// infeasible).
    pub domain: Vec<String>,
    /// Members placed (0 when infeasible).
    pub members: u64,
    /// Spare member slots in the chosen domain (capacity − members).
    pub spare: u64,
    /// Capacity (sum of node fits) of every domain at `depth`, in topology order.
    pub domain_caps: DomainCaps,
    /// Sum of every node's fit, ignoring topology.
    pub cluster_fit: u64,
}

impl RefAnswer {
    /// The domain's values joined by `/`, as `Placement::domain_path` prints it.
    pub fn domain_path(&self) -> String {
        self.domain.join("/")
    }

    /// The domain at `depth` taking the most members, first in topology order on ties —
    /// the "best domain" of an unschedulable diagnosis.
    pub fn closest(&self) -> Option<&(Vec<String>, u64)> {
        let mut best: Option<&(Vec<String>, u64)> = None;
        for d in &self.domain_caps {
            if best.is_none_or(|b| d.1 > b.1) {
                best = Some(d);
            }
        }
        best
    }
}

/// Requests the reference placer does not handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefError {
    /// Outside the single-role semantics (several roles, slices, the node level).
    Unsupported(&'static str),
    /// A level that is not in the topology.
    UnknownLevel(String),
    /// An unparsable request amount.
    BadQuantity(String),
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::Unsupported(what) => write!(f, "reference placer: {what} not supported"),
            RefError::UnknownLevel(l) => write!(f, "reference placer: unknown level {l}"),
            RefError::BadQuantity(q) => write!(f, "reference placer: bad quantity {q}"),
        }
    }
}

impl std::error::Error for RefError {}

/// A single-role request resolved once (names stay strings, as in a peer scheduler).
struct Request<'g> {
    count: u64,
    min: u64,
    per_node: u64,
    requests: Vec<(&'g str, u64)>,
    gang: &'g Gang,
}

impl RefCluster {
    /// A cluster over `levels` (outermost first) and `nodes`.
    pub fn new(levels: Vec<String>, nodes: Vec<RefNode>) -> Self {
        RefCluster { levels, nodes }
    }

    /// The nodes.
    pub fn nodes(&self) -> &[RefNode] {
        &self.nodes
    }

    /// Mutable access to the nodes (to change free amounts between calls).
    pub fn nodes_mut(&mut self) -> &mut [RefNode] {
        &mut self.nodes
    }

    fn depth_of(&self, level: &str) -> Result<usize, RefError> {
        if level == HOSTNAME_LEVEL {
            return Err(RefError::Unsupported("the node level"));
        }
        self.levels
            .iter()
            .position(|l| l == level)
            .map(|i| i + 1)
            .ok_or_else(|| RefError::UnknownLevel(level.to_owned()))
    }

    fn request<'g>(&self, gang: &'g Gang) -> Result<Request<'g>, RefError> {
        if gang.get_roles().len() != 1 {
            return Err(RefError::Unsupported("multi-role gangs"));
        }
        if !gang.get_topology().slices.is_empty() {
            return Err(RefError::Unsupported("slices"));
        }
        let role = &gang.get_roles()[0];
        let mut requests = Vec::with_capacity(role.get_requests().len());
        for (name, amount) in role.get_requests() {
            let q = amount
                .resolve(name)
                .map_err(|_| RefError::BadQuantity(format!("{amount:?}")))?
                .millis();
            if q > 0 {
                requests.push((name, q));
            }
        }
        Ok(Request {
            count: u64::from(role.get_count()),
            min: u64::from(role.get_min_count().unwrap_or(role.get_count())),
            per_node: role
                .get_max_per_node()
                .map_or(u64::from(u32::MAX), u64::from),
            requests,
            gang,
        })
    }

    /// Depths tried, in order.
    fn depths(&self, gang: &Gang) -> Result<Vec<usize>, RefError> {
        let t = &gang.get_topology();
        let required = t
            .required
            .as_deref()
            .map(|l| self.depth_of(l))
            .transpose()?;
        let preferred = t
            .preferred
            .as_deref()
            .map(|l| self.depth_of(l))
            .transpose()?;
        if !gang.get_roles().iter().any(|r| r.is_constrained()) {
            return Ok(vec![0]);
        }
        Ok(match (required, preferred) {
            (Some(r), Some(p)) => (r..=p).rev().collect(),
            (Some(r), None) => vec![r],
            (None, Some(p)) => (0..=p).rev().collect(),
            (None, None) => vec![0],
        })
    }

    /// How many members of the request `node` can take.
    fn fit(node: &RefNode, req: &Request<'_>) -> u64 {
        if !node.schedulable {
            return 0;
        }
        let role = &req.gang.get_roles()[0];
        for (k, v) in role.get_node_selector() {
            if node.label(k) != Some(v) {
                return 0;
            }
        }
        for e in role.get_match_expressions() {
            let have = node.label(&e.key);
            let ok = match e.operator {
                SelectorOperator::In => have.is_some_and(|h| e.values.iter().any(|v| v == h)),
                SelectorOperator::NotIn => have.is_none_or(|h| e.values.iter().all(|v| v != h)),
                SelectorOperator::Exists => have.is_some(),
                SelectorOperator::DoesNotExist => have.is_none(),
            };
            if !ok {
                return 0;
            }
        }
        for taint in &node.taints {
            if taint.effect.excludes() && !role.get_tolerations().iter().any(|t| t.tolerates(taint))
            {
                return 0;
            }
        }
        let mut fit = req.per_node;
        for &(r, q) in &req.requests {
            fit = fit.min(node.free_of(r) / q);
            if fit == 0 {
                break;
            }
        }
        fit
    }

    /// Sums node fits per domain at `depth`, in topology order (label values as text).
    fn domain_caps(&self, depth: usize, fits: &[u64]) -> DomainCaps {
        if depth == 0 {
            return vec![(Vec::new(), fits.iter().sum())];
        }
        let mut sums: HashMap<String, u64> = HashMap::new();
        let mut key = String::new();
        'node: for (node, &fit) in self.nodes.iter().zip(fits) {
            key.clear();
            for level in &self.levels[..depth] {
                match node.label(level) {
                    Some(v) => {
                        key.push_str(v);
                        key.push('\0');
                    }
                    None => continue 'node,
                }
            }
            match sums.get_mut(key.as_str()) {
                Some(s) => *s += fit,
                None => {
                    sums.insert(key.clone(), fit);
                }
            }
        }
        let mut out: DomainCaps = sums
            .into_iter()
            .map(|(k, s)| {
                let mut vals: Vec<String> = k.split('\0').map(str::to_owned).collect();
                vals.pop(); // the trailing separator
                (vals, s)
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Chooses a domain at `depth` from its capacities: `(index, members, spare)`.
    fn choose(req: &Request<'_>, caps: &[(Vec<String>, u64)]) -> Option<(usize, u64, u64)> {
        let policy = req.gang.get_policy();
        let mut best: Option<(usize, u64, u64)> = None;
        for (i, (_, cap)) in caps.iter().enumerate() {
            let placed = req.count.min(*cap);
            if placed < req.min || placed == 0 {
                continue;
            }
            let spare = cap - placed;
            let better = match best {
                None => true,
                Some((_, bp, bs)) => {
                    placed > bp
                        || (placed == bp
                            && match policy {
                                Policy::MostFree => spare > bs,
                                _ => spare < bs,
                            })
                }
            };
            if better {
                best = Some((i, placed, spare));
            }
        }
        best
    }

    /// Places a single-role gang: full scan for the fits, a sum per domain, a choice.
    ///
    /// # Errors
    /// [`RefError`] for requests outside the single-role semantics or an unknown level.
    pub fn place(&self, gang: &Gang) -> Result<RefAnswer, RefError> {
        let req = self.request(gang)?;
        let depths = self.depths(gang)?;
        let fits: Vec<u64> = self.nodes.iter().map(|n| Self::fit(n, &req)).collect();
        let cluster_fit = fits.iter().sum();
        let mut first: Option<(usize, DomainCaps)> = None;
        for &depth in &depths {
            let caps = self.domain_caps(depth, &fits);
            if let Some((i, placed, spare)) = Self::choose(&req, &caps) {
                return Ok(RefAnswer {
                    feasible: true,
                    depth,
                    level: self.level_key(depth),
                    domain: caps[i].0.clone(),
                    members: placed,
                    spare,
                    domain_caps: caps,
                    cluster_fit,
                });
            }
            if first.is_none() {
                first = Some((depth, caps));
            }
        }
        let (depth, caps) = first.unwrap_or_default();
        Ok(RefAnswer {
            feasible: false,
            depth,
            level: self.level_key(depth),
            domain: Vec::new(),
            members: 0,
            spare: 0,
            domain_caps: caps,
            cluster_fit,
        })
    }

    /// For an infeasible gang with a `required` level: the tightest coarser depth at
    /// which it fits now, and the domain chosen there (the diagnosis's "relaxing to …").
    ///
    /// # Errors
    /// As [`RefCluster::place`].
    pub fn relaxation(&self, gang: &Gang) -> Result<Option<(usize, Vec<String>)>, RefError> {
        let req = self.request(gang)?;
        let Some(r) = gang
            .get_topology()
            .required
            .as_deref()
            .map(|l| self.depth_of(l))
            .transpose()?
        else {
            return Ok(None);
        };
        let fits: Vec<u64> = self.nodes.iter().map(|n| Self::fit(n, &req)).collect();
        for depth in (0..r).rev() {
            let caps = self.domain_caps(depth, &fits);
            if let Some((i, _, _)) = Self::choose(&req, &caps) {
                return Ok(Some((depth, caps[i].0.clone())));
            }
        }
        Ok(None)
    }

    fn level_key(&self, depth: usize) -> Option<String> {
        depth
            .checked_sub(1)
            .and_then(|i| self.levels.get(i))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gang_core::{Role, TaintEffect};

    fn node(name: &str, block: &str, rack: Option<&str>, gpus: u64) -> RefNode {
        let mut labels = vec![("block".to_owned(), block.to_owned())];
        if let Some(r) = rack {
            labels.push(("rack".to_owned(), r.to_owned()));
        }
        RefNode {
            name: name.into(),
            labels,
            free: vec![("gpu".into(), gpus * 1000)],
            taints: Vec::new(),
            schedulable: true,
        }
    }

    fn cluster() -> RefCluster {
        let mut tainted = node("t", "b1", Some("r2"), 8);
        tainted
            .taints
            .push(Taint::new("k", "v", TaintEffect::NoSchedule));
        RefCluster::new(
            vec!["block".into(), "rack".into()],
            vec![
                node("a", "b1", Some("r1"), 3),
                node("b", "b1", Some("r10"), 2),
                node("c", "b1", Some("r2"), 2),
                node("d", "b2", Some("r1"), 1),
                node("e", "b2", None, 4),
                tainted,
            ],
        )
    }

    fn gang(count: u32) -> Gang {
        Gang::new("g").role(Role::new("w", count).request("gpu", 1))
    }

    #[test]
    fn best_fit_then_text_order() {
        let c = cluster();
        // r1 (3), r10 (2), r2 (2), b2/r1 (1): two members go to the tightest, r10 first as text.
        let a = c.place(&gang(2).required("rack")).unwrap();
        assert!(a.feasible);
        assert_eq!(a.domain_path(), "b1/r10");
        assert_eq!(a.spare, 0);
        assert_eq!(a.cluster_fit, 12);
        let a = c
            .place(&gang(2).required("rack").policy(Policy::MostFree))
            .unwrap();
        assert_eq!(a.domain_path(), "b1/r1");
    }

    #[test]
    fn walk_up_and_cluster() {
        let c = cluster();
        let a = c.place(&gang(5).preferred("rack")).unwrap();
        assert_eq!((a.depth, a.domain_path().as_str()), (1, "b2"));
        let a = c.place(&gang(12).preferred("rack")).unwrap();
        assert_eq!((a.depth, a.level.as_deref(), a.members), (0, None, 12));
        let a = c.place(&gang(13).preferred("rack")).unwrap();
        assert!(!a.feasible);
        assert_eq!(a.depth, 2);
        assert_eq!(a.closest().unwrap().0, ["b1", "r1"]);
        let a = c.place(&gang(4).required("rack")).unwrap();
        assert!(!a.feasible);
        assert_eq!(
            c.relaxation(&gang(4).required("rack")).unwrap(),
            Some((1, vec!["b2".to_owned()]))
        );
    }

    #[test]
    fn unsupported() {
        let c = cluster();
        let two = gang(1).role(Role::new("x", 1));
        assert!(matches!(c.place(&two), Err(RefError::Unsupported(_))));
        assert!(matches!(
            c.place(&gang(1).required("zone")),
            Err(RefError::UnknownLevel(_))
        ));
    }
}
