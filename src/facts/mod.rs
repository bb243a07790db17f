//! Facts as data, the bottom layer: the architecture table, the manifest schema and the families'
//! launch protocols, constraint expressions and ptxas reports (all from `lab_facts`, which the
//! build script shares), and the published spec sheet.

pub use lab_facts::{arch, expr, family, kernels, launch, manifest, resources};

pub mod sheet;
