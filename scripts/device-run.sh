#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried
# (`cargo make device-bundle`). Each argument is one step:
#   test-gpu [filter]   the GPU tests (the two-GPU ones where two GPUs are seen)
#   sass [filter]       the architectures and Tensor Core instructions of the bundled fatbins (cuobjdump)
#   gate                `bench --quick` into a scratch folder, then `compare` with the committed runs
#                       of this GPU model: fails on an entry slower beyond the threshold
#   sanitize            compute-sanitizer memcheck and racecheck over every variant at a small odd
#                       shape per family (in one process, as the sanitizer needs), on GPU
#                       $SANITIZE_GPU (default 0)
#   nvrtc ARGS          the bundle's sm_120-only CLI (`bundle.sh nvrtc`)
#   anything else       the arguments of a `kernel-lab` subcommand ("bench memory", "verify --fuzz 200")
# Steps run in order, each under `timeout STEP_LIMIT` (default 300 s), so a slow step cannot cost
# the results of the others. Everything goes to $OUT: run.log (all output), devices.txt and
# results.tgz, the results folder (packed after every step: $OUT takes few files).
#   scripts/device-run.sh test-gpu "verify sgemm --suite square,odd" "bench transpose"
set -uo pipefail
OUT=${OUT:-/tmp/kernel-lab-out}
limit=${STEP_LIMIT:-300}
mkdir -p "$OUT"
dist/kernel-lab devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current \
    --format=csv 2>&1 | tee -a "$OUT/devices.txt"
# One small shape per family, off every tile and vector width, for the sanitizer.
sanitize() {
    local status=0
    for fs in memory:4100 l2:4112 reduce:4100 transpose:67x129 sgemm:67x45x33 tensor:67x45x33 tf32:67x45x33 int8:67x45x33 peak:300; do
        for tool in memcheck racecheck; do
            echo "--- compute-sanitizer --tool $tool: ${fs%%:*} at ${fs#*:}"
            compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
                dist/kernel-lab verify "${fs%%:*}" --size "${fs#*:}" --in-process --seed 1 --gpu "${SANITIZE_GPU:-0}" 2>&1 |
                grep -v "^verifying\|seed 0x" | tail -n 6
            [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
        done
    done
    return $status
}
status=0
for step in "$@"; do
    echo "=== $step ($(date -u +%H:%M:%S))" | tee -a "$OUT/run.log"
    case "$step" in
    test-gpu*)  # "test-gpu two_gpus" passes a name filter on to the test binary
        read -ra words <<<"$step" && cmd=(dist/test-gpu --include-ignored --test-threads 1 "${words[@]:1}")
        if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then
            echo "NOTICE: one GPU: the two-GPU tests are SKIPPED" | tee -a "$OUT/run.log"
            cmd+=(--skip two_gpus)
        fi
        ;;
    sass*)  # "sass peak_02" looks at the fatbins whose names hold peak_02 only
        cmd=(bash -c 'for f in dist/kernels/*"$0"*.fatbin; do
            echo "$f: $(cuobjdump --list-elf "$f" | grep -o "sm_[0-9]*a*" | sort -u | tr "\n" " ")"
            cuobjdump -sass "$f" | grep -oE "[HIQ]GMMA\.[^ ]*|[HIDQ]MMA\.[^ ]*" | sort | uniq -c
        done' "$(echo ${step#sass})")
        ;;
    sanitize) cmd=(bash -c "$(declare -f sanitize); sanitize") ;;
    gate)
        cmd=(bash -c 'd=$(mktemp -d); dist/kernel-lab bench --quick --results-dir "$d" > "$d.log" 2>&1 || { tail -n 20 "$d.log"; exit 1; }
            tail -n 3 "$d.log"; m=$(ls "$d"); dist/kernel-lab compare "results/$m" "$d/$m"')
        ;;
    nvrtc\ *) read -ra words <<<"${step#nvrtc }" && cmd=(dist/nvrtc/kernel-lab "${words[@]}") ;;
    *) read -ra words <<<"$step" && cmd=(dist/kernel-lab "${words[@]}") ;;
    esac
    timeout "$limit" "${cmd[@]}" 2>&1 | tee -a "$OUT/run.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -ne 0 ] && status=$rc && echo "=== exit $rc: $step" | tee -a "$OUT/run.log"
    [ -d results ] && tar czf "$OUT/results.tgz" results
done
echo "=== device-run done ($(date -u +%H:%M:%S)), last failing exit: $status" | tee -a "$OUT/run.log"
