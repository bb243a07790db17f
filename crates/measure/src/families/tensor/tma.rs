//! The row pitch the TMA path of the Tensor Core families reads fast (a matrix whose own rows
//! are not on it is copied to it: `families::pitched`).

/// The row pitch, in elements, TMA reads `cols` elements of `size` bytes at: the rows themselves
/// where they are a whole number of 32-byte sectors, else padded to 128 bytes. TMA accepts
/// 16-byte pitches, but on an H200 rung 5 runs 404 TFLOP/s at 4104 (8208-byte rows) against 508
/// at 4112 (8224) with the same tiles: rows off the sector grid cost each box row an extra
/// sector. A pair (`paired`: a cluster that multicasts B) makes a third fewer L2 requests, and
/// reads 16-byte-aligned rows in place faster than padded copies plus the copies: at 4104^3 the
/// 128 x 192 ping-pong pair runs 0.92x cuBLAS in place and 0.83x padded, where the lone fp16_08
/// runs 0.78x in place and 0.86x padded.
pub fn fast_pitch(cols: usize, size: usize, paired: bool) -> usize {
    crate::families::pitched::line_pitch(cols, size, if paired { 16 } else { 32 })
}
