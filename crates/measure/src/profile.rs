//! What a profiler needs of one variant: its case prepared and checked once, then exactly the
//! launches asked for, each inside an NVTX push/pop range named after the variant, so that
//! `ncu --nvtx --nvtx-include "<variant>/"` measures those launches and nothing else (not the
//! check's launch, not the poison's memset, not the reference).

use super::families::{self, can_run, Shape};
use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::registry::VariantSpec;
use crate::schema::check::Check;

/// The ncu command line that measures `launches` of `variant` at `shape` with this program:
/// ncu's defaults lock the clocks to base and keep caches warm between replays; the lab's
/// burst regime compares with neither, so both are said.
pub fn ncu_command(program: &str, variant: &str, shape: &str) -> String {
    format!(
        "ncu --clock-control none --cache-control all --nvtx --nvtx-include \"{variant}/\" --metrics gpu__time_duration.sum {program} profile {variant} --size {shape}"
    )
}

/// Checks `spec` at `shape` once against the reference, then, if it passed, launches it
/// `launches` times in its NVTX range. The check is returned either way.
pub fn run(gpu: &mut Gpu, spec: &'static VariantSpec, shape: &Shape, seed: u64, launches: usize) -> Result<Check> {
    let fam = families::of(spec)?;
    can_run(spec, &spec.config(), shape, gpu.info.sm()).map_err(|why| LabError::Usage(format!("{} cannot run here: {why}", spec.name)))?;
    let kernel = gpu.kernel(spec)?;
    let mut case = fam.prepare(gpu, shape, seed)?;
    case.poison(gpu)?;
    case.launch(gpu, &kernel)?;
    gpu.sync()?;
    let check = case.check(gpu, fam.info().precision)?;
    if !check.passed() {
        return Ok(check);
    }
    if spec.name.contains('\0') {
        return Err(LabError::Usage(format!("{}: a NUL in the name", spec.name)));
    }
    for _ in 0..launches {
        let _range = Range::push(&spec.name);
        case.launch(gpu, &kernel)?;
        gpu.sync()?;
    }
    Ok(check)
}

/// An NVTX range around one launch, pushed as an ASCII string (ncu's --nvtx-include does not match
/// the same range pushed as a wide one) and popped when dropped, so a launch that fails still
/// closes it.
struct Range;

impl Range {
    fn push(name: &str) -> Range {
        nvtx::range_push!("{name}");
        Range
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        nvtx::range_pop!();
    }
}
