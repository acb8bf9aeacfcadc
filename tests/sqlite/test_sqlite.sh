#!/usr/bin/env bash
# test_sqlite.sh - idmint_sqlite in the real sqlite3 shell and in Debian's
# Python sqlite3 module: the three ways to load it, sqlean's and SQLite
# uuid.c's behaviours (compat.sql), every other function with NULL and
# garbage (functions.sql), the errors and the flags (errors.txt), and a
# million uuidv7() strictly increasing in one connection, from the shell
# and from Python.
#
# Usage: bash test_sqlite.sh EXTENSION   (the .so, with or without suffix)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/sqlite/lib.sh
. "$HERE/lib.sh"
EXT=$(readlink -f "${1:?usage: bash $0 EXTENSION}")
EXT=${EXT%.so}
[[ -f $EXT.so ]] || { echo "test_sqlite: no $EXT.so" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "test_sqlite: sqlite3 (the shell) is missing" >&2; exit 1; }

# rows_true NAME FILE OUTPUT ERR: every SELECT of FILE gave "name|1", and
# nothing went to stderr.
rows_true() {
    local name=$1 file=$2 out=$3 err=$4 want got bad
    want=$(grep -c '^SELECT' "$file")
    got=$(grep -c '^[a-z0-9_]*|1$' "$out")
    bad=$(grep -v '^[a-z0-9_]*|1$' "$out" | head -5)
    if [[ -s $err ]]; then
        fail "$name" "stderr: $(head -5 "$err")"
    elif [[ $got != "$want" || -n $bad ]]; then
        fail "$name" "$got of $want rows true; others: $bad"
    else
        pass "$name ($got rows true)"
    fi
}

# --- loading ------------------------------------------------------------------
# The module exports its entry point and nothing else (libidmint inside it
# stays hidden, so another copy in the process cannot clash).
out=$(nm -D --defined-only "$EXT.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }')
expect "the module exports only sqlite3_idmintsqlite_init" "$out" = sqlite3_idmintsqlite_init

out=$(sqlite3 :memory: ".load $EXT" "SELECT uuid_extract_version(uuidv7());" 2>&1)
expect "shell .load" "$out" = 7
out=$(sqlite3 :memory: "SELECT load_extension('$EXT');" "SELECT uuid_extract_version(uuidv4());" 2>&1)
expect "SELECT load_extension()" "$out" = $'\n4'
out=$(sqlite3 :memory: "SELECT load_extension('$EXT', 'sqlite3_idmintsqlite_init');" "SELECT length(ulid());" 2>&1)
expect "load_extension() with the entry point named" "$out" = $'\n26'
out=$("$PY" - "$EXT" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
db.enable_load_extension(False)
print(db.execute("SELECT uuid_extract_version(uuidv7()), typeof(uuidv7_blob())").fetchone())
PY
)
expect "Python enable_load_extension + load_extension" "$out" = "(7, 'blob')"

# --- sqlean's and uuid.c's behaviours; every function ------------------------------
for f in compat functions; do
    sqlite3 -batch -cmd ".load $EXT" :memory: <"$HERE/$f.sql" >"$T_DIR/$f.out" 2>"$T_DIR/$f.err"
    rows_true "$f.sql" "$HERE/$f.sql" "$T_DIR/$f.out" "$T_DIR/$f.err"
done

# The same files through Python (its SQLite, its connection): each SELECT
# on its own, the other statements executed.
"$PY" - "$EXT" "$HERE/compat.sql" "$HERE/functions.sql" >"$T_DIR/py.out" 2>"$T_DIR/py.err" <<'PY'
import sqlite3, sys
for path in sys.argv[2:]:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(sys.argv[1])
    text = open(path).read()
    stmt = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("--") and not stmt:
            continue
        stmt += line
        if sqlite3.complete_statement(stmt):
            for row in db.execute(stmt):
                print("|".join(str(v) for v in row))
            stmt = ""
PY
cat "$HERE/compat.sql" "$HERE/functions.sql" >"$T_DIR/both.sql"
rows_true "compat.sql and functions.sql from Python" "$T_DIR/both.sql" "$T_DIR/py.out" "$T_DIR/py.err"

# --- errors and flags ---------------------------------------------------------------
while IFS=$'\t' read -r sql want; do
    [[ -z $sql || $sql == \#* ]] && continue
    out=$(sqlite3 -batch :memory: ".load $EXT" "$sql" 2>&1)
    st=$?
    if ((st != 0)) && [[ $out == *"$want"* ]]; then
        pass "error: $sql"
    else
        fail "error: $sql" "exit $st, output: $out (wanted: $want)"
    fi
done <"$HERE/errors.txt"

# --- a million uuidv7() in one connection --------------------------------------------
out=$(sqlite3 -batch -cmd ".load $EXT" :memory: 2>&1 <<'SQL'
CREATE TABLE m(i INTEGER PRIMARY KEY, u TEXT NOT NULL);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000)
INSERT INTO m(u) SELECT uuidv7() FROM c;
SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM m a JOIN m b ON b.i = a.i + 1 WHERE b.u <= a.u);
SQL
)
expect "a million uuidv7() strictly increasing (shell): rows|not increasing" "$out" = "1000000|0"
out=$("$PY" - "$EXT" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
prev = None
bad = n = 0
cur = db.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000) "
                 "SELECT uuidv7_blob() FROM c")
for (u,) in cur:
    if prev is not None and u <= prev:
        bad += 1
    prev = u
    n += 1
print(n, bad)
PY
)
expect "a million uuidv7_blob() strictly increasing (Python): rows not-increasing" "$out" = "1000000 0"

finish
