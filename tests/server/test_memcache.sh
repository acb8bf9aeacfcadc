# test_memcache.sh - the memcached front end (--memcache, idmintd(8)), as
# katsubushi serves IDs: real memcached clients (libmemcached's memccat and
# memcstat from libmemcached-tools, Python's pymemcache from Debian's
# python3-pymemcache) and the exact bytes of the text and binary protocols;
# a key naming a format mints it, any other a snowflake; stats, version,
# quit; the same budgets, limits, deadlines, TLS, Unix sockets and metrics as
# the other front ends; and --auth-token-file only with a local listener.
# A get parked on a frozen clock is in test_park.sh (libfaketime, which the
# sanitizer builds cannot run).
# Usage: bash tests/server/test_memcache.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(type -P python3)
SNOWFLAKE='[1-9][0-9]{0,18}'
UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-9A-HJKMNP-TV-Z]{26}'
KSUID='[0-9A-Za-z]{27}'
TYPEID='user_[0-9a-hjkmnp-tv-z]{26}'
NL=$'\n'

for tool in memccat memcstat; do
    if ! command -v $tool >/dev/null; then
        CASE_NO=$((CASE_NO + 1))
        fail "libmemcached-tools is installed" "  $tool is missing: install Debian's libmemcached-tools (scripts/test.sh does)"
        finish
    fi
done
if ! "$PYTHON" -c 'import pymemcache' 2>/dev/null; then
    CASE_NO=$((CASE_NO + 1))
    fail "pymemcache is installed" "  $PYTHON cannot import pymemcache: install Debian's python3-pymemcache (scripts/test.sh does)"
    finish
fi

# mc_raw TEXT [SECONDS]: TEXT (printf's escapes) in one write to the
# memcached port; the reply until the server closes, CRs kept as \r.
mc_raw() {
    printf "$1" | raw "$MC_PORT" "${2:-5}" | sed 's/\r/\\r/g'
}

start_server --memcache-random --node 5
MC=127.0.0.1:$MC_PORT
MCPY=$(dirname "$0")/mcclient.py

# --- real clients -----------------------------------------------------------

check "idmintd(8): memccat (libmemcached) gets a snowflake for any key, as from katsubushi" \
    -L "$SNOWFLAKE" -n 2 -- memccat "--servers=$MC" orders user:42
check "... and a key naming a format mints that format (uuidv7, ulid, ksuid)" \
    -O "$UUID7$NL$ULID$NL$KSUID" -- memccat "--servers=$MC" uuidv7 ulid ksuid
check "... and FORMAT:PREFIX mints it with the prefix (typeid:user)" -O "$TYPEID" \
    -- memccat "--servers=$MC" typeid:user
check "memccat over the binary protocol (--binary) gets a snowflake" -L "$SNOWFLAKE" -n 1 \
    -- memccat --binary "--servers=$MC" orders
check "memcstat (libmemcached) lists katsubushi's stats: pid, uptime, time, version, connections, gets" \
    -O "Server: 127\\.0\\.0\\.1 \\($MC_PORT\\)${NL}\\s+pid: $SRV_PID${NL}\\s+uptime: [0-9]+${NL}\\s+time: [0-9]{10}${NL}\\s+version: 1\\.6\\.0-idmint-[0-9.]+${NL}\\s+curr_connections: 1${NL}\\s+total_connections: [0-9]+${NL}\\s+cmd_get: 7${NL}\\s+get_hits: 7${NL}\\s+get_misses: 0" \
    -- memcstat "--servers=$MC"

"$PYTHON" "$MCPY" pymemcache "$MC" >"$T_DIR/py.out" 2>"$T_DIR/py.err"
# py FACT: the line pymemcache's run printed for FACT ("get", "gets", ...).
py() {
    grep "^$1:" "$T_DIR/py.out"
}
expect "pymemcache (python3-pymemcache) runs get, get_many, gets, version, stats" "$?" = 0
check "... get: a snowflake" -O "get: $SNOWFLAKE" -- py 'get'
check "... get_many: a value for each key" -o "get_many keys: a b ksuid typeid:user ulid uuidv7" \
    -- py 'get_many keys'
check "... each of the format it names" \
    -O "get_many a: $SNOWFLAKE${NL}get_many b: $SNOWFLAKE${NL}get_many uuidv7: $UUID7${NL}get_many typeid:user: $TYPEID${NL}get_many ulid: $ULID${NL}get_many ksuid: $KSUID" \
    --sh "grep '^get_many ' '$T_DIR/py.out' | grep -v '^get_many keys:'"
a=$(sed -n 's/^get_many a: //p' "$T_DIR/py.out")
b=$(sed -n 's/^get_many b: //p' "$T_DIR/py.out")
expect "... the snowflakes of one get increase in key order" "$((b > a))" = 1
check "... gets: a CAS of 0" -O "gets: $SNOWFLAKE cas=0" -- py 'gets'
check "... version: the memcached protocol level, then idmint's" -O 'version: 1\.6\.0-idmint-[0-9]+\.[0-9]+\.[0-9]+' \
    -- py 'version'
check "... stats: katsubushi's members" \
    -o "stats keys: cmd_get curr_connections get_hits get_misses pid time total_connections uptime version" \
    -- py 'stats keys'
check "... a key breaking its format's prefix rule is a client error, with the reason" \
    -O "prefix refusal: MemcacheClientError: .*uuidv7 takes no prefix.*" -- py 'prefix refusal'

"$PYTHON" "$MCPY" many "$MC" 200 >"$T_DIR/many.out" 2>&1
check "200 gets of 100 keys on one connection: 20000 snowflakes, distinct and strictly increasing" \
    -o "ids: 20000${NL}distinct: 20000${NL}increasing: True" -- cat "$T_DIR/many.out"

# --- the text protocol's bytes ----------------------------------------------

check "get K1 K2: VALUE K 0 LEN, the ID, for each key, then END (CRLF line ends)" \
    -O "VALUE a 0 19\\\\r${NL}$SNOWFLAKE\\\\r${NL}VALUE uuidv7 0 36\\\\r${NL}$UUID7\\\\r${NL}END\\\\r" \
    -- mc_raw 'get a uuidv7\r\nquit\r\n'
check "gets K: the same with a CAS of 0" -O "VALUE k 0 19 0\\\\r${NL}$SNOWFLAKE\\\\r${NL}END\\\\r" \
    -- mc_raw 'gets k\r\nquit\r\n'
check "a key repeated gets an ID each time" -O "(VALUE k 0 19\\\\r${NL}$SNOWFLAKE\\\\r${NL}){2}END\\\\r" \
    -- mc_raw 'get k k\r\nquit\r\n'
check "version: VERSION 1.6.0-idmint-X" -O 'VERSION 1\.6\.0-idmint-[0-9.]+\\r' -- mc_raw 'version\r\nquit\r\n'
check "stats with an argument: a group idmintd does not keep, END alone" -o 'END\r' \
    -- mc_raw 'stats slabs\r\nquit\r\n'
check "an unknown command (set): ERROR, as memcached answers, and the connection goes on" \
    -O "ERROR\\\\r${NL}VALUE a 0 19\\\\r${NL}$SNOWFLAKE\\\\r${NL}END\\\\r" -- mc_raw 'set a 0 0 1\r\nget a\r\nquit\r\n'
check "a blank line is ignored; LF alone ends a line too" -O "VALUE a 0 19\\\\r${NL}$SNOWFLAKE\\\\r${NL}END\\\\r" \
    -- mc_raw '\r\nget a\nquit\n'
check "typeid without a prefix: CLIENT_ERROR naming the key to use, nothing minted" \
    -o 'CLIENT_ERROR typeid needs a prefix: get typeid:PREFIX\r' -- mc_raw 'get a typeid\r\nquit\r\n'
check "a prefix the format's rule refuses (typeid:Bad): CLIENT_ERROR with the library's reason" \
    -O 'CLIENT_ERROR .*\\r' -- mc_raw 'get typeid:Bad\r\nquit\r\n'
long=$(printf 'k%.0s' $(seq 251))
check "a key over 250 bytes: memcached's CLIENT_ERROR, and the connection closes" \
    -o 'CLIENT_ERROR bad command line format\r' -- mc_raw "get $long\r\nget a\r\n"
check "quit closes the connection without a reply" -o '' -- mc_raw 'quit\r\nget a\r\n'

# --- the binary protocol ----------------------------------------------------

"$PYTHON" "$MCPY" binary "$MC" >"$T_DIR/bin.out" 2>&1
check "binary GET: magic 0x81, status 0, flags 0 as extras, no key, the ID, the opaque echoed, CAS 0" \
    -O "get: magic=0x81 op=0x00 status=0x0000 opaque=11 cas=0 extras=00000000 key= value=$SNOWFLAKE" \
    -- grep '^get:' "$T_DIR/bin.out"
check "binary GETK: the same with the key" \
    -O "getk: magic=0x81 op=0x0c status=0x0000 opaque=12 cas=0 extras=00000000 key=orders value=$SNOWFLAKE" \
    -- grep '^getk:' "$T_DIR/bin.out"
check "binary VERSION" -O 'version: magic=0x81 op=0x0b status=0x0000 opaque=13 cas=0 extras= key= value=1\.6\.0-idmint-[0-9.]+' \
    -- grep '^version:' "$T_DIR/bin.out"
check "binary NOOP: an empty success" -o 'noop: magic=0x81 op=0x0a status=0x0000 opaque=14 cas=0 extras= key= value=' \
    -- grep '^noop:' "$T_DIR/bin.out"
check "binary SET (any other opcode): status 0x0081, unknown command" \
    -o 'set: magic=0x81 op=0x01 status=0x0081 opaque=15 cas=0 extras= key= value=Unknown command' \
    -- grep '^set:' "$T_DIR/bin.out"
check "binary GET of a format's key mints it" -O "get uuidv7: magic=0x81 op=0x00 status=0x0000 opaque=16 cas=0 extras=00000000 key= value=$UUID7" \
    -- grep '^get uuidv7: ' "$T_DIR/bin.out"
check "binary GET refused: status 0x0004 (invalid arguments) with the reason" \
    -O 'get uuidv7:x: magic=0x81 op=0x00 status=0x0004 opaque=17 .*value=uuidv7 takes no prefix.*' \
    -- grep '^get uuidv7:x:' "$T_DIR/bin.out"
check "binary QUIT: answered, then the connection closes" \
    -o "quit: magic=0x81 op=0x07 status=0x0000 opaque=18 cas=0 extras= key= value=${NL}after quit: closed" \
    -- grep -A1 '^quit:' "$T_DIR/bin.out"

# --- metrics ----------------------------------------------------------------

curl -s "$BASE/metrics" >"$T_DIR/metrics"
check "/metrics counts memcached commands as route=\"memcache\"" \
    -O 'idmint_requests_total\{route="memcache",status="2xx"\} [1-9][0-9]*' \
    -- grep '^idmint_requests_total{route="memcache",status="2xx"}' "$T_DIR/metrics"
check "... and the refused ones (4xx: the client errors above)" \
    -O 'idmint_requests_total\{route="memcache",status="4xx"\} [1-9][0-9]*' \
    -- grep '^idmint_requests_total{route="memcache",status="4xx"}' "$T_DIR/metrics"
check "... with a row per reason for its refused connections, after HTTP's and RESP's" \
    -o "http${NL}http${NL}http${NL}resp${NL}resp${NL}resp${NL}memcache${NL}memcache${NL}memcache" \
    --sh "grep -o '^idmint_connections_refused_total{protocol=\"[a-z]*\"' '$T_DIR/metrics' | sed 's/.*=\"//; s/\"//'"
check "... and its auth failures and request timeouts" -n 2 \
    -- grep -E '^idmint_(auth_failures|request_timeouts)_total\{protocol="memcache"\} 0$' "$T_DIR/metrics"
minted=$(metric 'idmint_ids_minted_total{format="snowflake"}')
expect "IDs minted over memcached count in idmint_ids_minted_total" "$minted" -gt 20000
stop_server
expect "SIGTERM: exit 0 with a memcached port" "$SRV_STATUS" = 0

# --- limits, deadlines, Unix sockets, TLS ------------------------------------

start_server --memcache-random --max-connections 1 --header-timeout 300 \
    --memcache-idle-timeout 400
exec {held}<>"/dev/tcp/127.0.0.1/$MC_PORT"
send "$held" 'version\r\n'
timeout 2 head -c 10 <&"$held" >/dev/null
check "over --max-connections: memcached's refusal, then the close" \
    -o 'SERVER_ERROR too many open connections\r' -- mc_raw 'get a\r\n'
expect "... counted in idmint_connections_refused_total{protocol=\"memcache\",reason=\"limit\"}" \
    "$(metric 'idmint_connections_refused_total{protocol="memcache",reason="limit"}')" = 1
exec {held}>&-
wait_until 5 bash -c "[ \"\$(curl -s '$BASE/metrics' | awk '\$1 == \"idmint_connections_open\" { print \$2 }')\" = 0 ]"
check "a request not complete within --header-timeout: CLIENT_ERROR, then the close" \
    -o 'CLIENT_ERROR request incomplete after 300 ms\r' -- mc_raw 'get a' 10
check "an idle connection closes after --memcache-idle-timeout" -o "closed" \
    --sh "exec 3<>/dev/tcp/127.0.0.1/$MC_PORT; timeout 5 cat <&3 >/dev/null && echo closed"
stop_server

SOCK=$T_DIR/mc.sock
start_server --memcache "unix:$SOCK"
check "--memcache unix:PATH: a Unix socket of mode 0660" -o 660 -- stat -c %a "$SOCK"
check "... memccat gets over it" -L "$SNOWFLAKE" -n 1 -- memccat "--servers=$SOCK" a
check "... pymemcache too" -O "get: $SNOWFLAKE" --sh "'$PYTHON' '$MCPY' pymemcache '$SOCK' | grep '^get:'"
stop_server
expect "... and the socket goes when idmintd stops" "$(ls "$SOCK" 2>/dev/null | wc -l)" = 0

bash "$(dirname "$0")/tls_cert.sh" "$T_DIR/tls" server
# Every port is TLS then: the /healthz start_server waits for too.
SRV_SCHEME=https
curl() {
    command curl -m 10 --cacert "$T_DIR/tls/ca.pem" "$@"
}
start_server --memcache-random --tls-cert "$T_DIR/tls/server.pem" --tls-key "$T_DIR/tls/server.key"
check "with --tls-cert the memcached port is TLS too: get and version over it" \
    -O "VALUE a 0 19$NL$SNOWFLAKE${NL}END${NL}VERSION 1\\.6\\.0-idmint-[0-9.]+" \
    -- "$PYTHON" "$MCPY" tls "127.0.0.1:$MC_PORT" "$T_DIR/tls/ca.pem"
check "... and plain text on it is not served (no reply in the clear)" -o '' -- mc_raw 'get a\r\n' 3
stop_server
SRV_SCHEME=http
curl() {
    command curl -m 10 "$@"
}

# --- access control ---------------------------------------------------------

TOKEN=$T_DIR/token
printf 'idmint-test-token-0123456789abcdef\n' >"$TOKEN"
chmod 600 "$TOKEN"
"$IDMINTD" --memcache "0.0.0.0:$(random_port)" --http off --resp off --auth-token-file "$TOKEN" \
    --state-dir "$T_DIR/s3" --node-registry "$T_DIR/nodes" >"$T_DIR/auth.log" 2>&1
expect "--auth-token-file with --memcache beyond loopback: refused at start (exit 2)" "$?" = 2
check "... saying the protocol cannot carry the token" \
    -O ".*refusing to listen on 0\\.0\\.0\\.0:[0-9]+ for memcache with --auth-token-file: the protocol cannot carry the token.*" \
    -- cat "$T_DIR/auth.log"
"$IDMINTD" --memcache "0.0.0.0:$(random_port)" --http off --resp off --auth-token-file "$TOKEN" \
    --allow-unauthenticated --state-dir "$T_DIR/s3" --node-registry "$T_DIR/nodes" >"$T_DIR/auth2.log" 2>&1
expect "... even with --allow-unauthenticated" "$?" = 2
"$IDMINTD" --memcache "0.0.0.0:$(random_port)" --http off --resp off \
    --state-dir "$T_DIR/s3" --node-registry "$T_DIR/nodes" >"$T_DIR/auth3.log" 2>&1
expect "without a token, --memcache beyond loopback is protected mode's refusal (exit 2)" "$?" = 2
check "... saying how to allow it" -O '.*give --allow-unauthenticated to do it anyway.*' -- cat "$T_DIR/auth3.log"
start_server --memcache-random --auth-token-file "$TOKEN"
check "with --auth-token-file and a loopback --memcache: served without the token" -L "$SNOWFLAKE" -n 1 \
    -- memccat "--servers=127.0.0.1:$MC_PORT" a
http "... while HTTP still needs it" -s 401 -- /v1/ids/snowflake
stop_server

finish
