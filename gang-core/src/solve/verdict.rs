//! What one try at placing answers, and the exact search's budget for one query.

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

/// The exact search's budget for one query: how many patterns it may still try, and
/// whether it was refused one. Refusals are remembered, so every answer of the query
/// can tell a proven "no fit" from an exhausted search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    left: u64,
    ran_out: bool,
}

impl Budget {
    /// A budget of `patterns` patterns.
    pub fn new(patterns: u64) -> Budget {
        Budget {
            left: patterns,
            ran_out: false,
        }
    }

    /// Spends one pattern: `false` (and remembered) when none is left.
    #[inline]
    pub fn spend(&mut self) -> bool {
        if self.left == 0 {
            self.ran_out = true;
            return false;
        }
        self.left -= 1;
        true
    }

    /// Patterns left.
    #[cfg(test)]
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Whether a pattern was refused for lack of budget.
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
}
