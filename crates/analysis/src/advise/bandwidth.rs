//! The shares of the sheet's bandwidth that advise prices a step's streaming passes at, read per
//! measured GPU from its results: cudaMemcpy's and the memory family's slowest rung's (the
//! element-wise passes and their range), and a normalisation family's best rung's (the layer
//! norms).

use crate::facts::family::{plays, FamilyId, Role};
use crate::facts::sheet::{self, Gpu};
use crate::schema::entry::{Entry, Kind, Status};
use crate::store::View;

/// Per measured GPU, the share of the sheet's bandwidth cudaMemcpy reached (the best of its
/// copies: the largest arrays are the ones that reach it), and the share the slowest of the
/// DRAM family's verified rungs reached at the largest array it measured (one element a thread,
/// where the others move vectors or blocks): how much slower a streaming kernel runs as it is
/// written, which the element-wise passes' range reaches up to.
pub fn copy_shares(views: &[View]) -> Vec<(&'static Gpu, (f64, f64))> {
    views
        .iter()
        .filter_map(|v| {
            let gpu = sheet::for_device(&v.device.name, v.device.sms)?;
            let ok = |kind: Kind| {
                v.entries.iter().filter(move |e| plays(&e.family, Role::DramCeiling) && e.kind == kind && e.status == Status::Ok)
            };
            let best = ok(Kind::Baseline).filter_map(|e| e.rate).fold(f64::NAN, f64::max);
            let largest = ok(Kind::Variant).filter(|e| e.rate.is_some()).map(|e| e.dims.iter().product::<u64>()).max();
            let slowest =
                ok(Kind::Variant).filter(|e| Some(e.dims.iter().product::<u64>()) == largest).filter_map(|e| e.rate).fold(best, f64::min);
            (best > 0.0).then(|| (gpu, (best / gpu.bandwidth_gbs, slowest / gpu.bandwidth_gbs)))
        })
        .collect()
}

/// Per measured GPU, the share of the sheet's bandwidth the best rung of family `id` reached on
/// the matrix `dims` (else at any shape): verified variants only, never the baseline (a copy).
pub fn best_shares(views: &[View], id: FamilyId, dims: Option<[u64; 2]>) -> Vec<(&'static Gpu, f64)> {
    views
        .iter()
        .filter_map(|v| {
            let gpu = sheet::for_device(&v.device.name, v.device.sms)?;
            let ok: Vec<&Entry> = v
                .entries
                .iter()
                .filter(|e| FamilyId::parse(&e.family) == Some(id) && e.kind != Kind::Baseline && e.status == Status::Ok)
                .collect();
            let own: Vec<&&Entry> = ok.iter().filter(|e| dims.is_some_and(|d| e.dims == d)).collect();
            let pick = if own.is_empty() { ok.iter().collect() } else { own };
            let best = pick.iter().filter_map(|e| e.rate).fold(f64::NAN, f64::max);
            (best > 0.0).then(|| (gpu, best / gpu.bandwidth_gbs))
        })
        .collect()
}
