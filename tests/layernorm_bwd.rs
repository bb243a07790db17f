//! The layer-norm backward family's reference and check, on the host: the reference is the
//! derivative of the forward (held to finite differences of it), and the check fails the bugs a
//! backward kernel makes (a term of dx left out, a block's column sums lost, the NaN column left
//! unwritten or written with a number).

use kernel_lab::facts::family::FamilyId;
use kernel_lab::facts::launch::Launch;
use kernel_lab::measure::families::layernorm::EPS;
use kernel_lab::measure::families::layernorm_bwd::Problem;
use kernel_lab::measure::families::{self, Shape};
use kernel_lab::schema::check::Precision;

/// The forward's loss sum(dy * layernorm(x)) in f64, the statistics computed from x itself.
fn loss(x: &[f64], gamma: &[f64], beta: &[f64], dy: &[f32], cols: usize) -> f64 {
    x.chunks(cols)
        .enumerate()
        .map(|(r, row)| {
            let mean = row.iter().sum::<f64>() / cols as f64;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
            let rstd = 1.0 / (var + EPS as f64).sqrt();
            (0..cols).map(|j| dy[r * cols + j] as f64 * ((row[j] - mean) * rstd * gamma[j] + beta[j])).sum::<f64>()
        })
        .sum()
}

#[test]
fn the_reference_is_the_derivative_of_the_forward() {
    let (rows, cols) = (4, 7);
    let p = Problem::new(rows, cols, 5);
    assert!(p.nan_at.is_none(), "too few rows for the special rows");
    let x: Vec<f64> = p.x.iter().map(|&v| v as f64).collect();
    let gamma: Vec<f64> = p.gamma.iter().map(|&v| v as f64).collect();
    let beta = vec![0.25; cols];
    let h = 1e-6;
    let nudged = |v: &[f64], k: usize, d: f64| {
        let mut v = v.to_vec();
        v[k] += d;
        v
    };
    for i in 0..rows * cols {
        let fd = (loss(&nudged(&x, i, h), &gamma, &beta, &p.dy, cols) - loss(&nudged(&x, i, -h), &gamma, &beta, &p.dy, cols)) / (2.0 * h);
        assert!((p.dx(i) - fd).abs() < 1e-5 * (1.0 + fd.abs()), "dx[{i}] = {} against {fd}", p.dx(i));
    }
    let columns = p.columns();
    for j in 0..cols {
        let fd = (loss(&x, &nudged(&gamma, j, h), &beta, &p.dy, cols) - loss(&x, &nudged(&gamma, j, -h), &beta, &p.dy, cols)) / (2.0 * h);
        assert!((columns[j] - fd).abs() < 1e-5 * (1.0 + fd.abs()), "dgamma[{j}] = {} against {fd}", columns[j]);
        let fd = (loss(&x, &gamma, &nudged(&beta, j, h), &p.dy, cols) - loss(&x, &gamma, &nudged(&beta, j, -h), &p.dy, cols)) / (2.0 * h);
        assert!((columns[cols + j] - fd).abs() < 1e-5 * (1.0 + fd.abs()), "dbeta[{j}]");
    }
}

#[test]
fn a_correct_fp32_gradient_passes_and_the_bugs_fail() {
    let (rows, cols) = (80, 33);
    let p = Problem::new(rows, cols, 11);
    let (r_nan, c_nan) = p.nan_at.expect("the NaN row at 80 rows");
    let columns = p.columns();
    let dx: Vec<f32> = (0..rows * cols).map(|i| p.dx(i) as f32).collect();
    let params: Vec<f32> = columns.iter().map(|&v| v as f32).collect();
    assert!(dx[r_nan * cols..].iter().all(|v| v.is_nan()) && params[c_nan].is_nan() && params[cols + c_nan].is_nan());
    let good = p.check(&dx, &params, &columns, Precision::Fp32);
    assert!(good.passed(), "{}", good.describe());
    assert_eq!(good.compared, rows * cols + 2 * cols, "every element of dx, dgamma and dbeta");

    // dx without its last term, xhat * mean(g * xhat).
    let mut no_term = dx.clone();
    for (i, v) in no_term.iter_mut().enumerate().take(r_nan * cols) {
        let r = i / cols;
        let g = p.dy[i] * p.gamma[i % cols];
        let mean_g: f32 = (0..cols).map(|j| p.dy[r * cols + j] * p.gamma[j]).sum::<f32>() / cols as f32;
        *v = p.rstd[r] * (g - mean_g);
    }
    assert!(!p.check(&no_term, &params, &columns, Precision::Fp32).passed());
    // dx off by 0.02% in every row but the constant one, whose dx is rstd = 1 / sqrt(eps) times
    // larger: in one norm with that row the error would hide under fp32's tolerance.
    let mut off = dx.clone();
    for (i, v) in off.iter_mut().enumerate().take(r_nan * cols) {
        if i / cols != 1 {
            *v *= 1.0002;
        }
    }
    assert!(!p.check(&off, &params, &columns, Precision::Fp32).passed());
    // One block's column sums lost: dgamma and dbeta without rows 40 to 49.
    let mut lost = params.clone();
    for r in 40..50 {
        for j in 0..cols {
            let i = r * cols + j;
            lost[j] -= p.dy[i] * (p.x[i] - p.mean[r]) * p.rstd[r];
            lost[cols + j] -= p.dy[i];
        }
    }
    assert!(!p.check(&dx, &lost, &columns, Precision::Fp32).passed());
    // The NaN column left with the poison's bits, or given a number.
    let mut poisoned = params.clone();
    poisoned[c_nan] = f32::from_bits(u32::MAX);
    assert_eq!(p.check(&dx, &poisoned, &columns, Precision::Fp32).beyond, 1);
    let mut finite = params.clone();
    finite[cols + c_nan] = 0.0;
    assert_eq!(p.check(&dx, &finite, &columns, Precision::Fp32).beyond, 1);
}

#[test]
fn a_rung_reads_two_matrices_and_the_baseline_copies_one() {
    let fam = families::by_id(FamilyId::LayerNormBwd).unwrap();
    let shape = Shape(vec![16384, 768]);
    let arch = kernel_lab::facts::arch::ArchReq::parse("sm_90").unwrap();
    let defs = [("ROWS_PER_BLOCK", 2), ("BLOCKS_PER_SM", 4)];
    let launch = Launch::parse("layernorm_bwd", &arch, &|n| defs.iter().find(|(k, _)| *k == n).map(|p| p.1)).unwrap();
    let matrix = 4.0 * 16384.0 * 768.0;
    let w = fam.work(&shape, Some(&launch));
    assert_eq!((w.bytes_read, w.bytes_written, w.flops), (2.0 * matrix, matrix, 0.0));
    // cudaMemcpy moves one matrix in and one out: its rate is its own bytes over its time.
    let w = fam.work(&shape, None);
    assert_eq!((w.bytes_read, w.bytes_written), (matrix, matrix));
}
