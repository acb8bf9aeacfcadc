# shellcheck shell=bash
# lib.sh - what the pg_idmint tests (tests/pg/*.sh) share: the server and
# the installed extension, a temporary directory, the cases' reporting.
#
# Sourcing it:
#   - finds pg_config: PG_CONFIG from the environment, else the newest
#     /usr/lib/postgresql/*/bin/pg_config; PG_BIN is its --bindir, so the
#     server tests/coord/pg.sh starts is the one the extension was built for;
#   - checks that pg_idmint is installed into that server (make -C pg
#     install; scripts/test.sh does it). Missing PostgreSQL, headers or
#     extension: the test fails when IDM_COORD_REQUIRED=ON (the test
#     command's build), else it is skipped (exit 77). IDM_PG_INSTALL=failed
#     (scripts/test.sh, when the extension did not build or install) fails
#     it at once, rather than testing whatever was installed before;
#   - makes T_DIR (removed at exit; KEEP_T_DIR=1 keeps it), searchable by
#     the postgres user, and sources tests/coord/services.sh and pg.sh:
#     start_pg, stop_pg, resume_pg, restart_pg, pg_psql. Every process
#     started here is killed by its PID at exit (track PID); pg.sh stops a
#     server still running.
#
# Cases: each check prints "ok #N: EVIDENCE" or "FAIL #N: EVIDENCE" and
# its details; `finish` prints "N passed, N failed" and exits non-zero when
# any failed.
#   expect EVIDENCE ACTUAL OP WANT   OP: = != =~ (ERE) -lt -le -gt -ge -eq
#   check EVIDENCE PROBLEMS          passes when PROBLEMS is empty (each
#                                    problem a line), else shows them
set -u
export LC_ALL=C

PGT_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PGT_ROOT=$(cd "$PGT_HERE/../.." && pwd)
PGT_NAME=$(basename "$0")

PASSED=0
FAILED=0
CASE_NO=0

pass() {
    PASSED=$((PASSED + 1))
    echo "ok #$CASE_NO: $1"
}

# fail EVIDENCE DETAILS
fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL #$CASE_NO: $1"
    printf '%s\n\n' "$2" | head -n 80 | cut -c 1-400
}

expect() {
    local evidence=$1 actual=$2 op=$3 want=$4 ok=1
    CASE_NO=$((CASE_NO + 1))
    case $op in
    =) [ "$actual" = "$want" ] || ok=0 ;;
    !=) [ "$actual" != "$want" ] || ok=0 ;;
    =~) [[ $actual =~ $want ]] || ok=0 ;;
    -lt | -le | -gt | -ge | -eq)
        if [[ $actual =~ ^-?[0-9]+$ ]]; then
            case $op in
            -lt) ((actual < want)) || ok=0 ;;
            -le) ((actual <= want)) || ok=0 ;;
            -gt) ((actual > want)) || ok=0 ;;
            -ge) ((actual >= want)) || ok=0 ;;
            -eq) ((actual == want)) || ok=0 ;;
            esac
        else
            ok=0
        fi
        ;;
    *)
        echo "$PGT_NAME: bad expect operator '$op'" >&2
        exit 2
        ;;
    esac
    if [ $ok = 1 ]; then
        pass "$evidence"
        return 0
    fi
    fail "$evidence" "  expected: '${actual:0:2000}' $op '$want'"
    return 1
}

check() {
    CASE_NO=$((CASE_NO + 1))
    if [ -z "$2" ]; then
        pass "$1"
        return 0
    fi
    fail "$1" "$2"
    return 1
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}

# not_ready WHY: the test cannot run. A failure with IDM_COORD_REQUIRED=ON,
# else a skip.
not_ready() {
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "$PGT_NAME: $1: FAIL" >&2
        exit 1
    fi
    echo "$PGT_NAME: $1; skipped"
    exit 77
}

if [ "${IDM_PG_INSTALL:-}" = failed ]; then
    echo "$PGT_NAME: pg_idmint did not build or install (scripts/test.sh's make -C pg install): FAIL" >&2
    exit 1
fi

if [ -z "${PG_CONFIG:-}" ]; then
    while read -r c; do
        [ -x "$c" ] && PG_CONFIG=$c
    done < <(printf '%s\n' /usr/lib/postgresql/*/bin/pg_config | sort -V)
fi
if [ -z "${PG_CONFIG:-}" ] || ! "$PG_CONFIG" --pgxs >/dev/null 2>&1; then
    not_ready "no PostgreSQL server headers (pg_config; Debian: postgresql-server-dev-15)"
fi
export PG_CONFIG
PG_BIN=$("$PG_CONFIG" --bindir)
for tool in initdb pg_ctl postgres psql; do
    [ -x "$PG_BIN/$tool" ] || not_ready "no $PG_BIN/$tool (Debian: postgresql)"
done
PGT_LIBDIR=$("$PG_CONFIG" --pkglibdir)
PGT_SHAREDIR=$("$PG_CONFIG" --sharedir)
if [ ! -f "$PGT_LIBDIR/pg_idmint.so" ] || [ ! -f "$PGT_SHAREDIR/extension/pg_idmint.control" ]; then
    not_ready "pg_idmint is not installed into $PGT_LIBDIR (make -C pg PG_CONFIG=$PG_CONFIG install)"
fi

T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-pg.XXXXXX")
# The postgres user runs the server below it.
chmod 0711 "$T_DIR"
PIDS=()

track() {
    PIDS+=("$1")
}

pgt_cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    wait 2>/dev/null
    if [ -n "${KEEP_T_DIR:-}" ]; then
        echo "kept $T_DIR" >&2
    else
        rm -rf "$T_DIR"
    fi
}
trap pgt_cleanup EXIT
# A signal (ctest's timeout, ^C) still runs the EXIT traps: pg.sh's stops
# the server, which pg_ctl started outside this shell's process group.
trap 'exit 143' TERM
trap 'exit 130' INT

# shellcheck source=tests/coord/services.sh
. "$PGT_ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$PGT_ROOT/tests/coord/pg.sh"

# now_ms: the real clock, in Unix milliseconds.
now_ms() {
    local t=${EPOCHREALTIME/./}
    echo $((t / 1000))
}
