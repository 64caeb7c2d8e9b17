//! Our own serde structs for the few fields we read of each Kubernetes kind, one file
//! per API group (and version, where the group has several), as kube-core and
//! k8s-openapi lay them out.
//!
//! Every field has a default (Kubernetes omits empty fields and sometimes writes
//! `null`), unknown fields are ignored (real objects have many), and quantities are parsed
//! by gang-core's [`Quantity::parse`](gang_core::Quantity::parse) while deserialising, so
//! a bad one fails with the path of its field.
//!
//! One way: [`de`] (reading helpers) → [`meta_v1`] → [`core_v1`] → each workload API
//! ([`batch_v1`], [`jobset`], [`kubeflow`], [`kueue`], [`scheduling`], [`volcano`],
//! [`coscheduling`], [`kai`], [`lws`], [`ray`], [`appwrapper`], [`node_v1`]) → [`pod_group`] (the four PodGroups in one form) →
//! [`body`] (which struct a kind reads into).

pub(crate) mod appwrapper;
pub(crate) mod batch_v1;
pub(crate) mod body;
pub(crate) mod core_v1;
pub(crate) mod coscheduling;
pub(crate) mod de;
pub(crate) mod jobset;
pub(crate) mod kai;
pub(crate) mod kubeflow;
pub(crate) mod kueue;
pub(crate) mod lws;
pub(crate) mod meta_v1;
pub(crate) mod node_v1;
pub(crate) mod pod_group;
pub(crate) mod ray;
pub(crate) mod scheduling;
pub(crate) mod volcano;
