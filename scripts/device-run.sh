#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried
# (`cargo make device-bundle`). Each argument is one step: `test-gpu [filter]`, `sass [filter]` (the architectures
# and the Tensor Core instructions in the bundled fatbins, by cuobjdump), the arguments of a
# `kernel-lab` subcommand ("tune sgemm sgemm_10 --budget 100", "bench memory", "transfers"), or
# those after "nvrtc " for the bundle's sm_120-only CLI (`bundle.sh nvrtc`).
# Steps run in order, each under `timeout STEP_LIMIT` (default 300 s), so a slow step cannot
# cost the results of the others. Everything goes to $OUT: run.log (all output), devices.txt and
# the results files, which are copied after every step.
#   scripts/device-run.sh test-gpu "verify sgemm --suite square,odd" "bench transpose"
set -uo pipefail
OUT=${OUT:-/tmp/kernel-lab-out}
limit=${STEP_LIMIT:-300}
mkdir -p "$OUT"
dist/kernel-lab devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current \
    --format=csv 2>&1 | tee -a "$OUT/devices.txt"
status=0
for step in "$@"; do
    echo "=== $step ($(date -u +%H:%M:%S))" | tee -a "$OUT/run.log"
    case "$step" in
    test-gpu*)  # "test-gpu two_gpus" passes a name filter on to the test binary
        read -ra words <<<"$step" && cmd=(dist/test-gpu --include-ignored "${words[@]:1}")
        if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then
            echo "NOTICE: one GPU: the two-GPU tests are SKIPPED" | tee -a "$OUT/run.log"
            cmd+=(--skip two_gpus)
        fi
        ;;
    sass*)  # "sass peak_02" looks at the fatbins whose names hold peak_02 only
        cmd=(bash -c 'for f in dist/fatbin/*"$0"*.fatbin; do
            echo "$f: $(cuobjdump --list-elf "$f" | grep -o "sm_[0-9]*a*" | sort -u | tr "\n" " ")"
            cuobjdump -sass "$f" | grep -oE "[HIQ]GMMA\.[^ ]*|[HIDQ]MMA\.[^ ]*" | sort | uniq -c
        done' "$(echo ${step#sass})")
        ;;
    nvrtc\ *) read -ra words <<<"${step#nvrtc }" && cmd=(dist/nvrtc/kernel-lab "${words[@]}") ;;
    *) read -ra words <<<"$step" && cmd=(dist/kernel-lab "${words[@]}") ;;
    esac
    timeout "$limit" "${cmd[@]}" 2>&1 | tee -a "$OUT/run.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -ne 0 ] && status=$rc && echo "=== exit $rc: $step" | tee -a "$OUT/run.log"
    cp results/*.json "$OUT/" 2>/dev/null
    for d in results/*/; do [ -n "$(ls "$d"*.json 2>/dev/null)" ] && mkdir -p "$OUT/$d" && cp "$d"*.json "$OUT/$d"; done
done
echo "=== device-run done ($(date -u +%H:%M:%S)), last failing exit: $status" | tee -a "$OUT/run.log"
