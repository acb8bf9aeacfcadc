#!/usr/bin/env bash
# test_mariadb.sh - idmint_udf (mariadb/) in a real MariaDB server that
# tests/coord/mariadb.sh starts on a random loopback port: the install
# rule (cmake --install --component mariadb into a DESTDIR copy, and the
# server started with --plugin-dir pointing there), install.sql and
# uninstall.sql, every function (values parse, versions and variants,
# timestamps, one value per row, bad arguments refused at _init),
# snowflake()'s node from DATADIR/idmint_udf.cnf, the UUID column
# (uuid_v7 keeps its time order in it on this server), and 8 concurrent
# connections inserting uuid_v7() and snowflake() primary keys through a
# kill -9 of mysqld and a restart: no duplicate key, ever; restarts with
# mysqld's clock set back (libfaketime): snowflake() waits out 0.5 s and
# refuses 5 s, never minting below the IDs before.
# Usage: bash tests/mariadb/test_mariadb.sh BUILD_DIR
# Without MariaDB it fails with IDM_COORD_REQUIRED=ON, and is skipped (77)
# without.
set -u
BUILD=${1:?usage: bash $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
COORD_DIR=$SRC/tests/coord
# shellcheck source=tests/coord/services.sh
. "$COORD_DIR/services.sh"
# shellcheck source=tests/coord/mariadb.sh
. "$COORD_DIR/mariadb.sh"
export LC_ALL=C

if ! mariadb_installed || [ ! -f "$BUILD/idmint_udf.so" ]; then
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "test_mariadb.sh: MariaDB (mariadb-server) or build/idmint_udf.so is missing: FAIL" >&2
        exit 1
    fi
    echo "test_mariadb.sh: needs mariadb-server and idmint_udf.so; skipped"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-mariadb.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); }
fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL: $*" >&2
}
# check WHAT EXPECTED ACTUAL
check() {
    if [ "$2" = "$3" ]; then
        pass
    else
        fail "$1: expected <$2>, got <$3>"
    fi
}
# q SQL: one value (or rows, tab-separated) as root in the database idmint.
q() {
    mariadb_sql -N -B idmint -e "$1" 2>&1
}
# refused SQL PATTERN: the statement fails and its message matches PATTERN.
refused() {
    local out
    if out=$(mariadb_sql -N -B idmint -e "$1" 2>&1); then
        fail "$1: succeeded ($out), expected an error like /$2/"
    elif printf '%s' "$out" | grep -q -- "$2"; then
        pass
    else
        fail "$1: expected an error like /$2/, got <$out>"
    fi
}

# --- the install rule: a DESTDIR copy of the plugin directory ----------------
if ! DESTDIR=$T/root cmake --install "$BUILD" --component mariadb >"$T/install.log" 2>&1; then
    fail "cmake --install --component mariadb: $(cat "$T/install.log")"
fi
SO=$(find "$T/root" -name idmint_udf.so | head -n 1)
if [ -z "$SO" ]; then
    fail "cmake --install --component mariadb installed no idmint_udf.so"
    echo "0 passed, $FAILED failed"
    exit 1
fi
PLUGIN_DIR=$(dirname "$SO")
# The server's plugin directory must not be writable by others.
chmod -R go-w "$T/root"
# mysqld runs as root here (tests/coord/mariadb.sh): the DESTDIR is private.

# A global: restart_mariadb starts the server with the same options.
MARIADB_OPTS="--plugin-dir=$PLUGIN_DIR"
start_mariadb "$T/db" || exit 1
check "plugin_dir" "$PLUGIN_DIR" "$(q 'SELECT @@plugin_dir' | sed 's:/$::')"
# mysqld's working directory is its data directory (where idmint_udf.cnf lives).
check "mysqld's cwd" "$(cd "$MARIADB_DIR/data" && pwd -P)" "$(readlink "/proc/$MARIADB_PID/cwd")"

# --- install.sql, twice (it replaces), uninstall.sql, install again ----------
for round in 1 2; do
    out=$(mariadb_sql <"$SRC/mariadb/install.sql" 2>&1)
    check "install.sql round $round" "" "$out"
done
check "functions in mysql.func" \
    "snowflake int|ulid string|uuid_v4 string|uuid_v7 string|uuid_v7_bin string|uuid_v7_timestamp int" \
    "$(q "SELECT name, ret FROM mysql.func ORDER BY name" | sed 's/\t0$/ string/; s/\t2$/ int/' |
        tr '\n' '|' | sed 's/|$//')"
check "uninstall.sql" "" "$(mariadb_sql <"$SRC/mariadb/uninstall.sql" 2>&1)"
check "no functions after uninstall.sql" "0" "$(q 'SELECT COUNT(*) FROM mysql.func')"
check "uninstall.sql again" "" "$(mariadb_sql <"$SRC/mariadb/uninstall.sql" 2>&1)"
check "install.sql after uninstall.sql" "" "$(mariadb_sql <"$SRC/mariadb/install.sql" 2>&1)"

# --- values --------------------------------------------------------------------
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
v7=$(q 'SELECT uuid_v7()')
check "uuid_v7() is a UUID" 1 "$(q "SELECT '$v7' REGEXP '$UUID_RE'")"
check "uuid_v7() version, variant" "7 1" \
    "$(q "SELECT SUBSTR('$v7', 15, 1), CONV(SUBSTR('$v7', 20, 1), 16, 10) DIV 4 = 2" | tr '\t' ' ')"
v4=$(q 'SELECT uuid_v4()')
check "uuid_v4() is a UUID" 1 "$(q "SELECT '$v4' REGEXP '$UUID_RE'")"
check "uuid_v4() version, variant" "4 1" \
    "$(q "SELECT SUBSTR('$v4', 15, 1), CONV(SUBSTR('$v4', 20, 1), 16, 10) DIV 4 = 2" | tr '\t' ' ')"
check "uuid_v7_bin() is 16 bytes of a v7" "16 7" \
    "$(q "SELECT LENGTH(b), SUBSTR(HEX(b), 13, 1) FROM (SELECT uuid_v7_bin() b) x" | tr '\t' ' ')"
check "ulid() is a ULID" 1 "$(q "SELECT ulid() REGEXP BINARY '^[0-7][0-9A-HJKMNP-TV-Z]{25}\$'")"
# The server's clock and the UUID's agree to within a minute (no timing: the
# same clock read twice).
check "uuid_v7_timestamp(uuid_v7()) is now" 1 \
    "$(q 'SELECT ABS(uuid_v7_timestamp(uuid_v7()) - UNIX_TIMESTAMP(NOW(3)) * 1000) < 60000')"
check "uuid_v7_timestamp(uuid_v7_bin()) is now" 1 \
    "$(q 'SELECT ABS(uuid_v7_timestamp(uuid_v7_bin()) - UNIX_TIMESTAMP(NOW(3)) * 1000) < 60000')"
# RFC 9562 appendix A.6: 017F22E2-79B0-7CC3-98C4-DC0C0C07398F is Tuesday,
# February 22, 2022 2:22:22.00 PM GMT-05:00.
check "uuid_v7_timestamp(RFC 9562 A.6)" 1645557742000 \
    "$(q "SELECT uuid_v7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F')")"
check "uuid_v7_timestamp(32 hex digits, braces, urn)" "1645557742000 1645557742000 1645557742000" \
    "$(q "SELECT uuid_v7_timestamp('017f22e279b07cc398c4dc0c0c07398f'),
                 uuid_v7_timestamp('{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}'),
                 uuid_v7_timestamp('urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f')" | tr '\t' ' ')"
check "uuid_v7_timestamp(UNHEX(...)) (16 bytes)" 1645557742000 \
    "$(q "SELECT uuid_v7_timestamp(UNHEX('017F22E279B07CC398C4DC0C0C07398F'))")"
check "uuid_v7_timestamp of a v4, garbage, NULL, '', 15 bytes" "NULL NULL NULL NULL NULL" \
    "$(q "SELECT uuid_v7_timestamp(uuid_v4()), uuid_v7_timestamp('not a uuid'),
                 uuid_v7_timestamp(NULL), uuid_v7_timestamp(''), uuid_v7_timestamp(REPEAT('a', 15))" |
        tr '\t' ' ')"
# A v1 from the server's UUID() carries a time too.
check "uuid_v7_timestamp(UUID()) (v1) is now" 1 \
    "$(q 'SELECT ABS(uuid_v7_timestamp(UUID()) - UNIX_TIMESTAMP(NOW(3)) * 1000) < 60000')"
check "uuid_v7_timestamp of a UUID column" 1645557742000 \
    "$(q "SELECT uuid_v7_timestamp(CAST('017f22e2-79b0-7cc3-98c4-dc0c0c07398f' AS UUID))")"

# One value per row (not a constant), strictly increasing in mint order.
q "CREATE TABLE m (n INT PRIMARY KEY, v7 CHAR(36) CHARACTER SET ascii, b BINARY(16), u CHAR(26));
   INSERT INTO m SELECT seq, uuid_v7(), uuid_v7_bin(), ulid() FROM seq_1_to_100000" >/dev/null
check "100000 distinct uuid_v7(), uuid_v7_bin(), ulid()" "100000 100000 100000" \
    "$(q 'SELECT COUNT(DISTINCT v7), COUNT(DISTINCT b), COUNT(DISTINCT u) FROM m' | tr '\t' ' ')"
check "uuid_v7(), uuid_v7_bin(), ulid() increase with the row" "0 0 0" \
    "$(q 'SELECT SUM(v7 <= p7), SUM(b <= pb), SUM(u <= pu) FROM (SELECT v7, b, u,
              LAG(v7) OVER (ORDER BY n) p7, LAG(b) OVER (ORDER BY n) pb,
              LAG(u) OVER (ORDER BY n) pu FROM m) x' | tr '\t' ' ')"
check "100000 distinct uuid_v4()" 100000 \
    "$(q 'SELECT COUNT(DISTINCT uuid_v4()) FROM seq_1_to_100000')"

# --- bad arguments: refused by _init, with the reason ---------------------------
for f in uuid_v7 uuid_v4 uuid_v7_bin ulid snowflake; do
    refused "SELECT $f(1)" "$f() takes no arguments, got 1"
done
refused "SELECT uuid_v7_timestamp()" "uuid_v7_timestamp(X) takes one argument, got 0"
refused "SELECT uuid_v7_timestamp('a', 'b')" "uuid_v7_timestamp(X) takes one argument, got 2"
refused "SELECT uuid_v7_timestamp(5)" "X must be a UUID as text or BINARY(16), not a number"

# --- snowflake(): the node is the operator's (DATADIR/idmint_udf.cnf) -----------
refused "SELECT snowflake()" "snowflake(): no node: put snowflake_node = N in DATADIR/idmint_udf.cnf"
printf 'snowflake_node = 5000\n' >"$MARIADB_DIR/data/idmint_udf.cnf"
refused "SELECT snowflake()" "node"
printf 'snowflake_nod = 7\n' >"$MARIADB_DIR/data/idmint_udf.cnf"
refused "SELECT snowflake()" "idmint_udf.cnf:1: unknown setting snowflake_nod"
printf '# the node of this server\n\nsnowflake_node = 7\nsnowflake_layout = twitter\n' \
    >"$MARIADB_DIR/data/idmint_udf.cnf"
sf=$(q 'SELECT snowflake()')
check "snowflake() is a positive BIGINT" 1 "$(q "SELECT $sf > 0")"
check "snowflake()'s node (twitter layout)" 7 "$(q "SELECT ($sf >> 12) & 1023")"
check "snowflake()'s time is now" 1 \
    "$(q "SELECT ABS(($sf >> 22) + 1288834974657 - UNIX_TIMESTAMP(NOW(3)) * 1000) < 60000")"
check "snowflake()'s files are no database" 0 \
    "$(q "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE '%#%'")"
check "snowflake()'s files in the data directory" 2 \
    "$(find "$MARIADB_DIR/data" -maxdepth 1 -name 'snowflake-7-*' | wc -l)"
q "CREATE TABLE s (n INT PRIMARY KEY, id BIGINT); INSERT INTO s SELECT seq, snowflake() FROM seq_1_to_100000" \
    >/dev/null
check "100000 snowflake() distinct and increasing" "100000 0" \
    "$(q 'SELECT COUNT(DISTINCT id), SUM(id <= p) FROM (SELECT id, LAG(id) OVER (ORDER BY n) p FROM s) x' |
        tr '\t' ' ')"

# --- the UUID column ----------------------------------------------------------
# A UDF's string is of the binary character set, and 10.11's UUID type
# refuses a 36-byte binary string: CAST(... AS CHAR) or uuid_v7_bin().
q "CREATE TABLE uc (id UUID PRIMARY KEY, n INT)" >/dev/null
refused "INSERT INTO uc VALUES (uuid_v7(), 0)" "Incorrect uuid value"
check "CAST(uuid_v7() AS CHAR) and uuid_v7_bin() into a UUID column" "" \
    "$(q "INSERT INTO uc SELECT CAST(uuid_v7() AS CHAR), seq FROM seq_1_to_50000;
          INSERT INTO uc SELECT uuid_v7_bin(), seq FROM seq_50001_to_100000")"
check "a UUID column keeps the text of uuid_v7()" "1" \
    "$(q "SELECT COUNT(*) = 100000 FROM uc
          WHERE CAST(id AS CHAR) REGEXP '$UUID_RE' AND SUBSTR(id, 15, 1) = '7'")"
# The ordering fact (README.md): ORDER BY a UUID column of v7 values is
# their mint order on this server (10.11 swaps only version 1's fields).
check "ORDER BY a UUID column of uuid_v7() is mint order" 0 \
    "$(q 'SELECT COUNT(*) FROM (SELECT n, LAG(n) OVER (ORDER BY id) p FROM uc) x WHERE p > n')"

# The same fact measured by idmint bench btree (README.md's figures): UUIDv7
# keys in a UUID column (?key=uuid) beside BINARY(16), UUIDv4 as the
# contrast; the kept UUID table's ORDER BY is its insert order (n).
for k in binary uuid; do
    url=$MARIADB_URL
    [ "$k" = uuid ] && url="$MARIADB_URL?key=uuid"
    if ! "$BUILD/idmint" bench btree --db "$url" --formats uuidv4,uuidv7 --rows 100000 --json \
        --keep >"$T/btree.$k" 2>"$T/btree.$k.err"; then
        fail "bench btree --db ...$k: $(cat "$T/btree.$k.err")"
    fi
done
leaves() { # FILE FORMAT
    sed -n "s/.*\"format\": \"$2\".*\"leaf_pages\": \([0-9]*\),.*/\1/p" "$1"
}
echo "bench btree, 100000 rows, leaf pages: BINARY(16) v7 $(leaves "$T/btree.binary" uuidv7)" \
    "v4 $(leaves "$T/btree.binary" uuidv4); UUID v7 $(leaves "$T/btree.uuid" uuidv7)" \
    "v4 $(leaves "$T/btree.uuid" uuidv4)"
check "bench btree ?key=uuid made a UUID column" 1 \
    "$(q "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'idmint'
          AND table_name = 'idmint_bench_uuidv7' AND column_name = 'id' AND data_type = 'uuid'")"
check "bench btree: ORDER BY the UUID column of v7 keys is mint order" 0 \
    "$(q 'SELECT COUNT(*) FROM (SELECT n, LAG(n) OVER (ORDER BY id) p FROM idmint_bench_uuidv7) x
          WHERE p > n')"
check "bench btree: v7 in a UUID column takes fewer leaf pages than v4" 1 \
    "$(q "SELECT $(leaves "$T/btree.uuid" uuidv7) < $(leaves "$T/btree.uuid" uuidv4)")"
check "bench btree: v7 takes as many leaf pages in a UUID column as in BINARY(16)" \
    "$(leaves "$T/btree.binary" uuidv7)" "$(leaves "$T/btree.uuid" uuidv7)"

# --- 8 connections, kill -9 of mysqld, restart: no duplicate key -----------------
q "CREATE TABLE k7 (id CHAR(36) CHARACTER SET ascii PRIMARY KEY, w INT, ph INT);
   CREATE TABLE ks (id BIGINT PRIMARY KEY, w INT, ph INT)" >/dev/null
# client W PHASE ROUNDS: ROUNDS statements of 200 rows into each table; stops
# at the first error that is not a duplicate (the server went away).
client() {
    local w=$1 ph=$2 rounds=$3 i out
    for ((i = 0; i < rounds; i++)); do
        if ! out=$(mariadb_sql -N -B idmint -e "
            INSERT INTO ks (id, w, ph) SELECT snowflake(), $w, $ph FROM seq_1_to_200;
            INSERT INTO k7 (id, w, ph) SELECT uuid_v7(), $w, $ph FROM seq_1_to_200" 2>&1); then
            printf '%s\n' "$out" >>"$T/client.$w.$ph"
            printf '%s' "$out" | grep -q 'Duplicate entry' || break
        fi
    done
}
pids=()
for w in 1 2 3 4 5 6 7 8; do
    client "$w" 1 1000 &
    pids+=($!)
done
# kill -9 once the clients have inserted (a count, not a time).
for ((i = 0; i < 600; i++)); do
    [ "$(q 'SELECT COUNT(*) >= 20000 FROM ks' 2>/dev/null)" = 1 ] && break
    sleep 0.1
done
kill -KILL "$MARIADB_PID"
wait "$MARIADB_PID" 2>/dev/null
wait "${pids[@]}"
restart_mariadb || exit 1
before_sf=$(q 'SELECT COUNT(*), MAX(id) FROM ks WHERE ph = 1')
before_7=$(q 'SELECT COUNT(*) FROM k7 WHERE ph = 1')
check "rows before the kill" 1 "$(q "SELECT ${before_sf%%	*} >= 20000 AND $before_7 > 0")"
pids=()
for w in 1 2 3 4 5 6 7 8; do
    client "$w" 2 25 &
    pids+=($!)
done
wait "${pids[@]}"
check "rows after the restart (8 x 25 x 200)" "40000 40000" \
    "$(q 'SELECT (SELECT COUNT(*) FROM ks WHERE ph = 2), (SELECT COUNT(*) FROM k7 WHERE ph = 2)' |
        tr '\t' ' ')"
dups=$(cat "$T"/client.* 2>/dev/null | grep -c 'Duplicate entry')
# What the connections were told after the restart (none is expected).
cat "$T"/client.*.2 2>/dev/null | sort | uniq -c | head -n 5 >&2
check "duplicate-key errors in any connection" 0 "$dups"
check "snowflake() after the restart is above every one before" 1 \
    "$(q "SELECT MIN(id) > ${before_sf##*	} FROM ks WHERE ph = 2")"
check "every key unique" "1 1" \
    "$(q 'SELECT COUNT(*) = COUNT(DISTINCT id) FROM ks; SELECT COUNT(*) = COUNT(DISTINCT id) FROM k7' |
        tr '\n' ' ' | sed 's/ $//')"

# --- restarts with the clock set back (libfaketime in mysqld) -----------------
# The host-wide state outlives mysqld: after a kill -9 and a restart whose
# clock reads 5 s behind the latest snowflake, snowflake() refuses (NULL,
# which the NOT NULL key refuses) rather than mint below it; 0.5 s behind,
# it waits that out and mints above it. A generator that trusted the clock
# would mint below the earlier IDs in both.
# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"
if [ ! -f "$FAKETIME_LIB" ]; then
    fail "libfaketime (faketime) is missing: the clock checks did not run"
else
    for back in -5 -0.5; do
        max_sf=$(q 'SELECT MAX(id) FROM ks')
        kill -KILL "$MARIADB_PID"
        wait "$MARIADB_PID" 2>/dev/null
        LD_PRELOAD=$FAKETIME_LIB FAKETIME=$back FAKETIME_DONT_FAKE_MONOTONIC=1 restart_mariadb || exit 1
        behind=$(($(date +%s%3N) - $(q 'SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS UNSIGNED)')))
        if [ "$back" = -5 ]; then
            check "mysqld's clock is behind (ms > 3000)" 1 "$([ "$behind" -gt 3000 ] && echo 1)"
            refused "INSERT INTO ks (id, w, ph) SELECT snowflake(), 0, 3 FROM seq_1_to_10" \
                "cannot be null"
            check "no snowflake() with the clock 5 s behind" 0 \
                "$(q 'SELECT COUNT(*) FROM ks WHERE ph = 3')"
        else
            check "mysqld's clock is behind (ms > 200)" 1 "$([ "$behind" -gt 200 ] && echo 1)"
            check "snowflake() with the clock 0.5 s behind" "" \
                "$(q 'INSERT INTO ks (id, w, ph) SELECT snowflake(), 0, 4 FROM seq_1_to_1000')"
            check "... is above every one before" "1000 1" \
                "$(q "SELECT COUNT(*), MIN(id) > $max_sf FROM ks WHERE ph = 4" | tr '\t' ' ')"
        fi
    done
    stop_mariadb
    restart_mariadb || exit 1
fi

# --- an upgrade's DROP FUNCTION (README.md): the module can be dropped live -----
check "uninstall.sql with the functions in use" "" "$(mariadb_sql <"$SRC/mariadb/uninstall.sql" 2>&1)"
refused "SELECT uuid_v7()" "FUNCTION idmint.uuid_v7 does not exist"

stop_mariadb
echo "test_mariadb.sh: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
