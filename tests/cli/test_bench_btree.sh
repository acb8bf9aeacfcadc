# test_bench_btree.sh - `idmint bench btree` (man/idmint.1, "bench btree";
# issue 12) without a database server: usage errors and
# their messages, --help, the keys per format (through `bench keys`, the
# diagnostic that mints them as the benchmark does), then small runs on
# SQLite, the embedded default: JSON Lines, CSV and SVG well-formed,
# densities in (0,1], index_bytes growing with rows, tables dropped
# afterwards (--keep keeps them), keys_per_ms reported, --scenario migrate.
# The SQLite part needs the dbbench component's SQLite backend and the
# sqlite3 tool; without them it is skipped, or with IDM_COORD_REQUIRED=ON
# a failure. PostgreSQL and MySQL runs are not tested here.
# Usage: bash tests/cli/test_bench_btree.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

D=$T_DIR/bench
mkdir -p "$D"
export D
PY=$T_DIR/check.py
export PY

# One checker for the keys and the outputs: python3 check.py WHAT FILE [ARGS].
cat >"$PY" <<'EOF'
import csv, json, sys
import xml.etree.ElementTree as ET
from collections import Counter

def fail(msg):
    print(msg)
    sys.exit(1)

what, path = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
lines = open(path).read().splitlines()

if what == "increasing":            # hex keys strictly increasing
    for a, b in zip(lines, lines[1:]):
        if not a < b:
            fail("not increasing: %s then %s" % (a, b))
elif what == "uuid":                # version V, RFC 9562 variant
    v = args[0]
    for k in lines:
        if len(k) != 32 or k[12] != v or k[16] not in "89ab":
            fail("bad version/variant: " + k)
elif what == "width":               # every key WIDTH bytes
    for k in lines:
        if len(k) != 2 * int(args[0]):
            fail("bad width: " + k)
elif what == "per_ms":              # exactly K keys per ms (48-bit prefix, or snowflake's)
    k, kind = int(args[0]), args[1]
    if kind == "snowflake":
        ms = Counter(int(x, 16) >> 22 for x in lines)
    else:
        ms = Counter(x[:12] for x in lines)
    bad = {m: n for m, n in ms.items() if n != k}
    if bad:
        fail("not %d per ms: %s" % (k, list(bad.items())[:3]))
elif what == "at_most_per_ms":      # snowflake: at most K per ms
    ms = Counter(int(x, 16) >> 22 for x in lines)
    if max(ms.values()) > int(args[0]):
        fail("more than %s in a ms" % args[0])
elif what == "unordered":           # some ms has its keys out of order
    groups = {}
    for x in lines:
        groups.setdefault(x[:12], []).append(x)
    if all(g == sorted(g) for g in groups.values()):
        fail("every millisecond's keys are in order")
elif what == "unique":
    if len(set(lines)) != len(lines):
        fail("duplicates")
elif what == "bigint":              # 1..N as 8-byte big-endian
    for i, x in enumerate(lines, 1):
        if int(x, 16) != i:
            fail("key %d is %s" % (i, x))
elif what == "json":                # N objects, formats in order, figures sane
    objs = [json.loads(l) for l in lines]
    formats = args[0].split(",")
    rows, kpm = int(args[1]), json.loads(args[2])
    if [o["format"] for o in objs] != formats:
        fail("formats %s" % [o["format"] for o in objs])
    need = ["format", "db", "db_version", "rows", "batch", "keys_per_ms", "seconds",
            "rows_per_s", "index_bytes", "leaf_pages", "leaf_density", "leaf_fragmentation",
            "table_bytes", "wal_bytes", "bytes_written", "buffer_reads", "buffer_writes", "rate"]
    for o in objs:
        for m in need:
            if m not in o:
                fail("no member %s in %s" % (m, o))
        if o["db"] != "sqlite" or not o["db_version"].startswith("SQLite "):
            fail("db %s %s" % (o["db"], o["db_version"]))
        if o["rows"] != rows or o["keys_per_ms"] != kpm:
            fail("rows %s keys_per_ms %s" % (o["rows"], o["keys_per_ms"]))
        if not (0 < o["leaf_density"] <= 1):
            fail("leaf_density %s" % o["leaf_density"])
        if not (o["index_bytes"] > 0 and o["leaf_pages"] > 0 and o["rows_per_s"] > 0):
            fail("figures %s" % o)
        if o["wal_bytes"] is not None:
            fail("wal_bytes on SQLite: %s" % o["wal_bytes"])
        r = o["rate"]
        if not r or r[-1][0] != rows or any(a[0] >= b[0] for a, b in zip(r, r[1:])):
            fail("rate %s" % r[:5])
        if len(r) > 102:
            fail("%d rate samples" % len(r))
elif what == "growing":             # index_bytes of FILE < of FILE2
    a = json.loads(lines[0])["index_bytes"]
    b = json.loads(open(args[0]).read().splitlines()[0])["index_bytes"]
    if not a < b:
        fail("index_bytes %s then %s" % (a, b))
elif what == "csv":                 # header + N rows, JSON's scalar members
    rows = list(csv.reader(open(path, newline="")))
    head = rows[0]
    want = ["format", "db", "db_version", "rows", "batch", "keys_per_ms", "seconds",
            "rows_per_s", "index_bytes", "leaf_pages", "leaf_density", "leaf_fragmentation",
            "table_bytes", "wal_bytes", "bytes_written", "buffer_reads", "buffer_writes"]
    if head != want:
        fail("header %s" % head)
    if len(rows) != 1 + int(args[0]):
        fail("%d rows" % (len(rows) - 1))
    for r in rows[1:]:
        if len(r) != len(head):
            fail("row %s" % r)
        d = dict(zip(head, r))
        if d["wal_bytes"] != "" or not (0 < float(d["leaf_density"]) <= 1):
            fail("row %s" % d)
elif what == "svg":                 # well-formed SVG naming the formats and the database
    root = ET.parse(path).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        fail("root " + root.tag)
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for word in args:
        if word not in text:
            fail("no %r in the chart's text" % word)
    if not list(root.iter("{http://www.w3.org/2000/svg}polyline")):
        fail("no line")
elif what == "migrate":
    objs = [json.loads(l) for l in lines]
    if [(o["format"], o["era"], o["scenario"]) for o in objs] != [("uuidv4", 1, "migrate"), ("uuidv7", 2, "migrate")]:
        fail("eras %s" % objs)
    for o in objs:
        if o["rows"] != int(args[0]):
            fail("rows %s" % o["rows"])
        if not (o["page_splits"] > 0 and o["leaf_pages_added"] == o["page_splits"]):
            fail("page_splits %s" % o)
        if not (0 < o["leaf_density"] <= 1 and 0 < o["era_leaf_density"] <= 1.5):
            fail("densities %s %s" % (o["leaf_density"], o["era_leaf_density"]))
    if not objs[1]["index_bytes"] > objs[0]["index_bytes"]:
        fail("index did not grow")
else:
    fail("unknown check " + what)
EOF

# --- help -------------------------------------------------------------------------

check "idmint COMMAND --help works: bench" \
    -O '(.|\n)*Usage: idmint bench btree(.|\n)*--keys-per-ms K(.|\n)*era_leaf_density(.|\n)*' -- \
    "$IDMINT" bench --help
check "idmint help bench is the same help" \
    -O '(.|\n)*Usage: idmint bench btree(.|\n)*' -- "$IDMINT" help bench
check "idmint --help lists bench btree" \
    -O '(.|\n)*bench btree(.|\n)*' -- "$IDMINT" --help

# --- usage errors (2), before any database is opened ------------------------------

check "bench without a subcommand: usage error" \
    -o '' -e "^idmint: bench needs a subcommand: btree" -s 2 -- "$IDMINT" bench
check "an unknown bench subcommand: usage error" \
    -o '' -e "^idmint: unknown bench subcommand 'frob' \(expected btree\)" -s 2 -- "$IDMINT" bench frob
check "a usage error points to the command's --help" \
    -o '' -e "Try 'idmint bench --help' for more information" -s 2 -- "$IDMINT" bench btree --rows 0
check "an unknown format: usage error naming it and the formats" \
    -o '' -e "^idmint: --formats: unknown format 'uuidv9' \(expected bigint, uuidv4, uuidv7, uuidv7-unordered, ulid, ksuid, snowflake\)" \
    -s 2 -- "$IDMINT" bench btree --db "sqlite:$D/u.db" --formats uuidv7,uuidv9
check "an empty name in --formats: usage error" \
    -o '' -e "^idmint: --formats 'ulid,': an empty format name" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --formats ulid,
check "a format listed twice: usage error" \
    -o '' -e "^idmint: --formats: 'ulid' is listed twice" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --formats ulid,uuidv4,ulid
check "--rows 0: usage error" \
    -o '' -e "^idmint: invalid --rows '0': out of range" -s 2 -- "$IDMINT" bench btree --db "sqlite:$D/u.db" --rows 0
check "--rows not a number: usage error" \
    -o '' -e "^idmint: invalid --rows 'many': not a whole number" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --rows many
check "--batch 0: usage error" \
    -o '' -e "^idmint: invalid --batch '0': out of range" -s 2 -- "$IDMINT" bench btree --db "sqlite:$D/u.db" --batch 0
check "--keys-per-ms 0: usage error" \
    -o '' -e "^idmint: invalid --keys-per-ms '0': out of range" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --keys-per-ms 0
check "--json and --csv together: usage error" \
    -o '' -e "^idmint: --json and --csv are exclusive" -s 2 -- "$IDMINT" bench btree --db "sqlite:$D/u.db" --json --csv
check "an unknown scenario: usage error" \
    -o '' -e "^idmint: --scenario: unknown scenario 'upgrade' \(expected migrate\)" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --scenario upgrade
check "--scenario migrate takes no --formats" \
    -o '' -e "^idmint: --scenario migrate takes no --formats" -s 2 -- \
    "$IDMINT" bench btree --db "sqlite:$D/u.db" --scenario migrate --formats ulid
check "a URL of no database kind: usage error" \
    -o '' -e "^idmint: --db redis://localhost/0: not a database URL" -s 2 -- \
    "$IDMINT" bench btree --db redis://localhost/0
check "an empty --db: usage error" \
    -o '' -e "^idmint: --db: needs a URL" -s 2 -- "$IDMINT" bench btree --db ''
check "bench btree takes no operands" \
    -o '' -e "^idmint: unexpected argument 'ulid' \(bench btree takes options only\)" -s 2 -- \
    "$IDMINT" bench btree ulid
check "an unknown option: usage error" \
    -o '' -e "^idmint: unknown option '--frob'" -s 2 -- "$IDMINT" bench btree --frob
check "usage errors create no database file" \
    -o '' --sh "cd \"\$D\" && \"\$IDMINT\" bench btree --rows 0 2>/dev/null; \"\$IDMINT\" bench btree --formats x 2>/dev/null; ls"
check "a password in --db is never shown" \
    -o '' -e "^idmint: --db (.*)\*\*\*(.*): not a database URL" -s 2 --sh \
    "\"\$IDMINT\" bench btree --db redis://u:hunter2@localhost/0 2>&1 >/dev/null | grep -v hunter2 >&2; exit \${PIPESTATUS[0]}"

# --- the keys (bench keys FORMAT N [--keys-per-ms K]) -----------------------------

check "bench keys: an unknown format is a usage error" \
    -o '' -e "^idmint: unknown format 'uuid' \(expected bigint" -s 2 -- "$IDMINT" bench keys uuid 3
check "bench keys needs FORMAT and N" \
    -o '' -e "^idmint: bench keys needs FORMAT and N" -s 2 -- "$IDMINT" bench keys ulid
check "bench keys takes only --keys-per-ms" \
    -o '' -e "^idmint: option '--db' applies only to bench btree" -s 2 -- "$IDMINT" bench keys ulid 3 --db sqlite:x
check "bigint keys are 1..N as 8-byte big-endian signed integers" \
    -o '' --sh "\"\$IDMINT\" bench keys bigint 3000 >\"\$D/k\" && python3 \"\$PY\" bigint \"\$D/k\""
for f in "uuidv4 16" "uuidv7 16" "uuidv7-unordered 16" "ulid 16" "ksuid 20" "snowflake 8" "bigint 8"; do
    set -- $f
    check "key widths: $1 keys are $2 bytes" \
        -n 100 -L "[0-9a-f]{$(($2 * 2))}" -- "$IDMINT" bench keys "$1" 100
done
check "uuidv4 keys: version 4 and the RFC 9562 variant, no duplicates" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv4 5000 >\"\$D/k\" && python3 \"\$PY\" uuid \"\$D/k\" 4 && python3 \"\$PY\" unique \"\$D/k\""
check "uuidv7 keys (real clock): strictly increasing, version 7, variant" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7 20000 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\" && python3 \"\$PY\" uuid \"\$D/k\" 7"
check "uuidv7 keys with --keys-per-ms 1000: strictly increasing, exactly 1000 per millisecond" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7 5000 --keys-per-ms 1000 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\" && python3 \"\$PY\" per_ms \"\$D/k\" 1000 uuid"
check "uuidv7-unordered keys: version 7 and variant, no duplicates" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7-unordered 5000 --keys-per-ms 1000 >\"\$D/k\" && python3 \"\$PY\" uuid \"\$D/k\" 7 && python3 \"\$PY\" unique \"\$D/k\""
check "uuidv7-unordered keys with --keys-per-ms 1000: exactly 1000 per ms, not in order within one" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7-unordered 5000 --keys-per-ms 1000 >\"\$D/k\" && python3 \"\$PY\" per_ms \"\$D/k\" 1000 uuid && python3 \"\$PY\" unordered \"\$D/k\""
check "uuidv7-unordered keys (real clock): not in order within a millisecond" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7-unordered 20000 >\"\$D/k\" && python3 \"\$PY\" unordered \"\$D/k\""
check "ulid keys with --keys-per-ms 250: increasing, exactly 250 per millisecond" \
    -o '' --sh "\"\$IDMINT\" bench keys ulid 5000 --keys-per-ms 250 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\" && python3 \"\$PY\" per_ms \"\$D/k\" 250 ulid"
check "--keys-per-ms 1 puts one key in each millisecond" \
    -o '' --sh "\"\$IDMINT\" bench keys uuidv7-unordered 300 --keys-per-ms 1 >\"\$D/k\" && python3 \"\$PY\" per_ms \"\$D/k\" 1 uuid && python3 \"\$PY\" increasing \"\$D/k\""
check "ksuid keys: strictly increasing" \
    -o '' --sh "\"\$IDMINT\" bench keys ksuid 5000 --keys-per-ms 1000 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\""
check "snowflake keys with --keys-per-ms 1000: increasing, exactly 1000 per millisecond" \
    -o '' --sh "\"\$IDMINT\" bench keys snowflake 5000 --keys-per-ms 1000 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\" && python3 \"\$PY\" per_ms \"\$D/k\" 1000 snowflake"
check "snowflake keys beyond 4096 per ms: the clock moves on instead (increasing, unique, at most 4096 per ms)" \
    -o '' --sh "\"\$IDMINT\" bench keys snowflake 20000 --keys-per-ms 10000 >\"\$D/k\" && python3 \"\$PY\" increasing \"\$D/k\" && python3 \"\$PY\" at_most_per_ms \"\$D/k\" 4096"

# --- SQLite runs (the dbbench component's embedded backend) ------------------------

probe_err=$("$IDMINT" bench btree --db "sqlite:$D/probe.db" --formats bigint --rows 1 --json 2>&1 >/dev/null)
probe=$?
if [ $probe != 0 ] || ! command -v sqlite3 >/dev/null; then
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "FAIL: bench btree on SQLite (status $probe; sqlite3: $(command -v sqlite3)): $probe_err" >&2
        FAILED=$((FAILED + 1))
    else
        echo "SKIP: the SQLite runs (status $probe; sqlite3: $(command -v sqlite3 || echo missing)): $probe_err"
    fi
    finish
fi

ALL=bigint,uuidv4,uuidv7,uuidv7-unordered,ulid,ksuid,snowflake
check "It only creates and drops tables with its own prefix and says so before it starts" \
    -o '' -e "^idmint: bench btree: creating and dropping tables idmint_bench_bigint, idmint_bench_uuidv4, idmint_bench_uuidv7, idmint_bench_uuidv7_unordered, idmint_bench_ulid, idmint_bench_ksuid, idmint_bench_snowflake in sqlite:$D/a.db" \
    --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/a.db\" --rows 3000 --batch 500 --json >\"\$D/a.json\""
check "--json writes JSON Lines, one object per format, with the figures (densities in (0,1])" \
    -o '' --sh "python3 \"\$PY\" json \"\$D/a.json\" $ALL 3000 null"
check "the tables are dropped at the end" \
    -o '' --sh "sqlite3 \"\$D/a.db\" .tables"
check "--keep keeps them, with their rows" \
    -o '3000' -E --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/k.db\" --rows 3000 --formats ulid,bigint --keep --json >/dev/null && sqlite3 \"\$D/k.db\" .tables | tr -s ' ' '\n' | grep -c . | grep -qx 2 && sqlite3 \"\$D/k.db\" 'SELECT count(*) FROM idmint_bench_ulid'"
check "--keep says that it keeps them" \
    -o '' -e "^idmint: bench btree: creating \(and keeping\) table idmint_bench_ulid in sqlite:$D/k.db" --sh \
    "\"\$IDMINT\" bench btree --db \"sqlite:\$D/k.db\" --rows 10 --formats ulid --keep --csv --batch 3 >/dev/null"
check "--keys-per-ms K is reported as keys_per_ms" \
    -o '' --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/b.db\" --rows 2000 --formats uuidv7,uuidv7-unordered,snowflake --keys-per-ms 100 --json 2>/dev/null >\"\$D/b.json\" && python3 \"\$PY\" json \"\$D/b.json\" uuidv7,uuidv7-unordered,snowflake 2000 100"
check "index_bytes grows with rows" \
    -o '' --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/g.db\" --rows 1000 --formats uuidv7 --json 2>/dev/null >\"\$D/g1.json\" && \"\$IDMINT\" bench btree --db \"sqlite:\$D/g.db\" --rows 10000 --formats uuidv7 --json 2>/dev/null >\"\$D/g2.json\" && python3 \"\$PY\" growing \"\$D/g1.json\" \"\$D/g2.json\""
check "--csv: a header line, then one row per format with the same scalar columns" \
    -o '' --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/c.db\" --rows 2000 --formats bigint,uuidv4,ksuid --csv 2>/dev/null >\"\$D/c.csv\" && python3 \"\$PY\" csv \"\$D/c.csv\" 3"
check "--chart FILE.svg: a well-formed SVG naming the database and every format" \
    -o '' --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/s.db\" --rows 2000 --chart \"\$D/s.svg\" --json 2>/dev/null >/dev/null && python3 \"\$PY\" svg \"\$D/s.svg\" SQLite 'N = 2000' bigint uuidv4 uuidv7 uuidv7-unordered ulid ksuid snowflake 'rows inserted' 'Leaf density'"
check "without --json or --csv: a readable table" \
    -O 'SQLite [0-9.]+ \(sqlite:.*\): 500 rows per format, batch 1000, the real clock
FORMAT +ROWS/S +INDEX +LEAVES +DENSITY .*
ulid +[0-9]+ .*
bigint +[0-9]+ .*' -E -- "$IDMINT" bench btree --db "sqlite:$D/t.db" --rows 500 --formats ulid,bigint
check "--scenario migrate: one object per era (uuidv4, then uuidv7), page splits and each era's density" \
    -o '' --sh "\"\$IDMINT\" bench btree --db \"sqlite:\$D/m.db\" --rows 5000 --scenario migrate --json 2>/dev/null >\"\$D/m.json\" && python3 \"\$PY\" migrate \"\$D/m.json\" 5000 && sqlite3 \"\$D/m.db\" .tables"
check "--scenario migrate says which table" \
    -o '' -e "creating and dropping table idmint_bench_migrate in sqlite:" --sh \
    "\"\$IDMINT\" bench btree --db \"sqlite:\$D/m.db\" --rows 100 --scenario migrate --json >/dev/null"
check "a chart that cannot be written: exit 1 before the run" \
    -o '' -e "^idmint: bench btree: cannot write --chart $D/nodir/x.svg: No such file or directory" -s 1 -- \
    "$IDMINT" bench btree --db "sqlite:$D/x.db" --rows 10 --chart "$D/nodir/x.svg"
check "an SQLite file that cannot be opened: exit 1, the message prefixed 'idmint: bench btree: '" \
    -o '' -e "^idmint: bench btree: " -s 1 -- "$IDMINT" bench btree --db "sqlite:$D/nodir/x.db" --rows 10

finish
