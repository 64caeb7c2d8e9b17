//! Node sets: dense `u64`-word bitsets, plus a sparse form for rare labels.

/// A fixed-length set of node indices, one bit per node, operated on a word at a time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Bitset {
    words: Vec<u64>,
    len: usize,
}

impl Bitset {
    pub fn new(len: usize) -> Self {
        Bitset {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    pub fn full(len: usize) -> Self {
        let mut b = Bitset {
            words: vec![!0; len.div_ceil(64)],
            len,
        };
        b.trim();
        b
    }

    fn trim(&mut self) {
        let rem = self.len % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The set's words: bit `i % 64` of word `i / 64` is node `i`; bits past
    /// [`len`](Bitset::len) are zero.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline]
    pub fn set(&mut self, i: usize, v: bool) {
        let w = &mut self.words[i / 64];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// A hash of the set's contents (FNV-1a over the words).
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.len as u64;
        for &w in &self.words {
            h ^= w;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// Whether any bit in `start..end` is set, a word at a time.
    pub fn any_in(&self, start: usize, end: usize) -> bool {
        let end = end.min(self.len);
        if start >= end {
            return false;
        }
        let (first, last) = (start / 64, (end - 1) / 64);
        let lo = !0u64 << (start % 64);
        let hi = !0u64 >> (63 - (end - 1) % 64);
        if first == last {
            return self.words[first] & lo & hi != 0;
        }
        self.words[first] & lo != 0
            || self.words[first + 1..last].iter().any(|&w| w != 0)
            || self.words[last] & hi != 0
    }

    /// Whether every bit in `start..end` is set (`true` for an empty range), a word at
    /// a time.
    pub fn all_in(&self, start: usize, end: usize) -> bool {
        if end > self.len {
            return false;
        }
        if start >= end {
            return true;
        }
        let (first, last) = (start / 64, (end - 1) / 64);
        let lo = !0u64 << (start % 64);
        let hi = !0u64 >> (63 - (end - 1) % 64);
        if first == last {
            return self.words[first] & lo & hi == lo & hi;
        }
        self.words[first] & lo == lo
            && self.words[first + 1..last].iter().all(|&w| w == !0)
            && self.words[last] & hi == hi
    }

    /// Sets bits `start..end`, a word at a time.
    pub fn set_range(&mut self, start: usize, end: usize) {
        self.fill_range(start, end, true);
    }

    /// Clears bits `start..end`, a word at a time.
    pub fn clear_range(&mut self, start: usize, end: usize) {
        self.fill_range(start, end, false);
    }

    fn fill_range(&mut self, start: usize, end: usize, v: bool) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        let (first, last) = (start / 64, (end - 1) / 64);
        for w in first..=last {
            let lo = if w == first {
                !0u64 << (start % 64)
            } else {
                !0
            };
            let hi = if w == last {
                !0u64 >> (63 - (end - 1) % 64)
            } else {
                !0
            };
            let mask = lo & hi;
            if v {
                self.words[w] |= mask;
            } else {
                self.words[w] &= !mask;
            }
        }
    }

    /// Keeps only bits `start..end`.
    pub fn keep_range(&mut self, start: usize, end: usize) {
        self.clear_range(0, start);
        self.clear_range(end, self.len);
    }

    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn and_with(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    pub fn and_not_with(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    pub fn or_with(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub fn negate(&mut self) {
        for w in &mut self.words {
            *w = !*w;
        }
        self.trim();
    }

    /// Indices of set bits in `start..end`, ascending.
    pub fn ones_in(&self, start: usize, end: usize) -> Ones<'_> {
        let end = end.min(self.len);
        let start = start.min(end);
        let word = start / 64;
        let cur = if start < end {
            self.words[word] & (!0u64 << (start % 64))
        } else {
            0
        };
        Ones {
            words: &self.words,
            word,
            cur,
            end,
        }
    }

    #[cfg(test)]
    pub fn ones(&self) -> Ones<'_> {
        self.ones_in(0, self.len)
    }
}

/// Iterator over set bits, a word at a time.
pub(crate) struct Ones<'a> {
    words: &'a [u64],
    word: usize,
    cur: u64,
    end: usize,
}

impl Iterator for Ones<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.cur != 0 {
                let i = self.word * 64 + self.cur.trailing_zeros() as usize;
                if i >= self.end {
                    return None;
                }
                self.cur &= self.cur - 1;
                return Some(i);
            }
            self.word += 1;
            if self.word * 64 >= self.end {
                return None;
            }
            self.cur = self.words[self.word];
        }
    }
}

/// A node set as stored in the label and taint indexes: a sorted list for rare values
/// (a hostname label has one node per value), a bitset for common ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeSet {
    Sparse(Vec<u32>),
    Dense(Bitset),
}

impl NodeSet {
    /// Builds from ascending indices; dense once more than one node in 64 is a member.
    pub fn from_sorted(indices: Vec<u32>, len: usize) -> Self {
        if indices.len() * 64 > len {
            let mut b = Bitset::new(len);
            for &i in &indices {
                b.set(i as usize, true);
            }
            NodeSet::Dense(b)
        } else {
            NodeSet::Sparse(indices)
        }
    }

    pub fn contains(&self, i: usize) -> bool {
        match self {
            NodeSet::Sparse(v) => v.binary_search(&(i as u32)).is_ok(),
            NodeSet::Dense(b) => b.get(i),
        }
    }

    /// `target |= self`
    pub fn or_into(&self, target: &mut Bitset) {
        match self {
            NodeSet::Sparse(v) => v.iter().for_each(|&i| target.set(i as usize, true)),
            NodeSet::Dense(b) => target.or_with(b),
        }
    }

    /// `target &= !self`
    pub fn and_not_into(&self, target: &mut Bitset) {
        match self {
            NodeSet::Sparse(v) => v.iter().for_each(|&i| target.set(i as usize, false)),
            NodeSet::Dense(b) => target.and_not_with(b),
        }
    }

    /// `target &= self`
    pub fn and_into(&self, target: &mut Bitset) {
        match self {
            NodeSet::Dense(b) => target.and_with(b),
            NodeSet::Sparse(v) => {
                let mut keep = Bitset::new(target.len());
                for &i in v {
                    if target.get(i as usize) {
                        keep.set(i as usize, true);
                    }
                }
                *target = keep;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_and_iteration() {
        let mut a = Bitset::new(130);
        for i in [0, 5, 63, 64, 100, 129] {
            a.set(i, true);
        }
        assert_eq!(a.count(), 6);
        assert_eq!(a.ones().collect::<Vec<_>>(), vec![0, 5, 63, 64, 100, 129]);
        assert_eq!(a.ones_in(5, 100).collect::<Vec<_>>(), vec![5, 63, 64]);
        assert_eq!(a.ones_in(64, 65).collect::<Vec<_>>(), vec![64]);
        assert_eq!(a.ones_in(130, 130).count(), 0);
        for (lo, hi) in [
            (0, 1),
            (1, 5),
            (1, 6),
            (6, 63),
            (6, 64),
            (65, 100),
            (64, 65),
            (101, 129),
            (101, 130),
            (0, 130),
            (5, 5),
        ] {
            assert_eq!(a.any_in(lo, hi), (lo..hi).any(|i| a.get(i)), "{lo}..{hi}");
        }
        // `all_in` against the bits one by one, on a set and its complement.
        let mut c = Bitset::full(130);
        c.and_not_with(&a);
        for s in [&a, &c, &Bitset::full(130)] {
            for lo in 0..=130 {
                for hi in lo..=130 {
                    assert_eq!(s.all_in(lo, hi), (lo..hi).all(|i| s.get(i)), "{lo}..{hi}");
                }
            }
        }
        assert!(!a.all_in(0, 131), "past the end");
        let mut f = Bitset::full(130);
        assert_eq!(f.count(), 130);
        f.and_not_with(&a);
        assert_eq!(f.count(), 124);
        assert!(!f.get(129) && f.get(128));
        f.negate();
        assert_eq!(f, a);
        let mut o = Bitset::new(130);
        o.or_with(&a);
        o.and_with(&Bitset::full(130));
        assert_eq!(o, a);
        assert!(!a.get(500));
    }

    #[test]
    fn node_sets_agree_in_both_forms() {
        let len = 200;
        let idx = vec![3u32, 70, 199];
        let sparse = NodeSet::from_sorted(idx.clone(), len);
        assert!(matches!(sparse, NodeSet::Sparse(_)));
        let dense = NodeSet::from_sorted((0..100).collect(), len);
        assert!(matches!(dense, NodeSet::Dense(_)));
        for set in [&sparse, &dense] {
            let mut t = Bitset::full(len);
            set.and_into(&mut t);
            let mut u = Bitset::new(len);
            set.or_into(&mut u);
            assert_eq!(t, u);
            let mut n = Bitset::full(len);
            set.and_not_into(&mut n);
            assert_eq!(n.count() + u.count(), len);
            for i in 0..len {
                assert_eq!(set.contains(i), u.get(i));
            }
        }
    }
}
