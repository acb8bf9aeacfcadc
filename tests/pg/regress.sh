#!/usr/bin/env bash
# regress.sh - pg_idmint's pg_regress suite (pg/sql, pg/expected) against a
# fresh PostgreSQL: tests/coord/pg.sh starts one on a random loopback port
# with its socket under a temporary directory, then
#
#   make -C pg installcheck PG_CONFIG=... PGHOST=SOCKET PGPORT=PORT PGUSER=postgres
#
# runs the suite (pg/Makefile's REGRESS) as the postgres role. pg_regress
# writes pg/results/, pg/regression.out and pg/regression.diffs (ignored by
# git); the diffs are printed when a test fails. The extension must be
# installed first (make -C pg install; scripts/test.sh does it): see
# tests/pg/lib.sh for PG_CONFIG and for when a missing one fails or skips.
#
# Usage: bash tests/pg/regress.sh    exits non-zero when the suite fails.
# ctest: pg.regress (label pg).
# shellcheck source=tests/pg/lib.sh
. "$(dirname "$0")/lib.sh"

PG=$PGT_ROOT/pg
if ! compgen -G "$PG/sql/*.sql" >/dev/null; then
    CASE_NO=1
    fail "pg_idmint's pg_regress suite exists" "  no $PG/sql/*.sql (pg/Makefile's REGRESS names the tests)"
    finish
fi
CASE_NO=1
t0=$(now_ms)
if ! start_pg "$T_DIR/pg" >"$T_DIR/start.log" 2>&1; then
    fail "PostgreSQL starts (tests/coord/pg.sh start_pg)" "$(cat "$T_DIR/start.log")"
    finish
fi
echo "# PostgreSQL $("$PG_CONFIG" --version | sed "s/^PostgreSQL //") on 127.0.0.1:$PG_PORT, socket $PG_DIR/sock, up in $(($(now_ms) - t0)) ms"

# pg_regress runs here as whoever we are (root too: it only connects as
# PGUSER and writes its results into pg/); the server, as postgres, reads
# nothing of the tree. Output from earlier runs goes first, so a diff shown
# is this run's.
rm -rf "$PG/results" "$PG/regression.diffs" "$PG/regression.out"
t0=$(now_ms)
make -C "$PG" installcheck PG_CONFIG="$PG_CONFIG" PGHOST="$PG_DIR/sock" PGPORT="$PG_PORT" \
    PGUSER=postgres >"$T_DIR/installcheck.log" 2>&1
rc=$?
cat "$T_DIR/installcheck.log"
echo "# make installcheck exited $rc after $(($(now_ms) - t0)) ms"
if [ $rc = 0 ]; then
    pass "make -C pg installcheck: every pg_regress test passes"
else
    details="  make installcheck exited $rc"
    if [ -s "$PG/regression.diffs" ]; then
        echo "---- $PG/regression.diffs ----"
        cat "$PG/regression.diffs"
        echo "---- end of regression.diffs ----"
        details+="; pg/regression.diffs is above"
    else
        details+=" and left no pg/regression.diffs (its output is above)"
    fi
    fail "make -C pg installcheck: every pg_regress test passes" "$details"
    echo "---- the end of the server's log ----"
    tail -n 30 "$PG_DIR/pg.log"
fi
stop_pg
finish
