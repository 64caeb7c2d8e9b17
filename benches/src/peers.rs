//! The side-by-side with peer schedulers' placement code (`benches/peers/`): a generated
//! cluster and its queries written as JSON for the peer's harness, gang's warm timing of
//! the same queries, and a placement summary both sides print alike.
//!
//! The binary is `src/bin/peers.rs`; the Kueue harness and the script that alternates
//! the two sides are in `benches/peers/kueue/` (see its README). Nothing here runs in
//! CI except the tests of the export (`tests/peers.rs`).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};

use gang_core::{Placement, TaintEffect};

use crate::cases::{self, Constraint};
use crate::gen::{Cluster, Size, Spec, BLOCK, RACK, RESOURCES, ZONE};

/// The node level key Kueue's topologies end with (and gang's own node level).
pub const HOSTNAME: &str = gang_core::HOSTNAME_LEVEL;

/// Member counts of the side-by-side's queries.
pub const COUNTS: [u32; 4] = [4, 64, 256, 512];

/// One query of the side-by-side: `count` one-GPU workers ([`cases::worker`]) under
/// `constraint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    /// The topology constraint.
    pub constraint: Constraint,
    /// Members.
    pub count: u32,
}

impl Query {
    /// `required-block-256` style name (the bench cases' names).
    pub fn name(&self) -> String {
        format!("{}-{}", self.constraint.as_str(), self.count)
    }

    /// The peer's mode for the constraint: `required`, `preferred` or `unconstrained`.
    pub fn mode(&self) -> &'static str {
        match self.constraint {
            Constraint::RequiredRack | Constraint::RequiredBlock => "required",
            Constraint::PreferredRack => "preferred",
            Constraint::Unconstrained => "unconstrained",
        }
    }

    /// The level key of the constraint (`None` unconstrained).
    pub fn level(&self) -> Option<&'static str> {
        match self.constraint {
            Constraint::RequiredRack | Constraint::PreferredRack => Some(RACK),
            Constraint::RequiredBlock => Some(BLOCK),
            Constraint::Unconstrained => None,
        }
    }
}

/// Every constraint × every count of [`COUNTS`], in report order.
pub fn queries() -> Vec<Query> {
    Constraint::ALL
        .iter()
        .flat_map(|&constraint| COUNTS.map(|count| Query { constraint, count }))
        .collect()
}

/// Parses `hgx-10k-50` (flavor, size, % of GPUs used) into its spec.
pub fn parse_cluster(name: &str) -> Option<Spec> {
    let mut it = name.split('-');
    let flavor = it.next()?;
    let size = match it.next()? {
        "1k" => Size::K1,
        "10k" => Size::K10,
        "100k" => Size::K100,
        _ => return None,
    };
    let pct: u32 = it.next()?.parse().ok().filter(|p| *p <= 100)?;
    if it.next().is_some() {
        return None;
    }
    match flavor {
        "hgx" => Some(Spec::hgx(size, pct)),
        "nvl72" => Some(Spec::nvl72(size, pct)),
        _ => None,
    }
}

/// A milli-unit amount as a Kubernetes quantity (`8`, `8500m`).
pub fn quantity(milli: u64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_map<'a>(pairs: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let body: Vec<String> = pairs
        .into_iter()
        .map(|(k, v)| format!("{}:{}", json_str(k), json_str(&v)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// Pods a node allows (Kubernetes' default `maxPods`; Kueue counts a `pods` resource).
pub const MAX_PODS: u64 = 110;

/// Writes `cluster` and `queries` as the JSON the peer harnesses read:
///
/// - `name`, `levels` (zone, block, rack, then [`HOSTNAME`]);
/// - `nodes`: `name`, `labels` (the generator's, plus [`HOSTNAME`] = name),
///   `allocatable` and `used` (quantities; `allocatable` adds `pods`), `taints`
///   (`key`, `value`, `effect`), `unschedulable`;
/// - `queries`: `name`, `mode` (`required`, `preferred`, `unconstrained`), `level`
///   (absent unconstrained), `count`, `requests` (one member's, as quantities).
///
/// # Errors
/// Those of `w`.
pub fn write_json(cluster: &Cluster, queries: &[Query], w: &mut impl Write) -> io::Result<()> {
    let spec = &cluster.spec;
    let levels: Vec<String> = [ZONE, BLOCK, RACK, HOSTNAME]
        .iter()
        .map(|l| json_str(l))
        .collect();
    writeln!(
        w,
        "{{\"name\":{},\"levels\":[{}],\"nodes\":[",
        json_str(&cluster_name(spec)),
        levels.join(",")
    )?;
    for (i, n) in cluster.nodes.iter().enumerate() {
        let labels = json_map(
            n.labels
                .iter()
                .map(|(k, v)| (*k, v.clone()))
                .chain([(HOSTNAME, n.name.clone())]),
        );
        let alloc = json_map(
            RESOURCES
                .iter()
                .enumerate()
                .map(|(r, k)| (*k, quantity(n.capacity[r])))
                .chain([("pods", MAX_PODS.to_string())]),
        );
        let used = json_map(
            RESOURCES
                .iter()
                .enumerate()
                .filter(|(r, _)| n.used[*r] > 0)
                .map(|(r, k)| (*k, quantity(n.used[r]))),
        );
        let taints: Vec<String> = n
            .taints
            .iter()
            .map(|t| {
                let effect = match t.effect {
                    TaintEffect::NoSchedule => "NoSchedule",
                    TaintEffect::PreferNoSchedule => "PreferNoSchedule",
                    TaintEffect::NoExecute => "NoExecute",
                };
                format!(
                    "{{\"key\":{},\"value\":{},\"effect\":\"{effect}\"}}",
                    json_str(&t.key),
                    json_str(&t.value)
                )
            })
            .collect();
        writeln!(
            w,
            "{{\"name\":{},\"labels\":{labels},\"allocatable\":{alloc},\"used\":{used},\"taints\":[{}],\"unschedulable\":{}}}{}",
            json_str(&n.name),
            taints.join(","),
            !n.schedulable,
            if i + 1 < cluster.nodes.len() { "," } else { "" }
        )?;
    }
    writeln!(w, "],\"queries\":[")?;
    let requests = json_map(
        cases::worker_columns(spec)
            .iter()
            .map(|&(r, milli)| (RESOURCES[r], quantity(milli))),
    );
    for (i, q) in queries.iter().enumerate() {
        let level = q
            .level()
            .map(|l| format!(",\"level\":{}", json_str(l)))
            .unwrap_or_default();
        writeln!(
            w,
            "{{\"name\":{},\"mode\":\"{}\"{level},\"count\":{},\"requests\":{requests}}}{}",
            json_str(&q.name()),
            q.mode(),
            q.count,
            if i + 1 < queries.len() { "," } else { "" }
        )?;
    }
    writeln!(w, "]}}")
}

/// `hgx-10k-50` style name of a standard spec (the name [`parse_cluster`] reads).
pub fn cluster_name(spec: &Spec) -> String {
    let size = match spec.racks / 32 {
        1 if spec.prefix == "hgx" => "1k",
        10 if spec.prefix == "hgx" => "10k",
        100 if spec.prefix == "hgx" => "100k",
        _ => match spec.racks / 56 {
            1 => "1k",
            10 => "10k",
            100 => "100k",
            _ => "custom",
        },
    };
    format!("{}-{size}-{}", spec.prefix, spec.used_pct)
}

/// Free GPUs of the nodes a one-GPU worker may use (schedulable, no excluding taint):
/// both harnesses print it, so a run shows they read the same cluster.
pub fn usable_free_gpus(cluster: &Cluster) -> u64 {
    cluster
        .nodes
        .iter()
        .filter(|n| n.schedulable && !n.taints.iter().any(|t| t.effect.excludes()))
        .map(|n| n.free(0) / 1000)
        .sum()
}

/// Distinct domains a placement uses at each level, counted from its nodes' labels the
/// way the peer harnesses count theirs: `zones blocks racks nodes` (racks and blocks by
/// full path; a node without the label counts as a domain of its own kind, `-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spread {
    /// Members placed.
    pub members: u64,
    /// Zones.
    pub zones: usize,
    /// Blocks (by zone/block).
    pub blocks: usize,
    /// Racks (by zone/block/rack).
    pub racks: usize,
    /// Nodes.
    pub nodes: usize,
    /// Most members on one node.
    pub max_per_node: u32,
}

/// Node names to their records, for [`Spread::of`].
pub struct NodeIndex<'a> {
    cluster: &'a Cluster,
    by_name: HashMap<&'a str, usize>,
}

impl<'a> NodeIndex<'a> {
    /// Indexes `cluster`'s nodes by name.
    pub fn new(cluster: &'a Cluster) -> Self {
        let by_name = cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        NodeIndex { cluster, by_name }
    }

    fn label(&self, name: &str, key: &str) -> String {
        let n = &self.cluster.nodes[self.by_name[name]];
        n.labels
            .iter()
            .find(|(k, _)| *k == key)
            .map_or("-".to_owned(), |(_, v)| v.clone())
    }
}

impl Spread {
    /// The spread of `nodes` (name, members).
    ///
    /// # Panics
    /// If a node name is not in the index's cluster.
    pub fn of<'n>(
        index: &NodeIndex<'_>,
        nodes: impl IntoIterator<Item = (&'n str, u32)>,
    ) -> Spread {
        let mut s = Spread::default();
        let (mut z, mut b, mut r) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        for (name, k) in nodes {
            let (zv, bv, rv) = (
                index.label(name, ZONE),
                index.label(name, BLOCK),
                index.label(name, RACK),
            );
            z.insert(zv.clone());
            b.insert(format!("{zv}/{bv}"));
            r.insert(format!("{zv}/{bv}/{rv}"));
            s.nodes += 1;
            s.members += u64::from(k);
            s.max_per_node = s.max_per_node.max(k);
        }
        (s.zones, s.blocks, s.racks) = (z.len(), b.len(), r.len());
        s
    }

    /// The spread of a gang placement.
    pub fn of_placement(index: &NodeIndex<'_>, p: &Placement) -> Spread {
        Spread::of(index, p.node_counts())
    }

    /// `members=256 zones=1 blocks=1 racks=2 nodes=35 max/node=8`.
    pub fn render(&self) -> String {
        format!(
            "members={} zones={} blocks={} racks={} nodes={} max/node={}",
            self.members, self.zones, self.blocks, self.racks, self.nodes, self.max_per_node
        )
    }
}
