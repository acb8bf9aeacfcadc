#!/usr/bin/env bash
# bench/btree.sh - the runs behind docs/btree.md: `idmint bench btree` on
# a real PostgreSQL 15, SQLite and MariaDB, with the settings the document
# names, every result kept as JSON Lines and SVG.
#
#   bench/btree.sh [--rows N] [--big-rows M] [--out DIR] [--only LIST] [--quick]
#
#   --rows N       rows per format for every database (default 1000000)
#   --big-rows M   the large PostgreSQL run, bigint, uuidv4, uuidv7 and
#                  uuidv7-unordered only (default 10000000; 0 skips it)
#   --out DIR      where results go (default bench/results/btree-DATE)
#   --only LIST    some of pg,pg-big,pg-kpm,pg-migrate,sqlite,mysql
#   --quick        10000 rows, no large run: a smoke test
#
# PostgreSQL runs with shared_buffers = 16MB, max_wal_size = 64MB,
# checkpoint_timeout = 30s (full_page_writes on, as by default), so that a
# random index soon outgrows the buffer cache and checkpoints land during
# the inserts, as in production; MariaDB with a 32 MB buffer pool and
# innodb_flush_log_at_trx_commit = 0; SQLite with the bench's defaults
# (WAL journal, synchronous = NORMAL). Servers are started by PID on random
# loopback ports (tests/coord/pg.sh, tests/coord/mariadb.sh) and stopped at
# the end. Needs root (the servers' users), and build/idmint (built if
# missing).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROWS=1000000
BIG=10000000
OUT=
ONLY=pg,pg-big,pg-kpm,pg-migrate,sqlite,mysql
while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --big-rows) BIG=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --quick) ROWS=10000; BIG=0; shift ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/btree.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { echo "bench/btree.sh: --rows wants a positive number" >&2; exit 2; }
[[ $BIG =~ ^[0-9]+$ ]] || { echo "bench/btree.sh: --big-rows wants a number" >&2; exit 2; }
OUT=${OUT:-$ROOT/bench/results/btree-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
want() { [[ ,$ONLY, == *,$1,* ]]; }
log() { printf 'bench/btree.sh: %s\n' "$*" >&2; }

IDMINT=${IDMINT:-$ROOT/build/idmint}
if [ ! -x "$IDMINT" ]; then
    cmake -S "$ROOT" -B "$ROOT/build" >/dev/null && cmake --build "$ROOT/build" -j "$(nproc)" --target idmint >/dev/null ||
        { echo "bench/btree.sh: could not build idmint" >&2; exit 1; }
fi

T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-btree.XXXXXX")
chmod 0711 "$T_DIR"
trap 'rm -rf "$T_DIR"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$ROOT/tests/coord/pg.sh"
# shellcheck source=tests/coord/mariadb.sh
. "$ROOT/tests/coord/mariadb.sh"

ALL=bigint,uuidv4,uuidv7,uuidv7-unordered,ulid,ksuid,snowflake
FAILED=0

# run NAME ARGS...: one idmint bench btree run, its JSON Lines in
# OUT/NAME.jsonl and its chart in OUT/NAME.svg.
run() {
    local name=$1
    shift
    log "$name: idmint bench btree $(printf '%s ' "$@" | sed 's#//\([^:/@]*\):[^@]*@#//\1:***@#')"
    local t0=$SECONDS
    if "$IDMINT" bench btree "$@" --json --chart "$OUT/$name.svg" >"$OUT/$name.jsonl" 2>"$OUT/$name.err"; then
        log "$name: done in $((SECONDS - t0)) s"
    else
        log "$name: FAILED: $(tail -n 3 "$OUT/$name.err")"
        FAILED=$((FAILED + 1))
    fi
}

if want pg || want pg-big || want pg-kpm || want pg-migrate; then
    start_pg "$T_DIR/pg" || exit 1
    cat >>"$PG_DIR/data/postgresql.conf" <<CONF
# bench/btree.sh: a small cache, frequent checkpoints
shared_buffers = 16MB
max_wal_size = 64MB
checkpoint_timeout = 30s
full_page_writes = on
CONF
    restart_pg fast || exit 1
    PGURL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
    pg_psql -At -c "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN
        ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'full_page_writes', 'server_version')" \
        >"$OUT/pg-settings.txt"
    want pg && run pg --db "$PGURL" --rows "$ROWS" --formats "$ALL"
    if want pg-kpm; then
        for k in 1 16 64 128 256 1024 4096; do
            run "pg-kpm-$k" --db "$PGURL" --rows "$ROWS" --formats uuidv7,uuidv7-unordered --keys-per-ms "$k"
        done
    fi
    want pg-migrate && run pg-migrate --db "$PGURL" --rows "$ROWS" --scenario migrate
    if want pg-big && [ "$BIG" -gt 0 ]; then
        run pg-big --db "$PGURL" --rows "$BIG" --formats bigint,uuidv4,uuidv7,uuidv7-unordered
    fi
    stop_pg fast
fi

if want sqlite; then
    run sqlite --db "sqlite:$T_DIR/bench.db" --rows "$ROWS" --formats "$ALL"
fi

if want mysql; then
    MARIADB_OPTS="--innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=0"
    export MARIADB_OPTS
    start_mariadb "$T_DIR/mariadb" || exit 1
    mariadb_sql -Ne 'SELECT VERSION(), @@innodb_buffer_pool_size, @@innodb_flush_log_at_trx_commit' \
        >"$OUT/mysql-settings.txt" 2>&1 || true
    run mysql --db "$MARIADB_URL" --rows "$ROWS" --formats "$ALL"
    stop_mariadb
fi

log "results in $OUT"
exit $((FAILED > 0))
