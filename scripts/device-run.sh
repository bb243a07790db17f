#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried:
# devices, the GPU tests, verify, bench, then the results file and logs under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/kernel-lab-out}
mkdir -p "$OUT"
bench_args=("$@")
dist/kernel-lab devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current --format=csv 2>&1 | tee -a "$OUT/devices.txt"
dist/test-gpu --include-ignored 2>&1 | tee "$OUT/test-gpu.log"
dist/kernel-lab verify "${bench_args[@]}" 2>&1 | tee "$OUT/verify.log"
dist/kernel-lab bench --markdown "${bench_args[@]}" 2>&1 | tee "$OUT/bench.log"
cp results/*.json "$OUT/" 2>/dev/null
echo "device-run done"
