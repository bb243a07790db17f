//! The outcome of a check against the f64 reference, and the one table of tolerances: how close
//! each precision's output must come.

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
    /// fp8 e4m3 inputs, exact products, summed by the Tensor Cores in a window narrower than
    /// fp32 before an fp32 accumulation.
    Fp8F32Acc,
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
            Precision::Fp8F32Acc => 5e-3,
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
    /// The first few bad elements: (index, got, want), want NaN for a non-finite element the
    /// reference was not sampled at; `describe` carries them into results.
    #[serde(skip)]
    pub first_bad: Vec<(usize, f64, f64)>,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.nonfinite == 0 && self.error.is_finite() && self.error <= self.tolerance
    }

    /// One line for errors and logs.
    pub fn describe(&self) -> String {
        let bad: Vec<String> = self
            .first_bad
            .iter()
            .map(|(i, g, w)| if w.is_nan() { format!("[{i}] got {g:e}") } else { format!("[{i}] got {g:e} want {w:e}") })
            .collect();
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
