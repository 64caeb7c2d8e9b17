//! Macros for the ABI's repetitive bodies: accessors (`_len`, `_at` and the other
//! getters writing out-parameters) and the text / milli-unit setter pairs.
//!
//! They make function *bodies* only. Each `#[no_mangle] extern "C"` function keeps its
//! signature and documentation written out, because cbindgen reads the source without
//! expanding macros: a function made by a macro would be missing from the header.
//!
//! Every macro keeps the ABI's order of work: the handle first, then every
//! out-parameter checked, then anything that can fail (an index, a string argument),
//! and only then the writes, so that a failed call writes nothing.

use crate::failure::Failure;

/// The element `index` of `items`, or `GANG_OUT_OF_RANGE` naming the argument `name`.
pub(crate) fn item<'a, T>(
    items: &'a [T],
    index: usize,
    name: &'static str,
) -> Result<&'a T, Failure> {
    items
        .get(index)
        .ok_or_else(|| Failure::out_of_range(name, index, items.len()))
}

/// The body of a getter: borrows the handle argument `$handle` as `$h`, checks each
/// out-parameter, computes every value, then writes them. Each out-parameter's name is
/// the argument's (it names the field of a `GANG_NULL_ARGUMENT`).
///
/// `ffi_read!(change => |c| { len_out => c.lost.len() })`
macro_rules! ffi_read {
    ($handle:ident => |$h:ident| { $($out:ident => $value:expr),+ $(,)? }) => {
        ffi_boundary!({
            let $h = $crate::handle::Handle::get($handle, stringify!($handle))?;
            $( let $out = $crate::handle::Out::new($out, stringify!($out))?; )+
            $( let $out = ($out, $value); )+
            $( $out.0.write($out.1); )+
            Ok(())
        })
    };
}

/// The body of an `_at` accessor: as [`ffi_read!`], with `$it` the element `$index` of
/// the slice `$items` (`GANG_OUT_OF_RANGE` naming the index argument when it is not
/// below the length).
///
/// `ffi_at!(change, index, |c| &c.lost, |l| { role_out => gang_str::of(&l.role) })`
macro_rules! ffi_at {
    ($handle:ident, $index:ident, |$h:ident| $items:expr, |$it:ident| {
        $($out:ident => $value:expr),+ $(,)?
    }) => {
        ffi_boundary!({
            let $h = $crate::handle::Handle::get($handle, stringify!($handle))?;
            $( let $out = $crate::handle::Out::new($out, stringify!($out))?; )+
            let $it = $crate::accessor::item($items, $index, stringify!($index))?;
            $( let $out = ($out, $value); )+
            $( $out.0.write($out.1); )+
            Ok(())
        })
    };
}

/// The amount argument of a text / milli-unit setter pair, as a
/// `Result<QuantitySpec, Failure>`: `amount_arg!(text quantity)` is a Kubernetes quantity
/// (`const char *`, checked as UTF-8, parsed later by the core so that its error names
/// the field); `amount_arg!(millis millis)` is a `uint64_t` of milli-units.
macro_rules! amount_arg {
    (text $quantity:ident) => {
        $crate::text::arg_str($quantity, stringify!($quantity))
            .map(|q| ::gang_core::request::QuantitySpec::Text(q.to_owned()))
    };
    (millis $millis:ident) => {
        ::std::result::Result::<_, $crate::failure::Failure>::Ok(
            ::gang_core::request::QuantitySpec::Exact(::gang_core::Quantity::from_millis($millis)),
        )
    };
}

/// The body of a builder's amount setter: calls the in-place setter `$set` of the
/// handle `$handle` with `$key` and the amount argument (see [`amount_arg!`]).
///
/// `set_amount!(node.set_capacity(resource) = text quantity)`,
/// `set_amount!(node.set_capacity(resource) = millis millis)`
macro_rules! set_amount {
    ($handle:ident . $set:ident ($key:ident) = $form:ident $arg:ident) => {
        ffi_boundary!({
            let h = $crate::handle::Handle::get_mut($handle, stringify!($handle))?;
            let key = $crate::text::arg_str($key, stringify!($key))?;
            let amount = amount_arg!($form $arg)?;
            h.$set(key, amount);
            Ok(())
        })
    };
}
