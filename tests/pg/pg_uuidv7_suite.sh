#!/usr/bin/env bash
# pg_uuidv7_suite.sh - pg_uuidv7's own regression suite (its test/sql and
# test/expected, github.com/fboulnois/pg_uuidv7) run through pg_regress
# against a fresh PostgreSQL (tests/coord/pg.sh) with only pg_idmint
# loaded: pg_regress's --load-extension=pg_idmint in place of its
# 001_setup, which runs CREATE EXTENSION "pg_uuidv7" itself; every other
# file as it stands. By hand: the suite is not part of this repository (its
# license is not ours) and the test command fetches nothing;
# pg/sql/pg_uuidv7.sql checks the same behaviours as this project's own
# test.
#
# Usage: bash tests/pg/pg_uuidv7_suite.sh DIR   DIR: a pg_uuidv7 checkout
# (git clone https://github.com/fboulnois/pg_uuidv7). Prints pg_regress's
# lines and "N of M files pass"; exits non-zero when one fails, 77 without
# DIR.
SRC=${1:-${PG_UUIDV7_SRC:-}}
if [ -z "$SRC" ] || [ ! -d "$SRC/test/sql" ] || [ ! -d "$SRC/test/expected" ]; then
    echo "usage: $0 PG_UUIDV7_CHECKOUT (a directory with test/sql and test/expected); skipped" >&2
    exit 77
fi
SRC=$(cd "$SRC" && pwd)
# shellcheck source=tests/pg/lib.sh
. "$(dirname "$0")/lib.sh"

REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
tests=()
for f in "$SRC"/test/sql/*.sql; do
    name=$(basename "$f" .sql)
    grep -qi 'create extension' "$f" && continue # its setup: pg_idmint instead
    tests+=("$name")
done
CASE_NO=1
if ! start_pg "$T_DIR/pg" >"$T_DIR/start.log" 2>&1; then
    fail "PostgreSQL starts (tests/coord/pg.sh start_pg)" "$(cat "$T_DIR/start.log")"
    finish
fi
mkdir -p "$T_DIR/out"
(cd "$SRC" && "$REGRESS" --inputdir=test --outputdir="$T_DIR/out" --bindir="$PG_BIN" \
    --host="$PG_DIR/sock" --port="$PG_PORT" --user=postgres --dbname=pg_uuidv7_suite \
    --load-extension=pg_idmint "${tests[@]}") >"$T_DIR/regress.log" 2>&1
rc=$?
grep -E '^(test| *[0-9]+ of|  *All)' "$T_DIR/regress.log"
n_ok=$(grep -c '^test .* \.\.\. ok' "$T_DIR/regress.log")
echo "# $n_ok of ${#tests[@]} files pass (pg_uuidv7 at $SRC)"
if [ $rc = 0 ] && [ "$n_ok" = "${#tests[@]}" ]; then
    pass "pg_uuidv7's suite with only pg_idmint loaded: every file passes"
else
    [ -f "$T_DIR/out/regression.diffs" ] && cat "$T_DIR/out/regression.diffs"
    fail "pg_uuidv7's suite with only pg_idmint loaded: every file passes" "  pg_regress exited $rc"
fi
stop_pg
finish
