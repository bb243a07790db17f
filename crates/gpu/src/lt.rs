//! cuBLASLt for the GEMM families' vendor baseline at its best: the heuristic's top candidate
//! algorithms for one GEMM, each launchable on its own, and each described by its configuration
//! (so a result says which one won). cudarc's safe cuBLASLt layer asks the heuristic for one
//! algorithm only; this asks for several.

use std::ffi::c_void;
use std::mem::size_of;

use cudarc::cublas::result::CublasError;
use cudarc::cublas::sys as blas;
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys::{
    self, cublasLtMatmulAlgoConfigAttributes_t as Attr, cublasLtMatmulDescAttributes_t as Desc,
    cublasLtMatmulPreferenceAttributes_t as Pref,
};
use cudarc::driver::CudaSlice;

use super::device::Gpu;
pub use super::gemm::{GeluBias, Gemm};
use crate::error::{LabError, Result};

/// How many candidates the heuristic is asked for.
pub const CANDIDATES: usize = 8;
/// Workspace offered to every candidate: cuBLAS's recommendation for Hopper.
const WORKSPACE: usize = 32 << 20;

/// cuBLAS's name of a type as cuBLASLt's bindings spell it (the same C enum, bound twice).
fn data_type(t: blas::cudaDataType_t) -> Result<sys::cudaDataType> {
    use blas::cudaDataType_t as B;
    use sys::cudaDataType_t as L;
    Ok(match t {
        B::CUDA_R_16F => L::CUDA_R_16F,
        B::CUDA_R_16BF => L::CUDA_R_16BF,
        B::CUDA_R_32F => L::CUDA_R_32F,
        B::CUDA_R_8I => L::CUDA_R_8I,
        B::CUDA_R_8F_E4M3 => L::CUDA_R_8F_E4M3,
        B::CUDA_R_8F_E5M2 => L::CUDA_R_8F_E5M2,
        B::CUDA_R_32I => L::CUDA_R_32I,
        other => return Err(LabError::Unavailable(format!("cuBLASLt best-of: no mapping for {other:?}"))),
    })
}

/// The compute type as cuBLASLt's bindings spell it, and its scale type (what alpha and beta are).
fn compute_type(t: blas::cublasComputeType_t) -> Result<(sys::cublasComputeType_t, sys::cudaDataType)> {
    use blas::cublasComputeType_t as B;
    use sys::{cublasComputeType_t as L, cudaDataType_t as D};
    Ok(match t {
        B::CUBLAS_COMPUTE_32F => (L::CUBLAS_COMPUTE_32F, D::CUDA_R_32F),
        B::CUBLAS_COMPUTE_32F_FAST_TF32 => (L::CUBLAS_COMPUTE_32F_FAST_TF32, D::CUDA_R_32F),
        B::CUBLAS_COMPUTE_32I => (L::CUBLAS_COMPUTE_32I, D::CUDA_R_32I),
        other => return Err(LabError::Unavailable(format!("cuBLASLt best-of: no mapping for {other:?}"))),
    })
}

/// One candidate: the heuristic's algorithm and the workspace it needs.
#[derive(Clone, Copy)]
pub struct Algo(sys::cublasLtMatmulHeuristicResult_t);

impl Algo {
    fn attr(&self, a: Attr) -> u32 {
        let (mut v, mut written) = (0u32, 0usize);
        // SAFETY: reads one 32-bit attribute of an algorithm the heuristic filled in.
        let s = unsafe {
            sys::cublasLtMatmulAlgoConfigGetAttribute(&self.0.algo, a, &mut v as *mut u32 as *mut c_void, size_of::<u32>(), &mut written)
        };
        if s == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            v
        } else {
            0
        }
    }

    /// "algo 66 tile 18 stages 20 split-k 1 swizzle 0 cluster 2": cuBLASLt's ids
    /// (cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtClusterShape_t).
    pub fn describe(&self) -> String {
        format!(
            "algo {} tile {} stages {} split-k {} swizzle {} cluster {}",
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_ID),
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_TILE_ID),
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_STAGES_ID),
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
            self.attr(Attr::CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
        )
    }
}

/// A GEMM made ready for cuBLASLt: its descriptors, the heuristic's candidates, a workspace.
pub struct Prepared {
    gemm: Gemm,
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    workspace: CudaSlice<u8>,
    pub candidates: Vec<Algo>,
}

fn lt_err(e: lt::CublasError) -> LabError {
    LabError::Unavailable(format!("cuBLASLt: {e:?}"))
}

impl Prepared {
    /// The descriptors of `gemm` and up to `CANDIDATES` algorithms cuBLASLt's heuristic ranks
    /// for it (none: cuBLAS's NOT_SUPPORTED, which callers record as the library declining).
    pub fn new(gpu: &Gpu, gemm: Gemm) -> Result<Prepared> {
        gpu.ctx.bind_to_thread()?;
        let handle = lt::create_handle().map_err(lt_err)?;
        // SAFETY: scratch memory cuBLASLt owns during each launch; nobody reads it.
        let workspace = unsafe { gpu.stream.alloc::<u8>(WORKSPACE) }?;
        let mut p =
            Prepared { handle, desc: std::ptr::null_mut(), layouts: [std::ptr::null_mut(); 3], workspace, candidates: Vec::new(), gemm };
        let (compute, scale) = compute_type(p.gemm.compute)?;
        p.desc = lt::create_matmul_desc(compute, scale).map_err(lt_err)?;
        // cublasOperation_t as an int: CUBLAS_OP_N 0, CUBLAS_OP_T 1.
        let (g, ta, tb) = (&p.gemm, p.gemm.trans.0 as i32, p.gemm.trans.1 as i32);
        // SAFETY: each attribute is written from a value of the type cuBLASLt documents for it.
        unsafe {
            lt::set_matmul_desc_attribute(p.desc, Desc::CUBLASLT_MATMUL_DESC_TRANSA, &ta as *const _ as *const c_void, size_of::<i32>())
                .map_err(lt_err)?;
            lt::set_matmul_desc_attribute(p.desc, Desc::CUBLASLT_MATMUL_DESC_TRANSB, &tb as *const _ as *const c_void, size_of::<i32>())
                .map_err(lt_err)?;
        }
        if let Some(fused) = p.gemm.gelu_bias {
            let epilogue = sys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_GELU_BIAS;
            // SAFETY: the epilogue is the enum's 32-bit value; the bias pointer a device address.
            unsafe {
                lt::set_matmul_desc_attribute(
                    p.desc,
                    Desc::CUBLASLT_MATMUL_DESC_EPILOGUE,
                    &epilogue as *const _ as *const c_void,
                    size_of::<sys::cublasLtEpilogue_t>(),
                )
                .map_err(lt_err)?;
                lt::set_matmul_desc_attribute(
                    p.desc,
                    Desc::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                    &fused.bias as *const u64 as *const c_void,
                    size_of::<u64>(),
                )
                .map_err(lt_err)?;
            }
        }
        // Stored shapes: op(A) is m x k, op(B) is k x n, C is m x n.
        let (a_rows, a_cols) = if g.trans.0 { (g.k, g.m) } else { (g.m, g.k) };
        let (b_rows, b_cols) = if g.trans.1 { (g.n, g.k) } else { (g.k, g.n) };
        p.layouts = [
            lt::create_matrix_layout(data_type(g.a.1)?, a_rows, a_cols, g.a.2).map_err(lt_err)?,
            lt::create_matrix_layout(data_type(g.b.1)?, b_rows, b_cols, g.b.2).map_err(lt_err)?,
            lt::create_matrix_layout(data_type(g.c.1)?, g.m, g.n, g.c.2).map_err(lt_err)?,
        ];
        let pref = lt::create_matmul_pref().map_err(lt_err)?;
        let ws = WORKSPACE as u64;
        let mut found = [sys::cublasLtMatmulHeuristicResult_t {
            algo: sys::cublasLtMatmulAlgo_t { data: [0; 8] },
            workspaceSize: 0,
            state: sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS,
            wavesCount: 0.0,
            reserved: [0; 4],
        }; CANDIDATES];
        let mut count = 0i32;
        // SAFETY: the preference takes a u64 workspace limit; the heuristic writes at most
        // CANDIDATES results into `found` and their number into `count`.
        let status = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                Pref::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const u64 as *const c_void,
                size_of::<u64>(),
            )
            .map_err(lt_err)?;
            let s = sys::cublasLtMatmulAlgoGetHeuristic(
                p.handle,
                p.desc,
                p.layouts[0],
                p.layouts[1],
                p.layouts[2],
                p.layouts[2],
                pref,
                CANDIDATES as i32,
                found.as_mut_ptr(),
                &mut count,
            );
            lt::destroy_matmul_pref(pref).map_err(lt_err)?;
            s
        };
        if status == sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED
            || (status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS && count == 0)
        {
            // The library declining the shape, as cublasGemmEx says it.
            return Err(LabError::Cublas(CublasError(blas::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED)));
        }
        if status != sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(LabError::Unavailable(format!("cuBLASLt's heuristic failed ({status:?})")));
        }
        p.candidates =
            found[..count as usize].iter().filter(|r| r.state == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS).map(|r| Algo(*r)).collect();
        Ok(p)
    }

    /// One launch of the GEMM with `algo`, on the GPU's stream.
    pub fn launch(&self, gpu: &Gpu, algo: &Algo) -> Result<()> {
        let g = &self.gemm;
        let (alpha, beta) = (&g.alpha_beta.0, &g.alpha_beta.1);
        // C is read from its own buffer where an epilogue is fused, else it is D.
        let c_in = g.gelu_bias.map_or(g.c.0, |f| f.c_in);
        let (wptr, _w) = cudarc::driver::DevicePtr::device_ptr(&self.workspace, &gpu.stream);
        // SAFETY: the descriptors describe the buffers `gemm` points at (its maker's promise), the
        // algorithm came from the heuristic for these descriptors, which was offered the workspace.
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                alpha.as_ptr() as *const c_void,
                beta.as_ptr() as *const c_void,
                g.a.0 as *const c_void,
                self.layouts[0],
                g.b.0 as *const c_void,
                self.layouts[1],
                c_in as *const c_void,
                self.layouts[2],
                g.c.0 as *mut c_void,
                self.layouts[2],
                &algo.0.algo,
                wptr as *mut c_void,
                WORKSPACE,
                gpu.cu_stream()? as _,
            )
        }
        .map_err(lt_err)
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // SAFETY: each handle was created by `new` and is destroyed once; errors are moot here.
        unsafe {
            for l in self.layouts.iter().filter(|l| !l.is_null()) {
                let _ = lt::destroy_matrix_layout(*l);
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}
