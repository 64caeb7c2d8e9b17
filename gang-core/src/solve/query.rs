//! The one way to ask: [`Inventory::place`] for a single question,
//! [`Inventory::place_with`] to ask repeatedly with a reusable [`Solver`], and
//! [`Inventory::find_with`], the cheap form for a scheduler that polls gangs that keep
//! waiting.

use crate::answer::placement::Placement;
use crate::answer::Outcome;
use crate::compile::CompiledGang;
use crate::inventory::Inventory;
use crate::model::{Error, Gang};

use super::Solver;

impl Inventory {
    /// Compiles and places `gang` in one call: all of it (or each role's `min_count`),
    /// or a diagnosis of why not. For repeated questions compile once and use
    /// [`Inventory::place_with`].
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Topology};
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .node(NodeSpec::new("a1").label("rack", "a").capacity("gpu", 4))
    ///     .node(NodeSpec::new("b1").label("rack", "b").capacity("gpu", 2))
    ///     .node(NodeSpec::new("b2").label("rack", "b").capacity("gpu", 2))
    ///     .build()?;
    /// let gang = Gang::new("g").role(Role::new("w", 4).request("gpu", 1)).required("rack");
    /// let p = inv.place(&gang)?.placement().cloned().unwrap();
    /// assert_eq!(p.domain_path(), "a");
    /// let too_big = Gang::new("g").role(Role::new("w", 5).request("gpu", 1)).required("rack");
    /// assert!(!inv.place(&too_big)?.is_placed()); // valid, but does not fit: no error
    /// let invalid = Gang::new("g").role(Role::new("w", 4).request("gpu", 1)).required("zone");
    /// assert_eq!(inv.place(&invalid).unwrap_err().field(), "gang.topology.required");
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::compile`]: invalid requests are errors, not "does not fit".
    pub fn place(&self, gang: &Gang) -> Result<Outcome, Error> {
        let compiled = self.compile(gang)?;
        Solver::new().place(self, &compiled)
    }

    /// Places a compiled gang with a reusable [`Solver`]: the same answer as
    /// [`Inventory::place`], without allocating beyond the result once the solver is
    /// warm. A gang compiled before nodes were added, removed or relabelled is compiled
    /// again (once per layout, kept by the solver).
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Solver, Topology};
    /// let node = |n: &str| NodeSpec::new(n).label("rack", "a").capacity("nvidia.com/gpu", 8);
    /// let mut inv = Inventory::builder(Topology::new(["rack"])?).node(node("a1")).build()?;
    /// let gang = Gang::new("g")
    ///     .role(Role::new("w", 2).request("nvidia.com/gpu", 8))
    ///     .required("rack");
    /// let compiled = inv.compile(&gang)?;
    /// let mut solver = Solver::new();
    /// assert!(!inv.place_with(&mut solver, &compiled)?.is_placed()); // one 8-GPU node
    /// inv.add_node(node("a2"))?;
    /// assert!(inv.place_with(&mut solver, &compiled)?.is_placed()); // compiled again
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// Only when that recompilation fails (as [`Inventory::compile`]).
    pub fn place_with(&self, solver: &mut Solver, gang: &CompiledGang) -> Result<Outcome, Error> {
        solver.place(self, gang)
    }

    /// Asks whether a compiled gang fits now, and where: the placement
    /// [`Inventory::place_with`] would return, or `None` — for unschedulable and
    /// undecided alike — without building a diagnosis. The hot path for a scheduler that
    /// asks again every cycle for gangs that keep waiting: a warm "not now" allocates
    /// nothing. Call `place_with` when you want the reason.
    ///
    /// ```
    /// use gang_core::{Gang, Inventory, NodeSpec, Role, Solver, Topology};
    /// let node = |n: &str, r: &str| NodeSpec::new(n).label("rack", r).capacity("gpu", 2);
    /// let inv = Inventory::builder(Topology::new(["rack"])?)
    ///     .nodes([node("a1", "a"), node("a2", "a"), node("b1", "b")])
    ///     .build()?;
    /// let gang = |n| Gang::new("g").role(Role::new("w", n).request("gpu", 1)).required("rack");
    /// let mut solver = Solver::new();
    /// let four = inv.compile(&gang(4))?;
    /// let found = inv.find_with(&mut solver, &four)?.expect("rack a has four GPUs");
    /// assert_eq!(found, *inv.place_with(&mut solver, &four)?.placement().unwrap());
    /// let five = inv.compile(&gang(5))?;
    /// assert_eq!(inv.find_with(&mut solver, &five)?, None); // no diagnosis made
    /// assert!(inv.place_with(&mut solver, &five)?.diagnosis().is_some()); // the reason
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Inventory::place_with`].
    pub fn find_with(
        &self,
        solver: &mut Solver,
        gang: &CompiledGang,
    ) -> Result<Option<Placement>, Error> {
        solver.find(self, gang)
    }
}
