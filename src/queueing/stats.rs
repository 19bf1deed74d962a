//! Time averages over batches (the method of batch means) for the queueing models: the run after the
//! warm-up is cut into equal batches of time; each batch gives one average per metric, and the spread of the
//! batch averages gives the standard error of their mean. Integer sums; floats only in the estimates.

use serde::Serialize;

/// An estimate: the mean of the batch averages and its 95% confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Mean of the batch averages.
    pub mean: f64,
    /// Standard error of that mean (batch standard deviation / sqrt(batches)).
    pub se: f64,
    /// Half-width of the 95% confidence interval (Student t with batches - 1 degrees of freedom).
    pub ci95: f64,
}

/// Two-sided 97.5% Student t quantiles for 1..=30 degrees of freedom (standard tables); 1.96 beyond.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

impl Estimate {
    /// The estimate from batch averages.
    pub fn of(v: &[f64]) -> Self {
        let n = v.len().max(1) as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let se = (var / n).sqrt();
        let t = T975.get(v.len().saturating_sub(2)).copied().unwrap_or(1.96);
        Estimate {
            mean,
            se,
            ci95: t * se,
        }
    }
}

/// `K` piecewise-constant integer metrics integrated over time, and a count of events, per batch.
#[derive(Debug, Clone)]
pub struct Batches<const K: usize> {
    start: u64,
    len: u64,
    now: u64,
    sums: Vec<[u128; K]>,
    counts: Vec<u64>,
}

impl<const K: usize> Batches<K> {
    /// `batches` batches of `len` cycles each, the first from cycle `start` (the warm-up before is ignored).
    pub fn new(start: u64, len: u64, batches: usize) -> Self {
        Batches {
            start,
            len: len.max(1),
            now: 0,
            sums: vec![[0; K]; batches],
            counts: vec![0; batches],
        }
    }

    /// The first cycle after the last batch.
    pub fn end(&self) -> u64 {
        self.start + self.len * self.sums.len() as u64
    }

    /// The metrics held the values `v` from the last call until `to`.
    pub fn advance(&mut self, to: u64, v: [u64; K]) {
        let to = to.min(self.end());
        let mut t = self.now.max(self.start);
        while t < to {
            let b = ((t - self.start) / self.len) as usize;
            let b_end = self.start + (b as u64 + 1) * self.len;
            let upto = to.min(b_end);
            let dt = u128::from(upto - t);
            for (s, x) in self.sums[b].iter_mut().zip(v) {
                *s += dt * u128::from(x);
            }
            t = upto;
        }
        self.now = self.now.max(to);
    }

    /// An event (an accepted arrival) at cycle `t`.
    pub fn count(&mut self, t: u64) {
        if t >= self.start && t < self.end() {
            self.counts[((t - self.start) / self.len) as usize] += 1;
        }
    }

    /// The batch time averages of metric `k`.
    pub fn series(&self, k: usize) -> Vec<f64> {
        self.sums
            .iter()
            .map(|s| s[k] as f64 / self.len as f64)
            .collect()
    }

    /// The estimate of metric `k`'s time average.
    pub fn average(&self, k: usize) -> Estimate {
        Estimate::of(&self.series(k))
    }

    /// The batches' event counts per `unit` cycles.
    pub fn rates(&self, unit: u64) -> Vec<f64> {
        self.counts
            .iter()
            .map(|&c| c as f64 * unit as f64 / self.len as f64)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_across_batch_boundaries() {
        // Two batches of 10 cycles from 5: value 2 on [0, 12), 4 on [12, 25): batch 0 = (7*2 + 3*4)/10 =
        // 2.6, batch 1 = 4.0.
        let mut b = Batches::<1>::new(5, 10, 2);
        b.advance(12, [2]);
        b.advance(100, [4]);
        let e = b.average(0);
        assert!((e.mean - 3.3).abs() < 1e-12);
        // Sample standard deviation of {2.6, 4.0} is 0.98995; se = 0.7; t(1) = 12.706.
        assert!((e.se - 0.7).abs() < 1e-9 && (e.ci95 - 12.706 * 0.7).abs() < 1e-9);
        b.count(4);
        b.count(5);
        b.count(24);
        b.count(25);
        assert_eq!(b.counts, vec![1, 1]);
        assert_eq!(b.rates(10), vec![1.0, 1.0]);
    }
}
