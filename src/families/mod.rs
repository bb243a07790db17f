//! Problem families. Each owns its inputs, its f64 reference, how its kernels and its vendor
//! baseline are launched, its declared work and what shapes a variant can take.

pub mod l2;
pub mod memory;
pub mod peak;
pub mod reduce;
pub mod sgemm;
pub mod tensor;
pub mod transpose;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::{LabError, Result};
use crate::registry::{Config, VariantSpec};
use crate::store::Entry;
use crate::verify::{Check, Precision};

/// A problem size: the family names its dimensions (m, n, k; or n for arrays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<u64>);

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&parts.join("x"))
    }
}

/// What one run of the problem must do, at the least: every rate is derived from it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes_read: f64,
    pub bytes_written: f64,
}

/// The rate a family reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// FLOPs / s, shown in TFLOP/s.
    Tflops,
    /// Bytes read plus bytes written / s, shown in GB/s.
    Gbs,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Tflops => "TFLOP/s",
            Unit::Gbs => "GB/s",
        }
    }
}

impl Work {
    /// The rate in `unit` for one run taking `ms` milliseconds.
    pub fn rate(&self, unit: Unit, ms: f64) -> f64 {
        let s = ms / 1e3;
        match unit {
            Unit::Tflops => self.flops / s / 1e12,
            Unit::Gbs => (self.bytes_read + self.bytes_written) / s / 1e9,
        }
    }
}

/// One problem family.
pub trait Family: Sync {
    fn name(&self) -> &'static str;
    /// The vendor routine every variant is compared with; None where there is none (the peak
    /// family compares with the spec sheet instead).
    fn baseline(&self) -> Option<&'static str>;
    fn precision(&self) -> Precision;
    fn unit(&self) -> Unit;
    /// The arithmetic its FLOPs are done in, as the spec sheet names it (whose measured
    /// ceiling bounds it on the roofline): fp32 unless the family says otherwise.
    fn arithmetic(&self) -> crate::sheet::Precision {
        crate::sheet::Precision::Fp32
    }
    /// Names of the shape's dimensions, matched by manifests' `multiple_of`.
    fn dims(&self) -> &'static [&'static str];
    fn default_sizes(&self, quick: bool) -> Vec<Shape>;
    /// Named sets of shapes (`--suite`), e.g. sgemm's "bert"; (name, what it is, shapes).
    fn suites(&self) -> Vec<(&'static str, &'static str, Vec<Shape>)> {
        Vec::new()
    }
    /// Lines said after the family's table, from this run's entries of the family (the l2 family
    /// infers the L2 size from them).
    fn notes(&self, entries: &[&Entry], dev: &DeviceInfo) -> Vec<String> {
        let _ = (entries, dev);
        Vec::new()
    }
    /// Where `kernel-lab tune` searches when no size is given: the largest quick size.
    fn tune_sizes(&self) -> Vec<Shape> {
        self.default_sizes(true).into_iter().last().into_iter().collect()
    }
    /// Parses one `--size` value; the message says what was expected.
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String>;
    /// How tables show a shape.
    fn label(&self, shape: &Shape) -> String {
        shape.to_string()
    }
    /// The work of one run in `config` (None: the baseline's).
    fn work(&self, shape: &Shape, config: Option<&Config>) -> Work;
    /// The device's ceiling in this family's unit for a variant in `config` (None: the
    /// baseline), from what the device reports or the spec sheet.
    fn peak(&self, dev: &DeviceInfo, config: Option<&Config>) -> Option<f64>;
    /// Inputs drawn from `seed`, the reference computed, outputs allocated.
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>>;

    /// Ok, or why the variant in `config` cannot take this shape: its manifest's
    /// `multiple_of`, and whatever the family's launch adds.
    fn can_implement(&self, v: &VariantSpec, config: &Config, shape: &Shape) -> std::result::Result<(), String> {
        let _ = config;
        multiple_of_ok(self.dims(), v, shape)
    }
}

/// The manifest's `multiple_of` against a shape whose dimensions are named `dims`.
pub fn multiple_of_ok(dims: &[&str], v: &VariantSpec, shape: &Shape) -> std::result::Result<(), String> {
    for &(dim, m) in v.multiple_of {
        let Some(pos) = dims.iter().position(|d| *d == dim) else {
            return Err(format!("the manifest's multiple_of names '{dim}', a dimension the family does not have"));
        };
        if shape.0[pos] % m != 0 {
            return Err(format!("needs {dim} % {m} == 0"));
        }
    }
    Ok(())
}

/// The GEMM families' check: `multiple_of`, and block rows (m / BM) within grid.y's 65535.
pub fn gemm_can_implement(dims: &[&str], v: &VariantSpec, config: &Config, shape: &Shape) -> std::result::Result<(), String> {
    multiple_of_ok(dims, v, shape)?;
    let bm = config.require("BM")?.max(1) as u64;
    if shape.0[0].div_ceil(bm) > 65535 {
        return Err(format!("m / BM = {} row tiles, over grid.y's 65535", shape.0[0].div_ceil(bm)));
    }
    Ok(())
}

/// One prepared problem: inputs on the GPU, a reference on the host, an output to check.
pub trait Case {
    /// Fills the output with NaN, so anything a kernel leaves unwritten fails the check.
    fn poison(&mut self, gpu: &Gpu) -> Result<()>;
    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()>;
    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()>;
    /// Compares the output now on the GPU with the reference.
    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check>;
}

/// Every family the lab implements.
pub fn all() -> Vec<&'static dyn Family> {
    vec![
        &memory::Memory,
        &l2::L2,
        &reduce::Reduce,
        &transpose::Transpose,
        &sgemm::Sgemm,
        &tensor::TENSOR,
        &tensor::TF32,
        &tensor::INT8,
        &peak::Peak,
    ]
}

pub fn get(name: &str) -> Option<&'static dyn Family> {
    all().into_iter().find(|f| f.name() == name)
}

/// Parses "1000", "16384x768x3072", "256M": a positive integer with an optional binary suffix.
pub fn parse_count(text: &str, what: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{what} '{text}' is not a positive whole number"))?;
    let v = n.checked_mul(mult).ok_or_else(|| format!("{what} '{text}' is too large"))?;
    if v == 0 {
        return Err(format!("{what} must be greater than 0"));
    }
    Ok(v)
}

/// An array size in bytes ("1G", "268435456"), a whole number of `unit`-byte elements.
pub fn parse_bytes(text: &str, unit: u64) -> std::result::Result<Shape, String> {
    let bytes = parse_count(text, "size in bytes")?;
    if bytes % unit != 0 {
        return Err(format!("{bytes} bytes is not a whole number of {unit}-byte elements"));
    }
    Ok(Shape(vec![bytes]))
}

/// The array sizes of the streaming families: 1 GiB (over 8x any L2 of the table) and 1 GiB plus
/// 12 bytes, so the paths for a length that is not a whole number of 16-byte vectors run too.
pub fn array_sizes(quick: bool) -> Vec<Shape> {
    const MIB: u64 = 1 << 20;
    if quick {
        vec![Shape(vec![512 * MIB + 12])]
    } else {
        vec![Shape(vec![1024 * MIB]), Shape(vec![1024 * MIB + 12])]
    }
}

/// The name of the streaming families' baseline, which `memcpy_d2d` launches.
pub const MEMCPY_D2D: &str = "cudaMemcpy D2D";

/// The baseline of the streaming families: cudaMemcpy device to device of `src` into `dst`.
pub fn memcpy_d2d<T>(gpu: &Gpu, dst: &mut cudarc::driver::CudaSlice<T>, src: &cudarc::driver::CudaSlice<T>) -> Result<()> {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let bytes = src.len().min(dst.len()) * std::mem::size_of::<T>();
    let (s, _s) = src.device_ptr(&gpu.stream);
    let (d, _d) = dst.device_ptr_mut(&gpu.stream);
    // SAFETY: both buffers hold at least `bytes` bytes and are distinct allocations.
    unsafe { cudarc::driver::result::memcpy_dtod_async(d, s, bytes, gpu.cu_stream()?) }?;
    Ok(())
}

/// Every `--size` value parsed by `family`; the error names the value.
pub fn parse_sizes(family: &dyn Family, texts: &[String]) -> Result<Vec<Shape>> {
    texts.iter().map(|t| family.parse_size(t).map_err(|m| LabError::Usage(format!("--size for {}: {m}", family.name())))).collect()
}

/// A seed for one family and shape, derived from the run's seed so each check draws its own
/// inputs and a run can be replayed with `--seed`.
pub fn seed_for(run_seed: u64, family: &str, shape: &Shape) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ run_seed;
    for b in format!("{family}/{shape}").bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `len` values drawn uniformly from [-1, 1) with `seed`: never zeros, never a pattern.
pub fn random_f32(len: usize, seed: u64) -> Vec<f32> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// `len` values drawn uniformly from [0, 1): for sums, which stay well conditioned.
pub fn random_unit_f32(len: usize, seed: u64) -> Vec<f32> {
    let mut v = random_f32(len, seed);
    for x in &mut v {
        *x = (*x + 1.0) * 0.5;
    }
    v
}

/// Fills a GPU buffer with 0xFF bytes: as f32 that is NaN, which every check rejects.
pub fn poison<T>(gpu: &Gpu, buf: &mut cudarc::driver::CudaSlice<T>) -> Result<()> {
    use cudarc::driver::DevicePtrMut;
    let bytes = buf.len() * std::mem::size_of::<T>();
    let (ptr, _sync) = buf.device_ptr_mut(&gpu.stream);
    // SAFETY: writes exactly the buffer's own bytes on the GPU's stream.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, gpu.cu_stream()?) }?;
    Ok(())
}
