//! Accounting (crate docs: accounting): what a job holds and how its held GPU-time
//! splits into useful, wasted and idle, and the cluster's integrals of held and busy
//! GPUs.

use super::ids::Ms;
use crate::placer::ResId;

/// What a job's holding is counted as while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Phase {
    /// Between phases (released, or about to be): any holding counts as idle.
    #[default]
    None,
    /// Members initialising (classified when the attempt ends).
    Init,
    /// Running: useful, unless lost to a failure after the last checkpoint.
    Running,
    /// Waiting for replacements.
    Paused,
}

/// A job's held GPU-time (milli-GPU × ms), split exactly.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Acct {
    pub(crate) held: u128,
    pub(crate) useful: u128,
    pub(crate) wasted: u128,
    pub(crate) idle: u128,
    /// Held before the first useful progress.
    pub(crate) before: u128,
    /// Held during the current attempt's initialisation, not yet classified.
    pub(crate) init: u128,
}

/// What a job holds, since when, and how that holding is counted.
#[derive(Debug, Default)]
pub(crate) struct Holding {
    /// Its reservations.
    pub(crate) res: Vec<ResId>,
    /// GPUs (milli) they hold.
    pub(crate) gpu: u64,
    /// Start of the holding interval not yet counted.
    pub(crate) open: Ms,
    pub(crate) phase: Phase,
    /// Whether the job has made useful progress yet.
    pub(crate) progressed: bool,
    pub(crate) acct: Acct,
}

impl Holding {
    /// Closes the open holding interval at `now`, attributing it to the phase.
    pub(crate) fn close(&mut self, now: Ms) {
        let amount = u128::from(self.gpu) * u128::from(now.saturating_sub(self.open));
        self.open = now;
        if amount == 0 {
            return;
        }
        let a = &mut self.acct;
        a.held += amount;
        if !self.progressed {
            a.before += amount;
        }
        match self.phase {
            Phase::Init => a.init += amount,
            Phase::Paused => a.idle += amount,
            // Running intervals are classified by the caller (saved vs lost work).
            Phase::Running => a.useful += amount,
            Phase::None => a.idle += amount,
        }
    }

    /// Closes the interval and counts what follows as phase `p`; `busy` (GPUs held by
    /// running jobs) follows.
    pub(crate) fn set_phase(&mut self, now: Ms, p: Phase, busy: &mut u64) {
        self.close(now);
        if self.phase == Phase::Running {
            *busy -= self.gpu;
        }
        self.phase = p;
        if p == Phase::Running {
            *busy += self.gpu;
        }
    }

    /// The attempt became ready, or was cut short: its initialisation was idle holding.
    pub(crate) fn init_was_idle(&mut self) {
        let a = &mut self.acct;
        a.idle += std::mem::take(&mut a.init);
    }

    /// The attempt timed out or was lost: its initialisation was wasted.
    pub(crate) fn init_was_wasted(&mut self) {
        let a = &mut self.acct;
        a.wasted += std::mem::take(&mut a.init);
    }

    /// `lost` ms of running since the last checkpoint are lost: wasted, not useful.
    pub(crate) fn lose_work(&mut self, lost: Ms) {
        let amount = u128::from(self.gpu) * u128::from(lost);
        let a = &mut self.acct;
        a.useful -= amount.min(a.useful);
        a.wasted += amount;
    }

    /// Whether the split adds up: held = useful + wasted + idle + initialising.
    pub(crate) fn check(&self) -> Result<(), String> {
        let a = &self.acct;
        if a.held != a.useful + a.wasted + a.idle + a.init {
            return Err(format!(
                "held {} != useful {} + wasted {} + idle {} + initialising {}",
                a.held, a.useful, a.wasted, a.idle, a.init
            ));
        }
        Ok(())
    }
}

/// The cluster's integrals over time, and the GPUs held by running jobs now.
#[derive(Debug, Default)]
pub(crate) struct Integrals {
    /// GPUs (milli) held by running jobs now.
    pub(crate) busy: u64,
    /// ∫ held GPUs dt (milli-GPU × ms).
    pub(crate) held: u128,
    /// ∫ busy GPUs dt.
    pub(crate) busy_time: u128,
    /// The end of the utilisation window (the last submission): `held` and `busy`
    /// integrated up to it, so that the drain tail after the last arrival is left out.
    pub(crate) window_end: Ms,
    /// ∫ held GPUs dt up to `window_end`.
    pub(crate) held_window: u128,
    /// ∫ busy GPUs dt up to `window_end`.
    pub(crate) busy_window: u128,
    last_t: Ms,
}

impl Integrals {
    /// Integrates up to `t`, `held_gpu` having been held since the last time.
    pub(crate) fn advance(&mut self, t: Ms, held_gpu: u64) {
        let dt = u128::from(t.saturating_sub(self.last_t));
        self.held += u128::from(held_gpu) * dt;
        self.busy_time += u128::from(self.busy) * dt;
        let inside = u128::from(t.min(self.window_end).saturating_sub(self.last_t));
        self.held_window += u128::from(held_gpu) * inside;
        self.busy_window += u128::from(self.busy) * inside;
        self.last_t = self.last_t.max(t);
    }
}
