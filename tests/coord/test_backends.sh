#!/usr/bin/env bash
# test_backends.sh - the coordinators for several hosts (coord/etcd.c,
# coord/zk.c) against a real etcd and a real ZooKeeper on loopback.
#
# For each backend this build has (IDMC_HAVE_ETCD / IDMC_HAVE_ZK, from
# ctest), it starts the server (services.sh) in a temporary directory and
# runs, each under a path of its own (/idmint-test/RANDOM):
#   1. backend_test URL: the API's promises (claims, generations, marks,
#      keepalive, expiry and fencing, list, bad URLs, unreachable servers);
#   2. backend_test PROXY_URL cut ...: a lease held through silentproxy
#      while the network is cut silently, then reopened;
#   3. backend_test URL restart: a lease held while the server restarts on
#      the same data: confirmed again or IDMC_LOST, never a second holder;
#      once with a quick restart (TTL 8 s), once with the server down for
#      longer than the lease's TTL (3 s).
# Lines of backend_test starting with "# " (what was measured) are shown.
#
# Usage: bash test_backends.sh BACKEND_TEST SILENTPROXY
# Exit status 77 (skipped) when the build has neither backend; when
# IDM_COORD_REQUIRED=ON a missing backend or server is a failure instead.
# KEEP_T_DIR=1 keeps the temporary directory (the servers' logs).
set -u
export LC_ALL=C

abs() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
    esac
}
BT=$(abs "${1:?usage: bash $0 BACKEND_TEST SILENTPROXY}")
PROXY=$(abs "${2:?usage: bash $0 BACKEND_TEST SILENTPROXY}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PASSED=0
FAILED=0
CASE_NO=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-coord.XXXXXX")
PIDS=()

cleanup() {
    [ -n "${KEEP_T_DIR:-}" ] && echo "kept $T_DIR" >&2
    local p
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    wait 2>/dev/null
    [ -n "${KEEP_T_DIR:-}" ] || rm -rf "$T_DIR"
}
trap cleanup EXIT

# As tests/server/lib.sh: every background process is killed by its PID
# at the end (services.sh uses this track).
track() {
    PIDS+=("$1")
}

# shellcheck source=tests/coord/services.sh
. "$HERE/services.sh"

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

expect() {
    local evidence=$1 actual=$2 op=$3 want=$4 ok=1
    CASE_NO=$((CASE_NO + 1))
    case $op in
    =) [ "$actual" = "$want" ] || ok=0 ;;
    !=) [ "$actual" != "$want" ] || ok=0 ;;
    =~) [[ $actual =~ $want ]] || ok=0 ;;
    *) echo "test_backends.sh: bad expect operator '$op'" >&2; exit 2 ;;
    esac
    if [ $ok = 1 ]; then
        pass
        return 0
    fi
    fail "$evidence" "  expected: ${actual:0:2000} $op $want"
    return 1
}

# run_bt EVIDENCE LOG SECONDS ARGS...: backend_test ARGS, bounded by
# SECONDS; passes when it exits 0. Its measurements ("# " lines) are shown;
# on failure, its whole output.
run_bt() {
    local evidence=$1 log=$T_DIR/$2 secs=$3 rc
    shift 3
    CASE_NO=$((CASE_NO + 1))
    timeout -k 5 "$secs" "$BT" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    grep '^# ' "$log"
    if [ $rc = 0 ]; then
        pass
        return 0
    fi
    fail "$evidence" "  command: backend_test $*"$'\n'"  exit status $rc; output:"$'\n'"$(tail -n 60 "$log")"
    return 1
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}

# A fresh path per run and per case: runs never see each other's slots.
fresh_path() {
    echo "/idmint-test/$$-$RANDOM$RANDOM-$1"
}

# cut_case SCHEME HOSTPORT: backend_test's cut mode through silentproxy.
cut_case() {
    local scheme=$1 hostport=$2 path out=$T_DIR/proxy.$1.out port=''
    path=$(fresh_path cut)
    "$PROXY" 0 "${hostport%:*}" "${hostport##*:}" >"$out" 2>"$T_DIR/proxy.$scheme.err" &
    local ppid=$!
    track "$ppid"
    local n=0
    while [ $n -lt 100 ] && [ -z "$port" ]; do
        port=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$out")
        [ -n "$port" ] || sleep 0.05
        n=$((n + 1))
    done
    if [ -z "$port" ]; then
        CASE_NO=$((CASE_NO + 1))
        fail "silentproxy starts" "  $(cat "$T_DIR/proxy.$scheme.err")"
        return
    fi
    run_bt "$scheme: a lease across a silent network cut: calls fail in bounded time, then recover" \
        "cut.$scheme.log" 120 "$scheme://127.0.0.1:$port$path" cut "$ppid" "$scheme://$hostport$path"
    sed 's/^/# silentproxy: /' "$T_DIR/proxy.$scheme.err"
    kill -TERM "$ppid" 2>/dev/null
    wait "$ppid" 2>/dev/null
}

# The command restart_etcd/restart_zk runs while the server is down: tells
# backend_test, which tries a keepalive and answers "down RC MS".
RT_DOWN=
RT_DOWN_SECS=0
rt_down() {
    echo down >&"$RT_IN"
    RT_DOWN=
    read -r -t 30 RT_DOWN <&"$RT_OUT"
    sleep "$RT_DOWN_SECS"
}

# restart_case SCHEME HOSTPORT RESTART_FUNCTION TTL_MS DOWN_SECONDS: the
# server is kept stopped for DOWN_SECONDS more after backend_test's
# keepalive found it down.
restart_case() {
    local scheme=$1 hostport=$2 restart=$3 ttl=$4 path log line held='' result=''
    RT_DOWN_SECS=$5
    log=$T_DIR/restart.$1.$ttl.log
    path=$(fresh_path "restart-$ttl")
    CASE_NO=$((CASE_NO + 1))
    coproc RT { exec "$BT" "$scheme://$hostport$path" restart "$ttl" 2>&1; }
    local rt_pid=$RT_PID
    track "$rt_pid"
    # Copies of the coprocess's pipes: bash unsets RT when it exits.
    exec {RT_OUT}<&"${RT[0]}" {RT_IN}>&"${RT[1]}"
    read -r -t 30 held <&"$RT_OUT"
    local problems=''
    if [[ $held != held\ * ]]; then
        problems+="  no 'held GEN' line: '$held'"$'\n'
    else
        local t0=${EPOCHREALTIME/./}
        "$restart" rt_down || problems+="  $scheme did not start again"$'\n'
        echo "# $scheme: restarted in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms (lease TTL $ttl ms, kept down $RT_DOWN_SECS s more); with it stopped, backend_test said '$RT_DOWN'"
        echo up >&"$RT_IN"
    fi
    # The rest of its output, to the end (bounded).
    : >"$log"
    while read -r -t 60 line <&"$RT_OUT"; do
        printf '%s\n' "$line" >>"$log"
    done
    exec {RT_OUT}<&- {RT_IN}>&-
    local rc=0 tries=0
    # Its output has ended; its exit may take a moment more (under ASan,
    # the leak check runs after the last line).
    while running_pid "$rt_pid" && [ $tries -lt 100 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    if running_pid "$rt_pid"; then
        kill -KILL "$rt_pid" 2>/dev/null
        problems+="  backend_test did not finish"$'\n'
    fi
    wait "$rt_pid" 2>/dev/null
    rc=$?
    grep '^# ' "$log"
    result=$(sed -n 's/^restart-result //p' "$log")
    [ $rc = 0 ] || problems+="  backend_test exited $rc"$'\n'
    [[ $RT_DOWN == down\ * ]] || problems+="  no 'down' answer while $scheme was stopped: '$RT_DOWN'"$'\n'
    [ -n "$result" ] || problems+="  no restart-result line"$'\n'
    if [ -z "$problems" ]; then
        echo "# $scheme: after the restart (TTL $ttl ms) the lease was $result"
        pass
    else
        fail "$scheme: a lease held across a server restart is confirmed again or lost, never doubled" \
            "$problems  output:"$'\n'"$held"$'\n'"$(tail -n 40 "$log")"
    fi
}

running_pid() {
    svc_running "$1"
}

etcd_installed() {
    command -v etcd >/dev/null
}

zk_installed() {
    command -v java >/dev/null && [ -f /usr/share/java/zookeeper.jar ]
}

# not_run WHY: a backend that cannot be tested: a failure when
# IDM_COORD_REQUIRED=ON, else skipped.
not_run() {
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        CASE_NO=$((CASE_NO + 1))
        fail "every backend is tested (IDM_COORD_REQUIRED=ON)" "  $1"
    else
        echo "skipped: $1"
    fi
}

# backend NAME SCHEME HAVE INSTALLED START STOP RESTART PORT_VAR PID_VAR
backend() {
    local name=$1 scheme=$2 have=$3 installed=$4 start=$5 stop=$6 restart=$7 port_var=$8 pid_var=$9
    if [ "$have" != ON ]; then
        not_run "this build has no $name backend"
        return
    fi
    if ! "$installed"; then
        not_run "the $name server is not installed (scripts/test.sh installs it)"
        return
    fi
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    CASE_NO=$((CASE_NO + 1))
    local t0=${EPOCHREALTIME/./}
    if ! "$start" "$T_DIR/$scheme"; then
        fail "$name starts (services.sh $start)" "  its log is shown above"
        return
    fi
    pass
    local hostport=127.0.0.1:${!port_var}
    echo "# $name started on $hostport in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
    run_bt "$name: backend_test's API cases" "api.$scheme.log" 300 "$scheme://$hostport$(fresh_path api)"
    cut_case "$scheme" "$hostport"
    restart_case "$scheme" "$hostport" "$restart" 8000 0
    restart_case "$scheme" "$hostport" "$restart" 3000 4
    local pid=${!pid_var}
    "$stop"
    expect "$name: $stop ends the server" "$(svc_running "$pid" && echo running || echo gone)" = gone
}

BACKENDS_RUN=0
backend etcd etcd "${IDMC_HAVE_ETCD:-OFF}" etcd_installed start_etcd stop_etcd restart_etcd ETCD_PORT ETCD_PID
backend ZooKeeper zk "${IDMC_HAVE_ZK:-OFF}" zk_installed start_zk stop_zk restart_zk ZK_PORT ZK_PID
if [ "$BACKENDS_RUN" = 0 ] && [ "$FAILED" = 0 ]; then
    echo "0 passed, 0 failed (skipped: no backend to test)"
    exit 77
fi
finish
