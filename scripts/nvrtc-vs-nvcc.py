#!/usr/bin/env python3
"""Does NVRTC make the build's code? For every manifest entry that runs on ARCH (default sm_90),
compiles the kernel with nvcc and the build's flags and with NVRTC and the tuner's options, both
to cubins, disassembles both with cuobjdump and compares them instruction by instruction. Needs
no GPU; needs the toolkit that scripts/setup.sh installs, and cuobjdump with nvdisasm (on PATH,
or: python3 -m pip install --no-deps --target .toolkit/sass nvidia-cuda-cuobjdump==13.2.78
nvidia-cuda-nvdisasm==13.2.78).

    scripts/nvrtc-vs-nvcc.py [--arch sm_90] [FILTER...]   # FILTER: part of an entry's name
"""
import argparse, ctypes, glob, os, re, shutil, subprocess, sys, tempfile, tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TK = os.path.join(ROOT, ".toolkit", "nvidia", "cu13")
SASS = os.path.join(ROOT, ".toolkit", "sass", "nvidia", "cu13", "bin")


def fail(msg):
    print(f"nvrtc-vs-nvcc: {msg}", file=sys.stderr)
    sys.exit(2)


def tool(name, env_var):
    for p in (os.environ.get(env_var), shutil.which(name), os.path.join(TK, "bin", name), os.path.join(SASS, name)):
        if p and os.access(p, os.X_OK):
            return p
    fail(f"{name} not found: set {env_var}, or see this script's header")


def runs_on(arch_req, sm):
    """The manifest's arch field ("sm_80+", "sm_90a", absent: every architecture) against sm."""
    if not arch_req:
        return True
    n = int(re.match(r"sm_(\d+)", arch_req).group(1))
    return sm >= n if arch_req.endswith("+") else sm == n


def nvrtc_cubin(lib, src, arch, options):
    prog = ctypes.c_void_p()
    text = open(src, "rb").read()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text, os.path.basename(src).encode(), 0, None, None):
        return None, "nvrtcCreateProgram failed"
    opts = ["-std=c++17", *options, f"-I{ROOT}/csrc/include", f"--gpu-architecture={arch}"]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    n = ctypes.c_size_t()
    if lib.nvrtcCompileProgram(prog, len(opts), arr):
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        return None, log.value.decode(errors="replace").strip().splitlines()[0]
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetCUBIN(prog, buf)
    return buf.raw, None


def instructions(cuobjdump, env, cubin):
    out = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True, env=env).stdout
    return [re.sub(r"\s+", " ", m.group(1)).strip() for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", out)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("filters", nargs="*")
    a = ap.parse_args()
    if not re.fullmatch(r"sm_\d+a?", a.arch):
        fail(f"--arch {a.arch}: expected sm_NN or sm_NNa")
    sm = int(re.match(r"sm_(\d+)", a.arch).group(1))
    nvcc, cuobjdump = tool("nvcc", "NVCC"), tool("cuobjdump", "CUOBJDUMP")
    env = dict(os.environ, PATH=os.path.dirname(tool("nvdisasm", "NVDISASM")) + os.pathsep + os.environ.get("PATH", ""))
    libdir = os.environ.get("NVRTC_LIB_DIR", os.path.join(TK, "lib"))
    try:
        for builtins in sorted(glob.glob(os.path.join(libdir, "libnvrtc-builtins.so.*"))):
            ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(os.path.join(libdir, "libnvrtc.so.13"))
    except OSError as e:
        fail(f"NVRTC 13 not loadable from {libdir} ({e}); set NVRTC_LIB_DIR or run scripts/setup.sh")
    same = differ = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for manifest in sorted(glob.glob(os.path.join(ROOT, "csrc", "*", "variants.toml"))):
            for v in tomllib.load(open(manifest, "rb")).get("variant", []):
                name = v.get("name", v["file"].removesuffix(".cu"))
                req = v.get("arch")
                if not runs_on(req, sm) or (a.filters and not any(f in name for f in a.filters)):
                    continue
                arch = f"sm_{sm}a" if req and req.endswith("a") else f"sm_{sm}"
                block = list(v.get("block", [1])) + [1, 1]
                defs = [f"-DBLOCK_{d}={n}" for d, n in zip("XYZ", block)] + [f"-D{k}={x}" for k, x in v.get("defines", {}).items()]
                src = os.path.join(os.path.dirname(manifest), v["file"])
                built = os.path.join(tmp, name + ".nvcc.cubin")
                r = subprocess.run([nvcc, "-cubin", "-O3", "-std=c++17", "-lineinfo", f"-I{ROOT}/csrc/include", *defs,
                                    f"-gencode=arch=compute_{arch[3:]},code={arch}", "-o", built, src], capture_output=True, text=True)
                cubin, err = nvrtc_cubin(lib, src, arch, defs)
                if r.returncode or cubin is None:
                    failed += 1
                    print(f"{name:48} failed: {err or r.stderr.strip().splitlines()[0]}")
                    continue
                rtc = os.path.join(tmp, name + ".nvrtc.cubin")
                open(rtc, "wb").write(cubin)
                n, t = instructions(cuobjdump, env, built), instructions(cuobjdump, env, rtc)
                same, differ = (same + 1, differ) if n == t else (same, differ + 1)
                print(f"{name:48} {'same' if n == t else 'DIFFERENT':9} nvcc {len(n):6}  NVRTC {len(t):6} instructions")
    print(f"{same} the same, {differ} different, {failed} failed to compile ({a.arch})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
