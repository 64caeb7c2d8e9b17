//! What a command produced: the document to print, its text form and the exit code.

use serde::Serialize;

use crate::cli::Format;
use crate::error::{CliError, Exit};
use crate::render;

/// What a command produced: a document to print and the exit code.
pub(crate) struct Done {
    pub(crate) text: String,
    pub(crate) doc: String,
    pub(crate) exit: Exit,
    /// Printed on stderr after the document (explain of a workload that is invalid).
    pub(crate) error: Option<CliError>,
    /// Printed on stderr after the document, each as `gang: warning: …` (a simulated
    /// run's summary warnings).
    pub(crate) warnings: Vec<String>,
}

pub(crate) fn done<T: Serialize>(value: &T, text: String, format: Format, exit: Exit) -> Done {
    Done {
        doc: if format == Format::Text {
            String::new()
        } else {
            render::document(value, format)
        },
        text,
        exit,
        error: None,
        warnings: Vec::new(),
    }
}
