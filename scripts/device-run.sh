#!/usr/bin/env bash
# What one device-tool call runs on the GPU machine, from the repository root, with dist/ carried
# (`cargo make device-bundle`). Each argument is one step:
#   test-gpu [filter]   the GPU tests (the two-GPU ones where two GPUs are seen)
#   sass [filter]       the architectures, Tensor Core instructions, TMA loads (multicast or not) and
#                       cluster barriers of the bundled fatbins (cuobjdump)
#   gate                `bench --quick` into a scratch folder, then `compare` with the committed runs
#                       of this GPU model: fails on an entry slower beyond the threshold
#   sanitize [family..] compute-sanitizer memcheck and racecheck over every variant at a small odd
#                       shape per family (in one process, as the sanitizer needs), on GPU
#                       $SANITIZE_GPU (default 0); the families named, else all
#   ncu-check V:S ...   each variant V at size S: the burst regime's median against ncu's
#                       gpu__time_duration of `kernel-lab profile` (fails beyond 3%)
#   ncu-detail F S RE   Nsight Compute's throughput, pipe, shared-memory, warp-stall, launch and
#                       occupancy figures for the first four kernels whose names match RE in
#                       `verify F --size S`
#                       (the lab's rungs and the vendor library's kernels side by side)
#   noise R N V:S ...   N back-to-back runs of `bench V --size S` for each V:S in regime R, each
#                       run in its own folder, then `compare` of each run with the one before
#                       (fails on anything but SAME); the runs are packed into $OUT/noise-R.tgz
#   bert-step           a BERT-base encoder's training step timed with PyTorch
#                       (scripts/bert_step.py), then `advise --workload bert-base` on the
#                       committed results: the outside check of advise's prediction
#   torch-steps         BERT-base with its MLM head (batch 32 x 512) and ResNet-50 (batch 256),
#                       training and inference, timed with PyTorch (scripts/torch_step.py), one
#                       JSON line each into $OUT/torch-steps.jsonl
#   ab V:S[:BASE] ...  a change measured on one card: dist/base/kernel-lab (`bundle.sh base:REV`)
#                       and this bundle's CLI alternately, base then new, twice, `bench V --size S`
#                       each (BASE: the variant's name in the base build, where a rename changed
#                       it), then `compare` of each round's base with its new; packed into $OUT/ab.tgz
#   fleet-by-hand FILE  the fleet file's tasks run by hand, as Slurm would run its array: task i
#                       on GPU i mod (GPUs seen), the GPUs in parallel; then `fleet collect --by
#                       card`; the fleet's folder is packed into $OUT/fleet.tgz
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
# Small shapes per family ('+' between two), off every tile and vector width, for the sanitizer;
# the Tensor Core families' K is deep enough that a persistent rung splits its one tile over
# blocks (stream-K), and their second shape has 16-byte C rows (C through TMA stores); the third
# (fp16, tf32, int8) has the n and k the mma.sync rungs need (multiples of 16), and fp16's, bf16's
# and fp8's last has n of whole 64-column chunks (B's 3-D map) and 16-byte rows of K; sgemm's
# second splits its stream-K line's one tile of 98 k-steps into 98 pieces (the first, into 5).
sanitize() {
    local status=0 only=" $* " s sizes
    local shapes="memory:4100 l2:4112 reduce:4100 transpose:67x129 sgemm:67x45x33+67x45x777 fp16:67x45x777+67x44x777+67x48x784+67x128x784
        bf16:67x45x777+67x44x777+67x128x784 tf32:67x45x777+67x44x777+67x48x784 int8:67x45x777+67x44x777+67x48x784
        fp8:67x45x777+67x44x777+67x128x784 fp8_e5m2:67x45x777+67x44x777+67x128x784 linear_fp16:67x45x777+67x44x777+67x128x784
        linear_bf16:67x45x777+67x44x777+67x128x784 conv_fp16:3x23x19x3-17x7x7-s2+2x9x9x5-33x3x3-s3-p0+4x15x15x64-72x1x1-s2+2x9x9x16-24x3x3
        batchnorm_fp16:2x9x7x3+3x5x5x8+2x3x3x2056
        peak:300" f
    for f in "$@"; do
        [[ " $(sed 's/:[^ ]*//g' <<<"$shapes" | tr -s ' \n' ' ') " == *" $f "* ]] || { echo "sanitize: no family '$f' here (a renamed one? csrc/renames.toml)"; return 2; }
    done
    for fs in $shapes; do
        [ "$only" != "  " ] && [[ "$only" != *" ${fs%%:*} "* ]] && continue
        sizes=()
        for s in $(tr + " " <<<"${fs#*:}"); do sizes+=(--size "$s"); done
        for tool in memcheck racecheck; do
            echo "--- compute-sanitizer --tool $tool: ${fs%%:*} at ${fs#*:}"
            compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
                dist/kernel-lab verify "${fs%%:*}" "${sizes[@]}" --in-process --seed 1 --gpus "${SANITIZE_GPU:-0}" 2>&1 |
                grep -v "^verifying\|seed 0x" | tail -n 6
            [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
        done
    done
    return $status
}
# The burst regime's median of each VARIANT:SIZE against ncu's time of the same launches (ncu's
# own clock and cache control off and on, as the README says), the median over the profiled
# launches. Python reads the two files, a results run and ncu's CSV.
ncu_check() {
    local status=0 d v s lab ncu_ms
    d=$(mktemp -d)
    printf '%-30s %-16s %10s %10s %8s\n' variant size "lab ms" "ncu ms" change
    for vs in "$@"; do
        v=${vs%%:*} s=${vs#*:}
        dist/kernel-lab bench "$v" --size "$s" --regime burst --results-dir "$d/$v" >"$d/$v.log" 2>&1 || { tail -n 5 "$d/$v.log"; status=1; continue; }
        lab=$(python3 -c 'import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*/*.jsonl"):
    for line in open(f):
        r = json.loads(line)
        if r.get("record") == "entry" and r["variant"] == sys.argv[2] and r.get("timing"):
            print(r["timing"]["median"]["value"])' "$d/$v" "$v")
        ncu --clock-control none --cache-control all --nvtx --nvtx-include "$v/" --metrics gpu__time_duration.sum \
            --csv --print-units base dist/kernel-lab profile "$v" --size "$s" >"$d/$v.csv" 2>"$d/$v.err"
        ncu_ms=$(python3 -c 'import csv, statistics, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith("\""))]
i, u = rows[0].index("Metric Value"), rows[0].index("Metric Unit")
ns = [float(r[i].replace(",", "")) * (1e3 if r[u] == "usecond" else 1) for r in rows[1:]]
print(statistics.median(ns) / 1e6, len(ns))' "$d/$v.csv") || { tail -n 5 "$d/$v.err" "$d/$v.csv"; status=1; continue; }
        python3 -c 'import sys
lab, ncu, n = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
c = lab / ncu - 1
print(f"{sys.argv[1]:30} {sys.argv[2]:16} {lab:10.4f} {ncu:10.4f} {100 * c:+7.2f}%  ({n} ncu launches)")
sys.exit(abs(c) > 0.03)' "$v" "$s" "$lab" $ncu_ms || status=1
    done
    return $status
}
noise() {
    local regime=$1 runs=$2 status=0 d i vs out
    shift 2
    d=$(mktemp -d)
    for i in $(seq 1 "$runs"); do
        for vs in "$@"; do
            dist/kernel-lab bench "${vs%%:*}" --size "${vs#*:}" --regime "$regime" --seed 11 --results-dir "$d/$i" >>"$d/$i.log" 2>&1 ||
                { tail -n 5 "$d/$i.log"; status=1; }
        done
    done
    for i in $(seq 2 "$runs"); do
        echo "--- run $i against run $((i - 1)), $regime regime"
        out=$(dist/kernel-lab compare --base "$d/$((i - 1))"/* --new "$d/$i"/* 2>&1) || status=1
        echo "$out"
        grep -q "┆ \(FASTER\|SLOWER\)" <<<"$out" && status=1
    done
    tar czf "$OUT/noise-$regime.tgz" -C "$d" .
    return $status
}
ab() {
    local status=0 d i side cli vs v s base
    [ -x dist/base/kernel-lab ] || { echo "ab: no dist/base/kernel-lab: scripts/bundle.sh base:REV builds the base"; return 2; }
    d=$(mktemp -d)
    for i in 1 2; do
        for side in base new; do
            cli=dist/kernel-lab && [ "$side" = base ] && cli=dist/base/kernel-lab
            for vs in "$@"; do
                IFS=: read -r v s base <<<"$vs"
                [ "$side" = base ] && [ -n "$base" ] && v=$base
                $cli bench "$v" --size "$s" --seed 11 --results-dir "$d/$side$i" >>"$d/$side$i.log" 2>&1 ||
                    { tail -n 5 "$d/$side$i.log"; status=1; }
            done
        done
        echo "--- round $i: base against new"
        dist/kernel-lab compare --base "$d/base$i"/* --new "$d/new$i"/* 2>&1 || status=1
    done
    tar czf "$OUT/ab.tgz" -C "$d" .
    return $status
}
fleet_by_hand() {
    local file=$1 dir n g gpu i rc
    dir=$(dist/kernel-lab fleet submit "$file" --dry-run | sed -n 's/^(dry run: \(.*\) written, nothing submitted)$/\1/p')
    [ -n "$dir" ] || return 1
    n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tasks"]))' "$dir/tasks.json")
    g=$(nvidia-smi -L | grep -c '^GPU')
    for gpu in $(seq 0 $((g - 1))); do
        (for i in $(seq "$gpu" "$g" $((n - 1))); do
            CUDA_VISIBLE_DEVICES=$gpu SLURM_ARRAY_TASK_ID=$i bash "$dir/fleet.sbatch" >"$dir/logs/task-$i.out" 2>&1
            tail -n 1 "$dir/logs/task-$i.out"
        done) &
    done
    wait
    dist/kernel-lab fleet collect "$dir" --by card
    rc=$?
    tar czf "$OUT/fleet.tgz" -C "$(dirname "$dir")" "$(basename "$dir")"
    return $rc
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
            cuobjdump -sass "$f" | grep -oE "[HIQ]GMMA\.[^ ]*|[HIDQ]MMA\.[^ ]*|UTMALDG[^ ;]*|UCGABAR_[A-Z]*" | sort | uniq -c
        done' "$(echo ${step#sass})")
        ;;
    sanitize*) cmd=(bash -c "$(declare -f sanitize); sanitize ${step#sanitize}") ;;
    ab\ *) cmd=(bash -c "$(declare -f ab); OUT=$OUT ab ${step#ab }") ;;
    noise\ *) read -ra words <<<"${step#noise }" && cmd=(bash -c "$(declare -f noise); OUT=$OUT noise ${words[*]}") ;;
    fleet-by-hand\ *) cmd=(bash -c "$(declare -f fleet_by_hand); OUT=$OUT fleet_by_hand ${step#fleet-by-hand }") ;;
    ncu-detail\ *)
        read -ra words <<<"${step#ncu-detail }" && cmd=(ncu --clock-control none --launch-count 4 -k "regex:${words[2]}"
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats
            --section LaunchStats --section Occupancy
            --metrics "regex:sm__pipe_tensor_op.*cycles_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__cycles_elapsed.avg.per_second"
            dist/kernel-lab verify "${words[0]}" --size "${words[1]}" --in-process --seed 1)
        ;;
    ncu-check\ *) read -ra words <<<"${step#ncu-check }" && cmd=(bash -c "$(declare -f ncu_check); ncu_check ${words[*]}") ;;
    gate)
        cmd=(bash -c 'd=$(mktemp -d); dist/kernel-lab bench --quick --results-dir "$d" > "$d.log" 2>&1 || { tail -n 20 "$d.log"; exit 1; }
            tail -n 3 "$d.log"; m=$(ls "$d"); dist/kernel-lab compare --base "results/$m" --new "$d/$m"')
        ;;
    torch-steps) cmd=(bash -c 'for w in bert-base-mlm resnet50; do for m in train infer; do python3 scripts/torch_step.py --workload $w --mode $m | tee -a "$OUT/torch-steps.jsonl"; done; done') ;;
    bert-step) cmd=(bash -c 'python3 scripts/bert_step.py && dist/kernel-lab advise --workload bert-base --precision fp16 | head -n 5') ;;
    nvrtc\ *) read -ra words <<<"${step#nvrtc }" && cmd=(dist/nvrtc/kernel-lab "${words[@]}") ;;
    *) read -ra words <<<"$step" && cmd=(dist/kernel-lab "${words[@]}") ;;
    esac
    timeout "$limit" "${cmd[@]}" 2>&1 | tee -a "$OUT/run.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -ne 0 ] && status=$rc && echo "=== exit $rc: $step" | tee -a "$OUT/run.log"
    [ -d results ] && tar czf "$OUT/results.tgz" results
done
echo "=== device-run done ($(date -u +%H:%M:%S)), last failing exit: $status" | tee -a "$OUT/run.log"
