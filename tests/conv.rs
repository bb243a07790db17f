//! The conv family's reference on the host: the tap-by-tap GEMMs the device reference sums are the
//! convolution the CPU computes directly, at shapes whose padding, stride and channel counts differ;
//! a convolution computed with the filter flipped, or the padding on one side, fails the check; the
//! two gradients are the convolution's adjoints; and ResNet-50's table is what the suites and
//! `advise` read.

use kernel_lab::facts::networks::RESNET50;
use kernel_lab::measure::families::conv::{dgrad_as_forward, direct, tap, wgrad_at, CONV_FP16};
use kernel_lab::measure::families::conv_shape::{ConvShape, Pass};
use kernel_lab::measure::families::gemm_reference::full_product;
use kernel_lab::measure::families::Family;
use kernel_lab::measure::verify;
use kernel_lab::schema::check::Precision;

fn inputs(s: &ConvShape) -> (Vec<f32>, Vec<f32>) {
    // Small integers: every product and sum exact in f64, so the two orders agree bit for bit.
    let x = (0..s.input_elements()).map(|i| ((i * 7 + 3) % 11) as f32 - 5.0).collect();
    let f = (0..s.filter_elements()).map(|i| ((i * 5 + 1) % 9) as f32 - 4.0).collect();
    (x, f)
}

#[test]
fn the_taps_sum_to_the_convolution() {
    for text in ["2x9x7x3-5x3x3", "1x11x11x5-4x5x5-s2-p0", "3x8x8x16-8x1x1-s2", "1x7x7x3-2x7x7-s2"] {
        let s = ConvShape::parse(text).unwrap();
        let (x, f) = inputs(&s);
        let [pixels, k, _] = s.gemm().map(|d| d as usize);
        let mut sum = vec![0.0f64; pixels * k];
        for t in 0..(s.r * s.r) as usize {
            let (a, b) = tap(&s, &x, &f, t);
            for (acc, v) in sum.iter_mut().zip(full_product(&a, &b, pixels, k, s.c as usize)) {
                *acc += v;
            }
        }
        assert_eq!(sum, direct(&s, &x, &f), "{text}");
    }
}

#[test]
fn the_direct_convolution_is_a_convolution() {
    // One image of 3 x 3, one channel, a 3 x 3 filter of ones with same padding: each output is
    // the sum of its pixel's neighbours; the centre sees all nine.
    let s = ConvShape::parse("1x3x3x1-1x3x3").unwrap();
    let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let out = direct(&s, &x, &[1.0; 9]);
    assert_eq!(out, vec![12.0, 21.0, 16.0, 27.0, 45.0, 33.0, 24.0, 39.0, 28.0]);
    // Stride 2, no padding, on 5 x 5: the outputs are the windows at (0, 0), (0, 2), (2, 0), (2, 2).
    let s = ConvShape::parse("1x5x5x1-1x3x3-s2-p0").unwrap();
    let x: Vec<f32> = (0..25).map(|v| v as f32).collect();
    let centre = [6.0, 8.0, 16.0, 18.0];
    assert_eq!(direct(&s, &x, &[1.0; 9]), centre.iter().map(|c| 9.0 * c).collect::<Vec<f64>>());
}

#[test]
fn a_flipped_filter_or_lopsided_padding_fails_the_check() {
    let s = ConvShape::parse("2x9x9x8-4x3x3").unwrap();
    let (x, f) = inputs(&s);
    let want = direct(&s, &x, &f);
    let pass = |got: &[f64]| {
        let got: Vec<f32> = got.iter().map(|&v| v as f32).collect();
        verify::check(&got, want.len(), &|i| (i, want[i]), Precision::Fp16Storage).passed()
    };
    assert!(pass(&want));
    // The filter flipped (convolution proper, not the cross-correlation frameworks compute).
    let (r, c, k) = (3usize, 8usize, 4usize);
    let flipped: Vec<f32> = (0..f.len())
        .map(|i| {
            let (o, rest) = (i / (r * r * c), i % (r * r * c));
            let (t, ch) = (rest / c, rest % c);
            f[o * r * r * c + (r * r - 1 - t) * c + ch]
        })
        .collect();
    assert_eq!(flipped.len(), k * r * r * c);
    assert!(!pass(&direct(&s, &x, &flipped)));
    // The padding all on the far side: the window shifted by one pixel.
    let lopsided = ConvShape { pad: 0, h: 11, w: 11, ..s };
    let shifted: Vec<f32> = (0..lopsided.input_elements() as usize)
        .map(|i| {
            let (img, rest) = (i / (11 * 11 * c), i % (11 * 11 * c));
            let (ih, iw, ch) = (rest / (11 * c), rest / c % 11, rest % c);
            if ih < 9 && iw < 9 {
                x[((img * 9 + ih) * 9 + iw) * c + ch]
            } else {
                0.0
            }
        })
        .collect();
    assert!(!pass(&direct(&lopsided, &shifted, &f)));
}

#[test]
fn the_resnet50_suite_is_the_networks_table_at_batch_256() {
    // The backward suite: every shape's filters' gradient, and its input's but the stem's, whose
    // images need none.
    let backward = CONV_FP16.suites().into_iter().find(|s| s.name == "resnet50-backward").unwrap();
    let passes: Vec<Pass> = backward.shapes.iter().map(|s| ConvShape::of(s).pass).collect();
    assert_eq!(passes.len(), 2 * RESNET50.len() - 1);
    assert_eq!(passes.iter().filter(|&&p| p == Pass::Filter).count(), RESNET50.len());
    assert_eq!(ConvShape::of(&backward.shapes[0]).label(), "256x224x224x3-64x7x7-s2-p3-wgrad");
    let suite = CONV_FP16.suites().into_iter().find(|s| s.name == "resnet50").unwrap();
    assert_eq!(suite.shapes.len(), RESNET50.len());
    let stem = ConvShape::of(&suite.shapes[0]);
    assert_eq!(stem.label(), "256x224x224x3-64x7x7-s2-p3");
    assert_eq!(stem.gemm(), [256 * 112 * 112, 64, 147]);
    let work: f64 = suite.shapes.iter().zip(RESNET50).map(|(s, c)| c.count as f64 * CONV_FP16.work(s, None).flops).sum();
    // 4.1 G multiply-adds an image, 256 images, 2 operations each.
    assert!((work / (2.0 * 256.0) - 4.09e9).abs() < 0.03e9, "{work}");
}

#[test]
fn the_gradients_are_the_convolutions_adjoints() {
    // For y = x (*) w and any dy: the sum of dy y is the sum of dx x and the sum of dw w, where dx
    // and dw are the two gradients. Small integers keep every sum exact, so they agree exactly;
    // the shapes have strides whose windows leave input rows unread (11 - 3 = 8 is not a
    // multiple of 3) and padding on one side or none.
    for text in ["2x9x7x3-5x3x3", "1x11x11x5-4x3x3-s3-p0", "3x8x8x16-8x1x1-s2-p0", "1x12x10x3-2x7x7-s2", "2x9x9x4-6x5x5-s2-p1"] {
        let s = ConvShape::parse(text).unwrap();
        let (x, w) = inputs(&s);
        let dy: Vec<f32> = (0..s.output_elements()).map(|i| ((i * 3 + 2) % 7) as f32 - 3.0).collect();
        let dot = |a: &[f32], b: &[f64]| a.iter().zip(b).map(|(&u, &v)| u as f64 * v).sum::<f64>();
        let forward = dot(&dy, &direct(&s, &x, &w));
        let (t, spread, turned) = dgrad_as_forward(&s, &dy, &w);
        assert_eq!((t.p(), t.q()), (s.h, s.w), "{text}: dx has the input's shape");
        let dx = direct(&t, &spread, &turned);
        assert_eq!(dot(&x, &dx), forward, "{text}: dx");
        // And element by element: each output's dy scattered back through every tap that read
        // an input pixel.
        let (p, q, k, c, r) = (s.p() as usize, s.q() as usize, s.k as usize, s.c as usize, s.r as usize);
        let mut scattered = vec![0.0f64; x.len()];
        for (img, i, j, o) in
            (0..s.n as usize).flat_map(|n| (0..p).flat_map(move |i| (0..q).flat_map(move |j| (0..k).map(move |o| (n, i, j, o)))))
        {
            for (ti, tj) in (0..r).flat_map(|ti| (0..r).map(move |tj| (ti, tj))) {
                let (ih, iw) = ((i * s.stride as usize + ti) as i64 - s.pad as i64, (j * s.stride as usize + tj) as i64 - s.pad as i64);
                if ih < 0 || iw < 0 || ih >= s.h as i64 || iw >= s.w as i64 {
                    continue;
                }
                for ch in 0..c {
                    let at = ((img * s.h as usize + ih as usize) * s.w as usize + iw as usize) * c + ch;
                    scattered[at] += dy[((img * p + i) * q + j) * k + o] as f64 * w[((o * r + ti) * r + tj) * c + ch] as f64;
                }
            }
        }
        assert_eq!(dx, scattered, "{text}: dx element by element");
        let depth = (s.r * s.r * s.c) as usize;
        let dw: Vec<f64> = (0..w.len()).map(|e| wgrad_at(&s, &x, &dy, e / depth, e % depth)).collect();
        assert_eq!(dot(&w, &dw), forward, "{text}: dw");
    }
    // The pass changes what is read and written, not the work.
    let s = ConvShape::parse("4x14x14x32-64x3x3-s2").unwrap();
    let (fwd, dgrad, wgrad) = (s.work(2.0), s.with(Pass::Data).work(2.0), s.with(Pass::Filter).work(2.0));
    assert!(fwd.flops == dgrad.flops && fwd.flops == wgrad.flops);
    assert_eq!(dgrad.bytes_written, 2.0 * s.input_elements() as f64);
    assert_eq!(wgrad.bytes_written, 2.0 * s.filter_elements() as f64);
}

#[test]
fn a_gradient_of_another_convolution_fails_the_identity() {
    // dx computed with the filters' channel counts swapped but not turned half a turn differs.
    let s = ConvShape::parse("2x9x9x8-4x3x3").unwrap();
    let (x, w) = inputs(&s);
    let dy: Vec<f32> = (0..s.output_elements()).map(|i| ((i * 3 + 2) % 7) as f32 - 3.0).collect();
    let (t, spread, _) = dgrad_as_forward(&s, &dy, &w);
    let forward: f64 = dy.iter().zip(direct(&s, &x, &w)).map(|(&a, b)| a as f64 * b).sum();
    // The filters with c and k swapped but not turned: the cross-correlation's adjoint needs both.
    let (r, c, k) = (3usize, 8usize, 4usize);
    let unturned: Vec<f32> = (0..c * r * r * k).map(|e| w[(e % k * r * r + e / k % (r * r)) * c + e / (r * r * k)]).collect();
    let dx = direct(&t, &spread, &unturned);
    assert_ne!(x.iter().zip(&dx).map(|(&a, b)| a as f64 * b).sum::<f64>(), forward);
}

#[test]
fn the_rungs_take_the_forward_pass_alone() {
    // A gradient's shape is cuDNN's alone: every rung is skipped there with the reason, before a
    // launch could read the wrong buffers.
    let spec = kernel_lab::gpu::registry::by_name("conv_fp16_01_implicit_gemm").unwrap();
    let forward = ConvShape::parse("2x9x9x16-24x3x3").unwrap();
    for (s, ok) in [(forward, true), (forward.with(Pass::Data), false), (forward.with(Pass::Filter), false)] {
        let got = kernel_lab::measure::families::can_implement(&CONV_FP16, spec, &spec.launch, &s.shape());
        assert_eq!(got.is_ok(), ok, "{}: {got:?}", s.label());
        assert!(got.is_ok() || got.unwrap_err().starts_with("needs the forward pass"));
    }
}
