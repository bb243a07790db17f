#!/usr/bin/env bash
# The test command, over the workspace (the facts crate's own tests too). GPU tests are #[ignore]d
# with the reason "needs a GPU" (or "needs two GPUs"): without a GPU, cargo lists them as ignored
# (never passed); with one (nvidia-smi lists a GPU), they run too (one at a time: they time the
# GPU), and the two-GPU tests where nvidia-smi lists two. The Slurm fleet test is #[ignore]d the
# same way: a GPU machine's --include-ignored run runs it, and it fails there if no cluster
# starts; elsewhere `cargo make test-fleet` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The criterion bench needs a GPU to run, but it must always compile.
cargo build --release --workspace --benches
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ "$gpus" -ge 2 ]; then
    echo "test: $gpus GPUs found, running the GPU, two-GPU and Slurm fleet tests too"
    cargo test --release --workspace -- --include-ignored --test-threads 1
elif [ "$gpus" -eq 1 ]; then
    echo "test: one GPU found, running the GPU and Slurm fleet tests too; NOTICE: the two-GPU tests are SKIPPED"
    cargo test --release --workspace -- --include-ignored --test-threads 1 --skip two_gpus
else
    echo "test: NOTICE: no GPU on this machine: the GPU tests are SKIPPED (listed as ignored below)"
    echo "test: NOTICE: the Slurm fleet test is SKIPPED here (listed as ignored); \`cargo make test-fleet\` runs it"
    cargo test --release --workspace
fi
