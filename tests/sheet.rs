//! The spec sheet's internal consistency: every published rate equals SMs x clock x per-SM rate,
//! every bandwidth equals bus width x data rate, within the vendors' rounding (2%).

use kernel_lab::facts::sheet::{self, Precision, GPUS};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}

#[test]
fn published_rates_are_sms_times_clock_times_per_sm_rate() {
    for g in GPUS {
        for r in g.rates {
            let derived = g.derived(r);
            assert!(
                close(r.published, derived, 0.02),
                "{} {}: published {} but derived {derived:.2}",
                g.name,
                r.precision.label(),
                r.published
            );
            if let Some(sparse) = r.sparse {
                assert!(close(sparse, 2.0 * r.published, 0.02), "{} {}: sparse is not twice dense", g.name, r.precision.label());
            }
        }
    }
}

#[test]
fn fp32_rate_matches_the_architecture_table() {
    for g in GPUS {
        let arch = g.arch().unwrap_or_else(|| panic!("{}: sm_{} is not in the architecture table", g.name, g.sm));
        let fp32 = g.rates.iter().find(|r| r.precision == Precision::Fp32).expect("every GPU lists fp32");
        assert_eq!(fp32.per_sm_per_clock, 2 * arch.fp32_lanes_per_sm, "{}", g.name);
    }
}

#[test]
fn bandwidth_is_bus_width_times_data_rate() {
    for g in GPUS {
        let derived = g.bus_bits as f64 * g.data_rate_gbps / 8.0;
        assert!(close(g.bandwidth_gbs, derived, 0.02), "{}: {} GB/s but {derived:.0} from the bus", g.name, g.bandwidth_gbs);
    }
}

#[test]
fn names_are_unique_and_the_seed_articles_mistakes_are_not_repeated() {
    for (i, g) in GPUS.iter().enumerate() {
        assert!(GPUS[i + 1..].iter().all(|h| h.name != g.name), "{} twice", g.name);
        assert!(!g.source.is_empty());
    }
    // The articles give the RTX 4090 a 600 GB/s NVLink: no Ada GeForce card has one.
    assert_eq!(sheet::find("rtx 4090").unwrap().nvlink_gbs, None);
    // Dense, not sparse: the 4090's int8 is 660.6 TOPS, not the 1321 the marketing quotes.
    assert_eq!(sheet::find("RTX 4090").unwrap().rate(Precision::Int8), Some(660.6));
    // GeForce Ada runs fp16 with fp32 accumulate at half the fp16-accumulate rate.
    let g = sheet::find("RTX 4090").unwrap();
    assert!(close(g.rate(Precision::Fp16F32Acc).unwrap() * 2.0, g.rate(Precision::Fp16F16Acc).unwrap(), 0.01));
}

#[test]
fn lookups_by_name_and_by_device() {
    let e = sheet::find("RTX 9090").unwrap_err();
    assert!(e.contains("no GPU 'RTX 9090'") && e.contains("H200 SXM"), "{e}");
    assert_eq!(sheet::for_device("NVIDIA H200", 132).unwrap().name, "H200 SXM");
    assert_eq!(sheet::for_device("NVIDIA GeForce RTX 4070 Ti", 60).unwrap().name, "RTX 4070 Ti");
    assert_eq!(sheet::for_device("NVIDIA GeForce RTX 4070", 46).unwrap().name, "RTX 4070");
    assert_eq!(sheet::for_device("Tesla V100-PCIE-32GB", 80).unwrap().name, "V100 PCIe");
    assert!(sheet::for_device("NVIDIA H200", 114).is_none(), "the SM count must agree");
}

#[test]
fn bounds_are_the_roofline() {
    let h200 = sheet::find("H200 SXM").unwrap();
    // A copy (intensity 0) is bandwidth-bound; a large GEMM is compute-bound.
    assert_eq!(h200.bound(Precision::Fp32, 0.25), Some(0.25 * 4800.0 / 1e3));
    assert_eq!(h200.bound(Precision::Fp32, 1000.0), Some(67.0));
    assert_eq!(sheet::find("T4").unwrap().bound(Precision::Tf32, 1000.0), None, "T4 has no tf32");
}
