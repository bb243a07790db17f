//! Verification: a relative error norm against an f64 reference, with the tolerance of the
//! family's precision (`schema::check`). NaN or infinity anywhere in the output fails, whatever
//! the norm.

pub use crate::schema::check::{Check, Precision};

const FIRST_BAD: usize = 5;
/// Below this many elements a check runs on one thread.
const PER_THREAD: usize = 1 << 20;

/// `f` over `count` indices cut into chunks, on as many threads as the chunks fill (a 1 GiB
/// array is 268M elements: one thread would take seconds per check); the chunks' results in order.
fn chunked<T: Send>(count: usize, f: &(dyn Fn(std::ops::Range<usize>) -> T + Sync)) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count / PER_THREAD + 1);
    let per = count.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || f(t * per..((t + 1) * per).min(count)))).collect();
        handles.into_iter().map(|h| h.join().expect("a check thread panicked")).collect()
    })
}

/// Compares `output` with `count` reference pairs (`reference(j)` gives the j-th: the output
/// index and the value it must hold), and scans all of `output` for non-finite values. An
/// element is listed as bad when it is non-finite or off by more than the tolerance times the
/// reference's RMS.
pub fn check(output: &[f32], count: usize, reference: &(dyn Fn(usize) -> (usize, f64) + Sync), precision: Precision) -> Check {
    let tolerance = precision.tolerance();
    let nonfinite = chunked(output.len(), &|r| output[r].iter().filter(|x| !x.is_finite()).count()).into_iter().sum();
    let sums = chunked(count, &|r| {
        r.map(reference).fold((0.0f64, 0.0f64), |(num, den), (i, w)| {
            let d = output[i] as f64 - w;
            (num + d * d, den + w * w)
        })
    });
    let (num, den) = sums.into_iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    let rms = (den / count.max(1) as f64).sqrt();
    let mut first_bad: Vec<(usize, f64, f64)> =
        output.iter().enumerate().filter(|(_, g)| !g.is_finite()).take(FIRST_BAD).map(|(i, g)| (i, *g as f64, f64::NAN)).collect();
    let off = chunked(count, &|r| {
        r.map(reference)
            .filter(|&(i, w)| {
                let g = output[i] as f64;
                g.is_finite() && (g - w).abs() > tolerance * rms
            })
            .take(FIRST_BAD)
            .map(|(i, w)| (i, output[i] as f64, w))
            .collect::<Vec<_>>()
    });
    first_bad.extend(off.into_iter().flatten());
    first_bad.truncate(FIRST_BAD);
    let error = if den > 0.0 {
        (num / den).sqrt()
    } else if num == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    Check { error, tolerance, compared: count, nonfinite, first_bad }
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
