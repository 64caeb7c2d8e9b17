//! Opaque handles and out-parameters.
//!
//! A handle is a `Box<Inner>` whose pointer is handed to C as a pointer to an opaque,
//! zero-sized struct (`gang_inventory` and so on), so that C sees an incomplete type.

use crate::failure::Failure;

/// An opaque C type standing for a boxed `Inner`.
///
/// # Safety
/// Implementors must be zero-sized, never constructed in Rust, and only ever used
/// behind pointers made by [`Handle::into_raw`] for the same `Inner`.
pub(crate) unsafe trait Handle: Sized {
    type Inner;

    /// Boxes `inner` and hands out the pointer (ownership passes to the caller).
    fn into_raw(inner: Self::Inner) -> *mut Self {
        Box::into_raw(Box::new(inner)).cast()
    }

    /// Borrows the value behind a handle argument.
    ///
    /// # Safety
    /// `p` must be NULL or a live handle of this type, not mutated for `'a`.
    unsafe fn get<'a>(p: *const Self, name: &'static str) -> Result<&'a Self::Inner, Failure> {
        p.cast::<Self::Inner>()
            .as_ref()
            .ok_or_else(|| Failure::null(name))
    }

    /// Borrows the value behind a handle argument mutably.
    ///
    /// # Safety
    /// `p` must be NULL or a live handle of this type, not otherwise used for `'a`.
    unsafe fn get_mut<'a>(
        p: *mut Self,
        name: &'static str,
    ) -> Result<&'a mut Self::Inner, Failure> {
        p.cast::<Self::Inner>()
            .as_mut()
            .ok_or_else(|| Failure::null(name))
    }

    /// Drops the value behind a handle; NULL is a no-op.
    ///
    /// # Safety
    /// `p` must be NULL or a live handle of this type, never used again.
    unsafe fn free(p: *mut Self) {
        if !p.is_null() {
            // A destructor that panics must not unwind into C.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                drop(Box::from_raw(p.cast::<Self::Inner>()));
            }));
        }
    }
}

/// A checked, non-NULL out-parameter. Check every out-parameter before doing any work,
/// and write them all only once nothing can fail any more.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// # Safety
    /// `p` must be NULL or valid for writing a `T`.
    pub(crate) unsafe fn new(p: *mut T, name: &'static str) -> Result<Out<T>, Failure> {
        if p.is_null() {
            Err(Failure::null(name))
        } else {
            Ok(Out(p))
        }
    }

    /// Writes the value (without reading or dropping what was there).
    pub(crate) fn write(self, v: T) {
        // SAFETY: checked non-NULL in `new`, and the caller vouched it is writable.
        unsafe { self.0.write(v) }
    }
}
