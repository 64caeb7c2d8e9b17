//! Topology: the ordered label keys that name nested domains.

use crate::model::names::{check_qualified_name, HOSTNAME_LEVEL};
use crate::model::Error;

/// Ordered topology level keys, outermost first (`block`, then `rack`).
///
/// The node itself is always the innermost level; naming `kubernetes.io/hostname` as the
/// last level is allowed and means "one node". A domain is a full path of values:
/// `b1/r1` and `b2/r1` are different racks.
///
/// ```
/// use gang_core::{ErrorKind, Topology};
/// let t = Topology::new(["topology.example.com/block", "topology.example.com/rack"])?;
/// assert_eq!(t.levels(), ["topology.example.com/block", "topology.example.com/rack"]);
/// assert!(Topology::flat().levels().is_empty());
/// let err = Topology::new(["rack", "rack"]).unwrap_err();
/// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidInventory, "topology.levels[1]"));
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Topology {
    levels: Vec<String>,
}

impl Topology {
    /// The most levels a topology may have (Kueue's `Topology` allows 16). Every walk
    /// over levels is bounded by it, so no input can make a call's stack depth grow.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Topology};
    /// let levels = |n: usize| (0..n).map(|i| format!("level-{i}")).collect::<Vec<_>>();
    /// assert!(Topology::new(levels(Topology::MAX_LEVELS)).is_ok());
    /// let err = Topology::new(levels(Topology::MAX_LEVELS + 1)).unwrap_err();
    /// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidInventory, "topology.levels"));
    /// ```
    pub const MAX_LEVELS: usize = 64;

    /// A topology from level keys, outermost first.
    ///
    /// ```
    /// use gang_core::Topology;
    /// assert!(Topology::new(["topology.example.com/block", "topology.example.com/rack"]).is_ok());
    /// assert_eq!(Topology::new(["Rack Key"]).unwrap_err().field(), "topology.levels[0]");
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidInventory`] (field `topology.levels[i]`) for a malformed or repeated
    /// key, or `kubernetes.io/hostname` anywhere but last; (field `topology.levels`) for
    /// more than [`Topology::MAX_LEVELS`] levels.
    pub fn new<I, S>(levels: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        // Take one more than allowed at most, so a huge input is refused without being
        // collected.
        let levels: Vec<String> = levels
            .into_iter()
            .take(Self::MAX_LEVELS + 1)
            .map(Into::into)
            .collect();
        if levels.len() > Self::MAX_LEVELS {
            return Err(Error::inventory(
                "topology.levels",
                format!("more than {}", Self::MAX_LEVELS),
                format!(
                    "at most {} levels (Kueue allows 16); the node level is implicit",
                    Self::MAX_LEVELS
                ),
            ));
        }
        for (i, key) in levels.iter().enumerate() {
            let field = format!("topology.levels[{i}]");
            check_qualified_name(key).map_err(|r| Error::inventory(&field, key, r))?;
            if levels[..i].contains(key) {
                return Err(Error::inventory(&field, key, "level repeated"));
            }
            if key == HOSTNAME_LEVEL && i + 1 != levels.len() {
                return Err(Error::inventory(
                    &field,
                    key,
                    "the node level (kubernetes.io/hostname) can only be the innermost level",
                ));
            }
        }
        Ok(Topology { levels })
    }

    /// A topology with no levels above the node: every gang is placed cluster-wide or
    /// on one node. See [`Topology`].
    pub fn flat() -> Self {
        Topology::default()
    }

    /// The level keys as given, outermost first. See [`Topology`].
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// The label-backed levels (everything except a trailing `kubernetes.io/hostname`).
    pub(crate) fn label_levels(&self) -> &[String] {
        match self.levels.last() {
            Some(k) if k == HOSTNAME_LEVEL => &self.levels[..self.levels.len() - 1],
            _ => &self.levels,
        }
    }

    /// Depth of a level key: 1..=L for label levels, L+1 for the node level. Depth 0 is
    /// the whole cluster.
    pub(crate) fn depth_of(&self, key: &str) -> Option<usize> {
        let labels = self.label_levels();
        if key == HOSTNAME_LEVEL {
            return Some(labels.len() + 1);
        }
        labels.iter().position(|k| k == key).map(|i| i + 1)
    }

    /// The key of a depth (the node level is `kubernetes.io/hostname`; depth 0 has none).
    pub(crate) fn key_of(&self, depth: usize) -> Option<&str> {
        let labels = self.label_levels();
        match depth {
            0 => None,
            d if d <= labels.len() => Some(&labels[d - 1]),
            d if d == labels.len() + 1 => Some(HOSTNAME_LEVEL),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths() {
        let t = Topology::new(["block", "rack", HOSTNAME_LEVEL]).unwrap();
        assert_eq!(t.label_levels(), ["block", "rack"]);
        assert_eq!(t.depth_of("block"), Some(1));
        assert_eq!(t.depth_of("rack"), Some(2));
        assert_eq!(t.depth_of(HOSTNAME_LEVEL), Some(3));
        assert_eq!(t.depth_of("zone"), None);
        assert_eq!(t.key_of(0), None);
        assert_eq!(t.key_of(2), Some("rack"));
        assert_eq!(t.key_of(3), Some(HOSTNAME_LEVEL));
        // The node level is always addressable, named or not.
        assert_eq!(Topology::flat().depth_of(HOSTNAME_LEVEL), Some(1));
    }

    #[test]
    fn rejects_bad_levels() {
        let e = Topology::new([HOSTNAME_LEVEL, "rack"]).unwrap_err();
        assert!(e.to_string().contains("topology.levels[0]"), "{e}");
        let e = Topology::new(["rack", "Bad Key"]).unwrap_err();
        assert!(e.to_string().contains("topology.levels[1]"), "{e}");
        assert!(Topology::new(["a", "a"]).is_err());
    }
}
