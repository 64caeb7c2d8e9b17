//! What one try at placing answers, the limits a caller sets on one query, and the
//! budget that enforces them.

use std::time::Instant;

/// The answer of one try at placing (a gang at one depth, one domain's counts, one
/// exact search): placed, does not fit, or the search budget ran out before it could
/// tell — which is never reported as "does not fit".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict<T = ()> {
    /// It fits; the members are in the attempt's assignment.
    Placed(T),
    /// Proven not to fit.
    NoFit,
    /// Not placed, and the budget ran out during the query, so "no fit" is not proven.
    Exhausted,
}

impl<T> Verdict<T> {
    /// Whether it was placed.
    #[inline]
    pub fn is_placed(&self) -> bool {
        matches!(self, Verdict::Placed(_))
    }
}

/// Whether the exact search of a query tried everything it needed (for the diagnosis of
/// a gang that was not placed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Nothing was cut short: "does not fit" is proven.
    Complete,
    /// The budget ran out: room may exist.
    Exhausted,
}

/// How much work one query may do before it answers "undecided": a number of work
/// units, and optionally a deadline. Set them on a [`Solver`](crate::Solver) with
/// [`Solver::set_limits`](crate::Solver::set_limits) before any call (they hold for
/// every later call until set again), or build a solver with
/// [`Solver::with_limits`](crate::Solver::with_limits).
///
/// A *work unit* is one step of the multi-role machinery: a node looked at while
/// preparing or checking a candidate domain, one node state's packing bound, one
/// pattern tried by the exact search. Single-role gangs and multi-role gangs that greedy
/// packing places never come near the default ([`Limits::DEFAULT_WORK`]); it bounds the
/// exact search of multi-role gangs, whose worst case is exponential. The deadline is
/// read every [`Limits::CLOCK_EVERY`] units, so a query overshoots it by at most that
/// much work. A query stopped by either limit answers
/// [`Outcome::Undecided`](crate::Outcome::Undecided) (or a placement that says its
/// search was not complete), never a false "does not fit"; with a deadline the answer
/// depends on the machine's speed, without one it is deterministic.
///
/// ```
/// use std::time::{Duration, Instant};
/// use gang_core::{Limits, Solver};
/// let mut solver = Solver::new();
/// assert_eq!(solver.limits(), Limits::default());
/// assert_eq!(Limits::default().work, Limits::DEFAULT_WORK);
/// // For the next call only: at most 10 ms and 50,000 units.
/// let deadline = Instant::now() + Duration::from_millis(10);
/// solver.set_limits(Limits::work(50_000).deadline(deadline));
/// assert_eq!(solver.limits().deadline, Some(deadline));
/// solver.set_limits(Limits::default()); // back to the default for later calls
/// assert_eq!(solver.budget(), Limits::DEFAULT_WORK);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// Work units one query may spend.
    pub work: u64,
    /// The instant after which the query stops working and answers with what it has.
    pub deadline: Option<Instant>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::work(Limits::DEFAULT_WORK)
    }
}

impl Limits {
    /// Work units per query unless told otherwise.
    pub const DEFAULT_WORK: u64 = 1_000_000;

    /// Work units between two readings of the clock when a deadline is set.
    pub const CLOCK_EVERY: u64 = 1024;

    /// At most `units` work units, and no deadline.
    pub const fn work(units: u64) -> Limits {
        Limits {
            work: units,
            deadline: None,
        }
    }

    /// The same limits with a deadline.
    #[must_use]
    pub const fn deadline(mut self, at: Instant) -> Limits {
        self.deadline = Some(at);
        self
    }
}

/// The budget of one query, from its [`Limits`]: how much work it may still do, and
/// whether it was refused some. Refusals are remembered, so every answer of the query
/// can tell a proven "no fit" from an exhausted search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    left: u64,
    /// Units spent so far.
    spent: u64,
    deadline: Option<Instant>,
    /// Units until the clock is read again.
    until_clock: u64,
    /// Some work was refused: answers of this query are not proven.
    ran_out: bool,
    /// The deadline has passed: every later request is refused.
    timed_out: bool,
}

impl Budget {
    /// A budget of `units` work units and no deadline.
    #[cfg(test)]
    pub fn new(units: u64) -> Budget {
        Budget::of(Limits::work(units))
    }

    /// The budget of one query under `limits`.
    pub fn of(limits: Limits) -> Budget {
        Budget {
            left: limits.work,
            spent: 0,
            deadline: limits.deadline,
            until_clock: 0,
            ran_out: false,
            timed_out: false,
        }
    }

    /// A share of what is left (half of it) for one exact search, so that the work
    /// after it (other domains, other levels, greedy packing) still has units: the
    /// exponential part of a query cannot starve its linear part. Give it back with
    /// [`Budget::absorb`].
    pub fn share(&self) -> Budget {
        self.part(self.left / 2)
    }

    /// A part of what is left for one try: at most `units` of it, with its own count of
    /// spending and refusals (take it back with [`Budget::absorb`] or
    /// [`Budget::absorb_retried`]).
    pub fn part(&self, units: u64) -> Budget {
        Budget {
            left: self.left.min(units),
            spent: 0,
            ran_out: false,
            ..*self
        }
    }

    /// A share of at most `units` (and at most half of what is left).
    pub fn share_at_most(&self, units: u64) -> Budget {
        let mut share = self.share();
        share.left = share.left.min(units);
        share
    }

    /// Takes back a [`Budget::part`] whose try is done over from scratch: its spending
    /// and its deadline, not its refusals (the answer of the retry stands).
    pub fn absorb_retried(&mut self, part: Budget) {
        let ran_out = self.ran_out;
        self.absorb(part);
        self.ran_out = ran_out || part.timed_out;
    }

    /// Takes back a [`Budget::share`]: its spending, its refusals, its deadline.
    pub fn absorb(&mut self, share: Budget) {
        self.left -= share.spent;
        self.spent += share.spent;
        self.until_clock = share.until_clock;
        self.ran_out |= share.ran_out;
        if share.timed_out {
            self.timed_out = true;
            self.left = 0;
        }
    }

    /// Spends one unit (a pattern): `false` (and remembered) when none is left.
    #[inline]
    pub fn spend(&mut self) -> bool {
        self.spend_n(1)
    }

    /// Spends `units` units of work at once (a scan of that many nodes, say): `false`
    /// (and remembered) when fewer are left or the deadline has passed.
    #[inline]
    pub fn spend_n(&mut self, units: u64) -> bool {
        if self.left < units {
            self.ran_out = true;
            return false;
        }
        self.left -= units;
        self.spent += units;
        if self.deadline.is_some() {
            return self.clock(units);
        }
        true
    }

    /// Reads the clock once every [`Limits::CLOCK_EVERY`] units.
    #[cold]
    fn clock(&mut self, units: u64) -> bool {
        if self.until_clock > units {
            self.until_clock -= units;
            return true;
        }
        self.until_clock = Limits::CLOCK_EVERY;
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.ran_out = true;
            self.timed_out = true;
            self.left = 0;
            return false;
        }
        true
    }

    /// The work refused so far is not needed: what it was for was proven otherwise
    /// (not after the deadline).
    pub fn proven(&mut self) {
        self.ran_out = self.timed_out;
    }

    /// Whether the deadline has passed.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Units left.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Units spent so far.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Whether some work was refused for lack of budget (or time).
    #[inline]
    pub fn ran_out(&self) -> bool {
        self.ran_out
    }

    /// The verdict for something not placed: [`Verdict::Exhausted`] once the budget
    /// has run out, [`Verdict::NoFit`] otherwise.
    #[inline]
    pub fn unplaced<T>(&self) -> Verdict<T> {
        if self.ran_out {
            Verdict::Exhausted
        } else {
            Verdict::NoFit
        }
    }

    /// How the query's search ended.
    pub fn search(&self) -> Search {
        if self.ran_out {
            Search::Exhausted
        } else {
            Search::Complete
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_remembered() {
        let mut b = Budget::new(2);
        assert_eq!(b.unplaced::<()>(), Verdict::NoFit);
        assert!(b.spend() && b.spend());
        assert_eq!(
            (b.left(), b.ran_out(), b.search()),
            (0, false, Search::Complete)
        );
        assert!(!b.spend());
        assert_eq!((b.left(), b.ran_out()), (0, true));
        assert_eq!(b.unplaced::<u8>(), Verdict::Exhausted);
        assert_eq!(b.search(), Search::Exhausted);
        assert!(Verdict::Placed(1).is_placed() && !Verdict::<u8>::NoFit.is_placed());
        assert!(!Budget::new(0).spend());
    }

    #[test]
    fn work_is_spent_in_units_and_a_refusal_is_remembered() {
        let mut b = Budget::new(10);
        assert!(b.spend_n(7));
        assert_eq!((b.left(), b.spent()), (3, 7));
        // Four more than are left: refused and remembered; smaller work still passes.
        assert!(!b.spend_n(4));
        assert!(b.spend());
        assert_eq!((b.spent(), b.search()), (8, Search::Exhausted));
    }

    #[test]
    fn a_share_is_half_of_what_is_left_and_is_given_back() {
        let mut b = Budget::new(101);
        assert!(b.spend());
        let mut share = b.share();
        assert_eq!(share.left(), 50);
        assert!((0..50).all(|_| share.spend()));
        assert!(!share.spend());
        assert_eq!(
            b.search(),
            Search::Complete,
            "the share's refusal is its own"
        );
        b.absorb(share);
        assert_eq!(
            (b.left(), b.spent(), b.search()),
            (50, 51, Search::Exhausted)
        );
        assert!(b.spend_n(50), "the rest is still there");
        // A share that saw the deadline pass stops the whole query.
        let mut b = Budget::of(Limits::work(100).deadline(Instant::now()));
        let mut share = b.share();
        assert!(!share.spend());
        b.absorb(share);
        assert!(!b.spend());
    }

    #[test]
    fn a_part_tried_over_gives_back_its_spending_not_its_refusals() {
        let mut b = Budget::new(160);
        let mut p = b.part(10);
        assert_eq!(p.left(), 10);
        assert_eq!(b.part(1000).left(), 160, "at most what is left");
        assert!(p.spend_n(10));
        assert!(!p.spend(), "the part is spent");
        b.absorb_retried(p);
        assert_eq!((b.left(), b.spent()), (150, 10));
        assert_eq!(
            b.unplaced::<()>(),
            Verdict::NoFit,
            "the retry's answer stands"
        );
        // Taken back plainly, the refusal counts.
        let mut p = b.part(10);
        assert!(!p.spend_n(100));
        b.absorb(p);
        assert_eq!(b.unplaced::<()>(), Verdict::Exhausted);
    }

    #[test]
    fn a_passed_deadline_stops_the_work() {
        let past = Instant::now();
        let mut b = Budget::of(Limits::work(u64::MAX).deadline(past));
        // The clock is read at the first unit, then every CLOCK_EVERY units.
        assert!(!b.spend());
        assert_eq!(b.unplaced::<()>(), Verdict::Exhausted);
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        let mut b = Budget::of(Limits::work(5000).deadline(far));
        assert!((0..5000).all(|_| b.spend()));
        assert!(!b.spend());
    }
}
