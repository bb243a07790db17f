#!/usr/bin/env python3
"""Does NVRTC make the build's code? For every variant of the built kernel set
(target/kernels/kernels.json) that has code for ARCH (default sm_90), disassembles the build's own
fatbin (nvcc's code) and a cubin NVRTC makes of the same source with the tuner's options, and
compares them instruction by instruction. Needs no GPU; needs a build (`cargo build --release`),
the NVRTC that scripts/setup.sh installs, and cuobjdump with nvdisasm (on PATH, or:
python3 -m pip install --no-deps --target .toolkit/sass nvidia-cuda-cuobjdump==13.2.78
nvidia-cuda-nvdisasm==13.2.78).

    scripts/nvrtc-vs-nvcc.py [--arch sm_90] [FILTER...]   # FILTER: part of a variant's name
"""
import argparse, ctypes, glob, json, os, re, shutil, subprocess, sys, tempfile

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


def nvrtc_cubin(lib, src, arch, options):
    prog = ctypes.c_void_p()
    text = open(src, "rb").read()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), text, os.path.basename(src).encode(), 0, None, None):
        return None, "nvrtcCreateProgram failed"
    opts = ["-std=c++17", *options, f"-I{ROOT}/csrc/include", f"--gpu-architecture={arch}"]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    n = ctypes.c_size_t()
    try:
        if lib.nvrtcCompileProgram(prog, len(opts), arr):
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetProgramLog(prog, log)
            return None, log.value.decode(errors="replace").strip().splitlines()[0]
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetCUBIN(prog, buf)
        return buf.raw, None
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def instructions(cuobjdump, env, binary, arch):
    out = subprocess.run([cuobjdump, "-sass", "-arch", arch, binary], capture_output=True, text=True, check=True, env=env).stdout
    return [re.sub(r"\s+", " ", m.group(1)).strip() for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", out)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90", help="sm_NN (sm_NNa entries are taken at sm_NNa)")
    ap.add_argument("filters", nargs="*")
    a = ap.parse_args()
    if not re.fullmatch(r"sm_\d+a?", a.arch):
        fail(f"--arch {a.arch}: expected sm_NN or sm_NNa")
    kernels = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "kernels")
    try:
        built = json.load(open(os.path.join(kernels, "kernels.json")))
    except OSError:
        fail(f"no kernel set in {kernels}: build first (cargo build --release)")
    cuobjdump = tool("cuobjdump", "CUOBJDUMP")
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
        for v in built["variants"]:
            name = v["name"]
            arch = next((t for t in v["targets"] if t.removesuffix("a") == a.arch.removesuffix("a")), None)
            if arch is None or (a.filters and not any(f in name for f in a.filters)):
                continue
            # The tuner's defines (jit.rs: defines): the block, the manifest's, then the argument
            # struct the launch takes.
            defs = [f"-DBLOCK_{d}={n}" for d, n in zip("XYZ", v["block"])] + [f"-D{k}={x}" for k, x in v["defines"]]
            defs.append(f"-DLAB_ARGS={v['args']}")
            cubin, err = nvrtc_cubin(lib, os.path.join(ROOT, "csrc", v["file"]), arch, defs)
            if cubin is None:
                failed += 1
                print(f"{name:48} NVRTC failed: {err}")
                continue
            rtc = os.path.join(tmp, name + ".cubin")
            open(rtc, "wb").write(cubin)
            n = instructions(cuobjdump, env, os.path.join(kernels, v["fatbin"]), arch)
            t = instructions(cuobjdump, env, rtc, arch)
            same, differ = (same + 1, differ) if n == t else (same, differ + 1)
            print(f"{name:48} {'same' if n == t else 'DIFFERENT':9} nvcc {len(n):6}  NVRTC {len(t):6} instructions")
    if same + differ + failed == 0:
        fail(f"no variant{' matching ' + ','.join(a.filters) if a.filters else ''} has code for {a.arch} in {kernels} (built for {', '.join(built['archs'])})")
    print(f"{same} the same, {differ} different, {failed} failed to compile ({a.arch})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
