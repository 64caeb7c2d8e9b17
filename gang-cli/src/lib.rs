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
//! Layout: [`cli`] (the clap definitions), [`request`] (the command line resolved
//! once: source, query, output), [`input`] (files, standard input, `kubectl`),
//! [`report`] (`place`, `explain` and `preempt` as data), [`tree`] (`topology` as
//! data), [`render`] (text, JSON, YAML), [`demo`] (the built-in cluster), [`error`]
//! (exit codes), and one `execute` that answers every request. All placement logic is
//! gang-core's, reached through gang-kube.

#![deny(missing_docs)]

pub mod cli;
pub mod demo;
pub mod error;
mod execute;
pub mod input;
mod output;
pub mod preempt;
pub mod render;
pub mod report;
pub mod request;
mod simulate;
pub mod tree;

use std::ffi::OsString;
use std::io::{Read, Write};

use clap::Parser;

use cli::{Cli, Format, KubectlCli};
pub use error::{CliError, Exit, EXIT_CODES};
use execute::{execute, Context};
use render::Style;
use request::Request;

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
    /// The most bytes of one input: a file, standard input, what kubectl prints, a
    /// simulation document (default [`input::DEFAULT_MAX_INPUT_BYTES`]; the binary
    /// reads `GANG_MAX_INPUT_BYTES`).
    pub max_input_bytes: u64,
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
            max_input_bytes: input::DEFAULT_MAX_INPUT_BYTES,
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
/// output) and its exit code: 2 (invalid input), 4 (kubectl) or 5 (a bug).
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
        KubectlCli::try_parse_from(&args).map(Request::from)
    } else {
        Cli::try_parse_from(&args).map(|c| Request::from(c.command))
    };
    let request = match parsed {
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
    let out = request.output.clone();
    let style = Style::new(render::use_color(
        out.color,
        env.stdout_is_terminal,
        env.no_color.as_deref(),
    ));
    let mut cx = Context {
        stdin: &mut *env.stdin,
        kubectl: &env.kubectl,
        leak: env.leak,
        style: style.clone(),
        max_input_bytes: env.max_input_bytes,
    };
    match execute(request, &mut cx) {
        Ok(d) => {
            // Text for a terminal has names escaped; JSON and YAML stay exact.
            let body = if out.output == Format::Text {
                render::terminal_text(&d.text, &style)
            } else {
                d.doc
            };
            if let Err(w) = write_out(env.stdout, &body) {
                return cannot_write(env.stderr, &w);
            }
            for w in &d.warnings {
                let _ = writeln!(env.stderr, "gang: warning: {}", safe(w));
            }
            if let Some(e) = d.error {
                let _ = writeln!(env.stderr, "gang: error: {}", safe(&e));
            }
            d.exit.code()
        }
        Err(e) => {
            let _ = writeln!(env.stderr, "gang: error: {}", safe(&e));
            if out.output != Format::Text {
                let doc = render::document(&e.document(), out.output);
                if let Err(w) = write_out(env.stdout, &doc) {
                    return cannot_write(env.stderr, &w);
                }
            }
            e.exit().code()
        }
    }
}

/// A message for standard error, escaped for a terminal.
fn safe(e: &dyn std::fmt::Display) -> String {
    render::terminal_safe(&e.to_string())
}

/// Writes the answer and flushes it.
fn write_out(stdout: &mut dyn Write, body: &str) -> std::io::Result<()> {
    stdout.write_all(body.as_bytes())?;
    stdout.flush()
}

/// The answer could not be written: a message on standard error, exit 6.
fn cannot_write(stderr: &mut dyn Write, e: &std::io::Error) -> i32 {
    let _ = writeln!(
        stderr,
        "gang: error: cannot write the answer to standard output: {}",
        safe(e)
    );
    Exit::Output.code()
}
