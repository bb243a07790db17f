#!/usr/bin/env bash
# Mutation testing of the decision code: cargo-mutants changes one operator, value or return at a
# time in a copy of the tree, and each change the tests do not fail is a "missed" mutant.
#   scripts/mutants.sh                     every group below, one after another (hours on 2 cores)
#   scripts/mutants.sh stats compare       those groups
#   scripts/mutants.sh check --shard 1/4   cargo-mutants options (from the first that starts with
#                                          '-'; a lone -- is dropped) go to every group named
# Each group mutates one file (or folder) and runs only the test binaries that exercise it, so a
# mutant costs one incremental build of its crate, the crates above it and those tests. The
# copies build into one target folder (target/mutants-build), so the dependencies are built once,
# not once per group.
# Results go to target/mutants/<group>/mutants.out (caught.txt, missed.txt, timeout.txt,
# unviable.txt). Not in CI. Never --in-place: other work in this tree must not see a mutant.
set -euo pipefail
cd "$(dirname "$0")/.."

# group  package  file glob  test binaries
groups=(
    "stats kernel-lab-schema crates/schema/src/stats.rs verify_stats timing compare"
    "compare kernel-lab-analysis crates/analysis/src/compare.rs compare verdicts"
    "check kernel-lab-schema crates/schema/src/check.rs verify_stats"
    "verify kernel-lab-measure crates/measure/src/verify.rs verify_stats"
    "timing kernel-lab-measure crates/measure/src/timing/pairing.rs timing"
    "expr kernel-lab-facts crates/facts/src/expr.rs expr"
    "store kernel-lab-analysis crates/analysis/src/store.rs store store_rules verdicts"
    "advise kernel-lab-analysis crates/analysis/src/advise/*.rs advise advise_arithmetic"
)

names=()
while [ $# -gt 0 ] && [[ "$1" != -* ]]; do
    names+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
extra=("$@")

if ! command -v cargo-mutants >/dev/null 2>&1; then
    echo "mutants: installing cargo-mutants"
    cargo install cargo-mutants --locked
fi

known=" $(printf '%s ' "${groups[@]%% *}")"
for n in "${names[@]}"; do
    case "$known" in
    *" $n "*) ;;
    *) echo "mutants: no group '$n' (groups:$known)" >&2 && exit 2 ;;
    esac
done

# Debug builds without debug info: the quickest to rebuild and link per mutant.
export CARGO_PROFILE_DEV_DEBUG=false
export CARGO_TARGET_DIR="$PWD/target/mutants-build"
status=0
for g in "${groups[@]}"; do
    read -r name package file tests <<<"$g"
    if [ ${#names[@]} -gt 0 ] && [[ " ${names[*]} " != *" $name "* ]]; then
        continue
    fi
    # As cargo arguments, not test arguments, so the build links only these test binaries too.
    args=()
    for t in $tests; do
        args+=(--cargo-arg="--test=$t")
    done
    echo "mutants: $name: $file, tests: $tests"
    mkdir -p "target/mutants/$name"
    start=$(date +%s)
    # Exit 2 is "some mutants missed", 3 "some timed out": go on to the next group, then say so.
    # The mutated code is in its layer's crate; the tests that exercise it are the kernel-lab
    # package's (tests/), so that is the package tested.
    cargo mutants --no-shuffle -j 1 -p "$package" --test-package kernel-lab -f "$file" -o "target/mutants/$name" "${args[@]}" "${extra[@]}" || status=$?
    echo "mutants: $name took $(($(date +%s) - start)) s; target/mutants/$name/mutants.out"
done
exit $status
