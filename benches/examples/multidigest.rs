//! Every multi-role answer of a set of instances, one line each, to compare two builds
//! of gang-core (issue 23: "no answer changes"): the outcome's status, level, domain,
//! members, nodes, whether the search was complete, and an FNV-1a hash of the whole
//! answer's `Debug` form (placement with every assignment, or the diagnosis).
//!
//! `cargo run --release -p gang-benches --example multidigest -- [quick|large|nvl]`:
//! `quick` = `gang-core/tests/multi_decided.rs`'s two generators at 300 instances
//! each (the 455 placements of issue 23's "proven least" row), the issue-15 hardest
//! instances, the racks-of-4 shapes at 1k/10k and the HGX 3-role gangs at 1k/10k;
//! `large` = the generators at 3,000 per seed times 1, 2, 3. The last line counts the
//! placements and how many have a complete search. Diff two builds' outputs.

use gang_benches::cases;
use gang_benches::gen::{Cluster, Size, Spec};
use gang_core::scenario::Scenario;
use gang_core::{Gang, Inventory, NodeSpec, Outcome, Role, Solver, Topology};

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

/// `gang-core/tests/multi_decided.rs`'s `random_cluster`.
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

/// `gang-core/tests/multi_decided.rs`'s `random_gang`.
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

fn fnv(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[derive(Default)]
struct Tally {
    placed: usize,
    complete: usize,
    unschedulable: usize,
    undecided: usize,
}

fn line(tally: &mut Tally, name: &str, out: &Outcome) {
    let h = fnv(format!("{out:?}").as_bytes());
    match out {
        Outcome::Placed(p) => {
            tally.placed += 1;
            tally.complete += usize::from(p.search_complete());
            let used: Vec<String> = p
                .domains_used()
                .iter()
                .map(|(l, n)| format!("{l}={n}"))
                .collect();
            println!(
                "{name} placed {} {} members={} nodes={} used=[{}] complete={} {h:016x}",
                p.level().unwrap_or("-"),
                p.domain_path(),
                p.member_count(),
                p.node_counts().len(),
                used.join(","),
                p.search_complete(),
            );
        }
        Outcome::Unschedulable(_) => {
            tally.unschedulable += 1;
            println!("{name} unschedulable {h:016x}");
        }
        Outcome::Undecided(_) => {
            tally.undecided += 1;
            println!("{name} undecided {h:016x}");
        }
    }
}

fn generators(tally: &mut Tally, label: &str, cases: usize, times: u64) {
    const LOOSE: u64 = 0x9e37_79b9_7f4a_7c15;
    const TIGHT: u64 = 0x2545_f491_4f6c_dd1d;
    for (gen, seed, busy, least) in [("loose", LOOSE, 2, 1), ("tight", TIGHT, 3, 12)] {
        let seed = if times == 1 {
            seed
        } else {
            seed.wrapping_mul(times) | 1
        };
        let mut rng = Rng(seed);
        for case in 0..cases {
            let n = rng.range(40, 250) as usize;
            let inv = random_cluster(&mut rng, n, busy);
            let gang = random_gang(&mut rng, least);
            let Ok(c) = inv.compile(&gang) else { continue };
            let mut solver = Solver::new();
            let out = inv.place_with(&mut solver, &c).unwrap();
            line(tally, &format!("{label}{gen}x{times}/{case}"), &out);
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "quick".into());
    let mut tally = Tally::default();
    match mode.as_str() {
        "quick" => {
            generators(&mut tally, "", 300, 1);
            let gen_tally = (tally.placed, tally.complete);
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/issue15-hardest");
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            for p in files {
                let s = Scenario::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
                let inv = s.inventory().unwrap();
                let out = inv.place(&s.gang).unwrap();
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                line(&mut tally, &format!("hardest/{name}"), &out);
            }
            for nodes in [1_000usize, 10_000] {
                let inv = cases::racks_of_four(nodes);
                for (name, gang) in [
                    ("ab", cases::ab(false, false)),
                    ("ab-launcher", cases::ab(false, true)),
                    ("elastic", cases::ab(true, false)),
                    ("elastic-launcher", cases::ab(true, true)),
                ] {
                    let out = inv.place(&gang).unwrap();
                    line(&mut tally, &format!("racks-of-4/{nodes}/{name}"), &out);
                }
            }
            for size in [Size::K1, Size::K10] {
                for used in [50, 85] {
                    let spec = Spec::hgx(size, used);
                    let inv = Cluster::generate(&spec).inventory();
                    for salt in 0..3 {
                        let out = inv.place(&cases::three_role(&spec, salt)).unwrap();
                        line(
                            &mut tally,
                            &format!("hgx-{}-{used}/3-role/{salt}", size.as_str()),
                            &out,
                        );
                    }
                }
            }
            eprintln!(
                "generators (300 each): {} placed, {} with a complete search",
                gen_tally.0, gen_tally.1
            );
        }
        "large" => {
            for times in 1..=3 {
                generators(&mut tally, "L", 3000, times);
            }
        }
        "big" => {
            let inv = cases::racks_of_four(100_000);
            for (name, gang) in [
                ("ab", cases::ab(false, false)),
                ("ab-launcher", cases::ab(false, true)),
                ("elastic", cases::ab(true, false)),
                ("elastic-launcher", cases::ab(true, true)),
            ] {
                let out = inv.place(&gang).unwrap();
                line(&mut tally, &format!("racks-of-4/100000/{name}"), &out);
            }
        }
        m => panic!("unknown mode {m}"),
    }
    println!(
        "total: {} placed ({} complete), {} unschedulable, {} undecided",
        tally.placed, tally.complete, tally.unschedulable, tally.undecided
    );
}
