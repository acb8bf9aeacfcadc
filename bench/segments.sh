#!/usr/bin/env bash
# bench/segments.sh - segment tags against Redis's INCR (docs/segments.md,
# issue 10's figures), side by side in one run:
#
#   bench/segments.sh [--quick]
#
# Builds idmintd in Release into build-srvbench/ (as bench/server.sh does),
# starts redis-server (--save '' --appendonly no), a PostgreSQL
# (tests/coord/pg.sh) and two idmintd: --segments on an SQLite file and on
# the PostgreSQL, each with a tag made by `idmint segment create` (step
# 1000, the default). Then redis-benchmark -c 50 `INCR tag` against each,
# interleaved: without pipelining (-n 1,000,000) and with -P 16 (-n
# 4,000,000), 3 rounds (--quick: 1 round, -n 200,000 / 800,000); and,
# for the latency around range switches, `INCR switchy` on a tag whose
# step is fixed at 100 (a switch every 100 IDs: 1% of the requests come
# right after one) without pipelining. Prints
# requests/s and p99 latency per run, the median of the per-round ratios
# idmintd/redis-server (goal >= 1.0), and from idmintd's /metrics the
# store leases per million IDs (goal <= 1,000: at most one write per 1,000
# IDs) and the step reached. A report, not a test: exit 0 when goals are
# missed; non-zero only when something failed to run.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=0
[ "${1:-}" = --quick ] && quick=1
rounds=3 n1=1000000 n16=4000000
((quick)) && rounds=1 n1=200000 n16=800000
BUILD=${IDM_SRVBENCH_BUILD:-$ROOT/build-srvbench}
work=$(mktemp -d "${TMPDIR:-/tmp}/idmint-seg-bench.XXXXXX")
pids=()
log() { printf 'bench/segments.sh: %s\n' "$*" >&2; }
# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$ROOT/tests/coord/pg.sh"
track() { pids+=("$1"); }
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    stop_pg 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

for tool in redis-server redis-benchmark; do
    command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install redis-server redis-tools)"; exit 1; }
done
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DIDM_SERVER=ON -DIDM_COORD_REQUIRED=ON >/dev/null &&
    cmake --build "$BUILD" --target idmintd idmint -j "$(nproc)" >/dev/null || { log "build failed"; exit 1; }

free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        ! grep -qs ":$(printf '%04X' "$p") " /proc/net/tcp && { echo "$p"; return; }
    done
}
wait_port() { # PORT
    local n=0
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        n=$((n + 1))
        [ $n -gt 200 ] && return 1
        sleep 0.05
    done
}

chmod 0711 "$work" # the postgres user reaches its directory
start_pg "$work/pg" || exit 1
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$rport" || { log "redis-server did not start"; exit 1; }

declare -A RESP HTTP
start_one() { # NAME STORE
    "$BUILD/idmint" segment create bench --store "$2" >/dev/null &&
        "$BUILD/idmint" segment create switchy --store "$2" --step 100 --max-step 100 >/dev/null ||
        { log "segment create on $2 failed"; exit 1; }
    local h r
    h=$(free_port)
    r=$(free_port)
    "$BUILD/idmintd" --http "127.0.0.1:$h" --resp "127.0.0.1:$r" --state-dir "$work/state.$1" \
        --node-registry "$work/nodes" --segments "$2" --log-level warn >"$work/$1.log" 2>&1 &
    pids+=($!)
    wait_port "$r" || { log "idmintd ($1) did not start: $(tail -n 5 "$work/$1.log")"; exit 1; }
    RESP[$1]=$r
    HTTP[$1]=$h
}
start_one sqlite "sqlite:$work/segments.db"
start_one pg "$PG_URL"
RESP[redis]=$rport

declare -A rps p99
run() { # NAME PIPELINE N [TAG]
    local out r p tag=${4:-bench}
    out=$(timeout 300 redis-benchmark -p "${RESP[$1]}" -c 50 -n "$3" -P "$2" -q --csv INCR "$tag" 2>&1)
    # --csv: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    r=$(printf '%s\n' "$out" | awk -F'"' '/^"INCR/ { print $4 }')
    p=$(printf '%s\n' "$out" | awk -F'"' '/^"INCR/ { print $14 }')
    if [ -z "$r" ]; then
        log "redis-benchmark against $1 failed: $out"
        exit 1
    fi
    rps[$1|$2$tag]="${rps[$1|$2$tag]:-} $r"
    p99[$1|$2$tag]="${p99[$1|$2$tag]:-} $p"
    log "round $round -P $2 $1 $tag: $r req/s, p99 $p ms"
}
for ((round = 1; round <= rounds; round++)); do
    for P in 1 16; do
        n=$n1
        [ $P = 16 ] && n=$n16
        for m in redis sqlite pg; do
            run "$m" "$P" "$n"
        done
    done
    for m in sqlite pg; do
        run "$m" 1 "$n1" switchy
    done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio_median() { # MODE P
    local -a a b
    read -ra a <<<"${rps[$1|${2}bench]}"
    read -ra b <<<"${rps[redis|${2}bench]}"
    local i out=""
    for i in "${!a[@]}"; do
        out="$out $(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.3f", x / y }')"
    done
    median <<<"$out"
}
metric() { # NAME PORT
    command curl -s "http://127.0.0.1:$2/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
printf '\n| INCR bench | redis-server req/s (p99 ms) | idmintd sqlite req/s (p99 ms) | idmintd pg req/s (p99 ms) | sqlite/redis | pg/redis |\n|---|---|---|---|---|---|\n'
for P in 1 16; do
    printf '| -P %s | %s (%s) | %s (%s) | %s (%s) | %s | %s |\n' "$P" \
        "$(median <<<"${rps[redis|${P}bench]}")" "$(median <<<"${p99[redis|${P}bench]}")" \
        "$(median <<<"${rps[sqlite|${P}bench]}")" "$(median <<<"${p99[sqlite|${P}bench]}")" \
        "$(median <<<"${rps[pg|${P}bench]}")" "$(median <<<"${p99[pg|${P}bench]}")" \
        "$(ratio_median sqlite "$P")" "$(ratio_median pg "$P")"
done
printf '| switch every 100 IDs, -P 1 | | %s (%s) | %s (%s) | | |\n' \
    "$(median <<<"${rps[sqlite|1switchy]}")" "$(median <<<"${p99[sqlite|1switchy]}")" \
    "$(median <<<"${rps[pg|1switchy]}")" "$(median <<<"${p99[pg|1switchy]}")"
printf '\n| store | IDs handed out | leases | leases per million IDs | step reached |\n|---|---|---|---|---|\n'
for m in sqlite pg; do
    ids=$(metric 'idmint_segment_ids_total{tag="bench"}' "${HTTP[$m]}")
    leases=$(metric 'idmint_segment_leases_total{tag="bench"}' "${HTTP[$m]}")
    step=$(metric 'idmint_segment_step{tag="bench"}' "${HTTP[$m]}")
    printf '| %s | %s | %s | %s | %s |\n' "$m" "$ids" "$leases" \
        "$(awk -v l="$leases" -v i="$ids" 'BEGIN { printf "%.1f", (i > 0 ? l * 1e6 / i : 0) }')" "$step"
done
printf '\nmedians over %d round(s), redis-benchmark -c 50; goals: idmintd/redis >= 1.0, <= 1,000 leases per million IDs; %s, load %s\n' \
    "$rounds" "$(nproc) cores" "$(cut -d' ' -f1-3 /proc/loadavg)"
