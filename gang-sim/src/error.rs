//! Invalid input to the simulator: a typed error naming where the problem is.

use gang_core::{cut_words, ErrorKind};

/// What went wrong before (or, for [`SimError::Internal`], while) simulating.
///
/// Every variant names its place: a trace error its line (1-based, the header of a CSV
/// file is line 1) and field (or column); a configuration or cluster error the dotted
/// path of the field. A job that is valid but can never fit the cluster is not an error:
/// it ends in the final state `never_fits`, carrying gang-core's diagnosis.
///
/// When gang-core rejected the input (a quantity it cannot read, a role or a cluster it
/// finds invalid), the error carries gang-core's [`ErrorKind`] ([`SimError::core_kind`]),
/// so a face maps it to the same class, code or error value as a gang-core error,
/// without reading the message.
///
/// ```
/// use gang_sim::{SimError, Trace};
/// let err = Trace::from_jsonl(r#"{"id": "a", "submit": 0, "duration": -5, "members": 1}"#)
///     .unwrap_err();
/// assert_eq!(err.kind(), "invalid_trace");
/// match &err {
///     SimError::Trace { line, field, .. } => assert_eq!((*line, field.as_str()), (1, "duration")),
///     other => panic!("{other}"),
/// }
/// assert!(err.to_string().starts_with("trace line 1, field duration:"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A trace line (or CSV column) that does not parse or does not make sense.
    #[error("trace line {line}, field {}: {}", cut_words(.field), cut_words(.message))]
    Trace {
        /// 1-based line number (CSV: the header is line 1).
        line: usize,
        /// Field or column name (a dotted path inside JSON values).
        field: String,
        /// What is wrong.
        message: String,
        /// gang-core's kind of error, when gang-core rejected the job.
        core: Option<ErrorKind>,
    },
    /// The simulation configuration is invalid.
    #[error("invalid config at {}: {}", cut_words(.field), cut_words(.message))]
    Config {
        /// Dotted path of the field.
        field: String,
        /// What is wrong.
        message: String,
        /// gang-core's kind of error, when gang-core rejected the configuration (a
        /// policy's level or shape).
        core: Option<ErrorKind>,
    },
    /// The cluster description is invalid (as gang-core reports it).
    #[error("invalid cluster at {}: {}", cut_words(.field), cut_words(.message))]
    Cluster {
        /// Dotted path of the field.
        field: String,
        /// What is wrong.
        message: String,
        /// gang-core's kind of error (`None` when the document did not parse before
        /// gang-core saw it).
        core: Option<ErrorKind>,
    },
    /// A file could not be read or written.
    #[error("{path}: {}", cut_words(.message))]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A bug: an invariant of the simulation or of gang-core was violated. Never expected;
    /// please report it with the inputs.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SimError {
    /// A stable name for the kind of error: `invalid_trace`, `invalid_config`,
    /// `invalid_cluster`, `io` or `internal`. See [`SimError`].
    pub fn kind(&self) -> &'static str {
        match self {
            SimError::Trace { .. } => "invalid_trace",
            SimError::Config { .. } => "invalid_config",
            SimError::Cluster { .. } => "invalid_cluster",
            SimError::Io { .. } => "io",
            SimError::Internal(_) => "internal",
        }
    }

    /// gang-core's kind of the error behind this one, when gang-core rejected the input
    /// (`InvalidQuantity`, `InvalidInventory`, `InvalidRequest`, `Contradictory`,
    /// `InvalidScenario`); `None` for what the simulator itself checks.
    ///
    /// ```
    /// use gang_core::ErrorKind;
    /// let err = gang_sim::Trace::from_jsonl(
    ///     r#"{"id": "a", "submit": 0, "duration": 5, "members": 2, "min_members": 3}"#)
    ///     .and_then(|t| {
    ///         let c = gang_sim::Cluster::from_json(r#"{"topology": {"levels": []}, "nodes": []}"#)?;
    ///         gang_sim::Simulation::new(c, t, gang_sim::SimConfig::default()).map(|_| ())
    ///     })
    ///     .unwrap_err();
    /// assert_eq!((err.kind(), err.core_kind()), ("invalid_trace", Some(ErrorKind::InvalidRequest)));
    /// ```
    pub fn core_kind(&self) -> Option<ErrorKind> {
        match self {
            SimError::Trace { core, .. }
            | SimError::Config { core, .. }
            | SimError::Cluster { core, .. } => *core,
            SimError::Io { .. } | SimError::Internal(_) => None,
        }
    }

    /// The same error, carrying gang-core's kind `kind` (see [`SimError::core_kind`]).
    pub(crate) fn with_core(mut self, kind: ErrorKind) -> Self {
        match &mut self {
            SimError::Trace { core, .. }
            | SimError::Config { core, .. }
            | SimError::Cluster { core, .. } => *core = Some(kind),
            SimError::Io { .. } | SimError::Internal(_) => {}
        }
        self
    }

    /// A cluster error gang-core reported.
    pub(crate) fn cluster(e: &gang_core::Error) -> Self {
        SimError::Cluster {
            field: e.field().to_owned(),
            message: without_position(&e.to_string()),
            core: Some(e.kind()),
        }
    }

    /// The field (or column) the error names; empty for I/O and internal errors. See
    /// [`SimError`].
    pub fn field(&self) -> &str {
        match self {
            SimError::Trace { field, .. }
            | SimError::Config { field, .. }
            | SimError::Cluster { field, .. } => field,
            SimError::Io { .. } | SimError::Internal(_) => "",
        }
    }

    pub(crate) fn trace(line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Trace {
            line,
            field: field.into(),
            message: message.into(),
            core: None,
        }
    }

    pub(crate) fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Config {
            field: field.into(),
            message: message.into(),
            core: None,
        }
    }

    pub(crate) fn io(path: impl Into<String>, e: impl std::fmt::Display) -> Self {
        SimError::Io {
            path: path.into(),
            message: e.to_string(),
        }
    }

    /// The error as JSON: `{"kind", "field", "line"?, "core_kind"?, "message"}`
    /// (`core_kind`: gang-core's `ErrorKind::as_str`, when gang-core rejected the input).
    ///
    /// ```
    /// let err = gang_sim::run_json("{").unwrap_err();
    /// let v: serde_json::Value = serde_json::from_str(&err.to_json()).unwrap();
    /// assert_eq!(v["kind"], "invalid_config");
    /// ```
    pub fn to_json(&self) -> String {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), self.kind().into());
        m.insert("field".into(), self.field().into());
        if let SimError::Trace { line, .. } = self {
            m.insert("line".into(), (*line).into());
        }
        if let Some(k) = self.core_kind() {
            m.insert("core_kind".into(), k.as_str().into());
        }
        m.insert("message".into(), self.to_string().into());
        serde_json::Value::Object(m).to_string()
    }
}

/// A message of serde_json's without the ` at line 1 column 9` it adds when reading
/// text: the line of a trace is named apart, the field of a document by its path, and
/// the position is in a document the user may never have seen (the one `gang.sim` or
/// an experiment builds), so it would mislead.
pub(crate) fn without_position(m: &str) -> String {
    let cut = m.rfind(" at line ").filter(|&i| {
        let rest = &m[i + " at line ".len()..];
        rest.split_once(" column ").is_some_and(|(l, c)| {
            !l.is_empty()
                && !c.is_empty()
                && l.bytes().all(|b| b.is_ascii_digit())
                && c.bytes().all(|b| b.is_ascii_digit())
        })
    });
    match cut {
        Some(i) => m[..i].to_owned(),
        None => m.to_owned(),
    }
}
