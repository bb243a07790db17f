#!/usr/bin/env python3
"""sass-diff.py: proves a change left the kernels' machine code alone, by dumping and comparing SASS.

    scripts/sass-diff.py dump KERNELS_DIR OUT_DIR   # one text file per (variant, architecture)
    scripts/sass-diff.py compare DIR_A DIR_B        # "N pairs identical, M differ"; exit 1 if any differ

`dump` disassembles every fatbin that KERNELS_DIR/kernels.json lists (target/kernels, or
target/kernels-test, whose shared fatbins in ../kernels are left to that set's own dump) with
`cuobjdump -sass`, one architecture at a time, into OUT_DIR/<variant>.<sm_NN>.sass; a
compute_NN target (PTX the driver compiles for newer GPUs) goes to <variant>.<compute_NN>.ptx.
What names the source file or a place in it is dropped (the `identifier =` line, the /*0000*/
offsets, PTX's .file and .loc lines: the build passes --generate-line-info), so a tree at another
path or a comment that moves code down a line compares equal; every instruction and its encoding
stays, so any change to the code does not. `compare` reads either side's variants renamed since
(csrc/renames.toml) under their new names, in file names and symbols alike, so a rename that
left the code alone compares equal.
Needs no GPU. cuobjdump and nvdisasm come from CUOBJDUMP / NVDISASM, PATH, the toolkit
scripts/setup.sh installs, or .toolkit/sass; where none has them, this installs the wheels there
(python3 -m pip install --no-deps --target .toolkit/sass nvidia-cuda-cuobjdump==13.2.78
nvidia-cuda-nvdisasm==13.2.78). Exit codes: 0 done (or identical), 1 pairs differ, 2 bad usage or
a missing or unreadable kernel set, 3 the tools cannot be found or installed.
"""
import concurrent.futures, json, os, re, shutil, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TK = os.path.join(ROOT, ".toolkit", "nvidia", "cu13", "bin")
SASS_DIR = os.path.join(ROOT, ".toolkit", "sass")
SASS_BIN = os.path.join(SASS_DIR, "nvidia", "cu13", "bin")
WHEELS = ["nvidia-cuda-cuobjdump==13.2.78", "nvidia-cuda-nvdisasm==13.2.78"]


def fail(msg, code=2):
    print(f"sass-diff: {msg}", file=sys.stderr)
    sys.exit(code)


def find(name, env_var):
    for p in (os.environ.get(env_var), shutil.which(name), os.path.join(TK, name), os.path.join(SASS_BIN, name)):
        if p and os.access(p, os.X_OK):
            return p
    return None


def tools():
    """cuobjdump, and an environment whose PATH holds nvdisasm (cuobjdump -sass calls it)."""
    if find("cuobjdump", "CUOBJDUMP") is None or find("nvdisasm", "NVDISASM") is None:
        print(f"sass-diff: installing {' '.join(WHEELS)} into {SASS_DIR}", file=sys.stderr)
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", SASS_DIR, *WHEELS],
                           capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["pip failed"])[-1]
            fail(f"cuobjdump/nvdisasm not found and pip could not install them: {last}", 3)
    cuobjdump, nvdisasm = find("cuobjdump", "CUOBJDUMP"), find("nvdisasm", "NVDISASM")
    if cuobjdump is None or nvdisasm is None:
        fail("cuobjdump/nvdisasm not found: set CUOBJDUMP and NVDISASM, or see this script's header", 3)
    return cuobjdump, dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))


ADDRESS = re.compile(r"^(\s*)/\*[0-9a-f]{4,}\*/")


DROPPED = ("identifier =", ".loc\t", ".loc ", ".file\t", ".file ")


def normalise(text):
    """cuobjdump's text less what names a path, a source line or an offset: the lines that only
    carry them go, the offsets in front of instructions are cut; trailing blanks and blank lines
    go too."""
    out = []
    for line in text.splitlines():
        if line.strip().startswith(DROPPED):
            continue
        line = ADDRESS.sub(r"\1", line).rstrip()
        if line:
            out.append(line)
    return "\n".join(out) + "\n"


def dump_one(cuobjdump, env, fatbin, arch):
    """The normalised SASS of `fatbin` for sm_NN(a), or for compute_NN its PTX (cuobjdump selects
    PTX by sm_NN and prints the matching ELF's header too, which is left out)."""
    ptx = arch.startswith("compute_")
    cmd = [cuobjdump, "-ptx", "-arch", arch.replace("compute_", "sm_")] if ptx else [cuobjdump, "-sass", "-arch", arch]
    r = subprocess.run([*cmd, fatbin], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:])} {fatbin}: {(r.stderr.strip().splitlines() or ['failed'])[0]}")
    if ptx:
        parts = re.split(r"^(?=Fatbin (?:elf|ptx) code:)", r.stdout, flags=re.M)
        text = "".join(s for s in parts if s.startswith("Fatbin ptx code:"))
    else:
        text = r.stdout
    text = normalise(text)
    if (".entry" if ptx else "Function :") not in text:
        raise RuntimeError(f"{fatbin} holds no {'PTX' if ptx else 'SASS'} for {arch}")
    return text


def dump(kernels, out):
    try:
        built = json.load(open(os.path.join(kernels, "kernels.json")))
        variants = built["variants"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{kernels}/kernels.json unreadable ({e}): build first (cargo build --release)")
    jobs, shared = [], 0
    for v in variants:
        rel = v["fatbin"]
        if rel.startswith("..") or os.path.isabs(rel):
            shared += 1  # another set's fatbin (kernels-test reuses ../kernels): dumped with that set
            continue
        for arch in v["targets"]:
            jobs.append((v["name"], arch, os.path.join(kernels, rel)))
    if not jobs:
        fail(f"{kernels}/kernels.json lists no fatbin of its own")
    cuobjdump, env = tools()
    os.makedirs(out, exist_ok=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = {pool.submit(dump_one, cuobjdump, env, f, a): (n, a) for n, a, f in jobs}
        for fut in concurrent.futures.as_completed(results):
            name, arch = results[fut]
            try:
                text = fut.result()
            except RuntimeError as e:
                failed += 1
                print(f"sass-diff: {e}", file=sys.stderr)
                continue
            with open(os.path.join(out, f"{name}.{arch}.{'ptx' if arch.startswith('compute_') else 'sass'}"), "w") as f:
                f.write(text)
    note = f", {shared} variants' fatbins left to the set they live in" if shared else ""
    print(f"dumped {len(jobs) - failed} (variant, arch) pairs of {len(variants)} variants into {out}{note}")
    if failed:
        print(f"sass-diff: {failed} pairs could not be dumped", file=sys.stderr)
    return 2 if failed else 0


def renames():
    """csrc/renames.toml's variant names, old to new: entry symbols are file stems, which the
    table's names include."""
    import tomllib
    with open(os.path.join(ROOT, "csrc", "renames.toml"), "rb") as f:
        return tomllib.load(f)["variants"]


def compare(a, b):
    def listing(d):
        try:
            return {f for f in os.listdir(d) if f.endswith((".sass", ".ptx"))}
        except OSError as e:
            fail(f"{d}: {e.strerror}")
    table = renames()
    # A symbol as a whole identifier, or as the stem of PTX's parameter names (<symbol>_param_0).
    names = "|".join(map(re.escape, sorted(table, key=len, reverse=True)))
    word = re.compile(r"(?<![A-Za-z0-9_])(" + names + r")(?=_param_|[^A-Za-z0-9_]|$)", re.M) if table else None
    # A kernel's static shared arrays, whose mangled names hold the symbol and its length.
    mangled = re.compile(r"_ZZ(\d+)(" + names + r")E") if table else None
    # Either side may be a dump from before a rename: its files and symbols are read with the new
    # names, so a renamed kernel compares equal where only its name moved.
    def new_name(f):
        variant, rest = f.split(".", 1)
        return f"{table.get(variant, variant)}.{rest}"
    def read(d, original, f):
        text = open(os.path.join(d, original)).read()
        if word and original != f:
            text = mangled.sub(lambda m: f"_ZZ{len(table[m.group(2)])}{table[m.group(2)]}E", text)
            text = word.sub(lambda m: table[m.group(1)], text)
        return text
    raw_a, raw_b = listing(a), listing(b)
    new_a, new_b = {new_name(f): f for f in raw_a}, {new_name(f): f for f in raw_b}
    la, lb = set(new_a), set(new_b)
    renamed = sum(1 for f in raw_a | raw_b if new_name(f) != f)
    if not la and not lb:
        fail(f"neither {a} nor {b} holds a dump (.sass or .ptx files)")
    same, differ = 0, []
    for f in sorted(la & lb):
        if read(a, new_a[f], f) == read(b, new_b[f], f):
            same += 1
        else:
            differ.append(f)
    only_a, only_b = sorted(la - lb), sorted(lb - la)
    print(f"{same} pairs identical, {len(differ)} differ" + (f" ({renamed} dumps read under their new names)" if renamed else "")
          + (f", {len(only_a)} only in {a}, {len(only_b)} only in {b}" if only_a or only_b else ""))
    for f in differ:
        print(f"  differs: {f.rsplit('.', 1)[0]}")
    for f in only_a:
        print(f"  only in {a}: {f.rsplit('.', 1)[0]}")
    for f in only_b:
        print(f"  only in {b}: {f.rsplit('.', 1)[0]}")
    return 1 if differ or only_a or only_b else 0


def main(argv):
    if len(argv) != 3 or argv[0] not in ("dump", "compare"):
        fail("usage: sass-diff.py dump KERNELS_DIR OUT_DIR | compare DIR_A DIR_B")
    return dump(argv[1], argv[2]) if argv[0] == "dump" else compare(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
