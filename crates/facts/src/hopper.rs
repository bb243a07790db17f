//! The shared memory of a Hopper GEMM kernel (csrc/include/hopper_*.cuh), planned once, here:
//! the ring of stages, the C buffers a persistent block keeps past it, and whether both fit the
//! dynamic shared memory the manifest asks for. The build passes the plan to the kernel
//! (`launch::generated_defines`: LAB_RING_BYTES, LAB_SLICE_BYTES, LAB_C_BUFS), which asserts that
//! the ring it addresses and the slices its epilogue uses are these; the build and the tuner refuse
//! a configuration that does not fit (`Launch::parse`), so no manifest restates the sizes.

use serde::{Deserialize, Serialize};

use crate::family::{FamilyId, GemmInput};

/// The columns of one box of C's TMA store map (lab_gemm.h's LAB_TMA_C_COLS; tests/ffi.rs holds
/// the two equal, and the kernel's epilogue asserts its boxes are of that width).
pub const TMA_C_COLS: u64 = 32;

/// Bytes of one C box: 64 rows of 128 bytes.
const C_BOX: u64 = 64 * 128;

/// What hopper_config.cuh lays out past the 1024-byte alignment of the dynamic shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// STAGES stages of A (BM rows of 128 bytes) and B (BN rows, or whole 64-column chunks of
    /// MN-major B).
    pub ring_bytes: u32,
    /// A persistent block's C buffers past the ring (0 for one tile a block, which stages C in
    /// the drained ring): the larger of the rows path's slices and the TMA path's boxes.
    pub slice_bytes: u32,
    /// Buffers of MT boxes a consumer gets for TMA stores of C: two where they fit and a tile's
    /// whole boxes are even in number (so each tile starts on the first), one where only that
    /// fits, none where not even one does (C then leaves by the rows path alone).
    pub c_bufs: u32,
}

/// Whether wgmma reads B K-major (tf32 and the 8-bit inputs must); fp16 and bf16 read it MN-major
/// in whole 64-column chunks.
fn b_k_major(input: GemmInput) -> bool {
    !matches!(input, GemmInput::Fp16 | GemmInput::Bf16)
}

impl Layout {
    /// The plan of a TMA GEMM of `family` in the configuration `value` reads (BM, BN, STAGES,
    /// BLOCK_X, PINGPONG, PERSISTENT, SLICED_C, LAB_DYN_SMEM); Err says what does not fit.
    pub fn plan(family: FamilyId, value: &dyn Fn(&str) -> Option<i64>) -> Result<Layout, String> {
        let Some(input) = family.gemm_input() else { return Err(format!("{} is not a GEMM family", family.name())) };
        // Sizes in u64, so no configuration overflows them; the plan's own sizes fit u32 below.
        let need = |name: &str| -> Result<u64, String> {
            let v = value(name).ok_or_else(|| format!("a Hopper GEMM needs the define {name}"))?;
            u64::try_from(v)
                .ok()
                .filter(|&v| v > 0 && v <= u32::MAX as u64)
                .ok_or_else(|| format!("{name} = {v} must be a positive 32-bit integer"))
        };
        // Read as the kernel reads them (a define's default where the manifest has none), and
        // only 0 or 1, so no other value means one thing here and another in C.
        let flag = |name: &str, default: i64| -> Result<bool, String> {
            match value(name).unwrap_or(default) {
                0 => Ok(false),
                1 => Ok(true),
                v => Err(format!("{name} = {v}: a Hopper GEMM takes 0 or 1")),
            }
        };
        let (bm, bn, stages, block_x, dyn_smem) = (need("BM")?, need("BN")?, need("STAGES")?, need("BLOCK_X")?, need("LAB_DYN_SMEM")?);
        let ping_pong = flag("PINGPONG", 0)?;
        let sliced = flag("PERSISTENT", 0)? && flag("SLICED_C", 1)?;
        // One producer warpgroup and the consumers: 128 threads each.
        if block_x % 128 != 0 || !(384..=512).contains(&block_x) {
            return Err(format!("BLOCK_X = {block_x}: a producer warpgroup and two or three consumers (384 or 512 threads)"));
        }
        let consumers = block_x / 128 - 1;
        // The 64-row blocks of a tile each consumer multiplies.
        let rows_per_consumer = if ping_pong { 64 } else { 64 * consumers };
        if bm % rows_per_consumer != 0 || !(1..=2).contains(&(bm / rows_per_consumer)) {
            return Err(format!(
                "BM = {bm}: one or two 64-row blocks for each of {consumers} consumers{}",
                if ping_pong { " in turn" } else { "" }
            ));
        }
        let mt = bm / rows_per_consumer;
        let b_rows = if b_k_major(input) { bn } else { bn.div_ceil(64) * 64 };
        let ring_bytes = stages * (bm * 128 + b_rows * 128);
        // The rows path: SLICE = 32 / MT columns of 64 MT rows, each row padded by 8 elements of 4 bytes.
        let rows_bytes = consumers * 64 * mt * (32 / mt + 8) * 4;
        let tma_bytes = |bufs: u64| consumers * bufs * mt * C_BOX;
        let fits = |past: u64| ring_bytes + past + 1024 <= dyn_smem;
        let c_bufs = if fits(rows_bytes.max(tma_bytes(2))) && (bn / TMA_C_COLS) % 2 == 0 {
            2
        } else if fits(rows_bytes.max(tma_bytes(1))) {
            1
        } else {
            0
        };
        let slice_bytes = if sliced { rows_bytes.max(tma_bytes(c_bufs)) } else { 0 };
        if stages < 2 {
            return Err(format!("STAGES = {stages}: the ring needs two stages or more (one filling while one is read)"));
        }
        if !fits(slice_bytes) {
            return Err(format!(
                "the ring of {stages} stages ({ring_bytes} bytes) and C's slices ({slice_bytes}) need {} bytes with the alignment, over LAB_DYN_SMEM = {dyn_smem}",
                ring_bytes + slice_bytes + 1024
            ));
        }
        // One tile a block stages C (fp32, rows padded by 8) in the drained ring.
        if ring_bytes < bm * (bn + 8) * 4 {
            return Err(format!("the ring ({ring_bytes} bytes) is smaller than the {bm} x {bn} C tile it stages ({})", bm * (bn + 8) * 4));
        }
        // Both fit LAB_DYN_SMEM, itself a 32-bit integer.
        Ok(Layout { ring_bytes: ring_bytes as u32, slice_bytes: slice_bytes as u32, c_bufs: c_bufs as u32 })
    }

    /// The plan as the kernel reads it, on nvcc's and NVRTC's command lines.
    pub fn defines(&self) -> [String; 3] {
        [
            format!("-DLAB_RING_BYTES={}", self.ring_bytes),
            format!("-DLAB_SLICE_BYTES={}", self.slice_bytes),
            format!("-DLAB_C_BUFS={}", self.c_bufs),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(family: FamilyId, defines: &[(&str, i64)]) -> Result<Layout, String> {
        Layout::plan(family, &|n| defines.iter().find(|(k, _)| *k == n).map(|(_, v)| *v))
    }

    const PINGPONG_128X192: &[(&str, i64)] =
        &[("BM", 128), ("BN", 192), ("STAGES", 4), ("BLOCK_X", 384), ("PINGPONG", 1), ("PERSISTENT", 1), ("LAB_DYN_SMEM", 231424)];

    #[test]
    fn the_pingpong_tile_keeps_two_tma_buffers_past_four_stages() {
        // 4 x (16 KiB of A + 24 KiB of B), two consumers' two buffers of two 8 KiB boxes.
        let l = plan(FamilyId::Fp16, PINGPONG_128X192).unwrap();
        assert_eq!(l, Layout { ring_bytes: 163840, slice_bytes: 65536, c_bufs: 2 });
    }

    #[test]
    fn more_stages_leave_fewer_c_buffers_and_then_none_fit() {
        let with = |bn, stages| {
            let mut d = PINGPONG_128X192.to_vec();
            d[1] = ("BN", bn);
            d[2] = ("STAGES", stages);
            plan(FamilyId::Fp16, &d)
        };
        // 6 stages of 128 x 128 leave room for one buffer; 5 of 128 x 192 for the rows path's 24 KiB
        // alone; 6 of 128 x 192 not even for that.
        assert_eq!(with(128, 6).unwrap(), Layout { ring_bytes: 196608, slice_bytes: 32768, c_bufs: 1 });
        assert_eq!(with(192, 5).unwrap(), Layout { ring_bytes: 204800, slice_bytes: 24576, c_bufs: 0 });
        let e = with(192, 6).unwrap_err();
        assert!(e.contains("over LAB_DYN_SMEM = 231424"), "{e}");
        assert!(with(128, 1).unwrap_err().contains("STAGES = 1"));
    }

    #[test]
    fn k_major_b_takes_bn_rows_and_one_tile_a_block_keeps_no_slices() {
        let d = [("BM", 128), ("BN", 256), ("STAGES", 4), ("BLOCK_X", 384), ("PERSISTENT", 0), ("LAB_DYN_SMEM", 231424)];
        let l = plan(FamilyId::Tf32, &d).unwrap();
        assert_eq!((l.ring_bytes, l.slice_bytes), (4 * (128 + 256) * 128, 0));
        // fp16's B of 176 columns arrives in three whole chunks.
        let d = [("BM", 192), ("BN", 176), ("STAGES", 4), ("BLOCK_X", 512), ("PERSISTENT", 1), ("LAB_DYN_SMEM", 231424)];
        assert_eq!(plan(FamilyId::Fp16, &d).unwrap().ring_bytes, 4 * (192 + 192) * 128);
    }

    #[test]
    fn a_block_that_is_not_a_producer_and_two_or_three_consumers_is_refused() {
        let mut d = PINGPONG_128X192.to_vec();
        d[3] = ("BLOCK_X", 256);
        assert!(plan(FamilyId::Fp16, &d).unwrap_err().contains("BLOCK_X = 256"));
        assert!(plan(FamilyId::Softmax, PINGPONG_128X192).is_err());
        // A flag is 0 or 1, as C would read any other value as 1; a size must be given.
        d[3] = ("BLOCK_X", 384);
        d[4] = ("PINGPONG", 2);
        assert!(plan(FamilyId::Fp16, &d).unwrap_err().contains("PINGPONG = 2"));
        assert!(plan(FamilyId::Fp16, &PINGPONG_128X192[1..]).unwrap_err().contains("needs the define BM"));
    }
}
