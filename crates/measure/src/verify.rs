//! Verification: a relative error norm against an f64 reference, with the tolerance of the
//! family's precision (`schema::check`). NaN or infinity anywhere in the output fails, whatever
//! the norm.

pub use crate::gpu::compare::Sums;
pub use crate::schema::check::{Check, Precision, ELEMENT_BOUND};

use crate::element::Element;

const FIRST_BAD: usize = 5;
/// Below this many elements a check runs on one thread.
const PER_THREAD: usize = 1 << 20;

/// `f` over `count` indices cut into chunks of at least `least` indices, on as many threads as
/// the chunks fill (a 1 GiB array is 268M elements: one thread would take seconds per check);
/// the chunks' results in order.
pub fn chunked<T: Send>(count: usize, least: usize, f: &(dyn Fn(std::ops::Range<usize>) -> T + Sync)) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count / least.max(1) + 1);
    let per = count.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || f(t * per..((t + 1) * per).min(count)))).collect();
        handles.into_iter().map(|h| h.join().expect("a check thread panicked")).collect()
    })
}

/// Compares `output` with `count` reference pairs (`reference(j)` gives the j-th: the output
/// index and the value it must hold), and scans all of `output` for non-finite values. An
/// element is beyond when it is non-finite or off by more than the element bound
/// (`ELEMENT_BOUND` times the tolerance times the reference's RMS); any such element fails the
/// check, however small its share of the norm.
pub fn check<T: Copy + Into<f64> + Sync>(
    output: &[T],
    count: usize,
    reference: &(dyn Fn(usize) -> (usize, f64) + Sync),
    precision: Precision,
) -> Check {
    let tolerance = precision.tolerance();
    let at = |i: usize| -> f64 { output[i].into() };
    let nonfinite = chunked(output.len(), PER_THREAD, &|r| r.filter(|&i| !at(i).is_finite()).count()).into_iter().sum();
    let sums = chunked(count, PER_THREAD, &|r| {
        r.map(reference).fold((0.0f64, 0.0f64), |(num, den), (i, w)| {
            let d = at(i) - w;
            (num + d * d, den + w * w)
        })
    });
    let (num, den) = sums.into_iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    let rms = (den / count.max(1) as f64).sqrt();
    let bound = ELEMENT_BOUND * tolerance * rms;
    let mut first_bad: Vec<(usize, f64, f64)> =
        (0..output.len()).map(|i| (i, at(i))).filter(|(_, g)| !g.is_finite()).take(FIRST_BAD).map(|(i, g)| (i, g, f64::NAN)).collect();
    // Per chunk: elements beyond, the largest finite deviation, the first few beyond.
    let off = chunked(count, PER_THREAD, &|r| {
        let (mut beyond, mut worst, mut first) = (0usize, 0.0f64, Vec::new());
        for (i, w) in r.map(reference) {
            let g = at(i);
            let d = (g - w).abs();
            if g.is_finite() {
                worst = worst.max(d);
            }
            if d > bound + precision.rounding() * w.abs() || d.is_nan() {
                beyond += 1;
                if g.is_finite() && first.len() < FIRST_BAD {
                    first.push((i, g, w));
                }
            }
        }
        (beyond, worst, first)
    });
    let beyond = off.iter().map(|o| o.0).sum();
    let worst = off.iter().map(|o| o.1).fold(0.0, f64::max);
    first_bad.extend(off.into_iter().flat_map(|o| o.2));
    first_bad.truncate(FIRST_BAD);
    Check { error: norm(num, den), tolerance, compared: count, nonfinite, beyond, worst: relative(worst, rms), unrepeated: 0, first_bad }
}

/// The check from the GPU's comparison of every element of an output (`gpu::compare`) with its
/// reference; `first` is the first element beyond (index, got, want), where there is one.
pub fn from_sums(sums: &Sums, elements: usize, precision: Precision, first: Option<(usize, f64, f64)>) -> Check {
    let rms = (sums.ref2 / elements.max(1) as f64).sqrt();
    Check {
        error: norm(sums.diff2, sums.ref2),
        tolerance: precision.tolerance(),
        compared: elements,
        nonfinite: sums.nonfinite as usize,
        beyond: sums.beyond as usize,
        worst: relative(sums.worst, rms),
        unrepeated: 0,
        first_bad: first.into_iter().collect(),
    }
}

/// The bound `compare` counts elements beyond, for a reference whose squares sum to `ref2`.
pub fn element_bound(precision: Precision, ref2: f64, elements: usize) -> f64 {
    ELEMENT_BOUND * precision.tolerance() * (ref2 / elements.max(1) as f64).sqrt()
}

/// ||out - ref|| / ||ref|| from the two sums of squares: 0 where both are 0.
fn norm(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        (num / den).sqrt()
    } else if num == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

/// `d` in units of `rms` (0 for an all-zero reference matched exactly).
fn relative(d: f64, rms: f64) -> f64 {
    if rms > 0.0 {
        d / rms
    } else if d == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

/// The check of integer words, which must match exactly: `first_bad` is the first mismatch
/// (index, got, want), if any, among `compared` words.
pub fn check_words(first_bad: Option<(usize, u32, u32)>, compared: usize) -> Check {
    Check {
        error: if first_bad.is_some() { 1.0 } else { 0.0 },
        tolerance: Precision::Exact.tolerance(),
        compared,
        nonfinite: 0,
        beyond: usize::from(first_bad.is_some()),
        worst: 0.0,
        unrepeated: 0,
        first_bad: first_bad.map(|(i, g, w)| (i, g as f64, w as f64)).into_iter().collect(),
    }
}

/// `check` with the elements of `out` from `from` on, whose answer is NaN (a row-wise family's
/// rows that PyTorch answers with NaN), held to that: every one NaN, and none with the poison's
/// bits, which an unwritten element keeps.
pub fn check_nan_tail<E: Element>(check: &mut Check, out: &[E], from: usize) {
    let wrong = |v: E| !v.widen().is_nan() || v.is_poison();
    let tail = &out[from..];
    check.compared += tail.len();
    let bad: Vec<usize> = tail.iter().enumerate().filter(|(_, v)| wrong(**v)).map(|(i, _)| from + i).collect();
    check.beyond += bad.len();
    check.first_bad.extend(bad.iter().take(FIRST_BAD).map(|&i| (i, out[i].into(), f64::NAN)));
}

/// Two checks of one output as one: the larger error and worst element (NaN where either is),
/// the counts added.
pub fn merge(a: Check, b: Check) -> Check {
    let worse = |x: f64, y: f64| if x.is_nan() || y.is_nan() { f64::NAN } else { x.max(y) };
    let mut first_bad = a.first_bad;
    first_bad.extend(b.first_bad);
    first_bad.truncate(5);
    Check {
        error: worse(a.error, b.error),
        tolerance: a.tolerance.max(b.tolerance),
        compared: a.compared + b.compared,
        nonfinite: a.nonfinite + b.nonfinite,
        beyond: a.beyond + b.beyond,
        worst: worse(a.worst, b.worst),
        unrepeated: a.unrepeated + b.unrepeated,
        first_bad,
    }
}
