#!/usr/bin/env bash
# Builds the release binaries a GPU machine without cargo needs into dist/ (git-ignored):
# the CLI, the criterion bench and the GPU test binary. Copy dist/ there and run them as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist && mkdir -p dist
cargo build --release --bin kernel-lab
cp target/release/kernel-lab dist/
# The Tensor Core fatbins themselves, for cuobjdump -sass on the GPU machine.
out=$(cargo build --release --bin kernel-lab --message-format=json 2>/dev/null |
    grep '"reason":"build-script-executed"' | grep -o '"out_dir":"[^"]*kernel-lab-[^"]*"' | cut -d'"' -f4)
mkdir -p dist/fatbin && cp "$out"/kernels/{tensor,tf32,int8,peak}_*.fatbin dist/fatbin/
exe() { # prints the executable cargo built for the named target
    grep -o '"executable":"[^"]*"' | grep "/$1-" | head -n 1 | cut -d'"' -f4
}
cp "$(cargo bench --no-run --message-format=json 2>/dev/null | exe kernels)" dist/bench-kernels
cp "$(cargo test --release --no-run --message-format=json 2>/dev/null | exe gpu)" dist/test-gpu
strip dist/kernel-lab dist/bench-kernels dist/test-gpu  # the carry to a GPU machine is capped (64 MiB)
ls -la dist
