//! Text across the boundary: borrowed views out ([`gang_str`], [`Text`]) and the checks
//! on strings coming in (`arg_*`). Below every handle: it depends on `failure` only.
//! (The owned `gang_string` handle is in `string.rs`.)

use std::ffi::{c_char, CStr};

use crate::failure::Failure;

/// A view of UTF-8 text owned by the library: `len` bytes at `data`.
///
/// `data` is never NULL (an empty string points at a static empty string). The bytes
/// are borrowed from the handle that produced the view and stay valid until that handle
/// is freed; do not free `data`. The view is NUL-terminated (`data[len] == '\0'`) only
/// where the producing function says so; otherwise use the length (`printf("%.*s",
/// (int)s.len, s.data)`, Go's `C.GoStringN`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gang_str {
    /// First byte; never NULL.
    pub data: *const c_char,
    /// Number of bytes, not counting any terminating NUL.
    pub len: usize,
}

impl gang_str {
    /// A view of `s` (which must outlive every use of the view).
    pub(crate) fn of(s: &str) -> gang_str {
        if s.is_empty() {
            return gang_str {
                data: c"".as_ptr(),
                len: 0,
            };
        }
        gang_str {
            data: s.as_ptr().cast(),
            len: s.len(),
        }
    }
}

/// Text kept with a trailing NUL, so that its view is NUL-terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text(String);

impl Text {
    pub(crate) fn new(s: impl Into<String>) -> Text {
        let mut s = s.into();
        s.push('\0');
        Text(s)
    }

    /// A NUL-terminated view.
    pub(crate) fn view(&self) -> gang_str {
        gang_str {
            data: self.0.as_ptr().cast(),
            len: self.0.len() - 1,
        }
    }
}

/// A NUL-terminated UTF-8 argument.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &'static str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(name));
    }
    CStr::from_ptr(p)
        .to_str()
        .map_err(|e| Failure::utf8(name, e.valid_up_to()))
}

/// A NUL-terminated UTF-8 argument that may be NULL.
pub(crate) unsafe fn arg_opt_str<'a>(
    p: *const c_char,
    name: &'static str,
) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        Ok(None)
    } else {
        arg_str(p, name).map(Some)
    }
}

/// A document given as pointer and length (`data` may be NULL only when `len` is 0).
pub(crate) unsafe fn arg_doc<'a>(
    data: *const c_char,
    len: usize,
    name: &'static str,
) -> Result<&'a str, Failure> {
    if len == 0 {
        return Ok("");
    }
    if data.is_null() {
        return Err(Failure::null(name));
    }
    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
    std::str::from_utf8(bytes).map_err(|e| Failure::utf8(name, e.valid_up_to()))
}

/// An array of `n` NUL-terminated UTF-8 strings (`p` may be NULL only when `n` is 0).
pub(crate) unsafe fn arg_strs(
    p: *const *const c_char,
    n: usize,
    name: &'static str,
) -> Result<Vec<String>, Failure> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Failure::null(name));
    }
    std::slice::from_raw_parts(p, n)
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            arg_str(s, name)
                .map(str::to_owned)
                .map_err(|f| f.at_index(i))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::gang_result;

    #[test]
    fn views() {
        let t = Text::new("abc");
        let v = t.view();
        assert_eq!(v.len, 3);
        assert_eq!(unsafe { *v.data.add(3) }, 0);
        let e = gang_str::of("");
        assert!(!e.data.is_null());
        assert_eq!(e.len, 0);
    }

    #[test]
    fn string_arguments() {
        unsafe {
            assert_eq!(arg_str(c"x".as_ptr(), "a").unwrap(), "x");
            let f = arg_str(std::ptr::null(), "a").unwrap_err();
            assert_eq!(f.code, gang_result::GANG_NULL_ARGUMENT);
            let bad = [0xffu8 as c_char, 0];
            let f = arg_str(bad.as_ptr(), "a").unwrap_err();
            assert_eq!(f.code, gang_result::GANG_INVALID_UTF8);
            assert_eq!(arg_doc(std::ptr::null(), 0, "d").unwrap(), "");
            assert!(arg_doc(std::ptr::null(), 1, "d").is_err());
            assert!(arg_strs(std::ptr::null(), 0, "l").unwrap().is_empty());
            let one = [c"a".as_ptr(), std::ptr::null()];
            let f = arg_strs(one.as_ptr(), 2, "levels").unwrap_err();
            assert_eq!(f.field, "levels[1]");
        }
    }
}
