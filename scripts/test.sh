#!/usr/bin/env bash
# The test command. GPU tests are #[ignore]d with the reason "needs a GPU": without one, cargo
# lists them as ignored (never passed); with one (nvidia-smi lists a GPU), they run too.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "test: GPU found, running the GPU tests too"
    cargo test --release -- --include-ignored
else
    echo "test: NOTICE: no GPU on this machine: the GPU tests are SKIPPED (listed as ignored below)"
    cargo test --release
fi
