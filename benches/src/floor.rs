//! The floor kernel: one pass over dense free-capacity columns.
//!
//! For every node, `min over requested resources of free / request` (zero where the
//! node is not eligible), summed over all nodes. Any design that looks at every node
//! on a query pays at least this: it is the baseline the *cold* query (a request shape
//! never seen before) is compared with. The columns are `u64` milli-units, as in
//! `gang-core`, and eligibility is a `u64`-word bitset applied a word at a time.

/// Free capacity as one dense column per resource, plus an eligibility bitset.
#[derive(Debug, Clone)]
pub struct Columns {
    free: Vec<Vec<u64>>,
    eligible: Vec<u64>,
    len: usize,
}

impl Columns {
    /// Columns `free[resource][node]` (milli-units) and per-node eligibility.
    ///
    /// # Panics
    /// If the columns and `eligible` disagree in length.
    pub fn new(free: Vec<Vec<u64>>, eligible: Vec<bool>) -> Self {
        let len = eligible.len();
        assert!(free.iter().all(|c| c.len() == len), "column lengths differ");
        let mut words = vec![0u64; len.div_ceil(64)];
        for (i, &e) in eligible.iter().enumerate() {
            if e {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        Columns {
            free,
            eligible: words,
            len,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the columns and the bitset (the floor's whole working set).
    pub fn bytes(&self) -> usize {
        self.free.len() * self.len * 8 + self.eligible.len() * 8
    }

    /// Sum over eligible nodes of `min over (resource, request) in req of free / request`.
    /// Requests of zero are ignored; with no request every eligible node counts
    /// `u32::MAX`, as an uncapped fit does in `gang-core`.
    pub fn fit_sum(&self, req: &[(usize, u64)]) -> u64 {
        let mut cols: [(&[u64], u64); 4] = [(&[], 1); 4];
        let mut k = 0;
        for &(r, q) in req.iter().filter(|&&(_, q)| q > 0) {
            if k == cols.len() {
                return self.fit_sum_slow(req);
            }
            cols[k] = (self.free[r].as_slice(), q);
            k += 1;
        }
        match k {
            0 => self.kernel::<0>([]),
            1 => self.kernel([cols[0]]),
            2 => self.kernel([cols[0], cols[1]]),
            3 => self.kernel([cols[0], cols[1], cols[2]]),
            _ => self.kernel([cols[0], cols[1], cols[2], cols[3]]),
        }
    }

    /// The pass itself, with the number of requested resources known at compile time.
    #[inline(always)]
    fn kernel<const N: usize>(&self, cols: [(&[u64], u64); N]) -> u64 {
        let mut total = 0u64;
        for (w, &word) in self.eligible.iter().enumerate() {
            if word == 0 {
                continue;
            }
            let base = w * 64;
            let end = (base + 64).min(self.len);
            for i in base..end {
                let mut fit = u64::from(u32::MAX);
                for &(col, q) in &cols {
                    fit = fit.min(col[i] / q);
                }
                // Branch-free mask: all ones when eligible, zero otherwise.
                let mask = 0u64.wrapping_sub((word >> (i - base)) & 1);
                total += fit & mask;
            }
        }
        total
    }

    fn fit_sum_slow(&self, req: &[(usize, u64)]) -> u64 {
        (0..self.len)
            .filter(|&i| self.eligible[i / 64] >> (i % 64) & 1 == 1)
            .map(|i| {
                req.iter()
                    .filter(|&&(_, q)| q > 0)
                    .map(|&(r, q)| self.free[r][i] / q)
                    .fold(u64::from(u32::MAX), u64::min)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_fits_of_eligible_nodes() {
        let n = 130;
        let gpu: Vec<u64> = (0..n).map(|i| (i % 9) * 1000).collect();
        let cpu: Vec<u64> = (0..n).map(|_| 10_000).collect();
        let eligible: Vec<bool> = (0..n).map(|i| i % 5 != 0).collect();
        let c = Columns::new(vec![gpu.clone(), cpu], eligible.clone());
        let want: u64 = (0..n as usize)
            .filter(|&i| eligible[i])
            .map(|i| (gpu[i] / 2000).min(10_000 / 3000))
            .sum();
        assert_eq!(c.fit_sum(&[(0, 2000), (1, 3000)]), want);
        assert_eq!(c.fit_sum_slow(&[(0, 2000), (1, 3000)]), want);
        let one: u64 = (0..n as usize)
            .filter(|&i| eligible[i])
            .map(|i| gpu[i] / 1000)
            .sum();
        assert_eq!(c.fit_sum(&[(0, 1000), (1, 0)]), one);
        assert_eq!(c.len(), 130);
    }
}
