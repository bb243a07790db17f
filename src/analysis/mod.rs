//! Analysis and output: results on disk (`store`, `migrate`), comparisons of runs, the roofline,
//! and reports.

pub mod advise;
pub mod compare;
pub mod migrate;
pub mod report;
pub mod roofline;
pub mod store;
pub mod svg;
