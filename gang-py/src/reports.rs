//! The parts of a `Diagnosis` as Python classes: thin, frozen newtypes over gang-core's
//! report types (role reports, exclusions and their causes, the best domain, role fits,
//! the relaxation, the elastic answer, slices), each with its dict form for pickling.

use gang_core::diagnosis::{
    DomainReport, ExclusionCause, Exclusions, FewerMembers, Relaxation, RoleFit, RoleReport,
    SliceReport,
};
use gang_core::ErrorKind;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::repr_str;
use crate::dunder::{value_class, Repr};

macro_rules! report {
    ($t:ident, $core:ty, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(name = $name, module = "gang", frozen)]
        #[derive(Clone)]
        pub struct $t(pub $core);
    };
}

report!(
    PyRoleReport,
    RoleReport,
    "RoleReport",
    "One role's side of a Diagnosis."
);
report!(PyExclusions, Exclusions, "Exclusions", "Nodes excluded for a role, each counted once under its first reason in this order: cordoned, selector, taint, missing_label, too_small.");
report!(
    PyDomainReport,
    DomainReport,
    "DomainReport",
    "How much of the gang one domain can take."
);
report!(
    PyRoleFit,
    RoleFit,
    "RoleFit",
    "Members of one role that fit in a domain."
);
report!(
    PyRelaxation,
    Relaxation,
    "Relaxation",
    "What relaxing the required level would give now."
);
report!(
    PyExclusionCause,
    ExclusionCause,
    "ExclusionCause",
    "Nodes excluded for a role for one reason about one thing (a taint key, a label key, a level, a resource)."
);
report!(
    PyFewerMembers,
    FewerMembers,
    "FewerMembers",
    "For an elastic gang: what the best domain takes now with each constrained role's minimum lowered to what it holds."
);
report!(
    PySliceReport,
    SliceReport,
    "SliceReport",
    "How close the best domain comes to holding whole slices of one level."
);

fn opt(s: &Option<String>) -> String {
    s.as_deref().map_or("None".to_owned(), repr_str)
}

impl Repr for PyRoleReport {
    fn repr(&self) -> String {
        let r = &self.0;
        format!(
            "RoleReport(role={}, count={}, needed={}, cluster_fit={}, fitting_nodes={}, excluded={})",
            repr_str(&r.role),
            r.count,
            r.needed,
            r.cluster_fit,
            r.fitting_nodes,
            r.excluded.total()
        )
    }
}
impl Repr for PyExclusions {
    fn repr(&self) -> String {
        let e = &self.0;
        format!(
            "Exclusions(cordoned={}, selector={}, taint={}, missing_label={}, too_small={})",
            e.cordoned, e.selector, e.taint, e.missing_label, e.too_small
        )
    }
}
impl Repr for PyDomainReport {
    fn repr(&self) -> String {
        let d = &self.0;
        format!(
            "DomainReport(level={}, domain={}, fits={}, short_of={:?}, reason={})",
            opt(&d.level),
            repr_str(&d.domain),
            d.fits.iter().map(|f| f.fits).sum::<u64>(),
            d.short_of,
            repr_str(d.reason.as_str())
        )
        .replace('"', "'")
    }
}
impl Repr for PyRoleFit {
    fn repr(&self) -> String {
        format!(
            "RoleFit(role={}, fits={}, needed={})",
            repr_str(&self.0.role),
            self.0.fits,
            self.0.needed
        )
    }
}
impl Repr for PyRelaxation {
    fn repr(&self) -> String {
        let r = &self.0;
        format!(
            "Relaxation(level={}, domain={}, spans={}, outside={})",
            opt(&r.level),
            repr_str(&r.domain),
            r.spans,
            r.outside
        )
    }
}
impl Repr for PyExclusionCause {
    fn repr(&self) -> String {
        let c = &self.0;
        format!(
            "ExclusionCause(reason={}, key={}, nodes={})",
            repr_str(c.reason.as_str()),
            repr_str(&c.key),
            c.nodes
        )
    }
}
impl Repr for PyFewerMembers {
    fn repr(&self) -> String {
        let f = &self.0;
        format!(
            "FewerMembers(level={}, domain={}, members={}, minimum={}, needed={})",
            opt(&f.level),
            repr_str(&f.domain),
            f.members,
            f.minimum,
            f.needed
        )
    }
}
impl Repr for PySliceReport {
    fn repr(&self) -> String {
        let s = &self.0;
        format!(
            "SliceReport(level={}, size={}, role={}, largest={}, available={}, needed={})",
            repr_str(&s.level),
            s.size,
            repr_str(&s.role),
            s.largest,
            s.available,
            s.needed
        )
    }
}

macro_rules! report_methods {
    ($t:ident, $core:ty { $($items:tt)* }) => {
        value_class!($t, "_from_dict", {
            /// Rebuilds the report from its dict form (for pickling).
            #[classmethod]
            fn _from_dict(_cls: &Bound<'_, PyType>, doc: &Bound<'_, PyAny>) -> PyResult<Self> {
                crate::pyde::read::<$core>(doc, "report", ErrorKind::InvalidScenario).map($t)
            }
            $($items)*
        });
    };
}

report_methods!(PyRoleReport, RoleReport {
    /// Role name.
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Members requested.
    #[getter]
    fn count(&self) -> u32 {
        self.0.count
    }
    /// Members required (min_count).
    #[getter]
    fn needed(&self) -> u32 {
        self.0.needed
    }
    /// Bound by the topology constraint.
    #[getter]
    fn constrained(&self) -> bool {
        self.0.constrained
    }
    /// Members of this role that fit cluster-wide, ignoring topology and other roles.
    #[getter]
    fn cluster_fit(&self) -> u64 {
        self.0.cluster_fit
    }
    /// Nodes that could take at least one member.
    #[getter]
    fn fitting_nodes(&self) -> u32 {
        self.0.fitting_nodes
    }
    /// Nodes that cannot, by first reason.
    #[getter]
    fn excluded(&self) -> PyExclusions {
        PyExclusions(self.0.excluded)
    }
    /// Requested resources that no node offers.
    #[getter]
    fn unknown_resources(&self) -> Vec<String> {
        self.0.unknown_resources.clone()
    }
    /// The excluded nodes by first reason and what it is about, as gang-core words them
    /// (`str(cause)`: "1 short of nvidia.com/gpu now").
    #[getter]
    fn causes(&self) -> Vec<PyExclusionCause> {
        self.0.causes.iter().cloned().map(PyExclusionCause).collect()
    }
});

report_methods!(PyExclusionCause, ExclusionCause {
    /// "cordoned", "selector", "taint", "missing_label", "too_small" or "full".
    #[getter]
    fn reason(&self) -> &'static str {
        self.0.reason.as_str()
    }
    /// The taint key, the selector's label key, the level, the resource ("" when cordoned).
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }
    /// Nodes.
    #[getter]
    fn nodes(&self) -> u32 {
        self.0.nodes
    }
    fn __str__(&self) -> String {
        self.0.to_string()
    }
});

report_methods!(PyFewerMembers, FewerMembers {
    /// The level it would be placed at (None: cluster-wide).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.0.level.as_deref()
    }
    /// The domain's full path ("" cluster-wide).
    #[getter]
    fn domain(&self) -> &str {
        &self.0.domain
    }
    /// Members it would place.
    #[getter]
    fn members(&self) -> u64 {
        self.0.members
    }
    /// The lowered minimum, over all roles.
    #[getter]
    fn minimum(&self) -> u64 {
        self.0.minimum
    }
    /// The minimum asked for, over all roles.
    #[getter]
    fn needed(&self) -> u64 {
        self.0.needed
    }
    fn __str__(&self) -> String {
        self.0.to_string()
    }
});

report_methods!(PyExclusions, Exclusions {
    #[getter]
    fn cordoned(&self) -> u32 {
        self.0.cordoned
    }
    #[getter]
    fn selector(&self) -> u32 {
        self.0.selector
    }
    #[getter]
    fn taint(&self) -> u32 {
        self.0.taint
    }
    #[getter]
    fn missing_label(&self) -> u32 {
        self.0.missing_label
    }
    #[getter]
    fn too_small(&self) -> u32 {
        self.0.too_small
    }
    /// Total excluded nodes.
    #[getter]
    fn total(&self) -> u32 {
        self.0.total()
    }
});

report_methods!(PyDomainReport, DomainReport {
    /// Level key (None: the whole cluster).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.0.level.as_deref()
    }
    /// The domain's full path ("b1/r2"; "" for the cluster).
    #[getter]
    fn domain(&self) -> &str {
        &self.0.domain
    }
    /// The label value at the level ("r2"; None for the cluster).
    #[getter]
    fn domain_value(&self) -> Option<&str> {
        if self.0.level.is_none() {
            None
        } else {
            self.0.domain.rsplit('/').next()
        }
    }
    /// Per constrained role (every role when cluster-wide).
    #[getter]
    fn fits(&self) -> Vec<PyRoleFit> {
        self.0.fits.iter().cloned().map(PyRoleFit).collect()
    }
    /// Resources that are short for some role on their own.
    #[getter]
    fn short_of(&self) -> Vec<String> {
        self.0.short_of.clone()
    }
    /// "resources", "fragmented", "slices", "roles_together" or "undecided".
    #[getter]
    fn reason(&self) -> &'static str {
        self.0.reason.as_str()
    }
});

report_methods!(PyRoleFit, RoleFit {
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Members that fit (single-role, slices respected).
    #[getter]
    fn fits(&self) -> u64 {
        self.0.fits
    }
    /// Members required.
    #[getter]
    fn needed(&self) -> u32 {
        self.0.needed
    }
});

report_methods!(PyRelaxation, Relaxation {
    /// The tightest coarser level that fits (None: only without any topology).
    #[getter]
    fn level(&self) -> Option<&str> {
        self.0.level.as_deref()
    }
    /// The domain that would be used, as its full path ("" when cluster-wide).
    #[getter]
    fn domain(&self) -> &str {
        &self.0.domain
    }
    /// How many domains of the originally required level the gang would span.
    #[getter]
    fn spans(&self) -> u32 {
        self.0.spans
    }
    /// Nodes it would use that lack the required level's label.
    #[getter]
    fn outside(&self) -> u32 {
        self.0.outside
    }
});

report_methods!(PySliceReport, SliceReport {
    #[getter]
    fn level(&self) -> &str {
        &self.0.level
    }
    #[getter]
    fn size(&self) -> u32 {
        self.0.size
    }
    #[getter]
    fn role(&self) -> &str {
        &self.0.role
    }
    /// Most members any one domain of the slice level can take (ignoring slices).
    #[getter]
    fn largest(&self) -> u64 {
        self.0.largest
    }
    /// The full path of that domain.
    #[getter]
    fn largest_domain(&self) -> &str {
        &self.0.largest_domain
    }
    /// Whole slices of this level available in the best domain.
    #[getter]
    fn available(&self) -> u64 {
        self.0.available
    }
    /// Slices of this level the role needs.
    #[getter]
    fn needed(&self) -> u64 {
        self.0.needed
    }
});
