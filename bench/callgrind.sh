#!/usr/bin/env bash
# Instructions per ID of idmint's hot paths, counted by callgrind: unlike
# times they do not move with the machine's load (bench/README.md).
#
#   bench/callgrind.sh [N]        (N IDs per hot path, default 100000)
#
# For each path, `idmint_bench --callgrind FORMAT MODE N` mints N IDs
# inside callgrind_hot() after a warm-up of 10,000 (pools filled, OpenSSL
# initialised); valgrind collects only inside that function
# (--toggle-collect), and the same run with N = 0 is the baseline:
#
#   Ir/ID = (Ir(N) - Ir(0)) / N
#
# Counted: everything executed in user space inside the minting calls,
# including the amortised refills of the 4 KiB randomness pools (OpenSSL's
# DRBG). Not counted: time in the kernel or in the vDSO's clock read.
# Reuses build-bench/ (bench/run.sh's Release build) or builds it. The
# callgrind.out files stay in build-bench/callgrind/ for callgrind_annotate.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${IDM_BENCH_BUILD:-$root/build-bench}
n=${1:-100000}
[[ $n =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: bench/callgrind.sh [N]" >&2
    exit 2
}
log() {
    printf 'bench/callgrind.sh: %s\n' "$*" >&2
}

command -v valgrind >/dev/null 2>&1 || {
    log "valgrind is missing (apt-get install valgrind)"
    exit 1
}
if ! cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE='-O2 -DNDEBUG' \
    -DIDM_TESTS=OFF -DIDM_BENCH=ON >/dev/null ||
    ! cmake --build "$out" -j "$(nproc)" --target idmint_bench >&2; then
    log "FAILED: the build"
    exit 1
fi
bench=$out/bench/idmint_bench
cg=$out/callgrind
mkdir -p "$cg" || exit 1

# Total collected instructions of one run: the "summary:" line.
irs() {
    local file=$cg/callgrind.out.$1.$2.$3
    valgrind --tool=callgrind --toggle-collect=callgrind_hot --callgrind-out-file="$file" \
        "$bench" --callgrind "$1" "$2" "$3" >/dev/null 2>"$file.log" || {
        log "FAILED: valgrind on $1 $2 $3 (see $file.log)"
        return 1
    }
    sed -n 's/^summary: *//p' "$file"
}

paths=(
    "uuidv7 binary" "uuidv7 binary1" "uuidv7 text" "uuidv7 text1"
    "uuidv4 binary" "uuidv4 binary1" "uuidv4 text" "uuidv4 text1"
    "ulid binary" "ulid binary1" "ulid text" "ulid text1"
    "ksuid binary" "ksuid binary1" "ksuid text" "ksuid text1"
    "snowflake binary" "snowflake binary1" "snowflake text" "snowflake text1"
    "typeid text" "typeid text1" "token text1"
)
status=0
printf '| format | mode | Ir/ID |\n|--------|------|-------|\n'
for p in "${paths[@]}"; do
    read -r format mode <<<"$p"
    base=$(irs "$format" "$mode" 0) || {
        status=1
        continue
    }
    total=$(irs "$format" "$mode" "$n") || {
        status=1
        continue
    }
    awk -v f="$format" -v m="$mode" -v t="$total" -v b="$base" -v n="$n" \
        'BEGIN { printf "| %s | %s | %.1f |\n", f, m, (t - b) / n }'
done
log "N = $n IDs per path; binary and text mint 256 IDs per call, binary1 and text1 one"
exit $status
