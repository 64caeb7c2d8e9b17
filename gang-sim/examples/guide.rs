//! Runs the guides' examples (experiment files in `examples/sim/`) and prints, per
//! variant, what happened to every job.
//!
//! ```text
//! cargo run -p gang-sim --example guide                                   # all of them
//! cargo run -p gang-sim --example guide -- examples/sim/01-small-experiment.json
//! cargo run -p gang-sim --example guide -- --out target/sim examples/sim/03f-node-failure.json
//! ```
//!
//! With `--out DIR`, each variant's files (jobs.jsonl, jobs.csv, summary.json,
//! timeline.csv) go to `DIR/<experiment>/<variant>/`.

use std::process::ExitCode;

use gang_sim::Experiment;

fn fmt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = None;
    if let Some(i) = args.iter().position(|a| a == "--out") {
        if i + 1 >= args.len() {
            eprintln!("--out needs a folder");
            return ExitCode::FAILURE;
        }
        out = Some(args.remove(i + 1));
        args.remove(i);
    }
    if args.is_empty() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/sim");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path().to_string_lossy().into_owned())
                    // Experiment files (cluster documents sit beside them).
                    .filter(|p| {
                        p.ends_with(".json")
                            && std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"variants\""))
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        args = files;
    }
    for path in &args {
        let e = match Experiment::from_file(path) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("{path}: {err}");
                return ExitCode::FAILURE;
            }
        };
        println!("== {path}\n{}\n", e.description);
        let results = match e.run() {
            Ok(r) => r,
            Err(err) => {
                eprintln!("{path}: {err}");
                return ExitCode::FAILURE;
            }
        };
        for (name, r) in &results {
            println!("-- {name}");
            println!(
                "   {:<12} {:>10} {:>10} {:>10} {:>9} {:>8} {:>9} {:>9}  state: reason",
                "job", "queued s", "run s", "done s", "attempts", "span", "held GPUh", "wasted"
            );
            for j in &r.jobs {
                let span = j
                    .span
                    .as_deref()
                    .map(|l| l.rsplit('/').next().unwrap_or(l).to_owned())
                    .unwrap_or_else(|| "-".into());
                println!(
                    "   {:<12} {:>10} {:>10.0} {:>10} {:>9} {:>8} {:>9.3} {:>9.3}  {}: {}",
                    j.id,
                    fmt(j.queue_delay),
                    j.run_time,
                    fmt(j.completion),
                    j.attempts,
                    span,
                    j.gpu_hours_held,
                    j.gpu_hours_wasted,
                    j.state.as_str(),
                    j.reason
                );
            }
            if let Some(dir) = &out {
                let stem = std::path::Path::new(path)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let d = format!("{dir}/{stem}/{}", slug(name));
                if let Err(err) = r.write_to(&d) {
                    eprintln!("{err}");
                    return ExitCode::FAILURE;
                }
            }
        }
        println!();
    }
    ExitCode::SUCCESS
}
