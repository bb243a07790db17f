//! Registers, shared memory and spills per kernel per architecture, read from ptxas's `-v` report.

/// One kernel compiled for one architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub registers: u32,
    pub smem_bytes: u32,
    pub stack_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
}

/// Parses the lines ptxas prints under `-Xptxas -v`:
/// `Compiling entry function 'f' for 'sm_90a'`, then `N bytes stack frame, N bytes spill stores,
/// N bytes spill loads`, then `Used N registers, ..., N bytes smem, ...`.
/// Returns (function, target, usage) in the order compiled.
pub fn parse_ptxas(report: &str) -> Vec<(String, String, Usage)> {
    let mut out: Vec<(String, String, Usage)> = Vec::new();
    for line in report.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let mut parts = rest.split('\'');
            let func = parts.next().unwrap_or_default().to_string();
            let target = parts.nth(1).unwrap_or_default().to_string();
            out.push((func, target, Usage::default()));
            continue;
        }
        let Some((_, _, usage)) = out.last_mut() else { continue };
        if line.contains("bytes stack frame") {
            usage.stack_bytes = number_before(line, "bytes stack frame");
            usage.spill_stores = number_before(line, "bytes spill stores");
            usage.spill_loads = number_before(line, "bytes spill loads");
        } else if line.contains("Used ") && line.contains(" registers") {
            usage.registers = number_before(line, "registers");
            usage.smem_bytes = number_before(line, "bytes smem");
        }
    }
    out
}

/// The integer written just before `label` in `line`, or 0 when the label is absent.
fn number_before(line: &str, label: &str) -> u32 {
    let Some(pos) = line.find(label) else { return 0 };
    line[..pos].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty()).and_then(|s| s.parse().ok()).unwrap_or(0)
}
