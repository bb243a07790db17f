//! kernel-lab: write, check, time and compare CUDA kernel variants across GPU architectures.
//!
//! The folders are layers; a module imports only from its own layer and those below
//! (tests/layers.rs checks it, and that no modules import each other in a cycle):
//! 1. [`facts`]: the architecture table, manifests and launch protocols, the spec sheet
//!    (`lab_facts`, shared with the build script, plus the sheet)
//! 2. [`schema`]: the results schema, plain data: runs, entries, tuning, transfers, several GPUs
//! 3. [`gpu`]: the GPU runtime: device handle, kernel set, what can run here, raw driver calls
//! 4. [`measure`]: families, verification, timing, telemetry, plans and runners, workers, the
//!    tuner, transfers, several GPUs
//! 5. [`analysis`]: results on disk, the roofline, reports
//! 6. the CLI (`src/bin/kernel-lab`): argument parsing and one call per subcommand
//!
//! [`error`] is the library's one error type, used by every layer.

pub mod analysis;
pub mod error;
pub mod facts;
pub mod gpu;
pub mod measure;
pub mod schema;

pub use error::{LabError, Result};
