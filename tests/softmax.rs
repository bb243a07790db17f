//! The softmax family's inputs, reference and check, on the host: the special rows are where the
//! family says, the reference is a softmax, and the check fails the bugs those rows are there
//! for (no max subtracted, a masked row answered 0 where PyTorch answers NaN, an unwritten row).

use half::{bf16, f16};
use kernel_lab::measure::element::{self, Element};
use kernel_lab::measure::families::softmax::{logits, reference, row_stats};
use kernel_lab::measure::verify;
use kernel_lab::schema::check::{Check, Precision};

const ROWS: usize = 80;
const COLS: usize = 33;
const NAN_ROWS: usize = 3;

/// An fp32 softmax as a kernel computes it: with the max subtracted unless `naive`.
fn softmax_f32(x: &[f32], cols: usize, naive: bool) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            let m = if naive { 0.0 } else { row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) };
            let e: Vec<f32> = row.iter().map(|&v| if v == f32::NEG_INFINITY { 0.0 } else { (v - m).exp() }).collect();
            let s: f32 = e.iter().sum();
            e.into_iter().map(move |v| v * (1.0 / s))
        })
        .collect()
}

fn check(x: &[f32], out: &[f32]) -> Check {
    let defined = (ROWS - NAN_ROWS) * COLS;
    let stats = row_stats(x, ROWS - NAN_ROWS, COLS);
    let mut c = verify::check(&out[..defined], defined, &|i| (i, reference(x, &stats, COLS, i)), Precision::Fp32);
    verify::check_nan_tail(&mut c, out, defined);
    c
}

#[test]
fn the_special_rows_are_planted_where_the_family_says() {
    let x = logits(ROWS, COLS, 7);
    let row = |r: usize| &x[r * COLS..(r + 1) * COLS];
    assert!(row(0).iter().all(|&v| v > 9000.0), "row 0 is offset by +1e4");
    assert!(row(1).iter().all(|&v| v < -9000.0), "row 1 by -1e4");
    assert!(row(2).iter().skip(1).step_by(2).all(|&v| v == f32::NEG_INFINITY) && row(2)[0].is_finite());
    assert_eq!(row(5).iter().filter(|v| **v == f32::NEG_INFINITY).count(), 5, "row r masks r % (cols / 2 + 1) of its tail");
    assert!(row(ROWS - 3).iter().any(|v| v.is_nan()));
    assert!(row(ROWS - 2).contains(&f32::INFINITY));
    assert!(row(ROWS - 1).iter().all(|&v| v == f32::NEG_INFINITY));
    assert!(row(70).iter().all(|&v| (-8.0..8.0).contains(&v) && v != 0.0), "plain rows are logits in [-8, 8)");
    let few = logits(7, COLS, 7);
    assert!(few.iter().all(|v| v.is_finite()), "fewer than eight rows are plain");
}

#[test]
fn the_reference_is_a_softmax_with_masked_elements_exactly_zero() {
    let x = logits(ROWS, COLS, 3);
    let stats = row_stats(&x, ROWS - NAN_ROWS, COLS);
    for r in 0..ROWS - NAN_ROWS {
        let sum: f64 = (r * COLS..(r + 1) * COLS).map(|i| reference(&x, &stats, COLS, i)).sum();
        assert!((sum - 1.0).abs() < 1e-12, "row {r} sums to {sum}");
    }
    assert_eq!(reference(&x, &stats, COLS, 2 * COLS + 1), 0.0, "a -inf element is exactly 0");
}

#[test]
fn a_correct_fp32_softmax_passes_and_the_bugs_fail() {
    let x = logits(ROWS, COLS, 11);
    let good = softmax_f32(&x, COLS, false);
    let c = check(&x, &good);
    assert!(c.passed(), "{}", c.describe());
    assert_eq!(c.compared, ROWS * COLS, "every element, the NaN rows included");

    // Without the max subtracted, row 0 overflows (inf / inf) and row 1 underflows (0 / 0).
    let naive = softmax_f32(&x, COLS, true);
    let c = check(&x, &naive);
    assert!(!c.passed() && c.nonfinite >= 2 * COLS, "{}", c.describe());

    // A "safe" softmax that answers an all -inf row with zeros is not what PyTorch gives.
    let mut safe = good.clone();
    safe[(ROWS - 1) * COLS..].iter_mut().for_each(|v| *v = 0.0);
    let c = check(&x, &safe);
    assert_eq!(c.beyond, COLS, "{}", c.describe());
    assert_eq!(c.first_bad[0].0, (ROWS - 1) * COLS);

    // A kernel that never writes the NaN rows leaves the poison, which is NaN too.
    let mut unwritten = good.clone();
    unwritten[(ROWS - NAN_ROWS) * COLS..].iter_mut().for_each(|v| *v = f32::from_bits(u32::MAX));
    assert_eq!(check(&x, &unwritten).beyond, NAN_ROWS * COLS);

    // One element off by 1e-4: the error norm stays under fp32's tolerance; the element bound
    // (four tolerances of the reference's RMS) catches it.
    let mut off = good;
    off[70 * COLS + 4] += 1e-4;
    let c = check(&x, &off);
    assert!(c.error < c.tolerance && c.beyond == 1 && c.first_bad[0].0 == 70 * COLS + 4, "{}", c.describe());
}

/// The check of a softmax in `E` storage, as the softmax_fp16 and softmax_bf16 families make it.
fn check_stored<E: Element>(x: &[f32], out: &[E]) -> Check {
    let defined = (ROWS - NAN_ROWS) * COLS;
    let stats = row_stats(x, ROWS - NAN_ROWS, COLS);
    let precision = element::precision(E::STORAGE);
    let mut c = verify::check(&out[..defined], defined, &|i| (i, reference(x, &stats, COLS, i)), precision);
    verify::check_nan_tail(&mut c, out, defined);
    c
}

/// `filled` is the poison's bits in `E`, which `inputs::poison` leaves in what a kernel skips.
fn stored_softmax_passes_and_its_bugs_fail<E: Element>(filled: E) {
    let mut x = logits(ROWS, COLS, 5);
    element::rounded::<E>(&mut x);
    assert!(x[..COLS].iter().all(|&v| E::round(v).widen() == v), "the inputs are exact in the storage");
    let good: Vec<E> = softmax_f32(&x, COLS, false).into_iter().map(E::round).collect();
    let c = check_stored(&x, &good);
    assert!(c.passed(), "{:?}: {}", E::STORAGE, c.describe());
    assert!(c.error > 1e-5, "{:?}: rounding to the storage shows in the norm ({:e})", E::STORAGE, c.error);

    // The poison left in the NaN rows (0xFFFF, a NaN in both 16-bit types) is not an answer.
    let mut unwritten = good.clone();
    assert!(filled.is_poison() && !E::round(f32::NAN).is_poison(), "a kernel's NaN has other bits than the poison's");
    unwritten[(ROWS - NAN_ROWS) * COLS..].iter_mut().for_each(|v| *v = filled);
    assert_eq!(check_stored(&x, &unwritten).beyond, NAN_ROWS * COLS, "{:?}", E::STORAGE);

    // A row written with its neighbour's values fails.
    let mut shifted = good.clone();
    shifted.copy_within(71 * COLS..72 * COLS, 70 * COLS);
    let c = check_stored(&x, &shifted);
    assert!(!c.passed() && c.beyond > 0, "{:?}: {}", E::STORAGE, c.describe());

    // The row's largest element a few ulps off: beyond its rounding and the element bound.
    let row = 70 * COLS..71 * COLS;
    let big = row.clone().max_by(|&a, &b| good[a].widen().total_cmp(&good[b].widen())).unwrap();
    let mut off = good;
    off[big] = E::round(off[big].widen() * (1.0 + 40.0 * element::precision(E::STORAGE).rounding() as f32));
    let c = check_stored(&x, &off);
    assert!(c.beyond == 1 && c.first_bad[0].0 == big, "{:?}: {}", E::STORAGE, c.describe());
}

#[test]
fn a_softmax_in_fp16_or_bf16_storage_passes_and_its_bugs_fail() {
    stored_softmax_passes_and_its_bugs_fail(f16::from_bits(u16::MAX));
    stored_softmax_passes_and_its_bugs_fail(bf16::from_bits(u16::MAX));
}
