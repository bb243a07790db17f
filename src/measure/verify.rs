//! Verification: a relative error norm against an f64 reference, with the tolerance of the
//! family's precision (`schema::check`). NaN or infinity anywhere in the output fails, whatever
//! the norm.

pub use crate::schema::check::{Check, Precision};

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
