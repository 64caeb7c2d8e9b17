//! The reference placer and `gang-core` agree on single-role gangs (issue 4's
//! correctness check): same feasibility, same level and domain, same member count; when
//! nothing fits, the diagnosis's cluster-wide fit, closest domain and relaxation match
//! what the reference computes. Checked on random small and medium generated clusters,
//! and along random operation sequences (reserve, release, external use, cordon), the
//! reference's plain records updated in step with the inventory.

use std::collections::HashMap;

use gang_benches::gen::{
    Baselines, Cluster, Rng, Spec, SynthNode, BLOCK, CPU, GPU, MAINTENANCE_TAINT, MEMORY, PRODUCT,
    RACK, RESOURCES, ZONE,
};
use gang_benches::reference::{RefAnswer, RefCluster};
use gang_core::{
    CompiledGang, ErrorKind, Gang, Inventory, Outcome, Placement, Policy, Quantity, Role, Solver,
    Toleration,
};

/// A random cluster spec: small (≤ 72 nodes) or medium (≤ ~2.5k nodes).
fn random_spec(rng: &mut Rng, medium: bool) -> Spec {
    let gpus = [1, 2, 4, 8][rng.below(4) as usize];
    let (racks, per_rack) = if medium {
        (rng.range(20, 80) as usize, rng.range(8, 32) as usize)
    } else {
        (rng.range(1, 12) as usize, rng.range(1, 6) as usize)
    };
    Spec {
        prefix: "t".into(),
        racks,
        nodes_per_rack: per_rack,
        racks_per_block: rng.range(1, 5) as usize,
        blocks_per_zone: rng.range(1, 3) as usize,
        gpus,
        cpu_cores: [16, 64, 128][rng.below(3) as usize],
        memory_gib: [64, 512, 2048][rng.below(3) as usize],
        used_pct: [0, 30, 50, 85, 95, 100][rng.below(6) as usize],
        seed: rng.next_u64(),
        cordoned_per_mille: rng.below(80) as u32,
        tainted_per_mille: rng.below(80) as u32,
        soft_tainted_per_mille: rng.below(80) as u32,
        no_rack_label_per_mille: rng.below(60) as u32,
        no_block_label_per_mille: rng.below(40) as u32,
        alt_product_every: rng.below(4) as usize,
        pad: rng.below(2) == 0,
    }
}

/// A random single-role gang on `spec`'s nodes.
fn random_gang(rng: &mut Rng, spec: &Spec) -> Gang {
    let count = if rng.below(2) == 0 {
        rng.range(1, 8)
    } else {
        rng.range(1, 64)
    } as u32;
    let mut role = Role::new("worker", count);
    role = match rng.below(4) {
        0 => role.request(GPU, "500m"),
        1 => role.request(GPU, 1),
        2 => role.request(GPU, rng.range(1, spec.gpus)),
        _ => role.request(GPU, spec.gpus),
    };
    if rng.below(2) == 0 {
        role = role.request(CPU, format!("{}m", rng.range(100, spec.cpu_cores * 500)));
    }
    if rng.below(3) == 0 {
        role = role.request(MEMORY, format!("{}Gi", rng.range(1, spec.memory_gib / 2)));
    }
    if rng.below(4) == 0 {
        let p = if rng.below(2) == 0 {
            spec.product()
        } else {
            spec.alt_product()
        };
        role = role.selector(PRODUCT, p);
    }
    if rng.below(4) == 0 {
        role = role.toleration(Toleration::equal(MAINTENANCE_TAINT, "true"));
    }
    if rng.below(5) == 0 {
        role = role.max_per_node(rng.range(1, 4) as u32);
    }
    if rng.below(5) == 0 {
        role = role.min_count(rng.range(1, u64::from(count)) as u32);
    }
    let gang = Gang::new("g").role(role);
    let gang = match rng.below(8) {
        0 | 1 => gang.required(RACK),
        2 => gang.required(BLOCK),
        3 | 4 => gang.preferred(RACK),
        5 => gang,
        6 => gang.required(ZONE).preferred(RACK),
        _ => gang.preferred(BLOCK),
    };
    match rng.below(4) {
        0 => gang.policy(Policy::MostFree),
        1 => gang.policy(Policy::Balanced),
        _ => gang,
    }
}

/// Places `gang` with both (the core through `solver`, so that its per-shape caches
/// carry over from one query to the next) and checks that they agree. Returns the
/// core's placement, or `None` when it does not fit (or the core rejects the request as
/// contradictory).
fn agree(
    solver: &mut Solver,
    inv: &Inventory,
    reference: &RefCluster,
    gang: &Gang,
    ctx: &str,
) -> Option<Placement> {
    agree_compiled(solver, inv, reference, gang, inv.compile(gang), ctx)
}

/// A placement's vector: distinct domains at each label level (a node lacking a level's
/// label is one of its own), then nodes.
fn vector(inv: &Inventory, p: &Placement) -> Vec<usize> {
    let snap = p.snapshot(inv);
    let mut v: Vec<usize> = (1..=Cluster::LEVELS.len())
        .map(|e| {
            let mut units: Vec<Vec<String>> = snap
                .assignments
                .iter()
                .map(|a| {
                    if a.path.len() >= e {
                        a.path[..e].to_vec()
                    } else {
                        vec![String::new(), a.node.clone()]
                    }
                })
                .collect();
            units.sort();
            units.dedup();
            units.len()
        })
        .collect();
    let mut nodes: Vec<&str> = snap.assignments.iter().map(|a| a.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    v.push(nodes.len());
    v
}

/// When the core chose another domain than the reference: the reference's domain, as
/// the core fills it (the gang pinned there by selectors on its path), is less compact,
/// or as compact with no better spare for the policy.
fn more_compact(
    solver: &mut Solver,
    inv: &Inventory,
    gang: &Gang,
    p: &Placement,
    want: &RefAnswer,
    ctx: &str,
) {
    let mut role = gang.get_roles()[0].clone();
    for (key, value) in Cluster::LEVELS.iter().zip(&want.domain) {
        role.set_selector(*key, value.clone());
    }
    let top = gang.get_topology();
    let mut pinned = Gang::new(gang.get_name())
        .role(role)
        .policy(gang.get_policy());
    pinned
        .set_required(top.required.clone())
        .set_preferred(top.preferred.clone());
    let q = inv
        .place_with(solver, &inv.compile(&pinned).unwrap())
        .unwrap()
        .placement()
        .cloned()
        .unwrap_or_else(|| panic!("{ctx}: the reference's domain does not fit the core"));
    assert_eq!(q.domain_path(), want.domain_path(), "{ctx}: pinned");
    assert_eq!(q.member_count(), want.members, "{ctx}: pinned members");
    let (mine, theirs) = (vector(inv, p), vector(inv, &q));
    assert!(
        mine <= theirs,
        "{ctx}: {p} ({mine:?}) less compact than {q} ({theirs:?})"
    );
    if mine == theirs {
        let cap = |path: &[String]| {
            want.domain_caps
                .iter()
                .find(|d| d.0 == path)
                .map(|d| d.1)
                .unwrap()
        };
        let values: Vec<String> = p.domain().iter().map(|(_, v)| v.clone()).collect();
        let (a, b) = (cap(&values) - want.members, want.spare);
        match gang.get_policy() {
            Policy::MostFree => assert!(a > b, "{ctx}: spare {a} vs the reference's {b}"),
            _ => assert!(a < b, "{ctx}: spare {a} vs the reference's {b}"),
        }
    }
}

/// [`agree`] for a gang compiled earlier (possibly before the inventory changed).
fn agree_compiled(
    solver: &mut Solver,
    inv: &Inventory,
    reference: &RefCluster,
    gang: &Gang,
    compiled: Result<CompiledGang, gang_core::Error>,
    ctx: &str,
) -> Option<Placement> {
    let want: RefAnswer = reference.place(gang).expect("single-role gang");
    let out = match compiled.and_then(|c| inv.place_with(solver, &c)) {
        Ok(out) => out,
        Err(e) => {
            // max_per_node × the widest domain below the count: rejected up front.
            assert_eq!(e.kind(), ErrorKind::Contradictory, "{ctx}: {e}");
            return None;
        }
    };
    match out {
        Outcome::Placed(p) => {
            assert!(want.feasible, "{ctx}: core placed {p}, reference: no fit");
            assert_eq!(p.level(), want.level.as_deref(), "{ctx}: level");
            assert_eq!(p.member_count(), want.members, "{ctx}: members");
            let values: Vec<String> = p.domain().iter().map(|(_, v)| v.clone()).collect();
            if values != want.domain {
                // The reference chooses by spare capacity alone; the core by compactness
                // first (issue 15). Its domain must then be strictly more compact than
                // the reference's as the core would fill it, or as compact and no worse
                // for the policy.
                more_compact(solver, inv, gang, &p, &want, ctx);
            }
            p.validate(inv)
                .unwrap_or_else(|e| panic!("{ctx}: invalid placement: {e}"));
            Some(p)
        }
        Outcome::Unschedulable(d) => {
            assert!(
                !want.feasible,
                "{ctx}: core says no fit ({d}), reference placed in {:?} at depth {}",
                want.domain, want.depth
            );
            assert_eq!(
                d.roles[0].cluster_fit, want.cluster_fit,
                "{ctx}: cluster fit"
            );
            // The closest domain (none when no node has the level's labels).
            let best = d.best.as_ref().map(|b| (b.domain.clone(), b.fits[0].fits));
            let closest = want.closest().map(|(path, cap)| (path.join("/"), *cap));
            assert_eq!(best, closest, "{ctx}: closest domain");
            let relax = reference.relaxation(gang).expect("single-role gang");
            let got = d
                .relaxation
                .as_ref()
                .map(|r| (r.level.clone(), r.domain.clone()));
            let want_relax = relax.as_ref().map(|(depth, dom)| {
                let level = depth.checked_sub(1).map(|i| Cluster::LEVELS[i].to_owned());
                (level, dom.join("/"))
            });
            match (&got, &want_relax, &relax) {
                (Some((level, mine)), Some((want_level, theirs)), Some((_, dom)))
                    if mine != theirs && level == want_level =>
                {
                    // The relaxed placement is chosen by compactness first too: the
                    // reference's domain, pinned, is no more compact than the core's.
                    let mut relaxed = gang.clone();
                    relaxed.set_required(level.clone()).set_preferred(None);
                    let p = inv
                        .place_with(solver, &inv.compile(&relaxed).unwrap())
                        .unwrap()
                        .placement()
                        .cloned()
                        .unwrap_or_else(|| panic!("{ctx}: the relaxation does not fit"));
                    assert_eq!(&p.domain_path(), mine, "{ctx}: relaxation");
                    let want = RefAnswer {
                        domain: dom.clone(),
                        ..reference.place(&relaxed).expect("single-role gang")
                    };
                    if want.domain != dom.clone() {
                        panic!("{ctx}: the reference relaxes to another domain");
                    }
                    more_compact(solver, inv, &relaxed, &p, &want, ctx);
                }
                _ => assert_eq!(got, want_relax, "{ctx}: relaxation"),
            }
            None
        }
        Outcome::Undecided(d) => panic!("{ctx}: single-role gang undecided: {d}"),
    }
}

#[test]
fn reference_and_core_agree_on_random_clusters() {
    let mut rng = Rng::new(0x5eed_0001);
    let mut placed = 0;
    let mut total = 0;
    for round in 0..800 {
        let medium = round % 20 == 19;
        let spec = random_spec(&mut rng, medium);
        let cluster = Cluster::generate(&spec);
        let inv = cluster.inventory();
        inv.validate().unwrap();
        let reference = cluster.reference();
        // One solver per cluster: its caches see several shapes, some of them twice.
        let mut solver = Solver::new();
        let gangs: Vec<Gang> = (0..6).map(|_| random_gang(&mut rng, &spec)).collect();
        for g in 0..8 {
            let gang = &gangs[g % gangs.len()];
            let ctx = format!("round {round} gang {g}: {spec:?}\n{gang:?}");
            placed += usize::from(agree(&mut solver, &inv, &reference, gang, &ctx).is_some());
            total += 1;
        }
    }
    eprintln!("{placed} of {total} random gangs placed");
    // Both outcomes must be well represented, or the test proves little.
    assert!(
        placed > total / 5 && placed < total * 4 / 5,
        "{placed} of {total} placed"
    );
}

/// The reference's view of a live inventory: capacity, external use and reservations per
/// node, turned into free amounts after every change.
struct Mirror {
    nodes: Vec<SynthNode>,
    reserved: Vec<[u64; 3]>,
    by_name: HashMap<String, usize>,
    reference: RefCluster,
}

impl Mirror {
    fn new(cluster: &Cluster) -> Self {
        Mirror {
            nodes: cluster.nodes.clone(),
            reserved: vec![[0; 3]; cluster.len()],
            by_name: cluster
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.clone(), i))
                .collect(),
            reference: cluster.reference(),
        }
    }

    fn sync(&mut self, i: usize) {
        let n = &self.nodes[i];
        let r = &mut self.reference.nodes_mut()[i];
        r.schedulable = n.schedulable;
        for (k, (name, free)) in r.free.iter_mut().enumerate() {
            assert_eq!(name, RESOURCES[k]);
            *free = n.capacity[k].saturating_sub(n.used[k].saturating_add(self.reserved[i][k]));
        }
    }

    /// Adds (or with `sign` false, removes) what `placement` of `gang` holds.
    fn hold(&mut self, gang: &Gang, placement: &Placement, take: bool) {
        let role = &gang.get_roles()[0];
        let per_member: Vec<u64> = RESOURCES
            .iter()
            .map(|r| {
                role.get_requests()
                    .find(|(name, _)| name == r)
                    .map_or(0, |(_, a)| a.resolve(r).expect("valid").millis())
            })
            .collect();
        for a in placement.assignments() {
            let i = self.by_name[&a.node];
            for (k, q) in per_member.iter().enumerate() {
                let amount = q * u64::from(a.count);
                let cell = &mut self.reserved[i][k];
                *cell = if take { *cell + amount } else { *cell - amount };
            }
            self.sync(i);
        }
    }
}

#[test]
fn reference_and_core_agree_along_operation_sequences() {
    let mut rng = Rng::new(0x5eed_0002);
    let mut steps = 0;
    for seq in 0..60 {
        let spec = random_spec(&mut rng, seq % 6 == 5);
        let cluster = Cluster::generate(&spec);
        let mut inv = cluster.inventory();
        let mut mirror = Mirror::new(&cluster);
        let mut live: Vec<(gang_core::ReservationId, Gang, Placement)> = Vec::new();
        // One long-lived solver and a few gangs compiled once, asked again after every
        // step: the warm path, whose cached capacities must follow every change.
        let mut solver = Solver::new();
        let probes: Vec<(Gang, Result<CompiledGang, gang_core::Error>)> = (0..3)
            .map(|_| {
                let g = random_gang(&mut rng, &spec);
                let c = inv.compile(&g);
                (g, c)
            })
            .collect();
        for step in 0..40 {
            let ctx = format!("sequence {seq} step {step}: {spec:?}");
            match rng.below(10) {
                // Place and reserve a gang, the reference updated in step.
                0..=3 => {
                    let gang = random_gang(&mut rng, &spec);
                    let ctx = format!("{ctx}\nplace {gang:?}");
                    if let Some(p) = agree(&mut solver, &inv, &mirror.reference, &gang, &ctx) {
                        let id = inv
                            .reserve(&p)
                            .unwrap_or_else(|c| panic!("{ctx}: fresh placement conflicts: {c}"));
                        mirror.hold(&gang, &p, true);
                        live.push((id, gang, p));
                    }
                }
                // Release a random live reservation.
                4 | 5 => {
                    if !live.is_empty() {
                        let (id, gang, p) = live.swap_remove(rng.below(live.len() as u64) as usize);
                        inv.release(id).unwrap();
                        mirror.hold(&gang, &p, false);
                    }
                }
                // Other workloads start or stop on a node.
                6 | 7 => {
                    let i = rng.below(cluster.len() as u64) as usize;
                    let gpus = rng.range(0, spec.gpus) * 1000;
                    let name = mirror.nodes[i].name.clone();
                    inv.set_used(&name, GPU, Quantity::from_millis(gpus))
                        .unwrap();
                    mirror.nodes[i].used[0] = gpus;
                    mirror.sync(i);
                }
                // Cordon or uncordon a node.
                _ => {
                    let i = rng.below(cluster.len() as u64) as usize;
                    let name = mirror.nodes[i].name.clone();
                    if mirror.nodes[i].schedulable {
                        inv.cordon(&name).unwrap();
                    } else {
                        inv.uncordon(&name).unwrap();
                    }
                    mirror.nodes[i].schedulable = !mirror.nodes[i].schedulable;
                    mirror.sync(i);
                }
            }
            // After every step, a fresh query and the warm probes agree.
            let fresh = random_gang(&mut rng, &spec);
            let fctx = format!("{ctx}\nfresh {fresh:?}");
            agree(&mut solver, &inv, &mirror.reference, &fresh, &fctx);
            for (gang, compiled) in &probes {
                let pctx = format!("{ctx}\nwarm probe {gang:?}");
                let c = compiled.clone();
                agree_compiled(&mut solver, &inv, &mirror.reference, gang, c, &pctx);
            }
            steps += 1;
        }
        inv.validate().unwrap();
    }
    assert_eq!(steps, 60 * 40);
}

#[test]
fn floor_reference_and_core_count_the_same_cluster_fit() {
    // The floor kernel's sum is the reference's (and the diagnosis's) cluster-wide fit
    // for a role with no selector and no toleration.
    for pct in [0, 50, 85] {
        let spec = Spec::hgx(gang_benches::gen::Size::K1, pct);
        let cluster = Cluster::generate(&spec);
        let gang =
            gang_benches::cases::single(&spec, gang_benches::cases::Constraint::Unconstrained, 1);
        let want = cluster.reference().place(&gang).unwrap().cluster_fit;
        let floor = cluster
            .columns()
            .fit_sum(&gang_benches::cases::worker_columns(&spec));
        assert_eq!(floor, want, "{pct}%");
    }
}
