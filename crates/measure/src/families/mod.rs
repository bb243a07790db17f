//! Problem families. Each is its constant facts ([`FamilyInfo`]) and a few functions: its sizes,
//! its declared work, its ceiling, and how a case is prepared (inputs, the f64 reference, the
//! launches of its kernels and of its vendor baseline, the check).

pub mod batchnorm;
pub mod batchnorm_training;
pub mod conv;
pub mod conv_shape;
pub mod gemm_reference;
pub mod inputs;
pub mod l2;
pub mod layernorm;
pub mod layernorm_bwd;
pub mod memory;
pub mod peak;
pub mod pitched;
pub mod reduce;
pub mod sgemm;
pub mod shapes;
pub mod softmax;
pub mod softmax_bwd;
pub mod stream_k;
pub mod tensor;
pub mod transpose;

use rand::Rng;

pub use shapes::{Shape, Shapes};

use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Grid, Launch};
use crate::facts::sheet;
use crate::gpu::availability::{self, Source};
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::lt;
use crate::gpu::registry::{Config, VariantSpec};
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Unit, Work};

/// What a family is, as data.
#[derive(Debug)]
pub struct FamilyInfo {
    pub id: FamilyId,
    /// The vendor routine every variant is compared with; None where there is none (the peak
    /// family compares with the spec sheet instead).
    pub baseline: Option<&'static str>,
    /// Whether the baseline is a GEMM cuBLASLt can run (`Case::vendor_gemm`), so that it is also
    /// timed at its best.
    pub vendor_best: bool,
    /// How close to the reference its outputs must come.
    pub precision: Precision,
    pub unit: Unit,
    /// The arithmetic its FLOPs are done in, as the spec sheet names it (whose measured ceiling
    /// bounds it on the roofline).
    pub arithmetic: sheet::Precision,
    pub shapes: Shapes,
}

/// A named set of shapes (`--suite bert`).
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    pub shapes: Vec<Shape>,
}

/// One problem family.
pub trait Family: Sync {
    fn info(&self) -> &'static FamilyInfo;
    fn default_sizes(&self, quick: bool) -> Vec<Shape>;
    /// Named sets of shapes, e.g. sgemm's "bert".
    fn suites(&self) -> Vec<Suite> {
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
    /// A random shape for `verify --fuzz` (`Shapes::fuzz`).
    fn fuzz_shape(&self, rng: &mut dyn Rng) -> Shape {
        self.info().shapes.fuzz(rng)
    }
    /// The work of one run of a kernel with `launch` (None: the baseline's).
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work;
    /// The device's ceiling in this family's unit for a kernel with `launch` (None: the
    /// baseline): by default what the device reports (DRAM bandwidth, or the fp32 FMA rate);
    /// families on other units say so (the spec sheet's rate for their precision).
    fn peak(&self, dev: &DeviceInfo, launch: Option<&Launch>) -> Option<f64> {
        let _ = launch;
        match self.info().unit {
            Unit::Gbs => dev.peak_dram_gbs(),
            Unit::Tflops => dev.peak_fp32_tflops(),
        }
    }
    /// Ok, or why none of the family's kernels take `shape`, which its vendor routine still
    /// runs (the conv family's rungs run the forward pass alone).
    fn kernels_take(&self, _shape: &Shape) -> std::result::Result<(), String> {
        Ok(())
    }
    /// Inputs drawn from `seed`, the reference computed, outputs allocated.
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>>;
}

/// One prepared problem: inputs on the GPU, a reference on the host, an output to check.
pub trait Case {
    /// Fills the output with NaN, so anything a kernel leaves unwritten fails the check.
    fn poison(&mut self, gpu: &Gpu) -> Result<()>;
    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()>;
    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()>;
    /// The baseline's GEMM as cuBLASLt takes it, for the GEMM families, whose vendor baseline is
    /// also timed at its best (the fastest of cuBLASLt's top heuristic candidates).
    fn vendor_gemm(&self, gpu: &Gpu) -> Option<lt::Gemm> {
        let _ = gpu;
        None
    }
    /// Compares the output now on the GPU with the reference.
    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check>;
}

impl FamilyInfo {
    pub fn name(&self) -> &'static str {
        self.id.name()
    }
}

/// Every family the lab implements: the registry, one line a family.
pub fn all() -> Vec<&'static dyn Family> {
    vec![
        &memory::Memory,
        &l2::L2,
        &reduce::Reduce,
        &transpose::Transpose,
        &softmax::FP32,
        &softmax::FP16,
        &softmax::BF16,
        &softmax_bwd::SoftmaxBwd,
        &layernorm::FP32,
        &layernorm::FP16,
        &layernorm::BF16,
        &layernorm_bwd::LayerNormBwd,
        &sgemm::Sgemm,
        &tensor::FP16,
        &tensor::BF16,
        &tensor::TF32,
        &tensor::INT8,
        &tensor::FP8,
        &tensor::FP8_E5M2,
        &tensor::LINEAR_FP16,
        &tensor::LINEAR_BF16,
        &conv::CONV_FP16,
        &batchnorm::BATCHNORM_FP16,
        &peak::Peak,
    ]
}

/// The family named `name` (`FamilyId::parse`), where the lab implements it.
pub fn get(name: &str) -> Option<&'static dyn Family> {
    FamilyId::parse(name).and_then(by_id)
}

pub fn by_id(id: FamilyId) -> Option<&'static dyn Family> {
    all().into_iter().find(|f| f.info().id == id)
}

/// The family of a variant; an error where csrc/ has a family that this crate does not.
pub fn of(spec: &VariantSpec) -> Result<&'static dyn Family> {
    get(&spec.family).ok_or_else(|| {
        LabError::Usage(format!("csrc/{} has a manifest but the lab has no such family in crates/measure/src/families", spec.family))
    })
}

/// Every `--size` value parsed by `family`; the error names the value.
pub fn parse_sizes(family: &dyn Family, texts: &[String]) -> Result<Vec<Shape>> {
    let info = family.info();
    texts.iter().map(|t| info.shapes.parse(t).map_err(|m| LabError::Usage(format!("--size for {}: {m}", info.name())))).collect()
}

/// Ok, or why a kernel with `launch` cannot take `shape`: the family's kernels at all, the
/// manifest's `multiple_of`, and a tiled grid's rows within CUDA's 65535 blocks in y.
pub fn can_implement(fam: &dyn Family, spec: &VariantSpec, launch: &Launch, shape: &Shape) -> std::result::Result<(), String> {
    fam.kernels_take(shape)?;
    let dims = fam.info().shapes.dims();
    for (dim, m) in &spec.multiple_of {
        let Some(pos) = dims.iter().position(|d| d == dim) else {
            return Err(format!("the manifest's multiple_of names '{dim}', a dimension the family does not have"));
        };
        if shape.0[pos] % m != 0 {
            return Err(format!("needs {dim} % {m} == 0"));
        }
    }
    if let (Grid::Tiles { y, .. }, true) = (launch.grid, shape.0.len() >= 2) {
        let rows = shape.0[0].div_ceil(y as u64);
        if rows > 65535 {
            return Err(format!("{rows} row tiles, over grid.y's 65535"));
        }
    }
    Ok(())
}

/// The one decision for `config` of `spec` at `shape` on a GPU of compute capability `sm`: where
/// its code comes from and its launch, or why it cannot run (the GPU, the configuration, the shape).
pub fn can_run(spec: &VariantSpec, config: &Config, shape: &Shape, sm: u32) -> std::result::Result<(Source, Launch), String> {
    let source = availability::source(spec, sm)?;
    let launch = availability::configuration(spec, config, Some(sm))?;
    let fam = of(spec).map_err(|e| e.to_string())?;
    can_implement(fam, spec, &launch, shape)?;
    Ok((source, launch))
}

/// A kernel whose launch parameters are not its family's: the build's protocol check makes this
/// unreachable for built variants, so it is an error, not a skip.
pub fn params_mismatch(kernel: &Kernel) -> LabError {
    LabError::Usage(format!("{} does not take its family's launch parameters ({:?})", kernel.spec.name, kernel.launch.params))
}
