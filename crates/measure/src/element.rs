//! The element types the row-wise families store (`FamilyId::storage`): f32, and half's f16 and
//! bf16 for the families in fp16 and bf16 storage. Inputs are drawn in f32 and rounded to the
//! element type once (`rounded`), so the f64 reference, computed from the rounded values, sees
//! what the kernel sees; outputs widen to f64 exactly for the check.

use half::{bf16, f16};

use crate::facts::family::Storage;
use crate::gpu::cuda::{DeviceRepr, ValidAsZeroBits};
use crate::gpu::dnn::DnnElement;
use crate::schema::check::Precision;

/// An element type of a row-wise family: what its buffers hold, how inputs round to it, and
/// cuDNN's name for it (its baselines run on the same data).
pub trait Element: DeviceRepr + ValidAsZeroBits + DnnElement + Copy + Default + Send + Sync + Into<f64> + 'static {
    const STORAGE: Storage;
    /// `v` rounded to the nearest element (ties to even), as the kernels' stores round.
    fn round(v: f32) -> Self;
    /// The element's value, exactly.
    fn widen(self) -> f32;
    /// Whether its bits are the poison's (`inputs::poison` fills with 0xFF bytes, a NaN in each
    /// type): an element a kernel left unwritten.
    fn is_poison(self) -> bool;
}

impl Element for f32 {
    const STORAGE: Storage = Storage::Fp32;
    fn round(v: f32) -> f32 {
        v
    }
    fn widen(self) -> f32 {
        self
    }
    fn is_poison(self) -> bool {
        self.to_bits() == u32::MAX
    }
}

impl Element for f16 {
    const STORAGE: Storage = Storage::Fp16;
    fn round(v: f32) -> f16 {
        f16::from_f32(v)
    }
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn is_poison(self) -> bool {
        self.to_bits() == u16::MAX
    }
}

impl Element for bf16 {
    const STORAGE: Storage = Storage::Bf16;
    fn round(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn is_poison(self) -> bool {
        self.to_bits() == u16::MAX
    }
}

/// How close a row-wise family's outputs must come in `storage`: fp32 arithmetic throughout, and
/// for 16-bit storage the rounding of each output to its type.
pub fn precision(storage: Storage) -> Precision {
    match storage {
        Storage::Fp32 => Precision::Fp32,
        Storage::Fp16 => Precision::Fp16Storage,
        Storage::Bf16 => Precision::Bf16Storage,
    }
}

/// Which of three things goes with `storage`: a family's statics, one per storage.
pub fn by_storage<T>(storage: Storage, fp32: T, fp16: T, bf16: T) -> T {
    match storage {
        Storage::Fp32 => fp32,
        Storage::Fp16 => fp16,
        Storage::Bf16 => bf16,
    }
}

/// `x` rounded to `E` in place (each value then exact in `E`), and the elements to upload.
pub fn rounded<E: Element>(x: &mut [f32]) -> Vec<E> {
    x.iter_mut()
        .map(|v| {
            let e = E::round(*v);
            *v = e.widen();
            e
        })
        .collect()
}
