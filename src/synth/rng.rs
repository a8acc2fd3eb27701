//! The generator's own small deterministic random numbers: SplitMix64 and a Zipf sampler. A seed
//! gives the same trace on every machine and every version of the standard library.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for synthetic workloads.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x5EED_0F51_6B71_E5A5)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi]` (`lo` when `hi <= lo`).
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// `value` scaled by a factor uniform in `[1 - spread, 1 + spread]`.
    pub fn jitter(&mut self, value: i64, spread: f64) -> i64 {
        let f = 1.0 + spread * (2.0 * self.unit() - 1.0);
        ((value as f64) * f).round().max(1.0) as i64
    }
}

/// Draws ranks `0..n` with probability proportional to `1 / (rank + 1)^s`: a few kernels account
/// for most launches, as in real training traces (GEMMs and elementwise ops dominate).
#[derive(Debug, Clone)]
pub struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, s: f64) -> Self {
        let mut total = 0.0;
        let cumulative = (0..n.max(1))
            .map(|k| {
                total += 1.0 / ((k + 1) as f64).powf(s);
                total
            })
            .collect();
        Self { cumulative }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let u = rng.unit() * total;
        self.cumulative
            .partition_point(|&c| c <= u)
            .min(self.cumulative.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_numbers() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn zipf_favours_low_ranks_and_stays_in_range() {
        let z = Zipf::new(50, 1.1);
        let mut rng = Rng::new(1);
        let mut counts = [0u32; 50];
        for _ in 0..20_000 {
            counts[z.sample(&mut rng)] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > 0);
        assert!(counts[0] > 2 * counts[5]);
    }

    #[test]
    fn between_is_inclusive() {
        let mut rng = Rng::new(3);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let v = rng.between(4, 6);
            assert!((4..=6).contains(&v));
            seen[(v - 4) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
