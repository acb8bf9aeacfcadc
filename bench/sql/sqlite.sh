#!/usr/bin/env bash
# bench/sql/sqlite.sh - idmint_sqlite's uuidv7() against the v4 UUIDs SQLite
# users make today, side by side in one run (sqlite/README.md has the
# figures):
#
#   bench/sql/sqlite.sh [--ext PATH] [--rows N] [--rounds R] [--quick]
#
# --ext: the module (default build/idmint_sqlite.so; build it first with
# cmake). The v4 contenders are written in SQL from randomblob(), as
# without an extension:
#   v4 text (sqlean's uuid4() and uuid.c's uuid() form, 8-4-4-4-12 with
#   the version and variant set):
#     lower(printf('%s-%s-4%s-%s%s-%s', hex(randomblob(4)), hex(randomblob(2)),
#       substr(hex(randomblob(2)), 2), substr('89ab', 1 + abs(random()) % 4, 1),
#       substr(hex(randomblob(2)), 2), hex(randomblob(6))))
#   v4 hex (32 digits, version and variant set):
#     lower(hex(randomblob(6)) || '4' || substr(hex(randomblob(2)), 2) ||
#       substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(8)), 2))
#   v4 blob: randomblob(16) (no version bits: the cheapest random key)
# and idmint's uuidv4(), uuidv7(), uuidv7_blob() and snowflake().
#
# Each round (default 3; --quick: 1, and N = 100,000 instead of 1,000,000)
# runs, each in a fresh sqlite3 shell with the module loaded and after a
# warm-up of 10,000 rows (not timed):
#   calls:   SELECT count(EXPR) FROM (N rows of a recursive CTE)
#   inserts: INSERT INTO t(id) SELECT EXPR FROM (N rows), into
#            CREATE TABLE t(id PRIMARY KEY) WITHOUT ROWID in a new WAL
#            database file (synchronous=NORMAL, an 8 MiB page cache), one
#            transaction; its time includes the commit
# timed by the shell's .timer (the statement only; CPU time, user + system). Each round starts one
# place further along the list, so no expression always runs first.
#
# Prints a markdown table: per expression the median over rounds in
# seconds per million rows, net of the empty loop for calls, the file size
# after the insert, and the ratio to uuidv7() (above 1: slower than
# uuidv7()). A report, not a test: nothing is asserted.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
    sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}
ext="$ROOT/build/idmint_sqlite.so" rows='' rounds='' quick=0
while (($#)); do
    case $1 in
    --ext) ext=${2:?--ext needs a path}; shift 2 ;;
    --rows) rows=${2:?--rows needs a number}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --quick) quick=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "sqlite.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ((quick)); then
    rows=${rows:-100000} rounds=${rounds:-1}
else
    rows=${rows:-1000000} rounds=${rounds:-3}
fi
[[ $rows =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
    { echo "sqlite.sh: --rows and --rounds take positive integers" >&2; exit 2; }
ext=${ext%.so}
[[ -f $ext.so ]] || { echo "sqlite.sh: no $ext.so: build it first (cmake --build build)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite.sh: sqlite3 (the shell) is missing" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/idmsq-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

names=(uuidv7 uuidv7_blob uuidv4 v4_text_sql v4_hex_sql v4_blob_sql snowflake)
declare -A expr=(
    [uuidv7]="uuidv7()"
    [uuidv7_blob]="uuidv7_blob()"
    [uuidv4]="uuidv4()"
    [v4_text_sql]="lower(printf('%s-%s-4%s-%s%s-%s', hex(randomblob(4)), hex(randomblob(2)), substr(hex(randomblob(2)), 2), substr('89ab', 1 + abs(random()) % 4, 1), substr(hex(randomblob(2)), 2), hex(randomblob(6))))"
    [v4_hex_sql]="lower(hex(randomblob(6)) || '4' || substr(hex(randomblob(2)), 2) || substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(8)), 2))"
    [v4_blob_sql]="randomblob(16)"
    [snowflake]="snowflake()"
)
cte() {
    echo "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $1)"
}

# run DB SQL: the CPU seconds (user + system, from the shell's .timer) of
# the last statement of SQL. CPU, not elapsed: on a shared machine the
# elapsed time of a CPU-bound loop measures the other tenants.
run() {
    local db=$1 sql=$2 out
    if ! out=$(printf '%s\n' ".load $ext" "$sql" | sqlite3 -batch "$db" 2>&1); then
        echo "sqlite.sh: sqlite3 failed: $out" >&2
        return 1
    fi
    awk '/^Run Time: real/ { t = $6 + $8 } END { if (t == "") exit 1; print t }' <<<"$out"
}

# The snowflake's node, once for the database files (each insert gets a
# new file, configured before its timer starts).
sf_setup="SELECT idmint_snowflake_config(1) IS NULL;"

declare -A t_call t_ins size
t_empty=()
for ((r = 0; r < rounds; r++)); do
    # The empty loop.
    t=$(run "$dir/calls.db" "$(cte 10000) SELECT count(i) FROM c;
.timer on
$(cte "$rows") SELECT count(i) FROM c;") || exit 1
    t_empty+=("$t")
    n=${#names[@]}
    for ((k = 0; k < n; k++)); do
        name=${names[$(((k + r) % n))]}
        e=${expr[$name]}
        rm -rf "$dir/calls.db"*
        t=$(run "$dir/calls.db" "$sf_setup
$(cte 10000) SELECT count($e) FROM c;
.timer on
$(cte "$rows") SELECT count($e) FROM c;") || exit 1
        t_call[$name]+="$t "
        rm -rf "$dir/ins.db"*
        t=$(run "$dir/ins.db" "PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA cache_size = -8192;
$sf_setup
CREATE TABLE warm(id PRIMARY KEY) WITHOUT ROWID;
$(cte 10000) INSERT INTO warm(id) SELECT $e FROM c;
DROP TABLE warm;
CREATE TABLE t(id PRIMARY KEY) WITHOUT ROWID;
.timer on
$(cte "$rows") INSERT INTO t(id) SELECT $e FROM c;") || exit 1
        t_ins[$name]+="$t "
        size[$name]=$(sqlite3 "$dir/ins.db" "PRAGMA wal_checkpoint(TRUNCATE);" "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size;" | tail -1)
    done
done

median() {
    tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
empty=$(printf '%s ' "${t_empty[@]}" | median)
per_m() { awk -v t="$1" -v n="$rows" 'BEGIN { printf "%.3f", t * 1000000 / n }'; }
base_call=$(awk -v a="$(median <<<"${t_call[uuidv7]}")" -v e="$empty" 'BEGIN { print a - e }')
base_ins=$(median <<<"${t_ins[uuidv7]}")

echo "## idmint_sqlite: $rows rows, $rounds round(s), SQLite $(sqlite3 --version | cut -d' ' -f1)"
echo
echo "CPU seconds per million rows (user + system). Calls net of the empty loop"
echo "($(per_m "$empty") s per million); inserts into a WITHOUT ROWID primary key, one"
echo "transaction, WAL. Ratio: to uuidv7()."
echo
echo "| expression | call s/M | call ratio | insert s/M | insert ratio | file MiB |"
echo "|---|---:|---:|---:|---:|---:|"
for name in "${names[@]}"; do
    c=$(awk -v a="$(median <<<"${t_call[$name]}")" -v e="$empty" 'BEGIN { print a - e }')
    i=$(median <<<"${t_ins[$name]}")
    awk -v name="$name" -v c="$c" -v i="$i" -v bc="$base_call" -v bi="$base_ins" -v n="$rows" \
        -v sz="${size[$name]}" 'BEGIN {
        printf "| %s | %.3f | %.2fx | %.3f | %.2fx | %.1f |\n", name, c * 1e6 / n,
               (bc > 0 ? c / bc : 0), i * 1e6 / n, (bi > 0 ? i / bi : 0), sz / 1048576 }'
done
