#!/usr/bin/env bash
# bench/sql.sh - idmint's SQL functions against what each database offers
# today, side by side in one run per database (docs/sql.md lists the
# functions; the figures go in each extension's README):
#
#   bench/sql.sh [--quick] [--only sqlite,mariadb,pg]
#
#   sqlite   bench/sql/sqlite.sh: idmint_sqlite's uuidv7() against the v4
#            that sqlean's uuid4() and SQLite's ext/misc/uuid.c make from
#            random bytes (written in SQL over randomblob(16)), per call
#            and as insert keys;
#   mariadb  bench/sql/mariadb.sh: idmint_udf's uuid_v7() against the
#            builtin UUID() (v1), per call and as insert keys;
#   pg       bench/pg.sh --loops: pg_idmint's snowflake() against uuidv7()
#            and nextval() (and the rest of its functions), per call.
#
# Each part starts its own throwaway server or database file on loopback
# and reports ratios of statements run in the same rounds (the machines
# are shared and noisy: a ratio within a run means more than a time). A
# report, not a test: missed goals exit 0; a part that fails to build or
# run makes the exit status non-zero, and the other parts still run.
# --quick (the test command's smoke run) runs every statement once, small.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

quick=() only=sqlite,mariadb,pg
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=(--quick); shift ;;
    --only)
        [ $# -ge 2 ] || { echo "bench/sql.sh: --only wants a list (sqlite,mariadb,pg)" >&2; exit 2; }
        only=$2
        shift 2
        ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench/sql.sh: unknown option '$1' (--quick, --only LIST; --help)" >&2; exit 2 ;;
    esac
done
IFS=, read -ra parts <<<"$only"
for p in "${parts[@]}"; do
    case $p in
    sqlite | mariadb | pg) ;;
    *) echo "bench/sql.sh: unknown part '$p' (sqlite, mariadb, pg)" >&2; exit 2 ;;
    esac
done

failed=()
for p in "${parts[@]}"; do
    echo "bench/sql.sh: $p" >&2
    case $p in
    pg) cmd=(bash "$ROOT/bench/pg.sh" --loops "${quick[@]}") ;;
    *) cmd=(bash "$ROOT/bench/sql/$p.sh" "${quick[@]}") ;;
    esac
    "${cmd[@]}" || failed+=("$p")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench/sql.sh: failed: ${failed[*]}" >&2
    exit 1
fi
