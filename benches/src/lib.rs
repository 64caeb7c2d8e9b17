//! Benchmarks of `gang-core` on realistic synthetic clusters, against two baselines.
//!
//! - [`gen`]: deterministic HGX-style and NVL72-style clusters (1k / 10k / 100k nodes),
//!   fragmented by random use, with a few cordoned, tainted and unlabelled nodes.
//! - [`reference`](mod@reference): the reference placer — a full scan per call over plain node records,
//!   as peer schedulers do — implementing the core's single-role semantics; it is both
//!   the speed baseline and the correctness oracle of `tests/agreement.rs`.
//! - [`floor`]: one pass over dense free-capacity columns, the least any scanning design
//!   can cost.
//! - [`cases`]: the gangs the benchmarks place.
//! - [`outcomes`]: what each benchmarked query answered, for the report.
//! - [`peers`](mod@peers): the side-by-side with peers' placement code (`benches/peers/`):
//!   a cluster and its queries as JSON, and a placement's spread over the levels.
//! - [`alloc`] and [`memory`]: a counting allocator and the bytes-per-node measurement
//!   (`cargo run --release -p gang-benches --bin memory`).
//!
//! The benchmarks themselves are in `benches/` (`cargo bench -p gang-benches`); the
//! README explains how to turn their output into the report table.

pub mod alloc;
pub mod cases;
pub mod floor;
pub mod gen;
pub mod memory;
pub mod outcomes;
pub mod peers;
pub mod reference;
