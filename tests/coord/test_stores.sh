#!/usr/bin/env bash
# test_stores.sh - the segment stores (segstore/segstore_sqlite.c,
# segstore/segstore_pg.c) against a fresh SQLite file and a real PostgreSQL
# on loopback.
#
# For each backend this build has (IDMSEG_HAVE_SQLITE / IDMSEG_HAVE_PG, from
# ctest) it runs store_test:
#   1. store_test URL: the API's promises (creates, EXISTS, bad names and
#      values, disjoint increasing leases, strides, NOTAG, show and list,
#      a tag used up near 2^63 - 1, unreachable databases);
#   2. store_test URL concurrent 8 200 TAG: eight processes leasing one tag;
#   3. read-only stores: an SQLite file chmod'ed 0444 (honoured even by
#      root), and as the user nobody a file in a read-only directory; on
#      PostgreSQL a role with only SELECT, and a read-only transaction;
#      with no table and none to be made, opening is IDMSEG_EREADONLY;
#   4. SQLite: a file locked by another process (the sqlite3 tool) for
#      longer than the busy timeout: IDMSEG_EDB within bounds;
#   5. PostgreSQL: stopped (pg_ctl stop -m immediate) between leases and
#      started again: one IDMSEG_EDB at most, leases go on above all
#      earlier ones.
# Lines of store_test starting with "# " (what was measured) are shown.
#
# Usage: bash test_stores.sh STORE_TEST
# Exit status 77 (skipped) when the build has neither backend; when
# IDM_COORD_REQUIRED=ON a missing backend, server or tool is a failure
# instead. KEEP_T_DIR=1 keeps the temporary directory (the server's log).
set -u
export LC_ALL=C

abs() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
    esac
}
ST=$(abs "${1:?usage: bash $0 STORE_TEST}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PASSED=0
FAILED=0
CASE_NO=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-stores.XXXXXX")
# The postgres user (and nobody) must be able to reach what is below.
chmod 0755 "$T_DIR"
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
# A signal (ctest's timeout, ^C) still runs the EXIT traps: pg.sh's stops the
# server, which pg_ctl started outside this shell's process group.
trap 'exit 143' TERM
trap 'exit 130' INT

track() {
    PIDS+=("$1")
}

# shellcheck source=tests/coord/services.sh
. "$HERE/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$HERE/pg.sh"

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
    =~) [[ $actual =~ $want ]] || ok=0 ;;
    *) echo "test_stores.sh: bad expect operator '$op'" >&2; exit 2 ;;
    esac
    if [ $ok = 1 ]; then
        pass
        return 0
    fi
    fail "$evidence" "  expected: ${actual:0:2000} $op $want"
    return 1
}

# run_st EVIDENCE LOG SECONDS [AS_USER] -- ARGS...: store_test ARGS,
# bounded by SECONDS; passes when it exits 0. Its measurements are shown;
# on failure, its whole output.
run_st() {
    local evidence=$1 log=$T_DIR/$2 secs=$3 user=$4 rc
    shift 5
    CASE_NO=$((CASE_NO + 1))
    if [ -n "$user" ]; then
        timeout -k 5 "$secs" runuser -u "$user" -- "$ST" "$@" >"$log" 2>&1 </dev/null
    else
        timeout -k 5 "$secs" "$ST" "$@" >"$log" 2>&1 </dev/null
    fi
    rc=$?
    grep '^# ' "$log"
    if [ $rc = 0 ]; then
        pass
        return 0
    fi
    fail "$evidence" "  command: store_test $*"$'\n'"  exit status $rc; output:"$'\n'"$(tail -n 60 "$log")"
    return 1
}

# not_run WHY: a case that cannot be run: a failure when
# IDM_COORD_REQUIRED=ON, else skipped.
not_run() {
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        CASE_NO=$((CASE_NO + 1))
        fail "every segment store is tested (IDM_COORD_REQUIRED=ON)" "  $1"
    else
        echo "skipped: $1"
    fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}

BACKENDS_RUN=0

# ---- SQLite ----------------------------------------------------------------

sqlite_cases() {
    local d=$T_DIR/sqlite
    mkdir -p "$d"
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    run_st "sqlite: store_test's API cases" api.sqlite.log 120 '' -- "sqlite:$d/stores.db"
    expect "sqlite: the file is in WAL mode" "$(sqlite_mode "$d/stores.db")" = wal
    run_st "sqlite: 8 processes x 200 leases of one tag on one file: disjoint, next_id is the sum" \
        conc.sqlite.log 120 '' -- "sqlite:$d/conc.db" concurrent 8 200 conc

    # A file made read-only (0444): even root may not write it.
    run_st "sqlite: setup of a tag to read" ro-setup.sqlite.log 30 '' -- "sqlite:$d/ro.db" setup ro
    chmod 0444 "$d/ro.db"
    run_st "sqlite: a 0444 file: show and list work, create and lease are IDMSEG_EREADONLY" \
        ro.sqlite.log 30 '' -- "sqlite:$d/ro.db" readonly ro
    : >"$d/empty.db"
    chmod 0444 "$d/empty.db"
    run_st "sqlite: a 0444 file without the table: open is IDMSEG_EREADONLY" \
        ro-empty.sqlite.log 30 '' -- "sqlite:$d/empty.db" readonly -

    # The kernel's own refusal: nobody, a directory it cannot write.
    if [ "$(id -u)" = 0 ] && runuser -u nobody -- test -x "$ST"; then
        local rd=$d/rodir
        mkdir -p "$rd"
        run_st "sqlite: setup of a tag to read" ro-setup2.sqlite.log 30 '' -- "sqlite:$rd/r.db" setup ro
        chmod 0555 "$rd"
        run_st "sqlite: as nobody, a WAL file in a read-only directory: reads work, writes IDMSEG_EREADONLY" \
            ro-dir.sqlite.log 30 nobody -- "sqlite:$rd/r.db" readonly ro
        run_st "sqlite: as nobody, a missing file in a read-only directory: IDMSEG_EREADONLY" \
            ro-dir-missing.sqlite.log 30 nobody -- "sqlite:$rd/none.db" readonly -
        chmod 0755 "$rd"
    else
        echo "skipped: the read-only directory case (needs root, and $ST executable by nobody)"
    fi

    # A lock held for longer than the busy timeout (5 s).
    if command -v sqlite3 >/dev/null; then
        local fifo=$d/lock.fifo
        mkfifo "$fifo"
        sqlite3 "$d/stores.db" <"$fifo" >"$d/lock.out" 2>&1 &
        local lpid=$!
        track "$lpid"
        exec {LOCK_FD}>"$fifo"
        echo 'BEGIN IMMEDIATE; SELECT count(*) FROM idmint_segments;' >&"$LOCK_FD"
        # The holder has the lock once it has answered.
        local n=0
        while [ ! -s "$d/lock.out" ] && [ $n -lt 100 ]; do
            sleep 0.05
            n=$((n + 1))
        done
        run_st "sqlite: a file locked by another process: IDMSEG_EDB after the busy timeout, bounded" \
            busy.sqlite.log 30 '' -- "sqlite:$d/stores.db" busy
        echo 'COMMIT;' >&"$LOCK_FD"
        exec {LOCK_FD}>&-
        wait "$lpid" 2>/dev/null
    else
        not_run "the sqlite3 tool is not installed (scripts/test.sh installs it)"
    fi
}

sqlite_mode() {
    if command -v sqlite3 >/dev/null; then
        sqlite3 "$1" 'PRAGMA journal_mode'
    else
        echo wal # not checked without the tool
    fi
}

# ---- PostgreSQL ------------------------------------------------------------

# The command restart_pg runs while the server is down: tells store_test,
# which tries a lease and answers "down RC MS".
RT_DOWN=
rt_down() {
    echo down >&"$RT_IN"
    RT_DOWN=
    read -r -t 30 RT_DOWN <&"$RT_OUT"
}

pg_restart_case() {
    local log=$T_DIR/restart.pg.log line leased='' result=''
    CASE_NO=$((CASE_NO + 1))
    coproc RT { exec "$ST" "$PG_URL" restart 2>&1; }
    local rt_pid=$RT_PID
    track "$rt_pid"
    exec {RT_OUT}<&"${RT[0]}" {RT_IN}>&"${RT[1]}"
    read -r -t 30 leased <&"$RT_OUT"
    local problems=''
    if [[ $leased != leased\ * ]]; then
        problems+="  no 'leased HIGH' line: '$leased'"$'\n'
    else
        local t0=${EPOCHREALTIME/./} old_pid=$PG_PID
        restart_pg immediate rt_down || problems+="  PostgreSQL did not start again"$'\n'
        echo "# PostgreSQL: stopped (immediate) and started again in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms (postmaster $old_pid, then $PG_PID); with it stopped, store_test said '$RT_DOWN'"
        echo up >&"$RT_IN"
    fi
    : >"$log"
    while read -r -t 60 line <&"$RT_OUT"; do
        printf '%s\n' "$line" >>"$log"
    done
    exec {RT_OUT}<&- {RT_IN}>&-
    # Its output ended; the exit itself may lag (LeakSanitizer's check at
    # exit takes a moment).
    local n=0
    while [ $n -lt 200 ] && svc_running "$rt_pid"; do
        sleep 0.05
        n=$((n + 1))
    done
    if svc_running "$rt_pid"; then
        kill -KILL "$rt_pid" 2>/dev/null
        problems+="  store_test did not finish"$'\n'
    fi
    wait "$rt_pid" 2>/dev/null
    local rc=$?
    grep '^# ' "$log"
    result=$(sed -n 's/^restart-result //p' "$log")
    [ $rc = 0 ] || problems+="  store_test exited $rc"$'\n'
    [[ $RT_DOWN == down\ 2\ * ]] || problems+="  no 'down 2 MS' (IDMSEG_EDB) while PostgreSQL was stopped: '$RT_DOWN'"$'\n'
    [ -n "$result" ] || problems+="  no restart-result line"$'\n'
    if [ -z "$problems" ]; then
        pass
    else
        fail "postgresql: leases across a restart: one IDMSEG_EDB at most, then above all earlier ones" \
            "$problems  output:"$'\n'"$leased"$'\n'"$(tail -n 40 "$log")"
    fi
}

pg_cases() {
    if ! pg_installed; then
        not_run "the PostgreSQL server is not installed (scripts/test.sh installs postgresql)"
        return
    fi
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    CASE_NO=$((CASE_NO + 1))
    local t0=${EPOCHREALTIME/./}
    if ! start_pg "$T_DIR/pg"; then
        fail "PostgreSQL starts (pg.sh start_pg)" "  its log is shown above"
        return
    fi
    pass
    echo "# PostgreSQL started (initdb + pg_ctl start) on 127.0.0.1:$PG_PORT in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
    local base=postgresql://postgres@127.0.0.1:$PG_PORT
    run_st "postgresql: store_test's API cases" api.pg.log 120 '' -- "$PG_URL"
    # postgres:// is the same.
    run_st "postgresql: the postgres:// scheme, the concurrent case: 8 processes x 200 leases" \
        conc.pg.log 120 '' -- "postgres://postgres@127.0.0.1:$PG_PORT/postgres" concurrent 8 200 "conc-$$"

    # A role that may only read, and a read-only transaction.
    run_st "postgresql: setup of a tag to read" ro-setup.pg.log 30 '' -- "$PG_URL" setup "ro-$$"
    CASE_NO=$((CASE_NO + 1))
    if pg_psql -c "CREATE ROLE idmint_ro LOGIN" -c "GRANT SELECT ON idmint_segments TO idmint_ro" \
        -c "CREATE DATABASE idmint_empty" >"$T_DIR/psql.log" 2>&1; then
        pass
    else
        fail "psql makes a read-only role" "  $(cat "$T_DIR/psql.log")"
    fi
    run_st "postgresql: a role with only SELECT: show and list work, create and lease are IDMSEG_EREADONLY" \
        ro.pg.log 30 '' -- "$base/postgres?user=idmint_ro" readonly "ro-$$"
    run_st "postgresql: a read-only transaction (SQLSTATE 25006): IDMSEG_EREADONLY" \
        ro-tx.pg.log 30 '' -- "$PG_URL?options=-c%20default_transaction_read_only%3Don" readonly "ro-$$"
    run_st "postgresql: a read-only role, a database without the table: open is IDMSEG_EREADONLY" \
        ro-empty.pg.log 30 '' -- "$base/idmint_empty?user=idmint_ro" readonly -

    pg_restart_case
    local pid=$PG_PID
    stop_pg
    expect "postgresql: stop_pg ends the server" "$(svc_running "$pid" && echo running || echo gone)" = gone
}

if [ "${IDMSEG_HAVE_SQLITE:-OFF}" = ON ]; then
    sqlite_cases
else
    not_run "this build has no SQLite store"
fi
if [ "${IDMSEG_HAVE_PG:-OFF}" = ON ]; then
    pg_cases
else
    not_run "this build has no PostgreSQL store"
fi
if [ "$BACKENDS_RUN" = 0 ] && [ "$FAILED" = 0 ]; then
    echo "0 passed, 0 failed (skipped: no store to test)"
    exit 77
fi
finish
