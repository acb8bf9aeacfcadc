# test_resp.sh - idmintd's Redis-protocol port with real Redis clients
# (redis-cli, redis-benchmark) and raw RESP: PING, NEXT for every format,
# arrays, INFO, QUIT, errors, pipelining, and IDs unique and increasing
# under load.
# Usage: bash tests/server/test_resp.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
UUID4='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
KSUID='[0-9A-Za-z]{27}'
SNOWFLAKE='[1-9][0-9]{0,18}'
SUFFIX='[0-7][0-9a-hjkmnp-tv-z]{25}'
TOKEN='[0-9A-Za-z]{22}'
TRACEPARENT='00-[0-9a-f]{32}-[0-9a-f]{16}-01'

start_server --max-count 1000
cli() {
    redis-cli -p "$RESP_PORT" "$@"
}

check "PING: +PONG" -o PONG -- cli PING
check "PING message: the message" -o 'hello world' -- cli PING 'hello world'
check "commands are case-insensitive" -o PONG -- cli ping

declare -A RE=([uuidv7]=$UUID7 [uuidv4]=$UUID4 [ulid]=$ULID [ksuid]=$KSUID [snowflake]=$SNOWFLAKE
    [token]=$TOKEN [traceparent]=$TRACEPARENT)
for f in uuidv7 uuidv4 ulid ksuid snowflake token traceparent; do
    check "NEXT format: a bulk string ($f)" -L "${RE[$f]}" -n 1 -- cli NEXT "$f"
    check "NEXT format count: an array of bulk strings for a count above 1 ($f, 4)" \
        -L "${RE[$f]}" -n 4 -- cli NEXT "$f" 4
done
check "NEXT snowflake 5: an array of 5, strictly increasing" -o '' \
    --sh "out=\$(redis-cli -p $RESP_PORT NEXT snowflake 5)
          [ \$(printf '%s\n' \"\$out\" | grep -cE '^$SNOWFLAKE\$') = 5 ] && printf '%s\n' \"\$out\" | sort -n -C -u"
check "NEXT typeid count prefix" -L "user_$SUFFIX" -n 3 -- cli NEXT typeid 3 user
check "NEXT token count prefix" -L "sk_$TOKEN" -n 2 -- cli NEXT token 2 sk
expect "NEXT format 1: a bulk string, not an array (raw reply)" \
    "$(printf '*3\r\n$4\r\nNEXT\r\n$4\r\nulid\r\n$1\r\n1\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')" \
    =~ "^\\\$26 $ULID \\+OK\$"
expect "NEXT format 3: an array of three bulk strings (raw reply)" \
    "$(printf 'NEXT ulid 3\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')" \
    =~ "^\\*3 \\\$26 $ULID \\\$26 $ULID \\\$26 $ULID \\+OK\$"
check "INFO: version, node, layout, readiness and counters as a bulk string" -o '' \
    --sh "info=\$(redis-cli -p $RESP_PORT INFO | tr -d '\r')
          for k in 'idmint_version:[0-9]' 'node:0' 'layout:twitter' 'ready:1' 'ids_minted:[0-9]+' 'connected_clients:[0-9]+'; do
              grep -qE \"^\$k\" <<<\"\$info\" || echo \"missing \$k\"
          done"
check "INFO section: the same bulk string" -O '.*ready:1.*' --sh "redis-cli -p $RESP_PORT INFO server | tr -d '\r' | paste -sd ' '"

printf 'PING\r\nQUIT\r\nPING\r\n' | raw "$RESP_PORT" 5 >"$T_DIR/quit"
expect "QUIT: +OK and the connection closes" "$?" = 0
expect "QUIT: +OK, and what follows it is not answered" "$(tr -d '\r' <"$T_DIR/quit" | paste -sd ' ')" = '+PONG +OK'

# --- errors ----------------------------------------------------------------------------

err() {
    cli "$@" | grep -v '^$'
}
check "NEXT without a format: a RESP error" -O "ERR wrong number of arguments.*" -- err NEXT
check "NEXT with too many arguments: a RESP error" -O "ERR wrong number of arguments.*" -- err NEXT ulid 1 a b
check "Errors (unknown format) are RESP errors" -O 'ERR unknown format.*' -- err NEXT uuidv9
for c in 0 1001 abc -1 99999999999999999999999 ''; do
    check "Errors (bad count) are RESP errors (count '$c')" -O 'ERR count must be (a whole number|from 1 to 1000)' \
        -- err NEXT ulid "$c"
done
for p in User a1 _x "$(printf 'a%.0s' $(seq 1 64))"; do
    check "Errors (a bad prefix) are RESP errors ($p)" -O 'ERR invalid prefix.*' -- err NEXT typeid 1 "$p"
done
check "a prefix applies only to typeid and token" -O 'ERR prefix applies only to typeid and token.*' \
    -- err NEXT snowflake 1 user
check "an unknown command is a RESP error" -O "ERR unknown command 'FOO'.*" -- err FOO bar
check "the connection stays usable after errors" -O "ERR unknown command.*
PONG" --sh "printf 'FOO\nPING\n' | redis-cli -p $RESP_PORT | grep -v '^\$'"

# --- what clients send while connecting ----------------------------------------------

# idmintd(8) says CONFIG answers an empty array; any reply will do for
# redis-benchmark, and Redis without persistence answers CONFIG GET save
# with the name and an empty value: either is accepted.
expect "CONFIG GET and COMMAND answer (redis-benchmark waits for a reply to CONFIG GET save and appendonly)" \
    "$(printf 'CONFIG GET save\r\nCONFIG GET appendonly\r\nCOMMAND DOCS\r\nCOMMAND\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')" \
    =~ '^(\*0|\*2 \$4 save \$0 ) (\*0|\*2 \$10 appendonly \$0 ) \*0 \*0 \+OK$'
check "CLIENT answers +OK" -o OK -- cli CLIENT SETNAME test
check "SELECT answers +OK" -o OK -- cli SELECT 0
check "ECHO" -o hi -- cli ECHO hi

# --- pipelining ----------------------------------------------------------------------

piped=$(
    {
        printf '*1\r\n$4\r\nPING\r\n'
        printf 'NEXT snowflake\r\n'
        printf '*3\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n$1\r\n2\r\n'
        printf 'NEXT nope\r\n'
        printf 'PING again\r\n'
        printf 'QUIT\r\n'
    } | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' '
)
expect "pipelining: every command in one write is answered, in order" "$piped" \
    =~ "^\+PONG \\\$[0-9]+ $SNOWFLAKE \*2 \\\$[0-9]+ $SNOWFLAKE \\\$[0-9]+ $SNOWFLAKE -ERR unknown format[^\$]* \\\$5 again \+OK\$"

# --- load: redis-benchmark and loadclient ----------------------------------------------

check "redis-benchmark -n 2000 NEXT snowflake completes" -O '.*NEXT snowflake: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -n 2000 -q NEXT snowflake | tr '\r' '\n' | grep 'requests per second' | tail -n 1"
check "redis-benchmark -n 2000 -P 16 NEXT snowflake completes" -O '.*NEXT snowflake: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -n 2000 -P 16 -q NEXT snowflake | tr '\r' '\n' | grep 'requests per second' | tail -n 1"
check "redis-benchmark -c 20 -P 16 NEXT ulid 10 completes" -O '.*NEXT ulid 10: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -c 20 -n 5000 -P 16 -q NEXT ulid 10 | tr '\r' '\n' | grep 'requests per second' | tail -n 1"

"$LOADCLIENT" --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 10' --cmd 'NEXT uuidv7 3' --cmd 'NEXT ulid' \
    --cmd 'NEXT snowflake' --conns 8 --pipeline 16 --duration-ms 1500 --ids "$T_DIR/resp.ids" >"$T_DIR/resp.out" 2>&1
expect "loadclient over RESP: no duplicate, each connection strictly increasing, nothing malformed" "$?" = 0
expect "loadclient over RESP: all replies are IDs" "$(kv "$T_DIR/resp.out" s200)" = "$(kv "$T_DIR/resp.out" requests)"
expect "loadclient over RESP: IDs received" "$(kv "$T_DIR/resp.out" ids)" -gt 1000
expect "loadclient over RESP: no duplicates (sort -u over all IDs)" \
    "$(sort "$T_DIR/resp.ids" | uniq -d | head -n 3)" = ''
expect "RESP requests are counted in /metrics" "$(metric 'idmint_requests_total{route="resp",status="2xx"}')" \
    -gt "$(kv "$T_DIR/resp.out" requests)"

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
