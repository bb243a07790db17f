//! Volta coverage: nvcc 13 cannot build sm_70, so every variant the manifests declare for sm_70
//! is compiled with NVRTC 12 (installed by scripts/setup.sh) and its resources read back.

use kernel_lab::gpu::legacy::{declared_for, Nvrtc};

#[test]
fn every_variant_declared_for_sm_70_compiles_with_nvrtc_12() {
    let nvrtc = Nvrtc::load().expect("NVRTC 12 is part of the build's setup: run scripts/setup.sh");
    assert_eq!(nvrtc.version.0, 12);
    let declared: Vec<_> = declared_for(70).unwrap().collect();
    assert!(declared.iter().any(|v| v.name == "sgemm_08_double_buffered"), "the SIMT ladder runs on Volta");
    assert!(declared.iter().all(|v| v.arch.describe() == "sm_70+"), "only variants that admit sm_70");
    assert!(
        !declared.iter().any(|v| v.name.starts_with("sgemm_10") || v.name.starts_with("memory_05")),
        "cp.async and TMA need newer GPUs"
    );
    for v in declared {
        let u = nvrtc.usage(v, 70).unwrap_or_else(|e| panic!("{e}"));
        assert!(u.registers > 0 && u.registers <= 255, "{}: {} registers", v.name, u.registers);
        eprintln!("{} sm_70: {} registers, {} B smem, {} B spilled", v.name, u.registers, u.smem_bytes, u.spill_stores);
    }
    // The best SIMT rung keeps its registers on Volta too.
    let best = kernel_lab::gpu::registry::by_name("sgemm_08_double_buffered").unwrap();
    let u = nvrtc.usage(best, 70).unwrap();
    assert_eq!((u.spill_stores, u.spill_loads), (0, 0), "sgemm_08 spills on sm_70");
    // What a Volta GPU would load when the fatbin lacks sm_70: an ELF cubin.
    let cubin = nvrtc.cubin(best, 70).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF", "a cubin");
}
