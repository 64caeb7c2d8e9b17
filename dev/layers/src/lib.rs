//! The layering rule of the workspace's crates (docs/ARCHITECTURE.md): a crate's modules
//! form one-way layers in the order the data flows, and no two files import each other
//! in a circle. Dev-only: each crate's `tests/layers.rs` calls [`Rules::assert`] with its
//! own layers.
//!
//! The check reads the crate's own sources, finds every `crate::…` and `super::…` path
//! outside `#[cfg(test)]` items, comments and string literals, resolves each to the file
//! that defines it, and reports
//! - an import from a lower layer to a higher one,
//! - a circle of imports between files (within a layer too),
//! - a path through the crate root's re-exports (`crate::Inventory`) outside `lib.rs`,
//!   which would hide the real edge,
//! - a module in no layer.
//!
//! A directory's `mod.rs` declares its files and may use what they define; that is
//! ownership, not an import edge. A file using its parent (`super::Inventory`) is one.
//!
//! ```
//! use gang_layers::Rules;
//! let rules = Rules { layers: &[&["model"], &["inventory", "compile"]], test_only: &[] };
//! assert_eq!(rules.layer(&["inventory".to_owned()]), Some(1));
//! assert_eq!(rules.layer_name(1), "inventory/compile");
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path inside a crate, as segments: `["inventory", "ledger"]`; the crate root
/// is empty.
pub type Module = Vec<String>;

/// The layers of one crate.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// Layers, lowest first; each names the top-level modules (a file's first module
    /// segment) that belong to it. Modules of one layer may use each other (without a
    /// circle between files).
    pub layers: &'a [&'a [&'a str]],
    /// Top-level modules only tests compile: not checked.
    pub test_only: &'a [&'a str],
}

impl Rules<'_> {
    /// The layer of a module: the one holding its first segment.
    pub fn layer(&self, module: &[String]) -> Option<usize> {
        let first = module.first()?;
        self.layers.iter().position(|l| l.contains(&first.as_str()))
    }

    /// A layer's name: its modules joined by `/`.
    pub fn layer_name(&self, layer: usize) -> String {
        self.layers[layer].join("/")
    }

    /// Every problem found in the crate whose sources are under `src`, in a stable order.
    ///
    /// # Panics
    /// When `src` cannot be read.
    pub fn problems(&self, src: &Path) -> Vec<String> {
        let sources = sources(src);
        let files: BTreeSet<Module> = sources.iter().map(|s| s.module.clone()).collect();
        let mut problems = Vec::new();
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for s in &sources {
            let m = &s.module;
            if m.is_empty() || self.test_only.contains(&m[0].as_str()) {
                continue; // lib.rs re-exports everything; test-only modules are exempt.
            }
            let Some(own) = self.layer(m) else {
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
                match self.layer(&target) {
                    Some(t) if t > own => problems.push(format!(
                        "{} (layer {}) imports {} (layer {}): a back edge",
                        m.join("::"),
                        self.layer_name(own),
                        target.join("::"),
                        self.layer_name(t)
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
        circles(&edges, &mut problems);
        problems
    }

    /// Fails with every problem found (see [`Rules::problems`]), naming the crate.
    ///
    /// # Panics
    /// When there is a problem, or `src` cannot be read.
    pub fn assert(&self, crate_name: &str, src: &Path) {
        let problems = self.problems(src);
        assert!(
            problems.is_empty(),
            "{crate_name}'s layering is broken:\n  {}",
            problems.join("\n  ")
        );
    }
}

/// A circle between files: depth-first search with colours.
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>, problems: &mut Vec<String>) {
    fn visit<'a>(
        n: &'a Module,
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        colour: &mut BTreeMap<&'a Module, u8>,
        stack: &mut Vec<&'a Module>,
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
            visit(n, edges, &mut colour, &mut Vec::new(), problems);
        }
    }
}

/// A source file: its module path and its text.
struct Source {
    module: Module,
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

fn module_of(src: &Path, path: &Path) -> Module {
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
pub fn code(text: &str) -> String {
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
pub fn paths(code: &str) -> Vec<Vec<String>> {
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
pub fn resolve(from: &[String], path: &[String], files: &BTreeSet<Module>) -> Option<Module> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_sees_back_edges_circles_and_root_paths() {
        let rules = Rules {
            layers: &[
                &["model"],
                &["inventory"],
                &["compile"],
                &["answer"],
                &["solve"],
            ],
            test_only: &[],
        };
        let files: BTreeSet<Module> = [
            vec!["model".to_owned(), "error".to_owned()],
            vec!["inventory".to_owned()],
            vec!["inventory".to_owned(), "ledger".to_owned()],
        ]
        .into_iter()
        .collect();
        let text = "use crate::model::{error::Error, Thing};\nuse super::ledger::Reservation;\n\
                    // use crate::solve::Solver;\n#[cfg(test)]\nmod tests {\n    use crate::solve::X;\n}\n\
                    fn f() { crate::inventory::ledger::hold(\"crate::json::x\"); }\n";
        let found = paths(&code(text));
        let from = vec!["inventory".to_owned()];
        let resolved: Vec<Option<Module>> =
            found.iter().map(|p| resolve(&from, p, &files)).collect();
        let ledger = Some(vec!["inventory".to_owned(), "ledger".to_owned()]);
        // `super::` of `inventory/mod.rs` is the crate; tests, comments and strings are skipped.
        assert_eq!(
            resolved,
            [
                Some(vec!["model".to_owned(), "error".to_owned()]),
                None, // crate::model::Thing: `model` is not a file here
                None, // super::ledger from a mod.rs is crate::ledger: not a file
                ledger.clone(),
            ]
        );
        let from_ledger = vec!["inventory".to_owned(), "ledger".to_owned()];
        assert_eq!(
            resolve(&from_ledger, &["super".to_owned(), "x".to_owned()], &files),
            Some(vec!["inventory".to_owned()])
        );
        assert_eq!(rules.layer(&from_ledger), Some(1));
        assert!(rules.layer(&["solve".to_owned()]) > rules.layer(&from_ledger));
    }

    /// A crate written to a temporary directory, checked whole.
    #[test]
    fn a_crate_with_a_back_edge_and_a_circle_fails_and_names_them() {
        let dir = std::env::temp_dir().join(format!("gang-layers-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("low")).unwrap();
        let write = |p: &str, t: &str| fs::write(dir.join(p), t).unwrap();
        write("lib.rs", "mod low;\nmod high;\npub use high::H;\n");
        write("low/mod.rs", "mod a;\nmod b;\nuse a::A;\n");
        write("low/a.rs", "use crate::low::b::B;\npub struct A;\n");
        write(
            "low/b.rs",
            "use crate::low::a::A;\nuse crate::high::H;\npub struct B;\n",
        );
        write("high.rs", "use crate::H;\npub struct H;\n");
        let rules = Rules {
            layers: &[&["low"], &["high"]],
            test_only: &[],
        };
        let problems = rules.problems(&dir);
        // Side by side in one layer, `low` may use `high`: only the root path and the
        // circle are left.
        let side_by_side = Rules {
            layers: &[&["low", "high"]],
            test_only: &[],
        }
        .problems(&dir);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            problems,
            [
                "high: `crate::H` goes through the crate root; name the module",
                "low::b (layer low) imports high (layer high): a back edge",
                "import circle: low::a -> low::b -> low::a",
            ]
        );
        assert_eq!(side_by_side, [problems[0].clone(), problems[2].clone()]);
    }
}
