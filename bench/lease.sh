#!/usr/bin/env bash
# bench/lease.sh - the cost of a leased node on idmintd's mint path
# (docs/leases.md, "Figures"): snowflakes per second from an idmintd whose
# node is static (--node 1 on the host's registry) against idmintds that
# lease theirs from a real etcd and a real ZooKeeper (--coord), side by
# side in one run.
#
#   bench/lease.sh [--quick]
#
# Builds idmintd in Release into build-srvbench/ (as bench/server.sh does),
# starts etcd and ZooKeeper on loopback (tests/coord/services.sh), one
# idmintd per mode, then runs wrk -t1 -c64 against /v1/ids/snowflake?count=100
# (IDs/s = requests/s x 100) and /v1/ids/snowflake, interleaved, 3 rounds of
# 5 s (--quick: 1 round of 2 s). Prints each run and the median over the
# rounds of lease/static (goal >= 0.95). A report, not a test: exit 0 when
# the goal is missed; non-zero only when something failed to run.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=0
[ "${1:-}" = --quick ] && quick=1
secs=5 rounds=3
((quick)) && secs=2 rounds=1
BUILD=${IDM_SRVBENCH_BUILD:-$ROOT/build-srvbench}
work=$(mktemp -d "${TMPDIR:-/tmp}/idmint-lease-bench.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
log() { printf 'bench/lease.sh: %s\n' "$*" >&2; }
# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
track() { pids+=("$1"); }

command -v wrk >/dev/null || { log "wrk is missing (apt-get install wrk)"; exit 1; }
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DIDM_SERVER=ON -DIDM_COORD_REQUIRED=ON >/dev/null &&
    cmake --build "$BUILD" --target idmintd -j "$(nproc)" >/dev/null || { log "build failed"; exit 1; }
idmintd=$BUILD/idmintd

start_etcd "$work/etcd" || exit 1
start_zk "$work/zk" || exit 1
declare -A PORT
start_one() { # NAME ARGS...
    local name=$1 http resp
    shift
    svc_random_port
    http=$SVC_PORT
    svc_random_port
    resp=$SVC_PORT
    "$idmintd" --http "127.0.0.1:$http" --resp "127.0.0.1:$resp" --state-dir "$work/state.$name" \
        --node-registry "$work/nodes" --log-level warn "$@" >"$work/$name.log" 2>&1 &
    pids+=($!)
    PORT[$name]=$http
    local n=0
    until command curl -fs -o /dev/null "http://127.0.0.1:$http/readyz"; do
        n=$((n + 1))
        if [ $n -gt 200 ]; then
            log "idmintd ($name) not ready: $(tail -n 5 "$work/$name.log")"
            exit 1
        fi
        sleep 0.05
    done
}
start_one static --node 1
start_one etcd --coord "etcd://127.0.0.1:$ETCD_PORT/idmint-bench" --lease-ttl 10
start_one zk --coord "zk://127.0.0.1:$ZK_PORT/idmint-bench" --lease-ttl 10

declare -A rps
run() { # NAME PATH KEY
    local out
    out=$(wrk -t1 -c64 -d"${secs}s" "http://127.0.0.1:${PORT[$1]}$2" 2>&1)
    local r
    r=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
    if [ -z "$r" ] || grep -q 'Non-2xx' <<<"$out"; then
        log "wrk against $1 $2 failed: $out"
        exit 1
    fi
    rps[$3]="${rps[$3]:-} $r"
    log "round $round $3 $1: $r req/s"
}
paths=("/v1/ids/snowflake?count=100" "/v1/ids/snowflake")
for ((round = 1; round <= rounds; round++)); do
    for p in "${paths[@]}"; do
        for m in static etcd zk; do
            run "$m" "$p" "$m|$p"
        done
    done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio_median() { # MODE PATH: the median over rounds of MODE/static in the same round
    local -a a b
    read -ra a <<<"${rps[$1|$2]}"
    read -ra b <<<"${rps[static|$2]}"
    local i out=""
    for i in "${!a[@]}"; do
        out="$out $(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.3f", x / y }')"
    done
    median <<<"$out"
}
printf '\n| path | static req/s | etcd lease req/s | zk lease req/s | etcd/static | zk/static |\n|---|---|---|---|---|---|\n'
for p in "${paths[@]}"; do
    printf '| %s | %s | %s | %s | %s | %s |\n' "$p" "$(median <<<"${rps[static|$p]}")" \
        "$(median <<<"${rps[etcd|$p]}")" "$(median <<<"${rps[zk|$p]}")" \
        "$(ratio_median etcd "$p")" "$(ratio_median zk "$p")"
done
printf '\nmedians over %d round(s) of %d s, wrk -t1 -c64; goal: lease/static >= 0.95; %s, load %s\n' \
    "$rounds" "$secs" "$(nproc) cores" "$(cut -d' ' -f1-3 /proc/loadavg)"
