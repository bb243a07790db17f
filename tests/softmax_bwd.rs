//! The softmax backward family's inputs, reference and check, on the host: y is the forward's
//! answer, the reference is the softmax's gradient, and the check fails the bugs a backward
//! kernel makes (the row's sum left out, a sum over the wrong row, an unwritten NaN row).

use kernel_lab::facts::family::FamilyId;
use kernel_lab::measure::families::softmax_bwd::{dot_rows, forward, reference};
use kernel_lab::measure::families::{self, Shape};
use kernel_lab::measure::verify;
use kernel_lab::schema::check::{Check, Precision};

const ROWS: usize = 80;
const COLS: usize = 33;
const NAN_ROWS: usize = 3;

/// The gradient in fp32 as a kernel computes it; `sum` gives the value subtracted in row r.
fn backward_f32(y: &[f32], dy: &[f32], sum: &dyn Fn(usize) -> f32) -> Vec<f32> {
    (0..y.len()).map(|i| y[i] * (dy[i] - sum(i / COLS))).collect()
}

fn dy() -> Vec<f32> {
    kernel_lab::measure::families::inputs::random_f32(ROWS * COLS, 4)
}

fn check(y: &[f32], dy: &[f32], out: &[f32]) -> Check {
    let defined = (ROWS - NAN_ROWS) * COLS;
    let sums = dot_rows(y, dy, ROWS - NAN_ROWS, COLS);
    let mut c = verify::check(&out[..defined], defined, &|i| (i, reference(y, dy, &sums, COLS, i)), Precision::Fp32);
    verify::check_nan_tail(&mut c, out, defined);
    c
}

#[test]
fn y_is_the_forwards_answer_and_each_rows_gradient_sums_to_zero() {
    let (y, dy) = (forward(ROWS, COLS, 3), dy());
    let sums = dot_rows(&y, &dy, ROWS - NAN_ROWS, COLS);
    for r in 0..ROWS - NAN_ROWS {
        let row = &y[r * COLS..(r + 1) * COLS];
        assert!((row.iter().map(|&v| v as f64).sum::<f64>() - 1.0).abs() < 1e-6, "row {r} of y sums to 1");
        // sum_j y_j (dy_j - s) = s - s sum_j y_j: zero, up to y's fp32 rounding.
        let g: f64 = (r * COLS..(r + 1) * COLS).map(|i| reference(&y, &dy, &sums, COLS, i)).sum();
        assert!(g.abs() < 1e-6, "row {r}'s gradient sums to {g}");
    }
    assert_eq!(y[2 * COLS + 1], 0.0, "a masked element of the forward is 0");
    assert_eq!(reference(&y, &dy, &sums, COLS, 2 * COLS + 1), 0.0, "and its gradient exactly 0");
    assert!(y[(ROWS - NAN_ROWS) * COLS..].iter().all(|v| v.is_nan()), "the forward's NaN rows");
}

#[test]
fn a_correct_fp32_gradient_passes_and_the_bugs_fail() {
    let (y, dy) = (forward(ROWS, COLS, 11), dy());
    let sums = dot_rows(&y, &dy, ROWS, COLS);
    let good = backward_f32(&y, &dy, &|r| sums[r] as f32);
    let c = check(&y, &dy, &good);
    assert!(c.passed(), "{}", c.describe());
    assert_eq!(c.compared, ROWS * COLS, "every element, the NaN rows included");

    // The row's sum left out: dx = y dy.
    assert!(!check(&y, &dy, &backward_f32(&y, &dy, &|_| 0.0)).passed());
    // Each row given the next row's sum (a team indexing off by one).
    let shifted = backward_f32(&y, &dy, &|r| sums[(r + 1) % ROWS] as f32);
    assert!(!check(&y, &dy, &shifted).passed());
    // A kernel that never writes the NaN rows leaves the poison, which is NaN too.
    let mut unwritten = good.clone();
    unwritten[(ROWS - NAN_ROWS) * COLS..].iter_mut().for_each(|v| *v = f32::from_bits(u32::MAX));
    assert_eq!(check(&y, &dy, &unwritten).beyond, NAN_ROWS * COLS);
}

#[test]
fn the_work_is_two_matrices_read_and_one_written() {
    let fam = families::by_id(FamilyId::SoftmaxBwd).unwrap();
    let w = fam.work(&Shape(vec![196608, 512]), None);
    let matrix = 4.0 * 196608.0 * 512.0;
    assert_eq!((w.bytes_read, w.bytes_written, w.flops), (2.0 * matrix, matrix, 0.0));
}
