#!/usr/bin/env bash
# bench/keyed.sh - idmint's keyed public forms (keyed.h) side by side with
# the ID encoders people use to hide sequential IDs: Sqids and Hashids
# (npm, pinned in bench/peers/obf). Nanoseconds per ID, one thread each,
# medians of interleaved rounds, and the ratios.
#
#   bench/keyed.sh            5 rounds (about a minute)
#   bench/keyed.sh --quick    1 short round: the test command's smoke run
#
# Sqids and Hashids are encodings, not encryption: they are here to show
# what FF1 under AES costs against what people run today, not as equals.
# The report goes to stdout and to build-bench/keyed.md.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${IDM_BENCH_BUILD:-$root/build-bench}
rounds=5 calls=1000000 run_ms=250
case "${1:-}" in
--quick) rounds=1 calls=20000 run_ms=20 ;;
'') ;;
-h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "bench/keyed.sh: unknown option '$1' (try --help)" >&2
    exit 2
    ;;
esac

log() { echo "bench/keyed.sh: $*" >&2; }

# shellcheck source=bench/deps.sh
. "$root/bench/deps.sh"
command -v node >/dev/null 2>&1 || {
    log "node is missing (apt-get install nodejs npm)"
    exit 1
}
obf=$root/bench/peers/obf
if [[ ! -f $obf/node_modules/.package-lock.json ]] ||
    ! cmp -s <(idm_bench_lock_versions "$obf/package-lock.json") \
        <(idm_bench_lock_versions "$obf/node_modules/.package-lock.json"); then
    log "npm ci in bench/peers/obf"
    (cd "$obf" && npm ci --no-audit --no-fund --loglevel=error >&2) || exit 1
fi

log "building keyed_bench (Release, -O2) in $out"
if ! cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE='-O2 -DNDEBUG' \
    -DIDM_TESTS=OFF -DIDM_BENCH=ON >&2 ||
    ! cmake --build "$out" -j "$(nproc)" --target keyed_bench >&2; then
    log "FAILED: the build"
    exit 1
fi

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for ((r = 1; r <= rounds; r++)); do
    log "round $r of $rounds"
    # keyed_bench: "prefix none   obfuscate  689 ns  reveal  664 ns  stoken_next ..."
    if ! "$out/bench/keyed_bench" "$calls" >"$raw.c"; then
        log "FAILED: keyed_bench"
        exit 1
    fi
    awk '{ p = $2; for (i = 3; i + 1 <= NF; i++) if ($(i + 2) == "ns") print "idmint-" p, $i, $(i + 1) }' \
        "$raw.c" >>"$raw"
    if ! node "$obf/obf.mjs" bench --run-ms "$run_ms" --runs 1 >"$raw.n"; then
        log "FAILED: the node peers"
        exit 1
    fi
    awk -F'\t' '$1 == "RESULT" { print $2, $3, $4 }' "$raw.n" >>"$raw"
done
rm -f "$raw.c" "$raw.n"

# median IMPL OP: the median of the rounds' figures.
median() {
    awk -v i="$1" -v o="$2" '$1 == i && $2 == o { print $3 }' "$raw" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", v[int((NR + 1) / 2)]; else print "-" }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f×", a / b; else print "-" }'
}

obf_none=$(median idmint-none obfuscate) rev_none=$(median idmint-none reveal)
obf_user=$(median idmint-user obfuscate) rev_user=$(median idmint-user reveal)
sq_enc=$(median sqids encode) sq_dec=$(median sqids decode)
hs_enc=$(median hashids encode) hs_dec=$(median hashids decode)
report=$(
    cat <<EOF
# Keyed obfuscation against Sqids and Hashids

$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); idmint: gcc -O2,
$(node --version) for the peers; medians of $rounds interleaved rounds; ns per ID, one thread.

| | encode (ID → text) | decode (text → ID) | has a secret key |
| --- | ---: | ---: | --- |
| idmint obfuscate / reveal (FF1-AES-256, 32 check bits) | $obf_none | $rev_none | yes |
| the same with prefix \`user\` (the tweak) | $obf_user | $rev_user | yes |
| Sqids 0.3.0 (defaults) | $sq_enc | $sq_dec | no: an alphabet shuffle |
| Hashids 2.3.0 (with a salt) | $hs_enc | $hs_dec | no: the salt is recoverable |

Ratios (peer ns / idmint ns; above 1 means idmint is faster):
- Sqids / idmint: encode $(ratio "$sq_enc" "$obf_none"), decode $(ratio "$sq_dec" "$rev_none")
- Hashids / idmint: encode $(ratio "$hs_enc" "$obf_none"), decode $(ratio "$hs_dec" "$rev_none")

Signed expiring tokens (HMAC-SHA-256/128): mint $(median idmint-none stoken_next) ns,
verify $(median idmint-none stoken_verify) ns; with prefix \`user\`: $(median idmint-user stoken_next) ns,
$(median idmint-user stoken_verify) ns.
EOF
)
echo "$report"
mkdir -p "$out"
echo "$report" >"$out/keyed.md"
