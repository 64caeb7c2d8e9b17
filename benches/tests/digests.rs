//! The placements of the large-gang bench shapes, pinned (issue 23: "the placement on
//! every bench case is byte-identical before and after").
//!
//! For each HGX cluster (50 and 85 % used) and each case — required block, preferred
//! rack and unconstrained with 256 and 512 one-GPU workers, required rack with 4 and 64
//! — the placement a warm `Solver` answers is hashed (level, domain, then every
//! assignment's role, node and count, in order) and compared with
//! `tests/data/digests.tsv`, written from the engine before the issue-23 speed work.
//! A speed change that changes any chosen node fails here. The first answer (a cold
//! solver) and a repeated one (warm, from the cache) must also be the same.
//!
//! 1k and 10k nodes run in `cargo test`; 100k is `#[ignore]`d (slow in debug):
//! `cargo test --release -p gang-benches --test digests -- --include-ignored`.
//! To rewrite the file (only when a change of answers is intended and explained):
//! `GANG_BLESS_DIGESTS=1 cargo test --release -p gang-benches --test digests --
//! --include-ignored`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gang_benches::cases::{self, Constraint};
use gang_benches::gen::{Cluster, Size, Spec};
use gang_core::{Outcome, Solver};

/// The cases pinned: the large-gang shapes and the required-rack rows.
fn cases() -> Vec<(Constraint, u32)> {
    let mut v = Vec::new();
    for c in [
        Constraint::RequiredBlock,
        Constraint::PreferredRack,
        Constraint::Unconstrained,
    ] {
        for n in [256, 512] {
            v.push((c, n));
        }
    }
    v.extend([
        (Constraint::RequiredRack, 4),
        (Constraint::RequiredRack, 64),
    ]);
    v
}

/// 64-bit FNV-1a.
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The digest of an answer: `unschedulable`, or the placement's nodes and counts hashed.
fn digest(out: &Outcome) -> String {
    let Some(p) = out.placement() else {
        return "unschedulable".to_owned();
    };
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    h = fnv(p.level().unwrap_or("-").as_bytes(), h);
    h = fnv(b"|", h);
    h = fnv(p.domain_path().as_bytes(), h);
    for a in p.assignments() {
        h = fnv(format!("|{} {} {}", a.role, a.node, a.count).as_bytes(), h);
    }
    format!(
        "{h:016x} nodes={} members={}",
        p.assignments().len(),
        p.member_count()
    )
}

/// `key -> digest` for every case on the cluster `size`-`used`.
fn compute(size: Size, used: u32) -> BTreeMap<String, String> {
    let spec = Spec::hgx(size, used);
    let inv = Cluster::generate(&spec).inventory();
    let mut solver = Solver::new();
    let mut out = BTreeMap::new();
    for (c, n) in cases() {
        let key = format!("hgx-{}-{used}/{}-{n}", size.as_str(), c.as_str());
        let compiled = inv.compile(&cases::single(&spec, c, n)).unwrap();
        let first = inv.place_with(&mut solver, &compiled).unwrap();
        if let Some(p) = first.placement() {
            p.validate(&inv).unwrap();
        }
        let again = inv.place_with(&mut solver, &compiled).unwrap();
        let (d1, d2) = (digest(&first), digest(&again));
        assert_eq!(d1, d2, "{key}: the warm answer differs from the first");
        out.insert(key, d1);
    }
    out
}

fn data_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/digests.tsv")
}

/// The pinned digests, `key -> digest`.
fn pinned() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(data_file()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Compares (or, with `GANG_BLESS_DIGESTS=1`, writes) the digests of one cluster.
fn check(size: Size, used: u32) {
    let got = compute(size, used);
    let mut all = pinned();
    if std::env::var_os("GANG_BLESS_DIGESTS").is_some() {
        all.extend(got);
        let mut text = String::from(
            "# Placement digests of the bench shapes (tests/digests.rs): case<TAB>digest\n",
        );
        for (k, v) in &all {
            text.push_str(&format!("{k}\t{v}\n"));
        }
        std::fs::create_dir_all(data_file().parent().unwrap()).unwrap();
        std::fs::write(data_file(), text).unwrap();
        return;
    }
    for (k, v) in &got {
        let want = all
            .get(k)
            .unwrap_or_else(|| panic!("{k}: no pinned digest"));
        assert_eq!(v, want, "{k}: the placement changed");
    }
}

#[test]
fn placements_1k_50() {
    check(Size::K1, 50);
}

#[test]
fn placements_1k_85() {
    check(Size::K1, 85);
}

#[test]
fn placements_10k_50() {
    check(Size::K10, 50);
}

#[test]
fn placements_10k_85() {
    check(Size::K10, 85);
}

#[test]
#[ignore = "100k nodes: slow in debug; run with --release --include-ignored"]
fn placements_100k_50() {
    check(Size::K100, 50);
}

#[test]
#[ignore = "100k nodes: slow in debug; run with --release --include-ignored"]
fn placements_100k_85() {
    check(Size::K100, 85);
}
