//! A network's convolutions priced shape by shape (ResNet-50's 53, in fp16): each at its sheet
//! bound, min(peak, intensity x bandwidth), divided by the share of that bound cuDNN reached on
//! that very shape where the lab measured it (the conv family's baseline, cuDNN's fastest
//! algorithm). A GPU with its own measurements uses its own shares; one without, the measured
//! GPUs' share for each shape (their median, their lowest and highest giving the range; a GPU
//! that lacks the shape is left out of it, and a shape no GPU has takes all their shares'). A
//! shape a measured GPU lacks takes, on that GPU, the median of the shares it measured. Training adds each
//! convolution's two gradients (the input's, but the stem's, and the filters'), the same FLOPs
//! as its forward pass, each priced at the share cuDNN's gradient reached on it (the conv
//! family's `resnet50-backward` suite); a GPU that measured the forward pass but not a gradient
//! prices that gradient at the forward's share.

use crate::facts::family::{FamilyId, GemmInput, Role};
use crate::facts::sheet::{self, Gpu};
use crate::measure::families::conv_shape::{ConvShape, Pass};
use crate::schema::entry::{Kind, Status};
use crate::store::View;

use super::{Efficiency, Request};

/// The shares cuDNN reached on each of a workload's convolutions, per measured GPU.
pub struct ConvPricing {
    /// Each distinct shape and how many times a step runs it.
    convs: Vec<(ConvShape, f64)>,
    /// Per measured GPU, the share of its bound on each shape, where measured (a gradient
    /// through its forward pass's), and how many passes it measured itself and their median
    /// share (what a shape it lacks takes).
    measured: Vec<(&'static Gpu, Vec<Option<f64>>)>,
    own: Vec<(usize, f64)>,
}

/// One GPU's convolutions: the time at the median share and at the range's ends, seconds, the
/// shares it used and what they stand on.
pub struct Priced {
    /// At the sheet's bound.
    pub bound_s: f64,
    pub mid_s: f64,
    pub low_s: f64,
    pub high_s: f64,
    pub efficiency: Option<Efficiency>,
    pub basis: String,
}

impl ConvPricing {
    /// None where the workload has no convolutions in its precision or no view measured one of
    /// them: the step is then priced by its GEMMs.
    pub fn new(req: &Request, views: &[View]) -> Option<ConvPricing> {
        let convs = req.workload.convs(req.batch, req.mode, req.precision)?;
        let family = FamilyId::all().find(|f| f.role() == Role::Conv(GemmInput::Fp16))?;
        let p = req.precision.sheet();
        // Per GPU, the share of each pass it measured itself (its views together).
        let mut direct: Vec<(&'static Gpu, Vec<Option<f64>>)> = Vec::new();
        for v in views {
            let Some(gpu) = sheet::for_device(&v.device.name, v.device.sms) else { continue };
            let shares: Vec<Option<f64>> = convs
                .iter()
                .map(|(s, _)| {
                    let dims = s.shape().0;
                    let rate = v
                        .entries
                        .iter()
                        .filter(|e| FamilyId::parse(&e.family) == Some(family) && e.kind == Kind::Baseline && e.status == Status::Ok)
                        .filter(|e| e.dims == dims)
                        .filter_map(|e| e.rate)
                        .fold(f64::NAN, f64::max);
                    (rate > 0.0).then(|| rate / bound(gpu, p, s)).filter(|x| x.is_finite())
                })
                .collect();
            match direct.iter_mut().find(|(g, _)| g.name == gpu.name) {
                Some((_, old)) => old.iter_mut().zip(shares).for_each(|(o, n)| *o = o.or(n)),
                None => direct.push((gpu, shares)),
            }
        }
        direct.retain(|(_, s)| s.iter().any(Option::is_some));
        // A gradient a GPU did not measure takes its forward pass's share there.
        let forward: Vec<Option<usize>> = convs.iter().map(|(s, _)| convs.iter().position(|(f, _)| *f == s.with(Pass::Forward))).collect();
        let own = direct
            .iter()
            .map(|(_, s)| {
                (s.iter().flatten().count(), Efficiency::of(s.iter().flatten().copied().collect()).map_or(f64::NAN, |e| e.median))
            })
            .collect();
        let measured = direct
            .into_iter()
            .map(|(g, s)| (g, s.iter().zip(&forward).map(|(x, f)| x.or_else(|| f.and_then(|j| s[j]))).collect()))
            .collect::<Vec<_>>();
        (!measured.is_empty()).then_some(ConvPricing { convs, measured, own })
    }

    /// The convolutions of a step on `gpu` in precision `p`; None where the sheet has no rate.
    pub fn price(&self, gpu: &Gpu, p: sheet::Precision) -> Option<Priced> {
        let at = self.measured.iter().position(|(g, _)| g.name == gpu.name);
        let own = at.map(|i| &self.measured[i]);
        // Per shape: (median, lowest, highest) share.
        let shares: Vec<(f64, f64, f64)> = match own {
            Some((_, s)) => {
                let fill = at.map(|i| self.own[i].1)?;
                s.iter().map(|x| x.unwrap_or(fill)).map(|x| (x, x, x)).collect()
            }
            None => {
                // A shape no GPU measured takes the measured shares' median and spread.
                let pooled = Efficiency::of(self.measured.iter().flat_map(|(_, s)| s.iter().flatten().copied()).collect())?;
                (0..self.convs.len())
                    .map(|i| {
                        let at: Vec<f64> = self.measured.iter().filter_map(|(_, s)| s[i]).collect();
                        let e = Efficiency::of(at).unwrap_or(pooled);
                        (e.median, e.low, e.high)
                    })
                    .collect()
            }
        };
        let mut t = (0.0, 0.0, 0.0, 0.0);
        for ((s, n), (mid, low, high)) in self.convs.iter().zip(&shares) {
            let b = bound(gpu, p, s) * 1e12;
            let flops = n * s.work(2.0).flops;
            t = (t.0 + flops / b, t.1 + flops / (b * mid), t.2 + flops / (b * high), t.3 + flops / (b * low));
        }
        if !t.0.is_finite() {
            return None;
        }
        let used = Efficiency::of(shares.iter().map(|s| s.0).collect());
        let basis = match own {
            Some((_, s)) => format!("measured here ({} of {} convolution passes)", at.map_or(0, |i| self.own[i].0), s.len()),
            None => {
                let n = self.measured.len();
                format!("predicted from {n} measured GPU{}", if n == 1 { "" } else { "s" })
            }
        };
        Some(Priced { bound_s: t.0, mid_s: t.1, low_s: t.2, high_s: t.3, efficiency: used, basis })
    }
}

/// The sheet's bound on `gpu` for convolution `s`, TFLOP/s (NaN where the sheet has no rate).
fn bound(gpu: &Gpu, p: sheet::Precision, s: &ConvShape) -> f64 {
    let w = s.work(2.0);
    gpu.bound(p, w.flops / (w.bytes_read + w.bytes_written)).unwrap_or(f64::NAN)
}
