//! A convolution's shape as `--size` writes it and tables show it: `NxHxWxC-KxRxR`, then
//! optionally `-sSTRIDE` (default 1) and `-pPAD` (default (R - 1) / 2, "same" padding), e.g.
//! `256x56x56x64-64x3x3` or `256x224x224x3-64x7x7-s2-p3`, and last `-dgrad` or `-wgrad` for the
//! input's or the filters' gradient of that convolution instead of its forward pass. Tables show
//! every part, so a label parses back to its shape. Filters are square (every CNN the lab runs
//! has such). Stored as [n, h, w, c, k, r, stride, pad], and a ninth, 1 or 2, for a gradient.

use rand::{Rng, RngExt};

use super::shapes::parse_count;
use super::Shape;
use crate::facts::networks::Conv;
pub use crate::gpu::dnn_conv::Pass;
use crate::schema::entry::Work;

/// A convolution's dimensions (`lab_conv_args`'s, less p and q, which follow from them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvShape {
    pub n: u64,
    pub h: u64,
    pub w: u64,
    pub c: u64,
    pub k: u64,
    pub r: u64,
    pub stride: u64,
    pub pad: u64,
    pub pass: Pass,
}

/// The dimensions' names, matched by manifests' `multiple_of`.
pub const DIMS: [&str; 8] = ["n", "h", "w", "c", "k", "r", "stride", "pad"];

/// Kernels and cuDNN index with 32-bit ints: every tensor stays under 2^31 elements.
const MAX_ELEMENTS: u64 = 1 << 31;

impl ConvShape {
    pub fn of(shape: &Shape) -> ConvShape {
        let d = &shape.0;
        let pass = match d.get(8) {
            Some(1) => Pass::Data,
            Some(2) => Pass::Filter,
            _ => Pass::Forward,
        };
        ConvShape { n: d[0], h: d[1], w: d[2], c: d[3], k: d[4], r: d[5], stride: d[6], pad: d[7], pass }
    }

    /// A forward pass keeps the eight dimensions results were first written with.
    pub fn shape(&self) -> Shape {
        let mut d = vec![self.n, self.h, self.w, self.c, self.k, self.r, self.stride, self.pad];
        match self.pass {
            Pass::Forward => {}
            Pass::Data => d.push(1),
            Pass::Filter => d.push(2),
        }
        Shape(d)
    }

    /// The same convolution's `pass`.
    pub fn with(self, pass: Pass) -> ConvShape {
        ConvShape { pass, ..self }
    }

    /// A network's convolution at batch `n`.
    pub fn of_network(conv: &Conv, n: u64) -> ConvShape {
        ConvShape {
            n,
            h: conv.hw,
            w: conv.hw,
            c: conv.c,
            k: conv.k,
            r: conv.r,
            stride: conv.stride,
            pad: (conv.r - 1) / 2,
            pass: Pass::Forward,
        }
    }

    /// The output's height and width.
    pub fn p(&self) -> u64 {
        (self.h + 2 * self.pad - self.r) / self.stride + 1
    }
    pub fn q(&self) -> u64 {
        (self.w + 2 * self.pad - self.r) / self.stride + 1
    }

    /// The implicit GEMM's dimensions: output pixels (n p q), output channels (k), and the depth
    /// of each dot product (r r c).
    pub fn gemm(&self) -> [u64; 3] {
        [self.n * self.p() * self.q(), self.k, self.r * self.r * self.c]
    }

    pub fn input_elements(&self) -> u64 {
        self.n * self.h * self.w * self.c
    }
    pub fn filter_elements(&self) -> u64 {
        self.k * self.r * self.r * self.c
    }
    pub fn output_elements(&self) -> u64 {
        self.n * self.p() * self.q() * self.k
    }

    /// 2 n p q k r r c operations in every pass; its two inputs read once and its output
    /// written once (forward x and w to y, dgrad dy and w to dx, wgrad x and dy to dw), at `elem`
    /// bytes an element.
    pub fn work(&self, elem: f64) -> Work {
        let [m, n, k] = self.gemm().map(|d| d as f64);
        let (x, w, y) = (self.input_elements(), self.filter_elements(), self.output_elements());
        let (read, written) = match self.pass {
            Pass::Forward => (x + w, y),
            Pass::Data => (y + w, x),
            Pass::Filter => (x + y, w),
        };
        Work { flops: 2.0 * m * n * k, bytes_read: elem * read as f64, bytes_written: elem * written as f64 }
    }

    pub fn parse(text: &str) -> Result<ConvShape, String> {
        let syntax = || format!("'{text}' is not a convolution NxHxWxC-KxRxR[-sSTRIDE][-pPAD][-dgrad|-wgrad], e.g. 256x56x56x64-64x3x3");
        let mut parts: Vec<&str> = text.trim().split('-').collect();
        let pass = match parts.last() {
            Some(&"dgrad") => Pass::Data,
            Some(&"wgrad") => Pass::Filter,
            _ => Pass::Forward,
        };
        if pass != Pass::Forward {
            parts.pop();
        }
        let dims = |part: &str, count: usize| -> Result<Vec<u64>, String> {
            let d: Vec<&str> = part.split('x').collect();
            if d.len() != count {
                return Err(syntax());
            }
            d.iter().map(|p| parse_count(p, "convolution dimension")).collect()
        };
        if parts.len() < 2 || parts.len() > 4 {
            return Err(syntax());
        }
        let (image, filter) = (dims(parts[0], 4)?, dims(parts[1], 3)?);
        if filter[1] != filter[2] {
            return Err(format!("'{text}': the lab's convolutions take square filters, not {}x{}", filter[1], filter[2]));
        }
        let mut s = ConvShape {
            n: image[0],
            h: image[1],
            w: image[2],
            c: image[3],
            k: filter[0],
            r: filter[1],
            stride: 1,
            pad: (filter[1] - 1) / 2,
            pass,
        };
        let mut seen = (false, false);
        for part in &parts[2..] {
            match part.split_at_checked(1) {
                Some(("s", v)) if !seen.0 => (s.stride, seen.0) = (parse_count(v, "stride")?, true),
                Some(("p", v)) if !seen.1 => {
                    (s.pad, seen.1) = (v.parse().map_err(|_| format!("pad '{v}' in '{text}' is not a whole number"))?, true)
                }
                _ => return Err(syntax()),
            }
        }
        if s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.r {
            return Err(format!("'{text}': a {}x{} filter does not fit a {}x{} image padded by {}", s.r, s.r, s.h, s.w, s.pad));
        }
        if s.pad >= s.r {
            return Err(format!("'{text}': padding {} is not less than the filter's {} (an output that sees only zeros)", s.pad, s.r));
        }
        // Checked, so dimensions whose product wraps are refused too.
        let product = |d: &[u64]| d.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|&e| e < MAX_ELEMENTS);
        let (p, q) = ((s.h + 2 * s.pad - s.r) / s.stride + 1, (s.w + 2 * s.pad - s.r) / s.stride + 1);
        if [product(&[s.n, s.h, s.w, s.c]), product(&[s.k, s.r, s.r, s.c]), product(&[s.n, p, q, s.k])].contains(&None) {
            return Err(format!("'{text}' has a tensor of over 2^31 elements"));
        }
        Ok(s)
    }

    /// What tables show, every part written: it parses back to the same shape.
    pub fn label(&self) -> String {
        let ConvShape { n, h, w, c, k, r, stride, pad, pass } = *self;
        let pass = match pass {
            Pass::Forward => "",
            Pass::Data => "-dgrad",
            Pass::Filter => "-wgrad",
        };
        format!("{n}x{h}x{w}x{c}-{k}x{r}x{r}-s{stride}-p{pad}{pass}")
    }

    /// A small random convolution for `verify --fuzz`, whose whole output the CPU checks (but a
    /// dgrad's, whose turned convolution may be larger, which the device reference checks): odd
    /// channel counts and images most of the time (the paths without 16-byte loads), filters of
    /// 1, 3, 5 or 7, strides of 1 to 3, "same" or no padding, at most 2^26 multiply-adds; a
    /// gradient's pass one time in three.
    pub fn fuzz(rng: &mut dyn Rng) -> ConvShape {
        loop {
            let r = [1, 3, 5, 7][rng.random_range(0..4)];
            let odd = |rng: &mut dyn Rng, max: u64| {
                let d = rng.random_range(1..=max);
                if rng.random_bool(0.6) {
                    d | 1
                } else {
                    d
                }
            };
            let (h, w) = (odd(rng, 40).max(r), odd(rng, 40).max(r));
            let pad = if rng.random_bool(0.5) { (r - 1) / 2 } else { 0 };
            let pass = [Pass::Forward, Pass::Forward, Pass::Forward, Pass::Forward, Pass::Data, Pass::Filter][rng.random_range(0..6)];
            let (n, c, k, stride) = (rng.random_range(1..=4), odd(rng, 70), odd(rng, 70), rng.random_range(1..=3));
            let s = ConvShape { n, h, w, c, k, r, stride, pad, pass };
            let [m, n, k] = s.gemm();
            if m * n * k <= 1 << 26 {
                return s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_parses_back_and_defaults_are_same_padding_stride_one() {
        let s = ConvShape::parse("256x56x56x64-64x3x3").unwrap();
        assert_eq!((s.stride, s.pad, s.p(), s.q()), (1, 1, 56, 56));
        assert_eq!(ConvShape::parse(&s.label()), Ok(s));
        let stem = ConvShape::parse("256x224x224x3-64x7x7-s2").unwrap();
        assert_eq!((stem.pad, stem.p(), stem.gemm()), (3, 112, [256 * 112 * 112, 64, 147]));
        let strided = ConvShape::parse("8x56x56x256-512x1x1-s2-p0").unwrap();
        assert_eq!(strided.p(), 28);
        // A gradient's pass is a ninth dimension; the forward keeps eight.
        let dgrad = ConvShape::parse("256x56x56x64-64x3x3-dgrad").unwrap();
        assert_eq!((dgrad.pass, dgrad.shape().0.len(), s.shape().0.len()), (Pass::Data, 9, 8));
        assert_eq!(ConvShape::parse(&dgrad.label()), Ok(dgrad));
        assert_eq!(ConvShape::of(&dgrad.shape()), dgrad);
        let wgrad = ConvShape::parse("8x56x56x256-512x1x1-s2-p0-wgrad").unwrap();
        assert_eq!((wgrad.pass, wgrad.with(Pass::Forward)), (Pass::Filter, strided));
        assert_eq!(ConvShape::of(&wgrad.shape()), wgrad);
    }

    #[test]
    fn bad_shapes_say_why() {
        for (text, says) in [
            ("256x56x56x64", "is not a convolution"),
            ("256x56x56x64-64x3x5", "square filters"),
            ("1x2x2x3-4x7x7-p0", "does not fit"),
            ("1x9x9x3-4x3x3-p3", "not less than the filter"),
            ("1x9x9x3-4x3x3-s0", "greater than 0"),
            ("1x9x9x3-4x3x3-s1-s2", "is not a convolution"),
            ("1x9x9x3-4x3x3-dgrad-s1", "is not a convolution"),
            ("1x9x9x3-4x3x3-dgrad-wgrad", "is not a convolution"),
            ("65536x256x256x64-64x1x1", "2^31"),
            ("4294967296x1x1x4294967296-4294967296x1x1", "2^31"),
        ] {
            let e = ConvShape::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
