#!/usr/bin/env bash
# Builds the release binaries a GPU machine without cargo needs into dist/ (git-ignored): the CLI,
# the GPU test binary and the Tensor Core and peak fatbins (for cuobjdump there). The carry to a GPU
# machine is capped at 64 MiB, so the rest is asked for by name:
#   criterion  dist/bench-kernels, the criterion bench
#   nvrtc      dist/nvrtc/kernel-lab, a CLI whose fatbins hold only sm_120, so on any older GPU
#              every variant takes the run-time NVRTC path (the fallback for an architecture the
#              build lacks), in its own target folder
#   scripts/bundle.sh nvrtc
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist && mkdir -p dist/fatbin
cargo build --release --bin kernel-lab
cp target/release/kernel-lab dist/
out=$(cargo build --release --bin kernel-lab --message-format=json 2>/dev/null |
    grep '"reason":"build-script-executed"' | grep -o '"out_dir":"[^"]*kernel-lab-[^"]*"' | cut -d'"' -f4)
cp "$out"/kernels/{tensor,tf32,int8,peak}_*.fatbin dist/fatbin/
exe() { # prints the executable cargo built for the named target
    grep -o '"executable":"[^"]*"' | grep "/$1-" | head -n 1 | cut -d'"' -f4
}
cp "$(cargo test --release --no-run --message-format=json 2>/dev/null | exe gpu)" dist/test-gpu
for part in "$@"; do
    case "$part" in
    criterion) cp "$(cargo bench --no-run --message-format=json 2>/dev/null | exe kernels)" dist/bench-kernels ;;
    nvrtc)
        KERNEL_LAB_ARCHS=sm_120 cargo build --release --bin kernel-lab --target-dir target/nvrtc
        mkdir -p dist/nvrtc && cp target/nvrtc/release/kernel-lab dist/nvrtc/
        ;;
    *) echo "bundle.sh: unknown part '$part' (criterion, nvrtc)" >&2 && exit 2 ;;
    esac
done
find dist -type f -perm -u+x -exec strip {} +
du -sh dist && find dist -type f -perm -u+x | xargs ls -la
