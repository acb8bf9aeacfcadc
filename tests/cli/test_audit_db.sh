# test_audit_db.sh - `idmint audit --db` against a real PostgreSQL and a
# real MariaDB (tests/coord/pg.sh and mariadb.sh start them on random
# loopback ports), as test_audit.sh runs it on SQLite: a duplicate planted
# in a table is found with its rows, in bigint, text, uuid, bytea and
# BINARY(16) columns; a clean table passes; a missing table and a server
# that is gone are errors (exit 2) that name them, without the password.
# Usage: bash tests/cli/test_audit_db.sh PATH_TO_IDMINT
# Without the servers it fails with IDM_COORD_REQUIRED=ON (scripts/test.sh
# installs them), and exits 77 (skipped) without.
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/cli/dbservers.sh
. "$(dirname "$0")/dbservers.sh"
D=$T_DIR

"$IDMINT" gen snowflake --node 3 -n 20000 >"$D/sf"
"$IDMINT" gen uuidv7 -n 5000 >"$D/v7"
dup=$(sed -n 4321p "$D/sf")
vdup=$(sed -n 77p "$D/v7")

# sql_rows TABLE COLUMNS VALUES_FILE: INSERT statements, one per line.
inserts() {
    awk -v t="$1" -v c="$2" '{printf "INSERT INTO %s (%s) VALUES (%s);\n", t, c, $0}' "$3"
}

# --- PostgreSQL ---------------------------------------------------------------
if start_pg "$D/pg"; then
    URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
    {
        echo "CREATE TABLE orders (seq bigserial PRIMARY KEY, id bigint NOT NULL, txt text);"
        echo "CREATE TABLE users (seq bigserial PRIMARY KEY, id uuid NOT NULL, raw bytea);"
        echo "BEGIN;"
        { cat "$D/sf"; echo "$dup"; } | sed "s/.*/&, '&'/" | inserts orders "id, txt" /dev/stdin
        { cat "$D/v7"; echo "$vdup"; } |
            awk '{h=$0; gsub("-", "", h); printf "'"'"'%s'"'"', '"'"'\\x%s'"'"'\n", $0, h}' |
            inserts users "id, raw" /dev/stdin
        echo "COMMIT;"
    } | pg_psql >/dev/null
    check "PostgreSQL bigint: the planted duplicate, with its rows" -s 1 \
        -O "(.|\n)*$dup at postgresql://postgres@127.0.0.1:$PG_PORT/postgres orders.id row 20001, first at .* row 4321 \(node 3\)(.|\n)*verdict: FAIL: duplicates, out of order" \
        -- "$IDMINT" audit snowflake --db "$URL" --table orders --column id --order-by seq
    check "PostgreSQL text, schema-qualified" -s 1 -O "(.|\n)*$dup at .* row 20001, first at .* row 4321(.|\n)*" \
        -- "$IDMINT" audit snowflake --db "$URL" --table public.orders --column txt --order-by seq
    check "PostgreSQL uuid" -s 1 -O "(.|\n)*$vdup at .* row 5001, first at .* row 77, 2 times(.|\n)*" \
        -- "$IDMINT" audit uuidv7 --db "$URL" --table users --column id --order-by seq
    check "PostgreSQL uuid read as ULIDs (the same bits)" -s 1 \
        -O "(.|\n)*row 5001, first at .* row 77, 2 times(.|\n)*" \
        -- "$IDMINT" audit ulid --db "$URL" --table users --column id --order-by seq
    check "PostgreSQL bytea" -s 1 -O "(.|\n)*row 5001, first at .* row 77(.|\n)*" \
        -- "$IDMINT" audit uuidv7 --db "$URL" --table users --column raw --order-by seq
    pg_psql -c "DELETE FROM orders WHERE seq = 20001" >/dev/null
    check "PostgreSQL: the table without it passes" -O '(.|\n)*verdict: OK(.|\n)*' \
        -- "$IDMINT" audit snowflake --db "$URL" --table orders --column id --order-by seq
    check "PostgreSQL: no such table" -s 2 -e 'idmint: .*nope' \
        -- "$IDMINT" audit snowflake --db "$URL" --table nope --column id
    check "PostgreSQL: an expression is not a column name" -s 2 -e "column 'seq::text': expected" \
        -- "$IDMINT" audit snowflake --db "$URL" --table orders --column seq::text --order-by seq
    pg_psql -c "CREATE TABLE nums (id numeric); INSERT INTO nums VALUES (1)" >/dev/null
    check "PostgreSQL: numeric is refused with the way out" -s 2 -e 'use text, varchar, bigint, uuid or bytea' \
        -- "$IDMINT" audit snowflake --db "$URL" --table nums --column id
    stop_pg fast
    check "PostgreSQL that is gone: exit 2, named" -s 2 -e "idmint: postgresql://postgres@127.0.0.1:$PG_PORT/postgres: cannot connect" \
        -- "$IDMINT" audit snowflake --db "$URL" --table orders --column id
else
    tcheck "PostgreSQL starts" "it did not"
fi

# --- MariaDB --------------------------------------------------------------------
if start_mariadb "$D/mariadb"; then
    {
        echo "USE idmint;"
        echo "CREATE TABLE orders (seq BIGINT AUTO_INCREMENT PRIMARY KEY, id BIGINT UNSIGNED NOT NULL, txt VARCHAR(20));"
        echo "CREATE TABLE users (seq BIGINT AUTO_INCREMENT PRIMARY KEY, id BINARY(16) NOT NULL, u UUID);"
        echo "BEGIN;"
        { cat "$D/sf"; echo "$dup"; } | sed "s/.*/&, '&'/" | inserts orders "id, txt" /dev/stdin
        { cat "$D/v7"; echo "$vdup"; } |
            awk '{h=$0; gsub("-", "", h); printf "UNHEX('"'"'%s'"'"'), '"'"'%s'"'"'\n", h, $0}' |
            inserts users "id, u" /dev/stdin
        echo "COMMIT;"
    } | mariadb_sql
    check "MariaDB BIGINT: the planted duplicate, with its rows" -s 1 \
        -O "(.|\n)*$dup at mysql://.* orders.id row 20001, first at .* row 4321 \(node 3\)(.|\n)*" \
        -- "$IDMINT" audit snowflake --db "$MARIADB_URL" --table orders --column id --order-by seq
    check "MariaDB VARCHAR" -s 1 -O "(.|\n)*row 20001, first at .* row 4321(.|\n)*" \
        -- "$IDMINT" audit snowflake --db "$MARIADB_URL" --table orders --column txt --order-by seq
    check "MariaDB BINARY(16)" -s 1 -O "(.|\n)*$vdup at .* row 5001, first at .* row 77(.|\n)*" \
        -- "$IDMINT" audit uuidv7 --db "$MARIADB_URL" --table users --column id --order-by seq
    check "MariaDB UUID" -s 1 -O "(.|\n)*$vdup at .* row 5001, first at .* row 77(.|\n)*" \
        -- "$IDMINT" audit uuidv7 --db "$MARIADB_URL" --table users --column u --order-by seq
    pass_word=${MARIADB_URL#*://*:}
    pass_word=${pass_word%%@*}
    out=$("$IDMINT" audit snowflake --db "$MARIADB_URL" --table orders --column id 2>&1)
    tcheck "the password is not shown" "$(case $out in *"$pass_word"*) echo "shown: $out" ;; esac)"
    mariadb_sql -e "DELETE FROM idmint.orders WHERE seq = 20001"
    check "MariaDB: the table without it passes" -O '(.|\n)*verdict: OK(.|\n)*' \
        -- "$IDMINT" audit snowflake --db "$MARIADB_URL" --table orders --column id --order-by seq
    check "MariaDB: no such table" -s 2 -e "idmint: mysql://.*nope.*doesn't exist" \
        -- "$IDMINT" audit snowflake --db "$MARIADB_URL" --table nope --column id
    stop_mariadb
else
    tcheck "MariaDB starts" "it did not"
fi
finish
