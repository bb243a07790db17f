//! The `bayes` strategy: Bayesian optimisation, as Kernel Tuner's `bayes_opt` does it. A Gaussian
//! process models the score over the space's grid from the evaluations so far, and the next pick
//! is the open configuration of greatest expected improvement over the best score yet. It bets
//! that the score varies smoothly with the constants' ranks, and spends each evaluation where the
//! model is either hopeful or unsure, rather than near one parent (`genetic`) or anywhere
//! (`random`).
//!
//! The model: a Matérn 5/2 kernel on the grid coordinates, its length scale and amplitude and the
//! prior's constant fitted to the evaluations by maximum likelihood at every pick (friedrich's
//! gradient fit), over scores standardised to mean 0 and variance 1. A configuration that did not
//! run is left out of the model (it is not picked again): failures on a GPU follow from limits the
//! manifest's constraints mostly prune, and a penalty score at a failed point would bend the model
//! around what is a cliff, not a slope. None of its constants is
//! fitted to the stored searches the strategies are compared on (`tune --simulate`): ξ is the
//! textbook 0.01, the start the genetic search's.

use friedrich::gaussian_process::GaussianProcess;
use friedrich::kernel::Matern2;
use friedrich::prior::ConstantPrior;
use rand::rngs::SmallRng;
use rand::RngExt;

use super::{Eval, Space};

/// Evaluations (a score or a failure) before the model is trusted; before that, random picks.
pub const INITIAL: usize = super::INITIAL;
/// Gradient steps of the hyperparameters' fit at each pick (friedrich's default is 100): each
/// costs a factorisation of the evaluations' covariance.
const FIT_STEPS: usize = 20;
/// Expected improvement's exploration margin, in standard deviations of the scores.
const XI: f64 = 0.01;

/// The open position of greatest expected improvement (ties at random), or None where the model
/// cannot be built yet (fewer than INITIAL evaluations, or every score equal).
pub fn pick(space: &Space, evals: &[Eval], open: &[usize], rng: &mut SmallRng) -> Option<usize> {
    let scored: Vec<f64> = evals.iter().filter_map(|e| e.score.filter(|s| s.is_finite())).collect();
    if evals.len() < INITIAL || scored.len() < 2 || space.levels.is_empty() {
        return None;
    }
    let n = scored.len() as f64;
    let mean = scored.iter().sum::<f64>() / n;
    let sd = (scored.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    if sd <= 0.0 {
        return None;
    }
    let ran: Vec<(usize, f64)> = evals.iter().filter_map(|e| e.score.filter(|s| s.is_finite()).map(|s| (e.index, s))).collect();
    let y: Vec<f64> = ran.iter().map(|(_, s)| (s - mean) / sd).collect();
    let x: Vec<Vec<f64>> = ran.iter().map(|(i, _)| space.coords[*i].clone()).collect();
    let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let gp: GaussianProcess<Matern2, ConstantPrior> = GaussianProcess::builder(x, y)
        .set_kernel(Matern2::new(0.5, 1.0))
        .set_noise(0.01)
        .set_cholesky_epsilon(Some(1e-9))
        .set_fit_parameters(FIT_STEPS, 0.05)
        .fit_kernel()
        .fit_prior()
        .train();
    let candidates: Vec<Vec<f64>> = open.iter().map(|&i| space.coords[i].clone()).collect();
    let (mu, var) = gp.predict_mean_variance(&candidates);
    let ei: Vec<f64> = mu.iter().zip(&var).map(|(&m, &v)| expected_improvement(m, v.max(0.0).sqrt(), best)).collect();
    let top = ei.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return None;
    }
    let ties: Vec<usize> = open.iter().zip(&ei).filter(|(_, e)| **e >= top - 1e-12).map(|(&i, _)| i).collect();
    Some(ties[rng.random_range(0..ties.len())])
}

/// E[max(f - best - XI, 0)] for f ~ N(mean, sd²).
pub fn expected_improvement(mean: f64, sd: f64, best: f64) -> f64 {
    let gain = mean - best - XI;
    if sd <= 1e-12 {
        return gain.max(0.0);
    }
    let z = gain / sd;
    let pdf = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cdf = 0.5 * (1.0 + libm::erf(z / std::f64::consts::SQRT_2));
    gain * cdf + sd * pdf
}
