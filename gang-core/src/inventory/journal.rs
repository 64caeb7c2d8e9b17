//! The journal of touched nodes, by which solvers' caches catch up with an inventory.

/// Identity of one inventory value: a clone or a rebuild gets a new one, so a solver's
/// cache never mistakes one inventory for another.
#[derive(Debug)]
pub(crate) struct Identity(pub std::sync::Arc<()>);

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity(std::sync::Arc::new(()))
    }
}

/// The nodes touched since this inventory value was built: `version = base + len`.
/// Bounded; a cache older than `base` recomputes everything.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    pub identity: Identity,
    pub base: u64,
    pub nodes: Vec<u32>,
}

impl Journal {
    const KEEP: usize = 1 << 14;

    pub fn new() -> Self {
        Journal {
            identity: Identity(std::sync::Arc::new(())),
            base: 0,
            nodes: Vec::new(),
        }
    }

    pub fn version(&self) -> u64 {
        self.base + self.nodes.len() as u64
    }

    pub fn touch(&mut self, ix: u32) {
        if self.nodes.len() >= Self::KEEP {
            self.base += self.nodes.len() as u64;
            self.nodes.clear();
        }
        self.nodes.push(ix);
    }

    /// Nodes touched since `version`, or `None` when that history is gone.
    pub fn since(&self, version: u64) -> Option<&[u32]> {
        let from = version.checked_sub(self.base)?;
        self.nodes.get(from as usize..)
    }
}
