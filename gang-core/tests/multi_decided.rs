//! Multi-role gangs are decided (issue 15): the adversarial shapes that used to exhaust
//! the search or take seconds — racks that hold each role alone but never both, a
//! cluster that holds one two-GPU member per node — answer `unschedulable` (proven) or
//! `placed`, and random clusters of 40–250 partly used nodes with 2–4 roles of up to 24
//! members answer without `Undecided` under the default limits, every placement valid.
//! Times are measured in `benches/benches/multi.rs`, not here.

use gang_core::{Gang, Inventory, Limits, NodeSpec, Outcome, Role, Solver, Topology};

/// `nodes` nodes in racks of 4, each with 3 GPUs and 4 CPUs.
fn racks_of_four(nodes: usize) -> Inventory {
    Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes((0..nodes).map(|i| {
            NodeSpec::new(format!("n{i:06}"))
                .label("rack", format!("r{:05}", i / 4))
                .capacity("gpu", 3)
                .capacity("cpu", 4)
        }))
        .build()
        .unwrap()
}

/// Roles a (4) and b (2) of two GPUs each, rack required: each role alone fits any
/// rack (one member per node), both together never (six members, four nodes).
fn a_and_b() -> Gang {
    Gang::new("ab")
        .role(Role::new("a", 4).request("gpu", 2))
        .role(Role::new("b", 2).request("gpu", 2))
        .required("rack")
}

fn with_launcher(g: Gang) -> Gang {
    g.role(Role::new("launcher", 1).request("cpu", 1).unconstrained())
}

/// The elastic variant: a 2..=4, b 1..=2; a rack holds four of them.
fn elastic() -> Gang {
    Gang::new("ab")
        .role(Role::new("a", 4).min_count(2).request("gpu", 2))
        .role(Role::new("b", 2).min_count(1).request("gpu", 2))
        .required("rack")
}

fn unschedulable(inv: &Inventory, gang: &Gang) {
    let out = inv.place(gang).unwrap();
    match &out {
        Outcome::Unschedulable(d) => assert!(!d.search_exhausted, "{d}"),
        other => panic!("expected a proven unschedulable, got {other:?}"),
    }
}

#[test]
fn racks_that_hold_each_role_but_not_both_are_unschedulable() {
    for nodes in [1_000, 4_000, 10_000] {
        let inv = racks_of_four(nodes);
        unschedulable(&inv, &a_and_b());
        unschedulable(&inv, &with_launcher(a_and_b()));
    }
}

#[test]
fn racks_that_hold_each_role_but_not_both_take_little_work() {
    // The work is linear in the nodes: a few units per node, far below the default.
    let inv = racks_of_four(10_000);
    let c = inv.compile(&with_launcher(a_and_b())).unwrap();
    let mut solver = Solver::with_limits(Limits::work(100_000));
    let out = inv.place_with(&mut solver, &c).unwrap();
    assert!(matches!(out, Outcome::Unschedulable(_)), "{out:?}");
}

#[test]
fn the_elastic_variant_takes_the_most_members_one_rack_holds() {
    for nodes in [1_000, 10_000] {
        let inv = racks_of_four(nodes);
        for gang in [elastic(), with_launcher(elastic())] {
            let out = inv.place(&gang).unwrap();
            let p = out.placement().expect("placed");
            p.validate(&inv).unwrap();
            assert!(p.search_complete());
            // a first (roles fill in the order given): 3 of a, then 1 of b.
            assert_eq!((p.placed("a"), p.placed("b")), (Some(3), Some(1)));
            assert_eq!(p.domain_path(), "r00000");
        }
        // Within little work too.
        let c = inv.compile(&elastic()).unwrap();
        let mut solver = Solver::with_limits(Limits::work(100_000));
        assert!(inv.place_with(&mut solver, &c).unwrap().is_placed());
    }
}

#[test]
fn one_two_gpu_member_per_three_gpu_node_is_unschedulable() {
    // 40 nodes of 3 GPUs hold at most 40 two-GPU members: 24 + 24 cannot fit, though
    // 96 GPUs are asked of 120.
    let inv = Inventory::builder(Topology::new(["rack"]).unwrap())
        .nodes((0..40).map(|i| {
            NodeSpec::new(format!("n{i}"))
                .label("rack", format!("r{}", i / 8))
                .capacity("gpu", 3)
        }))
        .build()
        .unwrap();
    let gang = Gang::new("g")
        .role(Role::new("a", 24).request("gpu", 2))
        .role(Role::new("b", 24).request("gpu", 2));
    unschedulable(&inv, &gang);
    let mut solver = Solver::with_limits(Limits::work(1_000));
    let c = inv.compile(&gang).unwrap();
    assert!(matches!(
        inv.place_with(&mut solver, &c).unwrap(),
        Outcome::Unschedulable(_)
    ));
    // One member fewer of each still needs 46 nodes.
    let fewer = Gang::new("g")
        .role(Role::new("a", 20).request("gpu", 2))
        .role(Role::new("b", 20).request("gpu", 2));
    assert!(inv.place(&fewer).unwrap().is_placed());
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// A cluster of `n` partly used nodes in blocks of racks: GPU nodes and CPU nodes.
fn random_cluster(rng: &mut Rng, n: usize, busy: u64) -> Inventory {
    let rack_size = rng.range(4, 16) as usize;
    let racks_per_block = rng.range(2, 4) as usize;
    let nodes = (0..n).map(|i| {
        let rack = i / rack_size;
        let gpu_node = rng.below(3) != 0;
        let (gpu, cpu, mem) = if gpu_node { (8, 64, 512) } else { (0, 96, 384) };
        let mut spec = NodeSpec::new(format!("n{i:03}"))
            .label("block", format!("b{}", rack / racks_per_block))
            .label("rack", format!("r{rack:03}"))
            .capacity("cpu", cpu)
            .capacity("memory", mem);
        if gpu > 0 {
            spec = spec.capacity("gpu", gpu);
            if rng.below(4) < busy {
                spec = spec.used("gpu", rng.range(1, 7) as i64);
            }
        }
        if rng.below(4) < busy {
            spec = spec
                .used("cpu", rng.range(4, cpu as u64 - 8) as i64)
                .used("memory", rng.range(16, mem as u64 - 64) as i64);
        }
        spec
    });
    Inventory::builder(Topology::new(["block", "rack"]).unwrap())
        .nodes(nodes.collect::<Vec<_>>())
        .build()
        .unwrap()
}

/// 2–4 roles of `least`..=24 members, GPU-, CPU- and memory-heavy, under a random
/// constraint; sometimes an unconstrained role, sometimes an elastic one.
fn random_gang(rng: &mut Rng, least: u64) -> Gang {
    let mut g = Gang::new("g");
    for r in 0..rng.range(2, 4) {
        let count = rng.range(least, 24) as u32;
        let mut role = Role::new(format!("r{r}"), count);
        role = match rng.below(3) {
            0 => role
                .request("gpu", rng.range(1, 4) as i64)
                .request("cpu", rng.range(2, 16) as i64)
                .request("memory", rng.range(16, 128) as i64),
            1 => role
                .request("cpu", rng.range(8, 32) as i64)
                .request("memory", rng.range(8, 64) as i64),
            _ => role
                .request("cpu", rng.range(1, 4) as i64)
                .request("memory", rng.range(64, 256) as i64),
        };
        if rng.below(6) == 0 {
            role = role.unconstrained();
        }
        if rng.below(6) == 0 {
            role = role.min_count(rng.range(1, u64::from(count)) as u32);
        }
        if rng.below(8) == 0 {
            role = role.max_per_node(rng.range(1, 3) as u32);
        }
        g = g.role(role);
    }
    match rng.below(4) {
        0 => g.required("rack"),
        1 => g.required("block"),
        2 => g.preferred("rack"),
        _ => g,
    }
}

#[test]
fn random_multi_role_gangs_are_decided_and_valid() {
    // Half the nodes partly used, any gang size; then three quarters used and big
    // gangs, near what a domain holds (where the old search ran out of budget).
    let loose = random_cases(LOOSE, 2, 1, 300);
    let tight = random_cases(TIGHT, 3, 12, 300);
    assert!(
        loose.is_empty() && tight.is_empty(),
        "undecided: {loose:?} {tight:?}"
    );
}

/// The two generators' seeds.
const LOOSE: u64 = 0x9e37_79b9_7f4a_7c15;
const TIGHT: u64 = 0x2545_f491_4f6c_dd1d;

#[test]
#[ignore = "18,000 queries: seconds in release, minutes in debug"]
fn random_multi_role_gangs_at_3000_per_generator_and_seed() {
    // `cargo test --release -p gang-core --test multi_decided -- --ignored`: the
    // numbers of benches/README.md ("Multi-role gangs decided"). The last instance
    // left undecided, the tight generator's case 2640 with the seed times 3, is pinned
    // by `the_tight_generators_case_2640_is_placed` below.
    for times in [1u64, 2, 3] {
        let loose = random_cases(LOOSE.wrapping_mul(times) | 1, 2, 1, 3000);
        let tight = random_cases(TIGHT.wrapping_mul(times) | 1, 3, 12, 3000);
        assert!(
            loose.is_empty(),
            "seed x{times}, loose, undecided: {loose:?}"
        );
        assert!(
            tight.is_empty(),
            "seed x{times}, tight, undecided: {tight:?}"
        );
    }
}

/// The generator's instances in order: a cluster of 40–250 nodes and a gang each.
fn draws(seed: u64, busy: u64, least: u64) -> impl Iterator<Item = (Inventory, Gang)> {
    let mut rng = Rng(seed);
    std::iter::from_fn(move || {
        let n = rng.range(40, 250) as usize;
        let inv = random_cluster(&mut rng, n, busy);
        Some((inv, random_gang(&mut rng, least)))
    })
}

/// The generator's instance `case` (as [`random_cases`] draws it).
fn nth_case(seed: u64, busy: u64, least: u64, case: usize) -> (Inventory, Gang) {
    draws(seed, busy, least).nth(case).expect("endless")
}

/// Instances of the generators (the quick set's loose 118 and tight 49, both in a
/// block) where the first domains' walks spend the objective's 4,000 work units and
/// a later domain, which the cheap bound could not rule out, gets none: the root's
/// bound by levels, set up on its own, shows it cannot beat the best, so the search is
/// complete (it was not before). A walk with all the work it needs (1,000,000 units)
/// completes and finds the same placement.
#[test]
fn a_domain_the_objectives_work_does_not_reach_is_decided_by_the_bound() {
    for (seed, busy, least, case) in [(LOOSE, 2, 1, 118), (TIGHT, 3, 12, 49)] {
        let (inv, gang) = nth_case(seed, busy, least, case);
        let c = inv.compile(&gang).unwrap();
        let place = |solver: &mut Solver| match inv.place_with(solver, &c).unwrap() {
            Outcome::Placed(p) => p,
            other => panic!("case {case}: {other:?}"),
        };
        let p = place(&mut Solver::new());
        assert!(p.search_complete(), "case {case}: {p}");
        let walked = place(&mut Solver::new().objective_work(1_000_000));
        assert!(walked.search_complete(), "case {case}: {walked}");
        assert_eq!(p, walked, "case {case}");
    }
}

/// `cases` instances of one generator: every placement valid, both answers common;
/// returns the cases left undecided.
fn random_cases(seed: u64, busy: u64, least: u64, cases: usize) -> Vec<usize> {
    let (mut placed, mut unschedulable, mut undecided) = (0, 0, Vec::new());
    let mut incomplete = 0;
    for (case, (inv, gang)) in draws(seed, busy, least).take(cases).enumerate() {
        // A request the layout contradicts (max_per_node against the widest rack) is
        // an error, not a query.
        let Ok(c) = inv.compile(&gang) else { continue };
        let mut solver = Solver::new();
        match inv.place_with(&mut solver, &c).unwrap() {
            Outcome::Placed(p) => {
                p.validate(&inv)
                    .unwrap_or_else(|e| panic!("case {case}: {e}"));
                placed += 1;
                incomplete += usize::from(!p.search_complete());
            }
            Outcome::Unschedulable(_) => unschedulable += 1,
            Outcome::Undecided(_) => undecided.push(case),
        }
    }
    // Both answers occur (the generator is not trivially one-sided).
    assert!(
        placed > cases / 10 && unschedulable > cases / 10,
        "{placed} placed, {unschedulable} not"
    );
    eprintln!(
        "seed {seed:x}: {placed} placed ({incomplete} after an incomplete search), \
         {unschedulable} unschedulable, undecided {undecided:?}"
    );
    undecided
}

/// The tight generator's case 1952 (3,000 instances in; the test above runs 300), built
/// explicitly: 51 partly used nodes in racks of 14 (three racks to a block), two
/// memory-heavy roles inside one block and two unconstrained ones, 65 members in all.
/// The walk used to spend its whole share below a wrong first choice and answer
/// `Undecided`; CP-SAT places it (the witness below, checked here by hand).
mod case_1952 {
    use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};

    // (rack, gpu, gpu used, cpu, cpu used, memory, memory used)
    pub const NODES: [(u8, i64, i64, i64, i64, i64, i64); 51] = [
        (0, 8, 5, 64, 38, 512, 385),
        (0, 8, 6, 64, 8, 512, 165),
        (0, 8, 0, 64, 32, 512, 121),
        (0, 8, 2, 64, 0, 512, 0),
        (0, 0, 0, 96, 11, 384, 185),
        (0, 0, 0, 96, 53, 384, 171),
        (0, 8, 3, 64, 48, 512, 299),
        (0, 8, 0, 64, 0, 512, 0),
        (0, 0, 0, 96, 63, 384, 218),
        (0, 8, 0, 64, 7, 512, 212),
        (0, 8, 1, 64, 51, 512, 398),
        (0, 8, 3, 64, 13, 512, 316),
        (0, 0, 0, 96, 73, 384, 285),
        (0, 8, 2, 64, 0, 512, 0),
        (1, 0, 0, 96, 0, 384, 0),
        (1, 8, 4, 64, 49, 512, 362),
        (1, 8, 0, 64, 27, 512, 61),
        (1, 0, 0, 96, 68, 384, 305),
        (1, 8, 3, 64, 27, 512, 158),
        (1, 8, 5, 64, 43, 512, 210),
        (1, 8, 2, 64, 49, 512, 323),
        (1, 0, 0, 96, 79, 384, 76),
        (1, 0, 0, 96, 33, 384, 164),
        (1, 8, 5, 64, 0, 512, 0),
        (1, 8, 5, 64, 31, 512, 328),
        (1, 8, 5, 64, 51, 512, 61),
        (1, 8, 7, 64, 8, 512, 383),
        (1, 8, 4, 64, 11, 512, 197),
        (2, 8, 7, 64, 43, 512, 265),
        (2, 0, 0, 96, 15, 384, 188),
        (2, 0, 0, 96, 11, 384, 100),
        (2, 8, 0, 64, 12, 512, 47),
        (2, 8, 6, 64, 0, 512, 0),
        (2, 0, 0, 96, 0, 384, 0),
        (2, 8, 2, 64, 29, 512, 380),
        (2, 8, 0, 64, 21, 512, 92),
        (2, 8, 1, 64, 7, 512, 312),
        (2, 8, 2, 64, 0, 512, 0),
        (2, 0, 0, 96, 46, 384, 132),
        (2, 8, 5, 64, 35, 512, 291),
        (2, 8, 3, 64, 4, 512, 214),
        (2, 0, 0, 96, 0, 384, 0),
        (3, 8, 6, 64, 5, 512, 198),
        (3, 0, 0, 96, 67, 384, 142),
        (3, 0, 0, 96, 0, 384, 0),
        (3, 8, 0, 64, 0, 512, 0),
        (3, 0, 0, 96, 53, 384, 206),
        (3, 0, 0, 96, 0, 384, 0),
        (3, 8, 0, 64, 40, 512, 332),
        (3, 8, 7, 64, 0, 512, 0),
        (3, 8, 0, 64, 0, 512, 0),
    ];
    // CP-SAT's placement: (node, members of r0, r1, r2, r3).
    pub const WITNESS: [(usize, [u32; 4]); 43] = [
        (1, [1, 0, 1, 0]),
        (2, [2, 0, 0, 0]),
        (3, [0, 0, 0, 2]),
        (4, [1, 0, 0, 0]),
        (5, [1, 0, 0, 0]),
        (6, [0, 1, 0, 0]),
        (7, [0, 0, 0, 2]),
        (8, [0, 0, 1, 0]),
        (9, [0, 1, 0, 0]),
        (11, [0, 0, 1, 0]),
        (13, [0, 0, 0, 2]),
        (14, [1, 0, 1, 0]),
        (15, [0, 0, 1, 0]),
        (16, [0, 0, 0, 2]),
        (18, [1, 0, 1, 0]),
        (19, [0, 1, 0, 0]),
        (20, [0, 0, 1, 0]),
        (21, [0, 0, 2, 0]),
        (22, [0, 1, 0, 0]),
        (23, [0, 0, 0, 2]),
        (24, [0, 0, 1, 0]),
        (25, [0, 2, 0, 0]),
        (27, [0, 0, 2, 0]),
        (28, [1, 0, 0, 0]),
        (29, [1, 0, 0, 0]),
        (30, [0, 1, 0, 0]),
        (31, [2, 0, 0, 0]),
        (32, [0, 2, 0, 0]),
        (33, [1, 0, 1, 0]),
        (35, [2, 0, 0, 0]),
        (36, [1, 0, 0, 0]),
        (37, [0, 2, 0, 0]),
        (38, [1, 0, 0, 0]),
        (39, [0, 1, 0, 0]),
        (40, [0, 0, 2, 0]),
        (41, [0, 0, 1, 1]),
        (42, [0, 1, 0, 0]),
        (43, [0, 1, 0, 0]),
        (44, [0, 1, 0, 0]),
        (45, [0, 2, 0, 0]),
        (47, [0, 0, 0, 1]),
        (49, [0, 2, 0, 0]),
        (50, [0, 2, 0, 0]),
    ];

    pub fn inventory() -> Inventory {
        Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes(
                NODES
                    .iter()
                    .enumerate()
                    .map(|(i, &(rack, g, gu, c, cu, m, mu))| {
                        let mut spec = NodeSpec::new(format!("n{i:03}"))
                            .label("block", format!("b{}", rack / 3))
                            .label("rack", format!("r{rack:03}"))
                            .capacity("cpu", c)
                            .used("cpu", cu)
                            .capacity("memory", m)
                            .used("memory", mu);
                        if g > 0 {
                            spec = spec.capacity("gpu", g).used("gpu", gu);
                        }
                        spec
                    }),
            )
            .build()
            .unwrap()
    }

    /// `(count, cpu, memory, max per node, constrained)` per role.
    pub const ROLES: [(u32, i64, i64, Option<u32>, bool); 4] = [
        (16, 3, 194, None, true),
        (21, 1, 213, None, false),
        (16, 3, 147, None, true),
        (12, 1, 202, Some(2), false),
    ];

    pub fn gang() -> Gang {
        let mut g = Gang::new("g").required("block");
        for (i, &(count, cpu, mem, most, constrained)) in ROLES.iter().enumerate() {
            let mut role = Role::new(format!("r{i}"), count)
                .request("cpu", cpu)
                .request("memory", mem);
            if let Some(most) = most {
                role = role.max_per_node(most);
            }
            if !constrained {
                role = role.unconstrained();
            }
            g = g.role(role);
        }
        g
    }
}

#[test]
fn the_tight_generators_case_1952_is_placed() {
    use case_1952::{NODES, ROLES, WITNESS};
    // The witness is a placement: every role's count, every node's free CPU and
    // memory, r3 at most two per node, the constrained roles inside block b0.
    let mut placed = [0u32; 4];
    for &(n, x) in &WITNESS {
        let (rack, _, _, c, cu, m, mu) = NODES[n];
        let (mut cpu, mut mem) = (0, 0);
        for (i, &k) in x.iter().enumerate() {
            let (_, q_cpu, q_mem, most, constrained) = ROLES[i];
            placed[i] += k;
            cpu += i64::from(k) * q_cpu;
            mem += i64::from(k) * q_mem;
            assert!(most.is_none_or(|most| k <= most), "node {n}");
            assert!(!constrained || k == 0 || rack / 3 == 0, "node {n}");
        }
        assert!(cpu <= c - cu && mem <= m - mu, "node {n}");
    }
    assert_eq!(placed, ROLES.map(|r| r.0));
    // gang places it under the default limits. (Block is the only level: a search
    // that ran out would answer `Undecided`. `search_complete` may still be false, as
    // the least-vector search after it has a small budget of its own.)
    let inv = case_1952::inventory();
    let out = inv.place(&case_1952::gang()).unwrap();
    let p = out.placement().unwrap_or_else(|| panic!("{out:?}"));
    p.validate(&inv).unwrap();
    assert_eq!(p.domain_path(), "b0");
}

#[test]
fn an_undecided_answer_says_how_far_the_search_got() {
    // 250 racks; too little work to look at all of them. (Roles a and b of one shape
    // share each rack's capacity, which rules every rack out before any node is
    // visited, so b asks for a CPU too: then each rack needs its relaxation bound.)
    let inv = racks_of_four(1_000);
    let gang = Gang::new("ab")
        .role(Role::new("a", 4).request("gpu", 2))
        .role(Role::new("b", 2).request("gpu", 2).request("cpu", 1))
        .required("rack");
    let c = inv.compile(&gang).unwrap();
    let mut solver = Solver::with_limits(Limits::work(500));
    let Outcome::Undecided(d) = inv.place_with(&mut solver, &c).unwrap() else {
        panic!("500 units do not reach every rack");
    };
    let p = d
        .search_progress
        .expect("an undecided answer has its progress");
    assert!(p.ruled_out > 0 && p.undecided > 0, "{p:?}");
    assert_eq!(p.ruled_out + p.undecided, 250, "every rack is a candidate");
    assert!(p.work <= 500, "{p:?}");
    assert!(d.to_string().contains("ruled out"), "{d}");
    // A decided answer has none.
    let Outcome::Unschedulable(d) = inv.place(&gang).unwrap() else {
        panic!("proven");
    };
    assert_eq!(d.search_progress, None);
    // Roles of one shape: proven within the same 500 units (issue 23).
    let c = inv.compile(&a_and_b()).unwrap();
    let mut solver = Solver::with_limits(Limits::work(500));
    let out = inv.place_with(&mut solver, &c).unwrap();
    assert!(matches!(out, Outcome::Unschedulable(_)), "{out:?}");
}

/// A placement's objective vector: the number of domains used at each level.
fn vector(p: &gang_core::Placement) -> Vec<u32> {
    p.domains_used().iter().map(|&(_, n)| n).collect()
}

#[test]
fn small_limits_give_honest_answers() {
    // With little work allowed: a proven answer is the one the default limits give, a
    // placement after an exhausted search says so (and is valid), and some do.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut incomplete, mut compared) = (0, 0);
    for _ in 0..120 {
        let n = rng.range(40, 250) as usize;
        let inv = random_cluster(&mut rng, n, 2);
        let gang = random_gang(&mut rng, 1);
        let Ok(c) = inv.compile(&gang) else { continue };
        let full = inv.place_with(&mut Solver::new(), &c).unwrap();
        for work in [200, 1_000, 3_000] {
            let out = inv
                .place_with(&mut Solver::with_search_budget(work), &c)
                .unwrap();
            match &out {
                Outcome::Placed(p) if p.search_complete() => match full.placement() {
                    // Both proven: the same placement (domain, members, nodes).
                    Some(f) if f.search_complete() => {
                        assert_eq!(p, f, "{work} units");
                        compared += 1;
                    }
                    // The default budget ran out (its walk spent the share another
                    // domain needed): the proven answer is at least as compact.
                    Some(f) => assert!(vector(p) <= vector(f), "{work} units\n{p}\n{f}"),
                    None => panic!("{work} units placed what the default limits did not"),
                },
                Outcome::Placed(p) => {
                    p.validate(&inv).unwrap();
                    incomplete += 1;
                }
                Outcome::Unschedulable(_) => {
                    assert!(matches!(full, Outcome::Unschedulable(_)), "{work} units");
                }
                Outcome::Undecided(d) => assert!(d.search_exhausted),
            }
        }
    }
    assert!(
        incomplete > 0,
        "some placements come after an exhausted search"
    );
    assert!(compared > 0, "some proven placements are compared");
}

/// The tight generator's case 2640 with the seed times 3 (the ignored test above runs
/// it), built explicitly: 99 partly used nodes, node `i` in rack `i / 5` and block
/// `i / 20`; four CPU- and memory-heavy roles, 81 members, inside one block. Only block
/// b1 passes the relaxation bounds, and its 20 nodes hold the gang with 235 MiB of
/// memory to spare of 7,117 (3 %), 90 of them on nodes whose free memory no pattern
/// fills. CP-SAT places it in 1.1 s; the search in search order ran out of the default
/// budget (placed after 1.5M units of its fullest-first walk), the walk over the
/// nodes least capable first places it within its first 32,768 units.
mod case_2640 {
    use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};

    /// (gpu, gpu used, cpu, cpu used, memory, memory used) per node.
    pub const NODES: [(i64, i64, i64, i64, i64, i64); 99] = [
        (8, 0, 64, 26, 512, 312),
        (8, 6, 64, 47, 512, 147),
        (0, 0, 96, 17, 384, 70),
        (0, 0, 96, 85, 384, 164),
        (8, 5, 64, 41, 512, 237),
        (8, 7, 64, 13, 512, 178),
        (0, 0, 96, 0, 384, 0),
        (8, 4, 64, 0, 512, 0),
        (0, 0, 96, 46, 384, 314),
        (8, 1, 64, 53, 512, 229),
        (8, 7, 64, 0, 512, 0),
        (8, 2, 64, 14, 512, 70),
        (8, 3, 64, 50, 512, 190),
        (8, 0, 64, 0, 512, 0),
        (8, 0, 64, 35, 512, 119),
        (8, 6, 64, 30, 512, 304),
        (8, 1, 64, 32, 512, 427),
        (8, 6, 64, 0, 512, 0),
        (8, 3, 64, 11, 512, 100),
        (0, 0, 96, 45, 384, 18),
        (0, 0, 96, 27, 384, 163),
        (8, 3, 64, 16, 512, 77),
        (0, 0, 96, 0, 384, 0),
        (0, 0, 96, 0, 384, 0),
        (8, 6, 64, 43, 512, 194),
        (8, 3, 64, 29, 512, 390),
        (0, 0, 96, 62, 384, 215),
        (0, 0, 96, 49, 384, 301),
        (8, 0, 64, 0, 512, 0),
        (0, 0, 96, 40, 384, 135),
        (8, 4, 64, 46, 512, 134),
        (8, 4, 64, 49, 512, 28),
        (8, 3, 64, 0, 512, 0),
        (8, 7, 64, 0, 512, 0),
        (0, 0, 96, 0, 384, 0),
        (8, 4, 64, 38, 512, 36),
        (8, 6, 64, 29, 512, 241),
        (8, 0, 64, 16, 512, 78),
        (8, 4, 64, 39, 512, 235),
        (8, 3, 64, 0, 512, 0),
        (0, 0, 96, 56, 384, 115),
        (0, 0, 96, 0, 384, 0),
        (8, 2, 64, 21, 512, 76),
        (0, 0, 96, 0, 384, 0),
        (0, 0, 96, 15, 384, 230),
        (0, 0, 96, 51, 384, 117),
        (8, 0, 64, 30, 512, 121),
        (0, 0, 96, 12, 384, 105),
        (8, 0, 64, 42, 512, 238),
        (0, 0, 96, 0, 384, 0),
        (8, 4, 64, 0, 512, 0),
        (8, 1, 64, 37, 512, 35),
        (0, 0, 96, 0, 384, 0),
        (0, 0, 96, 82, 384, 79),
        (8, 0, 64, 44, 512, 432),
        (8, 5, 64, 26, 512, 220),
        (0, 0, 96, 34, 384, 166),
        (0, 0, 96, 61, 384, 191),
        (8, 1, 64, 13, 512, 332),
        (8, 0, 64, 0, 512, 0),
        (0, 0, 96, 66, 384, 128),
        (8, 4, 64, 19, 512, 316),
        (8, 6, 64, 0, 512, 0),
        (8, 2, 64, 30, 512, 54),
        (8, 3, 64, 32, 512, 308),
        (0, 0, 96, 71, 384, 202),
        (0, 0, 96, 83, 384, 132),
        (0, 0, 96, 0, 384, 0),
        (8, 0, 64, 25, 512, 67),
        (8, 2, 64, 28, 512, 66),
        (8, 0, 64, 25, 512, 340),
        (8, 4, 64, 17, 512, 238),
        (8, 0, 64, 20, 512, 298),
        (0, 0, 96, 27, 384, 103),
        (8, 5, 64, 0, 512, 0),
        (8, 0, 64, 18, 512, 441),
        (8, 6, 64, 43, 512, 217),
        (8, 6, 64, 0, 512, 0),
        (8, 0, 64, 0, 512, 0),
        (0, 0, 96, 58, 384, 254),
        (8, 7, 64, 40, 512, 58),
        (0, 0, 96, 53, 384, 187),
        (8, 0, 64, 0, 512, 0),
        (8, 2, 64, 25, 512, 421),
        (0, 0, 96, 0, 384, 0),
        (0, 0, 96, 16, 384, 249),
        (8, 2, 64, 50, 512, 98),
        (8, 0, 64, 4, 512, 143),
        (0, 0, 96, 88, 384, 299),
        (8, 7, 64, 56, 512, 226),
        (8, 0, 64, 18, 512, 440),
        (8, 3, 64, 0, 512, 0),
        (0, 0, 96, 41, 384, 74),
        (8, 1, 64, 0, 512, 0),
        (8, 6, 64, 27, 512, 350),
        (0, 0, 96, 84, 384, 91),
        (8, 3, 64, 16, 512, 349),
        (8, 5, 64, 0, 512, 0),
        (0, 0, 96, 0, 384, 0),
    ];

    pub fn block(node: usize) -> usize {
        node / 20
    }

    pub fn inventory() -> Inventory {
        Inventory::builder(Topology::new(["block", "rack"]).unwrap())
            .nodes(NODES.iter().enumerate().map(|(i, &(g, gu, c, cu, m, mu))| {
                let mut spec = NodeSpec::new(format!("n{i:03}"))
                    .label("block", format!("b{}", block(i)))
                    .label("rack", format!("r{:03}", i / 5))
                    .capacity("cpu", c)
                    .capacity("memory", m);
                if g > 0 {
                    spec = spec.capacity("gpu", g).used("gpu", gu);
                }
                spec.used("cpu", cu).used("memory", mu)
            }))
            .build()
            .unwrap()
    }

    /// `(count, cpu, memory, max per node)` per role.
    pub const ROLES: [(u32, i64, i64, Option<u32>); 4] = [
        (24, 1, 75, None),
        (22, 13, 42, None),
        (14, 32, 39, None),
        (21, 1, 172, Some(2)),
    ];

    pub fn gang() -> Gang {
        let mut g = Gang::new("g").required("block");
        for (i, &(count, cpu, mem, most)) in ROLES.iter().enumerate() {
            let mut role = Role::new(format!("r{i}"), count)
                .request("cpu", cpu)
                .request("memory", mem);
            if let Some(most) = most {
                role = role.max_per_node(most);
            }
            g = g.role(role);
        }
        g
    }
}

#[test]
fn the_tight_generators_case_2640_is_placed() {
    use case_2640::{block, NODES, ROLES};
    let inv = case_2640::inventory();
    let out = inv.place(&case_2640::gang()).unwrap();
    let p = out.placement().unwrap_or_else(|| panic!("{out:?}"));
    p.validate(&inv).unwrap();
    assert_eq!(p.domain_path(), "b1");
    // Checked by hand too: every role's count, every node's free CPU and memory, r3 at
    // most two per node, every member in block b1.
    let mut load = [(0i64, 0i64); 99];
    let mut placed = [0u32; 4];
    for a in p.assignments() {
        let i: usize = a.role[1..].parse().unwrap();
        let n: usize = a.node[1..].parse().unwrap();
        let (_, cpu, mem, most) = ROLES[i];
        assert!(most.is_none_or(|most| a.count <= most), "{a:?}");
        assert_eq!(block(n), 1, "{a:?}");
        placed[i] += a.count;
        load[n].0 += i64::from(a.count) * cpu;
        load[n].1 += i64::from(a.count) * mem;
    }
    assert_eq!(placed, ROLES.map(|r| r.0));
    for (n, &(_, _, c, cu, m, mu)) in NODES.iter().enumerate() {
        assert!(load[n].0 <= c - cu && load[n].1 <= m - mu, "node {n}");
    }
}
