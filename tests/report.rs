//! The HTML report of the committed H200 runs, read for its structure: the summary first, then a
//! section per family with its plot (a bar per measured variant at the plotted shape) and its
//! folded table, under 1 MB, every plot well-formed.

use std::process::Command;

#[test]
fn the_html_report_opens_on_a_summary_and_plots_every_family() {
    let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
        .args(["report", "results/nvidia-h200-sm_90", "--format", "html"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.len() < 1 << 20, "{} bytes", page.len());
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<h2>Summary") < at("<h2>Families") && at("<h2>Families") < at("<h2>Devices") && at("<h2>Devices") < at("<h2>Provenance"));
    let sections: Vec<&str> = page.split("<section id=\"family-").skip(1).map(|s| s.split("</section>").next().unwrap()).collect();
    let names: Vec<&str> = sections.iter().map(|s| s.split('"').next().unwrap()).collect();
    for family in ["sgemm", "tensor", "memory", "transpose", "reduce", "l2", "peak", "tf32", "int8"] {
        let i = names.iter().position(|n| *n == family).unwrap_or_else(|| panic!("no section for {family}: {names:?}"));
        let s = sections[i];
        assert!(s.contains("<svg") && s.contains("</svg>") && s.contains("<details>"), "{family}: a plot and a folded table");
        // The white background, then one bar per variant at the plotted shape.
        assert!(s.matches("<rect").count() >= 3, "{family}: {} rects", s.matches("<rect").count());
        assert!(page[..at("<h2>Families")].contains(&format!("<td>{family}</td>")), "{family} is in the summary");
    }
}
