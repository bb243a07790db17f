//! `kernel-lab tune --simulate`: the tuner's strategies compared on what earlier searches
//! measured, without a GPU.

use std::path::Path;

use anyhow::{bail, Result};
use kernel_lab::analysis::report::new_table;
use kernel_lab::analysis::store;
use kernel_lab::error::exit;
use kernel_lab::gpu::registry;
use kernel_lab::measure::{families, tune, tune_cache};
use kernel_lab::schema::run::RunKind;
use kernel_lab::LabError;

fn usage(msg: String) -> anyhow::Error {
    anyhow::anyhow!(LabError::Usage(msg))
}

/// `tune --simulate SEEDS`: each strategy replayed on the stored candidates of each variant and
/// shape, with seeds 0 .. SEEDS; the evaluations each took to reach the best stored rate, and to
/// come within 2% of it (the spread of one configuration's rate between two searches).
pub fn simulate(
    results_dir: &Path,
    fam: &dyn families::Family,
    tunable: &[&registry::VariantSpec],
    shapes: &[families::Shape],
    seeds: u64,
) -> Result<u8> {
    if seeds == 0 {
        bail!(usage("--simulate takes at least 1 seed".into()));
    }
    let runs = store::read(&[results_dir.to_path_buf()])?;
    let mut models: Vec<String> =
        runs.iter().filter(|r| r.header.run.kind == RunKind::Tune).map(|r| r.header.device.name.clone()).collect();
    models.sort();
    models.dedup();
    if models.len() > 1 {
        bail!(usage(format!(
            "{} holds searches of {} GPU models ({}): name one model's folder with --results-dir",
            results_dir.display(),
            models.len(),
            models.join(", ")
        )));
    }
    let mut t = new_table(
        ["variant", "shape", "stored", "best", "strategy", "to the best: median", "quartiles", "max", "reached", "to within 2%: median"]
            .map(String::from)
            .to_vec(),
        false,
    );
    for v in tunable {
        for shape in shapes {
            let label = fam.info().shapes.label(shape);
            let cache = tune_cache::Cache::new(&runs, &v.name, &label);
            let Some(best) = tune_cache::best(&cache) else {
                bail!(usage(format!("no stored candidate of {} at {label} in {} verified", v.name, results_dir.display())));
            };
            for strategy in tune::Strategy::ALL {
                let to = |target: f64| tune_cache::evaluations_to(strategy, &cache, &[v.config()], 0..seeds, target);
                let (exact, near) = (to(best), to(best / 1.02));
                let mut found: Vec<f64> = exact.iter().flatten().map(|&n| n as f64).collect();
                found.sort_by(f64::total_cmp);
                let mut close: Vec<f64> = near.iter().flatten().map(|&n| n as f64).collect();
                close.sort_by(f64::total_cmp);
                let q = |v: &[f64], p: f64| {
                    if v.is_empty() {
                        "-".to_string()
                    } else {
                        format!("{:.0}", kernel_lab::schema::stats::percentile(v, p))
                    }
                };
                t.add_row(vec![
                    v.name.clone(),
                    label.clone(),
                    cache.configs().len().to_string(),
                    format!("{best:.2}"),
                    strategy.name().to_string(),
                    q(&found, 50.0),
                    format!("{}-{}", q(&found, 25.0), q(&found, 75.0)),
                    q(&found, 100.0),
                    format!("{} of {seeds}", found.len()),
                    q(&close, 50.0),
                ]);
            }
        }
    }
    outln!("{t}");
    Ok(exit::OK)
}
