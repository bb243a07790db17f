#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried
# (`cargo make device-bundle`). Logs and the results file go to $OUT.
#   device-run.sh tune [SGEMM_BUDGET MEMORY_BUDGET]   the GPU tests, then tune sgemm and memory
#   device-run.sh verify [ARGS...]                    verify
#   device-run.sh bench [BENCH ARGS...]               bench (which verifies first), then criterion
set -uo pipefail
OUT=${OUT:-/tmp/kernel-lab-out}
mkdir -p "$OUT"
mode=${1:-bench}
shift || true
dist/kernel-lab devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current \
    --format=csv 2>&1 | tee -a "$OUT/devices.txt"
case "$mode" in
tune)
    dist/test-gpu --include-ignored 2>&1 | tee "$OUT/test-gpu.log"
    dist/kernel-lab tune sgemm --budget "${1:-240}" 2>&1 | tee "$OUT/tune-sgemm.log"
    dist/kernel-lab tune memory --budget "${2:-45}" 2>&1 | tee "$OUT/tune-memory.log"
    ;;
verify)
    dist/kernel-lab verify "$@" 2>&1 | tee "$OUT/verify.log"
    ;;
bench)
    dist/kernel-lab bench --markdown "$@" 2>&1 | tee "$OUT/bench.log"
    dist/bench-kernels --warm-up-time 0.2 --measurement-time 0.5 --sample-size 20 --noplot 2>&1 | tee "$OUT/criterion.log"
    ;;
*) echo "device-run.sh: unknown mode '$mode' (tune or bench)" >&2; exit 2 ;;
esac
cp results/*.json "$OUT/" 2>/dev/null
echo "device-run $mode done"
