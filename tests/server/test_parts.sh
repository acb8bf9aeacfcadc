# test_parts.sh - replies larger than a connection's share of --max-buffered
# go out in parts, each minted when the one before has been written: the
# reply is the same as a whole one (length, count, order, uniqueness), and
# what idmintd buffers for a client that does not read stays near one
# share, not the reply's size.
# Usage: bash tests/server/test_parts.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

PREFIX=$(printf 'p%.0s' {1..63})
TYPEID="${PREFIX}_[0-7][0-9a-hjkmnp-tv-z]{25}"
# 100,000 TypeIDs with a 63-byte prefix: 9.1 MB, nine times the largest
# share (1 MiB).
start_server --max-count 1000000 --max-buffered 16M

minted_before=$(metric 'idmint_ids_minted_total{format="typeid"}')
http "A reply larger than a share goes out in parts (idmintd(8), --max-buffered); its Content-Length is the whole body's" \
    -h 'Content-Length: 9100000' -L "$TYPEID" -n 100000 -- "/v1/ids/typeid?count=100000&prefix=$PREFIX"
check "A reply in parts is the same as a whole one: IDs unique and in order" -o 100000 \
    --sh "sort -c '$T_DIR/body' && sort -u '$T_DIR/body' | wc -l"
http "The JSON array in parts has the whole body's Content-Length" -h 'Content-Type: application/json' \
    -h 'Content-Length: 3900002' -- "/v1/ids/uuidv7?count=100000" -H 'Accept: application/json'
check "... and is one JSON document: 100000 distinct UUIDs, in order" -o '100000 True' \
    --sh "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(set(d)), d == sorted(d))' '$T_DIR/body'"
check "RESP: NEXT typeid 100000 in parts, every element a TypeID, none repeated" -o 100000 \
    --sh "redis-cli -p $RESP_PORT NEXT typeid 100000 $PREFIX | grep -E '^$TYPEID\$' | sort -u | wc -l"
expect "Each ID handed out is counted once" \
    "$(metric 'idmint_ids_minted_total{format="typeid"}')" = $((minted_before + 200000))

# Clients that ask for megabytes and read nothing, with --max-buffered 4M
# and three idle connections beside them: a share is 4 MiB over 4 or 5
# open connections, at most 1 MiB, so a client holds at most about that
# (not read once it holds half, parts of a quarter). The kernel's socket
# buffers take a few MB more, outside the process.
stop_server
start_server --max-count 1000000 --max-buffered 4M
idle=()
for _ in 1 2 3; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
    idle+=("$fd")
done
exec {slow}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
send "$slow" '*4\r\n$4\r\nNEXT\r\n$6\r\ntypeid\r\n$6\r\n100000\r\n$63\r\n%s\r\n' "$PREFIX"
sleep 1
out=$(metric 'idmint_buffered_bytes{direction="out"}')
echo "idmint_buffered_bytes{direction=\"out\"}: $out" >&2
expect "A client that does not read holds about its share (1 MiB here) of replies, not the 9.1 MB asked for" \
    "$out" -le $((3 * 1024 * 1024 / 2))
expect "... and idmintd is still serving others meanwhile" "$(redis-cli -p "$RESP_PORT" NEXT ulid 1 | wc -c)" = 27
got=$(timeout 20 cat <&"$slow" | head -c 20000000 | grep -cE "^$TYPEID"$'\r'"?\$")
exec {slow}>&-
expect "Reading at last, the client gets every ID of its reply" "$got" = 100000

# The same for a million snowflakes, whose minting parks for the next
# millisecond every 4096 IDs: a park that ends does not mint past a part
# the client has not read (22 MB were buffered before).
exec {slow}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
send "$slow" '*3\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n$7\r\n1000000\r\n'
sleep 1
out=$(metric 'idmint_buffered_bytes{direction="out"}')
echo "idmint_buffered_bytes{direction=\"out\"}: $out" >&2
expect "Snowflakes in parts, parked between: a client that does not read holds about its share" \
    "$out" -le $((3 * 1024 * 1024 / 2))
got=$(timeout 30 cat <&"$slow" | head -c 26000010 | grep -cE '^[1-9][0-9]{0,18}'$'\r''$')
exec {slow}>&-
expect "... and reading at last gets all 1000000" "$got" = 1000000
for fd in "${idle[@]}"; do exec {fd}>&-; done

# With a smaller budget shared by many clients, the parts shrink to the
# share (16 MiB over 1000 connections: IDMS_SHARE_MIN, 16 KiB).
stop_server
start_server --max-count 100000 --max-buffered 1M
idle=()
for _ in $(seq 60); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
    idle+=("$fd")
done
http "With 60 other connections open, a 1 MiB budget still serves large replies, in 16 KiB parts" \
    -h 'Content-Length: 3700000' -n 100000 -L '[0-9a-f-]{36}' -- "/v1/ids/uuidv7?count=100000"
for fd in "${idle[@]}"; do exec {fd}>&-; done
expect "Buffered bytes go back to 0 when the clients are done" \
    "$(wait_until 5 bash -c "[ \"\$(curl -s $BASE/metrics | awk '\$1 == \"idmint_buffered_bytes{direction=\\\"out\\\"}\" {print \$2}')\" = 0 ]" && echo 0)" = 0
stop_server
expect "SIGTERM still exits 0" "$SRV_STATUS" = 0
finish
