//! The peak family's closed-form check, without a GPU: the inputs it draws keep every
//! accumulator exact, so start + tasks x step is what the kernels must produce.

use half::f16;
use kernel_lab::facts::sheet::Precision;
use kernel_lab::measure::families::peak::{e4m3_bits, inputs, precision_of, tasks_of};

#[test]
fn fp8_encodings() {
    assert_eq!(e4m3_bits(1.0), Some(0x38));
    assert_eq!(e4m3_bits(0.5), Some(0x30));
    assert_eq!(e4m3_bits(0.625), Some(0x32));
    assert_eq!(e4m3_bits(-0.875), Some(0x80 | 0x36));
    assert_eq!(e4m3_bits(0.3), None, "not exact in e4m3");
}

#[test]
fn tasks_go_round_robin_to_warps() {
    assert_eq!((0..10).map(|w| tasks_of(w, 10, 25)).sum::<u64>(), 25);
    assert_eq!(tasks_of(4, 10, 25), 3);
    assert_eq!(tasks_of(5, 10, 25), 2);
    assert_eq!(tasks_of(30, 40, 25), 0);
}

#[test]
fn every_lab_precision_code_has_a_sheet_precision() {
    for code in 0..10 {
        assert!(precision_of(code).is_some(), "LAB code {code}");
    }
    assert!(precision_of(10).is_none());
}

/// One task of the SIMT kernel in fp32, as the GPU rounds it (fused multiply-add).
fn fp32_task(x: f32, one: f32, up: f32, down: f32, iters: usize) -> f32 {
    let mut x = x;
    for _ in 0..iters / 2 {
        x = x.mul_add(one, up);
        x = x.mul_add(one, down);
    }
    x.mul_add(one, up)
}

/// fp16 fused multiply-add: the exact result rounded once to fp16.
fn hfma(x: f16, a: f16, b: f16) -> f16 {
    f16::from_f64(x.to_f64() * a.to_f64() + b.to_f64())
}

#[test]
fn the_closed_form_is_exact_for_every_seed() {
    for seed in 0..50 {
        // fp32 SIMT: 8 chains, 150 tasks of 1025 FMAs (more than the default run gives a warp).
        let inp = inputs(Precision::Fp32, 8, 4, None, seed).unwrap();
        let f = |w: u64| f32::from_bits(w as u32);
        for (j, &s) in inp.starts.iter().enumerate() {
            let mut x = f(inp.words[3 + j]);
            for _ in 0..150 {
                x = fp32_task(x, f(inp.words[0]), f(inp.words[1]), f(inp.words[2]), 1025);
            }
            assert_eq!(x as f64, s + 150.0 * inp.step, "seed {seed} chain {j}");
        }
        // fp16x2 SIMT, low lanes.
        let inp = inputs(Precision::Fp16, 8, 4, None, seed).unwrap();
        let lo = |w: u64| f16::from_bits(w as u16);
        for j in 0..8 {
            let mut x = lo(inp.words[3 + j]);
            for _ in 0..150 {
                for _ in 0..512 {
                    x = hfma(x, lo(inp.words[0]), lo(inp.words[1]));
                    x = hfma(x, lo(inp.words[0]), lo(inp.words[2]));
                }
                x = hfma(x, lo(inp.words[0]), lo(inp.words[1]));
            }
            assert_eq!(x.to_f64(), inp.starts[2 * j] + 150.0 * inp.step, "seed {seed} fp16 chain {j}");
        }
        // fp16-accumulate Tensor Cores: D = A.B + C rounded to fp16 once per mma.
        let inp = inputs(Precision::Fp16F16Acc, 4, 4, None, seed).unwrap();
        let (mut d, step) = (f16::from_bits(inp.words[3] as u16), inp.step);
        for _ in 0..150 {
            for _ in 0..512 {
                d = f16::from_f64(d.to_f64() + step);
                d = f16::from_f64(d.to_f64() - step);
            }
            d = f16::from_f64(d.to_f64() + step);
        }
        assert_eq!(d.to_f64(), inp.starts[0] + 150.0 * step, "seed {seed} fp16 accumulate");
        // The other Tensor Core inputs: the sums fit fp32's (and int32's) exact range.
        for p in [Precision::Fp16F32Acc, Precision::Bf16F32Acc, Precision::Tf32, Precision::Int8, Precision::Fp8F32Acc] {
            let inp = inputs(p, 4, 4, None, seed).unwrap();
            let end = inp.starts[0] + 150.0 * inp.step;
            assert!(end < (1 << 22) as f64 && (end * 4.0).fract() == 0.0, "{p:?}: {end}");
            assert_eq!(inp.starts.len(), 16);
        }
    }
}

#[test]
fn fp64_tensor_inputs_are_full_doubles() {
    let inp = inputs(Precision::Fp64Tensor, 4, 2, None, 11).unwrap();
    // 64-bit images (the kernel reads them whole), two accumulators per thread and chain.
    let (a, b, minus_b) = (f64::from_bits(inp.words[0]), f64::from_bits(inp.words[1]), f64::from_bits(inp.words[2]));
    assert_eq!(minus_b, -b);
    assert_eq!(inp.step, 4.0 * a * b, "m8n8k4: K = 4");
    assert_eq!(inp.starts.len(), 8);
    assert_eq!(f64::from_bits(inp.words[3]), inp.starts[0]);
    assert_eq!(precision_of(1), Some(Precision::Fp64Tensor));
    // A thread's float output sums 8 accumulators, multiples of 1/16: exact while below 2^16 each.
    for seed in 0..200 {
        let inp = inputs(Precision::Fp64Tensor, 4, 2, None, seed).unwrap();
        let end = inp.starts[0] + 150.0 * inp.step;
        assert!(end < 65536.0 && (end * 16.0).fract() == 0.0, "seed {seed}: {end}");
    }
}

#[test]
fn fp64_m16n8k16_sums_sixteen_products_per_mma() {
    let inp = inputs(Precision::Fp64Tensor, 4, 4, Some(16), 11).unwrap();
    let (a, b) = (f64::from_bits(inp.words[0]), f64::from_bits(inp.words[1]));
    assert_eq!(inp.step, 16.0 * a * b, "m16n8k16: K = 16");
    assert_eq!(inp.starts.len(), 16, "four accumulators per thread and chain");
    // 16 accumulators summed into one float, multiples of 1/4: exact while below 2^20 in all.
    for seed in 0..200 {
        let inp = inputs(Precision::Fp64Tensor, 4, 4, Some(16), seed).unwrap();
        let sum = 16.0 * (inp.starts[0] + 150.0 * inp.step);
        assert!(sum < (1 << 20) as f64 && (sum * 4.0).fract() == 0.0, "seed {seed}: {sum}");
    }
}
