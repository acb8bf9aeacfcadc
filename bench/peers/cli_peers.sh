#!/usr/bin/env bash
# The CLI path of the benchmark: time a program that prints N IDs, one per
# line, to /dev/null, and report ns per ID as
#   RESULT<TAB>impl<TAB>format<TAB>cli<TAB>1<TAB>ns_per_id
#
# Source it to get the functions (the bench runner times idmint with them):
#
#   source bench/peers/cli_peers.sh
#   peer_cli_time idmint ulid 10000000 build/idmint gen ulid -n '{N}'
#
# or run it:
#   bash bench/peers/cli_peers.sh time IMPL FORMAT N CMD [ARG...]
#   bash bench/peers/cli_peers.sh peers [--quick] [PEER...]  (the programs of
#       libuuid, go, rust, node or all; needs run_peers.sh's builds)
#
# An argument that is exactly {N} is replaced by the count. Timing is by
# timecmd (c/timecmd.c: fork+exec+wait4 on CLOCK_MONOTONIC), built on first
# use into $PEER_BUILD. Each figure is the median of PEER_CLI_RUNS runs (3).
# After peer_cli_time, PEER_CLI_MAXRSS_KIB holds the median run's peak RSS.
# Diagnostics go to stderr; stdout carries only RESULT lines.

PEER_ROOT=${PEER_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PEER_BUILD=${PEER_BUILD:-$PEER_ROOT/build-bench/peers}
PEER_CLI_RUNS=${PEER_CLI_RUNS:-3}
# Peer programs run with N chosen so one run takes about this long, capped
# at PEER_CLI_MAX_N (the issue's 10,000,000).
PEER_CLI_TARGET_MS=${PEER_CLI_TARGET_MS:-1000}
PEER_CLI_MAX_N=${PEER_CLI_MAX_N:-10000000}
PEER_CLI_MIN_N=${PEER_CLI_MIN_N:-100000}
PEER_CLI_QUICK=${PEER_CLI_QUICK:-0}
PEER_CLI_MAXRSS_KIB=

peer_log() {
    printf '%s\n' "$*" >&2
}

# Prints the path of timecmd, compiling it if it is missing or stale.
peer_cli_timer() {
    local src="$PEER_ROOT/bench/peers/c/timecmd.c"
    local bin="$PEER_BUILD/timecmd"
    if [[ ! -x $bin || $src -nt $bin ]]; then
        mkdir -p "$PEER_BUILD" || return 1
        ${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$bin" "$src" >&2 || return 1
    fi
    printf '%s\n' "$bin"
}

# peer_cli_subst N ARG... : prints the args NUL-separated, {N} replaced.
peer_cli_subst() {
    local n=$1 a
    shift
    for a in "$@"; do
        if [[ $a == '{N}' ]]; then
            printf '%s\0' "$n"
        else
            printf '%s\0' "$a"
        fi
    done
}

# peer_cli_time IMPL FORMAT N CMD [ARG...]
# Times CMD (stdout to /dev/null) PEER_CLI_RUNS times; prints one RESULT line.
peer_cli_time() {
    if (($# < 4)); then
        peer_log "usage: peer_cli_time IMPL FORMAT N CMD [ARG...]"
        return 2
    fi
    local impl=$1 format=$2 n=$3
    shift 3
    local timer
    timer=$(peer_cli_timer) || return 1
    local -a cmd
    mapfile -d '' cmd < <(peer_cli_subst "$n" "$@")
    local runs=$PEER_CLI_RUNS i out
    local -a rows=()
    for ((i = 0; i < runs; i++)); do
        out=$("$timer" /dev/null "${cmd[@]}") || {
            peer_log "cli: $impl $format: command failed: ${cmd[*]}"
            return 1
        }
        rows+=("$out")
    done
    local mid
    mid=$(printf '%s\n' "${rows[@]}" | sort -n | sed -n "$((runs / 2 + 1))p")
    local ns=${mid% *}
    PEER_CLI_MAXRSS_KIB=${mid#* }
    peer_log "cli: $impl $format: $n IDs in $((ns / 1000000)) ms (median of $runs), peak RSS ${PEER_CLI_MAXRSS_KIB} KiB"
    awk -v impl="$impl" -v fmt="$format" -v ns="$ns" -v n="$n" \
        'BEGIN { printf "RESULT\t%s\t%s\tcli\t1\t%.2f\n", impl, fmt, ns / n }'
}

# The line a correct ID of FORMAT matches (extended regex).
peer_cli_pattern() {
    case $1 in
    uuidv1) echo '^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ;;
    uuidv4) echo '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ;;
    uuidv7) echo '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ;;
    ulid) echo '^[0-7][0-9A-HJKMNP-TV-Z]{25}$' ;;
    ksuid) echo '^[0-9A-Za-z]{27}$' ;;
    xid) echo '^[0-9a-v]{20}$' ;;
    snowflake) echo '^[0-9]{1,20}$' ;;
    *) echo '.' ;;
    esac
}

# peer_cli_check FORMAT CMD [ARG...]: 1,000 IDs, all well formed and distinct.
peer_cli_check() {
    local format=$1
    shift
    local -a cmd
    mapfile -d '' cmd < <(peer_cli_subst 1000 "$@")
    local tmp
    tmp=$(mktemp) || return 1
    if ! "${cmd[@]}" >"$tmp"; then
        peer_log "cli: check: command failed: ${cmd[*]}"
        rm -f "$tmp"
        return 1
    fi
    local lines bad uniq
    lines=$(wc -l <"$tmp")
    bad=$(grep -Ecv "$(peer_cli_pattern "$format")" "$tmp")
    uniq=$(sort -u "$tmp" | wc -l)
    rm -f "$tmp"
    if ((lines != 1000 || bad != 0 || uniq != 1000)); then
        peer_log "cli: check: ${cmd[*]}: $lines lines, $bad malformed, $uniq distinct (want 1000, 0, 1000)"
        return 1
    fi
}

# peer_cli_auto IMPL FORMAT CMD [ARG...]: check, pick N (about
# PEER_CLI_TARGET_MS per run, PEER_CLI_MIN_N..PEER_CLI_MAX_N), then time.
# N comes from the marginal cost between runs of n0 and 3*n0 IDs, so a slow
# start (Node's) does not shrink it.
peer_cli_auto() {
    local impl=$1 format=$2
    shift 2
    peer_cli_check "$format" "$@" || return 1
    if ((PEER_CLI_QUICK)); then
        PEER_CLI_RUNS=1 peer_cli_time "$impl" "$format" 20000 "$@"
        return
    fi
    local timer n0=$PEER_CLI_MIN_N n1=$((3 * PEER_CLI_MIN_N)) out0 out1 n
    timer=$(peer_cli_timer) || return 1
    local -a cmd
    mapfile -d '' cmd < <(peer_cli_subst "$n0" "$@")
    out0=$("$timer" /dev/null "${cmd[@]}") || return 1
    mapfile -d '' cmd < <(peer_cli_subst "$n1" "$@")
    out1=$("$timer" /dev/null "${cmd[@]}") || return 1
    n=$(awk -v t0="${out0% *}" -v t1="${out1% *}" -v n0="$n0" -v n1="$n1" \
        -v t="$PEER_CLI_TARGET_MS" -v lo="$PEER_CLI_MIN_N" -v hi="$PEER_CLI_MAX_N" 'BEGIN {
            per = (t1 - t0) / (n1 - n0)
            if (per <= 0) per = t1 / n1
            n = t * 1e6 / per; step = 100000
            n = int(n / step) * step
            if (n < lo) n = lo; if (n > hi) n = hi
            printf "%d", n }')
    peer_cli_time "$impl" "$format" "$n" "$@"
}

# peer_cli_peers [PEER...]: the programs of the CLI comparison, each in its
# natural fastest way, for the named peers (libuuid, go, rust, node; all by
# default). Non-zero when any of them failed.
peer_cli_peers() {
    local b=$PEER_BUILD node_peers=$PEER_ROOT/bench/peers/node/peers.mjs rc=0 p
    local -a which=("$@")
    ((${#which[@]})) || which=(libuuid go rust node)
    for p in "${which[@]}"; do
        case $p in
        libuuid)
            peer_cli_auto libuuid uuidv4 "$b/libuuid_peer" cli uuidv4 '{N}' || rc=1
            peer_cli_auto libuuid uuidv1 "$b/libuuid_peer" cli uuidv1 '{N}' || rc=1
            ;;
        go)
            peer_cli_auto go:google/uuid+pool uuidv4 "$b/idmint-peer-go" cli uuidv4 '{N}' || rc=1
            peer_cli_auto go:gofrs/uuid uuidv7 "$b/idmint-peer-go" cli uuidv7 '{N}' || rc=1
            peer_cli_auto go:oklog/ulid ulid "$b/idmint-peer-go" cli ulid '{N}' || rc=1
            peer_cli_auto go:segmentio/ksuid ksuid "$b/idmint-peer-go" cli ksuid '{N}' || rc=1
            peer_cli_auto go:rs/xid xid "$b/idmint-peer-go" cli xid '{N}' || rc=1
            ;;
        rust)
            peer_cli_auto rust:uuid+fast-rng uuidv4 "$b/rust-fast/release/idmint-peer-rust" cli uuidv4 '{N}' || rc=1
            peer_cli_auto rust:uuid+fast-rng uuidv7 "$b/rust-fast/release/idmint-peer-rust" cli uuidv7 '{N}' || rc=1
            ;;
        node)
            peer_cli_auto node:crypto uuidv4 node "$node_peers" cli uuidv4 '{N}' || rc=1
            peer_cli_auto node:uuid uuidv7 node "$node_peers" cli uuidv7 '{N}' || rc=1
            peer_cli_auto node:ulid ulid node "$node_peers" cli ulid '{N}' || rc=1
            peer_cli_auto node:sapphire-snowflake snowflake node "$node_peers" cli snowflake '{N}' || rc=1
            ;;
        *)
            peer_log "peer_cli_peers: no such peer: $p"
            rc=2
            ;;
        esac
    done
    return $rc
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -uo pipefail
    case ${1:-} in
    time)
        shift
        peer_cli_time "$@"
        ;;
    peers)
        shift
        if [[ ${1:-} == --quick ]]; then
            PEER_CLI_QUICK=1
            shift
        fi
        peer_cli_peers "$@"
        ;;
    *)
        peer_log "usage: cli_peers.sh time IMPL FORMAT N CMD [ARG...] | peers [--quick] [PEER...]"
        exit 2
        ;;
    esac
fi
