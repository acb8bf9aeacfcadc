# test_segment.sh - `idmint segment create|list|show` on SQLite stores in a
# temporary directory (no service needed): the cases every store passes
# (segment_cases.sh), then SQLite's own (a read-only file, a missing file
# or directory, an unreadable store) and the usage errors and help.
# test_segment_pg.sh runs the same cases against a real PostgreSQL.
# Usage: bash tests/cli/test_segment.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/segment_cases.sh"

D=$T_DIR/stores
mkdir -p "$D"
export D

# --- usage errors (2), before any store is opened ---------------------------------

check "segment without a subcommand: usage error" \
    -o '' -e "^idmint: segment needs a subcommand: create, list or show" -s 2 -- "$IDMINT" segment
check "segment with an unknown subcommand: usage error" \
    -o '' -e "^idmint: unknown segment subcommand 'lease' \(expected create, list or show\)" -s 2 -- \
    "$IDMINT" segment lease orders --store "sqlite:$D/x.db"
check "a usage error points to the command's --help" \
    -o '' -e "Try 'idmint segment --help' for more information" -s 2 -- "$IDMINT" segment
check "segment create without a TAG: usage error" \
    -o '' -e "^idmint: segment create needs a TAG" -s 2 -- "$IDMINT" segment create --store "sqlite:$D/x.db"
check "segment show without a TAG: usage error" \
    -o '' -e "^idmint: segment show needs a TAG" -s 2 -- "$IDMINT" segment show --store "sqlite:$D/x.db"
check "segment list takes no TAG" \
    -o '' -e "^idmint: unexpected argument 'orders' \(segment list takes no TAG\)" -s 2 -- \
    "$IDMINT" segment list orders --store "sqlite:$D/x.db"
check "segment show takes one TAG" \
    -o '' -e "^idmint: unexpected argument 'b' \(segment show takes one TAG\)" -s 2 -- \
    "$IDMINT" segment show a b --store "sqlite:$D/x.db"
check "--store is required (there is no default store)" \
    -o '' -e "^idmint: segment create needs --store URL \(sqlite:PATH or postgresql://\.\.\.\)" -s 2 -- \
    "$IDMINT" segment create orders
check "--store is required for list too" \
    -o '' -e "^idmint: segment list needs --store URL" -s 2 -- "$IDMINT" segment list
check "--store is required for show too" \
    -o '' -e "^idmint: segment show needs --store URL" -s 2 -- "$IDMINT" segment show orders
check "an empty --store: usage error" \
    -o '' -e "^idmint: --store: needs a URL" -s 2 -- "$IDMINT" segment list --store ''
check "a store URL of an unknown kind: usage error" \
    -o '' -e "^idmint: --store redis://localhost/0: .*not a segment store URL" -s 2 -- \
    "$IDMINT" segment list --store redis://localhost/0
check "sqlite: without a path: usage error" \
    -o '' -e "^idmint: --store sqlite:: .*path" -s 2 -- "$IDMINT" segment create orders --store sqlite:
check "--json applies to list and show, not create" \
    -o '' -e "^idmint: option '--json' applies only to segment list and show" -s 2 -- \
    "$IDMINT" segment create orders --store "sqlite:$D/x.db" --json
check "--step applies only to create" \
    -o '' -e "^idmint: option '--step' applies only to segment create" -s 2 -- \
    "$IDMINT" segment list --store "sqlite:$D/x.db" --step 5
check "--first applies only to create" \
    -o '' -e "^idmint: option '--first' applies only to segment create" -s 2 -- \
    "$IDMINT" segment show orders --store "sqlite:$D/x.db" --first 5
check "--stride without --offset: usage error (they go together)" \
    -o '' -e "^idmint: --stride needs --offset too" -s 2 -- \
    "$IDMINT" segment create odd --store "sqlite:$D/x.db" --stride 2
check "--offset without --stride: usage error" \
    -o '' -e "^idmint: --offset needs --stride too" -s 2 -- \
    "$IDMINT" segment create odd --store "sqlite:$D/x.db" --offset 1
check "--step without a value: usage error" \
    -o '' -e "^idmint: .*--step" -s 2 -- "$IDMINT" segment create odd --store "sqlite:$D/x.db" --step
check "an unknown option: usage error" \
    -o '' -e "^idmint: .*--frob" -s 2 -- "$IDMINT" segment list --store "sqlite:$D/x.db" --frob
check "a tag name with a control character is shown escaped" \
    -o '' -e "^idmint: invalid tag 'a\\\\x1b\[2Jb': " -s 2 -- \
    "$IDMINT" segment create "$(printf 'a\033[2Jb')" --store "sqlite:$D/x.db"
check "no usage error created a store file" -o ok --sh '[ ! -e "$D/x.db" ] && echo ok'

# --- help --------------------------------------------------------------------------------

check "idmint COMMAND --help works (segment)" \
    -O 'Usage: idmint segment create TAG --store URL .*' -- "$IDMINT" segment --help
check "idmint segment create --help" \
    -O 'Usage: idmint segment create TAG --store URL .*' -- "$IDMINT" segment create --help
check "idmint segment list --help" -O 'Usage: idmint segment .*' -- "$IDMINT" segment list --help
check "idmint help segment" -O 'Usage: idmint segment .*' -- "$IDMINT" help segment
check "the help names every option and that --store is required" \
    -o ok --sh 'h=$("$IDMINT" segment --help)
        for w in "--store URL" "--first N" "--step N" "--max-step N" "--stride K --offset R" "--json" "required" "sqlite:PATH" "postgresql://"; do
            [[ $h == *"$w"* ]] || { echo "missing $w"; exit 1; }
        done; echo ok'
check "the main help lists the segment commands" \
    -o ok --sh 'h=$("$IDMINT" --help)
        printf "%s\n" "$h" | grep -q "^  segment create TAG --store URL" &&
        printf "%s\n" "$h" | grep -q "^  segment list --store URL" &&
        printf "%s\n" "$h" | grep -q "^  segment show TAG --store URL" && echo ok'

# --- the cases every store passes ---------------------------------------------------------

segment_cases "sqlite:$D/segments.db" sqlite
check "sqlite: a relative path is the working directory's" \
    -o 'next_id: 1' --sh 'cd "$D" && "$IDMINT" segment create rel --store sqlite:rel.db &&
        "$IDMINT" segment show rel --store "sqlite:$D/rel.db" | grep "^next_id"'

# --- SQLite's own --------------------------------------------------------------------------

check "sqlite: segment list of a file that does not exist: exit 1, and no file made" \
    -o '' -e "^idmint: --store sqlite:$D/none\.db: no such store \(the file does not exist; segment create makes it\)" \
    -s 1 --sh '"$IDMINT" segment list --store "sqlite:$D/none.db"; st=$?; [ -e "$D/none.db" ] && echo made; exit $st'
check "sqlite: segment show of a file that does not exist: exit 1, and no file made" \
    -o '' -e "^idmint: --store sqlite:$D/none\.db: no such store" \
    -s 1 --sh '"$IDMINT" segment show orders --store "sqlite:$D/none.db"; st=$?; [ -e "$D/none.db" ] && echo made; exit $st'
check "sqlite: segment create in a directory that does not exist: exit 1, a clear error, nothing made" \
    -o '' -e "^idmint: --store sqlite:$D/missing/s\.db: cannot use directory $D/missing: it does not exist \(create it first\)" \
    -s 1 --sh '"$IDMINT" segment create orders --store "sqlite:$D/missing/s.db"; st=$?; [ -e "$D/missing" ] && echo made; exit $st'
check "sqlite: segment create makes a new file" \
    -o 'orders' --sh '"$IDMINT" segment create orders --store "sqlite:$D/new.db" &&
        "$IDMINT" segment list --store "sqlite:$D/new.db" --json | sed "s/.*\"tag\": \"\([^\"]*\)\".*/\1/"'
check "sqlite: segment list of a store with no tags: the header only" \
    -o 'TAG  NEXT  STEP  MAX STEP  STRIDE  OFFSET  LEASES  UPDATED' --sh '
        sqlite3 "$D/empty.db" "CREATE TABLE t (x)" &&
        "$IDMINT" segment list --store "sqlite:$D/empty.db"'
check "sqlite: segment list --json of a store with no tags: nothing" \
    -o '' -- "$IDMINT" segment list --store "sqlite:$D/empty.db" --json

cp "$D/segments.db" "$D/ro.db"
chmod 0444 "$D/ro.db"
check "sqlite: a read-only file: create is exit 1 with the store's message" \
    -o '' -e "^idmint: cannot create tag 'fresh': .*$D/ro\.db is read-only" -s 1 -- \
    "$IDMINT" segment create fresh --store "sqlite:$D/ro.db"
check "sqlite: a read-only file: show still works" \
    -O 'tag: orders
next_id: 1
.*' -- "$IDMINT" segment show orders --store "sqlite:$D/ro.db"
check "sqlite: a read-only file: list still works (and the refused tag is not in it)" \
    -o ok --sh '"$IDMINT" segment list --store "sqlite:$D/ro.db" --json | python3 -c "
import json, sys
tags = [json.loads(l)[\"tag\"] for l in sys.stdin]
assert \"orders\" in tags and \"fresh\" not in tags, tags
print(\"ok\")"'
check "sqlite: a read-only file without the table: exit 1 with a message" \
    -o '' -e "^idmint: --store sqlite:$D/ro-empty\.db: " -s 1 --sh '
        sqlite3 "$D/ro-empty.db" "CREATE TABLE other (x)" && chmod 0444 "$D/ro-empty.db" &&
        "$IDMINT" segment list --store "sqlite:$D/ro-empty.db"'
check "sqlite: a directory as the store: a bad --store value (exit 2) with the store's message" \
    -o '' -e "^idmint: --store sqlite:$D: .*not a regular file" -s 2 -- "$IDMINT" segment list --store "sqlite:$D"
printf 'this is not an SQLite database, only text\n%.0s' {1..100} >"$D/junk.db"
check "sqlite: a file that is not a database: exit 1 with the store's message" \
    -o '' -e "^idmint: .*sqlite:$D/junk\.db" -s 1 -- "$IDMINT" segment list --store "sqlite:$D/junk.db"

# --- store URLs in messages ------------------------------------------------------------------

check "a password in a store URL is never printed (shown as ***)" \
    -o ok --sh 'timeout 20 "$IDMINT" segment list --store "postgresql://bob:s3cret@127.0.0.1:1/db?password=s3cret2&connect_timeout=2" 2>"$D/pw.err"
        st=$?
        [ "$st" = 1 ] || [ "$st" = 2 ] || { echo "status $st"; exit 1; }
        grep -q "^idmint: --store postgresql://bob:\*\*\*@127\.0\.0\.1:1/db?password=\*\*\*&connect_timeout=2: " "$D/pw.err" || { cat "$D/pw.err"; exit 1; }
        grep -q s3cret "$D/pw.err" && { echo leaked; exit 1; }
        echo ok'

finish
