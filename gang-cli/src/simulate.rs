//! `gang simulate FILE`: runs a gang-sim run document or experiment and prints, per
//! variant, what the placement policy cost in completion time from submission.

use serde::Serialize;

use gang_sim::{Experiment, Group, RunDocument, SimError, SimResult, Stats};

use crate::cli::SimulateArgs;
use crate::error::{CliError, Exit};
use crate::output::{done, Done};

/// One variant's result, as the JSON and YAML outputs print it.
#[derive(Serialize)]
struct VariantDoc<'a> {
    name: &'a str,
    summary: serde_json::Value,
}

#[derive(Serialize)]
struct SimulateDoc<'a> {
    status: &'static str,
    file: &'a str,
    description: &'a str,
    variants: Vec<VariantDoc<'a>>,
}

fn sim_error(file: &str, e: &SimError) -> CliError {
    CliError::Input {
        source: file.to_owned(),
        object: None,
        field: Some(e.field().to_owned()).filter(|f| !f.is_empty()),
        reason: e.to_string(),
    }
}

/// Runs the file: an experiment (it has `variants`) runs every variant, a run document
/// runs once (as the variant `run`).
pub(crate) fn run(a: &SimulateArgs) -> Result<Done, CliError> {
    let file = a.file.as_str();
    let text = std::fs::read_to_string(file).map_err(|e| CliError::Read {
        source: file.to_owned(),
        reason: e.to_string(),
    })?;
    let is_experiment = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .is_some_and(|v| v.get("variants").is_some());
    let (description, results): (String, Vec<(String, SimResult)>) = if is_experiment {
        let e = Experiment::from_file(file).map_err(|e| sim_error(file, &e))?;
        let results = e.run().map_err(|err| sim_error(file, &err))?;
        (e.description, results)
    } else {
        let d = RunDocument::from_file(file).map_err(|e| sim_error(file, &e))?;
        let r = d
            .simulation()
            .and_then(|s| s.run())
            .map_err(|e| sim_error(file, &e))?;
        (String::new(), vec![("run".to_owned(), r)])
    };
    if let Some(dir) = &a.out {
        for (name, r) in &results {
            let to = std::path::Path::new(dir).join(slug(name));
            r.write_to(&to.to_string_lossy())
                .map_err(|e| sim_error(file, &e))?;
        }
    }
    let doc = SimulateDoc {
        status: "done",
        file,
        description: &description,
        variants: results
            .iter()
            .map(|(name, r)| VariantDoc {
                name,
                summary: serde_json::from_str(&r.summary_json()).unwrap_or_default(),
            })
            .collect(),
    };
    Ok(done(
        &doc,
        text_report(file, &description, &results),
        a.out_format.output,
        Exit::Placed,
    ))
}

/// A folder name for a variant.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn secs(x: Option<f64>) -> String {
    match x {
        None => "-".to_owned(),
        Some(v) if v >= 3600.0 => format!("{:.1}h", v / 3600.0),
        Some(v) if v >= 60.0 => format!("{:.0}m", v / 60.0),
        Some(v) => format!("{v:.0}s"),
    }
}

fn stat(s: &Stats) -> (String, String) {
    (secs(s.mean), secs(s.p95))
}

/// One line per variant: jobs by final state, completion from submission, queue delay,
/// run time, GPU-hours wasted, utilisation.
fn text_report(file: &str, description: &str, results: &[(String, SimResult)]) -> String {
    let mut out = format!("simulation {file}\n");
    if !description.is_empty() {
        out.push_str(description);
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{:<28} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>6}\n",
        "variant", "jobs", "done", "complete", "p95", "queue p95", "run mean", "wasted", "util"
    ));
    for (name, r) in results {
        let g: &Group = &r.summary.all;
        let done = g.states.get("completed").copied().unwrap_or(0);
        let (complete, complete95) = stat(&g.completion);
        let (_, queue95) = stat(&g.queue_delay);
        let (run_mean, _) = stat(&g.run_time);
        out.push_str(&format!(
            "{:<28} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8.1}h {:>5.0}%\n",
            name,
            g.jobs,
            done,
            complete,
            complete95,
            queue95,
            run_mean,
            g.gpu_hours_wasted,
            100.0 * r.summary.mean_utilisation
        ));
        let others: Vec<String> = g
            .states
            .iter()
            .filter(|(s, _)| s.as_str() != "completed")
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        if !others.is_empty() {
            out.push_str(&format!(
                "{:<28} not completed: {}\n",
                "",
                others.join(", ")
            ));
        }
    }
    out.push_str(
        "\ncomplete: mean completion time from submission (p95 beside it); queue: \
         submission to admission; wasted: GPU-hours of failed attempts and lost work\n",
    );
    out
}
