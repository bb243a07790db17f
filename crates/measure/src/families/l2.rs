//! The l2 family: repeated passes over working sets from 1 MiB to past 4x the L2 size; the knee of
//! bandwidth against size gives the lab's estimate of the L2 size, one per variant.
//! Shape: [working-set bytes]. Work: the set read `passes(bytes)` times. The kernels sum the set's
//! 32-bit words with wrapping integer adds, so the check is exact for any contents; DATA picks
//! them: random bits (incompressible) or random floats in [0, 1) (shared exponent bits).

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};
use rand::RngExt;

use super::inputs::{memcpy_d2d, poison, random_unit_f32, MEMCPY_D2D};
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_l2_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Status, Unit, Work};

pub struct L2;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::L2,
    baseline: Some(MEMCPY_D2D),
    vendor_best: false,
    precision: Precision::Exact,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Bytes { elem: 16 },
};

const MIB: u64 = 1 << 20;

/// Passes over a set of `bytes`: about 4 GiB read per launch, so small sets still run long.
pub fn passes(bytes: u64) -> u64 {
    ((4u64 << 30) / bytes.max(1)).clamp(2, 4096)
}

/// Where the set stops fitting: the midpoint between the plateau (the best rate) and the floor
/// (the rate of the largest set) is crossed for the last time, interpolated linearly between the
/// two sizes around the crossing. `points` are (bytes, GB/s) in ascending size. Scanning from the
/// large end skips dips inside the plateau (power-of-two sets can alias) and the small sets that
/// cannot fill the GPU.
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    let plateau = points.iter().map(|p| p.1).fold(f64::NAN, f64::max);
    let floor = points.last()?.1;
    if plateau.is_nan() || plateau <= floor {
        return None;
    }
    let mid = (plateau + floor) / 2.0;
    let i = points.iter().rposition(|p| p.1 >= mid)?;
    let ((w0, r0), (w1, r1)) = (points[i], *points.get(i + 1)?);
    Some(w0 + (w1 - w0) * (r0 - mid) / (r0 - r1))
}

/// The wrapping sum of a set's words `passes` times: what the partial sums must add up to.
pub fn checksum(words: &[u32], passes: u64) -> u32 {
    words.iter().fold(0u32, |s, &w| s.wrapping_add(w)).wrapping_mul(passes as u32)
}

impl Family for L2 {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        let mib: &[u64] = if quick {
            &[1, 8, 32, 64, 256]
        } else {
            &[1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96, 128, 192, 256]
        };
        mib.iter().map(|m| Shape(vec![m * MIB])).collect()
    }
    /// The baseline copies the set once (read and written); the kernel reads it `passes` times.
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work {
        let b = shape.0[0] as f64;
        match launch {
            None => Work { flops: 0.0, bytes_read: b, bytes_written: b },
            Some(_) => Work { flops: 0.0, bytes_read: b * passes(shape.0[0]) as f64, bytes_written: 0.0 },
        }
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        use rand::SeedableRng;
        let n = (shape.0[0] / 4) as usize;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let bits: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let floats: Vec<u32> = random_unit_f32(n, seed ^ 1).into_iter().map(f32::to_bits).collect();
        // The largest grid any configuration launches: 32 blocks of 1024 threads per SM.
        let out_len = gpu.info.sms as usize * 32 * 1024;
        let passes = passes(shape.0[0]);
        Ok(Box::new(L2Case {
            want: [checksum(&bits, passes), checksum(&floats, passes)],
            sets: [gpu.stream.clone_htod(&bits)?, gpu.stream.clone_htod(&floats)?],
            // SAFETY: a copy target; the check reads only what a launch wrote after poison().
            copy: unsafe { gpu.stream.alloc::<u32>(n) }?,
            // SAFETY: poisoned before every launch.
            out: unsafe { gpu.stream.alloc::<u32>(out_len) }?,
            bits,
            passes,
            data: 0,
            written: 0,
            baseline: false,
        }))
    }
    fn notes(&self, entries: &[&Entry], dev: &DeviceInfo) -> Vec<String> {
        let reported = dev.l2_bytes as f64 / MIB as f64;
        let mut variants: Vec<&str> = Vec::new();
        for e in entries.iter().filter(|e| !e.is_baseline()) {
            if !variants.contains(&e.variant.as_str()) {
                variants.push(&e.variant);
            }
        }
        variants
            .into_iter()
            .map(|v| {
                let mut points: Vec<(f64, f64)> = entries
                    .iter()
                    .filter(|e| e.variant == v && e.status == Status::Ok)
                    .filter_map(|e| Some((e.dims[0] as f64, e.rate?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                match knee(&points) {
                    Some(w) => {
                        let inferred = w / MIB as f64;
                        format!(
                            "{v}: L2 inferred from the knee {inferred:.1} MiB; the device reports {reported:.1} MiB ({:+.0}%)",
                            100.0 * (inferred - reported) / reported
                        )
                    }
                    None => format!("{v}: no knee in {} working-set sizes (the device reports {reported:.1} MiB of L2)", points.len()),
                }
            })
            .collect()
    }
}

struct L2Case {
    /// The random-bits set, which the baseline copies.
    bits: Vec<u32>,
    /// The sets DATA picks (0 random bits, 1 floats in [0, 1)) and their checksums.
    sets: [CudaSlice<u32>; 2],
    want: [u32; 2],
    copy: CudaSlice<u32>,
    out: CudaSlice<u32>,
    passes: u64,
    data: usize,
    /// Partial sums the last launch wrote (its grid times its block).
    written: usize,
    baseline: bool,
}

impl Case for L2Case {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.out)?;
        poison(gpu, &mut self.copy)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        // Only co-resident blocks: a second wave would re-read its own half of the set after the
        // first wave finished, and the sweep would see twice the L2.
        let Params::L2 { data } = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, 0, 0, 0)?;
        self.written = grid.0 as usize * kernel.config.threads() as usize;
        self.baseline = false;
        self.data = data as usize;
        let set = &self.sets[self.data];
        let (src, _s) = set.device_ptr(&gpu.stream);
        let (out, _o) = self.out.device_ptr_mut(&gpu.stream);
        let args = lab_l2_args { src, out, n: self.bits.len() as u64, passes: self.passes as i32 };
        // SAFETY: l2 kernels take lab_l2_args; src holds n words and out room for every thread.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.copy, &self.sets[0])
    }

    /// The kernel: the partial sums add up to passes x the set's sum, exactly. The baseline: an
    /// exact copy.
    fn check(&mut self, gpu: &Gpu, _precision: Precision) -> Result<Check> {
        if self.baseline {
            let out = gpu.stream.clone_dtoh(&self.copy)?;
            let bad = out.iter().zip(&self.bits).position(|(g, w)| g != w);
            return Ok(verify::check_words(bad.map(|i| (i, out[i], self.bits[i])), out.len()));
        }
        let out = gpu.stream.clone_dtoh(&self.out)?;
        let got = out[..self.written.min(out.len())].iter().fold(0u32, |s, &w| s.wrapping_add(w));
        let want = self.want[self.data];
        Ok(verify::check_words((got != want).then_some((0, got, want)), 1))
    }
}
