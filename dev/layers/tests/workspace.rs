//! The workspace's rules, checked over every crate (docs/ARCHITECTURE.md §3 and §9):
//! each crate's modules form one-way layers with no import circle (the crates without a
//! `tests/layers.rs` of their own have their layers here), and no source file outside
//! tests and generated code is over 1,200 lines unless ARCHITECTURE's "Files kept
//! whole" section says why it is one piece.

use std::path::{Path, PathBuf};

use gang_layers::Rules;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crates whose layers are listed here rather than in a `tests/layers.rs` of their
/// own (gang-py's tests folder is its Python suite; gang-cli's and gang-ffi's rooms are
/// few; benches' library is the clusters and reference placers its benchmarks share, and the
/// peers side-by-side's export).
const HERE: [(&str, Rules<'static>); 4] = [
    (
        "benches",
        Rules {
            layers: &[
                &["alloc", "floor", "reference", "outcomes", "bin"],
                &["gen"],
                &["cases", "memory"],
                &["peers"],
            ],
            test_only: &[],
        },
    ),
    (
        "gang-cli",
        Rules {
            layers: &[
                &["error"],
                &["cli", "input"],
                &["request", "demo", "report"],
                &["tree", "preempt"],
                &["render"],
                &["output"],
                &["simulate"],
                &["execute"],
                &["main"],
            ],
            test_only: &[],
        },
    ),
    (
        "gang-ffi",
        Rules {
            layers: &[
                &["result"],
                &["failure"],
                &["handle"],
                &["error", "string", "text", "accessor"],
                &["request", "inventory"],
                &["outcome", "solve", "answers"],
                &["reservation", "lifecycle", "preempt", "scenario"],
            ],
            test_only: &[],
        },
    ),
    (
        "gang-py",
        Rules {
            layers: &[
                &["dunder", "errors", "html", "pyser", "classes", "state"],
                &["pyde", "convert", "kube"],
                &["spec", "reports"],
                &["outcome", "preempt", "inventory", "lifecycle"],
                &["scenario", "sim", "kube_place"],
            ],
            test_only: &[],
        },
    ),
];

#[test]
fn every_crate_has_one_way_layers() {
    let mut problems = Vec::new();
    for (name, rules) in HERE {
        let found = rules.problems(&root().join(name).join("src"));
        problems.extend(found.into_iter().map(|p| format!("{name}: {p}")));
    }
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}

/// Every workspace member with sources has its layering checked: by a `tests/layers.rs`
/// of its own that calls `gang_layers`, or here.
#[test]
fn no_crate_is_left_unchecked() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest.lines().find(|l| l.starts_with("members")).unwrap();
    let members: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert!(members.len() >= 8, "{members:?}");
    let mut unchecked = Vec::new();
    for m in members {
        if !root().join(m).join("src").is_dir() || m == "dev/layers" {
            continue;
        }
        let own = std::fs::read_to_string(root().join(m).join("tests/layers.rs"))
            .is_ok_and(|t| t.contains("gang_layers::"));
        if !own && !HERE.iter().any(|(n, _)| *n == m) {
            unchecked.push(m);
        }
    }
    assert!(
        unchecked.is_empty(),
        "crates without a layering check: {unchecked:?}"
    );
}

/// The longest a source file may be before it is split along its seams, or named with
/// its reason in docs/ARCHITECTURE.md's "Files kept whole".
const MAX_LINES: usize = 1200;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_is_over_1200_lines_unless_architecture_says_why() {
    let arch = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let start = arch
        .find("## 9. Files kept whole")
        .expect("ARCHITECTURE has §9");
    let section = &arch[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root()).unwrap().flatten() {
        rust_files(&dir.path().join("src"), &mut files);
    }
    rust_files(&root().join("dev/layers/src"), &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    let mut long = Vec::new();
    for f in files {
        // Lines of code: the unit tests at the end of a file (`#[cfg(test)]`) are tests.
        let text = std::fs::read_to_string(&f).unwrap();
        let lines = text
            .lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .count();
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let rel = rel.trim_start_matches("./").to_owned();
        if lines > MAX_LINES && !section.contains(&format!("`{rel}`")) {
            long.push(format!("{rel} ({lines} lines)"));
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines and not in ARCHITECTURE §9 (split it, or say why it is one piece): {long:?}"
    );
}
