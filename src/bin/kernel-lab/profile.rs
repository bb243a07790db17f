//! `kernel-lab profile`: one variant checked once and launched a few times inside NVTX ranges,
//! for ncu or nsys; the ncu command that measures it is printed first.

use anyhow::Result;
use kernel_lab::error::exit;
use kernel_lab::gpu::device::Gpu;
use kernel_lab::gpu::registry;
use kernel_lab::measure::families::{self, inputs::seed_for};
use kernel_lab::measure::profile;
use kernel_lab::LabError;

#[derive(clap::Args)]
pub struct ProfileArgs {
    /// The variant's full name.
    variant: String,
    /// The shape, the family's syntax (default: the size the family tunes at).
    #[arg(long)]
    size: Option<String>,
    /// Launches inside NVTX ranges after the check.
    #[arg(long, default_value_t = 5)]
    launches: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Which GPU, its index (one).
    #[arg(long = "gpus", value_name = "INDEX", default_value = "0", value_parser = crate::args::one_gpu)]
    gpu: usize,
}

pub fn profile(a: &ProfileArgs) -> Result<u8> {
    let spec = registry::by_name(&a.variant)?;
    let fam = families::of(spec)?;
    let shape = match &a.size {
        Some(s) => match families::parse_sizes(fam, &crate::args::sizes(std::slice::from_ref(s))?)?.as_slice() {
            [one] => one.clone(),
            _ => return Err(LabError::Usage(format!("--size '{s}': profile takes one shape, not a range")).into()),
        },
        None => fam.tune_sizes().remove(0),
    };
    if a.launches == 0 {
        return Err(LabError::Usage("--launches must be at least 1".into()).into());
    }
    let label = fam.info().shapes.label(&shape).replace(' ', "");
    let program = std::env::current_exe().map_or("kernel-lab".into(), |p| p.display().to_string());
    let mut gpu = Gpu::open(a.gpu)?;
    eprintln!("measure with: {}", profile::ncu_command(&program, &spec.name, &label));
    let check = profile::run(&mut gpu, spec, &shape, seed_for(a.seed, &spec.family, &shape), a.launches)?;
    if !check.passed() {
        eprintln!("{}: verification failed: {}", spec.name, check.describe());
        return Ok(exit::FAILED);
    }
    eprintln!("{} at {}: verified ({}), then {} launches in NVTX ranges \"{}\"", spec.name, label, check.describe(), a.launches, spec.name);
    Ok(exit::OK)
}
