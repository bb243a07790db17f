//! The multi family without GPUs: bus-bandwidth factors, the link classification, the parsing of
//! `nvidia-smi topo -m`, and the host-side answers collectives are checked against.

use kernel_lab::measure::multi::topology::{nvlinks_between, parse_topo_matrix, pci_key};
use kernel_lab::measure::multi::{bus_factor, expected, value};
use kernel_lab::schema::multi::{Collective, Link};

#[test]
fn bus_bandwidth_factors_are_nccl_tests() {
    // nccl-tests' PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n,
    // broadcast 1.
    assert_eq!(bus_factor(Collective::AllReduce, 2), 1.0);
    assert_eq!(bus_factor(Collective::AllReduce, 8), 1.75);
    assert_eq!(bus_factor(Collective::AllGather, 2), 0.5);
    assert_eq!(bus_factor(Collective::ReduceScatter, 4), 0.75);
    assert_eq!(bus_factor(Collective::Broadcast, 8), 1.0);
}

#[test]
fn links_and_the_topology_matrix() {
    assert_eq!(Link::classify(18, Some("system")).label(), "NV18");
    assert_eq!(Link::classify(0, Some("single")).label(), "PIX");
    assert_eq!(Link::classify(0, Some("system")).label(), "SYS");
    assert_eq!(Link::classify(0, None), Link::Unknown);
    let text = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                GPU0\t X \tNV18\tSYS\t0-47\t0\t\tN/A\n\
                GPU1\tNV18\t X \tSYS\t0-47\t0\t\tN/A\n\
                NIC0\tSYS\tSYS\t X \n\n\
                Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
    assert_eq!(parse_topo_matrix(text).unwrap(), vec![vec!["X", "NV18"], vec!["NV18", "X"]]);
    assert!(parse_topo_matrix("").is_err());
    assert!(parse_topo_matrix("\tCPU Affinity\n").unwrap_err().contains("no GPU columns"));
    assert!(parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV18\n").unwrap_err().contains("2-GPU header"));
}

#[test]
fn nvlinks_direct_and_through_switches() {
    assert_eq!(pci_key("00000000:1B:00.0"), pci_key("0000:1b:00.0"));
    let (g0, g1, g2) = (pci_key("0000:18:00.0"), pci_key("0000:2a:00.0"), pci_key("0000:3a:00.0"));
    let machine = vec![g0.clone(), g1.clone(), g2.clone()];
    // Two GPUs joined by 4 direct links (and one more to a GPU outside the run).
    let direct = vec![vec![g1.clone(); 4].into_iter().chain([g2.clone()]).collect(), vec![g0.clone(); 4]];
    assert_eq!(nvlinks_between(&direct, &machine[..2], &machine, 0, 1), 4);
    // HGX: each GPU's 18 links end on NVSwitches (ids that are no GPU's): NV18, as nvidia-smi says.
    let switched: Vec<Vec<String>> =
        (0..2).map(|g| (0..18).map(|l| pci_key(&format!("0000:{:x}:00.0", 0xc0 + g * 18 + l))).collect()).collect();
    assert_eq!(nvlinks_between(&switched, &machine[..2], &machine, 0, 1), 18);
    // No links: PCIe only.
    assert_eq!(nvlinks_between(&[vec![], vec![]], &machine[..2], &machine, 1, 0), 0);
}

#[test]
fn collective_answers() {
    // Two ranks, parts of 4 elements.
    assert_eq!(expected(Collective::AllReduce, 2, 1, 3, 4), value(0, 3) + value(1, 3));
    assert_eq!(expected(Collective::AllGather, 2, 0, 5, 4), value(1, 1), "element 5 is rank 1's element 1");
    assert_eq!(expected(Collective::ReduceScatter, 2, 1, 2, 4), value(0, 6) + value(1, 6), "rank 1 owns part 1");
    assert_eq!(expected(Collective::Broadcast, 2, 1, 2, 4), value(0, 2), "from the root, rank 0");
    // Sums of a few ranks stay exact in bf16 (8 significant bits).
    for r in 0..8 {
        for i in 0..7 {
            let v = (0..=r).map(|q| value(q, i)).sum::<f32>();
            assert_eq!(half::bf16::from_f32(v).to_f32(), v);
        }
    }
}
