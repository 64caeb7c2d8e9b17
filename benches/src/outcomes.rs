//! What each benchmarked query answered, recorded beside criterion's own output so the
//! report can say whether a time is for a placement or for a diagnosis.
//!
//! Lines of `group<TAB>benchmark<TAB>outcome` are appended to
//! `<criterion dir>/gang-outcomes.tsv`; the report keeps the last line per benchmark.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use gang_core::Outcome;

/// Criterion's output directory, found as criterion finds it: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `criterion/` in the target directory the running
/// bench binary was built into (`target/release/deps/<bench>` → `target/criterion`).
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// A one-line description of an outcome: `placed rack z00/b001/r07 (64 members)`,
/// `unschedulable`, `undecided`.
pub fn describe(out: &Outcome) -> String {
    match out {
        Outcome::Placed(p) => {
            let level = p
                .level()
                .map_or("cluster", |l| l.rsplit('/').next().unwrap_or(l));
            let path = p.domain_path();
            if path.is_empty() {
                format!("placed {level}-wide ({} members)", p.member_count())
            } else {
                format!("placed {level} {path} ({} members)", p.member_count())
            }
        }
        Outcome::Unschedulable(_) => "unschedulable (diagnosis)".to_owned(),
        Outcome::Undecided(_) => "undecided (search budget)".to_owned(),
    }
}

/// Appends one outcome line, once per benchmark and process (criterion calls a
/// benchmark's closure several times); errors are reported on stderr and otherwise
/// ignored (the benchmark itself does not depend on it).
pub fn record(group: &str, bench: &str, outcome: &str) {
    static SEEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let key = format!("{group}/{bench}");
    if !SEEN.lock().map_or(true, |mut s| s.insert(key)) {
        return;
    }
    let dir = criterion_dir();
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("gang-outcomes.tsv"))?;
        writeln!(f, "{group}\t{bench}\t{outcome}")
    };
    if let Err(e) = write() {
        eprintln!("could not record the outcome of {group}/{bench}: {e}");
    }
}
