//! The one decision "can this run here, and from what code" (CUTLASS's `can_implement`, asked
//! before anything is launched): a variant's code comes from the build's fatbin, or is compiled
//! here with NVRTC for an architecture the fatbin lacks but the manifest declares, or the variant
//! is skipped with the reason. A configuration must keep its constraints, its family's launch
//! protocol and the architecture's thread limit. The shape's part is the family's
//! (`measure::families::can_run` joins the two); the vendor library declining a shape is the
//! third kind of skip, said the same way everywhere.

use crate::facts::arch::{self, ArchReq};
use crate::facts::launch::Launch;
use crate::registry::{Config, VariantSpec};

/// Where a runnable variant's code comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The build's fatbin has SASS or PTX this GPU runs.
    Fatbin,
    /// The manifest declares the GPU's architecture but the build has no code for it (a GPU newer
    /// than the toolkit's PTX, or one the toolkit dropped): NVRTC compiles it here.
    CompileHere,
}

/// Where the code for `spec` comes from on a GPU of compute capability `sm`, or why it cannot
/// run there.
pub fn source(spec: &VariantSpec, sm: u32) -> Result<Source, String> {
    match spec.runnable_on(sm) {
        Ok(()) => Ok(Source::Fatbin),
        Err(_) if spec.admits(sm) => Ok(Source::CompileHere),
        Err(why) => Err(why),
    }
}

/// The launch of `config` of `spec`, when the configuration keeps the manifest's constraints,
/// its family's launch protocol and the limits of every architecture the manifest admits, or with
/// `sm` those of that GPU alone (a configuration compiled where it runs, as the tuner's are, may
/// take the 227 KB of shared memory an H100 block may have where an sm_80+ build keeps to 99 KB);
/// else why not. The tuner asks before compiling a candidate; the runner before launching one.
pub fn configuration(spec: &VariantSpec, config: &Config, sm: Option<u32>) -> Result<Launch, String> {
    crate::facts::expr::check_all(&spec.constraints, &|n| config.value(n))?;
    let threads = config.threads();
    let max = sm.and_then(|sm| arch::lookup(sm / 10, sm % 10)).map_or(1024, |a| a.max_threads_per_sm.min(1024));
    if threads == 0 || threads > max {
        return Err(format!("{threads} threads per block; this GPU takes at most {max}"));
    }
    let on = match (sm, &spec.arch) {
        (Some(sm), &ArchReq::AtLeast(min)) if sm >= min => ArchReq::Exact { sm, arch_specific: false },
        (_, arch) => arch.clone(),
    };
    Launch::parse(&spec.family, &on, &|n| config.value(n))
}

/// The reason shown when the vendor library declines a shape (cuBLAS's NOT_SUPPORTED): its
/// declared limit, a skip, not a failure.
pub const VENDOR_DECLINED: &str = "cuBLAS does not support this shape (CUBLAS_STATUS_NOT_SUPPORTED)";
