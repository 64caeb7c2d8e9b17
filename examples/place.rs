//! Places the gang of a scenario file and prints the result as JSON.
//!
//! ```text
//! cargo run --example place -- examples/scenarios/01-rack-required.json
//! cargo run --example place -- --check examples/scenarios/*.json
//! ```
//!
//! Exit status: 0 on a result (placed or not), 2 on invalid input (the error is printed
//! as JSON on stdout and in words on stderr), 1 when `--check` finds an expectation
//! that does not hold.

use std::process::ExitCode;

use gang_core::scenario::Scenario;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.first().is_some_and(|a| a == "--check");
    if check {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: place [--check] FILE.json...");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for path in &args {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: cannot read: {e}");
                return ExitCode::from(2);
            }
        };
        let scenario = match Scenario::from_json(&text) {
            Ok(s) => s,
            Err(e) => {
                println!("{}", e.to_json());
                eprintln!("{path}: {e}");
                return ExitCode::from(2);
            }
        };
        if check {
            let report = scenario.check();
            if report.passed() {
                println!("ok   {path}");
            } else {
                println!("FAIL {path}");
                for f in &report.failures {
                    println!("     {f}");
                }
                status = ExitCode::FAILURE;
            }
            continue;
        }
        match scenario.run() {
            Ok(outcome) => println!("{}", outcome.to_json()),
            Err(e) => {
                println!("{}", e.to_json());
                eprintln!("{path}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    status
}
