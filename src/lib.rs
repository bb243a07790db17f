//! kernel-lab: write, check, time and compare CUDA kernel variants across GPU architectures.
//!
//! The library is one crate per layer under crates/; each depends only on the crates below it,
//! so an import from a higher layer does not compile. This crate gathers them under one name for
//! the CLI (`src/bin/kernel-lab`: argument parsing and one call per subcommand) and the tests:
//! 1. [`facts`] (`lab_facts`): the architecture table, manifests and launch protocols, the spec
//!    sheet; shared with the build script
//! 2. [`schema`] (`lab_schema`): the results schema, plain data: runs, entries, tuning, transfers,
//!    several GPUs
//! 3. [`gpu`] (`lab_gpu`): the GPU runtime: device handle, kernel set, what can run here, raw
//!    driver calls; and [`error`], the library's one error type, used by every layer above
//! 4. [`measure`] (`lab_measure`): families, verification, timing, telemetry, plans and runners,
//!    workers, the tuner, transfers, several GPUs
//! 5. [`analysis`] (`lab_analysis`): results on disk, the roofline, reports, advise, fleet

pub use lab_analysis as analysis;
pub use lab_facts as facts;
pub use lab_gpu as gpu;
pub use lab_gpu::error;
pub use lab_measure as measure;
pub use lab_schema as schema;

pub use error::{LabError, Result};
