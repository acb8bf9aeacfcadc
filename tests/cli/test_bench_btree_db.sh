# test_bench_btree_db.sh - `idmint bench btree` against a real PostgreSQL
# and a real MariaDB (tests/coord/pg.sh and mariadb.sh start them on random
# loopback ports), as test_bench_btree.sh runs it on SQLite: every figure
# produced and sane (densities in (0,1] where reported, sizes growing with
# rows, WAL or redo bytes counted), JSON Lines, CSV and SVG well-formed;
# UUIDv4's leaves below monotonic keys' on PostgreSQL and more InnoDB leaf
# pages; unordered UUIDv7 at 1024 keys per millisecond below monotonic
# UUIDv7 on PostgreSQL, and not at 1 key per millisecond; the migration's
# two eras; a server that is not there.
# Usage: bash tests/cli/test_bench_btree_db.sh PATH_TO_IDMINT
# Without the servers it fails with IDM_COORD_REQUIRED=ON (scripts/test.sh
# installs them), and exits 77 (skipped) without.
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/cli/dbservers.sh
. "$(dirname "$0")/dbservers.sh"
PY=$T_DIR/check.py
cat >"$PY" <<'PYEOF'
import csv, json, sys
import xml.etree.ElementTree as ET

def fail(msg):
    print(msg)
    sys.exit(1)

what, path = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
lines = open(path).read().splitlines()
objs = [json.loads(l) for l in lines] if what not in ("csv", "svg") else []
by = {o.get("format"): o for o in objs}

if what == "sane":                  # DB ROWS FORMATS
    db, rows, formats = args[0], int(args[1]), args[2].split(",")
    if [o["format"] for o in objs] != formats:
        fail("formats %s" % [o["format"] for o in objs])
    for o in objs:
        if o["db"] != db or o["rows"] != rows:
            fail("db/rows %s" % o)
        if not (o["index_bytes"] > 0 and o["leaf_pages"] > 0 and o["rows_per_s"] > 0):
            fail("figures %s" % o)
        if db == "postgresql":
            if not (0 < o["leaf_density"] <= 1) or not (0 <= o["leaf_fragmentation"] <= 1):
                fail("density %s" % o)
            if not (o["wal_bytes"] > 0 and o["table_bytes"] > 0):
                fail("wal/table %s" % o)
            if o["bytes_written"] is not None:
                fail("bytes_written on PostgreSQL %s" % o)
        if db == "mysql":
            if o["leaf_density"] is not None and not (0 < o["leaf_density"] <= 1):
                fail("density %s" % o)
            if not o["wal_bytes"] > 0:
                fail("redo %s" % o)
        if not o["rate"] or o["rate"][-1][0] != rows:
            fail("rate %s" % o["rate"][:3])
elif what == "less":                # MEMBER A B: by[A][MEMBER] < by[B][MEMBER] (A B formats)
    m, a, b = args
    if not by[a][m] < by[b][m]:
        fail("%s: %s %s, %s %s" % (m, a, by[a][m], b, by[b][m]))
elif what == "close":               # MEMBER A B TOL: |A - B| <= TOL
    m, a, b, tol = args[0], args[1], args[2], float(args[3])
    if abs(by[a][m] - by[b][m]) > tol:
        fail("%s: %s %s, %s %s" % (m, a, by[a][m], b, by[b][m]))
elif what == "growing":             # FORMAT FILE2: index_bytes here < in FILE2
    f, other = args
    b = {json.loads(l)["format"]: json.loads(l) for l in open(other).read().splitlines()}
    if not by[f]["index_bytes"] < b[f]["index_bytes"]:
        fail("index_bytes %s then %s" % (by[f]["index_bytes"], b[f]["index_bytes"]))
elif what == "migrate":             # ROWS
    if [(o["format"], o["era"]) for o in objs] != [("uuidv4", 1), ("uuidv7", 2)]:
        fail("eras %s" % objs)
    for o in objs:
        if o["rows"] != int(args[0]) or not o["page_splits"] > 0:
            fail("era %s" % o)
        if not (0 < o["era_leaf_density"] <= 1):
            fail("era_leaf_density %s" % o)
elif what == "csv":                 # N rows
    rows = list(csv.reader(open(path, newline="")))
    if rows[0][0] != "format" or len(rows) != 1 + int(args[0]) or any(len(r) != len(rows[0]) for r in rows):
        fail("csv %s" % rows[:3])
elif what == "svg":
    root = ET.parse(path).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        fail("root " + root.tag)
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for word in args:
        if word not in text:
            fail("no %r in the chart's text" % word)
PYEOF

# texpect EVIDENCE ACTUAL OP WANT (OP: = !=, =~ and !=~ for an ERE).
texpect() {
    local ok=0
    case $3 in
    =) [ "$2" = "$4" ] && ok=1 ;;
    !=) [ "$2" != "$4" ] && ok=1 ;;
    =~) [[ $2 =~ $4 ]] && ok=1 ;;
    !=~) [[ $2 =~ $4 ]] || ok=1 ;;
    esac
    tcheck "$1" "$([ $ok = 1 ] || printf "  expected: '%.600s' %s '%s'" "$2" "$3" "$4")"
}

# py CHECK FILE ARGS...: one case.
py() {
    local what=$1 out
    out=$(python3 "$PY" "$@" 2>&1)
    tcheck "$what $(basename "$2") ${*:3}" "$out"
}

bench() {
    "$IDMINT" bench btree "$@" 2>>"$T_DIR/stderr"
}

ALL=bigint,uuidv4,uuidv7,uuidv7-unordered,ulid,ksuid,snowflake

# --- PostgreSQL ---------------------------------------------------------------
if start_pg "$T_DIR/pg"; then
    URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
    bench --db "$URL" --rows 20000 --formats "$ALL" --json --chart "$T_DIR/pg.svg" >"$T_DIR/pg.jsonl"
    tcheck "bench btree on PostgreSQL exits 0" "$([ $? = 0 ] || tail -n 5 "$T_DIR/stderr")"
    py sane "$T_DIR/pg.jsonl" postgresql 20000 "$ALL"
    py less "$T_DIR/pg.jsonl" leaf_density uuidv4 uuidv7
    py less "$T_DIR/pg.jsonl" leaf_density uuidv4 bigint
    py less "$T_DIR/pg.jsonl" index_bytes uuidv7 uuidv4
    py svg "$T_DIR/pg.svg" PostgreSQL uuidv4 uuidv7 snowflake
    bench --db "$URL" --rows 5000 --formats uuidv4,uuidv7 --json >"$T_DIR/pg-small.jsonl"
    py growing "$T_DIR/pg-small.jsonl" uuidv4 "$T_DIR/pg.jsonl"
    py growing "$T_DIR/pg-small.jsonl" uuidv7 "$T_DIR/pg.jsonl"
    # Keys per millisecond: shared by 1024, unordered v7 scatters within
    # each millisecond's range; one per millisecond it is as ordered as v7.
    bench --db "$URL" --rows 30000 --formats uuidv7,uuidv7-unordered --keys-per-ms 1024 --json >"$T_DIR/kpm1024.jsonl"
    py less "$T_DIR/kpm1024.jsonl" leaf_density uuidv7-unordered uuidv7
    bench --db "$URL" --rows 30000 --formats uuidv7,uuidv7-unordered --keys-per-ms 1 --json >"$T_DIR/kpm1.jsonl"
    py close "$T_DIR/kpm1.jsonl" leaf_density uuidv7-unordered uuidv7 0.02
    bench --db "$URL" --rows 10000 --scenario migrate --json >"$T_DIR/migrate.jsonl"
    py migrate "$T_DIR/migrate.jsonl" 10000
    bench --db "$URL" --rows 2000 --formats uuidv7,ksuid --csv >"$T_DIR/pg.csv"
    py csv "$T_DIR/pg.csv" 2
    left=$(pg_psql -At -c "SELECT string_agg(tablename, ',') FROM pg_tables WHERE tablename LIKE 'idmint\\_bench\\_%'")
    texpect "no idmint_bench_ table is left on PostgreSQL" "$left" = ""
    stop_pg fast
    out=$("$IDMINT" bench btree --db "$URL" --rows 10 2>&1)
    texpect "a PostgreSQL that is gone: exit 1" "$?" = 1
    texpect "... naming it" "$out" =~ "idmint: bench btree: .*127.0.0.1:$PG_PORT"
else
    tcheck "PostgreSQL starts" "it did not"
fi

# --- MariaDB --------------------------------------------------------------------
export MARIADB_OPTS="--innodb-buffer-pool-size=32M --innodb-flush-log-at-trx-commit=0"
if start_mariadb "$T_DIR/mariadb"; then
    bench --db "$MARIADB_URL" --rows 20000 --formats "$ALL" --json --chart "$T_DIR/my.svg" >"$T_DIR/my.jsonl"
    tcheck "bench btree on MariaDB exits 0" "$([ $? = 0 ] || tail -n 5 "$T_DIR/stderr")"
    py sane "$T_DIR/my.jsonl" mysql 20000 "$ALL"
    py less "$T_DIR/my.jsonl" leaf_pages uuidv7 uuidv4
    py svg "$T_DIR/my.svg" MariaDB uuidv4 ksuid
    out=$("$IDMINT" bench btree --db "$MARIADB_URL" --rows 10 --formats uuidv7 2>&1 >/dev/null)
    pass_word=${MARIADB_URL#*://*:}
    pass_word=${pass_word%%@*}
    texpect "the password is not shown" "$out" !=~ "$pass_word"
    stop_mariadb
else
    tcheck "MariaDB starts" "it did not"
fi
finish
