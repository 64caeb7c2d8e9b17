//! What can go wrong, and the exit code each answer or failure gives.

use std::fmt;

use serde::Serialize;

/// The process exit codes of `gang`. Stable: never renumbered.
///
/// ```
/// use gang_cli::Exit;
/// assert_eq!(Exit::Placed.code(), 0);
/// assert_eq!(Exit::DoesNotFit.code(), 1);
/// assert_eq!(Exit::Invalid.code(), 2);
/// assert_eq!(Exit::Internal.code(), 5);
/// // In JSON and YAML documents an exit status is its number.
/// assert_eq!(serde_json::to_string(&Exit::DoesNotFit).unwrap(), "1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: placed (`place`, `explain`), or done (`topology`, `demo`, `simulate`, `--help`).
    Placed = 0,
    /// 1: valid input, but the workload does not fit now.
    DoesNotFit = 1,
    /// 2: invalid input: a file that cannot be read, malformed JSON or YAML, an object
    /// of the wrong kind, a bad value, no workload or several to choose from, a bad
    /// command line.
    Invalid = 2,
    /// 3: the exact multi-role search ran out of budget: a placement may exist.
    Undecided = 3,
    /// 4: `kubectl` failed or could not be run (plugin mode).
    Kubectl = 4,
    /// 5: a bug: gang-sim (or gang) broke one of its own invariants. Not the input's
    /// fault; please report it with the input.
    Internal = 5,
    /// 6: the answer could not be written (a full disk, a closed pipe).
    Output = 6,
}

impl Serialize for Exit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.code())
    }
}

impl Exit {
    /// The numeric exit code. See [`Exit`].
    pub const fn code(self) -> i32 {
        self as i32
    }
}

/// The exit codes as `gang --help` and the README print them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  placed (place, explain), a plan (preempt), or done (topology, demo, simulate)
  1  does not fit now (the answer says why); preempt: no eviction makes it fit
  2  invalid input: unreadable file, malformed JSON/YAML, wrong kind of object,
     bad value (the message names the file, object and field), no workload or
     several to choose from (--workload), bad command line
  3  undecided: the exact multi-role search ran out of budget (a placement may exist)
  4  kubectl failed or could not be run (kubectl-gang plugin)
  5  internal error: a bug in gang or the simulator, not in the input (please
     report it with the input)
  6  the answer could not be written to standard output (a full disk, a closed pipe)";

/// A failure: invalid input (exit 2), a failing `kubectl` (exit 4), or a bug (exit 5).
#[derive(Debug, Clone)]
pub enum CliError {
    /// gang-kube rejected the objects: names the file, object, field and value.
    Kube(gang_kube::Error),
    /// A file or standard input could not be read.
    Read {
        /// The file name as given (`-` for standard input).
        source: String,
        /// Why.
        reason: String,
    },
    /// The input is readable but the question cannot be asked: no workload, several
    /// to choose from, a reference that matches none, a bad option value.
    Input {
        /// Where (a file, `--workload`, `--levels`).
        source: String,
        /// The object, if one.
        object: Option<String>,
        /// The field, if one.
        field: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// `kubectl` could not be run or failed (plugin mode).
    Kubectl {
        /// The command line run.
        command: String,
        /// What it printed on stderr, or why it could not run.
        reason: String,
    },
    /// A bug: an invariant gang-sim (or gang) keeps was broken while answering. The
    /// input was accepted; it is not what is wrong.
    Internal {
        /// The file being answered.
        source: String,
        /// What broke.
        reason: String,
    },
}

impl CliError {
    /// The exit code this failure gives. See [`Exit`].
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Kubectl { .. } => Exit::Kubectl,
            CliError::Internal { .. } => Exit::Internal,
            CliError::Kube(_) | CliError::Read { .. } | CliError::Input { .. } => Exit::Invalid,
        }
    }

    /// A stable name: the gang-kube error kind (`malformed`, `invalid_value`, …), or
    /// `unreadable`, `input`, `kubectl`, `internal`.
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::Kube(e) => e.kind().as_str(),
            CliError::Read { .. } => "unreadable",
            CliError::Input { .. } => "input",
            CliError::Kubectl { .. } => "kubectl",
            CliError::Internal { .. } => "internal",
        }
    }

    pub(crate) fn input(source: impl Into<String>, reason: impl Into<String>) -> Self {
        CliError::Input {
            source: source.into(),
            object: None,
            field: None,
            reason: reason.into(),
        }
    }

    /// The error as a JSON-ready document: `{"status": "error", "exit_code", "kind",
    /// "source", "object", "field", "value", "message"}`.
    pub fn document(&self) -> ErrorDocument {
        let (source, object, field, value) = match self {
            CliError::Kube(e) => (
                Some(e.source_name().to_owned()),
                e.object().map(str::to_owned),
                e.field().map(str::to_owned),
                e.value().map(str::to_owned),
            ),
            CliError::Read { source, .. } => (Some(source.clone()), None, None, None),
            CliError::Input {
                source,
                object,
                field,
                ..
            } => (Some(source.clone()), object.clone(), field.clone(), None),
            CliError::Kubectl { command, .. } => (Some(command.clone()), None, None, None),
            CliError::Internal { source, .. } => (Some(source.clone()), None, None, None),
        };
        ErrorDocument {
            status: "error",
            exit_code: self.exit(),
            kind: self.kind(),
            source,
            object,
            field,
            value,
            message: self.to_string(),
        }
    }
}

/// Messages quote what the user gave (a `--workload` argument, a variant's name, a key):
/// a word longer than 300 characters is cut (file names are not), its length in bytes after it (gang-kube's
/// and gang-sim's messages are cut the same way).
fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    gang_core::cut_words(text)
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Kube(e) => write!(f, "{e}"),
            CliError::Read { source, reason } => {
                write!(f, "{source}: cannot read: {}", cut(reason))
            }
            CliError::Input {
                source,
                object,
                field,
                reason,
            } => {
                write!(f, "{source}")?;
                if let Some(o) = object {
                    write!(f, ": {}", cut(o))?;
                }
                if let Some(fl) = field {
                    write!(f, ": {}", cut(fl))?;
                }
                write!(f, ": {}", cut(reason))
            }
            CliError::Kubectl { command, reason } => {
                write!(f, "`{}` failed: {}", cut(command), cut(reason))
            }
            CliError::Internal { source, reason } => write!(
                f,
                "{source}: internal error (a bug, not your input; please report it with the input): {}",
                cut(reason)
            ),
        }
    }
}

impl std::error::Error for CliError {}

impl From<gang_kube::Error> for CliError {
    fn from(e: gang_kube::Error) -> Self {
        CliError::Kube(e)
    }
}

/// An error as the JSON and YAML outputs print it. See [`CliError::document`].
#[derive(Debug, Clone, Serialize)]
pub struct ErrorDocument {
    /// Always `"error"`.
    pub status: &'static str,
    /// The process exit code.
    pub exit_code: Exit,
    /// [`CliError::kind`].
    pub kind: &'static str,
    /// The file (or `kubectl` command) it is about.
    pub source: Option<String>,
    /// The object (`Node/a1`, `PodGroup/ml-team/training-workers`).
    pub object: Option<String>,
    /// The field inside the object (`status.allocatable.cpu`).
    pub field: Option<String>,
    /// The value as written.
    pub value: Option<String>,
    /// The whole message.
    pub message: String,
}
