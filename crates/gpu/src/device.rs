//! The GPU handle every family runs on (context, stream, cuBLAS, loaded kernels), what the GPU
//! reports of itself, and a loaded kernel with its typed launch.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::availability::{self, Source};
use super::driver;
use super::ffi::Abi;
use super::registry::{self, Config, VariantSpec};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Fit, Grid, Launch};
use crate::schema::device::DeviceInfo;

fn no_gpu_check() -> Result<usize> {
    if !driver::driver_present() {
        return Err(LabError::NoGpu("the CUDA driver library (libcuda.so) is not installed".into()));
    }
    let n = CudaContext::device_count().map_err(|e| LabError::NoGpu(format!("the CUDA driver found no usable GPU ({e})")))?;
    if n < 1 {
        return Err(LabError::NoGpu("the CUDA driver sees no GPU".into()));
    }
    Ok(n as usize)
}

/// This machine's name, as runs record it.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().or_else(|| std::env::var("HOSTNAME").ok())?;
    Some(name.trim().to_string()).filter(|n| !n.is_empty())
}

/// nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
fn uuid_text(bytes: &[std::ffi::c_char; 16]) -> String {
    let hex: String = bytes.iter().map(|&b| format!("{:02x}", b as u8)).collect();
    format!("GPU-{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
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
        driver: driver::driver_version()?,
        uuid: dev.uuid().ok().map(|u| uuid_text(&u.bytes)),
        host: host_name(),
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

/// A loaded kernel: the variant, the configuration it was compiled with and its typed launch.
pub struct Kernel {
    pub spec: &'static VariantSpec,
    pub config: Config,
    pub launch: Launch,
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
    kernels: HashMap<String, Arc<Kernel>>,
}

impl Gpu {
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let n = no_gpu_check()?;
        if ordinal >= n {
            return Err(LabError::Usage(format!("GPU {ordinal} does not exist (the driver sees {n})")));
        }
        let ctx = CudaContext::new(ordinal)?;
        // One stream and raw pointers in argument structs: cudarc's per-buffer events add nothing.
        // Pinned host buffers lose theirs too: a read from one must wait on the stream itself.
        // SAFETY: all work is ordered on `stream`; no buffer is shared across streams.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let info = info(ordinal, &ctx)?;
        Ok(Gpu { ctx, stream, info, blas: std::sync::OnceLock::new(), kernels: HashMap::new() })
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

    /// The stream's handle for a raw driver call in this crate (`driver::raw_stream`).
    pub(crate) fn cu_stream(&self) -> Result<cudarc::driver::sys::CUstream> {
        driver::raw_stream(&self.stream)
    }

    /// `spec` in its manifest configuration, from where `availability::source` says: the build's
    /// fatbin (the driver picks the SASS or JITs the PTX), else compiled here by the toolkit's
    /// NVRTC, or by NVRTC 12 for architectures CUDA 13 dropped.
    pub fn kernel(&mut self, spec: &'static VariantSpec) -> Result<Arc<Kernel>> {
        if let Some(k) = self.kernels.get(&spec.name) {
            return Ok(k.clone());
        }
        let sm = self.info.sm();
        let k = match availability::source(spec, sm).map_err(LabError::Usage)? {
            Source::Fatbin => self.load(spec, spec.config(), Ptx::from_binary(registry::fatbin(spec)?), None)?,
            Source::CompileHere => {
                let (code, how) = match super::jit::compile(spec, &spec.config(), sm) {
                    Ok(ptx) => (ptx, format!("NVRTC {} here: sm_{sm} is not in the fatbin", super::jit::version()?)),
                    Err(first) => {
                        let n = super::legacy::Nvrtc::load().map_err(|e| LabError::Unavailable(format!("{first}; {e}")))?;
                        let how = format!("NVRTC {}.{} here: sm_{sm} is not in the fatbin", n.version.0, n.version.1);
                        (Ptx::from_binary(n.cubin(spec, sm)?), how)
                    }
                };
                self.load(spec, spec.config(), code, Some(how))?
            }
        };
        let k = Arc::new(k);
        self.kernels.insert(spec.name.clone(), k.clone());
        Ok(k)
    }

    /// `spec` compiled by NVRTC in `config` for this GPU (once per process and configuration).
    pub fn jit(&mut self, spec: &'static VariantSpec, config: &Config) -> Result<Arc<Kernel>> {
        let key = format!("{}|{}", spec.name, config.label());
        if let Some(k) = self.kernels.get(&key) {
            return Ok(k.clone());
        }
        let code = super::jit::compile(spec, config, self.info.sm())?;
        let k = Arc::new(self.load(spec, config.clone(), code, None)?);
        self.kernels.insert(key, k.clone());
        Ok(k)
    }

    /// Loads compiled code (a fatbin, or PTX from NVRTC) of `spec` built with `config`.
    fn load(&self, spec: &'static VariantSpec, config: Config, code: Ptx, compiled_here: Option<String>) -> Result<Kernel> {
        let launch = availability::configuration(spec, &config, Some(self.info.sm())).map_err(LabError::Usage)?;
        let module = self.ctx.load_module(code)?;
        let func = module.load_function(&spec.symbol)?;
        if launch.dyn_smem_bytes > 48 * 1024 {
            func.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                launch.dyn_smem_bytes as i32,
            )?;
        }
        Ok(Kernel { spec, config, launch, func, module, compiled_here })
    }

    pub fn sync(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }
}

impl Kernel {
    /// Blocks of this kernel that fit on one SM at once (0: it cannot launch at all).
    pub fn blocks_per_sm(&self) -> Result<u32> {
        Ok(self.func.occupancy_max_active_blocks_per_multiprocessor(self.config.threads(), self.launch.dyn_smem_bytes as usize, None)?)
    }

    /// Registers per thread, static shared memory and local memory (spills, stack) per thread.
    pub fn usage(&self) -> Result<(u32, u32, u32)> {
        Ok((self.func.num_regs()? as u32, self.func.shared_size_bytes()? as u32, self.func.local_size_bytes()? as u32))
    }

    /// The grid for a problem of `cols` x `rows` (tiles) or `elements`, by the kernel's launch.
    pub fn grid(&self, gpu: &Gpu, cols: u64, rows: u64, elements: u64) -> Result<(u32, u32, u32)> {
        let mut fit = Fit { sms: gpu.info.sms, ..Fit::default() };
        match self.launch.grid {
            Grid::PerSm { resident: true, .. } if self.launch.cluster != [1, 1, 1] => {
                let (b, c) = (self.config.block, self.launch.cluster);
                fit.clusters = driver::max_active_clusters(&self.func, b, self.launch.dyn_smem_bytes, c, gpu.cu_stream()?)?;
                if fit.clusters == 0 {
                    let at = gpu.info.ordinal;
                    return Err(LabError::Unavailable(format!("no {c:?} cluster of this kernel fits on GPU {at} at once")));
                }
            }
            Grid::PerSm { resident: true, .. } => fit.blocks_per_sm = self.blocks_per_sm()?,
            _ => {}
        }
        Ok(self.launch.grid(cols, rows, elements, self.config.threads(), fit))
    }

    /// Launches `name`, a helper entry of this kernel's module (not the variant itself), on
    /// `grid` blocks of `block` threads with one argument struct from lab.h.
    ///
    /// # Safety
    /// As for `launch`: `args` must be the struct `name` takes, its pointers live and large enough.
    pub unsafe fn launch_helper<A: Abi>(&self, name: &str, stream: &CudaStream, grid: u32, block: u32, args: &A) -> Result<()> {
        let func = self.module.load_function(name)?;
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let mut builder = stream.launch_builder(&func);
        builder.arg(args);
        // SAFETY: the caller guarantees the argument matches the helper's single by-value parameter.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// Launches the kernel with one argument struct from lab.h on `grid` blocks of its
    /// configuration's block shape, with its launch's dynamic shared memory and cluster; a grid
    /// whose blocks wait for each other cooperatively (`driver::launch_cooperative`). A struct
    /// other than the one the kernel takes (`abi_check`) is refused before anything runs.
    ///
    /// # Safety
    /// Every device pointer in `args` must address a live allocation large enough for the shape
    /// it describes.
    pub unsafe fn launch<A: Abi>(&self, gpu: &Gpu, grid: (u32, u32, u32), args: &A) -> Result<()> {
        abi_check(&self.spec.name, &self.spec.family, &self.launch, A::NAME)?;
        let b = self.config.block;
        let smem = self.launch.dyn_smem_bytes;
        if self.launch.cluster != [1, 1, 1] {
            let mut params = [args as *const A as *mut std::ffi::c_void];
            // SAFETY: one by-value parameter, as the caller guarantees; Launch::grid rounds the
            // grid up to whole clusters.
            return unsafe { driver::launch_with_cluster(&self.func, grid, b, smem, self.launch.cluster, gpu.cu_stream()?, &mut params) };
        }
        if self.launch.blocks_wait_for_each_other() {
            // Blocks that wait for each other must all run at once, which only a cooperative
            // launch promises. It costs a few microseconds a launch (on an H200, layernorm_bwd_02
            // at 16384x768 took 0.061 ms against 0.058 launched plainly; fp16_08's stream-K at
            // 8192³ measured the same either way), which a kernel that could hang has to pay.
            let mut params = [args as *const A as *mut std::ffi::c_void];
            // SAFETY: one by-value parameter, as the caller guarantees; the grid is what fits
            // resident (`grid`), the limit the driver holds a cooperative launch to.
            return unsafe { driver::launch_cooperative(&self.func, grid, b, smem, gpu.cu_stream()?, &mut params) };
        }
        let cfg = LaunchConfig { grid_dim: grid, block_dim: (b[0], b[1], b[2]), shared_mem_bytes: smem };
        let mut builder = gpu.stream.launch_builder(&self.func);
        builder.arg(args);
        // SAFETY: the argument is the struct the kernel's single by-value parameter is (checked
        // above against its family's protocol, which the build holds the kernel's signature to).
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}

/// Ok where `variant` of `family`, with `launch`, takes the lab.h struct named `given`: the one its
/// family's protocol names (`launch::abi`); else the error that says which it takes.
pub fn abi_check(variant: &str, family: &str, launch: &Launch, given: &str) -> Result<()> {
    let id = FamilyId::parse(family).ok_or_else(|| LabError::Usage(format!("{variant}: no family '{family}'")))?;
    let takes = crate::facts::launch::abi(id, launch);
    if takes == given {
        Ok(())
    } else {
        Err(LabError::Usage(format!("{variant} takes {takes}, not {given}: the host passed another family's or launch's arguments")))
    }
}
