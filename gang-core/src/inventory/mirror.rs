//! A mirror of an inventory for what-if questions (preemption): the same nodes,
//! domains and free columns, without the ledger, kept in step with the original
//! node by node from its journal instead of cloned again for every question.

use super::Inventory;

impl Inventory {
    /// A copy of everything the solver reads (nodes, labels, taints, columns, domains,
    /// summaries, layout), with an empty ledger and a journal of its own: what-if
    /// states are made on it by [`Inventory::adjust`] and it never reserves.
    pub(crate) fn mirror(&self) -> Inventory {
        Inventory {
            topology: self.topology.clone(),
            names: self.names.clone(),
            labels: self.labels.clone(),
            schedulable: self.schedulable.clone(),
            resources: self.resources.clone(),
            capacity: self.capacity.clone(),
            max_capacity: self.max_capacity.clone(),
            used: self.used.clone(),
            overcommit: self.overcommit.clone(),
            free: self.free.clone(),
            taints_of: self.taints_of.clone(),
            keys: self.keys.clone(),
            values: self.values.clone(),
            pair_sets: self.pair_sets.clone(),
            key_sets: self.key_sets.clone(),
            taints: self.taints.clone(),
            domains: self.domains.clone(),
            summaries: self.summaries.clone(),
            layout_id: self.layout_id,
            ledger: super::ledger::Ledger::default(),
            journal: super::journal::Journal::new(),
        }
    }

    /// Brings the state of `nodes` over from `from`, an inventory of the same layout
    /// whose other nodes are as here: schedulable, capacity, use, free amounts and
    /// overcommitment; then the summaries of their domains, and this journal (so
    /// solvers asking about this mirror see the nodes change). Everything a journal
    /// entry can stand for (a cordon, a capacity or use change, a reservation's
    /// charge) is one of these.
    pub(crate) fn copy_nodes_from(&mut self, from: &Inventory, nodes: &[u32]) {
        debug_assert_eq!(self.layout_id, from.layout_id);
        let nres = self.resources.len();
        self.max_capacity.clone_from(&from.max_capacity);
        for &n in nodes {
            let i = n as usize;
            self.schedulable.set(i, from.schedulable.get(i));
            for r in 0..nres {
                self.capacity[r][i] = from.capacity[r][i];
                self.used[r][i] = from.used[r][i];
                self.free[r][i] = from.free[r][i];
                let key = (n, r as u32);
                match from.overcommit.get(&key) {
                    Some(&v) => {
                        self.overcommit.insert(key, v);
                    }
                    None => {
                        self.overcommit.remove(&key);
                    }
                }
            }
            self.journal.touch(n);
        }
        self.refresh_summaries(nodes);
    }
}

impl Inventory {
    /// [`Inventory::adjust`] with the shapes' resources already resolved to ids
    /// (`(resource, amount)`), leaving the domain summaries to the caller: the nodes
    /// touched are pushed to `touched` (and this journal), and
    /// [`Inventory::refresh_summaries_of`] must run over them before the next
    /// question. For a mirror that toggles many holdings between two questions.
    pub(crate) fn adjust_deferred(
        &mut self,
        shapes: &[Vec<(u32, u64)>],
        members: &[(u16, u32, u32)],
        take: bool,
        touched: &mut Vec<u32>,
    ) {
        let mut last = u32::MAX;
        for &(role, n, k) in members {
            for &(ri, q) in &shapes[role as usize] {
                let (ni, ri) = (n as usize, ri as usize);
                let amount = q.saturating_mul(u64::from(k));
                let held = self.reserved_of(ni, ri);
                let held = if take {
                    held.saturating_add(amount)
                } else {
                    held.saturating_sub(amount)
                };
                self.set_reserved(ni, ri, held);
            }
            // Members are sorted by node within a role; repeats across roles are
            // harmless (the journal and the refresh take duplicates).
            if n != last {
                self.journal.touch(n);
                touched.push(n);
                last = n;
            }
        }
    }

    /// Recomputes the summaries of every domain holding one of `nodes` (any order,
    /// repeats allowed), each once, innermost first: [`Inventory::refresh_summaries`]
    /// for many nodes at a time.
    pub(crate) fn refresh_summaries_of(&mut self, nodes: &mut Vec<u32>) {
        if nodes.is_empty() {
            return;
        }
        nodes.sort_unstable();
        nodes.dedup();
        let nres = self.resources.len();
        let mut doms: Vec<u32> = Vec::new();
        for d in (0..self.domains.len()).rev() {
            doms.clear();
            // Nodes are sorted and domains contiguous: each domain's nodes are
            // adjacent, so consecutive repeats are all there is to drop.
            for &n in nodes.iter() {
                if let Some(di) = self.domain_of(n, d) {
                    if doms.last() != Some(&di) {
                        doms.push(di);
                    }
                }
            }
            for &di in &doms {
                for r in 0..nres {
                    let s = self.summarize(d, di as usize, r);
                    self.summaries[d][di as usize * nres + r] = s;
                }
            }
        }
        nodes.clear();
    }
}
