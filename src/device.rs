//! What the running GPU reports, and the handle every family runs on.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use serde::{Deserialize, Serialize};

use crate::arch;
use crate::error::{LabError, Result};
use crate::registry::{Config, VariantSpec};

/// The device's own description, stored with every results file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub cc_major: u32,
    pub cc_minor: u32,
    pub sms: u32,
    pub l2_bytes: u64,
    pub smem_per_block_optin: u64,
    pub smem_per_sm: u64,
    pub total_mem_bytes: u64,
    /// Maximum SM clock, kHz, as the driver reports it (0 when it reports none).
    pub sm_clock_khz: u64,
    pub mem_clock_khz: u64,
    pub bus_width_bits: u64,
    /// e.g. "13.0"
    pub driver: String,
}

impl DeviceInfo {
    pub fn sm(&self) -> u32 {
        self.cc_major * 10 + self.cc_minor
    }

    pub fn arch_name(&self) -> String {
        format!("sm_{}", self.sm())
    }

    /// "nvidia-h200-sm_90": the results file's stem.
    pub fn slug(&self) -> String {
        let mut s: String = self.name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        while s.contains("--") {
            s = s.replace("--", "-");
        }
        format!("{}-{}", s.trim_matches('-'), self.arch_name())
    }

    /// DRAM bandwidth from the reported memory clock and bus (two transfers per clock), GB/s.
    pub fn peak_dram_gbs(&self) -> Option<f64> {
        (self.mem_clock_khz > 0 && self.bus_width_bits > 0)
            .then(|| 2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_width_bits as f64 / 8.0 / 1e9)
    }

    /// fp32 FMA rate from SMs x clock x the architecture's lanes per SM, TFLOP/s.
    pub fn peak_fp32_tflops(&self) -> Option<f64> {
        let a = arch::lookup(self.cc_major, self.cc_minor)?;
        (self.sm_clock_khz > 0).then(|| self.sms as f64 * a.fp32_lanes_per_sm as f64 * 2.0 * self.sm_clock_khz as f64 * 1e3 / 1e12)
    }
}

/// Whether the CUDA driver library can be loaded at all (cudarc panics on first use otherwise).
fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

fn no_gpu_check() -> Result<usize> {
    if !driver_present() {
        return Err(LabError::NoGpu("the CUDA driver library (libcuda.so) is not installed".into()));
    }
    let n = CudaContext::device_count().map_err(|e| LabError::NoGpu(format!("the CUDA driver found no usable GPU ({e})")))?;
    if n < 1 {
        return Err(LabError::NoGpu("the CUDA driver sees no GPU".into()));
    }
    Ok(n as usize)
}

fn driver_version() -> Result<String> {
    let mut v = 0i32;
    // SAFETY: writes one int; the driver library is loaded (checked by the caller).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok(format!("{}.{}", v / 1000, (v % 1000) / 10))
}

fn info(ordinal: usize, dev: &CudaContext) -> Result<DeviceInfo> {
    let attr = |a: Attr| -> u64 { dev.attribute(a).map(|v| v.max(0) as u64).unwrap_or(0) };
    Ok(DeviceInfo {
        ordinal,
        name: dev.name()?,
        cc_major: attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) as u32,
        cc_minor: attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) as u32,
        sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) as u32,
        l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        smem_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
        smem_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
        total_mem_bytes: dev.total_mem()? as u64,
        sm_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        mem_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        driver: driver_version()?,
    })
}

/// Every GPU the driver sees.
pub fn list() -> Result<Vec<DeviceInfo>> {
    let n = no_gpu_check()?;
    (0..n)
        .map(|i| {
            let ctx = CudaContext::new(i)?;
            info(i, &ctx)
        })
        .collect()
}

/// A loaded kernel: the variant, the configuration it was compiled with, its function.
pub struct Kernel {
    pub spec: &'static VariantSpec,
    pub config: Config,
    func: CudaFunction,
    /// The loaded module, for helper entries compiled with the kernel (pad_rows.cuh).
    module: Arc<cudarc::driver::CudaModule>,
    /// Where the code came from when not from the build's fatbin: said beside its results.
    pub compiled_here: Option<String>,
}

/// One GPU: its context and stream, its description, cuBLAS (made on first use), loaded kernels.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    blas: std::sync::OnceLock<CudaBlas>,
    kernels: HashMap<&'static str, Arc<Kernel>>,
    compiled: HashMap<String, Arc<Kernel>>,
}

impl Gpu {
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let n = no_gpu_check()?;
        if ordinal >= n {
            return Err(LabError::Usage(format!("GPU {ordinal} does not exist (the driver sees {n})")));
        }
        let ctx = CudaContext::new(ordinal)?;
        // One stream and raw pointers in argument structs: cudarc's per-buffer events add nothing.
        // SAFETY: all work is ordered on `stream`; no buffer is shared across streams.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let info = info(ordinal, &ctx)?;
        Ok(Gpu { ctx, stream, info, blas: std::sync::OnceLock::new(), kernels: HashMap::new(), compiled: HashMap::new() })
    }

    /// The cuBLAS handle on this GPU's stream, created on first use, with this GPU's context made
    /// current (raw cuBLAS calls act there).
    pub fn blas(&self) -> Result<&CudaBlas> {
        self.ctx.bind_to_thread()?;
        if let Some(b) = self.blas.get() {
            return Ok(b);
        }
        let b = CudaBlas::new(self.stream.clone())?;
        Ok(self.blas.get_or_init(|| b))
    }

    /// The stream's handle for a raw driver call, with this GPU's context made current first:
    /// raw calls act in the thread's current context, which with several GPUs may be another's.
    pub fn cu_stream(&self) -> Result<cudarc::driver::sys::CUstream> {
        self.ctx.bind_to_thread()?;
        Ok(self.stream.cu_stream())
    }

    /// Loads a variant's fatbin (the driver picks the SASS for this GPU, or JITs the PTX). Where
    /// the fatbin has nothing for this GPU but the manifest declares the variant for it (a GPU
    /// newer than the toolkit's PTX, or one the toolkit dropped, like Volta under CUDA 13), the
    /// variant is compiled here: by the toolkit's NVRTC, else by NVRTC 12.
    pub fn kernel(&mut self, spec: &'static VariantSpec) -> Result<Arc<Kernel>> {
        if let Some(k) = self.kernels.get(spec.name) {
            return Ok(k.clone());
        }
        let sm = self.info.sm();
        let k = if spec.runnable_on(sm).is_ok() || !spec.admits(sm) {
            self.load(spec, spec.config(), Ptx::from_binary(spec.fatbin.to_vec()))?
        } else {
            let (code, how) = match crate::jit::compile(spec, &spec.config(), sm) {
                Ok(ptx) => (ptx, format!("NVRTC {} here: sm_{sm} is not in the fatbin", crate::jit::version()?)),
                Err(first) => {
                    let n = crate::legacy::Nvrtc::load().map_err(|e| LabError::Usage(format!("{first}; {e}")))?;
                    let how = format!("NVRTC {}.{} here: sm_{sm} is not in the fatbin", n.version.0, n.version.1);
                    (Ptx::from_binary(n.cubin(spec, sm)?), how)
                }
            };
            Kernel { compiled_here: Some(how), ..self.load(spec, spec.config(), code)? }
        };
        let k = Arc::new(k);
        self.kernels.insert(spec.name, k.clone());
        Ok(k)
    }

    /// `spec` compiled by NVRTC in `config` for this GPU (once per process and configuration).
    pub fn jit(&mut self, spec: &'static VariantSpec, config: &Config) -> Result<Arc<Kernel>> {
        let key = format!("{}|{}", spec.name, config.label());
        if let Some(k) = self.compiled.get(&key) {
            return Ok(k.clone());
        }
        let code = crate::jit::compile(spec, config, self.info.sm())?;
        let k = Arc::new(self.load(spec, config.clone(), code)?);
        self.compiled.insert(key, k.clone());
        Ok(k)
    }

    /// Loads compiled code (a fatbin, or PTX from NVRTC) of `spec` built with `config`.
    pub fn load(&self, spec: &'static VariantSpec, config: Config, code: Ptx) -> Result<Kernel> {
        let module = self.ctx.load_module(code)?;
        let func = module.load_function(spec.symbol)?;
        if spec.dyn_smem_bytes > 48 * 1024 {
            func.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                spec.dyn_smem_bytes as i32,
            )?;
        }
        Ok(Kernel { spec, config, func, module, compiled_here: None })
    }

    pub fn sync(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }
}

impl Kernel {
    /// A compile-time constant of this kernel, which the family's launch needs.
    pub fn define(&self, name: &str) -> Result<i64> {
        self.config.require(name).map_err(LabError::Usage)
    }

    /// Blocks of this kernel that fit on one SM at once (0: it cannot launch at all).
    pub fn blocks_per_sm(&self) -> Result<u32> {
        Ok(self.func.occupancy_max_active_blocks_per_multiprocessor(self.config.threads(), self.spec.dyn_smem_bytes as usize, None)?)
    }

    /// Registers per thread, static shared memory and local memory (spills, stack) per thread.
    pub fn usage(&self) -> Result<(u32, u32, u32)> {
        Ok((self.func.num_regs()? as u32, self.func.shared_size_bytes()? as u32, self.func.local_size_bytes()? as u32))
    }
    /// Launches `name`, a helper entry of this kernel's module (not the variant itself), on
    /// `grid` blocks of `block` threads with one argument struct from lab.h.
    ///
    /// # Safety
    /// As for `launch`: `args` must be the struct `name` takes, its pointers live and large enough.
    pub unsafe fn launch_helper<A: cudarc::driver::DeviceRepr>(
        &self,
        name: &str,
        stream: &CudaStream,
        grid: u32,
        block: u32,
        args: &A,
    ) -> Result<()> {
        let func = self.module.load_function(name)?;
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let mut builder = stream.launch_builder(&func);
        builder.arg(args);
        // SAFETY: the caller guarantees the argument matches the helper's single by-value parameter.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// Launches the kernel with one argument struct from lab.h, on `grid` blocks of the
    /// manifest's block shape.
    ///
    /// # Safety
    /// `args` must be the lab.h struct this kernel's entry takes (its family's), and every device
    /// pointer in it must address a live allocation large enough for the shape it describes.
    pub unsafe fn launch<A: cudarc::driver::DeviceRepr>(&self, stream: &CudaStream, grid: (u32, u32, u32), args: &A) -> Result<()> {
        let b = self.config.block;
        let cfg = LaunchConfig { grid_dim: grid, block_dim: (b[0], b[1], b[2]), shared_mem_bytes: self.spec.dyn_smem_bytes };
        let mut builder = stream.launch_builder(&self.func);
        builder.arg(args);
        // SAFETY: the caller guarantees the argument matches the kernel's single by-value parameter.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}
