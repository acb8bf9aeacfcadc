#!/usr/bin/env bash
# test_inspect_cli.sh - idmint_inspect() in pg_idmint says what
# `idmint inspect --json` says: for fixed vectors and freshly minted IDs of
# every kind, under several layouts, the CLI's object (as jsonb) equals the
# function's; inputs the CLI rejects raise 22P02 in SQL with the CLI's
# reason as the detail.
#
# Usage: bash test_inspect_cli.sh IDMINT_BINARY
# Starts its own PostgreSQL (tests/pg/lib.sh, tests/coord/pg.sh) with
# pg_idmint installed (scripts/test.sh installs it). KEEP_T_DIR=1 keeps the
# temporary directory.
IDMINT=$(readlink -f "${1:?usage: bash $0 IDMINT_BINARY}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/pg/lib.sh
. "$HERE/lib.sh"

# One case per ID: many, so only failures are shown.
ok() { PASSED=$((PASSED + 1)); }
bad() {
    CASE_NO=$((CASE_NO + 1))
    fail "$1" ""
}

start_pg "$T_DIR/pg" || exit 1
pg_psql -c 'CREATE EXTENSION pg_idmint' || { echo "test_inspect_cli: CREATE EXTENSION failed" >&2; exit 1; }

# psql reads variables (:'name', quoted as literals) only in what it reads
# from standard input, not in -c.
sql() {
    pg_psql -At "$@"
}

# agree LAYOUT ID: the CLI's JSON for ID equals idmint_inspect(ID, LAYOUT).
agree() {
    local layout=$1 id=$2 cli got
    if ! cli=$("$IDMINT" inspect --json --layout "$layout" -- "$id" 2>"$T_DIR/cli.err"); then
        bad "the CLI rejected '$id' (layout $layout): $(cat "$T_DIR/cli.err")"
        return
    fi
    got=$(sql -v "cli=$cli" -v "id=$id" -v "layout=$layout" 2>&1 <<'SQL'
SELECT (:'cli')::jsonb = idmint_inspect(:'id', :'layout'), idmint_inspect(:'id', :'layout');
SQL
)
    case $got in
    't|'*) ok ;;
    *) bad "'$id' (layout $layout): CLI $cli, SQL $got" ;;
    esac
}

# rejected ID: the CLI refuses it, and SQL raises 22P02 whose detail is the
# CLI's reason.
rejected() {
    local id=$1 reason got
    if reason=$("$IDMINT" inspect -- "$id" 2>&1); then
        bad "the CLI accepted '$id'"
        return
    fi
    reason=${reason#"idmint: $id: "}
    got=$(sql -v "id=$id" 2>&1 <<'SQL'
SET my.id = :'id';
DO $$
DECLARE
    d text;
BEGIN
    PERFORM idmint_inspect(current_setting('my.id'));
    RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RAISE NOTICE '%|%', SQLSTATE, d;
END $$;
SQL
)
    got=${got#*NOTICE:  }
    if [ "$got" = "22P02|$reason" ]; then
        ok
    else
        bad "'$id': the CLI says '$reason', SQL '$got'"
    fi
}

# Fixed vectors (RFC 9562, the ULID, TypeID and KSUID specs, Discord's docs).
for id in 017F22E2-79B0-7CC3-98C4-DC0C0C07398F C232AB00-9414-11EC-B3C8-9F6BDECED846 \
    1EC9414C-232A-6B00-B3C8-9F6BDECED846 919108f7-52d1-4320-9bac-f847db4148a8 \
    '{919108f7-52d1-4320-9bac-f847db4148a8}' urn:uuid:919108f7-52d1-4320-9bac-f847db4148a8 \
    919108f752d143209bacf847db4148a8 00000000-0000-0000-0000-000000000000 \
    01ARZ3NDEKTSV4RRFFQ69G5FAV 01arz3ndektsv4rrffq69g5fav 7ZZZZZZZZZZZZZZZZZZZZZZZZZ \
    prefix_01h455vb4pex5vsknk084sn02q 01h455vb4pex5vsknk084sn02q \
    0ujtsYcgvSTl8PAuAdqWYSMnLOv aWgEPTl1tmebfsQzFP4bxwgy80V 000000000000000000000000000 \
    1541815603606036480 0 9223372036854775807; do
    agree twitter "$id"
done
agree discord 175928847299117063
agree instagram 4042737765538862081
agree time=41,node=10,seq=12,unit=1ms,epoch=1735689600000 4194304

# Fresh IDs of every kind, as the CLI mints them.
for fmt in uuidv4 uuidv7 ulid ksuid; do
    while read -r id; do agree twitter "$id"; done < <("$IDMINT" gen "$fmt" -n 5)
done
while read -r id; do agree twitter "$id"; done < <("$IDMINT" gen typeid --prefix user -n 5)
for layout in twitter discord sonyflake safe53; do
    while read -r id; do agree "$layout" "$id"; done < <("$IDMINT" gen snowflake --node 3 --layout "$layout" -n 3)
done
# And as pg_idmint mints them.
while read -r id; do agree twitter "$id"; done < <(pg_psql -At -c \
    "SELECT uuidv7()::text UNION ALL SELECT ulid() UNION ALL SELECT ksuid() UNION ALL SELECT typeid('order') UNION ALL SELECT snowflake()::text")

# Rejected the same way, with the same reason.
for id in '' xyz 01ARZ3NDEKTSV4RRFFQ69G5FAI 8ZZZZZZZZZZZZZZZZZZZZZZZZZ User_01h455vb4pex5vsknk084sn02q \
    prefix_81h455vb4pex5vsknk084sn02q 123456789012345678901 18446744073709551616 \
    017F22E2-79B0-7CC3-98C4-DC0C0C07398 'aWgEPTl1tmebfsQzFP4bxwgy80W' 9223372036854775808x; do
    rejected "$id"
done

stop_pg fast
finish
