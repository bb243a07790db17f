#!/usr/bin/env bash
# Builds the release binaries a GPU machine without cargo needs into dist/ (git-ignored):
# the CLI, the criterion bench and the GPU test binary. Copy dist/ there and run them as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist && mkdir -p dist
cargo build --release --bin kernel-lab
cp target/release/kernel-lab dist/
exe() { # prints the executable cargo built for the named target
    grep -o '"executable":"[^"]*"' | grep "/$1-" | head -n 1 | cut -d'"' -f4
}
cp "$(cargo bench --no-run --message-format=json 2>/dev/null | exe kernels)" dist/bench-kernels
cp "$(cargo test --release --no-run --message-format=json 2>/dev/null | exe gpu)" dist/test-gpu
ls -la dist
