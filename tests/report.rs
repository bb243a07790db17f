//! The HTML report of the committed H200 runs, read for its structure: the contents first, then a
//! section per family with its verdict and its plot (a bar per measured variant at the plotted
//! shape) before its folded table, under 1 MB, every plot well-formed; and in a browser at a
//! phone's and a monitor's width: no sideways scroll, every bar drawn, a roofline whose labels
//! neither collide nor cover a point, with a distinct colour per family.

use std::process::Command;

#[test]
fn the_html_report_opens_on_its_contents_and_plots_every_family() {
    let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
        .args(["report", "--results-dir", "tests/data/nvidia-h200-sm_90", "--format", "html"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.len() < 1 << 20, "{} bytes", page.len());
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}"));
    // Contents first; then the families' verdicts and plots before any long table.
    assert!(at("<h2>Contents") < at("<h2 id=\"families\">") && at("<h2 id=\"families\">") < at("<h2 id=\"devices\">"));
    assert!(at("<h2 id=\"devices\">") < at("<h2 id=\"summary\">") && at("<h2 id=\"summary\">") < at("<h2 id=\"provenance\">"));
    assert!(at("<p class=\"verdict\">") < at("<figure class=\"ladder\"") && at("<figure class=\"ladder\"") < at("<table>"));
    let sections: Vec<&str> = page.split("<section id=\"family-").skip(1).map(|s| s.split("</section>").next().unwrap()).collect();
    let names: Vec<&str> = sections.iter().map(|s| s.split('"').next().unwrap()).collect();
    for family in ["sgemm", "fp16", "memory", "transpose", "reduce", "l2", "peak", "tf32", "int8"] {
        let i = names.iter().position(|n| *n == family).unwrap_or_else(|| panic!("no section for {family}: {names:?}"));
        let s = sections[i];
        assert!(s.contains("<svg") && s.contains("</svg>") && s.contains("<details>"), "{family}: a plot and a folded table");
        // The white background, then one bar per variant at the plotted shape.
        assert!(s.matches("<rect").count() >= 3, "{family}: {} rects", s.matches("<rect").count());
        assert!(page[at("<h2 id=\"summary\">")..].contains(&format!("<td>{family}</td>")), "{family} is in the summary");
        assert!(s.contains("<p class=\"verdict\">On "), "{family}: a verdict");
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
  // The roofline: no two texts overlap, no text covers a point, one distinct colour a family.
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  r.rooflines = [...document.querySelectorAll('figure.roofline svg')].map(svg => {
    const texts = [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect()).filter(b => b.width > 0);
    let overlaps = 0;
    texts.forEach((a, i) => texts.slice(i + 1).forEach(b => { if (hit(a, b)) overlaps++; }));
    const circles = [...svg.querySelectorAll('circle')];
    const covered = circles.filter(c => texts.some(t => hit(t, c.getBoundingClientRect()))).length;
    const legend = circles.filter(c => c.getAttribute('r') === '5').map(c => c.getAttribute('fill'));
    return { texts: texts.length, overlaps, covered, points: circles.length, legend, distinct: new Set(legend).size };
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
        .args(["report", "--results-dir", "tests/data/nvidia-h200-sm_90", "--format", "html"])
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
        let rooflines = v["rooflines"].as_array().unwrap();
        assert!(!rooflines.is_empty(), "at {w} px: no roofline");
        for r in rooflines {
            assert_eq!(r["overlaps"], 0, "at {w} px, roofline labels overlap: {r}");
            assert_eq!(r["covered"], 0, "at {w} px, a label or the legend covers a point: {r}");
            let legend = r["legend"].as_array().unwrap().len() as i64;
            assert!(legend >= 6 && r["distinct"].as_i64() == Some(legend), "at {w} px, a distinct colour per family: {r}");
            assert!(r["points"].as_i64().unwrap() > 100 && r["texts"].as_i64().unwrap() > 20, "at {w} px: {r}");
        }
        // The L2 sweep, the alignment study, host transfers, NCCL and peer copies.
        let curves = v["curves"].as_array().unwrap();
        assert!(curves.len() >= 4, "{} curve plots", curves.len());
        for c in curves {
            assert!(c["width"].as_f64().unwrap() > 0.0 && c["points"].as_i64().unwrap() >= 4, "at {w} px: {c}");
        }
    }
}
