//! The GPU spec sheet: what vendors publish for the GPUs the RTX 4090 / 4070 and 4070 Ti / V100
//! selection guides compare and their successors, as data in one place. The lab sets its measurements beside these rows and computes
//! bounds for the GPUs it cannot run; it never reports a sheet figure as a measurement.
//!
//! Rates are dense (no 2:4 sparsity); the sparse figure the vendor quotes is kept apart in
//! `Rate::sparse`. Per-SM figures (shared memory, registers, fp32 lanes) live in the architecture
//! table (`arch::ARCHS`), joined on `sm`. Each row cites its source.

use serde::Serialize;

use crate::arch::{self, Arch};

/// What a published rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Precision {
    /// fp64 FMA on the SIMT cores.
    Fp64,
    /// fp64 on Tensor Cores (A100, Hopper).
    Fp64Tensor,
    /// fp32 FMA on the SIMT cores.
    Fp32,
    /// fp16x2 FMA (HFMA2) on the SIMT cores.
    Fp16,
    /// Tensor Cores, tf32 inputs, fp32 accumulate.
    Tf32,
    /// Tensor Cores, fp16 inputs, fp16 accumulate.
    Fp16F16Acc,
    /// Tensor Cores, fp16 inputs, fp32 accumulate (half rate on GeForce parts).
    Fp16F32Acc,
    /// Tensor Cores, bf16 inputs, fp32 accumulate.
    Bf16F32Acc,
    /// Tensor Cores, fp8 (e4m3 / e5m2) inputs, fp32 accumulate.
    Fp8F32Acc,
    /// Tensor Cores, int8 inputs, int32 accumulate (TOPS).
    Int8,
}

impl Precision {
    pub const ALL: [Precision; 10] = [
        Precision::Fp64,
        Precision::Fp64Tensor,
        Precision::Fp32,
        Precision::Fp16,
        Precision::Tf32,
        Precision::Fp16F16Acc,
        Precision::Fp16F32Acc,
        Precision::Bf16F32Acc,
        Precision::Fp8F32Acc,
        Precision::Int8,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp64Tensor => "fp64 tensor",
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16x2",
            Precision::Tf32 => "tf32 tensor",
            Precision::Fp16F16Acc => "fp16 tensor, fp16 acc",
            Precision::Fp16F32Acc => "fp16 tensor, fp32 acc",
            Precision::Bf16F32Acc => "bf16 tensor, fp32 acc",
            Precision::Fp8F32Acc => "fp8 tensor, fp32 acc",
            Precision::Int8 => "int8 tensor",
        }
    }

    /// Rates quoted at `Gpu::tensor_mhz`: the Tensor Core paths of tf32 and narrower (Hopper's
    /// datasheet quotes them at 1830 MHz, fp64 and SIMT rates at the 1980 MHz boost).
    pub fn low_precision_tensor(self) -> bool {
        !matches!(self, Precision::Fp64 | Precision::Fp64Tensor | Precision::Fp32 | Precision::Fp16)
    }
}

/// One published rate: operations per clock per SM (an FMA is two), and the dense figure the
/// vendor prints, in TFLOP/s (TOPS for int8).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Rate {
    pub precision: Precision,
    pub per_sm_per_clock: u32,
    pub published: f64,
    /// The vendor's "with sparsity" figure, where it quotes one; never used as a rate.
    pub sparse: Option<f64>,
}

/// One GPU of the sheet.
#[derive(Debug, Clone, Serialize)]
pub struct Gpu {
    pub name: &'static str,
    /// Substrings of the driver's device name that identify this GPU (with its SM count).
    pub matches: &'static [&'static str],
    /// Compute capability x 10, the key into `arch::ARCHS`.
    pub sm: u32,
    pub sms: u32,
    /// The clock the vendor's SIMT rates use, MHz.
    pub boost_mhz: u32,
    /// The clock its tf32-and-narrower Tensor Core rates use (lower than boost on Hopper), MHz.
    pub tensor_mhz: u32,
    pub rates: &'static [Rate],
    pub memory: &'static str,
    pub memory_gb: u32,
    pub bus_bits: u32,
    /// Per pin, Gbit/s.
    pub data_rate_gbps: f64,
    pub bandwidth_gbs: f64,
    pub l2_mb: f64,
    pub tdp_w: u32,
    /// NVLink bandwidth per GPU, both directions together, GB/s; None: the GPU has no NVLink.
    pub nvlink_gbs: Option<u32>,
    pub pcie_gen: u32,
    /// Launch price in US dollars, where the vendor published one.
    pub price_usd: Option<u32>,
    pub source: &'static str,
}

const fn r(precision: Precision, per_sm_per_clock: u32, published: f64, sparse: Option<f64>) -> Rate {
    Rate { precision, per_sm_per_clock, published, sparse }
}

use Precision::*;

/// The sheet, oldest first.
pub const GPUS: &[Gpu] = &[
    // NVIDIA Tesla V100 datasheet (2018) and the Volta whitepaper: 80 SMs, 640 Tensor Cores.
    Gpu {
        name: "V100 SXM2",
        matches: &["V100-SXM2", "V100 SXM2"],
        sm: 70,
        sms: 80,
        boost_mhz: 1530,
        tensor_mhz: 1530,
        rates: &[r(Fp64, 64, 7.8, None), r(Fp32, 128, 15.7, None), r(Fp16, 256, 31.4, None), r(Fp16F32Acc, 1024, 125.0, None)],
        memory: "HBM2",
        memory_gb: 32,
        bus_bits: 4096,
        data_rate_gbps: 1.752,
        bandwidth_gbs: 900.0,
        l2_mb: 6.0,
        tdp_w: 300,
        nvlink_gbs: Some(300),
        pcie_gen: 3,
        price_usd: None,
        source: "NVIDIA Tesla V100 datasheet; Volta architecture whitepaper (2017)",
    },
    // Same datasheet, PCIe card: lower boost clock, no NVLink.
    Gpu {
        name: "V100 PCIe",
        matches: &["V100-PCIE", "V100 PCIE"],
        sm: 70,
        sms: 80,
        boost_mhz: 1380,
        tensor_mhz: 1380,
        rates: &[r(Fp64, 64, 7.0, None), r(Fp32, 128, 14.0, None), r(Fp16F32Acc, 1024, 112.0, None)],
        memory: "HBM2",
        memory_gb: 32,
        bus_bits: 4096,
        data_rate_gbps: 1.752,
        bandwidth_gbs: 900.0,
        l2_mb: 6.0,
        tdp_w: 250,
        nvlink_gbs: None,
        pcie_gen: 3,
        price_usd: None,
        source: "NVIDIA Tesla V100 datasheet (PCIe column)",
    },
    // NVIDIA T4 datasheet and the Turing whitepaper: 40 SMs, 320 Tensor Cores.
    Gpu {
        name: "T4",
        matches: &["Tesla T4", "NVIDIA T4"],
        sm: 75,
        sms: 40,
        boost_mhz: 1590,
        tensor_mhz: 1590,
        rates: &[r(Fp32, 128, 8.1, None), r(Fp16F32Acc, 1024, 65.0, None), r(Int8, 2048, 130.0, None)],
        memory: "GDDR6",
        memory_gb: 16,
        bus_bits: 256,
        data_rate_gbps: 10.0,
        bandwidth_gbs: 320.0,
        l2_mb: 4.0,
        tdp_w: 70,
        nvlink_gbs: None,
        pcie_gen: 3,
        price_usd: None,
        source: "NVIDIA T4 datasheet; Turing architecture whitepaper (2018)",
    },
    // NVIDIA A100 datasheet (80 GB SXM4) and the Ampere GA100 whitepaper.
    Gpu {
        name: "A100 SXM4 80GB",
        matches: &["A100-SXM4-80GB", "A100 80GB", "A100-SXM-80GB"],
        sm: 80,
        sms: 108,
        boost_mhz: 1410,
        tensor_mhz: 1410,
        rates: &[
            r(Fp64, 64, 9.7, None),
            r(Fp64Tensor, 128, 19.5, None),
            r(Fp32, 128, 19.5, None),
            r(Fp16, 512, 78.0, None),
            r(Tf32, 1024, 156.0, Some(312.0)),
            r(Fp16F16Acc, 2048, 312.0, Some(624.0)),
            r(Fp16F32Acc, 2048, 312.0, Some(624.0)),
            r(Bf16F32Acc, 2048, 312.0, Some(624.0)),
            r(Int8, 4096, 624.0, Some(1248.0)),
        ],
        memory: "HBM2e",
        memory_gb: 80,
        bus_bits: 5120,
        data_rate_gbps: 3.186,
        bandwidth_gbs: 2039.0,
        l2_mb: 40.0,
        tdp_w: 400,
        nvlink_gbs: Some(600),
        pcie_gen: 4,
        price_usd: None,
        source: "NVIDIA A100 datasheet (2021); NVIDIA A100 Tensor Core GPU architecture whitepaper",
    },
    // NVIDIA publishes no rate table for the RTX 4070: these are the Ada whitepaper's per-SM rates
    // for GeForce AD10x x 46 SMs x the 2475 MHz boost of NVIDIA's specifications page (April 2023,
    // $599); its "466 AI TOPS" is the fp8 sparse figure below. GeForce Ada runs fp16/bf16 with
    // fp32 accumulate, and fp8 with fp32 accumulate, at half the fp16-accumulate rate.
    Gpu {
        name: "RTX 4070",
        matches: &["RTX 4070"],
        sm: 89,
        sms: 46,
        boost_mhz: 2475,
        tensor_mhz: 2475,
        rates: &[
            r(Fp64, 4, 0.455, None),
            r(Fp32, 256, 29.1, None),
            r(Fp16, 256, 29.1, None),
            r(Tf32, 256, 29.1, Some(58.3)),
            r(Fp16F16Acc, 1024, 116.6, Some(233.2)),
            r(Fp16F32Acc, 512, 58.3, Some(116.6)),
            r(Bf16F32Acc, 512, 58.3, Some(116.6)),
            r(Fp8F32Acc, 1024, 116.6, Some(233.2)),
            r(Int8, 2048, 233.2, Some(466.4)),
        ],
        memory: "GDDR6X",
        memory_gb: 12,
        bus_bits: 192,
        data_rate_gbps: 21.0,
        bandwidth_gbs: 504.2,
        l2_mb: 36.0,
        tdp_w: 200,
        nvlink_gbs: None,
        pcie_gen: 4,
        price_usd: Some(599),
        source: "NVIDIA Ada Lovelace architecture whitepaper v2.1 (AD104); GeForce RTX 4070 specifications",
    },
    // Full AD104: the Ada whitepaper's "RTX 4080 12GB" column, launched with the same 60 SMs and
    // 2610 MHz as the RTX 4070 Ti (January 2023, $799).
    Gpu {
        name: "RTX 4070 Ti",
        matches: &["RTX 4070 Ti"],
        sm: 89,
        sms: 60,
        boost_mhz: 2610,
        tensor_mhz: 2610,
        rates: &[
            r(Fp64, 4, 0.626, None),
            r(Fp32, 256, 40.1, None),
            r(Fp16, 256, 40.1, None),
            r(Tf32, 256, 40.1, Some(80.2)),
            r(Fp16F16Acc, 1024, 160.4, Some(320.7)),
            r(Fp16F32Acc, 512, 80.2, Some(160.4)),
            r(Bf16F32Acc, 512, 80.2, Some(160.4)),
            r(Fp8F32Acc, 1024, 160.4, Some(320.7)),
            r(Int8, 2048, 320.7, Some(641.4)),
        ],
        memory: "GDDR6X",
        memory_gb: 12,
        bus_bits: 192,
        data_rate_gbps: 21.0,
        bandwidth_gbs: 504.2,
        l2_mb: 48.0,
        tdp_w: 285,
        nvlink_gbs: None,
        pcie_gen: 4,
        price_usd: Some(799),
        source: "NVIDIA Ada Lovelace architecture whitepaper v2.1 (AD104); GeForce RTX 4070 Ti specifications",
    },
    // Ada whitepaper, RTX 4090 column (October 2022, $1599). No NVLink connector on any Ada
    // GeForce card: the "600 GB/s NVLink" some GPU selection guides give the 4090 is wrong.
    Gpu {
        name: "RTX 4090",
        matches: &["RTX 4090"],
        sm: 89,
        sms: 128,
        boost_mhz: 2520,
        tensor_mhz: 2520,
        rates: &[
            r(Fp64, 4, 1.29, None),
            r(Fp32, 256, 82.6, None),
            r(Fp16, 256, 82.6, None),
            r(Tf32, 256, 82.6, Some(165.2)),
            r(Fp16F16Acc, 1024, 330.3, Some(660.6)),
            r(Fp16F32Acc, 512, 165.2, Some(330.4)),
            r(Bf16F32Acc, 512, 165.2, Some(330.4)),
            r(Fp8F32Acc, 1024, 330.3, Some(660.6)),
            r(Int8, 2048, 660.6, Some(1321.2)),
        ],
        memory: "GDDR6X",
        memory_gb: 24,
        bus_bits: 384,
        data_rate_gbps: 21.0,
        bandwidth_gbs: 1008.0,
        l2_mb: 72.0,
        tdp_w: 450,
        nvlink_gbs: None,
        pcie_gen: 4,
        price_usd: Some(1599),
        source: "NVIDIA Ada Lovelace architecture whitepaper v2.1, Appendix A (RTX 4090)",
    },
    // NVIDIA L40S datasheet: a data-centre AD102, full-rate fp32 accumulate. The datasheet
    // prints 362.05 for fp16/bf16 but 733 for fp8 and 183 for tf32 at the same clock.
    Gpu {
        name: "L40S",
        matches: &["L40S"],
        sm: 89,
        sms: 142,
        boost_mhz: 2520,
        tensor_mhz: 2520,
        rates: &[
            r(Fp32, 256, 91.6, None),
            r(Tf32, 512, 183.0, Some(366.0)),
            r(Fp16F16Acc, 1024, 362.05, Some(733.0)),
            r(Fp16F32Acc, 1024, 362.05, Some(733.0)),
            r(Bf16F32Acc, 1024, 362.05, Some(733.0)),
            r(Fp8F32Acc, 2048, 733.0, Some(1466.0)),
            r(Int8, 2048, 733.0, Some(1466.0)),
        ],
        memory: "GDDR6",
        memory_gb: 48,
        bus_bits: 384,
        data_rate_gbps: 18.0,
        bandwidth_gbs: 864.0,
        l2_mb: 96.0,
        tdp_w: 350,
        nvlink_gbs: None,
        pcie_gen: 4,
        price_usd: None,
        source: "NVIDIA L40S datasheet (2023)",
    },
    // NVIDIA H100 datasheet (SXM column, sparse figures halved) and the Hopper whitepaper:
    // SIMT rates at the 1980 MHz boost, Tensor Core rates at 1830 MHz.
    Gpu {
        name: "H100 SXM",
        matches: &["H100 80GB HBM3", "H100 SXM"],
        sm: 90,
        sms: 132,
        boost_mhz: 1980,
        tensor_mhz: 1830,
        rates: &[
            r(Fp64, 128, 34.0, None),
            r(Fp64Tensor, 256, 67.0, None),
            r(Fp32, 256, 67.0, None),
            r(Fp16, 512, 133.8, None),
            r(Tf32, 2048, 494.7, Some(989.4)),
            r(Fp16F16Acc, 4096, 989.4, Some(1978.9)),
            r(Fp16F32Acc, 4096, 989.4, Some(1978.9)),
            r(Bf16F32Acc, 4096, 989.4, Some(1978.9)),
            r(Fp8F32Acc, 8192, 1978.9, Some(3957.8)),
            r(Int8, 8192, 1978.9, Some(3957.8)),
        ],
        memory: "HBM3",
        memory_gb: 80,
        bus_bits: 5120,
        data_rate_gbps: 5.23,
        bandwidth_gbs: 3350.0,
        l2_mb: 50.0,
        tdp_w: 700,
        nvlink_gbs: Some(900),
        pcie_gen: 5,
        price_usd: None,
        source: "NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 Tensor Core GPU architecture whitepaper",
    },
    // NVIDIA H200 datasheet (SXM): the H100's GH100 with 141 GB of HBM3e. NVIDIA does not
    // print the L2 size; 60 MB is what the device reports (cudaDevAttrL2CacheSize) on the
    // lab's H200.
    Gpu {
        name: "H200 SXM",
        matches: &["H200"],
        sm: 90,
        sms: 132,
        boost_mhz: 1980,
        tensor_mhz: 1830,
        rates: &[
            r(Fp64, 128, 34.0, None),
            r(Fp64Tensor, 256, 67.0, None),
            r(Fp32, 256, 67.0, None),
            r(Fp16, 512, 133.8, None),
            r(Tf32, 2048, 494.7, Some(989.0)),
            r(Fp16F16Acc, 4096, 989.4, Some(1979.0)),
            r(Fp16F32Acc, 4096, 989.4, Some(1979.0)),
            r(Bf16F32Acc, 4096, 989.4, Some(1979.0)),
            r(Fp8F32Acc, 8192, 1978.9, Some(3958.0)),
            r(Int8, 8192, 1978.9, Some(3958.0)),
        ],
        memory: "HBM3e",
        memory_gb: 141,
        bus_bits: 6144,
        data_rate_gbps: 6.25,
        bandwidth_gbs: 4800.0,
        l2_mb: 60.0,
        tdp_w: 700,
        nvlink_gbs: Some(900),
        pcie_gen: 5,
        price_usd: None,
        source: "NVIDIA H200 Tensor Core GPU datasheet (SXM column, sparse figures halved)",
    },
    // NVIDIA RTX Blackwell GPU architecture whitepaper (GB202, RTX 5090 column), January 2025,
    // $1999. GeForce Blackwell keeps half-rate fp32 accumulate.
    Gpu {
        name: "RTX 5090",
        matches: &["RTX 5090"],
        sm: 120,
        sms: 170,
        boost_mhz: 2407,
        tensor_mhz: 2407,
        rates: &[
            r(Fp64, 4, 1.64, None),
            r(Fp32, 256, 104.8, None),
            r(Fp16, 256, 104.8, None),
            r(Tf32, 256, 104.8, Some(209.5)),
            r(Fp16F16Acc, 1024, 419.0, Some(838.0)),
            r(Fp16F32Acc, 512, 209.5, Some(419.0)),
            r(Bf16F32Acc, 512, 209.5, Some(419.0)),
            r(Fp8F32Acc, 1024, 419.0, Some(838.0)),
            r(Int8, 2048, 838.0, Some(1676.0)),
        ],
        memory: "GDDR7",
        memory_gb: 32,
        bus_bits: 512,
        data_rate_gbps: 28.0,
        bandwidth_gbs: 1792.0,
        l2_mb: 96.0,
        tdp_w: 575,
        nvlink_gbs: None,
        pcie_gen: 5,
        price_usd: Some(1999),
        source: "NVIDIA RTX Blackwell GPU architecture whitepaper (2025), RTX 5090",
    },
];

impl Gpu {
    /// The architecture row this GPU belongs to.
    pub fn arch(&self) -> Option<&'static Arch> {
        arch::lookup(self.sm / 10, self.sm % 10)
    }

    /// The dense published rate of `p`, TFLOP/s or TOPS; None where the GPU has no such path.
    pub fn rate(&self, p: Precision) -> Option<f64> {
        self.rates.iter().find(|r| r.precision == p).map(|r| r.published)
    }

    /// SMs x clock x per-SM rate, TFLOP/s: what the published figure should be.
    pub fn derived(&self, rate: &Rate) -> f64 {
        let mhz = if rate.precision.low_precision_tensor() { self.tensor_mhz } else { self.boost_mhz };
        self.sms as f64 * rate.per_sm_per_clock as f64 * mhz as f64 * 1e6 / 1e12
    }

    /// The attainable bound of a kernel of `intensity` operations per byte at precision `p`:
    /// min(peak, intensity x bandwidth), TFLOP/s. A bound from the sheet, never a measurement.
    pub fn bound(&self, p: Precision, intensity: f64) -> Option<f64> {
        Some(self.rate(p)?.min(intensity * self.bandwidth_gbs / 1e3))
    }
}

/// The sheet's row for `name`, case-insensitive; the error lists the names there are.
pub fn find(name: &str) -> Result<&'static Gpu, String> {
    GPUS.iter().find(|g| g.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        let names: Vec<&str> = GPUS.iter().map(|g| g.name).collect();
        format!("no GPU '{name}' in the sheet (it has: {})", names.join(", "))
    })
}

/// The sheet's row for the device the lab runs on: one of its `matches` is in the driver's name
/// ("NVIDIA H200") and the SM count agrees (which tells an RTX 4070 from a 4070 Ti).
pub fn for_device(device_name: &str, sms: u32) -> Option<&'static Gpu> {
    named(device_name).find(|g| g.sms == sms)
}

/// The sheet's rows whose names a device name holds (several, where only the SM count tells
/// them apart).
pub fn named(device_name: &str) -> impl Iterator<Item = &'static Gpu> {
    let upper = device_name.to_ascii_uppercase();
    GPUS.iter().filter(move |g| g.matches.iter().any(|m| upper.contains(&m.to_ascii_uppercase())))
}
