//! Architectures the installed toolkit dropped: CUDA 13 cannot build sm_70 (Volta), so the lab
//! compiles the variants its manifests declare for sm_70 with NVRTC 12 and reads their registers,
//! shared memory and spills from ptxas's report. No GPU is needed.
//!
//! cudarc binds one NVRTC per process (the toolkit's, 13.x, for the tuner), so this second one
//! is loaded by hand through its C API: six functions.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;

use libloading::{Library, Symbol};

use super::registry::{self, VariantSpec};
use crate::error::{LabError, Result};
use crate::facts::arch::Target;
use crate::facts::resources::{parse_ptxas, Usage};

type Prog = *mut c_void;

/// NVRTC 12: the library and the builtins it loads by name.
pub struct Nvrtc {
    lib: Library,
    _builtins: Option<Library>,
    pub version: (i32, i32),
}

/// Where NVRTC 12 is looked for: `KERNEL_LAB_NVRTC12` (a path to libnvrtc.so.12), the loader
/// path, then the copy `scripts/setup.sh` installs into `.toolkit/cu12`.
fn candidates() -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(p) = std::env::var_os("KERNEL_LAB_NVRTC12") {
        c.push(PathBuf::from(p));
    }
    c.push(PathBuf::from("libnvrtc.so.12"));
    c.push(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.toolkit/cu12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")));
    c
}

impl Nvrtc {
    pub fn load() -> Result<Nvrtc> {
        for path in candidates() {
            // NVRTC opens libnvrtc-builtins.so.12.x by name; load it first from beside the library.
            let builtins = path.parent().filter(|d| !d.as_os_str().is_empty()).and_then(|dir| {
                let found = std::fs::read_dir(dir)
                    .ok()?
                    .filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libnvrtc-builtins.so.12")))?;
                // SAFETY: loading a shared library runs its initialisers only.
                unsafe { Library::new(found) }.ok()
            });
            // SAFETY: as above.
            let Ok(lib) = (unsafe { Library::new(&path) }) else { continue };
            let mut n = Nvrtc { lib, _builtins: builtins, version: (0, 0) };
            n.version = n.query_version()?;
            if n.version.0 == 12 {
                return Ok(n);
            }
        }
        Err(LabError::Unavailable(
            "NVRTC 12 (libnvrtc.so.12) is not installed: run scripts/setup.sh or set KERNEL_LAB_NVRTC12 to build sm_70".into(),
        ))
    }

    fn sym<T>(&self, name: &[u8]) -> Result<Symbol<'_, T>> {
        // SAFETY: each name is looked up with the signature of NVRTC's C API for it.
        unsafe { self.lib.get(name) }.map_err(|e| LabError::Usage(format!("NVRTC 12: {e}")))
    }

    fn query_version(&self) -> Result<(i32, i32)> {
        let f: Symbol<unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int> = self.sym(b"nvrtcVersion\0")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints.
        unsafe { f(&mut major, &mut minor) };
        Ok((major, minor))
    }

    /// Compiles `spec` in its manifest configuration to SASS for `sm`: ptxas's report and the
    /// cubin. A compile error comes back with its first error lines.
    fn compile(&self, spec: &VariantSpec, sm: u32) -> Result<(String, Vec<u8>)> {
        let create: Symbol<
            unsafe extern "C" fn(*mut Prog, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int,
        > = self.sym(b"nvrtcCreateProgram\0")?;
        let compile: Symbol<unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int> = self.sym(b"nvrtcCompileProgram\0")?;
        let log_size: Symbol<unsafe extern "C" fn(Prog, *mut usize) -> c_int> = self.sym(b"nvrtcGetProgramLogSize\0")?;
        let get_log: Symbol<unsafe extern "C" fn(Prog, *mut c_char) -> c_int> = self.sym(b"nvrtcGetProgramLog\0")?;
        let cubin_size: Symbol<unsafe extern "C" fn(Prog, *mut usize) -> c_int> = self.sym(b"nvrtcGetCUBINSize\0")?;
        let get_cubin: Symbol<unsafe extern "C" fn(Prog, *mut c_char) -> c_int> = self.sym(b"nvrtcGetCUBIN\0")?;
        let destroy: Symbol<unsafe extern "C" fn(*mut Prog) -> c_int> = self.sym(b"nvrtcDestroyProgram\0")?;

        let cstr = |s: &str| CString::new(s).map_err(|_| LabError::Usage(format!("a NUL in '{s}'")));
        let headers = &registry::set()?.headers;
        let names: Vec<CString> = headers.iter().map(|(n, _)| cstr(n)).collect::<Result<_>>()?;
        let texts: Vec<CString> = headers.iter().map(|(_, t)| cstr(t)).collect::<Result<_>>()?;
        let mut options = vec![
            format!("--gpu-architecture={}", Target { sm, arch_specific: false, ptx: false }.name()),
            "-std=c++17".to_string(),
            "--ptxas-options=-v".to_string(),
        ];
        options.extend(super::jit::defines(spec, &spec.config())?);
        let options: Vec<CString> = options.iter().map(|o| cstr(o)).collect::<Result<_>>()?;
        let source = cstr(&spec.source)?;
        let file = cstr(&spec.file)?;
        let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
        let text_ptrs: Vec<*const c_char> = texts.iter().map(|c| c.as_ptr()).collect();
        let option_ptrs: Vec<*const c_char> = options.iter().map(|c| c.as_ptr()).collect();

        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: every pointer is a live NUL-terminated string for the duration of the calls;
        // the header arrays have HEADERS.len() entries; the buffers have the sizes NVRTC gave;
        // the program is destroyed below.
        let (status, log, cubin) = unsafe {
            if create(&mut prog, source.as_ptr(), file.as_ptr(), headers.len() as c_int, text_ptrs.as_ptr(), name_ptrs.as_ptr()) != 0 {
                return Err(LabError::Usage(format!("NVRTC 12 could not create a program for {}", spec.name)));
            }
            let status = compile(prog, option_ptrs.len() as c_int, option_ptrs.as_ptr());
            let mut size = 0usize;
            log_size(prog, &mut size);
            let mut buf = vec![0u8; size.max(1)];
            get_log(prog, buf.as_mut_ptr() as *mut c_char);
            let mut cubin = Vec::new();
            if status == 0 {
                let mut n = 0usize;
                cubin_size(prog, &mut n);
                cubin = vec![0u8; n];
                get_cubin(prog, cubin.as_mut_ptr() as *mut c_char);
            }
            destroy(&mut prog);
            (status, String::from_utf8_lossy(&buf).trim_end_matches('\0').to_string(), cubin)
        };
        if status != 0 {
            let errors: Vec<&str> = log.lines().filter(|l| l.contains("error")).take(2).collect();
            return Err(LabError::Usage(format!("NVRTC 12, {} for sm_{sm}: {}", spec.name, errors.join(" | "))));
        }
        Ok((log, cubin))
    }

    /// Registers, shared memory and spills of `spec`'s entry function on `sm`, from ptxas.
    pub fn usage(&self, spec: &VariantSpec, sm: u32) -> Result<Usage> {
        let (log, _) = self.compile(spec, sm)?;
        parse_ptxas(&log)
            .into_iter()
            .find(|(f, _, _)| *f == spec.symbol)
            .map(|(_, _, u)| u)
            .ok_or_else(|| LabError::Usage(format!("NVRTC 12 printed no ptxas report for {}", spec.symbol)))
    }

    /// SASS of `spec` for `sm`, for a GPU whose architecture the fatbins lack.
    pub fn cubin(&self, spec: &VariantSpec, sm: u32) -> Result<Vec<u8>> {
        Ok(self.compile(spec, sm)?.1)
    }
}

/// The variants the manifests declare for `sm` (their architecture requirement admits it).
pub fn declared_for(sm: u32) -> Result<impl Iterator<Item = &'static VariantSpec>> {
    Ok(registry::all()?.iter().filter(move |v| v.admits(sm)))
}
