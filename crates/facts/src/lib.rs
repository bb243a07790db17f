//! kernel-lab's facts as data, the bottom layer: shared by the build script (which compiles the
//! kernels) and the library (which runs them), so it holds plain Rust and needs no GPU.
//!
//! - [`arch`]: the architecture table (Volta .. Blackwell) and nvcc target selection
//! - [`manifest`]: the schema of `csrc/<family>/variants.toml`, checked entry by entry
//! - [`family`]: the families, typed, with the role each plays (the one place a name is read)
//! - [`hopper`]: the shared memory of a Hopper GEMM kernel, planned for the build and the tuner
//! - [`launch`]: each family's launch protocol, and a variant's launch parsed once from its defines
//! - [`expr`]: integer expressions for manifests' tuning constraints
//! - [`resources`]: registers / shared memory / spills from ptxas's report
//! - [`kernels`]: the compiled kernel set (`kernels.json` beside the fatbins) and where to find it
//! - [`build`]: what the build script does: nvcc over the manifests, the kernel set, provenance
//! - [`sheet`]: the published spec sheet of the GPUs `advise` ranks (dense rates)
//! - [`networks`]: ResNet-50's convolutions, which the conv family runs and `advise` prices
//! - [`renames`]: retired family and variant names and what replaced them, for reading old results

pub mod arch;
pub mod build;
pub mod expr;
pub mod family;
pub mod hopper;
pub mod kernels;
pub mod launch;
pub mod manifest;
pub mod networks;
pub mod renames;
pub mod resources;
pub mod sheet;
