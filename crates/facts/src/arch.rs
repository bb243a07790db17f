//! The lab's architecture table (Volta .. Blackwell) and the choice of nvcc targets.
//! Per-SM figures come from the CUDA C Programming Guide's "Compute Capabilities" tables.

/// One architecture the lab builds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// Compute capability times ten: 70, 75, 80, ...
    pub sm: u32,
    pub family: &'static str,
    /// fp32 FMA lanes per SM: one FMA is two FLOPs.
    pub fp32_lanes_per_sm: u32,
    /// Largest shared memory one block may opt in to, bytes.
    pub smem_per_block_optin: u32,
    pub smem_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub regs_per_sm: u32,
    /// cp.async (global to shared without registers), sm_80 and later.
    pub cp_async: bool,
}

const KB: u32 = 1024;

/// Oldest first. `sm` values are unique and ascending (tested).
pub const ARCHS: &[Arch] = &[
    Arch {
        sm: 70,
        family: "Volta",
        fp32_lanes_per_sm: 64,
        smem_per_block_optin: 96 * KB,
        smem_per_sm: 96 * KB,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        cp_async: false,
    },
    Arch {
        sm: 75,
        family: "Turing",
        fp32_lanes_per_sm: 64,
        smem_per_block_optin: 64 * KB,
        smem_per_sm: 64 * KB,
        max_threads_per_sm: 1024,
        regs_per_sm: 65536,
        cp_async: false,
    },
    Arch {
        sm: 80,
        family: "Ampere",
        fp32_lanes_per_sm: 64,
        smem_per_block_optin: 163 * KB,
        smem_per_sm: 164 * KB,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        cp_async: true,
    },
    Arch {
        sm: 86,
        family: "Ampere",
        fp32_lanes_per_sm: 128,
        smem_per_block_optin: 99 * KB,
        smem_per_sm: 100 * KB,
        max_threads_per_sm: 1536,
        regs_per_sm: 65536,
        cp_async: true,
    },
    Arch {
        sm: 89,
        family: "Ada",
        fp32_lanes_per_sm: 128,
        smem_per_block_optin: 99 * KB,
        smem_per_sm: 100 * KB,
        max_threads_per_sm: 1536,
        regs_per_sm: 65536,
        cp_async: true,
    },
    Arch {
        sm: 90,
        family: "Hopper",
        fp32_lanes_per_sm: 128,
        smem_per_block_optin: 227 * KB,
        smem_per_sm: 228 * KB,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        cp_async: true,
    },
    Arch {
        sm: 100,
        family: "Blackwell",
        fp32_lanes_per_sm: 128,
        smem_per_block_optin: 227 * KB,
        smem_per_sm: 228 * KB,
        max_threads_per_sm: 2048,
        regs_per_sm: 65536,
        cp_async: true,
    },
    Arch {
        sm: 120,
        family: "Blackwell",
        fp32_lanes_per_sm: 128,
        smem_per_block_optin: 99 * KB,
        smem_per_sm: 100 * KB,
        max_threads_per_sm: 1536,
        regs_per_sm: 65536,
        cp_async: true,
    },
];

impl Arch {
    pub fn name(&self) -> String {
        format!("sm_{}", self.sm)
    }
}

/// The table row for a device's compute capability: the exact row, else the newest row of the
/// same major version that is not newer (sm_87 uses sm_86's row).
pub fn lookup(major: u32, minor: u32) -> Option<&'static Arch> {
    let sm = major * 10 + minor;
    ARCHS.iter().rev().find(|a| a.sm / 10 == major && a.sm <= sm)
}

/// A compilation target: SASS for `sm`, optionally the arch-specific `a` flavour (sm_90a),
/// or PTX for `compute_XY` that the driver can JIT on newer GPUs. Stored by its name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Target {
    pub sm: u32,
    pub arch_specific: bool,
    pub ptx: bool,
}

impl Target {
    pub fn name(&self) -> String {
        let a = if self.arch_specific { "a" } else { "" };
        if self.ptx {
            format!("compute_{}{}", self.sm, a)
        } else {
            format!("sm_{}{}", self.sm, a)
        }
    }

    /// nvcc's `-gencode` value for this target.
    pub fn gencode(&self) -> String {
        let virtual_arch = Target { ptx: true, ..self.clone() };
        format!("arch={},code={}", virtual_arch.name(), self.name())
    }

    /// Whether a GPU of compute capability `sm` can run this target: SASS runs on the same major
    /// version at an equal or newer minor (arch-specific SASS only on its exact version); PTX is
    /// compiled by the driver for any newer GPU.
    pub fn runs_on(&self, sm: u32) -> bool {
        if self.arch_specific {
            return sm == self.sm;
        }
        if self.ptx {
            return sm >= self.sm;
        }
        sm / 10 == self.sm / 10 && sm >= self.sm
    }

    /// Parses `sm_90`, `sm_90a`, `compute_120`.
    pub fn parse(s: &str) -> Option<Target> {
        let (ptx, rest) = if let Some(r) = s.strip_prefix("sm_") { (false, r) } else { (true, s.strip_prefix("compute_")?) };
        let (digits, arch_specific) = match rest.strip_suffix('a') {
            Some(d) => (d, true),
            None => (rest, false),
        };
        let sm = digits.parse().ok()?;
        Some(Target { sm, arch_specific, ptx })
    }
}

/// What a variant needs of the architecture, from its manifest's `arch` field:
/// `sm_80+` (this or newer), or `sm_90a` (exactly this arch-specific target). Stored as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ArchReq {
    AtLeast(u32),
    Exact { sm: u32, arch_specific: bool },
}

impl ArchReq {
    pub fn parse(s: &str) -> Result<ArchReq, String> {
        let bad = || format!("arch requirement '{s}' is not of the form sm_XY+ or sm_XYa");
        if let Some(min) = s.strip_suffix('+') {
            let t = Target::parse(min).ok_or_else(bad)?;
            if t.ptx || t.arch_specific {
                return Err(bad());
            }
            return Ok(ArchReq::AtLeast(t.sm));
        }
        let t = Target::parse(s).ok_or_else(bad)?;
        if t.ptx {
            return Err(bad());
        }
        Ok(ArchReq::Exact { sm: t.sm, arch_specific: t.arch_specific })
    }

    pub fn admits(&self, sm: u32) -> bool {
        match *self {
            ArchReq::AtLeast(min) => sm >= min,
            ArchReq::Exact { sm: s, .. } => sm == s,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            ArchReq::AtLeast(min) => format!("sm_{min}+"),
            ArchReq::Exact { sm, arch_specific } => format!("sm_{sm}{}", if arch_specific { "a" } else { "" }),
        }
    }
}

impl From<Target> for String {
    fn from(t: Target) -> String {
        t.name()
    }
}

impl TryFrom<String> for Target {
    type Error = String;
    fn try_from(s: String) -> Result<Target, String> {
        Target::parse(&s).ok_or_else(|| format!("'{s}' is not sm_XY, sm_XYa or compute_XY"))
    }
}

impl From<ArchReq> for String {
    fn from(r: ArchReq) -> String {
        r.describe()
    }
}

impl TryFrom<String> for ArchReq {
    type Error = String;
    fn try_from(s: String) -> Result<ArchReq, String> {
        ArchReq::parse(&s)
    }
}

/// The architectures a build covers, and those left out with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchPlan {
    pub archs: Vec<u32>,
    pub skipped: Vec<(String, String)>,
}

/// Which table architectures to build: the lab's table (or the `KERNEL_LAB_ARCHS` override,
/// comma-separated `sm_XY`), less those the installed nvcc does not list in `--list-gpu-code`.
pub fn plan_archs(nvcc_supported: &[String], nvcc_version: &str, override_list: Option<&str>) -> Result<ArchPlan, String> {
    let wanted: Vec<u32> = match override_list.map(str::trim).filter(|s| !s.is_empty()) {
        None => ARCHS.iter().map(|a| a.sm).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for item in list.split(',').map(str::trim) {
                let t = Target::parse(item)
                    .filter(|t| !t.ptx && !t.arch_specific)
                    .ok_or_else(|| format!("KERNEL_LAB_ARCHS: '{item}' is not of the form sm_XY"))?;
                if !ARCHS.iter().any(|a| a.sm == t.sm) {
                    let known: Vec<String> = ARCHS.iter().map(Arch::name).collect();
                    return Err(format!("KERNEL_LAB_ARCHS: sm_{} is not in the lab's table ({})", t.sm, known.join(", ")));
                }
                v.push(t.sm);
            }
            v.sort_unstable();
            v.dedup();
            v
        }
    };
    let mut plan = ArchPlan { archs: Vec::new(), skipped: Vec::new() };
    for sm in wanted {
        if nvcc_supported.iter().any(|s| s == &format!("sm_{sm}")) {
            plan.archs.push(sm);
        } else {
            let why = if sm == 70 {
                format!("nvcc {nvcc_version} cannot build it (CUDA 13 dropped Volta; nvcc 12.x or NVRTC 12.9 can)")
            } else {
                format!("nvcc {nvcc_version} does not list it in --list-gpu-code")
            };
            plan.skipped.push((format!("sm_{sm}"), why));
        }
    }
    Ok(plan)
}

/// The targets of one variant: SASS for every planned arch its requirement admits, plus PTX for
/// the newest of them so newer GPUs can JIT it. An arch-specific requirement (sm_90a) gets that
/// SASS alone, since its PTX cannot run anywhere else.
pub fn variant_targets(plan: &ArchPlan, req: &ArchReq) -> Vec<Target> {
    if let ArchReq::Exact { sm, arch_specific: true } = *req {
        return if plan.archs.contains(&sm) { vec![Target { sm, arch_specific: true, ptx: false }] } else { Vec::new() };
    }
    let mut out: Vec<Target> =
        plan.archs.iter().filter(|&&sm| req.admits(sm)).map(|&sm| Target { sm, arch_specific: false, ptx: false }).collect();
    if let Some(newest) = out.last() {
        out.push(Target { sm: newest.sm, arch_specific: false, ptx: true });
    }
    out
}
