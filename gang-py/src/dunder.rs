//! Macros for the Python dunder blocks every value class shares.
//!
//! `value_class!(PyX, "X", { ...methods... })` writes one `#[pymethods]` block with
//! the class's own methods plus:
//! - `__eq__` by content (the core type's `PartialEq`; `NotImplemented` for other types)
//!   and `__hash__` by content ([`crate::pyser::hash_of`]: what the core type
//!   serialises, never text);
//! - `to_dict()`: the core value as plain Python data ([`crate::pyser::to_py`]);
//! - `__reduce__`: rebuilt from that dict by the class's `from_dict` (or, with
//!   `_from_dict`, a private one), so pickle, `copy` and `deepcopy` work;
//! - `__repr__` from the type's [`Repr`] impl.
//!
//! The wrapped value is field `.0`.

/// How a value class writes its repr (one style for every class: `Name(field=value…)`).
pub trait Repr {
    fn repr(&self) -> String;
}

macro_rules! value_class {
    ($t:ident, $ctor:literal, { $($items:tt)* }) => {
        #[pymethods]
        impl $t {
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
                let py = other.py();
                match other.cast::<Self>() {
                    Ok(o) => pyo3::types::PyBool::new(py, o.get().0 == self.0).to_owned().into_any().unbind(),
                    Err(_) => py.NotImplemented(),
                }
            }
            fn __hash__(&self) -> isize {
                crate::pyser::hash_of(&self.0)
            }
            /// The value as a dict in the scenario format (what `from_dict` reads).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                crate::pyser::to_py(py, &self.0)
            }
            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
                let ctor = slf.get_type().getattr($ctor)?;
                Ok((ctor, (crate::pyser::to_py(slf.py(), &slf.get().0)?,)))
            }
            fn __repr__(&self) -> String {
                crate::dunder::Repr::repr(self)
            }
            $($items)*
        }
    };
}

pub(crate) use value_class;
