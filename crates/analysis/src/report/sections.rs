//! The sections after the main table: each device's roofline and the same work's bounds on the
//! sheet's GPUs, host transfers, several GPUs, and the spec sheet itself.

use super::{ms_text, new_table, opt, price_for, Prices, View};
use crate::schema::transfers::{Direction, HostMemory};

/// Each device's measured ceilings, its roofline table (per family and shape, the baseline and
/// the fastest variant) and the same work's bounds on the sheet's GPUs.
pub fn roofline_sections(files: &[(String, View)], labels: &[String], markdown: bool, prices: &Prices) -> String {
    use crate::roofline;
    let mut out = String::new();
    for ((_, f), label) in files.iter().zip(labels) {
        let c = roofline::ceilings(f);
        let pts = roofline::headline(&roofline::points(f));
        let roofs: Vec<String> = c
            .compute
            .iter()
            .map(|(p, r)| format!("{} {r:.1} TFLOP/s", p.label()))
            .chain(c.dram_gbs.map(|b| format!("DRAM {b:.0} GB/s")))
            .chain(c.l2_gbs.map(|b| format!("L2 {b:.0} GB/s")))
            .collect();
        out.push_str(&format!("{label}: measured ceilings: {}\n", if roofs.is_empty() { "none yet".into() } else { roofs.join(", ") }));
        if pts.is_empty() {
            continue;
        }
        let mut t = new_table(roofline::TABLE_HEADER.map(String::from).to_vec(), markdown);
        for row in roofline::table_rows(&c, &pts, price_for(f, prices)) {
            t.add_row(row);
        }
        out.push_str(&format!("{label}: roofline\n{t}\n"));
        let (header, rows) = roofline::bounds_rows(&pts);
        let mut b = new_table(header, markdown);
        for row in rows {
            b.add_row(row);
        }
        out.push_str(&format!("{label}: the same work on the sheet's GPUs: attainable bounds (TFLOP/s), not measurements\n{b}\n"));
    }
    out
}

/// A file's run notes, tuning heat maps and host transfers, as text.
pub fn free_text(f: &View, label: &str) -> String {
    let mut out: String = f.notes.iter().map(|n| format!("{label}: {n}\n")).collect();
    for m in f.tuning.iter().filter_map(|r| super::run::heatmap(r, false)) {
        out.push_str(&m);
        out.push('\n');
    }
    if let Some(t) = &f.transfers {
        out.push_str(&transfers_table(t, false));
    }
    out
}

/// Host transfers: GB/s per size, direction and host memory, pinned over pageable, the PCIe link,
/// the overlap of a transfer with a kernel, and what a small kernel's launch costs.
pub fn transfers_table(t: &crate::schema::transfers::Transfers, markdown: bool) -> String {
    let mut table = new_table(
        ["bytes", "H2D pageable", "H2D pinned", "pinned/pageable", "D2H pageable", "D2H pinned", "pinned/pageable"]
            .map(String::from)
            .to_vec(),
        markdown,
    );
    let mut sizes: Vec<u64> = t.transfers.iter().map(|x| x.bytes).collect();
    sizes.dedup();
    let gbs = |dir: Direction, host: HostMemory, b: u64| {
        t.transfers.iter().find(|x| x.direction == dir && x.host == host && x.bytes == b).map(|x| x.gbs)
    };
    for b in sizes {
        let mut row = vec![crate::measure::families::shapes::bytes_label(b)];
        for dir in [Direction::H2D, Direction::D2H] {
            let (pg, pn) = (gbs(dir, HostMemory::Pageable, b), gbs(dir, HostMemory::Pinned, b));
            row.push(opt(pg, |v| format!("{v:.2} GB/s")));
            row.push(opt(pn, |v| format!("{v:.2} GB/s")));
            row.push(opt(pg.zip(pn), |(a, b)| format!("{:.1}x", b / a)));
        }
        table.add_row(row);
    }
    let link = match &t.pcie {
        Some(p) => format!(
            "PCIe gen {} x{} (max gen {} x{}), {} per direction",
            p.gen_current,
            p.width_current,
            p.gen_max,
            p.width_max,
            opt(p.theoretical_gbs(), |g| format!("{g:.1} GB/s"))
        ),
        None => "PCIe link: NVML not available".to_string(),
    };
    let overlap = t.overlap.as_ref().map_or(String::new(), |o| {
        format!(
            "\noverlap: a {} pinned H2D ({:.3} ms) and {} x {} ({:.3} ms) on two streams took {:.3} ms: {:.0}% of the shorter hidden",
            crate::measure::families::shapes::bytes_label(o.transfer_bytes),
            o.transfer_ms,
            o.kernel_launches,
            o.kernel,
            o.kernel_ms,
            o.both_ms,
            100.0 * o.hidden
        )
    });
    let launches = t.launches.as_ref().map_or(String::new(), |l| {
        format!(
            "\nlaunches: {} x {} of {} back to back: {:.2} us a launch on the host; {:.2} us a kernel on the GPU with the launches queued, {:.2} us as one CUDA graph",
            l.launches,
            l.kernel,
            crate::measure::families::shapes::bytes_label(l.bytes),
            l.host_us,
            l.queued_us,
            l.graph_us
        )
    });
    format!("{table}\n{link}{overlap}{launches}\n")
}

/// The spec sheet as one table: dense rates per precision (TFLOP/s, TOPS for int8; sparse figures
/// are not shown), memory, links and price. `-`: the GPU has no such path or no published figure.
pub fn sheet_table(gpus: &[&crate::facts::sheet::Gpu], markdown: bool) -> String {
    use crate::facts::sheet::Precision;
    let mut header: Vec<String> = vec!["GPU".into(), "arch".into(), "SMs".into(), "boost MHz".into()];
    header.extend(Precision::ALL.iter().map(|p| p.label().to_string()));
    header.extend(["memory", "GB/s", "L2 MB", "TDP W", "NVLink GB/s", "PCIe", "launch $"].map(String::from));
    let mut t = new_table(header, markdown);
    for g in gpus {
        let mut row = vec![g.name.to_string(), format!("sm_{}", g.sm), g.sms.to_string(), g.boost_mhz.to_string()];
        row.extend(Precision::ALL.iter().map(|&p| opt(g.rate(p), |r| format!("{r}"))));
        row.extend([
            format!("{} GB {}", g.memory_gb, g.memory),
            format!("{}", g.bandwidth_gbs),
            format!("{}", g.l2_mb),
            g.tdp_w.to_string(),
            g.nvlink_gbs.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
            format!("gen {}", g.pcie_gen),
            opt(g.price_usd, |p| p.to_string()),
        ]);
        t.add_row(row);
    }
    t.to_string()
}

/// The multi family: the link matrix, peer bandwidth and latency matrices (peer access off and
/// on), kernel reads of peer memory, NCCL collectives and data-parallel scaling.
pub fn multi_tables(m: &crate::schema::multi::MultiResults, markdown: bool) -> String {
    use crate::schema::multi::Collective;
    let n = m.gpus.len();
    let head = |first: &str| {
        let mut h = vec![first.to_string()];
        h.extend((0..n).map(|j| format!("GPU {j}")));
        h
    };
    let mut out = String::new();
    let mut links = new_table(head("link (peer access)"), markdown);
    for i in 0..n {
        let mut row = vec![format!("GPU {i}")];
        row.extend((0..n).map(|j| format!("{}{}", m.links[i][j].label(), if i != j && m.can_access_peer[i][j] { " (p2p)" } else { "" })));
        links.add_row(row);
    }
    out.push_str(&format!("{}\n{links}\n", m.gpus.join(", ")));
    for peer in [false, true] {
        for bidir in [false, true] {
            // Both-ways runs are stored once per pair, lower GPU first.
            let pick = |i: usize, j: usize| {
                let (a, b) = if bidir { (i.min(j), i.max(j)) } else { (i, j) };
                m.copies
                    .iter()
                    .filter(|c| c.peer_access == peer && c.bidirectional == bidir && c.src == a && c.dst == b)
                    .max_by_key(|c| c.bytes)
            };
            let any = m.copies.iter().any(|c| c.peer_access == peer && c.bidirectional == bidir);
            if !any {
                continue;
            }
            let what = format!(
                "GB/s, {}, peer access {}, largest size",
                if bidir { "both directions at once (row <-> column)" } else { "row -> column" },
                if peer { "on" } else { "off" }
            );
            let mut t = new_table(head(&what), markdown);
            for i in 0..n {
                let mut row = vec![format!("GPU {i}")];
                row.extend((0..n).map(|j| pick(i, j).map(|c| format!("{:.1}", c.gbs)).unwrap_or_else(|| "-".into())));
                t.add_row(row);
            }
            out.push_str(&format!("{t}\n"));
        }
        let mut t = new_table(head(&format!("latency us, 4 B, peer access {}", if peer { "on" } else { "off" })), markdown);
        let mut any = false;
        for i in 0..n {
            let mut row = vec![format!("GPU {i}")];
            row.extend((0..n).map(|j| {
                m.latency_us
                    .iter()
                    .find(|l| (l.0, l.1, l.2) == (i, j, peer))
                    .map(|l| {
                        any = true;
                        format!("{:.1}", l.3)
                    })
                    .unwrap_or_else(|| "-".into())
            }));
            t.add_row(row);
        }
        if any {
            out.push_str(&format!("{t}\n"));
        }
    }
    let mut sizes = new_table(
        ["bytes", "peer off, one way", "peer on, one way", "peer off, both ways", "peer on, both ways"].map(String::from).to_vec(),
        markdown,
    );
    let mut byte_list: Vec<u64> = m.copies.iter().filter(|c| !c.bidirectional).map(|c| c.bytes).collect();
    byte_list.sort_unstable();
    byte_list.dedup();
    for b in byte_list {
        let cell = |peer: bool, bidir: bool| {
            m.copies
                .iter()
                .find(|c| {
                    c.src == 0
                        && c.dst == 1
                        && c.peer_access == peer
                        && c.bidirectional == bidir
                        && c.bytes == if bidir { 2 * b } else { b }
                })
                .map(|c| format!("{:.1}", c.gbs))
                .unwrap_or_else(|| "-".into())
        };
        sizes.add_row(vec![bytes_text(b), cell(false, false), cell(true, false), cell(false, true), cell(true, true)]);
    }
    out.push_str(&format!("GPU 0 -> GPU 1 by size (GB/s; both-ways rows count both directions' bytes)\n{sizes}\n"));
    if let Some(nv) = m.nvlink_sheet_gbs {
        let best =
            |bidir: bool| m.copies.iter().filter(|c| c.peer_access && c.bidirectional == bidir).map(|c| c.gbs).fold(f64::NAN, f64::max);
        out.push_str(&format!(
            "against the sheet's NVLink ({nv} GB/s both directions, {} each way): one way {:.0}%, both ways {:.0}%\n",
            nv / 2,
            100.0 * best(false) / (nv as f64 / 2.0),
            100.0 * best(true) / nv as f64
        ));
    }
    if !m.kernel_reads.is_empty() {
        let mut t =
            new_table(["from", "to", "bytes", "kernel reads peer memory GB/s", "copy engine GB/s"].map(String::from).to_vec(), markdown);
        for k in &m.kernel_reads {
            t.add_row(vec![
                format!("GPU {}", k.src),
                format!("GPU {}", k.dst),
                bytes_text(k.bytes),
                format!("{:.1}", k.kernel_gbs),
                format!("{:.1}", k.copy_engine_gbs),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !m.collectives.is_empty() {
        let mut t =
            new_table(["collective", "type", "bytes", "median ms", "algbw GB/s", "busbw GB/s"].map(String::from).to_vec(), markdown);
        for c in Collective::ALL {
            for r in m.collectives.iter().filter(|r| r.collective == c) {
                t.add_row(vec![
                    c.label().to_string(),
                    r.dtype.clone(),
                    bytes_text(r.bytes),
                    ms_text(r.time.median_ms),
                    format!("{:.1}", r.algbw_gbs),
                    format!("{:.1}", r.busbw_gbs),
                ]);
            }
        }
        out.push_str(&format!("NCCL {} ({} ranks, one process)\n{t}\n", m.nccl_version, n));
    }
    if !m.scaling.is_empty() {
        let mut t =
            new_table(["GEMM", "GPUs", "global shape", "gradient", "step ms", "spread", "efficiency"].map(String::from).to_vec(), markdown);
        for s in &m.scaling {
            t.add_row(vec![
                s.gemm.clone(),
                s.gpus.to_string(),
                s.shape.clone(),
                bytes_text(s.gradient_bytes),
                ms_text(s.step.median_ms),
                format!("{:.1}%", s.step.spread_pct()),
                opt(s.efficiency, |e| format!("{:.0}%", 100.0 * e)),
            ]);
        }
        out.push_str(&format!("data-parallel step: the GEMM split along the batch, then an all-reduce of the gradient\n{t}\n"));
    }
    out
}

fn bytes_text(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}
