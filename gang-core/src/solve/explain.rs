//! [`Inventory::explain`]: the answer with everything an explaining face shows beside
//! it — each role's nodes by cause, and the best domain of every level (the gang asked
//! again with that level required). A cold path: one query per level.

use crate::answer::diagnosis::{RoleReport, Shortfall};
use crate::answer::explanation::{Explanation, LevelFit, LevelReport, LevelStatus};
use crate::answer::Outcome;
use crate::inventory::Inventory;
use crate::model::names::HOSTNAME_LEVEL;
use crate::model::{Error, Gang, GangTopology, Slice};

use super::{diagnose, Solver};

impl Inventory {
    /// Places `gang` as [`Inventory::place`] does and explains the answer: the
    /// outcome, each role's excluded nodes by cause, and the best domain of every label
    /// level (outermost first) and of one node, each asked with that level required
    /// (slices of coarser levels left out). What `gang explain` shows, as data; see
    /// [`Explanation`] for an example.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::diagnosis::LevelStatus;
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 4))
    ///     .build()?;
    /// let e = inv.explain(&Gang::new("g").role(Role::new("w", 2).request("gpu", 1)))?;
    /// assert!(e.outcome.is_placed());
    /// assert_eq!(e.levels.iter().map(|l| l.status).collect::<Vec<_>>(), [LevelStatus::Fits; 2]);
    /// assert_eq!(e.levels[1].domain, "a/a1"); // the node row: the node's path
    /// assert!(inv.explain(&Gang::new("g").role(Role::new("w", 2)).required("zone")).is_err());
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::compile`]: invalid requests are errors, not "does not fit".
    pub fn explain(&self, gang: &Gang) -> Result<Explanation, Error> {
        let compiled = self.compile(gang)?;
        let mut solver = Solver::new();
        let outcome = solver.place(self, &compiled)?;
        let roles = match outcome.diagnosis() {
            Some(d) => d.roles.clone(),
            None => diagnose::roles(&mut solver, self, &compiled.inner),
        };
        Ok(Explanation {
            outcome,
            roles,
            levels: self.level_reports(gang),
        })
    }

    /// Per role: demand, cluster-wide fit and the nodes excluded by cause, whether or not
    /// the gang fits (a diagnosis has the same reports); one pass over the nodes per
    /// role, without placing the gang.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// use gang_core::diagnosis::ExclusionReason;
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 4))
    ///     .node(NodeSpec::new("x1").capacity("gpu", 4)) // no rack label
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 2).request("gpu", 1)).required("rack");
    /// let r = &inv.role_reports(&gang)?[0];
    /// assert_eq!((r.fitting_nodes, r.causes[0].reason, r.causes[0].key.as_str()), (1, ExclusionReason::MissingLabel, "rack"));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::compile`].
    pub fn role_reports(&self, gang: &Gang) -> Result<Vec<RoleReport>, Error> {
        let compiled = self.compile(gang)?;
        Ok(diagnose::roles(&mut Solver::new(), self, &compiled.inner))
    }

    /// The best domain of every label level, then of one node. See
    /// [`Inventory::explain`].
    fn level_reports(&self, gang: &Gang) -> Vec<LevelReport> {
        let labels = self.topology.label_levels();
        let mut keys: Vec<&str> = labels.iter().map(String::as_str).collect();
        keys.push(HOSTNAME_LEVEL);
        let t = &gang.topology;
        let requested = t.required.as_deref().or(t.preferred.as_deref());
        let depth = |l: &str| labels.iter().position(|x| x == l).unwrap_or(usize::MAX);
        keys.into_iter()
            .map(|key| {
                // Slices at or inside the level are kept, coarser ones left out.
                let (kept, dropped): (Vec<Slice>, Vec<Slice>) = t
                    .slices
                    .iter()
                    .cloned()
                    .partition(|s| depth(&s.level) >= depth(key));
                let mut g = gang.clone();
                g.topology = GangTopology {
                    required: Some(key.to_owned()),
                    preferred: None,
                    slices: kept,
                };
                let mut row = LevelReport {
                    level: key.to_owned(),
                    requested: requested == Some(key),
                    status: LevelStatus::Short,
                    domain: String::new(),
                    fits: Vec::new(),
                    short_of: Vec::new(),
                    reason: None,
                    dropped_slices: dropped,
                    message: None,
                };
                let constrained = || gang.roles.iter().filter(|r| r.constrained);
                match self.place(&g) {
                    Ok(Outcome::Placed(p)) => {
                        row.status = LevelStatus::Fits;
                        row.domain = p.domain_path();
                        if row.domain.is_empty() && key == HOSTNAME_LEVEL {
                            row.domain = p
                                .node_counts()
                                .first()
                                .map(|(n, _)| (*n).to_owned())
                                .unwrap_or_default();
                        }
                        row.fits = constrained()
                            .map(|r| LevelFit {
                                role: r.name.clone(),
                                fits: u64::from(p.placed(&r.name).unwrap_or(0)),
                                needed: r.min_count.unwrap_or(r.count),
                                count: r.count,
                            })
                            .collect();
                    }
                    Ok(o) => {
                        if matches!(o, Outcome::Undecided(_)) {
                            row.status = LevelStatus::Undecided;
                        }
                        let best = o.diagnosis().and_then(|d| d.best.as_ref());
                        if let Some(b) = best {
                            row.domain = b.domain.clone();
                            row.short_of = b.short_of.clone();
                            row.reason = (b.reason != Shortfall::Resources).then_some(b.reason);
                        }
                        row.fits = constrained()
                            .map(|r| LevelFit {
                                role: r.name.clone(),
                                fits: best
                                    .and_then(|b| b.fits.iter().find(|f| f.role == r.name))
                                    .map_or(0, |f| f.fits.min(u64::from(r.count))),
                                needed: r.min_count.unwrap_or(r.count),
                                count: r.count,
                            })
                            .collect();
                    }
                    Err(e) => {
                        row.status = LevelStatus::Invalid;
                        row.message = Some(e.to_string());
                    }
                }
                row
            })
            .collect()
    }
}
