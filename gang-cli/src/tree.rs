//! `gang topology`: the domain tree with free capacity per domain, as data.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gang_core::{Quantity, HOSTNAME_LEVEL};
use gang_kube::{Cluster, TopologyChoice};
use serde::Serialize;

use crate::cli::TreeArgs;
use crate::error::CliError;
use crate::report::short_level;

/// Node rows are drawn by default up to this many nodes.
pub const DEFAULT_NODE_ROWS: usize = 32;

/// One domain (or node) of the tree.
#[derive(Debug, Clone, Serialize)]
pub struct Domain {
    /// The level key; `None` for the cluster; `kubernetes.io/hostname` for a node row.
    pub level: Option<String>,
    /// The label value (the node name for a node row; `(no rack label)` for nodes
    /// without the level's label).
    pub name: String,
    /// The full path of values (`b1/r2`), as gang-core names domains.
    pub path: String,
    /// Nodes without this level's label, gathered here: in no domain of it or finer.
    pub unlabelled: bool,
    /// Nodes inside.
    pub nodes: usize,
    /// Nodes that can take members (ready, schedulable, inside the flavor).
    pub schedulable: usize,
    /// Free capacity on the schedulable nodes, per drawn resource.
    pub free: BTreeMap<String, Quantity>,
    /// Allocatable capacity of all nodes, per drawn resource.
    pub allocatable: BTreeMap<String, Quantity>,
    /// For a node row: why it takes no members.
    pub excluded: Vec<String>,
    /// Child domains, in topology order (label values as text), unlabelled last.
    pub children: Vec<Domain>,
}

/// `gang topology` as data.
#[derive(Debug, Clone, Serialize)]
pub struct TopologyReport {
    /// `"topology"`.
    pub command: &'static str,
    /// The topology chosen and why.
    pub topology: TopologyChoice,
    /// The resources drawn.
    pub resources: Vec<String>,
    /// The tree, rooted at the cluster.
    pub tree: Domain,
    /// Notes and warnings from reading the cluster.
    pub warnings: Vec<String>,
}

impl Domain {
    fn new(level: Option<String>, name: String, path: String, unlabelled: bool) -> Self {
        Domain {
            level,
            name,
            path,
            unlabelled,
            nodes: 0,
            schedulable: 0,
            free: BTreeMap::new(),
            allocatable: BTreeMap::new(),
            excluded: Vec::new(),
            children: Vec::new(),
        }
    }
}

/// The resources to draw: those asked for, else every `*/gpu` resource any node has,
/// else `cpu`.
pub fn default_resources(cluster: &Cluster, asked: &[String]) -> Result<Vec<String>, CliError> {
    let all: BTreeSet<&str> = cluster
        .usage()
        .iter()
        .flat_map(|u| u.allocatable.keys().map(String::as_str))
        .collect();
    if !asked.is_empty() {
        // A resource no node has would draw 0/0 everywhere: say so instead.
        if let Some(r) = asked.iter().find(|r| !all.contains(r.as_str())) {
            return Err(CliError::Input {
                source: "--resource".into(),
                object: None,
                field: None,
                reason: format!(
                    "no node has {r:?} allocatable; the nodes have: {}",
                    all.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        return Ok(asked.to_vec());
    }
    let gpus: Vec<String> = all
        .iter()
        .filter(|k| k.ends_with("/gpu"))
        .map(|k| (*k).to_owned())
        .collect();
    Ok(if gpus.is_empty() {
        vec!["cpu".to_owned()]
    } else {
        gpus
    })
}

/// Builder state: children by key (label value; unlabelled bucket sorts last).
struct Build {
    d: Domain,
    kids: BTreeMap<(bool, String), Build>,
}

impl Build {
    fn add(&mut self, free: &[u64], alloc: &[u64], schedulable: bool, resources: &[String]) {
        self.d.nodes += 1;
        if schedulable {
            self.d.schedulable += 1;
        }
        for (i, r) in resources.iter().enumerate() {
            let a = self.d.allocatable.entry(r.clone()).or_default();
            *a = Quantity::from_millis(a.millis().saturating_add(alloc[i]));
            let f = self.d.free.entry(r.clone()).or_default();
            if schedulable {
                *f = Quantity::from_millis(f.millis().saturating_add(free[i]));
            }
        }
    }

    fn finish(self) -> Domain {
        let mut d = self.d;
        d.children = self.kids.into_values().map(Build::finish).collect();
        d
    }
}

/// Whether every domain of the last of `levels` holds one node.
fn singleton_level(cluster: &Cluster, levels: &[&String]) -> bool {
    let mut seen: HashMap<Vec<&str>, usize> = HashMap::new();
    for spec in cluster.nodes() {
        let path: Option<Vec<&str>> = levels.iter().map(|l| spec.get_label(l)).collect();
        if let Some(p) = path {
            let n = seen.entry(p).or_default();
            *n += 1;
            if *n > 1 {
                return false;
            }
        }
    }
    !seen.is_empty()
}

/// The domain tree of `cluster`: every level of its topology (the node level drawn as
/// node rows when asked, or by default for small clusters), free capacity per domain.
pub fn tree(cluster: &Cluster, resources: &[String], args: &TreeArgs) -> Domain {
    let levels: Vec<&String> = cluster
        .topology()
        .levels()
        .iter()
        .filter(|l| *l != HOSTNAME_LEVEL)
        .collect();
    let n = cluster.nodes().len();
    let show_nodes = !args.no_nodes && (args.nodes || n <= DEFAULT_NODE_ROWS);
    let mut depth = args.depth.unwrap_or(usize::MAX);
    if !show_nodes {
        // A level of one node per domain (GKE's host label) is drawn like node rows.
        if let Some(d) = (0..levels.len()).find(|&d| singleton_level(cluster, &levels[..=d])) {
            depth = depth.min(d);
        }
    }
    let excluded: HashMap<&str, Vec<String>> = cluster
        .report()
        .excluded
        .iter()
        .map(|e| {
            (
                e.node.as_str(),
                e.reasons.iter().map(ToString::to_string).collect(),
            )
        })
        .collect();
    let mut root = Build {
        d: Domain::new(None, "cluster".into(), String::new(), false),
        kids: BTreeMap::new(),
    };
    let mut free = vec![0u64; resources.len()];
    let mut alloc = vec![0u64; resources.len()];
    for (spec, usage) in cluster.nodes().iter().zip(cluster.usage()) {
        for (i, r) in resources.iter().enumerate() {
            let a = usage.allocatable.get(r).map_or(0, |q| q.millis());
            let u = usage.used.get(r).map_or(0, |q| q.millis());
            alloc[i] = a;
            free[i] = a.saturating_sub(u);
        }
        let why = excluded.get(spec.get_name());
        let schedulable = why.is_none();
        root.add(&free, &alloc, schedulable, resources);
        let mut at = &mut root;
        let mut path = String::new();
        let mut stopped = false;
        for (d, l) in levels.iter().enumerate() {
            if d >= depth {
                stopped = true;
                break;
            }
            let (key, name, unlabelled) = match spec.get_label(l) {
                Some(v) => {
                    if !path.is_empty() {
                        path.push('/');
                    }
                    path.push_str(v);
                    ((false, v.to_owned()), v.to_owned(), false)
                }
                None => (
                    (true, String::new()),
                    format!("(no {} label)", short_level(l)),
                    true,
                ),
            };
            let p = path.clone();
            at = at.kids.entry(key).or_insert_with(|| Build {
                d: Domain::new(Some((*l).clone()), name, p, unlabelled),
                kids: BTreeMap::new(),
            });
            at.add(&free, &alloc, schedulable, resources);
            if unlabelled {
                break;
            }
        }
        if show_nodes && !stopped && depth >= levels.len() {
            let name = spec.get_name().to_owned();
            let mut node = Build {
                d: Domain::new(
                    Some(HOSTNAME_LEVEL.to_owned()),
                    name.clone(),
                    name.clone(),
                    false,
                ),
                kids: BTreeMap::new(),
            };
            node.add(&free, &alloc, schedulable, resources);
            node.d.excluded = why.cloned().unwrap_or_default();
            at.kids.insert((false, format!("\u{0}{name}")), node);
        }
    }
    root.finish()
}
