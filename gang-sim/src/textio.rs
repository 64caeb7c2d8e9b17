//! Reading text with a bound: at most a given number of bytes, checked as UTF-8 while
//! it streams in (so `/dev/zero` or `/dev/urandom` stop at the first problem, not at
//! the end of memory).

use std::io::Read;

/// Why a text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The operating system's message.
    Io(String),
    /// More than the limit of bytes.
    TooLarge {
        /// The limit, bytes.
        limit: u64,
    },
    /// Not UTF-8 at this byte offset.
    NotUtf8 {
        /// Offset of the first bad byte.
        offset: u64,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(m) => f.write_str(m),
            ReadError::TooLarge { limit } => {
                write!(f, "larger than the limit of {limit} bytes")
            }
            ReadError::NotUtf8 { offset } => {
                write!(f, "not UTF-8 text (a bad byte at offset {offset})")
            }
        }
    }
}

/// Reads `r` to its end as UTF-8 text of at most `max_bytes` bytes; stops at the first
/// byte over the limit or the first byte that cannot be UTF-8.
///
/// ```
/// use gang_sim::textio::{read_text, ReadError};
/// assert_eq!(read_text(&mut "héllo".as_bytes(), 100).unwrap(), "héllo");
/// assert_eq!(read_text(&mut std::io::repeat(0), 1000), Err(ReadError::TooLarge { limit: 1000 }));
/// assert_eq!(read_text(&mut &b"ok\xff"[..], 100), Err(ReadError::NotUtf8 { offset: 2 }));
/// assert!(matches!(read_text(&mut &b"\xc3"[..], 100), Err(ReadError::NotUtf8 { offset: 0 })));
/// ```
///
/// # Errors
/// [`ReadError`]: the read failed, the text is too large, or it is not UTF-8.
pub fn read_text(r: &mut dyn Read, max_bytes: u64) -> Result<String, ReadError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut checked = 0usize;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::Io(e.to_string())),
        };
        if buf.len() as u64 + n as u64 > max_bytes {
            return Err(ReadError::TooLarge { limit: max_bytes });
        }
        buf.extend_from_slice(&chunk[..n]);
        match std::str::from_utf8(&buf[checked..]) {
            Ok(_) => checked = buf.len(),
            Err(e) if e.error_len().is_some() => {
                return Err(ReadError::NotUtf8 {
                    offset: (checked + e.valid_up_to()) as u64,
                })
            }
            // An incomplete sequence at the end: the next read may finish it.
            Err(e) => checked += e.valid_up_to(),
        }
    }
    String::from_utf8(buf).map_err(|e| ReadError::NotUtf8 {
        offset: e.utf8_error().valid_up_to() as u64,
    })
}

/// Reads the file at `path` with [`read_text`].
///
/// # Errors
/// As [`read_text`] (a file that cannot be opened is [`ReadError::Io`]).
pub fn read_file(path: &str, max_bytes: u64) -> Result<String, ReadError> {
    let mut f = std::fs::File::open(path).map_err(|e| ReadError::Io(e.to_string()))?;
    read_text(&mut f, max_bytes)
}

/// [`read_file`] as a [`crate::error::SimError::Io`] naming the path (and, when the file is
/// too large, the setting that raises the limit).
pub(crate) fn read_sim_file(path: &str, max_bytes: u64) -> Result<String, crate::error::SimError> {
    read_file(path, max_bytes).map_err(|e| match e {
        ReadError::TooLarge { .. } => crate::error::SimError::io(
            path,
            format!("{e} (limits.max_input_bytes; raise it to read a larger file)"),
        ),
        e => crate::error::SimError::io(path, e),
    })
}
