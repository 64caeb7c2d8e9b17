//! The diagnosis in words: one paragraph a person can act on. The data is in
//! [`super::diagnosis`]; this module only words it.

use std::fmt;

use super::diagnosis::{Diagnosis, Shortfall};
use crate::model::names::short_level;

impl fmt::Display for Diagnosis {
    /// One paragraph: what was asked, the closest domain and what it lacks, the
    /// cluster-wide fit, excluded nodes by reason, and what relaxing would give.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = self.level.as_deref().map(short_level);
        let demand: Vec<String> = self
            .roles
            .iter()
            .map(|r| format!("{} {}", r.needed, r.role))
            .collect();
        write!(f, "gang {} ({}) does not fit", self.gang, demand.join(", "))?;
        match (&self.level, level) {
            (Some(key), Some(short)) => write!(f, " in one {short} ({key})")?,
            _ => write!(f, " in the cluster")?,
        }
        if self.search_exhausted {
            write!(f, " within the search budget; a placement may still exist")?;
            if let Some(p) = &self.search_progress {
                write!(
                    f,
                    " (candidate domains: {} ruled out, {} undecided; {} work units)",
                    p.ruled_out, p.undecided, p.work
                )?;
            }
        }
        f.write_str(".")?;
        if let Some(b) = &self.best {
            let parts: Vec<String> = b.fits.iter().map(ToString::to_string).collect();
            match level {
                Some(short) => write!(
                    f,
                    " Best {short}: {short} {} fits {}",
                    b.domain,
                    parts.join(", ")
                )?,
                None => write!(f, " Cluster-wide {} fit", parts.join(", "))?,
            }
            match b.reason {
                Shortfall::Resources => write!(f, " (short of {})", short_of(&b.short_of))?,
                Shortfall::Fragmented => {
                    f.write_str(" (enough of each resource, but not together on the same nodes)")?
                }
                Shortfall::Slices => {
                    f.write_str(" (room for the members, but not in whole slices)")?
                }
                Shortfall::RolesTogether => {
                    f.write_str(" (each role fits alone, but not all roles together)")?
                }
                Shortfall::Undecided => {}
            }
            f.write_str(".")?;
        }
        if level.is_some() {
            let fits: Vec<String> = self
                .roles
                .iter()
                .map(|r| {
                    // A role with no requests and no max_per_node fits without bound.
                    if r.cluster_fit >= u64::from(u32::MAX) {
                        format!("any number of {}", r.role)
                    } else {
                        format!("{} {}", r.cluster_fit, r.role)
                    }
                })
                .collect();
            write!(
                f,
                " Cluster-wide, ignoring topology, {} fit.",
                fits.join(", ")
            )?;
        }
        for s in &self.slices {
            write!(
                f,
                " Slices of {} {} per {}: the largest {} ({}) holds {}; {} of {} slices fit.",
                s.size,
                s.role,
                short_level(&s.level),
                short_level(&s.level),
                s.largest_domain,
                s.largest,
                s.available.min(s.needed),
                s.needed
            )?;
        }
        for r in &self.roles {
            if !r.unknown_resources.is_empty() {
                write!(
                    f,
                    " No node offers {} (needed by {}).",
                    r.unknown_resources.join(", "),
                    r.role
                )?;
            }
            let e = &r.excluded;
            if e.total() == 0 {
                continue;
            }
            let mut parts = Vec::new();
            for (n, what) in [
                (e.cordoned, "cordoned"),
                (e.selector, "not matching the selector"),
                (e.taint, "with an untolerated taint"),
                (e.missing_label, "missing a topology label"),
                (e.too_small, "too small"),
            ] {
                if n > 0 {
                    parts.push(format!("{n} {what}"));
                }
            }
            write!(f, " Nodes excluded for {}: {}.", r.role, parts.join(", "))?;
        }
        if let Some(r) = &self.relaxation {
            let needed: u32 = self.roles.iter().map(|r| r.needed).sum();
            if let Some(orig) = level {
                let plural =
                    |n: u32, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                let mut across = plural(r.spans, orig);
                if r.outside > 0 {
                    across.push_str(&format!(
                        " and {} without a {orig} label",
                        plural(r.outside, "node")
                    ));
                }
                match &r.level {
                    Some(k) => write!(
                        f,
                        " Relaxing to {}: {} {} fits all {needed} now (across {across}).",
                        short_level(k),
                        short_level(k),
                        r.domain
                    )?,
                    None => write!(
                        f,
                        " Without the topology constraint all {needed} fit now, across {across}."
                    )?,
                }
            }
        }
        Ok(())
    }
}

/// Resources a domain is short of, in words: `pods` is said as what it means, the
/// nodes' free pod slots under their pod limit.
pub(crate) fn short_of(resources: &[String]) -> String {
    let words: Vec<&str> = resources
        .iter()
        .map(|r| if r == "pods" { "pod slots" } else { r.as_str() })
        .collect();
    words.join(", ")
}
