# lib.sh - the server tests' runner, sourced by tests/server/test_*.sh.
#
# Each test starts its own idmintd on random loopback ports with its own
# state directory, talks to it over real sockets (curl, redis-cli, bash's
# /dev/tcp, and loadclient for load and for checking many IDs), and states
# each case declaratively, quoting the idmintd(8) sentence it proves:
#
#   http "EVIDENCE" [-s STATUS] [-h ERE]... [-x ERE]... [-o BODY | -O ERE]
#        [-L ERE] [-n LINES] -- PATH [CURL ARGS...]
#       a request to the HTTP port: status (default 200), a header line
#       matching ERE (-h, case-insensitive; repeatable) or none (-x), body
#       exactly BODY plus a newline (-o), body less its final newline
#       matching ERE as a whole (-O), every body line matching ERE (-L),
#       LINES newline-terminated lines (-n).
#   check "EVIDENCE" [-o TEXT | -O ERE] [-L ERE] [-n LINES] [-s STATUS]
#         -- COMMAND ARGS...  |  --sh 'SNIPPET'
#       a command's stdout and exit status, as in tests/cli/lib.sh (stderr
#       is shown on failure but not checked).
#   expect "EVIDENCE" ACTUAL OP EXPECTED
#       OP is one of = != -lt -le -gt -ge (numbers), =~ (ERE).
#
# start_server [--env VAR=VALUE | --env --unset=VAR | --as USER |
# --host-registry]... [IDMINTD OPTIONS] starts idmintd in the background
# (--memcache-random among the options: a memcached listener too, on
# MC_PORT, picked again with the other ports when a try cannot listen)
# (ports: HTTP_PORT, RESP_PORT; pid: SRV_PID; log: SRV_LOG; state:
# --state-dir $T_DIR/state unless given; node registry: --node-registry
# $T_DIR/nodes unless given, or with --host-registry none: the host's
# default) and waits for /healthz; if it cannot, that is a failure and the
# script finishes there. --as USER runs it as that user (setpriv: the pid
# is idmintd's own).
# stop_server [SIGNAL] stops it and waits up to 12 s: SRV_STATUS is its exit
# status ("timeout" if it did not exit) and SRV_STOP_MS how long it took.
# Every process started here (track PID) is killed by its PID when the
# script ends, and $T_DIR removed (kept with KEEP_T_DIR=1, for a look).
# `finish` prints "N passed, N failed" and exits non-zero when any case
# failed.
#
# SRV_SCHEME (default http) is the scheme of BASE and of http's requests:
# a test of TLS sets it to https (and gives curl its CA).
#
# wait_server [SECONDS] waits for it to exit by itself (after a signal the
# test sent), setting SRV_STATUS and SRV_STOP_MS the same way.
#
# Helpers: raw PORT SECONDS (a connection: stdin in one write, the reply
# until close), send FD FORMAT... (one write on an open connection), metric
# NAME (a /metrics sample), durable_ms (the durable mark from /metrics, in
# ms), kv FILE KEY (a loadclient count), step_clock OFFSET with
# FAKETIME_ENV (idmintd's libfaketime clock), freeze_clock
# UNIX_MS (that clock stopped at a time), clock_at UNIX_MS (that clock
# running from a time), now_ms (the real clock), hwm_mark DIR (the mark in a
# state directory), wait_until SECONDS COMMAND... (a bounded poll),
# random_port, rss_kib PID, peak_kib PID, running PID, exchange PORT
# SECONDS (raw's reply, then whether the server closed).
#
# ATTACK is tests/server/attack.c's client (next to LOADCLIENT): many
# connections that send without reading, half-sent requests, slow-loris.
#
# Usage of a test: bash test_X.sh IDMINTD IDMINT LOADCLIENT

# shellcheck disable=SC2034 # SRV_STATUS, SRV_STOP_MS, FAKETIME_ENV... are for the tests
# shellcheck source=tests/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

IDMINTD=${1:?usage: bash $0 PATH_TO_IDMINTD PATH_TO_IDMINT PATH_TO_LOADCLIENT}
IDMINT=${2:?usage: bash $0 PATH_TO_IDMINTD PATH_TO_IDMINT PATH_TO_LOADCLIENT}
LOADCLIENT=${3:-$(dirname "$IDMINTD")/tests/loadclient}
abs() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
    esac
}
IDMINTD=$(abs "$IDMINTD")
IDMINT=$(abs "$IDMINT")
LOADCLIENT=$(abs "$LOADCLIENT")
ATTACK=$(dirname "$LOADCLIENT")/attack
export IDMINTD IDMINT LOADCLIENT ATTACK
export LC_ALL=C
# Debian's libfaketime: FAKETIME_LIB, require_faketime.
# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"

# Every client call is bounded in time (also inside check --sh snippets).
curl() {
    command curl -m 10 "$@"
}
redis-cli() {
    timeout 10 "$(type -P redis-cli)" "$@"
}
export -f curl redis-cli

SRV_SCHEME=${SRV_SCHEME:-http}
PASSED=0
FAILED=0
CASE_NO=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-server.XXXXXX")
PIDS=()
SRV_PID=

# kill_tracked: kills every process started here (track) by its PID, and
# reaps them.
kill_tracked() {
    local p
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    wait 2>/dev/null
}

cleanup() {
    [ -n "${KEEP_T_DIR:-}" ] && { echo "kept $T_DIR" >&2; return; }
    kill_tracked
    rm -rf "$T_DIR"
}
trap cleanup EXIT

show() {
    printf '%s' "$1" | head -n 40 | cut -c 1-300
    printf '%s\n' '<END>'
}

pass() {
    PASSED=$((PASSED + 1))
}

# fail EVIDENCE DETAILS
fail() {
    FAILED=$((FAILED + 1))
    {
        echo "FAIL #$CASE_NO: $1"
        printf '%s\n\n' "$2"
    } >&2
}

# Starts a background process and remembers its PID for the cleanup.
track() {
    PIDS+=("$1")
}

start_server() {
    local envs=() args=() state=1 registry=1 logfile='' a runas=()
    while [ $# -gt 0 ]; do
        case $1 in
        --env) envs+=("$2"); shift 2 ;;
        --as) runas=(setpriv "--reuid=$2" "--regid=$(id -g "$2")" --clear-groups --); shift 2 ;;
        # --under 'CMD ARGS': idmintd runs under a tool (valgrind ...), words split.
        --under) read -ra runas <<<"$2"; shift 2 ;;
        --host-registry) registry=0; shift ;;
        *) break ;;
        esac
    done
    for a in "$@"; do
        case $a in
        --state-dir | --state-dir=*) state=0 ;;
        --node-registry | --node-registry=*) registry=0 ;;
        esac
    done
    args=("$@")
    local i
    for ((i = 0; i < ${#args[@]}; i++)); do
        if [ "${args[i]}" = --log-file ]; then
            logfile=${args[i + 1]}
        fi
    done
    [ $state = 1 ] && args+=(--state-dir "$T_DIR/state")
    # Each test its own host-local node registry: its first server leases
    # node 0 whatever else runs on the machine.
    [ $registry = 1 ] && args+=(--node-registry "$T_DIR/nodes")
    local try
    # The logs of every try, the last one's (SRV_LOG) last: a try that
    # found a port taken has run its start-up (a mark carried over, say)
    # before its listen failed.
    SRV_LOGS=()
    for _ in 1 2 3 4 5 6 7 8; do
        pick_port HTTP_PORT
        pick_port RESP_PORT
        [ "$HTTP_PORT" = "$RESP_PORT" ] && continue
        SRV_LOG=$T_DIR/idmintd.$RANDOM.log
        SRV_LOGS+=("$SRV_LOG")
        # --memcache-random: a memcached listener on a port of its own,
        # picked again on each try as HTTP_PORT and RESP_PORT are (MC_PORT).
        local try_args=() a2
        for a2 in "${args[@]}"; do
            if [ "$a2" = --memcache-random ]; then
                pick_port MC_PORT
                try_args+=(--memcache "127.0.0.1:$MC_PORT")
            else
                try_args+=("$a2")
            fi
        done
        "${runas[@]}" env "${envs[@]}" "$IDMINTD" --http "127.0.0.1:$HTTP_PORT" \
            --resp "127.0.0.1:$RESP_PORT" "${try_args[@]}" >"$SRV_LOG" 2>&1 &
        SRV_PID=$!
        track "$SRV_PID"
        local n=0 watch=$SRV_LOG
        [ -n "$logfile" ] && watch=$logfile
        # Up to 10 s for the "ready" line (or an exit).
        while [ $n -lt 200 ]; do
            if grep -q "ready (pid" "$watch" 2>/dev/null; then
                break
            fi
            if ! running "$SRV_PID"; then
                break
            fi
            sleep 0.05
            n=$((n + 1))
        done
        if grep -q "ready (pid" "$watch" 2>/dev/null; then
            BASE=$SRV_SCHEME://127.0.0.1:$HTTP_PORT
            n=0
            while [ $n -lt 100 ]; do
                if curl -fs -m 2 -o /dev/null "$BASE/healthz"; then
                    return 0
                fi
                sleep 0.05
                n=$((n + 1))
            done
            start_failed "it does not answer /healthz"
        fi
        kill -KILL "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
        if ! grep -q "cannot listen" "$SRV_LOG" "$watch" 2>/dev/null; then
            start_failed "it did not start"
        fi
    done
    start_failed "no free ports after 8 tries"
}

# The tests cannot go on without a server: the failure is counted and the
# script ends.
start_failed() {
    CASE_NO=$((CASE_NO + 1))
    fail "idmintd starts and answers /healthz" "  $1; its log:"$'\n'"$(cat "$SRV_LOG" 2>/dev/null | tail -n 20)"
    finish
}

# running PID: the process exists and is not a zombie (a zombie still
# answers kill -0; wait reaps it).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

stop_server() {
    local sig=${1:-TERM}
    # No "Killed" notice from bash after SIGKILL.
    [ "$sig" = KILL ] && exec {saved_err}>&2 2>/dev/null
    kill -"$sig" "$SRV_PID" 2>/dev/null
    wait_server 12
    [ "$sig" = KILL ] && exec 2>&"$saved_err" {saved_err}>&-
}

# wait_server [SECONDS]: waits up to SECONDS (default 12) for idmintd to
# exit, without signalling it; SRV_STATUS is its exit status ("timeout",
# and it is killed, if it did not exit), SRV_STOP_MS how long this waited.
wait_server() {
    local n=0 limit=$((${1:-12} * 20)) t0=${EPOCHREALTIME/./}
    while [ $n -lt $limit ] && running "$SRV_PID"; do
        sleep 0.05
        n=$((n + 1))
    done
    if running "$SRV_PID"; then
        SRV_STATUS=timeout
        kill -KILL "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
    else
        wait "$SRV_PID"
        SRV_STATUS=$?
    fi
    SRV_STOP_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
}

# The resident set of a process, in KiB.
rss_kib() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# The peak resident set of a process (VmHWM), in KiB.
peak_kib() {
    awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# kv FILE KEY: the value of KEY=VALUE on the last line of FILE holding it.
kv() {
    grep -Eo "(^| )$2=[^ ]*" "$1" | tail -n 1 | sed 's/.*=//'
}

# metric NAME_AND_LABELS: a sample's value from /metrics (e.g.
# metric 'idmint_ids_minted_total{format="ulid"}').
metric() {
    curl -s -m 5 "$BASE/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}

# durable_ms: the time high-water mark last made durable, in Unix ms
# (/metrics' idmint_hwm_persisted_timestamp_seconds: seconds to the ms);
# nothing, and status 1, when the page does not have it in that form.
durable_ms() {
    local s
    s=$(metric idmint_hwm_persisted_timestamp_seconds)
    [[ $s =~ ^([0-9]+)\.([0-9]{3})$ ]] || return 1
    echo $((10#${BASH_REMATCH[1]}${BASH_REMATCH[2]}))
}

# step_clock OFFSET: sets idmintd's libfaketime offset (seconds, e.g. -0.005),
# atomically (write then rename, as libfaketime rereads the file).
step_clock() {
    printf '%s\n' "$1" >"$T_DIR/faketime.new"
    mv -f "$T_DIR/faketime.new" "$T_DIR/faketime"
}

# The environment that puts idmintd on a clock step_clock moves.
FAKETIME_ENV=(--env "LD_PRELOAD=$FAKETIME_LIB" --env "FAKETIME_TIMESTAMP_FILE=$T_DIR/faketime"
    --env FAKETIME_NO_CACHE=1 --env FAKETIME_DONT_FAKE_MONOTONIC=1)

# now_ms: the real time in Unix ms (the tests themselves run on the real
# clock; only idmintd is under libfaketime).
now_ms() {
    local t=${EPOCHREALTIME/./}
    echo $((t / 1000))
}

# freeze_clock UNIX_MS: stops idmintd's libfaketime clock in UNIX_MS (every
# read returns that time until the next step_clock or freeze_clock).
# libfaketime reads "YYYY-MM-DD hh:mm:ss[.fraction]" without '@' as a
# frozen time, in local time: idmintd inherits this script's TZ, so date(1)
# here formats it for the same zone. It goes through a double, so that a
# running process reads X.187 as X.186999999: the time is set half a
# millisecond into UNIX_MS, which every millisecond reading then gives. The
# monotonic clock keeps running (FAKETIME_DONT_FAKE_MONOTONIC), so
# idmintd's timers still fire.
freeze_clock() {
    local ms=$1
    step_clock "$(date -d "@$((ms / 1000))" '+%Y-%m-%d %H:%M:%S').$(printf '%03d' $((ms % 1000)))500000"
}

# clock_at UNIX_MS: idmintd's clock reads UNIX_MS now and runs on (an
# offset from the real clock, in seconds with a fraction).
clock_at() {
    local d=$(($1 - $(now_ms))) sign=+
    if [ $d -lt 0 ]; then
        sign=-
        d=$((-d))
    fi
    step_clock "$sign$((d / 1000)).$(printf '%03d' $((d % 1000)))"
}

# hwm_mark DIR: the time high-water mark in DIR/mark (libidmint's mark
# file, include/idmint/mark.h: two 64-byte slots at offsets 0 and 512,
# "IDMMARK1", then little-endian sequence number and mark; the slot with
# the higher sequence number is the newer); nothing if the file is missing
# or holds no slot. The checksum is not checked here (loadclient --hwm
# checks it).
hwm_mark() {
    local f=$1/mark off seq mark best=-1 found=
    [ -f "$f" ] || return 1
    for off in 0 512; do
        [ "$(dd if="$f" bs=1 skip=$off count=8 2>/dev/null | tr -d '\0')" = IDMMARK1 ] || continue
        seq=$(od -An -t u8 -j $((off + 8)) -N 8 "$f" | tr -d ' ')
        mark=$(od -An -t d8 -j $((off + 16)) -N 8 "$f" | tr -d ' ')
        if [ "$seq" -gt "$best" ]; then
            best=$seq
            found=$mark
        fi
    done
    [ -n "$found" ] || return 1
    printf '%s\n' "$found"
}

# wait_until SECONDS COMMAND [ARGS...]: runs COMMAND every 50 ms until it
# succeeds (status 0) or SECONDS have passed (status 1). Only a bound, so
# that a test fails instead of hanging: what is checked is the command.
wait_until() {
    local limit=$(($1 * 1000000 + ${EPOCHREALTIME/./}))
    shift
    while :; do
        "$@" && return 0
        [ "${EPOCHREALTIME/./}" -ge "$limit" ] && return 1
        sleep 0.05
    done
}

# random_port: a loopback port number, as start_server picks them (for a
# listener of the test's own: start_server retries only its own ports).
random_port() {
    local port
    pick_port port
    echo "$port"
}

# raw PORT SECONDS: opens a connection, sends stdin in one write (up to
# 128 KiB: cat copies a file with one read and one write), and prints what
# comes back until the server closes or resets (status 0) or SECONDS pass
# (status 124).
# With a third argument "stream", stdin is copied as it comes (a test can
# send a request in parts with pauses between).
raw() {
    local port=$1 secs=$2 fd rc in=$T_DIR/raw.$BASHPID
    [ "${3:-}" = stream ] || cat >"$in"
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" || return 1
    if [ "${3:-}" = stream ]; then
        timeout "$secs" cat 1>&"$fd" 2>/dev/null
    else
        timeout "$secs" cat "$in" 1>&"$fd" 2>/dev/null
    fi
    timeout "$secs" cat <&"$fd" 2>/dev/null
    rc=$?
    # A reset is a close too.
    [ "$rc" != 124 ] && rc=0
    exec {fd}>&-
    rm -f "$in"
    return "$rc"
}

# exchange PORT SECONDS [stream]: raw's reply with its CRs removed and one
# line end, then a line "closed" (the server closed or reset the
# connection) or "open" (it had not after SECONDS).
exchange() {
    local reply rc
    reply=$(raw "$@" | tr -d '\r'; exit "${PIPESTATUS[0]}")
    rc=$?
    printf '%s\n' "$reply"
    [ $rc = 0 ] && echo closed || echo open
}

# send FD FORMAT [ARGS...]: printf's output to the open connection FD in
# one write (bash's own printf flushes at every newline), by cat: a write to
# a connection the server closed ends cat (SIGPIPE), not the test.
send() {
    local fd=$1 f=$T_DIR/send.$BASHPID
    shift
    # shellcheck disable=SC2059
    printf "$@" >"$f"
    cat "$f" 1>&"$fd" 2>/dev/null
}

http() {
    local evidence=$1
    shift
    local want_status=200 head_res=() nohead_res=() body_exact='' have_exact=0 body_re='' have_re=0
    local line_re='' have_lines=0 n_lines=''
    while [ $# -gt 0 ]; do
        case $1 in
        -s) want_status=$2; shift 2 ;;
        -h) head_res+=("$2"); shift 2 ;;
        -x) nohead_res+=("$2"); shift 2 ;;
        -o) body_exact=$2; have_exact=1; shift 2 ;;
        -O) body_re=$2; have_re=1; shift 2 ;;
        -L) line_re=$2; have_lines=1; shift 2 ;;
        -n) n_lines=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "lib.sh: bad http option '$1'" >&2; exit 2 ;;
        esac
    done
    CASE_NO=$((CASE_NO + 1))
    local path=$1
    shift
    local head_f=$T_DIR/head body_f=$T_DIR/body status problems='' re
    status=$(curl -s -m 10 -D "$head_f" -o "$body_f" -w '%{http_code}' "$@" "$SRV_SCHEME://127.0.0.1:$HTTP_PORT$path")
    local head body
    head=$(tr -d '\r' <"$head_f")
    body=$(cat "$body_f"; printf x)
    body=${body%x}
    [ "$status" != "$want_status" ] && problems+="  status: expected $want_status, got $status"$'\n'
    for re in "${head_res[@]}"; do
        grep -qiE "^($re)\$" <<<"$head" || problems+="  headers: no line matches /$re/"$'\n'
    done
    for re in "${nohead_res[@]}"; do
        grep -qiE "^($re)\$" <<<"$head" && problems+="  headers: a line matches /$re/"$'\n'
    done
    if [ $have_exact = 1 ]; then
        local want=$body_exact
        [ -n "$want" ] && want+=$'\n'
        [ "$body" != "$want" ] && problems+="  body: expected exactly:"$'\n'"$(show "$want")"$'\n'
    fi
    if [ $have_re = 1 ] && ! [[ ${body%$'\n'} =~ ^($body_re)$ ]]; then
        problems+="  body: expected to match /$body_re/"$'\n'
    fi
    if [ $have_lines = 1 ]; then
        local bad
        bad=$(grep -cvE "^($line_re)\$" "$body_f")
        [ "$bad" != 0 ] && problems+="  body: $bad line(s) do not match /$line_re/"$'\n'
    fi
    if [ -n "$n_lines" ]; then
        local got
        got=$(wc -l <"$body_f")
        [ "$got" != "$n_lines" ] && problems+="  body: expected $n_lines line(s), got $got"$'\n'
    fi
    if [ -z "$problems" ]; then
        pass
        return 0
    fi
    fail "$evidence" "  request: GET $path $*"$'\n'"$problems  actual headers:"$'\n'"$(show "$head")"$'\n'"  actual body:"$'\n'"$(show "$body")"
    return 1
}

check() {
    local evidence=$1
    shift
    local out_exact='' have_exact=0 out_re='' have_re=0 line_re='' have_lines=0 n_lines='' want_status=0
    local snippet='' have_snippet=0
    while [ $# -gt 0 ]; do
        case $1 in
        -o) out_exact=$2; have_exact=1; shift 2 ;;
        -O) out_re=$2; have_re=1; shift 2 ;;
        -L) line_re=$2; have_lines=1; shift 2 ;;
        -n) n_lines=$2; shift 2 ;;
        -s) want_status=$2; shift 2 ;;
        --sh) snippet=$2; have_snippet=1; shift 2; break ;;
        --) shift; break ;;
        *) echo "lib.sh: bad check option '$1'" >&2; exit 2 ;;
        esac
    done
    CASE_NO=$((CASE_NO + 1))
    local out_f=$T_DIR/out err_f=$T_DIR/err status cmd_text problems=''
    if [ $have_snippet = 1 ]; then
        cmd_text=$snippet
        bash -c "$snippet" </dev/null >"$out_f" 2>"$err_f"
        status=$?
    else
        cmd_text=$(printf '%q ' "$@")
        "$@" </dev/null >"$out_f" 2>"$err_f"
        status=$?
    fi
    local out
    out=$(cat "$out_f"; printf x)
    out=${out%x}
    [ "$status" != "$want_status" ] && problems+="  exit status: expected $want_status, got $status"$'\n'
    if [ $have_exact = 1 ]; then
        local want=$out_exact
        [ -n "$want" ] && want+=$'\n'
        [ "$out" != "$want" ] && problems+="  stdout: expected exactly:"$'\n'"$(show "$want")"$'\n'
    fi
    if [ $have_re = 1 ] && ! [[ ${out%$'\n'} =~ ^($out_re)$ ]]; then
        problems+="  stdout: expected to match /$out_re/"$'\n'
    fi
    if [ $have_lines = 1 ]; then
        local bad
        bad=$(grep -cvE "^($line_re)\$" "$out_f")
        [ "$bad" != 0 ] && problems+="  stdout: $bad line(s) do not match /$line_re/"$'\n'
    fi
    if [ -n "$n_lines" ]; then
        local got
        got=$(wc -l <"$out_f")
        [ "$got" != "$n_lines" ] && problems+="  stdout: expected $n_lines line(s), got $got"$'\n'
    fi
    if [ -z "$problems" ]; then
        pass
        return 0
    fi
    fail "$evidence" "  command: $cmd_text"$'\n'"$problems  actual stdout:"$'\n'"$(show "$out")"$'\n'"  actual stderr:"$'\n'"$(show "$(cat "$err_f")")"
    return 1
}

expect() {
    local evidence=$1 actual=$2 op=$3 want=$4 ok=1
    CASE_NO=$((CASE_NO + 1))
    case $op in
    =) [ "$actual" = "$want" ] || ok=0 ;;
    !=) [ "$actual" != "$want" ] || ok=0 ;;
    -lt | -le | -gt | -ge)
        if ! [[ $actual =~ ^-?[0-9]+$ ]]; then
            ok=0
        else
            case $op in
            -lt) ((actual < want)) || ok=0 ;;
            -le) ((actual <= want)) || ok=0 ;;
            -gt) ((actual > want)) || ok=0 ;;
            -ge) ((actual >= want)) || ok=0 ;;
            esac
        fi
        ;;
    =~) [[ $actual =~ $want ]] || ok=0 ;;
    *) echo "lib.sh: bad expect operator '$op'" >&2; exit 2 ;;
    esac
    if [ $ok = 1 ]; then
        pass
        return 0
    fi
    fail "$evidence" "  expected: ${actual:0:2000} $op $want"
    return 1
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}
