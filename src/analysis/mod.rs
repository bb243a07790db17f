//! Analysis and output: results on disk (`store`, `migrate`), the roofline, and reports.

pub mod migrate;
pub mod report;
pub mod roofline;
pub mod store;
