#!/usr/bin/env bash
# idmintd's instructions for a fixed load, counted by callgrind: unlike
# req/s they do not move with the machine's load, so two builds compare on
# a shared machine to a fraction of a percent (bench/SERVER.md).
#
#   bench/server_callgrind.sh [--old OLD_IDMINTD] [IDMINTD]
#
# IDMINTD defaults to build-srvbench/idmintd (bench/server.sh's Release
# build; built here when missing). Each build runs under `valgrind
# --tool=callgrind` with a state directory and a node registry of its
# own, on loopback ports, and serves, start-up and drain included:
#   - 100,000 `NEXT snowflake` pipelined 16 deep over 10 connections
#     (redis-benchmark -c 10 -P 16),
#   - 20,000 more without pipelining, on one connection,
#   - 20,000 HTTP `GET /v1/ids/snowflake` on one keep-alive connection
#     (curl, one connection for every URL of its config);
# then it is stopped with SIGTERM, and the total of instructions executed
# (callgrind's "summary") is reported, with OLD's and the ratio. The
# callgrind.out files stay in build-srvbench/server-callgrind/{new,old}/
# for callgrind_annotate.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old=''
new=''
while [ $# -gt 0 ]; do
    case $1 in
    --old) old=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/server_callgrind.sh: unknown option $1" >&2; exit 2 ;;
    *) new=$1; shift ;;
    esac
done
log() {
    printf 'bench/server_callgrind.sh: %s\n' "$*" >&2
}
for tool in valgrind redis-benchmark curl; do
    command -v "$tool" >/dev/null 2>&1 || {
        log "$tool is missing (apt-get install valgrind redis-tools curl)"
        exit 1
    }
done
if [ -z "$new" ]; then
    new=$root/build-srvbench/idmintd
    if [ ! -x "$new" ]; then
        if ! cmake -S "$root" -B "$root/build-srvbench" -DCMAKE_BUILD_TYPE=Release -DIDM_TESTS=OFF \
            -DIDM_BENCH=OFF >/dev/null ||
            ! cmake --build "$root/build-srvbench" -j "$(nproc)" --target idmintd >&2; then
            log "FAILED: the build"
            exit 1
        fi
    fi
fi
work=$root/build-srvbench/server-callgrind
rm -rf "$work"
mkdir -p "$work"

# The 20,000 URLs of the HTTP part, for curl's config (one connection).
port_of() { echo $((20000 + RANDOM % 12000)); }

# count BINARY LABEL: prints "LABEL INSTRUCTIONS".
count() {
    local bin=$1 label=$2 d=$work/$2 hp rp pid n=0
    mkdir -p "$d"
    rm -rf "$d/state" "$d/nodes"
    hp=$(port_of)
    rp=$((hp + 1))
    : >"$d/urls"
    for ((i = 0; i < 20000; i++)); do
        printf 'url = "http://127.0.0.1:%d/v1/ids/snowflake"\noutput = "/dev/null"\n' "$hp" >>"$d/urls"
    done
    valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" "$bin" --http "127.0.0.1:$hp" \
        --resp "127.0.0.1:$rp" --state-dir "$d/state" --node-registry "$d/nodes" \
        --log-level warn >"$d/log" 2>&1 &
    pid=$!
    while ! curl -fs -m 2 -o /dev/null "http://127.0.0.1:$hp/healthz"; do
        n=$((n + 1))
        if [ $n -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
            log "$label did not start; its log:"
            cat "$d/log" >&2
            kill "$pid" 2>/dev/null
            return 1
        fi
        sleep 0.1
    done
    log "$label: RESP pipelined, RESP one by one, HTTP keep-alive"
    redis-benchmark -p "$rp" -c 10 -n 100000 -P 16 -q NEXT snowflake >"$d/resp16" 2>&1
    redis-benchmark -p "$rp" -c 1 -n 20000 -q NEXT snowflake >"$d/resp1" 2>&1
    curl -s -K "$d/urls" 2>"$d/curl.err"
    kill -TERM "$pid"
    wait "$pid"
    local ir
    ir=$(awk -F': ' '/^summary:/ { print $2 }' "$d/cg.out")
    printf '%s %s\n' "$label" "${ir:-0}"
}

results=$(count "$new" new) || exit 1
if [ -n "$old" ]; then
    more=$(count "$old" old) || exit 1
    results+=$'\n'$more
fi
new_ir=$(awk '$1 == "new" { print $2 }' <<<"$results")
printf '| build | instructions |\n|---|---:|\n'
printf '| %s | %s |\n' "$new" "$new_ir"
if [ -n "$old" ]; then
    old_ir=$(awk '$1 == "old" { print $2 }' <<<"$results")
    printf '| %s | %s |\n' "$old" "$old_ir"
    awk -v a="$new_ir" -v b="$old_ir" 'BEGIN { printf "\nratio (this build / old): %.4f\n", a / b }'
fi
