# test_segment_pg.sh - `idmint segment create|list|show` against a real
# PostgreSQL (tests/coord/pg.sh starts one on a random loopback port): the
# cases every store passes (segment_cases.sh, as test_segment.sh runs them
# on SQLite), then PostgreSQL's own: a read-only role, a database that does
# not exist, a password in the URL, the server gone.
# Usage: bash tests/cli/test_segment_pg.sh PATH_TO_IDMINT
# Without PostgreSQL it fails with IDM_COORD_REQUIRED=ON (scripts/test.sh
# installs it), and exits 77 (skipped) without.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/segment_cases.sh"

COORD_DIR=$(dirname "$0")/../coord
if [ -f "$COORD_DIR/pg.sh" ]; then
    # shellcheck source=tests/coord/services.sh
    . "$COORD_DIR/services.sh"
    # shellcheck source=tests/coord/pg.sh
    . "$COORD_DIR/pg.sh"
fi
if ! declare -F pg_installed >/dev/null || ! pg_installed; then
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "test_segment_pg.sh: PostgreSQL (the postgresql package) is missing: FAIL" >&2
        exit 1
    fi
    echo "test_segment_pg.sh: needs PostgreSQL; skipped"
    exit 77
fi
if "$IDMINT" segment list --store postgresql://127.0.0.1:1/x 2>&1 | grep -q "no PostgreSQL store"; then
    # The binary was built without libpq: the store cannot be tested.
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "test_segment_pg.sh: idmint was built without the PostgreSQL store (libpq-dev): FAIL" >&2
        exit 1
    fi
    echo "test_segment_pg.sh: idmint has no PostgreSQL store; skipped"
    exit 77
fi

# As root, pg.sh runs the server as postgres, which must reach DIR.
chmod 0711 "$T_DIR"
if ! start_pg "$T_DIR/pg"; then
    echo "test_segment_pg.sh: PostgreSQL did not start" >&2
    FAILED=$((FAILED + 1))
    finish
fi
export PG_URL PG_PORT

# PG_URL with another user (and password) in its userinfo.
url_as() {
    printf '%s\n' "$PG_URL" | sed -E "s#^(postgres(ql)?://)([^@/]*@)?#\\1$1@#"
}

check "postgresql: segment list of a database with no tags: the header only (the table is made)" \
    -o 'TAG  NEXT  STEP  MAX STEP  STRIDE  OFFSET  LEASES  UPDATED' -- \
    "$IDMINT" segment list --store "$PG_URL"
check "postgresql: segment list --json of no tags: nothing" \
    -o '' -- "$IDMINT" segment list --store "$PG_URL" --json

segment_cases "$PG_URL" postgresql

check "postgres:// is taken as postgresql://" \
    -O 'tag: orders
next_id: 1
.*' --sh '"$IDMINT" segment show orders --store "$(printf "%s\n" "$PG_URL" | sed "s#^postgresql://#postgres://#")"'

# A role that may only read: show and list work, create is refused (exit 1)
# with the store's message; a password in its URL is never printed (the
# cluster trusts loopback, so the password is not checked).
RO_URL=$(url_as 'seg_reader:ro-s3cret')
export RO_URL
export -f pg_psql
export PG_BIN PG_DIR
check "postgresql: a read-only role is set up (psql)" \
    -o ok --sh 'pg_psql -c "CREATE ROLE seg_reader LOGIN PASSWORD '"'ro-s3cret'"'" \
        -c "GRANT SELECT ON idmint_segments TO seg_reader" >/dev/null && echo ok'
check "postgresql: a read-only role: create is exit 1 with the store's message, the password hidden" \
    -o ok --sh '"$IDMINT" segment create fresh --store "$RO_URL" 2>"$T_DIR/ro.err"; st=$?
        [ "$st" = 1 ] || { echo "status $st"; cat "$T_DIR/ro.err"; exit 1; }
        grep -q "^idmint: cannot create tag '"'fresh'"': " "$T_DIR/ro.err" || { cat "$T_DIR/ro.err"; exit 1; }
        grep -q s3cret "$T_DIR/ro.err" && { echo leaked; exit 1; }
        echo ok'
check "postgresql: a read-only role: show works" \
    -O 'tag: orders
next_id: 1
.*' -- "$IDMINT" segment show orders --store "$RO_URL"
check "postgresql: a read-only role: list works, without the refused tag" \
    -o ok --sh '"$IDMINT" segment list --store "$RO_URL" --json | python3 -c "
import json, sys
tags = [json.loads(l)[\"tag\"] for l in sys.stdin]
assert \"orders\" in tags and \"fresh\" not in tags, tags
print(\"ok\")"'
NOBODY_URL=$(url_as seg_nobody)
export NOBODY_URL
check "postgresql: a role that may not even read: exit 1 with the store's message" \
    -o '' -e "^idmint: " -s 1 --sh 'pg_psql -c "CREATE ROLE seg_nobody LOGIN" >/dev/null &&
        "$IDMINT" segment list --store "$NOBODY_URL"'

NODB_URL=$(printf '%s\n' "$PG_URL" | sed -E 's#^(postgres(ql)?://[^/]*)/[^?]*#\1/no_such_db#')
export NODB_URL
check "postgresql: a database that does not exist: exit 1 with the store's message" \
    -o '' -e "^idmint: --store .*no_such_db.*: .*no_such_db" -s 1 -- \
    "$IDMINT" segment list --store "$NODB_URL"

stop_pg
check "postgresql: the server gone: segment list is exit 1 with a message, promptly" \
    -o '' -e "^idmint: --store .*: " -s 1 -- timeout 20 "$IDMINT" segment list --store "$PG_URL"
check "postgresql: the server gone: segment create is exit 1" \
    -o '' -e "^idmint: --store .*: " -s 1 -- timeout 20 "$IDMINT" segment create later --store "$PG_URL"

finish
