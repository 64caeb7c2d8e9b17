//! The binding's modules form one-way layers: each module's non-test code names only
//! modules listed before it in `LAYERS` (through `use crate::…`, a `crate::…` path, or
//! the `ffi_boundary!` macro, which expands to `crate::error::run`). In particular the
//! foundation — result codes, failures, text, handles, the error boundary — has no
//! circle, so it can be read bottom to top.

/// Bottom first. A module may depend on the modules before it, never on those after.
const LAYERS: &[&str] = &[
    "result",      // result codes and the enumerations passed in as integers
    "failure",     // why a call failed (code, field, message), before it reaches C
    "text",        // string views out, string arguments in
    "handle",      // tagged opaque handles, checked out-parameters
    "error",       // the panic boundary, gang_error objects
    "accessor",    // macros for the repetitive accessor and setter bodies
    "string",      // the owned gang_string handle
    "inventory",   // nodes, the builder, the inventory
    "request",     // roles, gangs, compiled gangs
    "outcome",     // placements and diagnoses
    "reservation", // reservation snapshots and change reports
    "answers",     // replacement, spread and admission answers
    "solve",       // solvers and the placement queries
    "scenario",    // scenario documents
    "lifecycle",   // the lifecycle on a live inventory
    "preempt",     // preemption: its options, the queries, evictable units
    "lib",         // the crate root
];

/// The crate modules named by `src`'s code before its `#[cfg(test)]` module.
fn dependencies(src: &str) -> Vec<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let mut deps = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if rest[name.len()..].starts_with("::") || rest[name.len()..].starts_with(";") {
            deps.push(name);
        }
    }
    // `use crate::{a, b::c}` groups.
    for (i, _) in code.match_indices("use crate::{") {
        let group = &code[i + "use crate::{".len()..];
        let group = &group[..group.find("};").unwrap_or(0)];
        for item in group.split(',') {
            let name = item.trim().split("::").next().unwrap_or("").to_owned();
            if !name.is_empty() {
                deps.push(name);
            }
        }
    }
    if code.contains("ffi_boundary!(") {
        deps.push("error".to_owned());
    }
    deps.sort();
    deps.dedup();
    deps
}

#[test]
fn modules_depend_only_on_lower_layers() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut seen = Vec::new();
    let mut back_edges = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let Some(rank) = LAYERS.iter().position(|m| *m == module) else {
            panic!("src/{module}.rs is not in LAYERS: place it in a layer");
        };
        let src = std::fs::read_to_string(&path).unwrap();
        for dep in dependencies(&src) {
            if dep == module {
                continue;
            }
            match LAYERS.iter().position(|m| *m == dep) {
                Some(r) if r < rank => {}
                Some(_) => back_edges.push(format!("{module} -> {dep}")),
                None => panic!("src/{module}.rs names crate::{dep}, which is not in LAYERS"),
            }
        }
        seen.push(module);
    }
    assert!(
        back_edges.is_empty(),
        "imports against the layering (each module may use only those listed before it in \
         LAYERS): {back_edges:?}"
    );
    assert!(seen.len() >= 15, "found only {seen:?}");
}

#[test]
fn the_checker_sees_back_edges() {
    let src = "use crate::handle::Out;\nuse crate::{error::gang_error, text};\n\
               fn f() { ffi_boundary!({ Ok(()) }) }\n#[cfg(test)]\nuse crate::lifecycle::x;";
    assert_eq!(dependencies(src), ["error", "handle", "text"]);
}
