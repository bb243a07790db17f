//! The vendor baseline at its best, for the GEMM families: cuBLASLt's top heuristic candidates
//! for the shape, each checked against the reference and timed briefly in pairs with the default
//! call, the fastest kept (and named in the entry), so that "past cuBLAS" means past cuBLAS's
//! best, not its default call.

use super::families::{Case, Family};
use super::timing::Timer;
use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::gpu::lt::{Algo, Prepared};
use crate::schema::entry::{Entry, Kind, Status};
use crate::schema::run::{Policy, Regime};
use crate::schema::stats::Interval;

/// The name the entries of the vendor's best go by.
pub const NAME: &str = "cuBLASLt best";

/// Each candidate's brief timing: SEARCH's pairs with the default call, timed as the winner then
/// is in full (alternating order, each launch after a flush and an untimed launch of its own),
/// and the candidate with the highest median ratio kept. Timed alone, one after the other, each
/// sample straight after the flush (or with the candidates' samples in alternating rounds), the
/// search at 4096³ fp16 keeps the first or second candidate (1.00x the default call, paired) over
/// the fourth (1.04x). The first candidate's pairs start after the run's own warm-up
/// (`warmup_s`), as the winner's do, the others straight after the one before, so every
/// candidate is timed on a board settled at its power cap. Without it, the first bench of a call,
/// after the sanitizer, can keep the first candidate at 4096³ fp16 (1.001x the default call).
const SEARCH: Policy = Policy { min_samples: 8, max_samples: 8, target: 1.0, cap_s: 0.5, warmup_s: 0.0, regime: Regime::Sustained };

/// The candidate that passes the check and runs fastest beside the default call (the first that
/// passes, without a timer), and how it was chosen; None when none passes.
pub fn search(
    gpu: &Gpu,
    fam: &dyn Family,
    case: &mut dyn Case,
    lt: &Prepared,
    timer: Option<&mut Timer>,
    warmup_s: f64,
) -> Result<Option<(Algo, String)>> {
    let precision = fam.info().precision;
    let (mut passed, mut wrong) = (Vec::new(), 0);
    for (i, algo) in lt.candidates.iter().enumerate() {
        case.poison(gpu)?;
        lt.launch(gpu, algo)?;
        gpu.sync()?;
        if !case.check(gpu, precision)?.passed() {
            wrong += 1;
            continue;
        }
        passed.push(i);
        if timer.is_none() {
            break;
        }
    }
    let best = match timer {
        Some(t) if passed.len() > 1 => {
            let mut best: Option<(usize, f64)> = None;
            for (n, &i) in passed.iter().enumerate() {
                let algo = &lt.candidates[i];
                let policy = Policy { warmup_s: if n == 0 { warmup_s } else { SEARCH.warmup_s }, ..SEARCH };
                let pairs =
                    t.pairs(gpu, &policy, &mut |candidate| if candidate { lt.launch(gpu, algo) } else { case.launch_baseline(gpu) }, 1.0)?;
                let ratio = Interval::of_median(&pairs.ratios).map_or(0.0, |r| r.value);
                if best.is_none_or(|(_, b)| ratio > b) {
                    best = Some((i, ratio));
                }
            }
            best.map(|(i, _)| i)
        }
        _ => passed.first().copied(),
    };
    Ok(best.map(|i| {
        let how = if wrong > 0 { format!(", {wrong} failed the check") } else { String::new() };
        let algo = lt.candidates[i];
        (algo, format!("{} (candidate {} of {}{how})", algo.describe(), i + 1, lt.candidates.len()))
    }))
}

/// Per family and shape with a measured vendor best: its ratio to the default call, and the
/// best variant's ratio to the default call and to the vendor's best (as the quotient of the two
/// ratios to the default call, and, where the variant was timed in pairs with the best, that).
pub fn notes(entries: &[Entry]) -> Vec<String> {
    let ok = |e: &&Entry| e.status == Status::Ok && e.vs_baseline.is_some();
    entries
        .iter()
        .filter(ok)
        .filter(|e| e.kind == Kind::VendorBest)
        .map(|best| {
            let vs_default = best.vs_baseline.unwrap_or(f64::NAN);
            let mut line = format!(
                "{} {}: {NAME} ({}) ran {vs_default:.3}x the default call",
                best.family,
                best.shape,
                best.vendor_algo.as_deref().unwrap_or("?")
            );
            let top = entries
                .iter()
                .filter(ok)
                .filter(|e| e.family == best.family && e.dims == best.dims && matches!(e.kind, Kind::Variant | Kind::Tuned))
                .max_by(|a, b| a.vs_baseline.partial_cmp(&b.vs_baseline).unwrap_or(std::cmp::Ordering::Equal));
            if let Some(v) = top.and_then(|v| Some((v, v.vs_baseline?))) {
                line += &format!("; the best variant, {}, {:.3}x the default and {:.3}x cuBLAS's best", v.0.label(), v.1, v.1 / vs_default);
                if let Some(p) = &v.0.paired_best {
                    line += &format!(" ({:.3}x [{:.3}, {:.3}] timed in pairs with it)", p.ratio.value, p.ratio.low, p.ratio.high);
                }
            }
            line
        })
        .collect()
}
