//! Summaries of timing samples: median and spread, robust to the odd slow sample.

use serde::{Deserialize, Serialize};

/// A summary of samples in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub median_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub p10_ms: f64,
    pub p90_ms: f64,
    pub stddev_ms: f64,
}

impl Summary {
    /// None for no samples or any non-finite sample.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        Some(Summary {
            n,
            median_ms: percentile(&v, 50.0),
            mean_ms: mean,
            min_ms: v[0],
            max_ms: v[n - 1],
            p10_ms: percentile(&v, 10.0),
            p90_ms: percentile(&v, 90.0),
            stddev_ms: var.sqrt(),
        })
    }

    /// The spread the tables show: (p90 - p10) / median, in percent.
    pub fn spread_pct(&self) -> f64 {
        if self.median_ms > 0.0 {
            100.0 * (self.p90_ms - self.p10_ms) / self.median_ms
        } else {
            0.0
        }
    }
}

/// Linear interpolation between the closest ranks of sorted, non-empty `v`.
pub fn percentile(v: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0).clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

/// The median of `values` and a 95% interval for it from the order statistics: with n values
/// sorted, the ones at ranks n/2 -+ 1.96 sqrt(n)/2 (the normal approximation to the binomial
/// count of values below the true median; no assumption about the distribution of the values,
/// which for GPU timings has a long right tail). None for no values or a non-finite one.
pub fn median_interval(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let reach = 1.96 * n.sqrt() / 2.0;
    let lo = ((n / 2.0 - reach).round() as usize).clamp(1, v.len()) - 1;
    let hi = ((n / 2.0 + 1.0 + reach).round() as usize).clamp(1, v.len()) - 1;
    Some((percentile(&v, 50.0), v[lo], v[hi]))
}

/// An estimate with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Interval {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// The interval's half-width as a share of the value: 0.01 is ±1%.
    pub fn half_width(&self) -> f64 {
        if self.value != 0.0 {
            (self.high - self.low) / 2.0 / self.value.abs()
        } else {
            f64::INFINITY
        }
    }

    /// The median of `values` with its interval (`median_interval`).
    pub fn of_median(values: &[f64]) -> Option<Interval> {
        median_interval(values).map(|(value, low, high)| Interval { value, low, high })
    }
}
