//! Choosing the topology levels: a Kueue Topology, given label keys, or detection from
//! the node labels of known schemes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gang_core::{Toleration, Topology, HOSTNAME_LEVEL};
use serde::Serialize;

use crate::convert;
use crate::error::{Error, ErrorKind};
use crate::model::body::Body;
use crate::model::de::StringMap;
use crate::model::kueue::{FlavorObj, TopologyObj};
use crate::objects::Objects;
use crate::origin::Origin;

/// Where the topology levels come from. See [`ClusterOptions`](crate::ClusterOptions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TopologySource {
    /// A Kueue (or KAI) `Topology` in the objects — the one a `ResourceFlavor` names when
    /// there is one — and otherwise detection from node labels (see [`Detect`](Self::Detect)).
    #[default]
    Auto,
    /// Detection from node labels only, ignoring Topology objects: GKE
    /// (`cloud.google.com/gce-topology-block` / `-subblock` / `-host`), EKS
    /// (`topology.k8s.aws/network-node-layer-1..3`), OCI
    /// (`oci.oraclecloud.com/rdma.hpc_island_id` / `network_block_id` / `local_block_id`),
    /// NVIDIA GPU cliques (`nvidia.com/gpu.clique`, also nested into another scheme where
    /// the labels nest), and the generic `topology.kubernetes.io/zone` plus a `…/block`
    /// and a `…/rack` label. The scheme on the most nodes wins; the report says which and
    /// why. No known labels: a flat topology.
    Detect,
    /// These label keys, outermost first (`kubernetes.io/hostname` only last).
    Levels(Vec<String>),
    /// The Kueue (or KAI) `Topology` object of this name.
    Topology(String),
    /// The Kueue `ResourceFlavor` of this name: its `spec.topologyName`, its
    /// `spec.nodeLabels` (nodes without them are excluded) and `spec.tolerations` (added
    /// to Kueue-managed workloads).
    Flavor(String),
}

/// The topology chosen, and why. Part of the [`ClusterReport`](crate::ClusterReport).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopologyChoice {
    /// Level label keys, outermost first.
    pub levels: Vec<String>,
    /// How they were found: `kueue-topology`, `given`, `detected` or `flat`.
    pub origin: &'static str,
    /// The scheme (`gke`, `eks`, `oci`, `nvidia-clique`, `generic`) or the Topology
    /// object's name.
    pub name: Option<String>,
    /// One sentence on what was chosen and why.
    pub reason: String,
    /// The ResourceFlavor used, if any.
    pub flavor: Option<FlavorInfo>,
}

/// A Kueue ResourceFlavor as it shapes the cluster view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlavorInfo {
    /// Its name.
    pub name: String,
    /// `spec.nodeLabels`: only nodes with all of them belong to the flavor.
    pub node_labels: BTreeMap<String, String>,
    /// `spec.tolerations`: added to the pods Kueue admits on the flavor.
    pub tolerations: Vec<Toleration>,
}

pub(crate) struct Chosen {
    pub topology: Topology,
    pub choice: TopologyChoice,
}

const SCHEMES: &[(&str, &str, &[&str])] = &[
    (
        "gke",
        "GKE",
        &[
            "cloud.google.com/gce-topology-block",
            "cloud.google.com/gce-topology-subblock",
            "cloud.google.com/gce-topology-host",
        ],
    ),
    (
        "eks",
        "EKS",
        &[
            "topology.k8s.aws/network-node-layer-1",
            "topology.k8s.aws/network-node-layer-2",
            "topology.k8s.aws/network-node-layer-3",
        ],
    ),
    (
        "oci",
        "OCI",
        &[
            "oci.oraclecloud.com/rdma.hpc_island_id",
            "oci.oraclecloud.com/rdma.network_block_id",
            "oci.oraclecloud.com/rdma.local_block_id",
        ],
    ),
];

/// NVIDIA's GPU feature discovery label of an NVLink domain (clique).
pub const CLIQUE_LABEL: &str = "nvidia.com/gpu.clique";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

fn flavor_info(f: &FlavorObj, origin: &Origin) -> Result<FlavorInfo, Error> {
    let mut tolerations = Vec::new();
    for (i, t) in f.spec.tolerations.iter().enumerate() {
        tolerations.push(
            convert::toleration(t)
                .map_err(|e| e.under(&format!("spec.tolerations[{i}]")).at(origin))?,
        );
    }
    Ok(FlavorInfo {
        name: f.metadata.name.clone(),
        node_labels: f.spec.node_labels.clone(),
        tolerations,
    })
}

fn find_topology<'a>(objects: &'a Objects, name: &str) -> Option<(&'a TopologyObj, &'a Origin)> {
    objects.items.iter().find_map(|i| match &i.body {
        Body::Topology(t) if t.metadata.name == name => Some((&**t, &i.origin)),
        _ => None,
    })
}

/// Two Topology objects of one API group with one name: which one a flavor means is
/// unknowable (the API server would have kept one), so refused.
fn unique_topology_names(objects: &Objects) -> Result<(), Error> {
    let mut seen: HashMap<(&str, &str), &Origin> = HashMap::new();
    for i in &objects.items {
        if let Body::Topology(t) = &i.body {
            let group = i.origin.api_version.split('/').next().unwrap_or("");
            if let Some(first) = seen.insert((group, t.metadata.name.as_str()), &i.origin) {
                return Err(Error::new(
                    ErrorKind::InvalidTopology,
                    &i.origin.source,
                    format!(
                        "a second Topology of this name (the first is in {} at {}): give one",
                        first.source, first.position
                    ),
                )
                .at(&i.origin)
                .with_field("metadata.name")
                .with_value(t.metadata.name.clone()));
            }
        }
    }
    Ok(())
}

fn flavors(objects: &Objects) -> impl Iterator<Item = (&FlavorObj, &Origin)> {
    objects.items.iter().filter_map(|i| match &i.body {
        Body::Flavor(f) => Some((&**f, &i.origin)),
        _ => None,
    })
}

/// The levels of a Kueue Topology object, validated.
fn kueue_levels(t: &TopologyObj, origin: &Origin) -> Result<Vec<String>, Error> {
    if t.spec.levels.is_empty() {
        return Err(Error::new(
            ErrorKind::MissingLabel,
            &origin.source,
            "a Topology needs at least one level",
        )
        .at(origin)
        .with_field("spec.levels"));
    }
    let mut levels = Vec::new();
    for (i, l) in t.spec.levels.iter().enumerate() {
        if l.node_label.is_empty() {
            return Err(Error::new(
                ErrorKind::MissingLabel,
                &origin.source,
                "every level names a node label",
            )
            .at(origin)
            .with_field(format!("spec.levels[{i}].nodeLabel")));
        }
        levels.push(l.node_label.clone());
    }
    Topology::new(levels.iter().cloned()).map_err(|e| {
        let i = levels_index(e.field()).unwrap_or(0);
        Error::new(ErrorKind::InvalidTopology, &origin.source, core_reason(&e))
            .at(origin)
            .with_field(format!("spec.levels[{i}].nodeLabel"))
            .with_value(levels.get(i).cloned().unwrap_or_default())
            .with_core(e)
    })?;
    Ok(levels)
}

pub(crate) fn core_reason(e: &gang_core::Error) -> String {
    match e {
        gang_core::Error::InvalidInventory { reason, .. }
        | gang_core::Error::InvalidRequest { reason, .. }
        | gang_core::Error::InvalidQuantity { reason, .. }
        | gang_core::Error::Contradictory { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

fn levels_index(field: &str) -> Option<usize> {
    field
        .strip_prefix("topology.levels[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Chooses the topology for `labels` (one map per node, in node order).
pub(crate) fn choose(
    objects: &Objects,
    source: &TopologySource,
    labels: &[&StringMap],
) -> Result<Chosen, Error> {
    let from_topology = |t: &TopologyObj,
                         origin: &Origin,
                         flavor: Option<FlavorInfo>,
                         why: String|
     -> Result<Chosen, Error> {
        let levels = kueue_levels(t, origin)?;
        for (i, l) in levels.iter().enumerate() {
            check_carried(l, labels).map_err(|reason| {
                Error::new(ErrorKind::MissingLabel, &origin.source, reason)
                    .at(origin)
                    .with_field(format!("spec.levels[{i}].nodeLabel"))
                    .with_value(l.clone())
            })?;
        }
        let topology = Topology::new(levels.iter().cloned()).map_err(|e| {
            Error::new(ErrorKind::InvalidTopology, &origin.source, core_reason(&e)).with_core(e)
        })?;
        Ok(Chosen {
            topology,
            choice: TopologyChoice {
                levels,
                origin: "kueue-topology",
                name: Some(t.metadata.name.clone()),
                reason: why,
                flavor,
            },
        })
    };
    if !matches!(source, TopologySource::Levels(_) | TopologySource::Detect) {
        unique_topology_names(objects)?;
    }
    match source {
        TopologySource::Levels(levels) => {
            let topology = Topology::new(levels.iter().cloned()).map_err(|e| {
                let i = levels_index(e.field()).unwrap_or(0);
                Error::new(
                    ErrorKind::InvalidTopology,
                    "topology levels",
                    core_reason(&e),
                )
                .with_field(format!("levels[{i}]"))
                .with_value(levels.get(i).cloned().unwrap_or_default())
                .with_core(e)
            })?;
            for (i, l) in levels.iter().enumerate() {
                check_carried(l, labels).map_err(|reason| {
                    Error::new(ErrorKind::MissingLabel, "topology levels", reason)
                        .with_field(format!("levels[{i}]"))
                        .with_value(l.clone())
                })?;
            }
            Ok(Chosen {
                topology,
                choice: TopologyChoice {
                    levels: levels.clone(),
                    origin: "given",
                    name: None,
                    reason: format!("levels given: {}", levels.join(", ")),
                    flavor: None,
                },
            })
        }
        TopologySource::Topology(name) => {
            let (t, origin) = find_topology(objects, name).ok_or_else(|| {
                Error::new(
                    ErrorKind::UnexpectedKind,
                    "topology",
                    format!("no Topology named {name:?} in the input"),
                )
                .with_value(name.clone())
            })?;
            let flavor = match flavors(objects).find(|(f, _)| f.spec.topology_name == *name) {
                Some((f, o)) => Some(flavor_info(f, o)?),
                None => None,
            };
            from_topology(t, origin, flavor, format!("Topology {name} as asked"))
        }
        TopologySource::Flavor(name) => {
            let (f, forigin) = flavors(objects)
                .find(|(f, _)| f.metadata.name == *name)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::UnexpectedKind,
                        "topology",
                        format!("no ResourceFlavor named {name:?} in the input"),
                    )
                    .with_value(name.clone())
                })?;
            let tname = &f.spec.topology_name;
            if tname.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidTopology,
                    &forigin.source,
                    "the ResourceFlavor names no Topology (not a TAS flavor)",
                )
                .at(forigin)
                .with_field("spec.topologyName"));
            }
            let (t, origin) = find_topology(objects, tname).ok_or_else(|| {
                Error::new(
                    ErrorKind::UnexpectedKind,
                    &forigin.source,
                    format!("the Topology {tname:?} it names is not in the input"),
                )
                .at(forigin)
                .with_field("spec.topologyName")
                .with_value(tname.clone())
            })?;
            let info = flavor_info(f, forigin)?;
            from_topology(
                t,
                origin,
                Some(info),
                format!("ResourceFlavor {name} as asked, with its Topology {tname}"),
            )
        }
        TopologySource::Auto => {
            let tas: Vec<_> = flavors(objects)
                .filter(|(f, _)| find_topology(objects, &f.spec.topology_name).is_some())
                .collect();
            if tas.is_empty() {
                // A TAS flavor whose Topology is missing: never drop it (and its
                // tolerations) for another topology.
                if let Some((f, forigin)) =
                    flavors(objects).find(|(f, _)| !f.spec.topology_name.is_empty())
                {
                    let tname = &f.spec.topology_name;
                    return Err(Error::new(
                        ErrorKind::UnexpectedKind,
                        &forigin.source,
                        format!(
                            "the Topology {tname:?} it names is not in the input: give it too (kubectl get topologies.kueue.x-k8s.io {tname} -o yaml), or choose the levels (--levels, --detect)"
                        ),
                    )
                    .at(forigin)
                    .with_field("spec.topologyName")
                    .with_value(tname.clone()));
                }
            }
            if let Some((f, forigin)) = tas.first() {
                let tname = &f.spec.topology_name;
                let (t, origin) = find_topology(objects, tname).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidTopology,
                        &forigin.source,
                        "topology vanished",
                    )
                })?;
                let mut why = format!(
                    "ResourceFlavor {} names Topology {tname} (both in the input)",
                    f.metadata.name
                );
                if tas.len() > 1 {
                    let others: Vec<_> = tas[1..]
                        .iter()
                        .map(|(f, _)| f.metadata.name.as_str())
                        .collect();
                    why.push_str(&format!(
                        "; the first of {} TAS flavors (also {}): choose one with a flavor option",
                        tas.len(),
                        others.join(", ")
                    ));
                }
                let info = flavor_info(f, forigin)?;
                return from_topology(t, origin, Some(info), why);
            }
            let topologies: Vec<_> = objects
                .items
                .iter()
                .filter_map(|i| match &i.body {
                    Body::Topology(t) => Some((&**t, &i.origin)),
                    _ => None,
                })
                .collect();
            if let Some((t, origin)) = topologies.first() {
                let mut why = format!("Topology {} in the input", t.metadata.name);
                if topologies.len() > 1 {
                    why.push_str(&format!(
                        "; the first of {} Topologies: choose one with a topology option",
                        topologies.len()
                    ));
                }
                return from_topology(t, origin, None, why);
            }
            detect(labels)
        }
        TopologySource::Detect => detect(labels),
    }
}

fn check_carried(level: &str, labels: &[&StringMap]) -> Result<(), String> {
    if level == HOSTNAME_LEVEL || labels.is_empty() || labels.iter().any(|l| l.contains_key(level))
    {
        Ok(())
    } else {
        Err(format!("no node has the level label {level:?}"))
    }
}

fn count(labels: &[&StringMap], key: &str) -> usize {
    labels.iter().filter(|l| l.contains_key(key)).count()
}

/// Generic `…/block` and `…/rack` label keys present on nodes (first in name order).
fn generic_key(labels: &[&StringMap], word: &str) -> Option<String> {
    let mut keys = BTreeSet::new();
    for l in labels {
        for k in l.keys() {
            let last = k.rsplit('/').next().unwrap_or(k);
            // `word`, `…-word` or `…_word` (no string formatted per label: 10,000
            // nodes' labels are read twice).
            let is = last
                .strip_suffix(word)
                .is_some_and(|head| head.is_empty() || head.ends_with(['-', '_']));
            if is && !k.starts_with("cloud.google.com/gce-topology") {
                keys.insert(k.clone());
            }
        }
    }
    keys.into_iter().next()
}

fn detect(labels: &[&StringMap]) -> Result<Chosen, Error> {
    let total = labels.len();
    // Candidates: (id, display, levels present, nodes with the outermost present level).
    let mut candidates: Vec<(String, String, Vec<String>, usize)> = Vec::new();
    for (id, display, keys) in SCHEMES {
        let present: Vec<String> = keys
            .iter()
            .filter(|k| count(labels, k) > 0)
            .map(|k| (*k).to_owned())
            .collect();
        if let Some(first) = present.first() {
            let n = count(labels, first);
            candidates.push(((*id).into(), (*display).into(), present, n));
        }
    }
    let mut generic = Vec::new();
    if count(labels, ZONE_LABEL) > 0 {
        generic.push(ZONE_LABEL.to_owned());
    }
    let (block, rack) = (generic_key(labels, "block"), generic_key(labels, "rack"));
    if block.is_some() || rack.is_some() {
        generic.extend(block);
        generic.extend(rack);
        let n = generic.iter().map(|k| count(labels, k)).max().unwrap_or(0);
        candidates.push(("generic".into(), "generic".into(), generic, n));
    }
    let cliques = count(labels, CLIQUE_LABEL);
    // The scheme on the most nodes, then with the most levels, then in listed order.
    let best = candidates
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (c.3, c.2.len(), usize::MAX - i))
        .map(|(_, c)| c.clone());
    let (id, display, mut levels, n) = match best {
        Some(b) => b,
        None if cliques > 0 => {
            let topology = Topology::new([CLIQUE_LABEL]).map_err(|e| {
                Error::new(ErrorKind::InvalidTopology, "topology", core_reason(&e))
            })?;
            return Ok(Chosen {
                topology,
                choice: TopologyChoice {
                    levels: vec![CLIQUE_LABEL.into()],
                    origin: "detected",
                    name: Some("nvidia-clique".into()),
                    reason: format!(
                        "NVIDIA GPU cliques ({CLIQUE_LABEL}, one NVLink domain each) on {cliques} of {total} nodes"
                    ),
                    flavor: None,
                },
            });
        }
        None => {
            return Ok(Chosen {
                topology: Topology::flat(),
                choice: TopologyChoice {
                    levels: Vec::new(),
                    origin: "flat",
                    name: None,
                    reason: format!(
                        "no known topology labels on any of the {total} nodes: flat (the whole cluster, then single nodes)"
                    ),
                    flavor: None,
                },
            })
        }
    };
    let mut reason = format!(
        "{display} topology labels ({}) on {n} of {total} nodes",
        levels.join(", ")
    );
    let others: Vec<String> = candidates
        .iter()
        .filter(|c| c.0 != id)
        .map(|c| format!("{} on {} nodes", c.1, c.3))
        .collect();
    if !others.is_empty() {
        reason.push_str(&format!(" (also seen: {})", others.join(", ")));
    }
    if cliques > 0 {
        match clique_position(labels, &levels) {
            Some(k) => {
                levels.insert(k, CLIQUE_LABEL.to_owned());
                let place = match k {
                    0 => "as the outermost level".to_owned(),
                    k => format!("inside {}", levels[k - 1]),
                };
                reason.push_str(&format!(
                    "; NVIDIA GPU cliques ({CLIQUE_LABEL}) on {cliques} nodes nest {place} and are added as a level"
                ));
            }
            None => reason.push_str(&format!(
                "; NVIDIA GPU cliques ({CLIQUE_LABEL}) on {cliques} nodes do not nest with these levels and are left out"
            )),
        }
    }
    let topology = Topology::new(levels.iter().cloned())
        .map_err(|e| Error::new(ErrorKind::InvalidTopology, "topology", core_reason(&e)))?;
    Ok(Chosen {
        topology,
        choice: TopologyChoice {
            levels,
            origin: "detected",
            name: Some(id),
            reason,
            flavor: None,
        },
    })
}

/// Where the clique level nests among `levels`: the deepest `k` such that every clique
/// lies inside one domain of `levels[..k]` and every domain of each deeper level lies
/// inside one clique. `None` when no position nests.
fn clique_position(labels: &[&StringMap], levels: &[String]) -> Option<usize> {
    let with: Vec<&&StringMap> = labels
        .iter()
        .filter(|l| l.contains_key(CLIQUE_LABEL))
        .collect();
    let path = |l: &StringMap, k: usize| -> Vec<Option<String>> {
        levels[..k].iter().map(|key| l.get(key).cloned()).collect()
    };
    'k: for k in (0..=levels.len()).rev() {
        let mut parent: BTreeMap<&str, Vec<Option<String>>> = BTreeMap::new();
        for l in &with {
            let c = l.get(CLIQUE_LABEL).map(String::as_str).unwrap_or_default();
            let p = path(l, k);
            if parent.entry(c).or_insert_with(|| p.clone()) != &p {
                continue 'k;
            }
        }
        for j in k..levels.len() {
            let mut clique_of: BTreeMap<Vec<Option<String>>, &str> = BTreeMap::new();
            for l in &with {
                let c = l.get(CLIQUE_LABEL).map(String::as_str).unwrap_or_default();
                let p = path(l, j + 1);
                if p.last().is_some_and(Option::is_none) {
                    continue;
                }
                if *clique_of.entry(p).or_insert(c) != c {
                    continue 'k;
                }
            }
        }
        return Some(k);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn cliques_nest_between_subblock_and_host() {
        let b = "cloud.google.com/gce-topology-block";
        let s = "cloud.google.com/gce-topology-subblock";
        let h = "cloud.google.com/gce-topology-host";
        let nodes = [
            m(&[(b, "b1"), (s, "s1"), (h, "h1"), (CLIQUE_LABEL, "c1")]),
            m(&[(b, "b1"), (s, "s1"), (h, "h2"), (CLIQUE_LABEL, "c1")]),
            m(&[(b, "b1"), (s, "s1"), (h, "h3"), (CLIQUE_LABEL, "c2")]),
            m(&[(b, "b1"), (s, "s2"), (h, "h4"), (CLIQUE_LABEL, "c3")]),
        ];
        let refs: Vec<&StringMap> = nodes.iter().collect();
        let chosen = detect(&refs).unwrap();
        assert_eq!(chosen.choice.levels, [b, s, CLIQUE_LABEL, h]);
        assert_eq!(chosen.choice.name.as_deref(), Some("gke"));
        assert!(chosen
            .choice
            .reason
            .contains("nest inside cloud.google.com/gce-topology-subblock"));
        // A clique across two subblocks nests nowhere (the block holds three cliques, c2
        // spans two subblocks): left out, and the report says so.
        let mut crossing = nodes.clone();
        crossing[3].insert(CLIQUE_LABEL.into(), "c2".into());
        let refs: Vec<&StringMap> = crossing.iter().collect();
        let chosen = detect(&refs).unwrap();
        assert_eq!(chosen.choice.levels, [b, s, h]);
        assert!(
            chosen.choice.reason.contains("do not nest"),
            "{}",
            chosen.choice.reason
        );
    }
}
