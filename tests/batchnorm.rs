//! The batchnorm family's reference and its ResNet-50 suite, on the host: the reference is the
//! eval-mode formula, per channel; a batch norm that forgets eps, or indexes channels as if the
//! activations were NCHW, fails the check; the suite holds one batch norm per convolution.

use kernel_lab::facts::networks::RESNET50;
use kernel_lab::measure::families::batchnorm::{reference, resnet50, BATCHNORM_FP16, EPS};
use kernel_lab::measure::families::{Family, Shape};
use kernel_lab::measure::verify;
use kernel_lab::schema::check::Precision;

#[test]
fn the_reference_normalises_each_channel_with_its_own_statistics() {
    // Two pixels of three channels, NHWC: element i is channel i % 3.
    let x = [1.0f32, 2.0, 3.0, 5.0, 6.0, 7.0];
    let stats = [vec![1.0f32, 0.0, -1.0], vec![4.0, 1.0, 0.25], vec![2.0, 1.0, 0.5], vec![0.0, 0.5, 1.0]];
    let want = |i: usize, m: f64, v: f64, g: f64, b: f64| (x[i] as f64 - m) / (v + EPS).sqrt() * g + b;
    assert_eq!(reference(&x, &stats, 3, 0), want(0, 1.0, 4.0, 2.0, 0.0));
    assert_eq!(reference(&x, &stats, 3, 4), want(4, 0.0, 1.0, 1.0, 0.5));
    assert_eq!(reference(&x, &stats, 3, 5), want(5, -1.0, 0.25, 0.5, 1.0));
}

#[test]
fn forgetting_eps_or_the_channel_order_fails() {
    let (pixels, c) = (64usize, 48usize);
    let x: Vec<f32> = (0..pixels * c).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
    // Tiny variances, where eps matters.
    let stats = [vec![0.1f32; c], (0..c).map(|j| 1e-4 + j as f32 * 1e-5).collect(), vec![1.0; c], vec![0.0; c]];
    let want: Vec<f64> = (0..x.len()).map(|i| reference(&x, &stats, c, i)).collect();
    let pass = |got: &[f32]| verify::check(got, want.len(), &|i| (i, want[i]), Precision::Fp16Storage).passed();
    assert!(pass(&want.iter().map(|&v| v as f32).collect::<Vec<_>>()));
    let no_eps: Vec<f32> = (0..x.len()).map(|i| ((x[i] - 0.1) / stats[1][i % c].sqrt()) as f32).collect();
    assert!(!pass(&no_eps));
    // Channels taken as NCHW's (the channel of element i is i / pixels).
    let nchw: Vec<f32> = (0..x.len()).map(|i| ((x[i] - 0.1) / (stats[1][i / pixels] + EPS as f32).sqrt()) as f32).collect();
    assert!(!pass(&nchw));
}

#[test]
fn the_resnet50_suite_is_one_batch_norm_per_convolution() {
    let shapes = resnet50(256);
    assert_eq!(shapes.iter().map(|s| s.1).sum::<u32>(), RESNET50.iter().map(|c| c.count).sum::<u32>());
    assert_eq!(shapes.len(), 12);
    assert_eq!(shapes[0], (Shape(vec![256, 112, 112, 64]), 1));
    let suite = BATCHNORM_FP16.suites().into_iter().find(|s| s.name == "resnet50").unwrap();
    assert!(suite.about.contains("12 shapes"));
    assert_eq!(suite.shapes, shapes.into_iter().map(|s| s.0).collect::<Vec<_>>());
    // 11.1 million activations an image, each read and written in fp16.
    let bytes: f64 = resnet50(1).iter().map(|(s, n)| *n as f64 * BATCHNORM_FP16.work(s, None).bytes_written).sum();
    assert!((bytes / 2.0 - 11.11e6).abs() < 0.01e6, "{bytes}");
}

#[test]
fn the_training_backward_is_the_forwards_gradient() {
    use kernel_lab::measure::families::batchnorm_training::{backward_reference, batch_stats};
    // L = the sum of dy y, y the forward in training with the batch's statistics: dx, dgamma and
    // dbeta of the reference against central differences of L, in f64, on 3 pixels of 2 channels
    // and 5 pixels of 3.
    for (pixels, c) in [(3usize, 2usize), (5, 3)] {
        let x: Vec<f32> = (0..pixels * c).map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0).collect();
        let dy: Vec<f32> = (0..pixels * c).map(|i| ((i * 5 % 7) as f32 - 3.0) / 2.0).collect();
        let gamma: Vec<f32> = (0..c).map(|j| 0.5 + j as f32 / 4.0).collect();
        let loss = |x: &[f64], gamma: &[f64], beta: &[f64]| -> f64 {
            let xs: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let stats = batch_stats(&xs, c);
            (0..x.len())
                .map(|i| {
                    let (m, v) = stats[i % c];
                    // x in f64 for the numerator, so the differences see the step.
                    let mean = x.iter().skip(i % c).step_by(c).sum::<f64>() / pixels as f64;
                    let var = x.iter().skip(i % c).step_by(c).map(|&u| (u - mean) * (u - mean)).sum::<f64>() / pixels as f64;
                    assert!((m - mean).abs() < 1e-6 && (v - var).abs() < 1e-5);
                    dy[i] as f64 * ((x[i] - mean) / (var + EPS).sqrt() * gamma[i % c] + beta[i % c])
                })
                .sum()
        };
        let (xd, gd, bd): (Vec<f64>, Vec<f64>, Vec<f64>) =
            (x.iter().map(|&v| v as f64).collect(), gamma.iter().map(|&v| v as f64).collect(), vec![0.25; c]);
        let (dx, sums) = backward_reference(&x, &dy, &gamma, c);
        let h = 1e-6;
        let nudge =
            |v: &[f64], k: usize, by: f64| -> Vec<f64> { v.iter().enumerate().map(|(i, &u)| if i == k { u + by } else { u }).collect() };
        for k in 0..x.len() {
            let numeric = (loss(&nudge(&xd, k, h), &gd, &bd) - loss(&nudge(&xd, k, -h), &gd, &bd)) / (2.0 * h);
            assert!((numeric - dx[k]).abs() < 1e-6, "dx[{k}]: {numeric} vs {}", dx[k]);
        }
        for j in 0..c {
            let dgamma = (loss(&xd, &nudge(&gd, j, h), &bd) - loss(&xd, &nudge(&gd, j, -h), &bd)) / (2.0 * h);
            let dbeta = (loss(&xd, &gd, &nudge(&bd, j, h)) - loss(&xd, &gd, &nudge(&bd, j, -h))) / (2.0 * h);
            assert!((dgamma - sums[j]).abs() < 1e-6 && (dbeta - sums[c + j]).abs() < 1e-6, "channel {j}");
        }
    }
}

#[test]
fn a_pass_in_training_is_a_fifth_dimension_the_rung_does_not_take() {
    use kernel_lab::measure::families::batchnorm_training::BnPass;
    let shapes = BATCHNORM_FP16.info().shapes;
    for (text, pass) in [("8x56x56x64", BnPass::Inference), ("8x56x56x64-train", BnPass::Train), ("8x56x56x64-backward", BnPass::Backward)]
    {
        let s = shapes.parse(text).unwrap();
        assert_eq!((BnPass::of(&s), shapes.label(&s).as_str()), (pass, text));
        assert_eq!(BATCHNORM_FP16.kernels_take(&s).is_ok(), pass == BnPass::Inference, "{text}");
    }
    assert!(shapes.parse("8x56x56x64-eval").is_err());
    // The same bytes of activations in every pass but the backward's, which reads dy too.
    let work = |t: &str| BATCHNORM_FP16.work(&shapes.parse(t).unwrap(), None);
    let elements = 8.0 * 56.0 * 56.0 * 64.0;
    assert_eq!(work("8x56x56x64").bytes_read - 16.0 * 64.0, 2.0 * elements);
    assert_eq!(work("8x56x56x64-backward").bytes_read - 8.0 * 64.0, 4.0 * elements);
    assert_eq!(work("8x56x56x64-train").bytes_written - 8.0 * 64.0, 2.0 * elements);
    let suite = BATCHNORM_FP16.suites().into_iter().find(|s| s.name == "resnet50-training").unwrap();
    assert_eq!(suite.shapes.len(), 2 * resnet50(256).len());
}
