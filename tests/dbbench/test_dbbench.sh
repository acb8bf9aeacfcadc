#!/usr/bin/env bash
# test_dbbench.sh - the databases of `idmint bench btree` (dbbench/)
# against a fresh SQLite file, a real PostgreSQL and a real MariaDB on
# loopback (tests/coord/pg.sh and tests/coord/mariadb.sh start them).
#
# For each backend this build has (IDMB_HAVE_SQLITE / IDMB_HAVE_PG /
# IDMB_HAVE_MYSQL, from ctest) it runs dbbench_test URL: URL kinds,
# redaction and the mysql:// parser, table names refused without the
# prefix, key widths 8/16/20 filled in batches (figures growing, a
# duplicate key refused, the table dropped), random against sequential
# 16-byte keys, the write counters, an unreachable database. On
# PostgreSQL also: a role that may not create pgstattuple, in a database
# without it, is IDMB_EMISSING; and the postgres:// scheme. On MariaDB
# also: mariadb:// over the Unix socket (?socket=). MariaDB runs with
# MARIADB_OPTS (default: a 32 MiB buffer pool, no flush per commit).
# Lines of dbbench_test starting with "# " (what was measured) are shown.
#
# Usage: bash test_dbbench.sh DBBENCH_TEST
# Exit status 77 (skipped) when the build has no backend; when
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
DT=$(abs "${1:?usage: bash $0 DBBENCH_TEST}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COORD=$HERE/../coord

PASSED=0
FAILED=0
CASE_NO=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-dbbench.XXXXXX")
# The postgres user must be able to reach what is below.
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
# A signal (ctest's timeout, ^C) still runs the EXIT traps: pg.sh's stops
# the server, which pg_ctl started outside this shell's process group.
trap 'exit 143' TERM
trap 'exit 130' INT

track() {
    PIDS+=("$1")
}

# shellcheck source=tests/coord/services.sh
. "$COORD/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$COORD/pg.sh"
# shellcheck source=tests/coord/mariadb.sh
. "$COORD/mariadb.sh"

fail() {
    FAILED=$((FAILED + 1))
    {
        echo "FAIL #$CASE_NO: $1"
        printf '%s\n\n' "$2"
    } >&2
}

# run_dt EVIDENCE LOG SECONDS -- ARGS...: dbbench_test ARGS, bounded by
# SECONDS; passes when it exits 0. Its measurements are shown; on failure,
# its whole output.
run_dt() {
    local evidence=$1 log=$T_DIR/$2 secs=$3 rc
    shift 4
    CASE_NO=$((CASE_NO + 1))
    timeout -k 5 "$secs" "$DT" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    grep '^# ' "$log"
    if [ $rc = 0 ]; then
        PASSED=$((PASSED + 1))
        return 0
    fi
    fail "$evidence" "  command: dbbench_test $*"$'\n'"  exit status $rc; output:"$'\n'"$(tail -n 60 "$log")"
    return 1
}

# not_run WHY: a case that cannot be run: a failure when
# IDM_COORD_REQUIRED=ON, else skipped.
not_run() {
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        CASE_NO=$((CASE_NO + 1))
        fail "every bench database is tested (IDM_COORD_REQUIRED=ON)" "  $1"
    else
        echo "skipped: $1"
    fi
}

BACKENDS_RUN=0

sqlite_cases() {
    local d=$T_DIR/sqlite
    mkdir -p "$d"
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    run_dt "sqlite: dbbench_test's cases" sqlite.log 300 -- "sqlite:$d/bench.db"
}

pg_cases() {
    if ! pg_installed; then
        not_run "the PostgreSQL server is not installed (scripts/test.sh installs postgresql)"
        return
    fi
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    CASE_NO=$((CASE_NO + 1))
    if ! start_pg "$T_DIR/pg"; then
        fail "PostgreSQL starts (pg.sh start_pg)" "  its log is shown above"
        return
    fi
    PASSED=$((PASSED + 1))
    run_dt "postgresql: dbbench_test's cases" pg.log 300 -- "$PG_URL"
    # A role that is no superuser, in a database without the extension.
    CASE_NO=$((CASE_NO + 1))
    if pg_psql -c "CREATE ROLE idmint_plain LOGIN" -c "CREATE DATABASE idmint_noext OWNER idmint_plain" \
        >"$T_DIR/psql.log" 2>&1; then
        PASSED=$((PASSED + 1))
        run_dt "postgresql: without pgstattuple and the right to create it: IDMB_EMISSING" \
            pg-missing.log 60 -- "postgres://idmint_plain@127.0.0.1:$PG_PORT/idmint_noext" missing
    else
        fail "psql makes a plain role and a database" "  $(cat "$T_DIR/psql.log")"
    fi
    stop_pg
}

mysql_cases() {
    if ! mariadb_installed; then
        not_run "the MariaDB server is not installed (scripts/test.sh installs mariadb-server)"
        return
    fi
    BACKENDS_RUN=$((BACKENDS_RUN + 1))
    CASE_NO=$((CASE_NO + 1))
    local t0=${EPOCHREALTIME/./}
    MARIADB_OPTS=${MARIADB_OPTS:---innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=0}
    if ! start_mariadb "$T_DIR/mariadb"; then
        fail "MariaDB starts (mariadb.sh start_mariadb)" "  its log is shown above"
        return
    fi
    PASSED=$((PASSED + 1))
    echo "# MariaDB started (install-db + mariadbd) on 127.0.0.1:$MARIADB_PORT in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
    run_dt "mysql: dbbench_test's cases" mysql.log 300 -- "$MARIADB_URL"
    # mariadb:// over the socket, as root: the first cases suffice.
    run_dt "mysql: mariadb:// over the Unix socket" mysql-sock.log 60 -- \
        "mariadb://root@localhost/idmint?socket=$MARIADB_SOCK" test_width_16
    stop_mariadb
}

if [ "${IDMB_HAVE_SQLITE:-OFF}" = ON ]; then
    sqlite_cases
else
    not_run "this build has no SQLite bench backend"
fi
if [ "${IDMB_HAVE_PG:-OFF}" = ON ]; then
    pg_cases
else
    not_run "this build has no PostgreSQL bench backend"
fi
if [ "${IDMB_HAVE_MYSQL:-OFF}" = ON ]; then
    mysql_cases
else
    not_run "this build has no MySQL/MariaDB bench backend"
fi
if [ "$BACKENDS_RUN" = 0 ] && [ "$FAILED" = 0 ]; then
    echo "0 passed, 0 failed (skipped: no bench database to test)"
    exit 77
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
