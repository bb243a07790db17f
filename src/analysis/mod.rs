//! Analysis and output: results on disk (`store`), comparisons of runs, the roofline,
//! reports, `advise`, and `fleet` (the lab on a Slurm cluster).

pub mod advise;
pub mod compare;
pub mod fleet;
pub mod report;
pub mod roofline;
pub mod store;
pub mod svg;
