//! Small conversions from Kubernetes fields to gang-core values.

use gang_core::{Taint, TaintEffect, Toleration};

use crate::error::{Error, ErrorKind};
use crate::model::core_v1::{KTaint, KToleration};

pub(crate) fn effect(text: &str) -> Option<TaintEffect> {
    match text {
        "NoSchedule" => Some(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Some(TaintEffect::PreferNoSchedule),
        "NoExecute" => Some(TaintEffect::NoExecute),
        _ => None,
    }
}

fn bad_effect(text: &str) -> Error {
    Error::new(
        ErrorKind::InvalidValue,
        "",
        "unknown taint effect (NoSchedule, PreferNoSchedule or NoExecute)",
    )
    .with_field("effect")
    .with_value(text.to_owned())
}

/// A node taint. The caller adds where it is.
pub(crate) fn taint(t: &KTaint) -> Result<Taint, Error> {
    let e = effect(&t.effect).ok_or_else(|| bad_effect(&t.effect))?;
    Ok(Taint::new(t.key.clone(), t.value.clone(), e))
}

/// A pod toleration (`operator` Equal by default; an empty effect matches all effects).
/// The caller adds where it is.
pub(crate) fn toleration(t: &KToleration) -> Result<Toleration, Error> {
    let mut out = match t.operator.as_str() {
        "Exists" => Toleration::exists(t.key.clone()),
        "" | "Equal" => Toleration::equal(t.key.clone(), t.value.clone()),
        other => {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                "",
                "unknown toleration operator (Equal or Exists)",
            )
            .with_field("operator")
            .with_value(other.to_owned()))
        }
    };
    if !t.effect.is_empty() {
        out = out.effect(effect(&t.effect).ok_or_else(|| bad_effect(&t.effect))?);
    }
    Ok(out)
}
