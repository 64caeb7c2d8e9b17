//! Seeded randomness that is the same on every platform.
//!
//! - [`Rng`] is SplitMix64 (Steele, Lea & Flood 2014): a 64-bit counter passed through a
//!   fixed mixing function. Small, fast, and defined bit for bit.
//! - [`draw`] is the same mixing function applied to a *key* (seed, stream, job,
//!   attempt, member…), so a random decision depends only on what it is about, never
//!   on the order in which the simulation happens to ask for it. A reimplementation
//!   (the Python reference simulator) gets the same numbers from the same keys.
//! - [`ln`] and [`exp`] are computed here with `+ - * /` only (no platform `libm`,
//!   whose last bits differ between systems), so log-normal and exponential samples
//!   are identical everywhere. They agree with the standard library to about 1e-15
//!   relative error.

/// The SplitMix64 output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// A small, fast, seedable generator (SplitMix64). Not for cryptography.
///
/// ```
/// use gang_sim::Rng;
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// let u = a.uniform();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`; `0` for `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi < lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub fn uniform(&mut self) -> f64 {
        to_unit(self.next_u64())
    }

    /// A standard normal deviate (Marsaglia's polar method).
    pub fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * ln(s) / s).sqrt();
            }
        }
    }

    /// An exponential deviate of mean `mean`.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * ln(1.0 - self.uniform())
    }
}

/// `[0, 1)` from 64 random bits (the top 53).
fn to_unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform `[0, 1)` number determined by `key` alone: SplitMix64's mixing applied to
/// the key's words in turn (`h = mix(h ^ word + golden)` from `h = 0`).
pub(crate) fn draw(key: &[u64]) -> f64 {
    let mut h = 0u64;
    for &w in key {
        h = mix((h ^ w).wrapping_add(GOLDEN));
    }
    to_unit(h)
}

/// Natural logarithm with `+ - * /` only. `ln(0) = -inf`; negative or NaN → NaN.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    // x = m * 2^e with m in [1, 2) (subnormals scaled first).
    let (mut x, mut e) = (x, 0i64);
    if x < f64::MIN_POSITIVE {
        x *= (1u64 << 54) as f64;
        e -= 54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    for _ in 0..20 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

/// `e^x` with `+ - * /` only; overflows to `inf`, underflows to `0`.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x > 709.7 {
        return f64::INFINITY;
    }
    if x < -745.0 {
        return 0.0;
    }
    // x = k ln2 + r, |r| <= ln2 / 2.
    let k = (x / std::f64::consts::LN_2).round();
    let r = x - k * std::f64::consts::LN_2;
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..=24 {
        term *= r / f64::from(i);
        sum += term;
    }
    // Scale by 2^k in two steps (k may reach ±1075 near the limits).
    let k = k as i64;
    let half = k / 2;
    let p = |n: i64| f64::from_bits(((n + 1023) as u64) << 52);
    sum * p(half) * p(k - half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_and_exp_agree_with_std() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let x = rng.uniform() * 1e6 + 1e-9;
            let (a, b) = (ln(x), x.ln());
            assert!(
                (a - b).abs() <= 1e-14 * b.abs().max(1.0),
                "ln {x}: {a} vs {b}"
            );
            let y = rng.uniform() * 80.0 - 40.0;
            let (a, b) = (exp(y), y.exp());
            assert!((a - b).abs() <= 1e-14 * b, "exp {y}: {a} vs {b}");
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert!(ln(-1.0).is_nan());
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert_eq!(exp(1000.0), f64::INFINITY);
        assert_eq!(exp(-1000.0), 0.0);
        assert!((ln(1e-310) - 1e-310f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn draws_depend_on_the_key_only() {
        assert_eq!(draw(&[1, 2, 3]), draw(&[1, 2, 3]));
        assert_ne!(draw(&[1, 2, 3]), draw(&[1, 2, 4]));
        assert_ne!(draw(&[1, 2]), draw(&[2, 1]));
        // Roughly uniform.
        let n = 10_000;
        let below_half = (0..n).filter(|&i| draw(&[9, i]) < 0.5).count();
        assert!((4_700..5_300).contains(&below_half), "{below_half}");
    }

    #[test]
    fn normal_and_exponential_have_the_right_moments() {
        let mut rng = Rng::new(3);
        let n = 20_000;
        let xs: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
        let es: Vec<f64> = (0..n).map(|_| rng.exponential(10.0)).collect();
        let mean = es.iter().sum::<f64>() / n as f64;
        assert!((mean - 10.0).abs() < 0.3, "{mean}");
        assert!(es.iter().all(|&e| e >= 0.0));
    }
}
