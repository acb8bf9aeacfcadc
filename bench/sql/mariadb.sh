#!/usr/bin/env bash
# bench/sql/mariadb.sh - idmint_udf's uuid_v7() against MariaDB's builtin
# UUID() (version 1), side by side in one session (mariadb/README.md has
# the figures):
#
#   bench/sql/mariadb.sh [--build DIR] [--calls N] [--rows M] [--rounds R]
#                        [--buffer-pool SIZE] [--quick]
#
# Needs DIR/idmint_udf.so (default build/; cmake --build build first).
# Starts a throwaway MariaDB (tests/coord/mariadb.sh) with --plugin-dir on
# a copy of the module, runs mariadb/install.sql, writes a node file for
# snowflake(), and runs everything in ONE connection. The server runs with
# --innodb-buffer-pool-size=SIZE (default 32M, so that the tables of the
# inserts outgrow it, as a real table outgrows a real pool) and
# --innodb-flush-log-at-trx-commit=0:
#
#   per call, N rows (default 1,000,000; --quick: 100,000):
#       SELECT MAX(seq + 1) FROM seq_1_to_N              (the empty loop;
#                                  MAX(seq) the sequence engine answers
#                                  without reading a row)
#       SELECT MAX(f) FROM seq_1_to_N
#     (MAX, not COUNT: COUNT(f) of a NOT NULL f does not call f)
#     for f = UUID(), uuid_v7(), uuid_v4(), uuid_v7_bin(), ulid(),
#     snowflake(), UUID_SHORT();
#   as insert keys, M rows (default 300,000; --quick: 50,000) into a fresh
#   InnoDB table (id TYPE PRIMARY KEY, n INT) in one statement:
#       CHAR(36) ascii   UUID()                      uuid_v7()
#       UUID             UUID()                      CAST(uuid_v7() AS CHAR)
#       BINARY(16)       UNHEX(REPLACE(UUID(),'-','')) uuid_v7_bin()
#     and BIGINT snowflake().
#
# R rounds (default 3; --quick: 1), each statement timed by the server
# (SYSDATE(6) before and after it, so no client time is in a figure); each
# round runs the statements in another order. Prints a markdown table of
# the median seconds per million rows (per call: net of the empty loop)
# and the ratios UUID() / uuid_v7() of the same round (median). A report,
# not a test: nothing is asserted; non-zero only when something failed to
# run. The server is stopped and its directory removed on exit.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
    sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}
bad_usage() {
    echo "bench/sql/mariadb.sh: $* (--build DIR, --calls N, --rows M, --rounds R, --buffer-pool SIZE, --quick; --help)" >&2
    exit 2
}
build=$ROOT/build calls='' rows='' rounds='' quick=0 pool=32M
while [ $# -gt 0 ]; do
    case $1 in
    --build | --calls | --rows | --rounds | --buffer-pool)
        [ $# -ge 2 ] || bad_usage "$1 wants a value"
        case $1 in
        --build) build=$2 ;;
        --calls) calls=$2 ;;
        --rows) rows=$2 ;;
        --rounds) rounds=$2 ;;
        --buffer-pool) pool=$2 ;;
        esac
        shift 2
        ;;
    --quick)
        quick=1
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) bad_usage "unknown argument $1" ;;
    esac
done
if [ "$quick" = 1 ]; then
    calls=${calls:-100000} rows=${rows:-50000} rounds=${rounds:-1}
else
    calls=${calls:-1000000} rows=${rows:-300000} rounds=${rounds:-3}
fi
for v in "$calls" "$rows" "$rounds"; do
    case $v in '' | *[!0-9]* | 0*) bad_usage "counts are positive whole numbers" ;; esac
done
[ -f "$build/idmint_udf.so" ] || {
    echo "bench/sql/mariadb.sh: no $build/idmint_udf.so (cmake --build build)" >&2
    exit 1
}

# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/mariadb.sh
. "$ROOT/tests/coord/mariadb.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-bench-mariadb.XXXXXX")
trap 'stop_mariadb; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$T/plugin"
cp "$build/idmint_udf.so" "$T/plugin/"
case $pool in '' | *[!0-9KMG]*) bad_usage "--buffer-pool takes a size such as 32M" ;; esac
MARIADB_OPTS="--plugin-dir=$T/plugin --innodb-buffer-pool-size=$pool --innodb-flush-log-at-trx-commit=0"
start_mariadb "$T/db" >&2 || exit 1
printf 'snowflake_node = 1\n' >"$MARIADB_DIR/data/idmint_udf.cnf"
mariadb_sql <"$ROOT/mariadb/install.sql" || exit 1

# The statements, by name: per call (the loop) and per insert.
declare -A SQL
names_call=(empty 'UUID()' 'uuid_v7()' 'uuid_v4()' 'uuid_v7_bin()' 'ulid()' 'snowflake()' 'UUID_SHORT()')
for f in "${names_call[@]}"; do
    if [ "$f" = empty ]; then
        SQL[$f]="SELECT MAX(seq + 1) FROM seq_1_to_$calls"
    else
        SQL[$f]="SELECT MAX($f) FROM seq_1_to_$calls"
    fi
done
# insert NAME TYPE EXPR
names_ins=()
insert() {
    names_ins+=("$1")
    SQL[$1]="CREATE OR REPLACE TABLE t (id $2 PRIMARY KEY, n INT) ENGINE=InnoDB;
        SET @t0 = SYSDATE(6); INSERT INTO t SELECT $3, seq FROM seq_1_to_$rows; SET @t1 = SYSDATE(6)"
}
insert 'CHAR(36) UUID()' 'CHAR(36) CHARACTER SET ascii' 'UUID()'
insert 'CHAR(36) uuid_v7()' 'CHAR(36) CHARACTER SET ascii' 'uuid_v7()'
insert 'UUID UUID()' UUID 'UUID()'
insert 'UUID CAST(uuid_v7() AS CHAR)' UUID 'CAST(uuid_v7() AS CHAR)'
insert 'BINARY(16) UNHEX(UUID())' 'BINARY(16)' "UNHEX(REPLACE(UUID(), '-', ''))"
insert 'BINARY(16) uuid_v7_bin()' 'BINARY(16)' 'uuid_v7_bin()'
insert 'BIGINT snowflake()' BIGINT 'snowflake()'

# One script for the whole run (one connection): each statement between
# two SYSDATE(6) readings, its microseconds selected as "NAME<TAB>us".
script=$T/run.sql
: >"$script"
all=("${names_call[@]}" "${names_ins[@]}")
for ((r = 0; r < rounds; r++)); do
    n=${#all[@]}
    for ((i = 0; i < n; i++)); do
        name=${all[$(((i + r) % n))]}
        # Insert names have a space (the column type first), call names none.
        case $name in
        *" "*) printf '%s;\n' "${SQL[$name]}" >>"$script" ;;
        *) printf 'SET @t0 = SYSDATE(6); %s INTO @ignored; SET @t1 = SYSDATE(6);\n' \
            "${SQL[$name]}" >>"$script" ;;
        esac
        printf "SELECT %d, '%s', TIMESTAMPDIFF(MICROSECOND, @t0, @t1);\n" "$r" "$name" >>"$script"
    done
done
echo "bench/sql/mariadb.sh: $(mariadb_sql -N -e 'SELECT VERSION()'), $calls calls, $rows insert rows," \
    "$rounds round(s), innodb_buffer_pool_size $pool" >&2
mariadb_sql -N -B idmint <"$script" >"$T/times" || exit 1
[ -n "${KEEP_TIMES:-}" ] && cp "$T/times" "$KEEP_TIMES"

python3 - "$T/times" "$calls" "$rows" "$rounds" <<'PYEOF'
import statistics, sys
path, calls, rows, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t = {}
for line in open(path):
    if line.count("\t") != 2:
        continue
    r, name, us = line.rstrip("\n").split("\t")
    t[(int(r), name)] = int(us) / 1e6
names = []
for (_, name) in t:
    if name not in names:
        names.append(name)
med = lambda xs: statistics.median(xs)
per_call = [n for n in names if n.endswith(")") and " " not in n]
inserts = [n for n in names if " " in n]
print("| per call (SELECT MAX(f) FROM seq_1_to_%d) | s per million, net of the empty loop |" % calls)
print("|---|---|")
print("| empty loop | %.3f |" % (med([t[(r, "empty")] for r in range(rounds)]) * 1e6 / calls))
for n in per_call:
    net = med([t[(r, n)] - t[(r, "empty")] for r in range(rounds)])
    print("| %s | %.3f |" % (n, net * 1e6 / calls))
print()
print("| insert %d rows, one statement | s per million |" % rows)
print("|---|---|")
for n in inserts:
    print("| %s | %.3f |" % (n, med([t[(r, n)] for r in range(rounds)]) * 1e6 / rows))
print()
ratio = lambda a, b, net: med([((t[(r, a)] - (t[(r, "empty")] if net else 0)) /
                                (t[(r, b)] - (t[(r, "empty")] if net else 0))) for r in range(rounds)])
print("| ratio (median over rounds) | UUID() / idmint |")
print("|---|---|")
print("| per call: UUID() / uuid_v7() | %.2f |" % ratio("UUID()", "uuid_v7()", True))
print("| insert CHAR(36): UUID() / uuid_v7() | %.2f |" % ratio("CHAR(36) UUID()", "CHAR(36) uuid_v7()", False))
print("| insert UUID: UUID() / CAST(uuid_v7() AS CHAR) | %.2f |" % ratio("UUID UUID()", "UUID CAST(uuid_v7() AS CHAR)", False))
print("| insert BINARY(16): UNHEX(UUID()) / uuid_v7_bin() | %.2f |" % ratio("BINARY(16) UNHEX(UUID())", "BINARY(16) uuid_v7_bin()", False))
PYEOF
