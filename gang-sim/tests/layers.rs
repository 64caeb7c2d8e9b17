//! The layering rule of gang-sim (docs/ARCHITECTURE.md §3): modules form one-way layers
//! in the order the data flows, and no two files import each other in a circle. The
//! same check as gang-core's `tests/layers.rs`, with gang-sim's layers (a layer may
//! hold several modules side by side).
//!
//! This test reads the crate's own sources, finds every `crate::…` and `super::…` path
//! outside `#[cfg(test)]` modules and doc comments, resolves each to the file that
//! defines it, and fails on
//! - an import from a lower layer to a higher one,
//! - a circle of imports between files (within a layer too),
//! - a path through the crate root's re-exports (`crate::Inventory`) outside `lib.rs`,
//!   which would hide the real edge.
//!
//! A directory's `mod.rs` declares its files and may use what they define; that is
//! ownership, not an import edge. A file using its parent (`super::Inventory`) is one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Layers, lowest first, each with its modules. A file's layer is the one holding the
/// first segment of its module path.
const LAYERS: &[&[&str]] = &[
    &["error", "rng", "csv"],
    &["config", "placer"],
    &["trace", "output"],
    &["workload", "generate", "import"],
    &["sim"],
    &["run", "experiment"],
];

/// Modules that only tests compile.
const TEST_ONLY: &[&str] = &[];

/// A source file: its module path (`["inventory", "ledger"]`) and its text.
struct Source {
    module: Vec<String>,
    text: String,
}

fn sources(src: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(Source {
                    module: module_of(src, &path),
                    text: fs::read_to_string(&path).expect("read source"),
                });
            }
        }
    }
    out.sort_by(|a, b| a.module.cmp(&b.module));
    out
}

fn module_of(src: &Path, path: &Path) -> Vec<String> {
    let rel: PathBuf = path.strip_prefix(src).expect("under src").to_path_buf();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file without comments, string literals and `#[cfg(test)]` items.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            // Skip the next item: up to its closing brace (or semicolon).
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                let c = strip_comment(l);
                depth += c.matches('{').count() as i32 - c.matches('}').count() as i32;
                opened |= c.contains('{');
                if (opened && depth <= 0) || (!opened && c.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(&strip_strings(strip_comment(line)));
        out.push('\n');
    }
    out
}

fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn strip_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_str = false;
    let mut prev = ' ';
    for c in line.chars() {
        if c == '"' && prev != '\\' && prev != '\'' {
            in_str = !in_str;
        } else if !in_str {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Every path the code names, as segments, with `use` groups expanded:
/// `use crate::model::{Error, names::short_level};` gives two paths.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_'));
        if !starts {
            i += 1;
            continue;
        }
        // Read a path expression with nested groups up to its end.
        let mut j = i;
        let mut depth = 0;
        while j < bytes.len() {
            let c = bytes[j];
            if c == '{' {
                depth += 1;
            } else if c == '}' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            } else if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') {
                break;
            }
            j += 1;
        }
        let expr: String = bytes[i..j].iter().collect();
        expand(&expr, &mut Vec::new(), &mut out);
        i = j.max(i + 1);
    }
    out
}

fn expand(expr: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let expr = expr.trim();
    if let Some(open) = expr.find('{') {
        let head = &expr[..open];
        let inner = &expr[open + 1..expr.rfind('}').unwrap_or(expr.len())];
        let base: Vec<String> = head
            .split("::")
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().to_owned())
            .collect();
        let n = prefix.len();
        prefix.extend(base);
        for part in split_top(inner) {
            expand(part, prefix, out);
        }
        prefix.truncate(n);
    } else {
        let mut p = prefix.clone();
        p.extend(
            expr.split(" as ")
                .next()
                .unwrap_or("")
                .split("::")
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty()),
        );
        if !p.is_empty() {
            out.push(p);
        }
    }
}

fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The file module a path lands in: the longest prefix of its absolute module path
/// that is a file. `None` for a path through the crate root's re-exports.
fn resolve(from: &[String], path: &[String], files: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut abs: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") => {
            // `super` of a file's module; a `mod.rs` module is its directory.
            let mut m = from.to_vec();
            m.pop();
            m
        }
        _ => return None,
    };
    let mut segs = &path[1..];
    while segs.first().is_some_and(|s| s == "super") {
        abs.pop();
        segs = &segs[1..];
    }
    abs.extend(segs.iter().filter(|s| *s != "self").cloned());
    (1..=abs.len())
        .rev()
        .map(|k| abs[..k].to_vec())
        .find(|m| files.contains(m))
}

fn layer(module: &[String]) -> Option<usize> {
    LAYERS
        .iter()
        .position(|l| module.first().is_some_and(|m| l.contains(&m.as_str())))
}

#[test]
fn every_dependency_points_down_and_no_files_form_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = sources(&src);
    let files: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for s in &sources {
        let m = &s.module;
        if m.is_empty() || TEST_ONLY.contains(&m[0].as_str()) {
            continue; // lib.rs re-exports everything; test-only modules are exempt.
        }
        let Some(own) = layer(m) else {
            problems.push(format!(
                "{}: not in any layer (add it to LAYERS)",
                m.join("::")
            ));
            continue;
        };
        for p in paths(&code(&s.text)) {
            if p.len() < 2 {
                continue; // `use super::*` and the like name no file.
            }
            let Some(target) = resolve(m, &p, &files) else {
                problems.push(format!(
                    "{}: `{}` goes through the crate root; name the module",
                    m.join("::"),
                    p.join("::")
                ));
                continue;
            };
            // A directory's `mod.rs` owns its files: using them is not an import edge
            // (the files using their parent is).
            if target.starts_with(m) {
                continue;
            }
            match layer(&target) {
                Some(t) if t > own => problems.push(format!(
                    "{} (layer {own}: {:?}) imports {} (layer {t}: {:?}): a back edge",
                    m.join("::"),
                    LAYERS[own],
                    target.join("::"),
                    LAYERS[t]
                )),
                None => problems.push(format!(
                    "{} imports {}, which is in no layer",
                    m.join("::"),
                    target.join("::")
                )),
                _ => {}
            }
            edges.entry(m.clone()).or_default().insert(target);
        }
    }
    // A circle between files: depth-first search with colours.
    fn visit<'a>(
        n: &'a Vec<String>,
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        colour: &mut BTreeMap<&'a Vec<String>, u8>,
        stack: &mut Vec<&'a Vec<String>>,
        problems: &mut Vec<String>,
    ) {
        colour.insert(n, 1);
        stack.push(n);
        for t in edges.get(n).into_iter().flatten() {
            match colour.get(t).copied().unwrap_or(0) {
                0 => visit(t, edges, colour, stack, problems),
                1 => {
                    let from = stack.iter().position(|s| *s == t).unwrap_or(0);
                    let circle: Vec<String> = stack[from..]
                        .iter()
                        .chain([&t])
                        .map(|m| m.join("::"))
                        .collect();
                    problems.push(format!("import circle: {}", circle.join(" -> ")));
                }
                _ => {}
            }
        }
        stack.pop();
        colour.insert(n, 2);
    }
    let mut colour = BTreeMap::new();
    for n in edges.keys() {
        if colour.get(n).copied().unwrap_or(0) == 0 {
            visit(n, &edges, &mut colour, &mut Vec::new(), &mut problems);
        }
    }
    assert!(
        problems.is_empty(),
        "gang-sim's layering is broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_checker_sees_back_edges_circles_and_root_paths() {
    let files: BTreeSet<Vec<String>> = [
        vec!["config".to_owned()],
        vec!["sim".to_owned()],
        vec!["sim".to_owned(), "job".to_owned()],
    ]
    .into_iter()
    .collect();
    let text = "use crate::config::{Policy, RecoveryMode};\nuse super::job::Job;\n\
                // use crate::run::RunDocument;\n#[cfg(test)]\nmod tests {\n    use crate::run::X;\n}\n\
                fn f() { crate::sim::job::hold(\"crate::experiment::x\"); crate::Cluster::new(); }\n";
    let found = paths(&code(text));
    let from = vec!["sim".to_owned()];
    let resolved: Vec<Option<Vec<String>>> =
        found.iter().map(|p| resolve(&from, p, &files)).collect();
    let job = Some(vec!["sim".to_owned(), "job".to_owned()]);
    // `super::` of `sim/mod.rs` is the crate; tests, comments and strings are skipped;
    // a path through the root's re-exports resolves to nothing.
    assert_eq!(
        resolved,
        [
            Some(vec!["config".to_owned()]),
            Some(vec!["config".to_owned()]),
            None, // super::job from a mod.rs is crate::job: not a file
            job.clone(),
            None, // crate::Cluster
        ]
    );
    let from_job = vec!["sim".to_owned(), "job".to_owned()];
    assert_eq!(
        resolve(&from_job, &["super".to_owned(), "x".to_owned()], &files),
        Some(vec!["sim".to_owned()])
    );
    assert_eq!(layer(&from_job), Some(4));
    assert!(layer(&["run".to_owned()]) > layer(&from_job));
    assert_eq!(
        layer(&["experiment".to_owned()]),
        layer(&["run".to_owned()])
    );
}

#[test]
fn no_source_file_is_over_1200_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = sources(&src)
        .iter()
        .filter(|s| s.text.lines().count() > 1200)
        .map(|s| format!("{} ({} lines)", s.module.join("::"), s.text.lines().count()))
        .collect();
    assert!(long.is_empty(), "split these files: {long:?}");
}
