#!/usr/bin/env bash
# test_alter_system.sh - pg/README.md's instructions for pg_idmint's
# settings, run exactly as written from fresh sessions of a fresh server
# (tests/coord/pg.sh starts it; no shared_preload_libraries):
#
#   1. the reason they say what they say: in a fresh session of a server
#      whose configuration files name no pg_idmint.* setting, a bare
#      `ALTER SYSTEM SET pg_idmint.node = 5` is refused with 42704
#      "unrecognized configuration parameter" on PostgreSQL 13 to 16 (the
#      module is not loaded, so the name is unknown to ALTER SYSTEM; 17
#      accepts it, and this case then checks that it works);
#   2. the README's SQL block for ALTER SYSTEM (the ```sql block after the
#      line "<!-- tests/pg/test_alter_system.sh: ALTER SYSTEM -->"), fed to
#      psql as it stands, in a fresh session: no error; then, in new fresh
#      sessions, SHOW pg_idmint.node says 5 and snowflake() mints for node
#      5 (idmint_inspect of it), and postgresql.auto.conf holds the line;
#   3. once the configuration files name pg_idmint.node (2 wrote it), the
#      server has a placeholder for it: a fresh session's bare ALTER SYSTEM
#      of that name works without LOAD, while pg_idmint.layout, still
#      unnamed, is refused - what the README's explanation says;
#   4. PostgreSQL 15 and later: a role that is not a superuser, granted
#      ALTER SYSTEM ON PARAMETER pg_idmint.reserve, cannot LOAD; as the
#      README says, a first call of a pg_idmint function in its fresh
#      session (SELECT uuid_extract_version(uuidv7())) makes the bare
#      ALTER SYSTEM work.
#
# Usage: bash tests/pg/test_alter_system.sh   (ctest: pg.test_alter_system,
# label pg). tests/pg/lib.sh says when a missing server or extension fails
# or skips.
# shellcheck source=tests/pg/lib.sh
. "$(dirname "$0")/lib.sh"

README=$PGT_ROOT/pg/README.md
MARKER='<!-- tests/pg/test_alter_system.sh: ALTER SYSTEM -->'

# psql_fresh ARGS...: a new psql session (a new backend: nothing loaded
# yet) on database r, as PSQL_USER (postgres); stdout and stderr together.
psql_fresh() {
    "$PG_BIN/psql" -X -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$PG_DIR/sock" -p "$PG_PORT" \
        -U "${PSQL_USER:-postgres}" -d r "$@" 2>&1
}

# The README's block: the first ```sql fence after the marker, to its end.
block=$(awk -v m="$MARKER" '
    $0 == m { seen = 1; next }
    seen == 1 && /^```sql$/ { seen = 2; next }
    seen == 2 && /^```$/ { exit }
    seen == 2 { print }' "$README")
CASE_NO=0
check "pg/README.md has the ALTER SYSTEM block after the marker line" \
    "$([ -n "$block" ] || echo "  no \`\`\`sql block after \"$MARKER\" in $README")"
[ -n "$block" ] || finish
printf '%s\n' "$block" >"$T_DIR/readme.sql"
echo "# the README's block:"
sed 's/^/#   /' "$T_DIR/readme.sql"

if ! start_pg "$T_DIR/pg" >"$T_DIR/start.log" 2>&1; then
    CASE_NO=$((CASE_NO + 1))
    fail "PostgreSQL starts (tests/coord/pg.sh start_pg)" "$(cat "$T_DIR/start.log")"
    finish
fi
VERSION_NUM=$(pg_psql -At -c "SHOW server_version_num")
echo "# PostgreSQL $VERSION_NUM on 127.0.0.1:$PG_PORT"
pg_psql -c "CREATE DATABASE r" && psql_fresh -c "CREATE EXTENSION pg_idmint" >/dev/null

# 1. The bare statement in a fresh session.
out=$(psql_fresh -c "ALTER SYSTEM SET pg_idmint.node = 5")
if [ "$VERSION_NUM" -lt 170000 ]; then
    expect "PostgreSQL $VERSION_NUM: a bare ALTER SYSTEM SET pg_idmint.node in a fresh session is refused as the README says (42704, unrecognized)" \
        "$out" =~ '42704: unrecognized configuration parameter "pg_idmint.node"'
else
    expect "PostgreSQL $VERSION_NUM: a bare ALTER SYSTEM SET pg_idmint.node works in a fresh session" \
        "$out" = "ALTER SYSTEM"
    psql_fresh -c "ALTER SYSTEM RESET pg_idmint.node" -c "SELECT pg_reload_conf()" >/dev/null
fi
expect "the refused statement wrote nothing to postgresql.auto.conf" \
    "$(grep -c pg_idmint "$PG_DIR/data/postgresql.auto.conf")" = 0

# 2. The README's block as written, in a fresh session.
out=$(psql_fresh -f "$T_DIR/readme.sql")
rc=$?
expect "the README's ALTER SYSTEM block runs without an error in a fresh session (psql exit 0, no ERROR)" \
    "$rc:$(grep -c ERROR <<<"$out")" = "0:0" || printf '%s\n' "$out" | sed 's/^/  /'
expect "postgresql.auto.conf holds the README's setting" \
    "$(grep '^pg_idmint.node' "$PG_DIR/data/postgresql.auto.conf")" = "pg_idmint.node = '5'"
# pg_reload_conf() signals the postmaster, which rereads the files; a
# session started after that sees it.
got=''
for _ in $(seq 1 50); do
    got=$(psql_fresh -c "SHOW pg_idmint.node")
    [ "$got" = 5 ] && break
    sleep 0.1
done
expect "a fresh session after the reload: SHOW pg_idmint.node is 5" "$got" = 5
expect "a fresh session after the reload: snowflake() mints for node 5 (idmint_inspect)" \
    "$(psql_fresh -c "SELECT idmint_inspect(snowflake()::text)->>'node'")" = 5

# 3. The configuration files now name pg_idmint.node: a placeholder.
out=$(psql_fresh -c "ALTER SYSTEM SET pg_idmint.node = 6" -c "SELECT pg_reload_conf()")
expect "pg_idmint.node now in postgresql.auto.conf: a bare ALTER SYSTEM of it works in a fresh session" \
    "$out" = $'ALTER SYSTEM\nt'
out=$(psql_fresh -c "ALTER SYSTEM SET pg_idmint.layout = 'discord'")
if [ "$VERSION_NUM" -lt 170000 ]; then
    expect "PostgreSQL $VERSION_NUM: pg_idmint.layout, named in no file, is still refused bare (42704)" \
        "$out" =~ '42704: unrecognized configuration parameter "pg_idmint.layout"'
fi

# 4. A role granted ALTER SYSTEM on one setting (15 and later).
if [ "$VERSION_NUM" -ge 150000 ]; then
    psql_fresh -c "CREATE ROLE idm_ops LOGIN" -c "GRANT ALTER SYSTEM ON PARAMETER pg_idmint.reserve TO idm_ops" >/dev/null
    out=$(PSQL_USER=idm_ops psql_fresh -c "LOAD 'pg_idmint'")
    expect "a role granted ALTER SYSTEM ON PARAMETER but not a superuser cannot LOAD (42501)" "$out" =~ '42501'
    out=$(PSQL_USER=idm_ops psql_fresh -c "SELECT uuid_extract_version(uuidv7())" \
        -c "ALTER SYSTEM SET pg_idmint.reserve = '2s'")
    expect "that role: a first pg_idmint call in its fresh session, then the bare ALTER SYSTEM works" \
        "$out" = $'7\nALTER SYSTEM'
    expect "postgresql.auto.conf holds that role's setting" \
        "$(grep '^pg_idmint.reserve' "$PG_DIR/data/postgresql.auto.conf")" = "pg_idmint.reserve = '2s'"
fi
stop_pg
finish
