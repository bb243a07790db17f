//! Verification: a relative error norm against an f64 reference, with one tolerance per
//! precision. NaN or infinity anywhere in the output fails, whatever the norm.

use serde::{Deserialize, Serialize};

/// The arithmetic a family's kernels use, which decides how close to the reference they must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precision {
    /// Bit-exact (copies, integer arithmetic).
    Exact,
    /// fp32 inputs, fp32 arithmetic.
    Fp32,
    /// fp16 (or bf16) inputs, exact products, fp32 accumulation in Tensor Cores, whose adders
    /// align and truncate in their own way.
    Fp16F32Acc,
    /// fp32 inputs rounded to tf32 (10-bit mantissa) by the Tensor Cores, fp32 accumulation.
    Tf32,
}

impl Precision {
    /// The largest ||out - ref|| / ||ref|| that passes. fp32: sequential fp32 sums over k terms
    /// land near sqrt(k) * 6e-8 (about 5e-6 at k = 8192); an indexing bug lands above 1e-3.
    pub fn tolerance(self) -> f64 {
        match self {
            Precision::Exact => 0.0,
            Precision::Fp32 => 5e-5,
            Precision::Fp16F32Acc => 1e-3,
            Precision::Tf32 => 5e-3,
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    /// ||out - ref|| / ||ref|| over the checked elements (0 when ref is all zeros and out matches);
    /// NaN when the output held NaN, stored as null.
    #[serde(with = "nan_as_null")]
    pub error: f64,
    pub tolerance: f64,
    /// Elements compared with the reference.
    pub compared: usize,
    /// Elements of the whole output that are NaN or infinite (poison left unwritten shows here).
    pub nonfinite: usize,
    /// The first few bad elements: (index, got, want); `describe` carries them into results.
    #[serde(skip)]
    pub first_bad: Vec<(usize, f64, f64)>,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.nonfinite == 0 && self.error.is_finite() && self.error <= self.tolerance
    }

    /// One line for errors and logs.
    pub fn describe(&self) -> String {
        let bad: Vec<String> = self.first_bad.iter().map(|(i, g, w)| format!("[{i}] got {g:e} want {w:e}")).collect();
        format!(
            "error {:.3e} (tolerance {:.1e}) over {} elements, {} non-finite{}{}",
            self.error,
            self.tolerance,
            self.compared,
            self.nonfinite,
            if bad.is_empty() { "" } else { "; first bad: " },
            bad.join(", ")
        )
    }
}

const FIRST_BAD: usize = 5;

/// Compares `output` with the reference pairs (index, want), and scans all of `output` for
/// non-finite values. An element is listed as bad when it is non-finite or off by more than the
/// tolerance times the reference's RMS.
pub fn check<R>(output: &[f32], reference: R, precision: Precision) -> Check
where
    R: Iterator<Item = (usize, f64)> + Clone,
{
    let tolerance = precision.tolerance();
    let nonfinite = output.iter().filter(|x| !x.is_finite()).count();
    let (mut num, mut den, mut compared) = (0.0f64, 0.0f64, 0usize);
    for (i, w) in reference.clone() {
        let d = output[i] as f64 - w;
        num += d * d;
        den += w * w;
        compared += 1;
    }
    let rms = (den / compared.max(1) as f64).sqrt();
    let mut first_bad: Vec<(usize, f64, f64)> =
        output.iter().enumerate().filter(|(_, g)| !g.is_finite()).take(FIRST_BAD).map(|(i, g)| (i, *g as f64, f64::NAN)).collect();
    for (i, w) in reference {
        if first_bad.len() >= FIRST_BAD {
            break;
        }
        let g = output[i] as f64;
        if g.is_finite() && (g - w).abs() > tolerance * rms {
            first_bad.push((i, g, w));
        }
    }
    let error = if den > 0.0 {
        (num / den).sqrt()
    } else if num == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    Check { error, tolerance, compared, nonfinite, first_bad }
}

/// The check of integer words, which must match exactly: `first_bad` is the first mismatch
/// (index, got, want), if any, among `compared` words.
pub fn check_words(first_bad: Option<(usize, u32, u32)>, compared: usize) -> Check {
    Check {
        error: if first_bad.is_some() { 1.0 } else { 0.0 },
        tolerance: Precision::Exact.tolerance(),
        compared,
        nonfinite: 0,
        first_bad: first_bad.map(|(i, g, w)| (i, g as f64, w as f64)).into_iter().collect(),
    }
}

/// JSON has no NaN: write it as null and read null back as NaN.
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}
