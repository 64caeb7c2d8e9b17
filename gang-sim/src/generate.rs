//! Deterministic synthetic clusters: HGX-style and NVL72-style, fragmented by random use.
//!
//! A [`Spec`] fixes the shape (nodes per rack, racks per block, blocks per zone), the
//! node size, the share of GPUs already used and the rates of awkward nodes (cordoned,
//! tainted, missing a topology label, another GPU product). [`SynthCluster::generate`]
//! turns it into plain node records; the same seed always gives the same cluster, node
//! for node. [`SynthCluster::node_specs`], [`SynthCluster::inventory`] and
//! [`SynthCluster::cluster`] give it to gang-core and to the simulator. (This generator
//! was the benchmarks'; `gang-benches` now reuses it from here.)
//!
//! Topology levels are `zone`, `block`, `rack` (keys [`ZONE`], [`BLOCK`], [`RACK`]).
//! Rack values repeat across blocks (`r03` exists in every block), as scalable-unit
//! numbers do in real clusters, so a domain is only identified by its full path.

use crate::placer::{self, Cluster, NodeSpec, Taint, TaintEffect};
pub use crate::placer::{Inventory, Topology};
pub use crate::rng::Rng;

/// Zone level key (outermost).
pub const ZONE: &str = "topology.example.com/zone";
/// Block level key (HGX: 16 scalable units; NVL72: 8 racks).
pub const BLOCK: &str = "topology.example.com/block";
/// Rack level key (HGX: a 32-node scalable unit; NVL72: one 18-node NVLink domain).
pub const RACK: &str = "topology.example.com/rack";
/// GPU product label key.
pub const PRODUCT: &str = "nvidia.com/gpu.product";
/// GPU resource name.
pub const GPU: &str = "nvidia.com/gpu";
/// CPU resource name.
pub const CPU: &str = "cpu";
/// Memory resource name.
pub const MEMORY: &str = "memory";
/// Resource names, in the order of [`SynthNode::capacity`] and [`SynthNode::used`].
pub const RESOURCES: [&str; 3] = [GPU, CPU, MEMORY];
/// Key of the `NoSchedule` taint put on a few nodes.
pub const MAINTENANCE_TAINT: &str = "example.com/maintenance";
/// Key of the `PreferNoSchedule` taint put on a few nodes (never excludes a node).
pub const DEGRADED_TAINT: &str = "example.com/degraded";

const GIB: u64 = 1 << 30;

/// The two node and rack shapes of the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// 8-GPU nodes, 128 CPU, 2 TiB; 32 nodes per scalable unit (rack), 16 per block.
    Hgx,
    /// 4-GPU nodes (GB200 compute trays), 144 CPU, 960 GiB; 18 per NVLink rack, 8 racks
    /// per block.
    Nvl72,
}

impl Flavor {
    /// `"hgx"` or `"nvl72"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavor::Hgx => "hgx",
            Flavor::Nvl72 => "nvl72",
        }
    }
}

/// The three cluster sizes: about 1k, 10k and 100k nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// HGX 1,024 nodes; NVL72 1,008.
    K1,
    /// HGX 10,240 nodes; NVL72 10,080.
    K10,
    /// HGX 102,400 nodes; NVL72 100,800.
    K100,
}

impl Size {
    /// `"1k"`, `"10k"` or `"100k"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Size::K1 => "1k",
            Size::K10 => "10k",
            Size::K100 => "100k",
        }
    }

    fn factor(self) -> usize {
        match self {
            Size::K1 => 1,
            Size::K10 => 10,
            Size::K100 => 100,
        }
    }
}

/// Everything that determines a synthetic cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Node name prefix (`hgx`, `nvl72`).
    pub prefix: String,
    /// Number of racks (the cluster has `racks * nodes_per_rack` nodes).
    pub racks: usize,
    /// Nodes per rack.
    pub nodes_per_rack: usize,
    /// Racks per block.
    pub racks_per_block: usize,
    /// Blocks per zone.
    pub blocks_per_zone: usize,
    /// GPUs per node.
    pub gpus: u64,
    /// CPU cores per node.
    pub cpu_cores: u64,
    /// Memory per node, GiB.
    pub memory_gib: u64,
    /// Percentage of all GPUs in use, spread at random in jobs of 1, 2, half-node and
    /// whole-node GPUs, each on the freer of two random nodes (so the cluster is fragmented: most
    /// free GPUs sit on partly used nodes).
    pub used_pct: u32,
    /// Seed.
    pub seed: u64,
    /// Nodes cordoned, per thousand.
    pub cordoned_per_mille: u32,
    /// Nodes with an untolerated `NoSchedule` taint, per thousand.
    pub tainted_per_mille: u32,
    /// Nodes with a `PreferNoSchedule` taint (placement ignores it), per thousand.
    pub soft_tainted_per_mille: u32,
    /// Nodes missing the rack label (still in their block), per thousand.
    pub no_rack_label_per_mille: u32,
    /// Nodes missing the block label (so in no block and no rack), per thousand.
    pub no_block_label_per_mille: u32,
    /// Every `n`-th block carries the alternative GPU product (0: none).
    pub alt_product_every: usize,
    /// Zero-pad label values and names so that text order is numeric order.
    pub pad: bool,
}

impl Spec {
    /// An HGX-style cluster of `size` with `used_pct` % of GPUs used.
    pub fn hgx(size: Size, used_pct: u32) -> Self {
        Spec {
            prefix: "hgx".into(),
            racks: 32 * size.factor(),
            nodes_per_rack: 32,
            racks_per_block: 16,
            blocks_per_zone: 8,
            gpus: 8,
            cpu_cores: 128,
            memory_gib: 2048,
            used_pct,
            seed: 0x6a6e_6721_0000_0000 ^ ((size.factor() as u64) << 8) ^ u64::from(used_pct),
            cordoned_per_mille: 3,
            tainted_per_mille: 5,
            soft_tainted_per_mille: 5,
            no_rack_label_per_mille: 1,
            no_block_label_per_mille: 0,
            alt_product_every: 10,
            pad: true,
        }
    }

    /// An NVL72-style cluster of `size` with `used_pct` % of GPUs used.
    pub fn nvl72(size: Size, used_pct: u32) -> Self {
        Spec {
            prefix: "nvl72".into(),
            racks: 56 * size.factor(),
            nodes_per_rack: 18,
            racks_per_block: 8,
            blocks_per_zone: 8,
            gpus: 4,
            cpu_cores: 144,
            memory_gib: 960,
            used_pct,
            seed: 0x6e76_6c37_3200_0000 ^ ((size.factor() as u64) << 8) ^ u64::from(used_pct),
            cordoned_per_mille: 3,
            tainted_per_mille: 5,
            soft_tainted_per_mille: 5,
            no_rack_label_per_mille: 1,
            no_block_label_per_mille: 0,
            alt_product_every: 10,
            pad: true,
        }
    }

    /// The spec of `flavor`.
    pub fn of(flavor: Flavor, size: Size, used_pct: u32) -> Self {
        match flavor {
            Flavor::Hgx => Spec::hgx(size, used_pct),
            Flavor::Nvl72 => Spec::nvl72(size, used_pct),
        }
    }

    /// A cluster of `racks` racks of `flavor`, empty and clean (no GPUs used, no
    /// cordoned, tainted or unlabelled nodes, one GPU product): the simulator's default.
    ///
    /// ```
    /// use gang_sim::generate::{Flavor, Spec, SynthCluster};
    /// let c = SynthCluster::generate(&Spec::clean(Flavor::Nvl72, 2));
    /// assert_eq!((c.len(), c.gpu_use()), (36, (0, 144)));
    /// assert!(c.nodes.iter().all(|n| n.schedulable && n.taints.is_empty()));
    /// ```
    pub fn clean(flavor: Flavor, racks: usize) -> Self {
        let mut s = Spec::of(flavor, Size::K1, 0);
        s.racks = racks;
        s.cordoned_per_mille = 0;
        s.tainted_per_mille = 0;
        s.soft_tainted_per_mille = 0;
        s.no_rack_label_per_mille = 0;
        s.no_block_label_per_mille = 0;
        s.alt_product_every = 0;
        s
    }

    /// Number of nodes the spec produces.
    pub fn node_count(&self) -> usize {
        self.racks * self.nodes_per_rack
    }

    /// The GPU product label of ordinary nodes.
    pub fn product(&self) -> &'static str {
        if self.gpus == 4 {
            "NVIDIA-GB200"
        } else {
            "NVIDIA-H100-80GB-HBM3"
        }
    }

    /// The GPU product label of every `alt_product_every`-th block.
    pub fn alt_product(&self) -> &'static str {
        if self.gpus == 4 {
            "NVIDIA-GB300"
        } else {
            "NVIDIA-H200"
        }
    }
}

/// One generated node, as plain data. Amounts are milli-units, in [`RESOURCES`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthNode {
    /// Node name.
    pub name: String,
    /// Labels: topology levels present, then the GPU product.
    pub labels: Vec<(&'static str, String)>,
    /// Allocatable capacity, milli-units.
    pub capacity: [u64; 3],
    /// Used by other workloads, milli-units.
    pub used: [u64; 3],
    /// Taints.
    pub taints: Vec<Taint>,
    /// `false` when cordoned.
    pub schedulable: bool,
}

impl SynthNode {
    /// Free amount of resource `r` (capacity − used, saturating).
    pub fn free(&self, r: usize) -> u64 {
        self.capacity[r].saturating_sub(self.used[r])
    }

    /// The node as a `gang-core` [`NodeSpec`].
    pub fn node_spec(&self) -> NodeSpec {
        let mut n = NodeSpec::new(self.name.clone());
        for (k, v) in &self.labels {
            n = n.label(*k, v.clone());
        }
        for (i, r) in RESOURCES.iter().enumerate() {
            n = n.capacity(*r, placer::milli_amount(self.capacity[i]));
            if self.used[i] > 0 {
                n = n.used(*r, placer::milli_amount(self.used[i]));
            }
        }
        for t in &self.taints {
            n = n.taint(t.clone());
        }
        if !self.schedulable {
            n = n.cordoned();
        }
        n
    }
}

/// A generated cluster: its spec, its topology levels and its nodes (in generation
/// order, which is topology order when `pad` is set).
#[derive(Debug, Clone)]
pub struct SynthCluster {
    /// What it was generated from.
    pub spec: Spec,
    /// The nodes.
    pub nodes: Vec<SynthNode>,
}

fn num(prefix: &str, i: usize, width: usize, pad: bool) -> String {
    if pad {
        format!("{prefix}{i:0width$}")
    } else {
        format!("{prefix}{i}")
    }
}

fn digits(n: usize) -> usize {
    n.saturating_sub(1).max(1).ilog10() as usize + 1
}

impl SynthCluster {
    /// The topology levels, outermost first.
    pub const LEVELS: [&'static str; 3] = [ZONE, BLOCK, RACK];

    /// Generates the cluster `spec` describes. Deterministic in the spec (and its seed).
    pub fn generate(spec: &Spec) -> SynthCluster {
        let mut rng = Rng::new(spec.seed);
        let n = spec.node_count();
        let blocks = spec.racks.div_ceil(spec.racks_per_block.max(1));
        let zones = blocks.div_ceil(spec.blocks_per_zone.max(1));
        let (zw, bw, rw, nw) = (
            digits(zones),
            digits(blocks),
            digits(spec.racks_per_block),
            digits(spec.nodes_per_rack),
        );
        let mut nodes = Vec::with_capacity(n);
        for rack in 0..spec.racks {
            let block = rack / spec.racks_per_block.max(1);
            let zone = block / spec.blocks_per_zone.max(1);
            let rack_in_block = rack % spec.racks_per_block.max(1);
            let (zv, bv, rv) = (
                num("z", zone, zw, spec.pad),
                num("b", block, bw, spec.pad),
                num("r", rack_in_block, rw, spec.pad),
            );
            let product = if spec.alt_product_every > 0
                && block % spec.alt_product_every == spec.alt_product_every - 1
            {
                spec.alt_product()
            } else {
                spec.product()
            };
            for k in 0..spec.nodes_per_rack {
                let name = format!("{}-{bv}-{rv}-{}", spec.prefix, num("n", k, nw, spec.pad));
                let mut labels = Vec::with_capacity(4);
                labels.push((ZONE, zv.clone()));
                if !rng.chance(spec.no_block_label_per_mille) {
                    labels.push((BLOCK, bv.clone()));
                }
                if !rng.chance(spec.no_rack_label_per_mille) {
                    labels.push((RACK, rv.clone()));
                }
                labels.push((PRODUCT, product.to_owned()));
                let mut taints = Vec::new();
                if rng.chance(spec.tainted_per_mille) {
                    taints.push(Taint::new(
                        MAINTENANCE_TAINT,
                        "true",
                        TaintEffect::NoSchedule,
                    ));
                }
                if rng.chance(spec.soft_tainted_per_mille) {
                    taints.push(Taint::new(
                        DEGRADED_TAINT,
                        "ecc",
                        TaintEffect::PreferNoSchedule,
                    ));
                }
                let schedulable = !rng.chance(spec.cordoned_per_mille);
                nodes.push(SynthNode {
                    name,
                    labels,
                    capacity: [
                        spec.gpus * 1000,
                        spec.cpu_cores * 1000,
                        spec.memory_gib * GIB * 1000,
                    ],
                    used: [0; 3],
                    taints,
                    schedulable,
                });
            }
        }
        fill_use(spec, &mut rng, &mut nodes);
        SynthCluster {
            spec: spec.clone(),
            nodes,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the cluster has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A short name: `hgx-10k-50` style when the spec is a standard one.
    pub fn name(&self) -> String {
        format!(
            "{}-{}n-{}",
            self.spec.prefix,
            self.len(),
            self.spec.used_pct
        )
    }

    /// The `gang-core` topology (zone, block, rack).
    pub fn topology() -> Topology {
        placer::topology(&Self::LEVELS)
    }

    /// Every node as a `gang-core` [`NodeSpec`].
    pub fn node_specs(&self) -> Vec<NodeSpec> {
        self.nodes.iter().map(SynthNode::node_spec).collect()
    }

    /// Builds the `gang-core` inventory.
    ///
    /// # Panics
    /// If the core rejects the generated nodes (a bug in the generator or the core).
    pub fn inventory(&self) -> Inventory {
        placer::inventory(&Self::LEVELS, self.node_specs()).expect("generated inventory is valid")
    }

    /// The cluster for a simulation.
    ///
    /// ```
    /// use gang_sim::generate::{Size, Spec, SynthCluster};
    /// let c = SynthCluster::generate(&Spec::hgx(Size::K1, 0)).cluster();
    /// assert_eq!(c.len(), 1024);
    /// ```
    ///
    /// # Panics
    /// If the core rejects the generated nodes (a bug in the generator or the core).
    pub fn cluster(&self) -> Cluster {
        Cluster::from_nodes(&Self::LEVELS, self.node_specs()).expect("generated cluster is valid")
    }

    /// GPUs used and GPUs in total.
    pub fn gpu_use(&self) -> (u64, u64) {
        self.nodes.iter().fold((0, 0), |(u, t), n| {
            (u + n.used[0] / 1000, t + n.capacity[0] / 1000)
        })
    }
}

/// Spreads `used_pct` % of all GPUs over random nodes in jobs of 1, 2, half a node's or a
/// whole node's GPUs (each to the freer of two random nodes, as a least-allocated scheduler spreads
/// them, cut to what that node has free), with CPU and memory in proportion plus a
/// little noise.
fn fill_use(spec: &Spec, rng: &mut Rng, nodes: &mut [SynthNode]) {
    let n = nodes.len();
    if n == 0 || spec.gpus == 0 {
        return;
    }
    let total = n as u64 * spec.gpus;
    let target = total * u64::from(spec.used_pct.min(100)) / 100;
    let mut used = vec![0u64; n];
    let mut allocated = 0u64;
    while allocated < target {
        let size = match rng.below(100) {
            0..=34 => 1,
            35..=59 => 2,
            60..=79 => (spec.gpus / 2).max(1),
            _ => spec.gpus,
        }
        .min(spec.gpus);
        // Spread like a least-allocated scheduler: the freer of two random nodes.
        let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
        let ix = if used[b] < used[a] { b } else { a };
        let take = size.min(spec.gpus - used[ix]).min(target - allocated);
        used[ix] += take;
        allocated += take;
    }
    // CPU and memory: three quarters of the node per GPU share used, plus noise.
    let cpu_per_gpu = spec.cpu_cores * 1000 * 3 / 4 / spec.gpus;
    let mem_per_gpu = spec.memory_gib * GIB * 1000 * 3 / 4 / spec.gpus;
    for (node, &g) in nodes.iter_mut().zip(&used) {
        node.used[0] = g * 1000;
        node.used[1] = g * cpu_per_gpu + rng.below(5) * 1000;
        node.used[2] = g * mem_per_gpu + rng.below(33) * GIB * 1000;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_spread() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u64> = (0..100).map(|_| a.below(10)).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        assert!((0..10).all(|d| xs.contains(&d)));
    }

    #[test]
    fn any_number_of_racks() {
        let mut spec = Spec::hgx(Size::K1, 0);
        spec.racks = 3;
        let c = SynthCluster::generate(&spec);
        assert_eq!(c.len(), 96);
        assert_eq!(c.cluster().len(), 96);
        assert_eq!(c.gpu_use(), (0, 768));
    }

    #[test]
    fn digits_width() {
        assert_eq!(digits(1), 1);
        assert_eq!(digits(10), 1);
        assert_eq!(digits(11), 2);
        assert_eq!(digits(200), 3);
    }
}
