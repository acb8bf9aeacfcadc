#!/usr/bin/env bash
# test_snowflake.sh - snowflake() shared by every connection and process
# that writes one SQLite database (sqlite/snowflake_fns.c, the library's
# idm_sfhost):
#   - its configuration: idmint_snowflake_config(node [, layout]) in the
#     table idmint_config, read back by other connections and processes,
#     and picked up by a connection that is already minting;
#   - its errors: in-memory and temporary databases, no node, a node out of
#     range, a bad layout, a node that is not an integer; its flags (not
#     innocuous, the configuration direct-only, neither deterministic);
#   - four processes inserting snowflake() into one WAL database (two
#     Python writers, sf_writer.py, that mint outside the write lock, at
#     the same time, and two loops of sqlite3 shells that mint inside
#     their INSERT) while
#     one Python writer is killed with SIGKILL and started again: no
#     duplicate, every ID of the configured node, each writer's IDs
#     increasing, no error but SQLITE_BUSY retries.
#
# Usage: bash test_snowflake.sh EXTENSION   (the .so, with or without suffix)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/sqlite/lib.sh
. "$HERE/lib.sh"
EXT=$(readlink -f "${1:?usage: bash $0 EXTENSION}")
EXT=${EXT%.so}
[[ -f $EXT.so ]] || { echo "test_snowflake: no $EXT.so" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "test_snowflake: sqlite3 (the shell) is missing" >&2; exit 1; }

sq() { sqlite3 -batch -cmd ".load $EXT" "$@" 2>&1; }
# fails NAME WANT SQL...: the statements fail with WANT in the message.
fails() {
    local name=$1 want=$2 out st
    shift 2
    out=$(sq "$@")
    st=$?
    if ((st != 0)) && [[ $out == *"$want"* ]]; then
        pass "$name"
    else
        fail "$name" "exit $st, output: $out (wanted: $want)"
    fi
}

DB=$T_DIR/app.db
LAYOUT='time=41,node=10,seq=5,unit=1ms,epoch=1735689600000'

# --- configuration and errors -----------------------------------------------------------
fails "in-memory database" "snowflake: the database has no file (in-memory or temporary)" \
    :memory: "SELECT snowflake();"
fails "temporary database" "idmint_snowflake_config: the database has no file" \
    "" "SELECT idmint_snowflake_config(1);"
fails "no node set" "snowflake: no node is set for this database: run SELECT idmint_snowflake_config" \
    "$DB" "SELECT snowflake();"
fails "node out of range" "node 1024 is out of range: the layout's node field holds 0 to 1023" \
    "$DB" "SELECT idmint_snowflake_config(1024);"
fails "negative node" "node -1 is out of range" "$DB" "SELECT idmint_snowflake_config(-1);"
fails "node of the layout's range" "node 40 is out of range: the layout's node field holds 0 to 31" \
    "$DB" "SELECT idmint_snowflake_config(40, 'time=41,node=5,seq=12');"
fails "node not an integer" "idmint_snowflake_config: the node must be an integer" \
    "$DB" "SELECT idmint_snowflake_config('7');"
fails "bad layout" "idmint_snowflake_config: invalid layout 'nonsense'" \
    "$DB" "SELECT idmint_snowflake_config(7, 'nonsense');"
expect "nothing stored by the failures" "$(sq "$DB" "SELECT count(*) FROM sqlite_schema WHERE name = 'idmint_config';")" = 0

out=$(sq "$DB" "PRAGMA journal_mode = WAL;" "SELECT idmint_snowflake_config(7, '$LAYOUT');")
expect "config returns the configuration" "$out" = $'wal\n{"node": 7, "layout": "time=41,node=10,seq=5,unit=1ms,epoch=1735689600000", "max_node": 1023, "state_dir": "'"$DB"'-idmint"}'
expect "another process reads it" "$(sq "$DB" "SELECT json_extract(idmint_snowflake_config(), '\$.node');")" = 7
out=$(sq "$DB" "SELECT json_extract(idmint_inspect(CAST(snowflake() AS TEXT), '$LAYOUT'), '\$.node');")
expect "snowflake() mints for node 7" "$out" = 7
if [[ -d $DB-idmint ]]; then
    pass "state directory beside the database"
else
    fail "state directory beside the database" "no $DB-idmint"
fi
expect "state directory mode" "$(stat -c %a "$DB-idmint")" = 700

fails "generator refused in an index" "non-deterministic functions prohibited in index expressions" \
    "$DB" "CREATE TABLE x(a); CREATE INDEX xi ON x(snowflake());"
fails "not innocuous: refused in a view of an untrusted schema" "unsafe use of snowflake()" \
    "$DB" "PRAGMA trusted_schema = OFF;" "CREATE VIEW sv AS SELECT snowflake() AS id;" "SELECT * FROM sv;"
fails "config is direct-only: refused in a trigger" "unsafe use of idmint_snowflake_config()" \
    "$DB" "CREATE TABLE tr(a); CREATE TRIGGER trg AFTER INSERT ON tr BEGIN SELECT idmint_snowflake_config(9); END;" \
    "INSERT INTO tr VALUES (1);"
sq "$DB" "DROP VIEW IF EXISTS sv; DROP TABLE IF EXISTS tr; DROP TABLE IF EXISTS x;" >/dev/null

# A connection already minting sees another process change the node.
out=$("$PY" - "$EXT" "$DB" "$LAYOUT" 2>&1 <<'PY'
import json, sqlite3, subprocess, sys
ext, path, layout = sys.argv[1:4]
db = sqlite3.connect(path, isolation_level=None)
db.enable_load_extension(True)
db.load_extension(ext)
node = lambda: json.loads(db.execute("SELECT idmint_inspect(CAST(snowflake() AS TEXT), ?)", (layout,)).fetchone()[0])["node"]
first = node()
other = sqlite3.connect(path, isolation_level=None)
other.enable_load_extension(True)
other.load_extension(ext)
other.execute("SELECT idmint_snowflake_config(8, ?)", (layout,))
second = node()
other.execute("SELECT idmint_snowflake_config(7, ?)", (layout,))
print(first, second, node())
PY
)
expect "a minting connection follows the configuration (7, then 8, then 7)" "$out" = "7 8 7"

# --- four processes, one killed -------------------------------------------------------------
sq "$DB" "CREATE TABLE ids(id INTEGER NOT NULL, w INTEGER NOT NULL);" >/dev/null
BATCHES=300 ROWS=50
declare -A WPID
for w in 1 2; do
    "$PY" "$HERE/sf_writer.py" "$EXT" "$DB" "$w" "$BATCHES" "$ROWS" >"$T_DIR/w$w.out" 2>"$T_DIR/w$w.err" &
    WPID[$w]=$!
    track $!
done
# Shell writers: one sqlite3 process per batch (each opens the state anew),
# .timeout for SQLITE_BUSY; any other error is a failure.
shell_writer() {
    local w=$1 b
    for ((b = 0; b < BATCHES / 3; b++)); do
        sqlite3 -batch -bail -cmd ".timeout 20000" -cmd ".load $EXT" "$DB" \
            "BEGIN IMMEDIATE; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $ROWS) INSERT INTO ids(id, w) SELECT snowflake(), $w FROM c; COMMIT;" ||
            { echo "shell writer $w: batch $b failed" >&2; return 1; }
    done
}
for w in 3 4; do
    shell_writer "$w" >"$T_DIR/w$w.out" 2>"$T_DIR/w$w.err" &
    WPID[$w]=$!
    track $!
done
# Kill writer 1 once it has committed something, then start it again.
for ((i = 0; i < 300; i++)); do
    n=$(sqlite3 -cmd ".timeout 5000" "$DB" "SELECT count(*) FROM ids WHERE w = 1;" 2>/dev/null)
    [[ ${n:-0} -ge 500 ]] && break
    sleep 0.05
done
kill -9 "${WPID[1]}"
wait "${WPID[1]}" 2>/dev/null
st=$?
expect "writer 1 killed by SIGKILL (status 137) after committing rows" "$st:$((${n:-0} >= 500))" = "137:1"
"$PY" "$HERE/sf_writer.py" "$EXT" "$DB" 1 "$BATCHES" "$ROWS" >"$T_DIR/w1b.out" 2>"$T_DIR/w1b.err" &
WPID[1]=$!
track "${WPID[1]}"
for w in 1 2 3 4; do
    wait "${WPID[$w]}"
    st=$?
    f=$T_DIR/w$w.err
    ((w == 1)) && f=$T_DIR/w1b.err # the first writer 1's was cut by the kill
    errs=$(grep -v '^$' "$f" | head -3)
    expect "writer $w ended well, no error but busy retries" "$st:$errs" = "0:"
done
busy=$(cat "$T_DIR"/w*.out | awk '/^busy/ { s += $2 } END { print s + 0 }')
echo "     (Python writers retried SQLITE_BUSY $busy times)"

out=$(sq "$DB" "SELECT count(*), count(DISTINCT id) FROM ids;")
total=${out%%|*}
expect "no duplicate among all IDs (rows|distinct)" "$out" = "$total|$total"
want_min=$(((2 * BATCHES + 2 * (BATCHES / 3)) * ROWS))
expect "all writers' rows are there (at least $want_min)" "$total" -ge "$want_min"
out=$(sq "$DB" "SELECT count(*) FROM ids WHERE json_extract(idmint_inspect(CAST(id AS TEXT), '$LAYOUT'), '\$.node') <> 7;")
expect "every ID carries node 7" "$out" = 0
out=$(sq "$DB" "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY w ORDER BY rowid) p FROM ids) WHERE p >= id;")
expect "each writer's IDs increase" "$out" = 0

finish
