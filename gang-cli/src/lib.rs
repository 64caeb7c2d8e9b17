//! The `gang` command as a library: [`run`] takes the arguments and the process's
//! streams and returns the exit code, so tests and benchmarks call exactly what the
//! binary runs.
//!
//! ```
//! use gang_cli::{run, Env};
//! let (mut stdin, mut stdout, mut stderr) = (std::io::empty(), Vec::new(), Vec::new());
//! let mut env = Env::new(&mut stdin, &mut stdout, &mut stderr);
//! let code = run(["gang", "demo", "--snapshot", "first"], &mut env);
//! assert_eq!(code, 0);
//! drop(env);
//! let text = String::from_utf8(stdout).unwrap();
//! assert!(text.contains("placed PodGroup/ml-team/training-workers: 4 members in rack b1/a"), "{text}");
//! ```
//!
//! Layout: [`cli`] (the clap definitions), [`input`] (files, standard input,
//! `kubectl`), [`report`] (`place` and `explain` as data), [`tree`] (`topology` as
//! data), [`render`] (text, JSON, YAML), [`demo`] (the built-in cluster), [`error`]
//! (exit codes). All placement logic is gang-core's, reached through gang-kube.

#![deny(missing_docs)]

pub mod cli;
pub mod demo;
pub mod error;
pub mod input;
mod output;
pub mod render;
pub mod report;
mod simulate;
pub mod tree;

use std::ffi::OsString;
use std::io::{Read, Write};

use clap::Parser;
use gang_kube::Objects;
use serde::Serialize;

use cli::{
    Cli, Command, DemoArgs, Format, KubectlCli, KubectlCommand, OutputArgs, Snapshot,
    TopologyChoiceArgs, TreeArgs, WorkloadChoice,
};
pub use error::{CliError, Exit, EXIT_CODES};
use output::{done, Done};
use render::Style;

/// The process's streams and environment, as [`run`] sees them.
pub struct Env<'a> {
    /// Standard input (for `-`).
    pub stdin: &'a mut dyn Read,
    /// Standard output.
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
    /// Whether standard output is a terminal (colour in `--color auto`).
    pub stdout_is_terminal: bool,
    /// The `NO_COLOR` environment variable.
    pub no_color: Option<String>,
    /// The kubectl program (plugin mode), found on `PATH`.
    pub kubectl: String,
    /// Leak the parsed objects instead of freeing them (the process exits right after:
    /// freeing 100k pods costs a quarter of a second).
    pub leak: bool,
}

impl<'a> Env<'a> {
    /// Streams given; not a terminal, `NO_COLOR` unset, `kubectl` from `PATH`, no leak.
    pub fn new(
        stdin: &'a mut dyn Read,
        stdout: &'a mut dyn Write,
        stderr: &'a mut dyn Write,
    ) -> Self {
        Env {
            stdin,
            stdout,
            stderr,
            stdout_is_terminal: false,
            no_color: None,
            kubectl: "kubectl".to_owned(),
            leak: false,
        }
    }
}

/// Whether `argv0` is the kubectl plugin (`kubectl-gang`, `/usr/local/bin/kubectl-gang`,
/// `kubectl-gang.exe`).
///
/// ```
/// assert!(gang_cli::is_plugin("/usr/local/bin/kubectl-gang"));
/// assert!(gang_cli::is_plugin("kubectl-gang.exe"));
/// assert!(!gang_cli::is_plugin("gang"));
/// ```
pub fn is_plugin(argv0: &str) -> bool {
    let base = argv0.rsplit(['/', '\\']).next().unwrap_or(argv0);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    base.ends_with("kubectl-gang")
}

/// Runs `gang` (or, when `args[0]` is `kubectl-gang`, the kubectl plugin) and returns
/// the exit code ([`Exit`]). Never panics on any input: every failure is a message on
/// standard error (and, with `--output json|yaml`, an error document on standard
/// output) and exit code 2 (invalid input) or 4 (kubectl).
pub fn run<I, T>(args: I, env: &mut Env<'_>) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let plugin = args
        .first()
        .is_some_and(|a| is_plugin(&a.to_string_lossy()));
    let parsed = if plugin {
        KubectlCli::try_parse_from(&args).map(Command::Kubectl)
    } else {
        Cli::try_parse_from(&args).map(|c| c.command)
    };
    let command = match parsed {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(env.stderr, "{text}");
                Exit::Invalid.code()
            } else {
                let _ = write!(env.stdout, "{text}");
                Exit::Placed.code()
            };
        }
    };
    let out = out_args(&command).clone();
    let style = Style {
        color: render::use_color(out.color, env.stdout_is_terminal, env.no_color.as_deref()),
    };
    match execute(command, env, style) {
        Ok(d) => {
            let body = if out.output == Format::Text {
                &d.text
            } else {
                &d.doc
            };
            let _ = env.stdout.write_all(body.as_bytes());
            let _ = env.stdout.flush();
            if let Some(e) = d.error {
                let _ = writeln!(env.stderr, "gang: error: {e}");
            }
            d.exit.code()
        }
        Err(e) => {
            if out.output != Format::Text {
                let _ = env
                    .stdout
                    .write_all(render::document(&e.document(), out.output).as_bytes());
            }
            let _ = writeln!(env.stderr, "gang: error: {e}");
            e.exit().code()
        }
    }
}

fn out_args(c: &Command) -> &OutputArgs {
    match c {
        Command::Place(a) | Command::Explain(a) => &a.out,
        Command::Topology(a) => &a.out,
        Command::Demo(a) => &a.out,
        Command::Simulate(a) => &a.out_format,
        Command::Kubectl(k) => match &k.command {
            KubectlCommand::Place(a) | KubectlCommand::Explain(a) => &a.out,
            KubectlCommand::Topology(a) => &a.out,
            KubectlCommand::Demo(a) => &a.out,
        },
    }
}

/// The objects, leaked when the process is about to exit anyway.
struct Input<'a> {
    objects: Objects,
    leak: &'a bool,
}

impl Drop for Input<'_> {
    fn drop(&mut self) {
        if *self.leak {
            std::mem::forget(std::mem::take(&mut self.objects));
        }
    }
}

fn execute(command: Command, env: &mut Env<'_>, style: Style) -> Result<Done, CliError> {
    let leak = env.leak;
    match command {
        Command::Place(a) => {
            let input = Input {
                objects: input::read_files(&a.files, env.stdin)?,
                leak: &leak,
            };
            let objects = &input.objects;
            place(
                objects,
                &a.workload,
                &a.topology,
                &a.files.join(", "),
                &[],
                a.out.output,
                style,
            )
        }
        Command::Explain(a) => {
            let input = Input {
                objects: input::read_files(&a.files, env.stdin)?,
                leak: &leak,
            };
            let objects = &input.objects;
            explain(
                objects,
                &a.workload,
                &a.topology,
                &a.files.join(", "),
                &[],
                a.out.output,
                style,
            )
        }
        Command::Topology(a) => {
            let input = Input {
                objects: input::read_files(&a.files, env.stdin)?,
                leak: &leak,
            };
            let objects = &input.objects;
            topology(objects, &a.topology, &a.tree, &[], a.out.output, style)
        }
        Command::Demo(a) => demo(&a, style),
        Command::Simulate(a) => simulate::run(&a),
        Command::Kubectl(k) => kubectl(k.command, env, style),
    }
}

fn place(
    objects: &Objects,
    choice: &WorkloadChoice,
    t: &TopologyChoiceArgs,
    source: &str,
    notes: &[String],
    format: Format,
    style: Style,
) -> Result<Done, CliError> {
    let r = report::place(objects, choice, input::topology_source(t)?, source, notes)?;
    let exit = exit_of(r.exit_code);
    let text = if format == Format::Text {
        render::place_text(&r, &style)
    } else {
        String::new()
    };
    Ok(done(&r, text, format, exit))
}

fn explain(
    objects: &Objects,
    choice: &WorkloadChoice,
    t: &TopologyChoiceArgs,
    source: &str,
    notes: &[String],
    format: Format,
    style: Style,
) -> Result<Done, CliError> {
    let r = report::explain(objects, choice, input::topology_source(t)?, source, notes)?;
    let exit = exit_of(r.exit_code);
    let text = if format == Format::Text {
        render::explain_text(&r, &style)
    } else {
        String::new()
    };
    let mut d = done(&r, text, format, exit);
    d.error = r.failure.clone();
    Ok(d)
}

fn topology(
    objects: &Objects,
    t: &TopologyChoiceArgs,
    tree: &TreeArgs,
    notes: &[String],
    format: Format,
    style: Style,
) -> Result<Done, CliError> {
    let cluster = report::cluster_for(objects, input::topology_source(t)?, None)?;
    let resources = tree::default_resources(&cluster, &tree.resources);
    let mut warnings: Vec<String> = notes.to_vec();
    warnings.extend(cluster.report().warnings.iter().cloned());
    let r = tree::TopologyReport {
        command: "topology",
        topology: cluster.report().topology.clone(),
        tree: tree::tree(&cluster, &resources, tree),
        resources,
        warnings,
    };
    let text = if format == Format::Text {
        render::topology_text(&r, &style)
    } else {
        String::new()
    };
    Ok(done(&r, text, format, Exit::Placed))
}

fn exit_of(code: i32) -> Exit {
    match code {
        0 => Exit::Placed,
        1 => Exit::DoesNotFit,
        3 => Exit::Undecided,
        4 => Exit::Kubectl,
        _ => Exit::Invalid,
    }
}

/// `gang demo` as data.
#[derive(Serialize)]
struct DemoReport {
    command: &'static str,
    description: &'static str,
    snapshots: Vec<DemoSnapshot>,
}

#[derive(Serialize)]
struct DemoSnapshot {
    snapshot: u8,
    description: &'static str,
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    place: Option<report::PlaceReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<report::ExplainReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    topology: Option<tree::TopologyReport>,
}

const DEMO: &str = "the guides' rack example (keep-workers-close): four 1-GPU workers of the PodGroup training-workers must share a rack";

fn demo(a: &DemoArgs, style: Style) -> Result<Done, CliError> {
    let mut snaps = Vec::new();
    let mut text = format!("{}: {DEMO}.\n", style_bold(&style, "gang demo"));
    let want = |n: u8| match a.snapshot {
        Snapshot::First => n == 1,
        Snapshot::Second => n == 2,
        Snapshot::Both => true,
    };
    let none = WorkloadChoice::default();
    for n in [1u8, 2] {
        if !want(n) {
            continue;
        }
        let objects = demo::objects(n)?;
        let sources = format!("demo/snapshot-{n}.yaml demo/training-workers.yaml");
        let (description, cmd) = if n == 1 {
            ("rack a has 4 GPUs free: the group is placed", "place")
        } else {
            (
                "still 7 GPUs free across the cluster, but no rack has 4: the group waits",
                "explain",
            )
        };
        let command = format!("gang {cmd} {sources}");
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!("\n── Snapshot {n}: {description}\n$ {command}\n"),
        );
        let mut s = DemoSnapshot {
            snapshot: n,
            description,
            command,
            place: None,
            explain: None,
            topology: None,
        };
        if n == 1 {
            let r = report::place(
                &objects,
                &none,
                gang_kube::TopologySource::Auto,
                &sources,
                &[],
            )?;
            text.push_str(&render::place_text(&r, &style));
            s.place = Some(r);
        } else {
            let r = report::explain(
                &objects,
                &none,
                gang_kube::TopologySource::Auto,
                &sources,
                &[],
            )?;
            text.push_str(&render::explain_text(&r, &style));
            s.explain = Some(r);
        }
        if a.topology {
            let cluster = report::cluster_for(&objects, gang_kube::TopologySource::Auto, None)?;
            let resources = tree::default_resources(&cluster, &[]);
            let r = tree::TopologyReport {
                command: "topology",
                topology: cluster.report().topology.clone(),
                tree: tree::tree(&cluster, &resources, &TreeArgs::default()),
                resources,
                warnings: Vec::new(),
            };
            let _ = std::fmt::Write::write_fmt(
                &mut text,
                format_args!("$ gang topology demo/snapshot-{n}.yaml\n"),
            );
            text.push_str(&render::topology_text(&r, &style));
            s.topology = Some(r);
        }
        snaps.push(s);
    }
    let r = DemoReport {
        command: "demo",
        description: DEMO,
        snapshots: snaps,
    };
    Ok(done(&r, text, a.out.output, Exit::Placed))
}

fn style_bold(s: &Style, t: &str) -> String {
    if s.color {
        format!("\x1b[1m{t}\x1b[0m")
    } else {
        t.to_owned()
    }
}

fn kubectl(c: KubectlCommand, env: &mut Env<'_>, style: Style) -> Result<Done, CliError> {
    let leak = env.leak;
    match c {
        KubectlCommand::Demo(a) => demo(&a, style),
        KubectlCommand::Topology(a) => {
            let k = input::Kubectl {
                program: &env.kubectl,
                access: &a.access,
            };
            let source = input::topology_source(&a.topology)?;
            let mut notes = Vec::new();
            let mut objects = Objects::new();
            k.cluster(&mut objects, &source, &mut notes)?;
            let input = Input {
                objects,
                leak: &leak,
            };
            let objects = &input.objects;
            topology(objects, &a.topology, &a.tree, &notes, a.out.output, style)
        }
        KubectlCommand::Place(a) => {
            let (objects, notes, choice) = kubectl_workload(&a, env)?;
            let input = Input {
                objects,
                leak: &leak,
            };
            let objects = &input.objects;
            place(
                objects,
                &choice,
                &a.topology,
                "kubectl",
                &notes,
                a.out.output,
                style,
            )
        }
        KubectlCommand::Explain(a) => {
            let (objects, notes, choice) = kubectl_workload(&a, env)?;
            let input = Input {
                objects,
                leak: &leak,
            };
            let objects = &input.objects;
            explain(
                objects,
                &choice,
                &a.topology,
                "kubectl",
                &notes,
                a.out.output,
                style,
            )
        }
    }
}

/// The workload first (a wrong name fails before the cluster is read), then the nodes
/// and pods, then the Kueue objects.
/// Returns the objects, the notes, and the workload as the plugin chooses it: the name
/// given, in the namespace of the object kubectl returned.
fn kubectl_workload(
    a: &cli::KubectlWorkloadArgs,
    env: &Env<'_>,
) -> Result<(Objects, Vec<String>, WorkloadChoice), CliError> {
    let k = input::Kubectl {
        program: &env.kubectl,
        access: &a.access,
    };
    let source = input::topology_source(&a.topology)?;
    let mut objects = Objects::new();
    let mut args: Vec<&str> = vec!["get", &a.workload];
    if let Some(ns) = &a.namespace {
        args.extend(["-n", ns]);
    }
    args.extend(["-o", "json"]);
    k.add(&mut objects, &args)?;
    // Without -n, kubectl used the context's namespace: the object says which.
    let namespace = a
        .namespace
        .clone()
        .or_else(|| objects.refs().into_iter().find_map(|r| r.namespace));
    let choice = WorkloadChoice {
        workload: Some(a.workload.clone()),
        namespace,
    };
    let mut notes = Vec::new();
    k.cluster(&mut objects, &source, &mut notes)?;
    Ok((objects, notes, choice))
}
