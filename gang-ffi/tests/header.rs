//! The committed header agrees with this crate: its version macros match Cargo.toml, and
//! it declares every function the library exports. (`test.sh` also regenerates the
//! header with the pinned cbindgen and fails on any difference.)

use std::ffi::CStr;

fn header() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/gang.h");
    std::fs::read_to_string(path).expect("include/gang.h is committed")
}

fn define(header: &str, name: &str) -> String {
    let prefix = format!("#define {name} ");
    header
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("gang.h has no {prefix}"))
        .trim()
        .to_owned()
}

#[test]
fn version_macros_match_cargo_toml() {
    let h = header();
    assert_eq!(
        define(&h, "GANG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MAJOR")
    );
    assert_eq!(
        define(&h, "GANG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_MINOR")
    );
    assert_eq!(
        define(&h, "GANG_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION_PATCH")
    );
    let linked = unsafe { CStr::from_ptr(gang_ffi::gang_version()) };
    assert_eq!(linked.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn header_declares_every_exported_function() {
    let h = header();
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut exported = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            if l.trim() == "#[no_mangle]" {
                let sig = lines.next().unwrap();
                let name = sig
                    .split("fn ")
                    .nth(1)
                    .and_then(|s| s.split('(').next())
                    .unwrap()
                    .to_owned();
                exported.push(name);
            }
        }
    }
    assert!(exported.len() > 60, "found only {exported:?}");
    for name in &exported {
        let declared = [" ", "*"]
            .iter()
            .any(|before| h.contains(&format!("{before}{name}(")));
        assert!(declared, "gang.h does not declare {name}");
        assert!(name.starts_with("gang_"), "{name} lacks the gang_ prefix");
    }
}
