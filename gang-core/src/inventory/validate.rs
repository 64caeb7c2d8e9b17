//! The inventory's invariant checker, for tests and fuzzing.

use super::{Inventory, NONE};

impl Inventory {
    /// Checks the structural invariants: sorted, contiguous domains; columns consistent;
    /// summaries exact; indexes agree with labels. For tests and fuzzing.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    #[doc(hidden)]
    pub fn validate(&self) -> Result<(), String> {
        let n = self.names.len();
        let nres = self.resources.len();
        if self.names.len() != n || self.labels.len() != n || self.schedulable.len() != n {
            return Err("node arrays disagree in length".into());
        }
        for cols in [&self.capacity, &self.used, &self.free] {
            if cols.len() != nres || cols.iter().any(|c| c.len() != n) {
                return Err("resource columns have the wrong shape".into());
            }
        }
        for r in 0..nres {
            for i in 0..n {
                let (avail, free) = (self.available(i, r), self.free[r][i]);
                let over = self.overcommit.get(&(i as u32, r as u32));
                if free > avail || over.is_some_and(|&v| v <= avail || free != 0) {
                    return Err(format!(
                        "free of {} on {} is {free}, inconsistent with capacity - used = {avail} and {over:?} overcommitted",
                        self.resources[r], self.names[i]
                    ));
                }
            }
        }
        for r in 0..nres {
            if self.max_capacity.get(r).copied()
                != self.capacity[r].iter().copied().max().or(Some(0))
            {
                return Err(format!(
                    "largest capacity of {} is stale",
                    self.resources[r]
                ));
            }
        }
        self.ledger.validate(self)?;
        if self.domains.first().map(|l| l.len()) != Some(1) {
            return Err("there must be exactly one root domain".into());
        }
        let root = self.domains[0][0];
        if root.start != 0 || root.end as usize != n {
            return Err("root domain must cover every node".into());
        }
        let level_keys: Vec<u32> = self
            .topology
            .label_levels()
            .iter()
            .map(|k| self.keys.get_index_of(k).map_or(NONE, |i| i as u32))
            .collect();
        for d in 0..self.domains.len() {
            for (di, dom) in self.domains[d].iter().enumerate() {
                if !(dom.start <= dom.direct && dom.direct <= dom.end)
                    || (d > 0 && dom.start == dom.end)
                {
                    return Err(format!("domain {d}/{di} has a bad range"));
                }
                if d + 1 < self.domains.len() {
                    let ch = &self.domains[d + 1][dom.child_start as usize..dom.child_end as usize];
                    let mut at = dom.start;
                    for c in ch {
                        if c.start != at || c.parent as usize != di {
                            return Err(format!("children of domain {d}/{di} are not contiguous"));
                        }
                        at = c.end;
                    }
                    if at != dom.direct {
                        return Err(format!("domain {d}/{di}: children do not end at direct"));
                    }
                } else if dom.direct != dom.start {
                    return Err(format!(
                        "deepest domain {d}/{di} must have only direct nodes"
                    ));
                }
                // Membership agrees with labels.
                for ix in dom.start..dom.end {
                    let labels = &self.labels[ix as usize];
                    let vals = self.domain_values(d, di as u32);
                    for (lvl, v) in vals.iter().enumerate() {
                        let has = labels.iter().any(|&(k, val)| {
                            k == level_keys[lvl] && self.values[val as usize] == *v
                        });
                        if !has {
                            return Err(format!(
                                "node {} is in domain {} without its label",
                                self.names[ix as usize],
                                vals.join("/")
                            ));
                        }
                    }
                    let in_child = ix < dom.direct;
                    if d + 1 < self.domains.len() {
                        let has_next = labels.iter().any(|&(k, _)| k == level_keys[d]);
                        if has_next != in_child {
                            return Err(format!(
                                "node {} misfiled at depth {d}",
                                self.names[ix as usize]
                            ));
                        }
                    }
                }
                for r in 0..nres {
                    let s = self.summary(d, di, r);
                    let col = &self.free[r][dom.start as usize..dom.end as usize];
                    let total = col.iter().fold(0u64, |a, &f| a.saturating_add(f));
                    let max = col.iter().copied().max().unwrap_or(0);
                    if s.total != total || s.max != max {
                        return Err(format!(
                            "summary of domain {d}/{di} for {} is stale",
                            self.resources[r]
                        ));
                    }
                }
            }
        }
        let mut pairs: Vec<(u32, u32)> = self.labels.iter().flatten().copied().collect();
        pairs.sort_unstable();
        pairs.dedup();
        for (k, v) in pairs {
            let (key, value) = (&self.keys[k as usize], &self.values[v as usize]);
            let set = self
                .label_set(key, value)
                .ok_or("label index lost a label")?;
            let has_key = self.key_set(key).ok_or("label key index lost a key")?;
            for i in 0..n {
                if set.contains(i) != self.labels[i].contains(&(k, v)) {
                    return Err(format!(
                        "label index wrong for node {} ({key}={value})",
                        self.names[i]
                    ));
                }
                if has_key.contains(i) != self.labels[i].iter().any(|l| l.0 == k) {
                    return Err(format!(
                        "label key index wrong for node {} ({key})",
                        self.names[i]
                    ));
                }
            }
        }
        Ok(())
    }
}
