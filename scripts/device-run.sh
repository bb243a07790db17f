#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried
# (`cargo make device-bundle`). Logs and the results file go to $OUT (at most 8 files come back).
#   device-run.sh tune FAMILY [FILTER] BUDGET   the GPU tests, then a tuning search
#   device-run.sh bench FAMILY...                bench (which verifies first) each family in turn
#   device-run.sh transfers                      host <-> device transfers
#   device-run.sh all BUDGET FAMILY...           GPU tests, tune the copies, bench, transfers, criterion
set -uo pipefail
OUT=${OUT:-/tmp/kernel-lab-out}
mkdir -p "$OUT"
mode=${1:-all}
shift || true
dist/kernel-lab devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current \
    --format=csv 2>&1 | tee -a "$OUT/devices.txt"
bench() { for fam in "$@"; do dist/kernel-lab bench --markdown "$fam" 2>&1 | tee -a "$OUT/bench.log"; done; }
case "$mode" in
tune)
    dist/test-gpu --include-ignored 2>&1 | tee "$OUT/test-gpu.log"
    dist/kernel-lab tune "$@" 2>&1 | tee "$OUT/tune.log"
    ;;
bench) bench "$@" ;;
transfers) dist/kernel-lab transfers 2>&1 | tee "$OUT/transfers.log" ;;
all)
    budget=$1
    shift
    dist/test-gpu --include-ignored 2>&1 | tee "$OUT/test-gpu.log"
    dist/kernel-lab tune memory memory_03 --budget "$budget" 2>&1 | tee "$OUT/tune.log"
    bench "$@"
    dist/kernel-lab transfers 2>&1 | tee "$OUT/transfers.log"
    ;;
*) echo "device-run.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
cp results/*.json "$OUT/" 2>/dev/null
echo "device-run $mode done"
