//! The simulation's units and indices: time in integer milliseconds, and newtypes for
//! a job, a compiled request and a job's state stamp, so that no index is taken for
//! another.

/// Milliseconds since the start of the trace.
pub(crate) type Ms = u64;

/// Seconds (as given) to milliseconds, rounded to the nearest.
pub(crate) fn ms(s: f64) -> Ms {
    (s * 1000.0).round().max(0.0) as Ms
}

/// Milliseconds to seconds.
pub(crate) fn secs(t: Ms) -> f64 {
    t as f64 / 1000.0
}

/// milli-GPU × ms to GPU-hours.
pub(crate) fn gpu_hours(x: u128) -> f64 {
    x as f64 / 3.6e9
}

/// A job, by its place in the trace (also the tie-break between events of one class at
/// one time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct JobIx(pub(crate) u32);

impl JobIx {
    /// The job at position `i` of the trace.
    pub(crate) fn at(i: usize) -> JobIx {
        JobIx(i as u32)
    }

    /// The index into the jobs.
    pub(crate) fn ix(self) -> usize {
        self.0 as usize
    }
}

/// A compiled request, by its place in the simulation's table of requests (jobs that
/// ask the same share one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ReqIx(pub(crate) u32);

impl ReqIx {
    /// The index into the table of requests.
    pub(crate) fn ix(self) -> usize {
        self.0 as usize
    }
}

/// A job's state stamp: it moves on at every change of the job's state. A timer
/// carries the stamp it was set under; once the job's stamp has moved on, the timer is
/// stale (it belongs to a state the job has left) and is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stamp(u64);

impl Stamp {
    /// Moves on: every timer set before is stale from now.
    pub(crate) fn bump(&mut self) {
        self.0 += 1;
    }
}
