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
# Where pg_uuidv7 itself is installed into the same server (make install
# in DIR), also, side by side (pg_uuidv7 in schema u7, pg_idmint in idm):
#   - the five functions are declared alike (arguments and defaults,
#     result, volatility, parallel safety, strictness, leakproof);
#   - 10,000 random times from 1970 to 10889 (to the microsecond, in a
#     session zone not UTC): zero => true gives the same UUID from both, for
#     timestamptz and timestamp; with random bits the same time bits;
#   - 10,000 random v4 UUIDs and 10,000 v7 from each: both decoders give
#     the same timestamptz and timestamp;
#   - pg/README.md's "Migrating from pg_uuidv7" block, as written, on a
#     table whose default is pg_uuidv7's uuid_generate_v7(): it commits, the
#     default is then pg_idmint's, pg_uuidv7 is gone.
#
# Usage: bash tests/pg/pg_uuidv7_suite.sh DIR   DIR: a pg_uuidv7 checkout
# (git clone https://github.com/fboulnois/pg_uuidv7). Prints pg_regress's
# lines and "N of M files pass"; exits non-zero when a check fails, 77
# without DIR.
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

# Side by side with pg_uuidv7 itself, where it is installed.
P() {
    "$PG_BIN/psql" -X -At -v ON_ERROR_STOP=1 -h "$PG_DIR/sock" -p "$PG_PORT" -U postgres -d "${PDB:-postgres}" "$@" 2>&1
}
if [ "$(P -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_uuidv7'")" != 1 ]; then
    echo "# pg_uuidv7 is not installed into this server (make install in $SRC): no side-by-side checks"
    stop_pg
    finish
fi
FIVE="'uuid_generate_v7', 'uuid_v7_to_timestamptz', 'uuid_v7_to_timestamp', 'uuid_timestamptz_to_v7', 'uuid_timestamp_to_v7'"
P -q -c "CREATE DATABASE side" && PDB=side P -q -c "CREATE SCHEMA u7" -c "CREATE EXTENSION pg_uuidv7 SCHEMA u7" \
    -c "CREATE SCHEMA idm" -c "CREATE EXTENSION pg_idmint SCHEMA idm"
out=$(PDB=side P -c "
WITH d AS (SELECT n.nspname AS s, p.proname, pg_get_function_arguments(p.oid) AS args,
                  p.prorettype::regtype::text AS result, p.provolatile, p.proparallel, p.proisstrict, p.proleakproof
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname IN ('u7', 'idm') AND p.proname IN ($FIVE)),
     a AS (SELECT proname, args, result, provolatile, proparallel, proisstrict, proleakproof FROM d WHERE s = 'u7'),
     b AS (SELECT proname, args, result, provolatile, proparallel, proisstrict, proleakproof FROM d WHERE s = 'idm')
SELECT (SELECT count(*) FROM a) || ' ' || (SELECT count(*) FROM b) || ' ' ||
       (SELECT count(*) FROM ((SELECT * FROM a EXCEPT SELECT * FROM b) UNION ALL (SELECT * FROM b EXCEPT SELECT * FROM a)) x)")
expect "pg_uuidv7's five functions and pg_idmint's are declared alike (pg_uuidv7's, pg_idmint's, differing)" "$out" = "5 5 0"
out=$(PDB=side P -q -c "SET TimeZone = 'America/New_York'" -c "
WITH t AS (SELECT to_timestamp(random() * 281474976710.655) AS tz FROM generate_series(1, 10000))
SELECT count(*) FILTER (WHERE u7.uuid_timestamptz_to_v7(tz, true) = idm.uuid_timestamptz_to_v7(tz, true)) || ' ' ||
       count(*) FILTER (WHERE u7.uuid_timestamp_to_v7(tz::timestamp, true) = idm.uuid_timestamp_to_v7(tz::timestamp, true)) || ' ' ||
       count(*) FILTER (WHERE substr(u7.uuid_timestamptz_to_v7(tz)::text, 1, 15) = substr(idm.uuid_timestamptz_to_v7(tz)::text, 1, 15))
FROM t")
expect "10,000 random times: the same UUID with zero => true (timestamptz, timestamp), the same time bits with random ones" \
    "$out" = "10000 10000 10000"
out=$(PDB=side P -q -c "SET TimeZone = 'Asia/Tokyo'" -c "
WITH u AS (SELECT gen_random_uuid() AS a, u7.uuid_generate_v7() AS b, idm.uuid_generate_v7() AS c
           FROM generate_series(1, 10000))
SELECT count(*) FILTER (WHERE u7.uuid_v7_to_timestamptz(a) = idm.uuid_v7_to_timestamptz(a)
                          AND u7.uuid_v7_to_timestamp(a) = idm.uuid_v7_to_timestamp(a)) || ' ' ||
       count(*) FILTER (WHERE u7.uuid_v7_to_timestamptz(b) = idm.uuid_v7_to_timestamptz(b)
                          AND u7.uuid_v7_to_timestamp(b) = idm.uuid_v7_to_timestamp(b)) || ' ' ||
       count(*) FILTER (WHERE u7.uuid_v7_to_timestamptz(c) = idm.uuid_v7_to_timestamptz(c)
                          AND u7.uuid_v7_to_timestamp(c) = idm.uuid_v7_to_timestamp(c))
FROM u")
expect "10,000 v4, pg_uuidv7's and pg_idmint's v7: both decoders agree on each (v4, pg_uuidv7's v7, pg_idmint's v7)" \
    "$out" = "10000 10000 10000"

# The README's migration, as written.
awk '/^Migrating from pg_uuidv7/ { f = 1 } f && /^```sql$/ { g = 1; next } g && /^```$/ { exit } g { print }' \
    "$PGT_ROOT/pg/README.md" >"$T_DIR/migrate.sql"
P -q -c "CREATE DATABASE mig" && PDB=mig P -q -c "CREATE EXTENSION pg_uuidv7" \
    -c "CREATE TABLE orders (id uuid PRIMARY KEY DEFAULT uuid_generate_v7(), n int)" \
    -c "INSERT INTO orders (n) SELECT generate_series(1, 3)"
out=$(PDB=mig P -f "$T_DIR/migrate.sql")
rc=$?
expect "pg/README.md's migration block from pg_uuidv7 runs as written (psql exit 0)" "$rc" = 0 ||
    printf '%s\n' "$out" | sed 's/^/  /'
out=$(PDB=mig P -c "INSERT INTO orders (n) VALUES (4)" -c "
SELECT (SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension WHERE extname LIKE 'pg_%') || ' ' ||
       (SELECT count(*) FROM orders) || ' ' ||
       (SELECT p.oid::regprocedure::text || '@' || e.extname FROM pg_depend d
        JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND ad.adrelid = 'orders'::regclass
        JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND d.refobjid = p.oid
        JOIN pg_depend de ON de.classid = 'pg_proc'::regclass AND de.objid = p.oid AND de.deptype = 'e'
        JOIN pg_extension e ON e.oid = de.refobjid)")
expect "after the migration: pg_uuidv7 gone, the rows kept and a new one made, the default is pg_idmint's" \
    "$out" = "INSERT 0 1"$'\n'"pg_idmint 4 uuid_generate_v7()@pg_idmint"
stop_pg
finish
