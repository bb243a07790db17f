//! The lab's families, typed: the one place a family's name is written (`name`) or read
//! (`FamilyId::parse`). Code that needs a particular family asks for its id; code that needs a
//! kind of family (the ceiling of DRAM, the GEMM of a precision) asks for its role, so a new
//! family of a known role is picked up wherever that role is read.

/// A family of variants: the folder `csrc/<name>/`, the module `crates/measure/src/families/<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FamilyId {
    Memory,
    L2,
    Reduce,
    Transpose,
    Softmax,
    SoftmaxFp16,
    SoftmaxBf16,
    SoftmaxBwd,
    LayerNorm,
    LayerNormFp16,
    LayerNormBf16,
    LayerNormBwd,
    Sgemm,
    Fp16,
    Bf16,
    Tf32,
    Int8,
    Fp8,
    Fp8E5m2,
    LinearFp16,
    LinearBf16,
    ConvFp16,
    BatchNormFp16,
    Peak,
}

/// What a family's measurements stand for, beside their own figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its baseline (cudaMemcpy device to device) is the measured DRAM bandwidth: the roofline's
    /// memory ceiling, and the rate `advise` prices element-wise passes at.
    DramCeiling,
    /// Its best variant is the measured L2 bandwidth, swept over working sets around the L2's size.
    L2Ceiling,
    /// Its variants are the measured compute ceilings of each precision: ceilings, not points
    /// under them.
    ComputePeak,
    /// A GEMM with inputs of one precision against cuBLAS: what `advise` prices a workload's
    /// matrix products at, and what the alignment study sweeps.
    Gemm(GemmInput),
    /// Another GEMM on inputs of that precision (fp8 e5m2 x e4m3, a linear layer with its
    /// epilogue fused): against its own vendor baseline and the compute peak of its rate, but
    /// neither priced by `advise` nor swept for alignment.
    GemmOf(GemmInput),
    /// A convolution on inputs of that precision against cuDNN's: what `advise` prices a
    /// network's convolutions at, shape by shape.
    Conv(GemmInput),
    /// Another memory-bound kernel (a reduction, a transpose, a softmax, a layer norm), judged
    /// against the DRAM ceiling.
    MemoryBound,
}

/// The input precision of a GEMM family, as a workload names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmInput {
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Int8,
    Fp8,
}

/// How a family keeps its elements in memory. The row-wise families come in three: fp32, and
/// fp16 or bf16 storage with fp32 arithmetic and statistics (a half-precision model's softmax and
/// layer norm), each its own family so that its baseline and tolerance are of its storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Storage {
    Fp32,
    Fp16,
    Bf16,
}

impl Storage {
    /// Bytes an element.
    pub fn bytes(self) -> u64 {
        match self {
            Storage::Fp32 => 4,
            Storage::Fp16 | Storage::Bf16 => 2,
        }
    }

    /// The type csrc/include/row_storage.cuh names for it, which the build passes as LAB_ELEM.
    pub fn c_type(self) -> &'static str {
        match self {
            Storage::Fp32 => "float",
            Storage::Fp16 => "lab_fp16",
            Storage::Bf16 => "lab_bf16",
        }
    }
}

/// The launch protocol a family's kernels follow: which defines the host reads and what they
/// decide (`launch::Launch::parse`), and the argument struct they take (`launch::abi`). Families
/// that differ only in their elements' storage share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    Stream,
    L2,
    Reduce,
    Transpose,
    Softmax,
    SoftmaxBwd,
    LayerNorm,
    LayerNormBwd,
    Sgemm,
    TensorCore,
    Conv,
    BatchNorm,
    Peak,
}

/// Every family, in the order tables list them: its id, name, role, launch protocol and storage.
/// A family of a known protocol is its row here, its folder in csrc/ and its measure module.
const FAMILIES: [(FamilyId, &str, Role, Protocol, Storage); 24] = {
    use Protocol as P;
    use Storage::{Bf16, Fp16, Fp32};
    [
        (FamilyId::Memory, "memory", Role::DramCeiling, P::Stream, Fp32),
        (FamilyId::L2, "l2", Role::L2Ceiling, P::L2, Fp32),
        (FamilyId::Reduce, "reduce", Role::MemoryBound, P::Reduce, Fp32),
        (FamilyId::Transpose, "transpose", Role::MemoryBound, P::Transpose, Fp32),
        (FamilyId::Softmax, "softmax", Role::MemoryBound, P::Softmax, Fp32),
        (FamilyId::SoftmaxFp16, "softmax_fp16", Role::MemoryBound, P::Softmax, Fp16),
        (FamilyId::SoftmaxBf16, "softmax_bf16", Role::MemoryBound, P::Softmax, Bf16),
        (FamilyId::SoftmaxBwd, "softmax_bwd", Role::MemoryBound, P::SoftmaxBwd, Fp32),
        (FamilyId::LayerNorm, "layernorm", Role::MemoryBound, P::LayerNorm, Fp32),
        (FamilyId::LayerNormFp16, "layernorm_fp16", Role::MemoryBound, P::LayerNorm, Fp16),
        (FamilyId::LayerNormBf16, "layernorm_bf16", Role::MemoryBound, P::LayerNorm, Bf16),
        (FamilyId::LayerNormBwd, "layernorm_bwd", Role::MemoryBound, P::LayerNormBwd, Fp32),
        (FamilyId::Sgemm, "sgemm", Role::Gemm(GemmInput::Fp32), P::Sgemm, Fp32),
        (FamilyId::Fp16, "fp16", Role::Gemm(GemmInput::Fp16), P::TensorCore, Fp32),
        (FamilyId::Bf16, "bf16", Role::Gemm(GemmInput::Bf16), P::TensorCore, Fp32),
        (FamilyId::Tf32, "tf32", Role::Gemm(GemmInput::Tf32), P::TensorCore, Fp32),
        (FamilyId::Int8, "int8", Role::Gemm(GemmInput::Int8), P::TensorCore, Fp32),
        (FamilyId::Fp8, "fp8", Role::Gemm(GemmInput::Fp8), P::TensorCore, Fp32),
        (FamilyId::Fp8E5m2, "fp8_e5m2", Role::GemmOf(GemmInput::Fp8), P::TensorCore, Fp32),
        (FamilyId::LinearFp16, "linear_fp16", Role::GemmOf(GemmInput::Fp16), P::TensorCore, Fp32),
        (FamilyId::LinearBf16, "linear_bf16", Role::GemmOf(GemmInput::Bf16), P::TensorCore, Fp32),
        (FamilyId::ConvFp16, "conv_fp16", Role::Conv(GemmInput::Fp16), P::Conv, Fp32),
        (FamilyId::BatchNormFp16, "batchnorm_fp16", Role::MemoryBound, P::BatchNorm, Fp16),
        (FamilyId::Peak, "peak", Role::ComputePeak, P::Peak, Fp32),
    ]
};

impl FamilyId {
    /// Every family, in the order tables list them.
    pub fn all() -> impl Iterator<Item = FamilyId> {
        FAMILIES.iter().map(|f| f.0)
    }

    fn row(self) -> &'static (FamilyId, &'static str, Role, Protocol, Storage) {
        FAMILIES.iter().find(|f| f.0 == self).expect("every family has a row")
    }

    /// Its name: its folder under csrc/, and what results files store.
    pub fn name(self) -> &'static str {
        self.row().1
    }

    pub fn role(self) -> Role {
        self.row().2
    }

    /// The launch protocol its kernels follow.
    pub fn protocol(self) -> Protocol {
        self.row().3
    }

    /// How its kernels store elements: fp32 but for the fp16 and bf16 row-wise families (a GEMM
    /// or convolution family's inputs are its role's precision).
    pub fn storage(self) -> Storage {
        self.row().4
    }

    /// The family named `name`; None for a name this build does not know (results of another
    /// version, a folder without a family).
    pub fn parse(name: &str) -> Option<FamilyId> {
        FAMILIES.iter().find(|f| f.1 == name).map(|f| f.0)
    }

    /// The input precision of a GEMM family (`Role::Gemm` or `Role::GemmOf`); None for the rest.
    pub fn gemm_input(self) -> Option<GemmInput> {
        match self.role() {
            Role::Gemm(input) | Role::GemmOf(input) => Some(input),
            _ => None,
        }
    }

    /// The family of GEMMs with inputs in `input`.
    pub fn gemm(input: GemmInput) -> FamilyId {
        FAMILIES.iter().find(|f| f.2 == Role::Gemm(input)).map(|f| f.0).expect("a GEMM family for every input precision")
    }
}

/// The role of the family a stored entry names; None where this build does not know it.
pub fn role_of(name: &str) -> Option<Role> {
    FamilyId::parse(name).map(FamilyId::role)
}

/// Whether the family named `name` plays `role`.
pub fn plays(name: &str, role: Role) -> bool {
    role_of(name) == Some(role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_map_one_to_one() {
        for id in FamilyId::all() {
            assert_eq!(FamilyId::parse(id.name()), Some(id));
        }
        assert_eq!(FamilyId::all().count(), FAMILIES.len());
        assert_eq!(FamilyId::parse("no-such-family"), None);
    }

    #[test]
    fn each_gemm_input_has_one_family() {
        for input in [GemmInput::Fp32, GemmInput::Tf32, GemmInput::Fp16, GemmInput::Bf16, GemmInput::Int8, GemmInput::Fp8] {
            let fams: Vec<FamilyId> = FamilyId::all().filter(|f| f.role() == Role::Gemm(input)).collect();
            assert_eq!(fams, [FamilyId::gemm(input)]);
        }
    }
}
