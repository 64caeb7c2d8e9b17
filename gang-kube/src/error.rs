//! Invalid input: a typed error naming the file, the object, the field and the value.

use std::fmt;

use gang_core::cut_words;

use crate::origin::Origin;

/// What was wrong with the Kubernetes input. Every error names the source (the file name
/// the caller passed, or `-` for standard input), the object when one is known
/// (`Node/gpu-a1`, `PodGroup/ml-team/training-workers`, with its position in the file),
/// the field as a dotted path (`status.allocatable.cpu`) and the value.
///
/// ```
/// use gang_kube::{ErrorKind, Objects};
/// let text = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a1"},
///               "status": {"allocatable": {"cpu": "-4"}}}"#;
/// let err = Objects::parse("nodes.json", text).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidValue);
/// assert_eq!(err.source_name(), "nodes.json");
/// assert_eq!(err.object(), Some("Node/gpu-a1"));
/// assert_eq!(err.field(), Some("status.allocatable.cpu"));
/// assert_eq!(err.value(), Some("-4"));
/// assert!(err.to_string().starts_with("nodes.json: Node/gpu-a1: status.allocatable.cpu: \"-4\": "), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(self))]
struct Inner {
    kind: ErrorKind,
    source_name: String,
    object: Option<String>,
    position: Option<String>,
    field: Option<String>,
    value: Option<String>,
    reason: String,
    #[source]
    core: Option<gang_core::Error>,
}

/// The stable category of an [`Error`]. Values are never renumbered.
///
/// ```
/// use gang_kube::ErrorKind;
/// assert_eq!(ErrorKind::Malformed.as_str(), "malformed");
/// assert_eq!(ErrorKind::InvalidMinimum.code(), 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
#[repr(u32)]
pub enum ErrorKind {
    /// The text is not JSON or YAML, or an object does not have the shape of its kind.
    Malformed = 1,
    /// An object of another kind where a particular kind was expected (a Deployment in
    /// the nodes file), or no object of a needed kind at all (no Node).
    UnexpectedKind = 2,
    /// A value that does not mean anything: a negative or unparsable quantity, an
    /// annotation value that is not a level or a number, an unknown taint effect.
    InvalidValue = 3,
    /// A topology level that names no label (a Kueue level without `nodeLabel`), or a
    /// level label that no node carries.
    MissingLabel = 4,
    /// A group minimum (`minCount`, `minMember`, `minAvailable`) larger than the members
    /// the workload defines.
    InvalidMinimum = 5,
    /// A workload's topology request names a level the cluster's topology does not have.
    UnknownLevel = 6,
    /// The topology is invalid (hostname not last, a level repeated, several Kueue
    /// Topologies to choose from without a choice…).
    InvalidTopology = 7,
    /// gang-core rejected the converted inventory or gang; [`Error::core`] has its error.
    Core = 8,
}

impl ErrorKind {
    /// A stable snake_case name (`"invalid_value"`). See [`ErrorKind`].
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Malformed => "malformed",
            ErrorKind::UnexpectedKind => "unexpected_kind",
            ErrorKind::InvalidValue => "invalid_value",
            ErrorKind::MissingLabel => "missing_label",
            ErrorKind::InvalidMinimum => "invalid_minimum",
            ErrorKind::UnknownLevel => "unknown_level",
            ErrorKind::InvalidTopology => "invalid_topology",
            ErrorKind::Core => "core",
        }
    }

    /// The stable numeric code. See [`ErrorKind`].
    pub const fn code(self) -> u32 {
        self as u32
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, source_name: &str, reason: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            source_name: source_name.to_owned(),
            object: None,
            position: None,
            field: None,
            value: None,
            reason: reason.into(),
            core: None,
        }))
    }

    pub(crate) fn at(mut self, at: &Origin) -> Self {
        self.0.source_name = at.source.to_string();
        self.0.object = Some(at.object.clone());
        self.0.position = Some(at.position.to_string());
        self
    }

    pub(crate) fn with_position(mut self, position: impl Into<String>) -> Self {
        self.0.position = Some(position.into());
        self
    }

    pub(crate) fn with_object(mut self, object: impl Into<String>) -> Self {
        self.0.object = Some(object.into());
        self
    }

    pub(crate) fn with_field(mut self, field: impl Into<String>) -> Self {
        self.0.field = Some(field.into());
        self
    }

    /// Puts the field under `prefix` (`effect` under `spec.taints[0]`).
    pub(crate) fn under(mut self, prefix: &str) -> Self {
        self.0.field = Some(match self.0.field.take() {
            Some(f) if !f.is_empty() => format!("{prefix}.{f}"),
            _ => prefix.to_owned(),
        });
        self
    }

    pub(crate) fn with_value(mut self, value: impl Into<String>) -> Self {
        self.0.value = Some(value.into());
        self
    }

    pub(crate) fn with_core(mut self, core: gang_core::Error) -> Self {
        self.0.core = Some(core);
        self
    }

    /// The stable category. See [`Error`].
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The source (file) name the caller passed. See [`Error`].
    pub fn source_name(&self) -> &str {
        &self.0.source_name
    }

    /// The object, as `Kind/name` or `Kind/namespace/name`, when one is known. See
    /// [`Error`].
    pub fn object(&self) -> Option<&str> {
        self.0.object.as_deref()
    }

    /// Where in the source: `items[3]`, `document 2`, `line 4 column 7`. See [`Error`].
    pub fn location(&self) -> Option<&str> {
        self.0.position.as_deref()
    }

    /// The field as a dotted path inside the object (`status.allocatable.cpu`,
    /// `spec.template.metadata.annotations.kueue.x-k8s.io/podset-slice-size`). See
    /// [`Error`].
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// The offending value as written, when there is one. See [`Error`].
    pub fn value(&self) -> Option<&str> {
        self.0.value.as_deref()
    }

    /// Why the value was rejected. See [`Error`].
    pub fn reason(&self) -> &str {
        &self.0.reason
    }

    /// The gang-core error behind an [`ErrorKind::Core`] error. See [`Error`].
    pub fn core(&self) -> Option<&gang_core::Error> {
        self.0.core.as_ref()
    }
}

/// `source: object: field: "value": reason (at position)`, leaving out what is unknown;
/// without an object the position takes its place.
fn render(e: &Inner) -> String {
    let mut f = String::new();
    let _ = write_inner(e, &mut f);
    f
}

fn write_inner(e: &Inner, f: &mut String) -> fmt::Result {
    use std::fmt::Write;
    {
        write!(f, "{}", e.source_name)?;
        match (&e.object, &e.position) {
            (Some(o), _) => write!(f, ": {}", cut_words(o))?,
            (None, Some(p)) => write!(f, ": {p}")?,
            (None, None) => {}
        }
        if let Some(field) = &e.field {
            write!(f, ": {}", cut_words(field))?;
        }
        if let Some(value) = &e.value {
            // A long value (a 1 MB label) is cut in the message; `Error::value` keeps
            // it whole.
            const SHOWN: usize = 80;
            if value.chars().count() > SHOWN {
                let head: String = value.chars().take(SHOWN).collect();
                write!(f, ": {head:?}… ({} bytes)", value.len())?;
            } else {
                write!(f, ": {value:?}")?;
            }
        }
        write!(f, ": {}", cut_words(&e.reason))?;
        if let (Some(_), Some(p)) = (&e.object, &e.position) {
            write!(f, " (at {p})")?;
        }
        Ok(())
    }
}
