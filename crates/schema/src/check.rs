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
    /// fp16 inputs and outputs, fp32 arithmetic (the row-wise families in fp16 storage).
    Fp16Storage,
    /// bf16 inputs and outputs, fp32 arithmetic.
    Bf16Storage,
}

impl Precision {
    /// The largest ||out - ref|| / ||ref|| that passes: above what rounding leaves at the largest
    /// shapes (about 8192 terms a sum), below what a wrong index, tile or skipped term leaves (a
    /// wrong or missing term of a sum of k moves it by about 1/sqrt(k): 1e-2 at k = 8192, and a
    /// bug in whole tiles or rows far more). The inputs are exact in their type, so the reference
    /// sees what the kernel sees and only the arithmetic differs.
    pub fn tolerance(self) -> f64 {
        match self {
            // Copies and integer sums (int8 inputs in [-8, 8) keep every sum exact) have one answer.
            Precision::Exact => 0.0,
            // Sequential fp32 sums over k terms land near sqrt(k) * 6e-8 (5e-6 at k = 8192; the
            // H200's largest, sgemm_01 at 8192x64x8192, 1.7e-6): ten times that.
            Precision::Fp32 => 5e-5,
            // Exact products, fp32 sums whose Tensor Core adders truncate: cuBLAS at 8192³ 1e-5 on
            // the H200 (fp16 and bf16 alike); the room is for the truncation, which grows with k.
            Precision::Fp16F32Acc => 1e-3,
            // Each fp32 input rounded to tf32's 10-bit mantissa (relative 2^-11, 4.9e-4): about
            // 7e-4 at 8192³ on the H200, whatever k, so seven times that.
            Precision::Tf32 => 5e-3,
            // Exact e4m3 products summed in a window narrower than fp32 between promotions to fp32
            // registers: 1e-4 promoting every k-tile, 2.9e-4 every fourth, at 8192³ on the H200;
            // the room lets a variant promote less often.
            Precision::Fp8F32Acc => 5e-3,
            // Each output rounded to its 11 or 8 significant bits: at most 2^-11 or 2^-8 of it
            // (`rounding`), near 2e-4 or 1.7e-3 over a whole output; fp32's arithmetic adds next
            // to nothing. Four and two and a half times the most rounding can leave.
            Precision::Fp16Storage => 2e-3,
            Precision::Bf16Storage => 1e-2,
        }
    }
}

impl Precision {
    /// The most an output element moves, relative to itself, when stored: 2^-11 in fp16, 2^-8 in
    /// bf16 (half an ulp of a significand of 11 or 8 bits), 0 where outputs keep fp32's precision
    /// and the tolerance covers their rounding. An element may be off by this share of its value
    /// beyond the element bound: a softmax's largest element can be ten times the output's RMS,
    /// and its rounding alone can pass 4 x tolerance x RMS in bf16.
    pub fn rounding(self) -> f64 {
        match self {
            Precision::Fp16Storage => 1.0 / 2048.0,
            Precision::Bf16Storage => 1.0 / 256.0,
            _ => 0.0,
        }
    }
}

/// An element passes within this many times the norm's tolerance, times the reference's RMS.
/// The tolerances are 7 to 10 times the norm rounding leaves (more for fp16 and bf16); the
/// largest of 67 million rounding errors lies about 6 of their standard deviations out, near
/// the tolerance itself, so the bound leaves the room of a further factor of 4.
pub const ELEMENT_BOUND: f64 = 4.0;

/// The outcome of one check.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    /// Compared elements off by more than `ELEMENT_BOUND` times the tolerance times the
    /// reference's RMS (or not finite): one wrong element of 67 million moves the norm by about
    /// 1e-4 of the RMS, under every tolerance but the exact one, so the norm alone lets it pass.
    #[serde(default)]
    pub beyond: usize,
    /// The largest |out - ref| of a finite compared element, over the reference's RMS: how near
    /// the element bound the rounding came.
    #[serde(default, with = "nan_as_null")]
    pub worst: f64,
    /// Elements whose bits differ from those the same kernel left at its first check, for an
    /// output its family promises bit for bit from launch to launch (layernorm_bwd's column
    /// sums): the check after timing holds the last of thousands of launches to the first.
    #[serde(default)]
    pub unrepeated: usize,
    /// The first few bad elements: (index, got, want), want NaN for a non-finite element the
    /// reference was not sampled at; `describe` carries them into results.
    #[serde(skip)]
    pub first_bad: Vec<(usize, f64, f64)>,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.nonfinite == 0 && self.beyond == 0 && self.unrepeated == 0 && self.error.is_finite() && self.error <= self.tolerance
    }

    /// One line for errors and logs.
    pub fn describe(&self) -> String {
        let bad: Vec<String> = self
            .first_bad
            .iter()
            .map(|(i, g, w)| if w.is_nan() { format!("[{i}] got {g:e}") } else { format!("[{i}] got {g:e} want {w:e}") })
            .collect();
        format!(
            "error {:.3e} (tolerance {:.1e}) over {} elements, {} beyond {:.0e} of the RMS (worst {:.1e}), {} non-finite{}{}{}",
            self.error,
            self.tolerance,
            self.compared,
            self.beyond,
            ELEMENT_BOUND * self.tolerance,
            self.worst,
            self.nonfinite,
            if self.unrepeated > 0 { format!(", {} not the bits of the first launch", self.unrepeated) } else { String::new() },
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
