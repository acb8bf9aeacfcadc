#!/usr/bin/env bash
# fuzz/run_fuzzer.sh FUZZER SEED_DIR SCRATCH_DIR - runs one libFuzzer target
# for $IDM_FUZZ_SECONDS seconds (default 30; 0 only runs the seeds once).
#
# SCRATCH_DIR is emptied first. New inputs go to SCRATCH_DIR/corpus (the
# first corpus directory is the one libFuzzer writes to); SEED_DIR is only
# read, so a run never changes the repository. A crash leaves its input in
# SCRATCH_DIR/artifacts/: once the bug is fixed, copy that file into
# fuzz/corpus/<target>/ so that every test run replays it.
set -euo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 FUZZER SEED_DIR SCRATCH_DIR" >&2
    exit 2
fi
fuzzer=$1
seeds=$2
scratch=$3
seconds=${IDM_FUZZ_SECONDS:-30}

rm -rf "$scratch"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
corpora=("$scratch/corpus")
if [ -d "$seeds" ]; then
    corpora+=("$seeds")
else
    echo "$(basename "$fuzzer"): no seed corpus at $seeds (starting from nothing)"
fi

opts=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$scratch/artifacts/")
if [ "$seconds" -eq 0 ]; then
    opts+=(-runs=0)
else
    opts+=(-max_total_time="$seconds")
fi

rc=0
"$fuzzer" "${opts[@]}" "${corpora[@]}" >"$scratch/log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$scratch/log"
    echo "$(basename "$fuzzer"): FAILED (exit status $rc); inputs that failed:"
    ls -l "$scratch/artifacts/"
    exit 1
fi
# Quiet on success: the final stats and the corpus size only.
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|INFO: seed corpus)' "$scratch/log" || true
echo "$(basename "$fuzzer"): ok, $(find "$scratch/corpus" -type f | wc -l) new corpus entries"
