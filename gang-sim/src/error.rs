//! Invalid input to the simulator: a typed error naming where the problem is.

/// What went wrong before (or, for [`SimError::Internal`], while) simulating.
///
/// Every variant names its place: a trace error its line (1-based, the header of a CSV
/// file is line 1) and field (or column); a configuration or cluster error the dotted
/// path of the field. A job that is valid but can never fit the cluster is not an error:
/// it ends in the final state `never_fits`, carrying gang-core's diagnosis.
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
    #[error("trace line {line}, field {field}: {message}")]
    Trace {
        /// 1-based line number (CSV: the header is line 1).
        line: usize,
        /// Field or column name (a dotted path inside JSON values).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The simulation configuration is invalid.
    #[error("invalid config at {field}: {message}")]
    Config {
        /// Dotted path of the field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The cluster description is invalid (as gang-core reports it).
    #[error("invalid cluster at {field}: {message}")]
    Cluster {
        /// Dotted path of the field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
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
        }
    }

    pub(crate) fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Config {
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn io(path: impl Into<String>, e: impl std::fmt::Display) -> Self {
        SimError::Io {
            path: path.into(),
            message: e.to_string(),
        }
    }

    /// The error as JSON: `{"kind", "field", "line"?, "message"}`.
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
        m.insert("message".into(), self.to_string().into());
        serde_json::Value::Object(m).to_string()
    }
}
