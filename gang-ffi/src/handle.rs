//! Opaque handles and out-parameters.
//!
//! A handle is a boxed [`Tagged`] value — a type tag, then the `Inner` value — whose
//! pointer is handed to C as a pointer to an opaque, zero-sized struct (`gang_inventory`
//! and so on), so that C sees an incomplete type.
//!
//! # Defence in depth
//!
//! Misusing a handle is the caller's bug (the header says so), but the cheap cases are
//! detected rather than left to corrupt memory. The first 8 bytes of every handle's
//! allocation are a tag naming its type. Every call reads the tag through a raw pointer
//! — before any Rust reference to the value exists — and a handle of another type, or
//! one already freed, is `GANG_INVALID_HANDLE` instead of being read or written as the
//! wrong thing. `_free` overwrites the tag with a poisoned one (the same type, marked
//! freed) before it gives the memory back, so a second `_free`, or a call with the
//! freed pointer, finds no live tag and does nothing.
//!
//! That is best-effort. It works while the allocator still holds the freed block: it
//! keeps either the poisoned tag or its own bookkeeping there (glibc's malloc and
//! AddressSanitizer both overwrite a freed block's first bytes), and neither is a live
//! tag — a live tag is not a user-space address, so a free-list pointer written over it
//! never looks live. Once the block is handed out again — to a new handle of the same type, say —
//! a stale pointer is indistinguishable from a live handle. A pointer to memory that is
//! not readable at all still crashes. Reading a freed block is itself undefined
//! behaviour in the abstract machine; in practice it is one 8-byte load from memory the
//! allocator keeps mapped (handle allocations are small: the values' own buffers live
//! elsewhere), done only on a path that is already the caller's bug.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::failure::Failure;

/// The handle types, as the low byte of the tag their allocations carry. Values are
/// never reused (they only ever reach a message, but a stable tag is easier to spot in
/// a debugger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Error = 1,
    String = 2,
    Node = 3,
    InventoryBuilder = 4,
    Inventory = 5,
    Role = 6,
    Gang = 7,
    Compiled = 8,
    Solver = 9,
    Placement = 10,
    Diagnosis = 11,
    Scenario = 12,
    Reservation = 13,
    Change = 14,
    Replacement = 15,
    SpreadOutcome = 16,
    Admissions = 17,
    PreemptOptions = 18,
}

/// Every kind, for decoding a tag.
const KINDS: [Kind; 18] = [
    Kind::Error,
    Kind::String,
    Kind::Node,
    Kind::InventoryBuilder,
    Kind::Inventory,
    Kind::Role,
    Kind::Gang,
    Kind::Compiled,
    Kind::Solver,
    Kind::Placement,
    Kind::Diagnosis,
    Kind::Scenario,
    Kind::Reservation,
    Kind::Change,
    Kind::Replacement,
    Kind::SpreadOutcome,
    Kind::Admissions,
    Kind::PreemptOptions,
];

/// A live handle's tag: `"gangliv"` in ASCII, then the kind.
const LIVE: u64 = 0x6761_6e67_6c69_7600;
/// A freed handle's (poisoned) tag: `"gangfre"` in ASCII, then the kind.
const FREED: u64 = 0x6761_6e67_6672_6500;

impl Kind {
    /// The C type's name.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Kind::Error => "gang_error",
            Kind::String => "gang_string",
            Kind::Node => "gang_node",
            Kind::InventoryBuilder => "gang_inventory_builder",
            Kind::Inventory => "gang_inventory",
            Kind::Role => "gang_role",
            Kind::Gang => "gang_gang",
            Kind::Compiled => "gang_compiled",
            Kind::Solver => "gang_solver",
            Kind::Placement => "gang_placement",
            Kind::Diagnosis => "gang_diagnosis",
            Kind::Scenario => "gang_scenario",
            Kind::Reservation => "gang_reservation",
            Kind::Change => "gang_change",
            Kind::Replacement => "gang_replacement",
            Kind::SpreadOutcome => "gang_spread_outcome",
            Kind::Admissions => "gang_admissions",
            Kind::PreemptOptions => "gang_preempt_options",
        }
    }

    const fn live(self) -> u64 {
        LIVE | self as u64
    }

    const fn freed(self) -> u64 {
        FREED | self as u64
    }
}

/// A handle's allocation: the tag first (at the address C holds), then the value.
#[repr(C)]
pub(crate) struct Tagged<T> {
    tag: u64,
    value: T,
}

/// Why a pointer is not a live handle of the expected type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadHandle {
    Null,
    /// Not aligned as a handle is: never made by this library.
    Misaligned,
    /// A live handle of another type.
    Other(Kind),
    /// A handle of this kind that was freed (its poisoned tag is still there).
    Freed(Kind),
    /// No tag at all: freed (the allocator reused its first bytes), or never a handle.
    Unknown,
}

impl BadHandle {
    fn of_tag(tag: u64) -> BadHandle {
        let kind = KINDS.iter().copied().find(|k| *k as u64 == tag & 0xff);
        match (tag & !0xff, kind) {
            (LIVE, Some(k)) => BadHandle::Other(k),
            (FREED, Some(k)) => BadHandle::Freed(k),
            _ => BadHandle::Unknown,
        }
    }

    /// The failure of argument `name`, which should have been a live `expected`.
    fn failure(self, name: &'static str, expected: Kind) -> Failure {
        let found = match self {
            BadHandle::Null => return Failure::null(name),
            BadHandle::Misaligned => "a misaligned pointer, not a handle".to_owned(),
            BadHandle::Other(k) => format!("it is a {}", k.name()),
            BadHandle::Freed(k) if k == expected => "it was freed".to_owned(),
            BadHandle::Freed(k) => format!("it is a freed {}", k.name()),
            BadHandle::Unknown => "freed, or not a handle made by this library".to_owned(),
        };
        Failure::invalid_handle(name, expected.name(), &found)
    }
}

/// An opaque C type standing for a boxed, tagged `Inner`.
///
/// # Safety
/// Implementors must be zero-sized, never constructed in Rust, and only ever used
/// behind pointers made by [`Handle::into_raw`] for the same `Inner`; no two
/// implementors may share a [`Kind`].
pub(crate) unsafe trait Handle: Sized {
    type Inner;
    /// The tag of this type's allocations.
    const KIND: Kind;

    /// Boxes `inner` behind a live tag and hands out the pointer (ownership passes to
    /// the caller).
    fn into_raw(inner: Self::Inner) -> *mut Self {
        let tagged = Tagged {
            tag: Self::KIND.live(),
            value: inner,
        };
        Box::into_raw(Box::new(tagged)).cast()
    }

    /// The allocation behind `p` if its tag says it is a live handle of this type. No
    /// reference is made: only the tag is read, through a raw pointer.
    ///
    /// # Safety
    /// `p` must be NULL or point at 8 readable bytes (any handle of this library, live,
    /// or freed while the allocator still holds the block).
    unsafe fn check(p: *const Self) -> Result<*mut Tagged<Self::Inner>, BadHandle> {
        if p.is_null() {
            return Err(BadHandle::Null);
        }
        let tag_ptr = p.cast::<u64>();
        if !tag_ptr.is_aligned() {
            return Err(BadHandle::Misaligned);
        }
        // Volatile: the load is the point, whatever the optimiser knows about the block.
        let tag = ptr::read_volatile(tag_ptr);
        if tag == Self::KIND.live() {
            Ok(p.cast_mut().cast())
        } else {
            Err(BadHandle::of_tag(tag))
        }
    }

    /// Borrows the value behind a handle argument: `GANG_NULL_ARGUMENT` for NULL,
    /// `GANG_INVALID_HANDLE` for anything but a live handle of this type.
    ///
    /// # Safety
    /// As [`Handle::check`]; a live handle must not be mutated for `'a`.
    unsafe fn get<'a>(p: *const Self, name: &'static str) -> Result<&'a Self::Inner, Failure> {
        let t = Self::check(p).map_err(|bad| bad.failure(name, Self::KIND))?;
        Ok(&(*t).value)
    }

    /// Borrows the value behind a handle argument mutably (errors as [`Handle::get`]).
    ///
    /// # Safety
    /// As [`Handle::check`]; a live handle must not be otherwise used for `'a`.
    unsafe fn get_mut<'a>(
        p: *mut Self,
        name: &'static str,
    ) -> Result<&'a mut Self::Inner, Failure> {
        let t = Self::check(p.cast_const()).map_err(|bad| bad.failure(name, Self::KIND))?;
        Ok(&mut (*t).value)
    }

    /// Drops the value behind a handle after poisoning its tag. NULL, and anything
    /// that is not a live handle of this type (freed already, another type), is left
    /// alone: a double free does nothing.
    ///
    /// # Safety
    /// As [`Handle::check`]; a live handle must not be used again.
    unsafe fn free(p: *mut Self) {
        let Ok(t) = Self::check(p.cast_const()) else {
            return;
        };
        // Volatile: a store just before the memory is freed is otherwise a dead store.
        ptr::write_volatile(ptr::addr_of_mut!((*t).tag), Self::KIND.freed());
        // A destructor that panics must not unwind into C.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(t))));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::gang_result;

    struct A {
        _private: [u8; 0],
    }
    unsafe impl Handle for A {
        type Inner = String;
        const KIND: Kind = Kind::Role;
    }
    struct B {
        _private: [u8; 0],
    }
    unsafe impl Handle for B {
        type Inner = u8;
        const KIND: Kind = Kind::Gang;
    }

    #[test]
    fn tags_decode_and_are_distinct() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(*k as usize, i + 1);
            assert_eq!(BadHandle::of_tag(k.live()), BadHandle::Other(*k));
            assert_eq!(BadHandle::of_tag(k.freed()), BadHandle::Freed(*k));
            assert!(k.name().starts_with("gang_"));
        }
        assert_eq!(BadHandle::of_tag(0), BadHandle::Unknown);
        assert_eq!(BadHandle::of_tag(LIVE), BadHandle::Unknown);
        assert_eq!(BadHandle::of_tag(LIVE | 200), BadHandle::Unknown);
    }

    #[test]
    fn the_wrong_type_is_refused_before_it_is_read() {
        unsafe {
            let a = A::into_raw("abc".to_owned());
            let as_b = a.cast::<B>();
            let f = B::get(as_b, "gang").unwrap_err();
            assert_eq!(f.code, gang_result::GANG_INVALID_HANDLE);
            assert_eq!(f.field, "gang");
            assert!(f
                .message
                .contains("not a live gang_gang: it is a gang_role"));
            B::free(as_b); // not a B: left alone
            assert_eq!(A::get(a, "role").unwrap(), "abc");
            let zeros = [0u64; 2];
            let f = A::get(zeros.as_ptr().cast(), "role").unwrap_err();
            assert!(
                f.message.contains("not a handle made by this library"),
                "{}",
                f.message
            );
            let f = A::get(zeros.as_ptr().cast::<u8>().add(1).cast(), "role").unwrap_err();
            assert!(f.message.contains("misaligned"), "{}", f.message);
            assert_eq!(
                A::get(std::ptr::null(), "role").unwrap_err().code,
                gang_result::GANG_NULL_ARGUMENT
            );
            A::free(a);
        }
    }

    /// A value whose destructor reads the tag of the allocation it sits in (still
    /// allocated while it runs).
    struct Spy;
    static TAG_AT_DROP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    impl Drop for Spy {
        fn drop(&mut self) {
            let offset = std::mem::offset_of!(Tagged<Spy>, value);
            // SAFETY: `self` is the `value` field of a live `Tagged<Spy>`.
            let tag = unsafe {
                ptr::read_volatile((self as *const Spy).cast::<u8>().sub(offset).cast::<u64>())
            };
            TAG_AT_DROP.store(tag, std::sync::atomic::Ordering::SeqCst);
        }
    }
    struct C {
        _private: [u8; 0],
    }
    unsafe impl Handle for C {
        type Inner = Spy;
        const KIND: Kind = Kind::Placement;
    }

    #[test]
    fn free_poisons_the_tag_before_dropping() {
        unsafe {
            let c = C::into_raw(Spy);
            assert!(C::get(c, "placement").is_ok());
            C::free(c);
            let tag = TAG_AT_DROP.load(std::sync::atomic::Ordering::SeqCst);
            assert_eq!(tag, Kind::Placement.freed());
            assert_eq!(BadHandle::of_tag(tag), BadHandle::Freed(Kind::Placement));
            let f = BadHandle::of_tag(tag).failure("placement", Kind::Placement);
            assert!(f.message.ends_with("it was freed"), "{}", f.message);
            let f = BadHandle::of_tag(tag).failure("gang", Kind::Gang);
            assert!(
                f.message.ends_with("it is a freed gang_placement"),
                "{}",
                f.message
            );
        }
    }
}
