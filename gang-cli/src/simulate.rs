//! `gang simulate FILE`: runs a gang-sim run document or experiment and prints, per
//! variant, what the placement policy cost in completion time from submission.

use serde::Serialize;

use gang_sim::{Experiment, Group, RunDocument, SimError, SimResult, Stats};

use crate::cli::Format;
use crate::error::{CliError, Exit};
use crate::output::{done, Done};

/// One variant's result, as the JSON and YAML outputs print it.
#[derive(Serialize)]
struct VariantDoc<'a> {
    name: &'a str,
    summary: serde_json::Value,
    /// Per job, in trace order: gang-sim's job records (as `jobs.jsonl` holds them).
    jobs: &'a [gang_sim::JobRecord],
}

#[derive(Serialize)]
struct SimulateDoc<'a> {
    status: &'static str,
    file: &'a str,
    description: &'a str,
    variants: Vec<VariantDoc<'a>>,
}

/// gang-sim's error as the CLI's: a bug in the simulator ([`SimError::Internal`]) is
/// exit 5, never "invalid input"; everything else names the file and field (exit 2).
fn sim_error(file: &str, e: &SimError) -> CliError {
    if let SimError::Internal(reason) = e {
        return CliError::Internal {
            source: file.to_owned(),
            reason: reason.clone(),
        };
    }
    CliError::Input {
        source: file.to_owned(),
        object: None,
        field: Some(e.field().to_owned()).filter(|f| !f.is_empty()),
        reason: e.to_string(),
    }
}

/// Runs the file: an experiment (it has `variants`) runs every variant, a run document
/// runs once (as the variant `run`).
pub(crate) fn run(
    file: &str,
    out: Option<&str>,
    format: Format,
    max_bytes: u64,
) -> Result<Done, CliError> {
    let mut f = std::fs::File::open(file).map_err(|e| CliError::Read {
        source: file.to_owned(),
        reason: e.to_string(),
    })?;
    let text = crate::input::read_capped(file, &mut f, max_bytes)?;
    let is_experiment = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .is_some_and(|v| v.get("variants").is_some());
    let dir = std::path::Path::new(file)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let (description, results): (String, Vec<(String, SimResult)>) = if is_experiment {
        let mut e = Experiment::from_json(&text).map_err(|e| sim_error(file, &e))?;
        e.run.rebase(&dir);
        if out.is_some() {
            check_folders(file, e.variants.iter().map(|v| v.name.as_str()))?;
        }
        let results = e.run().map_err(|err| sim_error(file, &err))?;
        (e.description, results)
    } else {
        let mut d = RunDocument::from_json(&text).map_err(|e| sim_error(file, &e))?;
        d.rebase(&dir);
        let r = d
            .simulation()
            .and_then(|s| s.run())
            .map_err(|e| sim_error(file, &e))?;
        (String::new(), vec![("run".to_owned(), r)])
    };
    if let Some(dir) = out {
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
                jobs: &r.jobs,
            })
            .collect(),
    };
    let mut d = done(
        &doc,
        text_report(file, &description, &results),
        format,
        Exit::Placed,
    );
    // The summaries' warnings, on stderr whatever the format (JSON and YAML also
    // carry them in each variant's summary); an experiment's name their variant.
    d.warnings = results
        .iter()
        .flat_map(|(name, r)| {
            r.summary.warnings.iter().map(move |w| {
                if is_experiment {
                    format!("{name}: {w}")
                } else {
                    w.clone()
                }
            })
        })
        .collect();
    Ok(d)
}

/// Two variants whose names give the same `--out` folder would overwrite each other.
fn check_folders<'a>(file: &str, names: impl Iterator<Item = &'a str>) -> Result<(), CliError> {
    let mut seen: std::collections::BTreeMap<String, &str> = Default::default();
    for (i, n) in names.enumerate() {
        if let Some(first) = seen.insert(slug(n), n) {
            return Err(CliError::Input {
                source: file.to_owned(),
                object: None,
                field: Some(format!("variants[{i}].name")),
                reason: format!(
                    "{} and {} both write to the folder {} under --out; rename one",
                    cut(n),
                    cut(first),
                    cut(&slug(n))
                ),
            });
        }
    }
    Ok(())
}

/// A name as a message quotes it: at most 60 characters.
fn cut(v: &str) -> String {
    if v.chars().count() <= 60 {
        format!("{v:?}")
    } else {
        let head: String = v.chars().take(60).collect();
        format!("{head:?}… ({} bytes)", v.len())
    }
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

/// GPU-hours as a quantity of GPU-hours, not a duration: `6.0 GPU-h`, `1,234 GPU-h`.
fn gpu_hours(x: f64) -> String {
    if x >= 1000.0 {
        let whole = format!("{:.0}", x);
        let mut grouped = String::new();
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{grouped} GPU-h")
    } else {
        format!("{x:.1} GPU-h")
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
        "\n{:<28} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>6}\n",
        "variant",
        "jobs",
        "done",
        "complete",
        "p95",
        "queue p95",
        "run mean",
        "wasted",
        "pre-progress",
        "util"
    ));
    for (name, r) in results {
        let g: &Group = &r.summary.all;
        let done = g.states.get("completed").copied().unwrap_or(0);
        let (complete, complete95) = stat(&g.completion);
        let (_, queue95) = stat(&g.queue_delay);
        let (run_mean, _) = stat(&g.run_time);
        out.push_str(&format!(
            "{:<28} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>5.0}%\n",
            name,
            g.jobs,
            done,
            complete,
            complete95,
            queue95,
            run_mean,
            gpu_hours(g.gpu_hours_wasted),
            gpu_hours(g.gpu_hours_before_progress),
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
         submission to admission; wasted: GPU-hours of failed attempts and lost work; \
         pre-progress: GPU-hours held before the first progress; util: share of GPUs \
         held, averaged while jobs arrive (first to last submission: the drain tail \
         left out)\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulator bug is exit 5 (`internal`), never "invalid input"; an input error
    /// stays exit 2 and names its field.
    #[test]
    fn gpu_hours_read_as_gpu_hours() {
        assert_eq!(gpu_hours(6.0), "6.0 GPU-h");
        assert_eq!(gpu_hours(0.04), "0.0 GPU-h");
        assert_eq!(gpu_hours(1234.4), "1,234 GPU-h");
        assert_eq!(gpu_hours(1_234_567.0), "1,234,567 GPU-h");
    }

    /// `a b` and `a-b` map to one `--out` folder: refused, naming both (issue 25).
    #[test]
    fn variants_sharing_an_output_folder_are_refused() {
        let e = check_folders("x.json", ["a b", "ok", "a-b"].into_iter()).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("variants[2].name") || m.contains("\"a-b\""),
            "{m}"
        );
        assert!(m.contains("\"a b\"") && m.contains("\"a-b\""), "{m}");
        assert!(check_folders("x.json", ["a", "b"].into_iter()).is_ok());
    }

    #[test]
    fn a_simulator_bug_is_not_invalid_input() {
        let bug = sim_error(
            "run.json",
            &SimError::Internal("ledger went negative".into()),
        );
        assert_eq!(bug.exit(), Exit::Internal);
        assert_eq!(bug.exit().code(), 5);
        assert_eq!(bug.kind(), "internal");
        let doc = bug.document();
        assert_eq!(doc.source.as_deref(), Some("run.json"));
        assert!(bug.to_string().contains("ledger went negative"), "{bug}");
        assert!(bug.to_string().contains("not your input"), "{bug}");
        let bad = gang_sim::run_json("{").unwrap_err();
        let input = sim_error("run.json", &bad);
        assert_eq!(input.exit(), Exit::Invalid);
        assert_eq!(input.kind(), "input");
    }
}
