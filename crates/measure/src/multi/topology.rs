//! How the GPUs of a machine are linked: NVML's NVLink count (through NVSwitch fabrics too) or
//! PCIe distance, in `nvidia-smi topo -m`'s words, and whether peer access is possible.

use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::schema::multi::Link;

/// The GPU-to-GPU part of `nvidia-smi topo -m`'s matrix: one row per GPU, one label per GPU.
pub fn parse_topo_matrix(text: &str) -> std::result::Result<Vec<Vec<String>>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("empty topology")?;
    let gpus = header.split_whitespace().take_while(|c| c.starts_with("GPU")).count();
    if gpus == 0 {
        return Err(format!("no GPU columns in '{}'", header.trim()));
    }
    let rows: Vec<Vec<String>> =
        lines.filter(|l| l.starts_with("GPU")).map(|l| l.split_whitespace().skip(1).take(gpus).map(str::to_string).collect()).collect();
    if rows.len() != gpus || rows.iter().any(|r| r.len() != gpus) {
        return Err(format!("a {gpus}-GPU header but {} complete GPU rows", rows.len()));
    }
    Ok(rows)
}

/// A PCI bus id as NVML writes it ("00000000:1B:00.0", or a 4-digit domain), made comparable.
pub fn pci_key(bus_id: &str) -> String {
    let id = bus_id.trim().to_ascii_lowercase();
    match id.split_once(':') {
        Some((domain, rest)) => format!("{:x}:{rest}", u32::from_str_radix(domain, 16).unwrap_or(0)),
        None => id,
    }
}

/// NVLinks between GPUs i and j of a run, from the PCI bus ids at the far end of each one's
/// active links (`remotes`), the run's GPUs' own ids (`buses`) and those of every GPU of the
/// machine (`machine`): links straight to j, else (on an NVSwitch fabric, as on HGX boards,
/// where `nvidia-smi topo -m` also says NV18) the links both have to something that is not a
/// GPU, the fewer of the two.
pub fn nvlinks_between(remotes: &[Vec<String>], buses: &[String], machine: &[String], i: usize, j: usize) -> u32 {
    let direct = remotes[i].iter().filter(|r| **r == buses[j]).count() as u32;
    if direct > 0 {
        return direct;
    }
    let to_switch = |g: usize| remotes[g].iter().filter(|r| !machine.contains(r)).count() as u32;
    to_switch(i).min(to_switch(j))
}

pub fn nvml_links(gpus: &[Gpu]) -> Vec<Vec<Link>> {
    use nvml_wrapper::enum_wrappers::device::TopologyLevel;
    let Ok(nvml) = nvml_wrapper::Nvml::init() else {
        return vec![vec![Link::Unknown; gpus.len()]; gpus.len()];
    };
    let devs: Vec<_> = gpus.iter().map(|g| nvml.device_by_index(g.info.ordinal as u32).ok()).collect();
    // Every GPU of the machine, so a link to one the run does not use is not taken for a switch.
    let all: Vec<String> = (0..nvml.device_count().unwrap_or(0))
        .filter_map(|i| nvml.device_by_index(i).ok()?.pci_info().ok().map(|p| pci_key(&p.bus_id)))
        .collect();
    let buses: Vec<String> =
        devs.iter().map(|d| d.as_ref().and_then(|d| d.pci_info().ok()).map(|p| pci_key(&p.bus_id)).unwrap_or_default()).collect();
    let remotes: Vec<Vec<String>> = devs
        .iter()
        .map(|d| {
            let Some(d) = d else { return Vec::new() };
            (0..18u32)
                .filter_map(|l| {
                    let link = d.link_wrapper_for(l);
                    link.is_active().unwrap_or(false).then(|| link.remote_pci_info().ok().map(|p| pci_key(&p.bus_id)))?
                })
                .collect()
        })
        .collect();
    (0..gpus.len())
        .map(|i| {
            (0..gpus.len())
                .map(|j| {
                    if i == j {
                        return Link::Same;
                    }
                    let (Some(a), Ok(b)) = (devs[i].as_ref(), nvml.device_by_index(gpus[j].info.ordinal as u32)) else {
                        return Link::Unknown;
                    };
                    let nvlinks = nvlinks_between(&remotes, &buses, &all, i, j);
                    let level = a.topology_common_ancestor(b).ok().map(|t| match t {
                        TopologyLevel::Internal => "internal",
                        TopologyLevel::Single => "single",
                        TopologyLevel::Multiple => "multiple",
                        TopologyLevel::HostBridge => "hostbridge",
                        TopologyLevel::Node => "node",
                        TopologyLevel::System => "system",
                    });
                    Link::classify(nvlinks, level)
                })
                .collect()
        })
        .collect()
}

/// Whether each GPU can map each other's memory (a GPU "can" its own).
pub fn peer_matrix(gpus: &[Gpu]) -> Vec<Vec<bool>> {
    let n = gpus.len();
    (0..n).map(|i| (0..n).map(|j| i == j || driver::can_access_peer(&gpus[i].ctx, &gpus[j].ctx)).collect()).collect()
}
