//! Analysis and output: results on disk (`store`), comparisons of runs, the roofline,
//! reports, `advise`, and `fleet` (the lab on a Slurm cluster).

// The layers below, under the names the modules use (`crate::measure::...`).
use lab_facts as facts;
use lab_gpu as gpu;
use lab_gpu::error;
use lab_measure as measure;
use lab_schema as schema;

pub mod advise;
pub mod baselines;
pub mod bench_run;
pub mod carry;
pub mod compare;
pub mod fleet;
pub mod prune;
pub mod report;
pub mod roofline;
pub mod store;
pub mod svg;
pub mod tune_run;
