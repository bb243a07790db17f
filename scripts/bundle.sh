#!/usr/bin/env bash
# Builds what a GPU machine without cargo needs into dist/ (git-ignored): the CLI, its kernel set
# (dist/kernels: fatbins and kernels.json, which the CLI finds beside itself), the test-only set
# (dist/kernels-test) and the GPU test binary. The carry to a GPU machine is capped at 64 MiB, so
# the rest is asked for by name:
#   criterion  dist/bench-kernels, the criterion bench
#   nvrtc      dist/nvrtc/kernel-lab with a kernel set of sm_120 only, so on any older GPU every
#              variant takes the run-time NVRTC path (the fallback for an architecture the build
#              lacks), built in its own target folder
#   base:REV   dist/base: the CLI and kernel set of commit REV (same architectures), built in a
#              worktree under target/base, for the device run's `ab` step
#   scripts/bundle.sh nvrtc
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist && mkdir -p dist
# The kernel sets, without nvcc's stamps and ptxas reports (kernels.json carries the resources).
sets() {
    local from=$1 to=$2
    for set in kernels kernels-test; do
        mkdir -p "$to/$set"
        cp "$from/$set/kernels.json" "$to/$set/"
        cp "$from/$set/"*.fatbin "$to/$set/" 2>/dev/null || true
    done
}
cargo build --release
cp target/release/kernel-lab dist/
sets target dist
exe() { # prints the executable cargo built for the named target
    grep -o '"executable":"[^"]*"' | grep "/$1-" | head -n 1 | cut -d'"' -f4
}
cp "$(cargo test --release --no-run --message-format=json 2>/dev/null | exe gpu)" dist/test-gpu
for part in "$@"; do
    case "$part" in
    criterion) cp "$(cargo bench --no-run --message-format=json 2>/dev/null | exe kernels)" dist/bench-kernels ;;
    nvrtc)
        KERNEL_LAB_ARCHS=sm_120 cargo build --release --target-dir target/nvrtc
        mkdir -p dist/nvrtc && cp target/nvrtc/release/kernel-lab dist/nvrtc/
        sets target/nvrtc dist/nvrtc
        ;;
    base:*)
        tree=target/base/tree && rm -rf "$tree" && git worktree prune
        git worktree add -f --detach "$tree" "${part#base:}" >/dev/null
        # The base tree's build finds nvcc where this one's setup put it.
        (cd "$tree" && NVCC=${NVCC:-$(realpath ../../../.toolkit/nvidia/cu13/bin/nvcc)} CARGO_TARGET_DIR=../target cargo build --release)
        mkdir -p dist/base && cp target/base/target/release/kernel-lab dist/base/
        sets target/base/target dist/base && rm -rf dist/base/kernels-test
        git worktree remove --force "$tree"
        ;;
    *) echo "bundle.sh: unknown part '$part' (criterion, nvrtc, base:REV)" >&2 && exit 2 ;;
    esac
done
find dist -type f -perm -u+x -exec strip {} +
du -sh dist && find dist -type f -perm -u+x | xargs ls -la
