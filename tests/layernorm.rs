//! The layernorm family's inputs, reference and check, on the host: the special rows are where
//! the family says, and the check passes an accurate fp32 layer norm and fails the one-pass
//! E[x^2] - E[x]^2, whose variance of a constant row is rounding noise that 1 / sqrt(eps) magnifies.

use kernel_lab::measure::families::layernorm::{inputs, reference, row_stats, EPS};
use kernel_lab::measure::verify;
use kernel_lab::schema::check::{Check, Precision};

const ROWS: usize = 40;
const COLS: usize = 768;
const NAN_ROWS: usize = 2;

/// gamma then beta, away from 0.
fn affine() -> Vec<f32> {
    (0..2 * COLS).map(|j| if j < COLS { 0.75 + (j % 7) as f32 / 10.0 } else { (j % 5) as f32 / 10.0 - 0.2 }).collect()
}

/// An fp32 layer norm: its statistics summed in f64 and rounded to fp32 (an accurate kernel's),
/// or the naive one-pass variance E[x^2] - E[x]^2 summed in fp32.
fn layernorm_f32(x: &[f32], a: &[f32], naive: bool) -> Vec<f32> {
    x.chunks(COLS)
        .flat_map(|row| {
            let n = COLS as f32;
            let (mean, var) = if naive {
                let mean = row.iter().sum::<f32>() / n;
                (mean, (row.iter().map(|v| v * v).sum::<f32>() / n - mean * mean).max(0.0))
            } else {
                let mean = row.iter().map(|&v| v as f64).sum::<f64>() / COLS as f64;
                (mean as f32, (row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / COLS as f64) as f32)
            };
            let rstd = 1.0 / (var + EPS).sqrt();
            row.iter().enumerate().map(move |(j, v)| (v - mean) * rstd * a[j] + a[COLS + j]).collect::<Vec<_>>()
        })
        .collect()
}

fn check(x: &[f32], a: &[f32], out: &[f32]) -> Check {
    let defined = (ROWS - NAN_ROWS) * COLS;
    let stats = row_stats(x, ROWS - NAN_ROWS, COLS);
    let mut c = verify::check(&out[..defined], defined, &|i| (i, reference(x, a, &stats, COLS, i)), Precision::Fp32);
    verify::check_nan_tail(&mut c, out, defined);
    c
}

#[test]
fn the_special_rows_are_planted_where_the_family_says() {
    let x = inputs(ROWS, COLS, 5);
    let row = |r: usize| &x[r * COLS..(r + 1) * COLS];
    assert!(row(0).iter().all(|&v| (31.0..33.0).contains(&v)), "row 0 is offset by 32");
    assert!(row(1).iter().all(|&v| v == row(1)[0]), "row 1 is constant");
    assert!(row(ROWS - 2).iter().any(|v| v.is_nan()) && row(ROWS - 1).contains(&f32::INFINITY));
    assert!(row(5).iter().all(|&v| (-1.0..1.0).contains(&v)));
}

#[test]
fn the_reference_has_mean_zero_and_unit_variance_before_the_affine_step() {
    let x = inputs(ROWS, COLS, 9);
    let stats = row_stats(&x, ROWS - NAN_ROWS, COLS);
    let unit: Vec<f32> = (0..2 * COLS).map(|j| if j < COLS { 1.0 } else { 0.0 }).collect();
    for r in [0, 5, ROWS - NAN_ROWS - 1] {
        let y: Vec<f64> = (r * COLS..(r + 1) * COLS).map(|i| reference(&x, &unit, &stats, COLS, i)).collect();
        let mean = y.iter().sum::<f64>() / COLS as f64;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / COLS as f64;
        assert!(mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-3, "row {r}: mean {mean}, variance {var}");
    }
    assert_eq!(reference(&x, &unit, &stats, COLS, COLS + 3), 0.0, "a constant row normalises to 0 (beta)");
}

#[test]
fn an_accurate_fp32_layer_norm_passes_and_the_one_pass_variance_fails() {
    let (x, a) = (inputs(ROWS, COLS, 13), affine());
    let c = check(&x, &a, &layernorm_f32(&x, &a, false));
    assert!(c.passed(), "{}", c.describe());
    assert_eq!(c.compared, ROWS * COLS);
    let c = check(&x, &a, &layernorm_f32(&x, &a, true));
    assert!(!c.passed() && c.first_bad[0].0 < 2 * COLS, "a special row fails first: {}", c.describe());
}
