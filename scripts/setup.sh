#!/usr/bin/env bash
# Installs what the build needs and a fresh machine lacks: the pinned CUDA 13.0 toolkit (nvcc,
# from PyPI, into .toolkit/) when no nvcc is found, libclang for bindgen, Chromium and Slurm
# for the report's and the fleet's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

have_nvcc() {
    [ -n "${NVCC:-}" ] && [ -x "$NVCC" ] && return 0
    for d in "${CUDA_PATH:-}" "${CUDA_HOME:-}"; do
        [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && return 0
    done
    command -v nvcc >/dev/null 2>&1 && return 0
    [ -x .toolkit/nvidia/cu13/bin/nvcc ]
}

if have_nvcc; then
    echo "setup: nvcc found"
else
    echo "setup: no nvcc found; installing the pinned CUDA 13.0 toolkit from PyPI into .toolkit/"
    # One pip call: a second --target call would not merge into the existing nvidia/ folder.
    # nvvm is pinned too: unpinned, pip takes one that does not match nvcc 13.0. NVRTC is the
    # tuner's compiler; its tests use it without a GPU.
    python3 -m pip install --quiet --no-deps --target .toolkit \
        nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 \
        nvidia-nvvm==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-cuda-nvrtc==13.0.88
    .toolkit/nvidia/cu13/bin/nvcc --version | tail -n 2
fi

# NVRTC 12.9 compiles the variants declared for sm_70, which CUDA 13 dropped (crates/gpu/src/legacy.rs).
if [ -n "${KERNEL_LAB_NVRTC12:-}" ] || [ -e .toolkit/cu12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 ]; then
    echo "setup: NVRTC 12 found"
else
    echo "setup: installing NVRTC 12.9 from PyPI into .toolkit/cu12 (for sm_70)"
    python3 -m pip install --quiet --no-deps --target .toolkit/cu12 nvidia-cuda-nvrtc-cu12==12.9.86
fi

# bindgen loads libclang through clang-sys, which looks for libclang.so, libclang-*.so,
# libclang.so.* or libclang-*.so.* (never libclang-cpp*, a different library that Debian images
# often carry) in LIBCLANG_PATH alone when it is set, else in llvm-config's prefix, the loader
# paths and /usr/lib*, /usr/local/lib*. The check looks where and for what clang-sys looks.
have_libclang() {
    local dirs
    if [ -n "${LIBCLANG_PATH:-}" ]; then
        dirs=("$LIBCLANG_PATH")
    else
        dirs=()
        command -v llvm-config >/dev/null 2>&1 && dirs+=("$(llvm-config --prefix)/lib" "$(llvm-config --prefix)/lib64")
        IFS=: read -ra ld <<<"${LD_LIBRARY_PATH:-}:${LIBRARY_PATH:-}"
        dirs+=("${ld[@]}" /usr/local/llvm*/lib* /usr/local/lib*/*/* /usr/local/lib*/* /usr/local/lib* /usr/lib*/*/* /usr/lib*/* /usr/lib*)
    fi
    local d f
    for d in "${dirs[@]}"; do
        [ -n "$d" ] && [ -d "$d" ] || continue
        for f in "$d"/libclang.so "$d"/libclang-*.so "$d"/libclang.so.* "$d"/libclang-*.so.*; do
            [ -e "$f" ] && [[ "$(basename "$f")" != *-cpp.* ]] && echo "$f" && return 0
        done
    done
    return 1
}

if lib=$(have_libclang); then
    echo "setup: libclang found ($lib)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: no libclang where bindgen looks; installing libclang-dev"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-dev >/dev/null
    lib=$(have_libclang) || { echo "setup: libclang-dev installed, but bindgen still finds no libclang" >&2; exit 1; }
    echo "setup: libclang installed ($lib)"
else
    echo "setup: bindgen needs libclang (libclang.so or libclang-N.so): install libclang-dev (Debian/Ubuntu) or set LIBCLANG_PATH" >&2
    exit 1
fi

# Headless Chromium, for the test that opens the HTML report in a browser (tests/report.rs).
if browser=$(command -v chromium || command -v chromium-browser); then
    echo "setup: chromium found ($browser)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: no chromium; installing Debian's chromium (the report's browser test)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    echo "setup: chromium installed ($(command -v chromium))"
else
    echo "setup: the report's browser test needs chromium: install Debian's chromium package" >&2
    exit 1
fi

# A real single-node Slurm cluster for the fleet's test (tests/fleet.rs, `cargo make test-fleet`),
# which starts munged, slurmctld and slurmd itself under a temporary folder and stops them.
have_slurm() {
    local p
    for p in munged slurmctld slurmd sbatch; do
        command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || return 1
    done
}
if have_slurm; then
    echo "setup: Slurm and munge found"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: no Slurm; installing Debian's slurmctld, slurmd, slurm-client and munge (the fleet's test)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
    have_slurm || { echo "setup: Slurm installed, but munged, slurmctld, slurmd or sbatch is still missing" >&2; exit 1; }
    echo "setup: Slurm installed ($(sbatch --version 2>&1 | head -n 1))"
else
    echo "setup: the fleet's test needs Slurm: install Debian's slurmctld, slurmd, slurm-client and munge" >&2
    exit 1
fi
