//! Problem shapes: how each family writes them (`--size`), how tables show them, the streaming
//! families' default sizes, and random shapes for `verify --fuzz` that lean on the edges (1, 2,
//! a tile's size and one either side of it, odd row lengths).

use std::fmt;

use rand::{Rng, RngExt};

use super::conv_shape::{self, ConvShape};

/// A problem size: the family names its dimensions (m, n, k; or n for arrays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<u64>);

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&parts.join("x"))
    }
}

/// How a family's shapes are written and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shapes {
    /// [bytes]: a byte count with K/M/G, a whole number of `elem`-byte elements.
    Bytes { elem: u64 },
    /// [m, n, k]: N or MxNxK, each below 2^24 and each matrix below 2^31 elements (kernels index
    /// rows and columns with 32-bit ints; cuBLAS takes int dimensions).
    Gemm,
    /// [rows, cols]: N or ROWSxCOLS, below 2^31 elements.
    Matrix,
    /// [tasks]: a positive count.
    Count,
    /// [n, h, w, c]: activations channels last, NxHxWxC, below 2^31 elements; then `-train` or
    /// `-backward` for a batch norm's passes in training (a fifth dimension, 1 or 2), where a
    /// plain shape is its pass at inference.
    Nhwc,
    /// [n, h, w, c, k, r, stride, pad]: a convolution, `NxHxWxC-KxRxR[-sSTRIDE][-pPAD]`
    /// (`conv_shape`).
    Conv,
}

const MAX_DIM: u64 = 1 << 24;
const MAX_ELEMENTS: u64 = 1 << 31;
const MIB: u64 = 1 << 20;

impl Shapes {
    /// Names of the dimensions, matched by manifests' `multiple_of`.
    pub fn dims(self) -> &'static [&'static str] {
        match self {
            Shapes::Bytes { .. } => &["bytes"],
            Shapes::Gemm => &["m", "n", "k"],
            Shapes::Matrix => &["rows", "cols"],
            Shapes::Count => &["tasks"],
            Shapes::Nhwc => &["n", "h", "w", "c"],
            Shapes::Conv => &conv_shape::DIMS,
        }
    }

    /// Parses one `--size` value; the message says what was expected.
    pub fn parse(self, text: &str) -> Result<Shape, String> {
        let parts: Vec<&str> = text.split('x').collect();
        match self {
            Shapes::Bytes { elem } => {
                let bytes = parse_count(text, "size in bytes")?;
                if bytes % elem != 0 {
                    return Err(format!("{bytes} bytes is not a whole number of {elem}-byte elements"));
                }
                Ok(Shape(vec![bytes]))
            }
            Shapes::Gemm => {
                let dims = match parts.len() {
                    1 => vec![parse_count(parts[0], "matrix size")?; 3],
                    3 => parts.iter().map(|p| parse_count(p, "matrix size")).collect::<Result<Vec<_>, _>>()?,
                    _ => return Err(format!("'{text}' is neither N nor MxNxK")),
                };
                if let Some(d) = dims.iter().find(|&&d| d > MAX_DIM) {
                    return Err(format!("dimension {d} is over the lab's limit of {MAX_DIM}"));
                }
                let [m, n, k] = [dims[0], dims[1], dims[2]];
                if [m * k, k * n, m * n].iter().any(|&e| e > MAX_ELEMENTS) {
                    return Err(format!("{m}x{n}x{k} has a matrix of over {MAX_ELEMENTS} elements"));
                }
                Ok(Shape(dims))
            }
            Shapes::Matrix => {
                let dims = match parts.len() {
                    1 => vec![parse_count(parts[0], "matrix side")?; 2],
                    2 => vec![parse_count(parts[0], "rows")?, parse_count(parts[1], "columns")?],
                    _ => return Err(format!("'{text}' is neither N nor ROWSxCOLS")),
                };
                if dims.iter().any(|&d| d >= MAX_ELEMENTS) || dims[0] * dims[1] > MAX_ELEMENTS {
                    return Err(format!("{}x{} is over the lab's 2^31 elements", dims[0], dims[1]));
                }
                Ok(Shape(dims))
            }
            Shapes::Count => Ok(Shape(vec![parse_count(text, "task count")?])),
            Shapes::Nhwc => {
                let (plain, pass) = match text.split_once('-') {
                    None => (text, None),
                    Some((plain, "train")) => (plain, Some(1)),
                    Some((plain, "backward")) => (plain, Some(2)),
                    Some(_) => return Err(format!("'{text}' is not NxHxWxC[-train|-backward]")),
                };
                let parts: Vec<&str> = plain.split('x').collect();
                let [n, h, w, c] = parts.as_slice() else { return Err(format!("'{text}' is not NxHxWxC[-train|-backward]")) };
                let dims = [(n, "images"), (h, "height"), (w, "width"), (c, "channels")].map(|(p, what)| parse_count(p, what));
                let mut dims = dims.into_iter().collect::<Result<Vec<u64>, _>>()?;
                if dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).is_none_or(|e| e >= MAX_ELEMENTS) {
                    return Err(format!("{text} is over the lab's 2^31 elements"));
                }
                dims.extend(pass);
                Ok(Shape(dims))
            }
            Shapes::Conv => ConvShape::parse(text).map(|s| s.shape()),
        }
    }

    /// A random shape for `verify --fuzz`, small enough that its reference is quick: arrays of
    /// up to 64 MiB, any count of elements; GEMMs with m, n, k from 1 to 1100 (n and k, the rows
    /// of B and A, mostly odd) and at most 2^26 multiply-adds, so the whole product is the
    /// reference; matrices up to 4096 x 4096 with rows mostly of odd length; up to 8192 tasks;
    /// activations of up to 4 images of 40 x 40 pixels and 300 channels, mostly odd.
    pub fn fuzz(self, rng: &mut dyn Rng) -> Shape {
        match self {
            Shapes::Bytes { elem } => Shape(vec![elem * fuzz_dim(rng, (64 << 20) / elem)]),
            Shapes::Gemm => loop {
                let (m, n, k) = (fuzz_dim(rng, 1100), fuzz_odd(rng, 1100), fuzz_odd(rng, 1100));
                if m * n * k <= 1 << 26 {
                    return Shape(vec![m, n, k]);
                }
            },
            Shapes::Matrix => Shape(vec![fuzz_dim(rng, 4096), fuzz_odd(rng, 4096)]),
            Shapes::Count => Shape(vec![fuzz_dim(rng, 1 << 13)]),
            Shapes::Nhwc => {
                let mut d = vec![fuzz_dim(rng, 4), fuzz_odd(rng, 40), fuzz_odd(rng, 40), fuzz_odd(rng, 300)];
                // A training pass one time in three.
                d.extend([None, None, None, None, Some(1), Some(2)][rng.random_range(0..6)]);
                Shape(d)
            }
            Shapes::Conv => ConvShape::fuzz(rng).shape(),
        }
    }

    /// How tables show a shape.
    pub fn label(self, shape: &Shape) -> String {
        match self {
            Shapes::Bytes { .. } => bytes_label(shape.0[0]),
            Shapes::Conv => ConvShape::of(shape).label(),
            Shapes::Nhwc => {
                let pass = match shape.0.get(4) {
                    Some(1) => "-train",
                    Some(2) => "-backward",
                    _ => "",
                };
                format!("{}{pass}", Shape(shape.0[..4].to_vec()))
            }
            _ => shape.to_string(),
        }
    }
}

/// Parses "1000", "256M": a positive integer with an optional binary suffix.
pub fn parse_count(text: &str, what: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{what} '{text}' is not a positive whole number"))?;
    let v = n.checked_mul(mult).ok_or_else(|| format!("{what} '{text}' is too large"))?;
    if v == 0 {
        return Err(format!("{what} must be greater than 0"));
    }
    Ok(v)
}

/// The most sizes one `--size` range may stand for: a typo in a step (1:4096:1) should be an
/// error, not hours of benchmarking.
pub const MAX_RANGE: usize = 4096;

/// `--size` values with their ranges expanded: each dimension of a value ("4096", "1024x512x256",
/// "256M") may be START:END:STEP, every value from START up to END (included where the steps land
/// on it) by STEP, as CUTLASS's profiler takes them; a value with several ranged dimensions stands
/// for every combination, the last dimension varying fastest. "1024:4096:1024" is 1024, 2048,
/// 3072, 4096; "4096x1024:2048:1024x4096" is 4096x1024x4096 and 4096x2048x4096. A value without a
/// range is passed on as written, for its family's parser (`Shapes::parse`) to judge, so every
/// command that takes sizes takes the same spellings and refuses the same ones.
pub fn expand(texts: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for text in texts {
        if !text.contains(':') {
            out.push(text.clone());
            continue;
        }
        let mut combos: Vec<String> = vec![String::new()];
        for (i, part) in text.split('x').enumerate() {
            let values = range(part.trim(), text)?;
            if combos.len() * values.len() > MAX_RANGE {
                return Err(format!("--size '{text}' stands for over {MAX_RANGE} sizes"));
            }
            combos = combos.iter().flat_map(|c| values.iter().map(move |v| if i == 0 { v.clone() } else { format!("{c}x{v}") })).collect();
        }
        out.extend(combos);
    }
    Ok(out)
}

/// One dimension of a `--size` value: a count as written, or START:END:STEP expanded.
fn range(part: &str, whole: &str) -> Result<Vec<String>, String> {
    let bounds: Vec<&str> = part.split(':').collect();
    let [start, end, step] = bounds.as_slice() else {
        if bounds.len() == 1 {
            return Ok(vec![part.to_string()]);
        }
        return Err(format!("--size '{whole}': a range is START:END:STEP, e.g. 1024:4096:1024"));
    };
    let what = |w: &str| format!("range {w} in --size '{whole}'");
    let (start, end, step) = (parse_count(start, &what("start"))?, parse_count(end, &what("end"))?, parse_count(step, &what("step"))?);
    if end < start {
        return Err(format!("--size '{whole}': the range ends ({end}) before it starts ({start})"));
    }
    if (end - start) / step >= MAX_RANGE as u64 {
        return Err(format!("--size '{whole}' stands for over {MAX_RANGE} sizes"));
    }
    Ok((0..=(end - start) / step).map(|i| (start + i * step).to_string()).collect())
}

/// Whether a shape written as `text`, in any spelling `--size` takes, is `dims`, without knowing
/// the family: "4096" is 4096x4096x4096 (or 4096x4096, or 4096 bytes), "4Kx4096x4K" is
/// 4096x4096x4096, "1G" is 1024 MiB; the table's own label ("1024 MiB+12 B") matches too.
pub fn matches(text: &str, dims: &[u64], label: &str) -> bool {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase();
    if squash(text) == squash(label) {
        return true;
    }
    let Ok(nums) = text.split('x').map(|p| parse_count(p, "size")).collect::<Result<Vec<u64>, _>>() else { return false };
    match nums.as_slice() {
        [n] => !dims.is_empty() && dims.iter().all(|d| d == n),
        _ => nums == dims,
    }
}

/// "1024 MiB", "1024 MiB+12 B": array sizes as the tables show them.
pub fn bytes_label(b: u64) -> String {
    match (b / MIB, b % MIB) {
        (0, _) => format!("{b} B"),
        (w, 0) => format!("{w} MiB"),
        (w, r) => format!("{w} MiB+{r} B"),
    }
}

/// The array sizes of the streaming families: 1 GiB (over 8x any L2 of the table) and 1 GiB plus
/// 12 bytes, so the paths for a length that is not a whole number of 16-byte vectors run too.
pub fn array_sizes(quick: bool) -> Vec<Shape> {
    if quick {
        vec![Shape(vec![512 * MIB + 12])]
    } else {
        vec![Shape(vec![1024 * MIB]), Shape(vec![1024 * MIB + 12])]
    }
}

/// The row-wise families' (softmax, layernorm) shapes, around `bert`: the rows x cols matrix
/// BERT-base's step at batch 32 x 512 gives the op.
pub struct RowShapes {
    pub bert: [u64; 2],
}

impl RowShapes {
    /// BERT's matrix; then a wide row and an odd one, 1 GiB and 256 MiB.
    pub fn defaults(&self, quick: bool) -> Vec<Shape> {
        let bert = Shape(self.bert.to_vec());
        if quick {
            vec![bert]
        } else {
            vec![bert, Shape(vec![4096, 65536]), Shape(vec![16383, 4097])]
        }
    }

    /// `--suite bert` (`about` says what the matrix is) and `--suite widths`: rows of one, odd
    /// lengths off every vector and warp, BERT's, one past a power of two, and 65,536; 2^22
    /// elements each, at least 64 rows.
    pub fn suites(&self, about: &'static str) -> Vec<super::Suite> {
        vec![
            super::Suite { name: "bert", about, shapes: vec![Shape(self.bert.to_vec())] },
            super::Suite {
                name: "widths",
                about: "rows of 1, 7, 33, 512, 4097 and 65,536 (2^22 elements each, at least 64 rows)",
                shapes: [1u64, 7, 33, 512, 4097, 65536].iter().map(|&c| Shape(vec![((1u64 << 22) / c).max(64), c])).collect(),
            },
        ]
    }

    /// Where `tune` searches: BERT's matrix.
    pub fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(self.bert.to_vec())]
    }

    /// The work of one pass over rows x cols matrices of `elem`-byte elements: `inputs` of them
    /// read once and one written once (a backward pass reads two), the least a rung can move.
    pub fn work(shape: &Shape, inputs: u32, elem: u64) -> crate::schema::entry::Work {
        let b = (elem * shape.0[0] * shape.0[1]) as f64;
        crate::schema::entry::Work { flops: 0.0, bytes_read: inputs as f64 * b, bytes_written: b }
    }
}

/// One dimension for a fuzzed shape, at most `max`: half the time an edge (1, 2, 3, or a tile
/// size of 8 to 256 and one either side of it), else uniform in 1..=max.
fn fuzz_dim(rng: &mut dyn Rng, max: u64) -> u64 {
    const TILES: [u64; 6] = [8, 16, 32, 64, 128, 256];
    let d = if rng.random_bool(0.5) {
        match rng.random_range(0..4) {
            0 => rng.random_range(1..=3),
            _ => (TILES[rng.random_range(0..TILES.len())] as i64 + rng.random_range(-1i64..=1)) as u64,
        }
    } else {
        rng.random_range(1..=max)
    };
    d.clamp(1, max)
}

/// Odd most of the time: rows whose length is odd are where vector paths break.
fn fuzz_odd(rng: &mut dyn Rng, max: u64) -> u64 {
    let d = fuzz_dim(rng, max);
    if rng.random_bool(0.7) && d % 2 == 0 {
        (d + 1).min(max) | 1
    } else {
        d
    }
}
