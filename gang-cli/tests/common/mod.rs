//! Running the `gang` binary as a process, and golden files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// gang-kube's fixtures, referenced where they are (relative to this crate, the
/// tests' working directory).
pub const KUBE: &str = "../gang-kube/tests/fixtures";

pub fn kube(name: &str) -> String {
    format!("{KUBE}/{name}")
}

pub fn own(name: &str) -> String {
    format!("tests/fixtures/{name}")
}

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn output(mut c: Command) -> Run {
    let out: Output = c.output().expect("run gang");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "gang panicked: {}",
        run.stderr
    );
    run
}

pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gang"));
    c.args(args)
        .current_dir(crate_dir())
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    c
}

/// Runs `gang ARGS…` in this crate's directory.
pub fn gang(args: &[&str]) -> Run {
    output(command(args))
}

/// Runs `gang ARGS…` with `input` on standard input.
pub fn gang_stdin(args: &[&str], input: &str) -> Run {
    use std::io::Write;
    let mut c = command(args);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn gang");
    {
        let mut stdin = child.stdin.take().unwrap();
        // gang may stop reading early on bad input: a broken pipe is fine.
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run
}

/// Compares `actual` with `tests/golden/NAME`, or rewrites it when
/// `GANG_UPDATE_GOLDEN=1`. Every golden file is reviewed by hand against its fixture.
pub fn golden(name: &str, actual: &str) {
    let path = crate_dir().join("tests/golden").join(name);
    if std::env::var("GANG_UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with GANG_UPDATE_GOLDEN=1 to write it, then review it)",
            path.display()
        )
    });
    if expected != actual {
        let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
        let first = e
            .iter()
            .zip(&a)
            .position(|(x, y)| x != y)
            .unwrap_or(e.len().min(a.len()));
        panic!(
            "{} differs from the output at line {}:\n  golden: {:?}\n  actual: {:?}\n(GANG_UPDATE_GOLDEN=1 rewrites it; review the diff)",
            path.display(),
            first + 1,
            e.get(first),
            a.get(first)
        );
    }
}

pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
