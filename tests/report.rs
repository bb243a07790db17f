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

/// What the page itself measures in the browser, in each viewport, and posts to the harness.
const CHECK: &str = r#"<script>
window.addEventListener('load', () => {
  const r = { width: innerWidth, scroll: document.documentElement.scrollWidth, figures: [] };
  for (const f of document.querySelectorAll('figure.ladder')) {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const bars = svg ? [...svg.querySelectorAll('rect')].filter(x => ['#0000FF', '#00FF00'].includes(x.getAttribute('fill'))) : [];
    const drawn = bars.filter(b => { const q = b.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length;
    r.figures.push({ section: f.closest('section').id, want: +f.dataset.bars, width: box.width, height: box.height, drawn });
  }
  r.curves = [...document.querySelectorAll('figure.curves svg')].map(svg => {
    const box = svg.getBoundingClientRect();
    return { width: box.width, height: box.height, points: svg.querySelectorAll('circle').length };
  });
  parent.postMessage(JSON.stringify(r), '*');
});
</script>"#;

/// Two frames of the page, a phone's width and a monitor's, and the results they post.
const HARNESS: &str = r#"<!DOCTYPE html><html><body>
<iframe src="report.html" style="width:390px;height:800px;border:0"></iframe>
<iframe src="report.html" style="width:1400px;height:800px;border:0"></iframe>
<script>
const got = [];
window.addEventListener('message', m => { got.push(JSON.parse(m.data)); if (got.length == 2) document.body.dataset.result = JSON.stringify(got); });
</script></body></html>"#;

#[test]
fn in_a_browser_the_page_fits_a_phone_and_a_monitor_and_draws_every_plot() {
    let browser = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("no chromium: scripts/setup.sh installs Debian's chromium for this test");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
        .args(["report", "results/nvidia-h200-sm_90", "--format", "html"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let page = String::from_utf8(out.stdout).unwrap().replace("</body>", &format!("{CHECK}</body>"));
    std::fs::write(dir.path().join("report.html"), page).unwrap();
    std::fs::write(dir.path().join("harness.html"), HARNESS).unwrap();
    let dom = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1500,1000", "--virtual-time-budget=20000", "--dump-dom"])
        .arg(format!("file://{}", dir.path().join("harness.html").display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    let result = dom.split("data-result=\"").nth(1).and_then(|s| s.split('"').next()).expect("the frames posted their checks");
    let result: serde_json::Value = serde_json::from_str(&result.replace("&quot;", "\"")).unwrap();
    let views = result.as_array().unwrap();
    let mut widths: Vec<i64> = views.iter().map(|v| v["width"].as_i64().unwrap()).collect();
    widths.sort();
    assert_eq!(widths, [390, 1400], "the two viewports");
    for v in views {
        let w = v["width"].as_i64().unwrap();
        assert!(v["scroll"].as_i64().unwrap() <= w, "at {w} px the page scrolls sideways: {}", v["scroll"]);
        let figures = v["figures"].as_array().unwrap();
        assert!(figures.len() >= 9, "a plot per family: {}", figures.len());
        for f in figures {
            assert!(f["width"].as_f64().unwrap() > 0.0 && f["height"].as_f64().unwrap() > 0.0, "at {w} px: {f}");
            assert!(f["drawn"].as_i64().unwrap() >= f["want"].as_i64().unwrap(), "at {w} px, a mark per variant: {f}");
        }
        // The L2 sweep, the alignment study, host transfers, NCCL and peer copies.
        let curves = v["curves"].as_array().unwrap();
        assert!(curves.len() >= 4, "{} curve plots", curves.len());
        for c in curves {
            assert!(c["width"].as_f64().unwrap() > 0.0 && c["points"].as_i64().unwrap() >= 4, "at {w} px: {c}");
        }
    }
}
