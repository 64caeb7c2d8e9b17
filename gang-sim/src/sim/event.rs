//! Events and the agenda that orders them (crate docs: event semantics).
//!
//! Events at one time are handled in the order of their class (the order of the
//! variants of [`Event`]), then by what they are about (the job in trace order, the
//! node, the failure's number), then by the order they were scheduled.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::ids::{JobIx, Ms, Stamp};
use crate::placer::NodeIx;

/// Something that happens at a time. The job timers carry the job's [`Stamp`] when
/// they were set: a timer of a state the job has left is stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A running job's remaining work is done.
    Finish(JobIx, Stamp),
    /// The job's cancellation time.
    Cancel(JobIx),
    /// A failed node is back.
    Repair(NodeIx),
    /// Failure number `k` of the failure process (its node is drawn when it happens).
    Fail(u64),
    /// A failure of this node that the configuration schedules.
    FailScheduled(NodeIx),
    /// Every member of an attempt (or every replacement) is ready.
    Ready(JobIx, Stamp),
    /// A readiness timeout, or the end of a paused job's wait for replacements.
    Timeout(JobIx, Stamp),
    /// Backoff over: back into the queue.
    Requeue(JobIx, Stamp),
    /// A job under timed relaxation has waited long enough at its level.
    Relax(JobIx, Stamp),
    /// The job is submitted.
    Arrive(JobIx),
}

impl Event {
    /// The class: the order of events at equal times.
    fn class(self) -> u8 {
        match self {
            Event::Finish(..) => 0,
            Event::Cancel(_) => 1,
            Event::Repair(_) => 2,
            Event::Fail(_) | Event::FailScheduled(_) => 3,
            Event::Ready(..) => 4,
            Event::Timeout(..) => 5,
            Event::Requeue(..) => 6,
            Event::Relax(..) => 7,
            Event::Arrive(_) => 8,
        }
    }

    /// What the event is about, the order within a class: the job, the node, or the
    /// failure's number.
    fn subject(self) -> u64 {
        match self {
            Event::Finish(j, _)
            | Event::Cancel(j)
            | Event::Ready(j, _)
            | Event::Timeout(j, _)
            | Event::Requeue(j, _)
            | Event::Relax(j, _)
            | Event::Arrive(j) => u64::from(j.0),
            Event::Repair(n) | Event::FailScheduled(n) => u64::from(n.0),
            Event::Fail(k) => k,
        }
    }

    /// A timer of a job's state: the job, and its stamp when the timer was set.
    pub(crate) fn timer(self) -> Option<(JobIx, Stamp)> {
        match self {
            Event::Finish(j, s)
            | Event::Ready(j, s)
            | Event::Timeout(j, s)
            | Event::Requeue(j, s)
            | Event::Relax(j, s) => Some((j, s)),
            _ => None,
        }
    }

    /// Part of the failure process, which alone never keeps a simulation going.
    pub(crate) fn is_failure(self) -> bool {
        matches!(self, Event::Fail(_) | Event::FailScheduled(_))
    }
}

/// An event with its time and its place in the order of scheduling.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scheduled {
    pub(crate) at: Ms,
    pub(crate) event: Event,
    seq: u64,
}

impl Scheduled {
    fn key(&self) -> (Ms, u8, u64, u64) {
        (self.at, self.event.class(), self.event.subject(), self.seq)
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Scheduled {}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// The events to come, earliest first.
#[derive(Debug, Default)]
pub(crate) struct Agenda {
    heap: BinaryHeap<Reverse<Scheduled>>,
    seq: u64,
    /// Events in the agenda other than failures (stale timers included until popped).
    live: usize,
}

impl Agenda {
    pub(crate) fn push(&mut self, at: Ms, event: Event) {
        self.seq += 1;
        if !event.is_failure() {
            self.live += 1;
        }
        self.heap.push(Reverse(Scheduled {
            at,
            event,
            seq: self.seq,
        }));
    }

    /// The next event, left in the agenda.
    pub(crate) fn peek(&self) -> Option<Scheduled> {
        self.heap.peek().map(|r| r.0)
    }

    /// The next event, taken out.
    pub(crate) fn pop(&mut self) -> Option<Scheduled> {
        let Reverse(ev) = self.heap.pop()?;
        if !ev.event.is_failure() {
            self.live -= 1;
        }
        Some(ev)
    }

    /// How many events other than failures are in the agenda (stale timers among them).
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Every event in the agenda, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Scheduled> + '_ {
        self.heap.iter().map(|r| &r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_class_then_subject_then_scheduling() {
        let (a, b) = (JobIx(1), JobIx(0));
        let mut ag = Agenda::default();
        ag.push(5, Event::Arrive(b));
        ag.push(5, Event::Finish(a, Stamp::default()));
        ag.push(3, Event::Arrive(a));
        ag.push(5, Event::Fail(9));
        ag.push(5, Event::FailScheduled(NodeIx(2)));
        ag.push(5, Event::Finish(b, Stamp::default()));
        ag.push(5, Event::Arrive(b));
        assert_eq!(ag.live(), 5);
        let mut order = Vec::new();
        while let Some(ev) = ag.pop() {
            order.push((ev.at, ev.event));
        }
        let s = Stamp::default();
        assert_eq!(
            order,
            [
                (3, Event::Arrive(a)),
                (5, Event::Finish(b, s)),
                (5, Event::Finish(a, s)),
                (5, Event::FailScheduled(NodeIx(2))),
                (5, Event::Fail(9)),
                (5, Event::Arrive(b)),
                (5, Event::Arrive(b)),
            ]
        );
        assert_eq!(ag.live(), 0);
    }
}
