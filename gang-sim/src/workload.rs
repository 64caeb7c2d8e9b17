//! A seeded workload generator: Poisson (or replayed) arrivals, gang sizes from a power
//! law over {1, 2, 4, …, 512} members, log-normal durations, a mix of sensitivity
//! classes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Policy;
use crate::error::SimError;
use crate::rng::{exp, ln, Rng};
use crate::trace::{JobSpec, Trace};

/// When jobs arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    /// A Poisson process of `per_hour` jobs per hour, from time 0.
    Poisson {
        /// Mean arrivals per hour.
        per_hour: f64,
    },
    /// These submission times, in seconds (one job each; `jobs` is ignored).
    Replay {
        /// Submission times.
        times: Vec<f64>,
    },
}

/// What [`WorkloadSpec::generate`] makes.
///
/// ```
/// use gang_sim::WorkloadSpec;
/// let spec = WorkloadSpec { jobs: 200, seed: 5, ..WorkloadSpec::default() };
/// let t = spec.generate()?;
/// assert_eq!(t.jobs.len(), 200);
/// assert_eq!(t, spec.generate()?); // same seed, same trace
/// assert!(t.jobs.iter().all(|j| j.roles[0].get_count().is_power_of_two() && j.roles[0].get_count() <= 512));
/// assert!(t.jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
/// # Ok::<(), gang_sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Number of jobs (Poisson arrivals).
    pub jobs: usize,
    /// Seed.
    pub seed: u64,
    /// Arrivals.
    pub arrival: Arrival,
    /// Power-law exponent: `P(2^i members) ∝ 2^(-alpha·i)`.
    pub size_alpha: f64,
    /// Largest gang (rounded down to a power of two).
    pub max_members: u32,
    /// GPUs per member of multi-member gangs.
    pub member_gpus: u32,
    /// GPUs of a one-member job, drawn uniformly from this list.
    pub single_gpus: Vec<u32>,
    /// Median ideal run time, seconds.
    pub duration_median: f64,
    /// Log-normal sigma of the run time.
    pub duration_sigma: f64,
    /// Longest run time, seconds (longer draws are cut).
    pub duration_max: f64,
    /// Weights of the sensitivity classes.
    pub sensitivity: BTreeMap<String, f64>,
    /// Checkpoint interval of every job, seconds (`null`: none).
    pub checkpoint: Option<f64>,
    /// Tenants `tenant-0` … (jobs drawn uniformly).
    pub tenants: u32,
    /// Policy written into every job (`null`: the configuration's).
    pub policy: Option<Policy>,
    /// Target offered load on the run's cluster (see [`crate::offered_load`]): in a run
    /// document, the generated arrivals are rescaled so that the trace's offered load
    /// is exactly this; `null`: the arrivals as drawn. [`WorkloadSpec::generate`]
    /// alone (no cluster) ignores it.
    pub load: Option<f64>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            jobs: 100,
            seed: 0,
            arrival: Arrival::Poisson { per_hour: 60.0 },
            size_alpha: 1.0,
            max_members: 512,
            member_gpus: 8,
            single_gpus: vec![1, 2, 4, 8],
            duration_median: 3600.0,
            duration_sigma: 1.0,
            duration_max: 7.0 * 86_400.0,
            sensitivity: BTreeMap::from([
                ("low".to_owned(), 0.3),
                ("medium".to_owned(), 0.5),
                ("high".to_owned(), 0.2),
            ]),
            checkpoint: Some(1800.0),
            tenants: 4,
            policy: None,
            load: None,
        }
    }
}

impl WorkloadSpec {
    /// Generates the trace. Deterministic in the spec (on every platform: see
    /// [`Rng`]).
    ///
    /// # Errors
    /// [`SimError::Config`] (fields under `workload.`) for a non-positive rate, an empty
    /// class mix or a negative parameter.
    pub fn generate(&self) -> Result<Trace, SimError> {
        self.generate_within(crate::config::Limits::default().max_jobs)
    }

    /// What the spec asks that the generator will not do, as warnings for a run's
    /// summary: replayed arrivals with fewer times than `jobs` (a replay makes one job
    /// per time; `jobs` is ignored). `jobs` left at its default (100) is taken as not
    /// given.
    ///
    /// ```
    /// use gang_sim::{Arrival, WorkloadSpec};
    /// let replay = Arrival::Replay { times: vec![0.0, 60.0] };
    /// let spec = WorkloadSpec { jobs: 500, arrival: replay.clone(), ..WorkloadSpec::default() };
    /// assert!(spec.warnings()[0].contains("2 times, fewer than jobs (500)"));
    /// assert!(WorkloadSpec { arrival: replay, ..WorkloadSpec::default() }.warnings().is_empty());
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        match &self.arrival {
            Arrival::Replay { times }
                if times.len() < self.jobs && self.jobs != WorkloadSpec::default().jobs =>
            {
                vec![format!(
                    "arrival.replay has {} times, fewer than jobs ({}): the trace has {} \
                     jobs, one per time",
                    times.len(),
                    self.jobs,
                    times.len()
                )]
            }
            _ => Vec::new(),
        }
    }

    /// [`WorkloadSpec::generate`], making at most `max_jobs` jobs ([`crate::Limits`]).
    ///
    /// ```
    /// use gang_sim::WorkloadSpec;
    /// let spec = WorkloadSpec { jobs: 1_000_000_000_000, ..WorkloadSpec::default() };
    /// let err = spec.generate().unwrap_err(); // refused before anything is allocated
    /// assert_eq!(err.field(), "workload.jobs");
    /// assert!(err.to_string().contains("limits.max_jobs"), "{err}");
    /// assert_eq!(WorkloadSpec { jobs: 3, ..spec }.generate_within(3)?.jobs.len(), 3);
    /// # Ok::<(), gang_sim::SimError>(())
    /// ```
    ///
    /// # Errors
    /// As [`WorkloadSpec::generate`]; [`SimError::Config`] naming `workload.jobs` (or
    /// `workload.arrival.replay.times`) when there would be more than `max_jobs` jobs.
    pub fn generate_within(&self, max_jobs: u64) -> Result<Trace, SimError> {
        let bad = |f: &str, m: &str| SimError::config(format!("workload.{f}"), m);
        let (field, n) = match &self.arrival {
            Arrival::Poisson { .. } => ("jobs", self.jobs as u64),
            Arrival::Replay { times } => ("arrival.replay.times", times.len() as u64),
        };
        if n > max_jobs {
            return Err(bad(
                field,
                &format!("{n} jobs, over limits.max_jobs ({max_jobs}); raise it to allow more"),
            ));
        }
        let weights: Vec<(&String, f64)> = self.sensitivity.iter().map(|(k, &w)| (k, w)).collect();
        let total_w: f64 = weights.iter().map(|w| w.1).sum();
        if weights.iter().any(|w| !(w.1.is_finite() && w.1 >= 0.0)) || total_w <= 0.0 {
            return Err(bad(
                "sensitivity",
                "weights must be non-negative, not all zero",
            ));
        }
        if !(self.size_alpha.is_finite()) {
            return Err(bad("size_alpha", "must be a number"));
        }
        if self.max_members == 0 {
            return Err(bad("max_members", "at least 1"));
        }
        if self.single_gpus.is_empty() {
            return Err(bad("single_gpus", "at least one choice"));
        }
        for (f, v) in [
            ("duration_median", self.duration_median),
            ("duration_max", self.duration_max),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(f, "must be positive"));
            }
        }
        if !(self.duration_sigma.is_finite() && self.duration_sigma >= 0.0) {
            return Err(bad("duration_sigma", "must be non-negative"));
        }
        let times: Vec<f64> = match &self.arrival {
            Arrival::Poisson { per_hour } => {
                if !(per_hour.is_finite() && *per_hour > 0.0) {
                    return Err(bad("arrival.poisson.per_hour", "must be positive"));
                }
                let mut rng = Rng::new(self.seed ^ 0xa11);
                let mut t = 0.0;
                (0..self.jobs)
                    .map(|_| {
                        let now = t;
                        t += rng.exponential(3600.0 / per_hour);
                        (now * 1000.0).round() / 1000.0
                    })
                    .collect()
            }
            Arrival::Replay { times } => {
                if times.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
                    return Err(bad("arrival.replay.times", "times must be non-negative"));
                }
                times.clone()
            }
        };
        let levels = 32 - self.max_members.leading_zeros(); // sizes 2^0 .. 2^(levels-1)
        let size_w: Vec<f64> = (0..levels)
            .map(|i| exp(-self.size_alpha * f64::from(i) * std::f64::consts::LN_2))
            .collect();
        let size_total: f64 = size_w.iter().sum();
        let mut rng = Rng::new(self.seed);
        let mut jobs = Vec::with_capacity(times.len());
        for (i, &submit) in times.iter().enumerate() {
            let mut u = rng.uniform() * size_total;
            let mut k = 0;
            while k + 1 < size_w.len() && u >= size_w[k] {
                u -= size_w[k];
                k += 1;
            }
            let members = 1u32 << k;
            let gpus = if members == 1 {
                self.single_gpus[rng.below(self.single_gpus.len() as u64) as usize]
            } else {
                self.member_gpus
            };
            let z = rng.normal();
            let d = exp(ln(self.duration_median) + self.duration_sigma * z)
                .min(self.duration_max)
                .max(1.0);
            let d = d.round();
            let mut u = rng.uniform() * total_w;
            let mut class = weights[weights.len() - 1].0;
            for (name, w) in &weights {
                if u < *w {
                    class = name;
                    break;
                }
                u -= w;
            }
            let tenant = rng.below(u64::from(self.tenants.max(1)));
            let mut j = JobSpec::new(&format!("job{i}"), submit, d, members, u64::from(gpus));
            j.line = i + 1;
            j.sensitivity = Some(class.clone());
            j.checkpoint = self.checkpoint;
            j.tenant = format!("tenant-{tenant}");
            j.policy = self.policy.clone();
            jobs.push(j);
        }
        Ok(Trace::new(jobs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_power_law_and_durations_the_log_normal() {
        let spec = WorkloadSpec {
            jobs: 20_000,
            seed: 1,
            size_alpha: 1.0,
            ..WorkloadSpec::default()
        };
        let t = spec.generate().unwrap();
        let count = |n: u32| {
            t.jobs
                .iter()
                .filter(|j| j.roles[0].get_count() == n)
                .count() as f64
        };
        // P(1) = 1 / (1 + 1/2 + … + 1/512) ≈ 0.5005; each size about half the one before.
        let p1 = count(1) / 20_000.0;
        assert!((p1 - 0.5005).abs() < 0.02, "{p1}");
        assert!((count(2) / count(1) - 0.5).abs() < 0.05);
        assert!((count(4) / count(2) - 0.5).abs() < 0.08);
        // Median of a log-normal is its median parameter.
        let mut d: Vec<f64> = t.jobs.iter().map(|j| j.duration).collect();
        d.sort_by(f64::total_cmp);
        let median = d[d.len() / 2];
        assert!((median - 3600.0).abs() < 200.0, "{median}");
        // Poisson at 60 per hour: about one a minute.
        let last = t.jobs.last().unwrap().submit;
        let rate = 20_000.0 / (last / 3600.0);
        assert!((rate - 60.0).abs() < 3.0, "{rate}");
        // Class mix.
        let high = t
            .jobs
            .iter()
            .filter(|j| j.sensitivity.as_deref() == Some("high"))
            .count();
        assert!((high as f64 / 20_000.0 - 0.2).abs() < 0.02);
    }

    #[test]
    fn seeds_and_bad_parameters() {
        let a = WorkloadSpec {
            seed: 1,
            ..WorkloadSpec::default()
        }
        .generate()
        .unwrap();
        let b = WorkloadSpec {
            seed: 2,
            ..WorkloadSpec::default()
        }
        .generate()
        .unwrap();
        assert_ne!(a, b);
        let replay = WorkloadSpec {
            arrival: Arrival::Replay {
                times: vec![0.0, 5.0, 5.0],
            },
            ..WorkloadSpec::default()
        };
        let t = replay.generate().unwrap();
        assert_eq!(
            t.jobs.iter().map(|j| j.submit).collect::<Vec<_>>(),
            [0.0, 5.0, 5.0]
        );
        let bad = WorkloadSpec {
            arrival: Arrival::Poisson { per_hour: 0.0 },
            ..WorkloadSpec::default()
        };
        assert_eq!(
            bad.generate().unwrap_err().field(),
            "workload.arrival.poisson.per_hour"
        );
    }
}
