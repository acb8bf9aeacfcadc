# test_auth.sh - access control (idmintd(8): --auth-token-file,
# --allow-unauthenticated; docs/idmintd.md "Access control and threat
# model"): HTTP Bearer tokens and their 401s, the open probes, RESP's AUTH,
# HELLO ... AUTH, -NOAUTH and -WRONGPASS in Redis's words, pipelines, the
# token file's rules, protected mode, the failures' count and log (never
# the token), and the real client libraries with their password options.
# Usage: bash tests/server/test_auth.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
SNOWFLAKE='[1-9][0-9]{0,18}'
JSON_ERROR='\{"error": ".*"\}'
TOKEN=idmint-test-token-0123456789abcdef
WRONG=idmint-test-token-0123456789abcdeX
CHALLENGE='WWW-Authenticate: Bearer realm="idmintd"'
INVALID='WWW-Authenticate: Bearer realm="idmintd", error="invalid_token".*'
NOAUTH='-NOAUTH Authentication required.'
WRONGPASS='-WRONGPASS invalid username-password pair or user is disabled.'
CLIENTS=$(cd "$(dirname "$0")/../clients" && pwd)
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(type -P python3)

# token_file NAME MODE CONTENT: a file in T_DIR holding CONTENT exactly
# (printf %b: \n, \r and \t are escapes); prints its path.
token_file() {
    local f=$T_DIR/$1
    printf '%b' "$3" >"$f"
    chmod "$2" "$f"
    printf '%s\n' "$f"
}
TOK=$(token_file token 600 "$TOKEN\n")

# refused EVIDENCE ERE ARGS...: idmintd with ARGS (on loopback, no state)
# exits 2 at once, its stderr matching ERE.
refused() {
    local evidence=$1 re=$2
    shift 2
    check "$evidence" -s 2 -O "$re" --sh "timeout 5 \"\$IDMINTD\" --http 127.0.0.1:$(random_port) \
        --resp 127.0.0.1:$(random_port) --state-dir none $(printf '%q ' "$@") 2>&1 >/dev/null"
}

# --- the token file --------------------------------------------------------------------

refused "the token file must be mode 0600 or stricter (0644 is refused, saying why)" \
    "idmintd: --auth-token-file .*: mode 0644 lets other users read it; it must be 0600 or stricter \\(chmod 600 .*\\)" \
    --auth-token-file "$(token_file t644 644 "$TOKEN\n")"
refused "the token file must be mode 0600 or stricter (0640: group-readable)" \
    ".*mode 0640 lets other users read it.*" --auth-token-file "$(token_file t640 640 "$TOKEN\n")"
OTHER=$(token_file tother 600 "$TOKEN\n")
chown 65534 "$OTHER"
refused "the token file must be owned by the user running idmintd" \
    "idmintd: --auth-token-file .*: owned by uid 65534, not by the user idmintd runs as \\(uid $(id -u)\\).*" \
    --auth-token-file "$OTHER"
refused "an empty token is refused" ".*the file is empty; put a token of at least 16 .*" \
    --auth-token-file "$(token_file tempty 600 '')"
refused "a file holding only a newline is an empty token" ".*the file is empty.*" \
    --auth-token-file "$(token_file tnl 600 '\n')"
refused "a token shorter than 16 bytes is refused" \
    "idmintd: --auth-token-file .*: the token is 15 bytes; at least 16 are needed .*" \
    --auth-token-file "$(token_file tshort 600 'abcdefghijklmno\n')"
refused "a token with a control character is refused" ".*the token holds a control character \\(at byte 9\\).*" \
    --auth-token-file "$(token_file tctl 600 'abcdefgh\tijklmnopqrst\n')"
refused "a token with a space is refused" ".*the token holds a space \\(at byte 9\\).*" \
    --auth-token-file "$(token_file tspace 600 'abcdefgh ijklmnopqrst\n')"
refused "only one final line end is stripped" ".*the token holds a control character \\(at byte 35\\).*" \
    --auth-token-file "$(token_file t2nl 600 "$TOKEN\n\n")"
refused "a token longer than 1024 bytes is refused" ".*the token is longer than 1024 bytes" \
    --auth-token-file "$(token_file tlong 600 "$(printf 'a%.0s' {1..1025})")"
refused "a missing token file is refused" "idmintd: --auth-token-file .*/nonexistent: No such file or directory" \
    --auth-token-file "$T_DIR/nonexistent"
refused "a directory is not a token file" "idmintd: --auth-token-file .*: not a regular file" \
    --auth-token-file "$T_DIR"
refused "an empty --auth-token-file is refused (it would turn access control off)" \
    "idmintd: --auth-token-file: needs a file name.*" --auth-token-file ''
check "a refused token is never printed (the message gives its length only)" -s 2 \
    -O 'idmintd: --auth-token-file .*: the token is 12 bytes; at least 16 are needed .*' \
    --sh "out=\$(timeout 5 \"\$IDMINTD\" --state-dir none --auth-token-file $(token_file tshort2 600 'secretsecret\n') 2>&1)
          rc=\$?
          grep -qF secretsecret <<<\"\$out\" && out=\"leaked: \$out\"
          printf '%s\n' \"\$out\"
          exit \$rc"
refused "the config file's auth-token-file follows the same rules" ".*mode 0644 lets other users read it.*" \
    --config "$(token_file conf644 600 "auth-token-file = $T_DIR/t644\n")"

# --- protected mode --------------------------------------------------------------------

P=$(random_port)
check "a non-loopback listener without a token: refused at start, saying why (Redis's protected mode)" -s 2 \
    -o "idmintd: refusing to listen on 0.0.0.0:$P without --auth-token-file: anyone who can connect could mint IDs; give --allow-unauthenticated to do it anyway" \
    --sh "timeout 5 \"\$IDMINTD\" --http 0.0.0.0:$P --resp 127.0.0.1:$(random_port) --state-dir $T_DIR/sd-refused 2>&1 >/dev/null"
expect "the refusal comes before anything is opened (no state directory made)" \
    "$([ -e "$T_DIR/sd-refused" ] && echo made || echo none)" = none
refused "the RESP listener too ([::], IPv6 any)" \
    "idmintd: refusing to listen on \\[::\\]:[0-9]+ without --auth-token-file: .*" --resp "[::]:$(random_port)"
refused "a routable address counts as reachable from others (192.0.2.1)" \
    "idmintd: refusing to listen on 192.0.2.1:[0-9]+ without .*" --http "192.0.2.1:$(random_port)"
refused "a host name is not a listen address: refused before anything listens, saying what is" \
    "idmintd: invalid --http 'localhost:[0-9]+' \\(expected ADDR:PORT with an IPv4 address or an \\[IPv6\\] one.*" \
    --http "localhost:$(random_port)"
refused "the config file's allow-unauthenticated takes yes or no" \
    ".*allow-unauthenticated: 'maybe' is not yes or no.*" \
    --config "$(token_file confmaybe 600 'allow-unauthenticated = maybe\n')"
refused "unix: listen addresses count as local (the refusal names the other listener)" \
    "idmintd: refusing to listen on 0.0.0.0:[0-9]+ without .*" --http "unix:$T_DIR/http.sock" \
    --resp "0.0.0.0:$(random_port)"

P=$(random_port)
start_server --resp "0.0.0.0:$P" --allow-unauthenticated
check "--allow-unauthenticated: a non-loopback listener without a token starts and serves" \
    -L "$ULID" -n 1 -- redis-cli -p "$P" NEXT ulid
check "--allow-unauthenticated: the log warns that anyone may mint" -O ".*warn: listening on 0.0.0.0:$P without a token \\(--allow-unauthenticated\\): anyone who can connect may mint IDs.*" \
    --sh "cat '$SRV_LOG' | paste -sd ' '"
stop_server
P=$(random_port)
start_server --config "$(token_file confallow 600 'allow-unauthenticated = yes\n')" --resp "0.0.0.0:$P"
check "allow-unauthenticated = yes in the config file does the same" -o PONG -- redis-cli -p "$P" PING
stop_server
P=$(random_port)
start_server --resp "0.0.0.0:$P" --auth-token-file "$TOK"
check "a non-loopback listener with a token starts, and asks for it" -o "${NOAUTH#-}" \
    --sh "redis-cli -p $P PING | grep -v '^\$'"
check "... and serves with it" -o PONG -- redis-cli -p "$P" --no-auth-warning -a "$TOKEN" PING
stop_server
P=$(random_port)
start_server --resp "127.0.0.2:$P"
check "127.0.0.0/8 is loopback: no token needed (127.0.0.2)" -o PONG -- redis-cli -h 127.0.0.2 -p "$P" PING
stop_server
P=$(random_port)
start_server --resp "[::1]:$P"
check "::1 is loopback: no token needed" -o PONG -- redis-cli -h ::1 -p "$P" PING
stop_server

# --- HTTP ------------------------------------------------------------------------------

# A segment tag for the client libraries' transactions (tests/clients:
# INCR orders inside MULTI ... EXEC).
"$IDMINT" segment create orders --store "sqlite:$T_DIR/seg.db" || start_failed "segment create orders failed"
start_server --auth-token-file "$TOK" --log-level debug --segments "sqlite:$T_DIR/seg.db"
AUTH=(-H "Authorization: Bearer $TOKEN")
# ametric NAME: a /metrics sample, as lib.sh's metric, with the token.
ametric() {
    curl -s -m 5 "${AUTH[@]}" "$BASE/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
minted0=$(ametric 'idmint_ids_minted_total{format="ulid"}')

http "no Authorization header: 401 with WWW-Authenticate: Bearer realm=\"idmintd\" and a JSON error" \
    -s 401 -h "$CHALLENGE" -h 'Content-Type: application/json' -O "$JSON_ERROR" -- /v1/ids/ulid
http "a wrong token: 401 with error=\"invalid_token\" (RFC 6750)" \
    -s 401 -h "$INVALID" -O '\{"error": "invalid token"\}' -- /v1/ids/ulid -H "Authorization: Bearer $WRONG"
http "a prefix of the token is wrong" -s 401 -h "$INVALID" -- /v1/ids/ulid -H "Authorization: Bearer ${TOKEN%?}"
http "the token and more is wrong" -s 401 -h "$INVALID" -- /v1/ids/ulid -H "Authorization: Bearer ${TOKEN}x"
http "the token: 200" -L "$ULID" -n 1 -- /v1/ids/ulid "${AUTH[@]}"
http "the scheme is case-insensitive (RFC 9110 section 11.1)" -L "$ULID" -n 1 -- /v1/ids/ulid \
    -H "Authorization: bearer $TOKEN"
http "another scheme counts as no token (no error code)" -s 401 -h "$CHALLENGE" -- /v1/ids/ulid \
    -H "Authorization: Basic $(printf 'default:%s' "$TOKEN" | base64 -w0)"
http "Bearer without a token: 400 invalid_request" -s 400 \
    -h 'WWW-Authenticate: Bearer realm="idmintd", error="invalid_request"' -O "$JSON_ERROR" -- /v1/ids/ulid \
    -H 'Authorization: Bearer'
http "two Authorization headers: 400 invalid_request" -s 400 -h '.*error="invalid_request"' -- /v1/ids/ulid \
    "${AUTH[@]}" -H "Authorization: Bearer $WRONG"
http "the token as a query parameter is not taken on /v1/ids (tinyid's routes only)" \
    -s 401 -h "$CHALLENGE" -- "/v1/ids/ulid?token=$TOKEN"
http "/healthz stays open (probes)" -o ok -- /healthz
http "/readyz stays open (probes)" -- /readyz
http "HEAD /healthz stays open" -h 'Content-Length: 3' -- /healthz -I
http "/metrics needs the token" -s 401 -h "$CHALLENGE" -- /metrics
http "/metrics with the token: 200" -O '.*idmint_ids_minted_total.*' -- /metrics "${AUTH[@]}"
http "Leaf's /api/snowflake/get/KEY needs the token" -s 401 -h "$CHALLENGE" -- /api/snowflake/get/order
http "Leaf's route with the token: the bare ID" -O "$SNOWFLAKE" -- /api/snowflake/get/order "${AUTH[@]}"
http "/v1/inspect needs the token" -s 401 -- /v1/inspect/01ARZ3NDEKTSV4RRFFQ69G5FAV
http "/v1/inspect with the token" -O '.*"kind": *"ulid".*' -- /v1/inspect/01ARZ3NDEKTSV4RRFFQ69G5FAV "${AUTH[@]}"
http "an unknown path needs the token too (its 404 would tell what exists)" -s 401 -- /nope
http "an unknown path with the token: 404" -s 404 -- /nope "${AUTH[@]}"
http "HEAD without the token: 401 and the challenge, as GET" -s 401 -h "$CHALLENGE" -- /v1/ids/ulid -I
http "HEAD with a wrong token: 401 invalid_token, as GET" -s 401 -h "$INVALID" -- /v1/ids/ulid -I \
    -H "Authorization: Bearer $WRONG"
http "HEAD with the token: 200, as GET" -h 'Content-Length: 27' -- /v1/ids/ulid -I "${AUTH[@]}"
# On one connection: a body after a HEAD response would show up where the
# next status line belongs.
heads=$({
    printf 'HEAD /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\n'
    printf 'HEAD /v1/ids/ulid HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n\r\n' "$WRONG"
    printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
} | raw "$HTTP_PORT" 5 | tr -d '\r' | grep -vE '^(Date|Server|Content-Type|Content-Length|Connection|WWW-Authenticate):' | paste -sd '|')
expect "HEAD without or with a wrong token: the 401 has no body" "$heads" = \
    "HTTP/1.1 401 Unauthorized||HTTP/1.1 401 Unauthorized||HTTP/1.1 200 OK||ok"
http "POST without the token: 401 before the method is looked at" -s 401 -- /v1/ids/ulid -X POST
http "POST with the token: 405" -s 405 -h 'Allow: GET, HEAD' -- /v1/ids/ulid -X POST "${AUTH[@]}"
expect "refused requests mint nothing (two ULIDs were minted: GET and bearer)" \
    "$(ametric 'idmint_ids_minted_total{format="ulid"}')" = $((minted0 + 2))
reply=$(printf 'GET /v1/ids/ulid HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/ids/ulid HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' \
    "$TOKEN" | raw "$HTTP_PORT" 5 | tr -d '\r' | grep -E '^(HTTP/1.1|[0-7][0-9A-Z]{25}$)' | paste -sd ' ')
expect "after a 401 the connection stays open: a pipelined request with the token is answered" \
    "$reply" =~ "^HTTP/1.1 401 Unauthorized HTTP/1.1 200 OK $ULID\$"
failures=$(ametric 'idmint_auth_failures_total{protocol="http"}')
expect "failures are counted in idmint_auth_failures_total{protocol=\"http\"} (18 so far)" "$failures" = 18

# The log: at most one line a second about failures, never the token.
before=$(grep -c 'refused an HTTP request' "$SRV_LOG")
urls=()
for _ in $(seq 50); do
    urls+=("$BASE/v1/ids/ulid")
done
t0=$SECONDS
curl -s -H "Authorization: Bearer $WRONG" "${urls[@]}" >/dev/null
after=$(grep -c 'refused an HTTP request' "$SRV_LOG")
expect "50 failures in a burst are logged at most once a second" $((after - before)) -le $((SECONDS - t0 + 1))
sleep 1.1
curl -s -o /dev/null "$BASE/v1/ids/ulid"
check "the next message counts the failures not logged one by one, and names the peer" \
    -O '.*warn: refused an HTTP request from 127\.0\.0\.1:[0-9]+: no token \([0-9]+ refused on http so far, [0-9]+ more since the last message\).*' \
    --sh "paste -sd ' ' '$SRV_LOG'"

# --- RESP ------------------------------------------------------------------------------

# resp COMMANDS (printf format): the raw replies to COMMANDS sent in one
# write on one connection, then QUIT, CRs removed and lines joined by |.
resp() {
    # shellcheck disable=SC2059
    printf "$1"'QUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd '|'
}
minted0=$(ametric 'idmint_ids_minted_total{format="ulid"}')
resp_failures0=$(ametric 'idmint_auth_failures_total{protocol="resp"}')
expect "before AUTH, every command but AUTH, HELLO, RESET and QUIT gets -NOAUTH (PING, NEXT, unknown, CLIENT, COMMAND)" \
    "$(resp 'PING\r\nNEXT ulid\r\nNOSUCH\r\nCLIENT ID\r\nCOMMAND COUNT\r\nPING a b c\r\n')" \
    = "$NOAUTH|$NOAUTH|$NOAUTH|$NOAUTH|$NOAUTH|$NOAUTH|+OK"
expect "HELLO without AUTH before AUTH: Redis's -NOAUTH for HELLO" "$(resp 'HELLO 3\r\nHELLO\r\n')" \
    = "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time|-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time|+OK"
expect "a wrong token gets -WRONGPASS (AUTH pass, AUTH default pass, HELLO AUTH), the same for a wrong user" \
    "$(resp "AUTH $WRONG\r\nAUTH default $WRONG\r\nAUTH bob $TOKEN\r\n*2\r\n\$4\r\nAUTH\r\n\$0\r\n\r\nHELLO 3 AUTH default $WRONG\r\nPING\r\n")" \
    = "$WRONGPASS|$WRONGPASS|$WRONGPASS|$WRONGPASS|$WRONGPASS|$NOAUTH|+OK"
expect "AUTH TOKEN: +OK, then commands run" "$(resp "AUTH $TOKEN\r\nPING\r\nNEXT ulid\r\n")" =~ "^\\+OK\\|\\+PONG\\|\\\$26\\|$ULID\\|\\+OK\$"
expect "AUTH default TOKEN: +OK, then commands run" "$(resp "AUTH default $TOKEN\r\nPING\r\n")" = "+OK|+PONG|+OK"
expect "HELLO 3 AUTH default TOKEN: the HELLO map in RESP3, then commands run" \
    "$(resp "HELLO 3 AUTH default $TOKEN SETNAME app\r\nCLIENT GETNAME\r\nPING\r\n")" \
    =~ "^%7\\|\\\$6\\|server\\|\\\$7\\|idmintd\\|.*\\|\\\$5\\|proto\\|:3\\|.*\\|\\\$3\\|app\\|\\+PONG\\|\\+OK\$"
expect "HELLO 2 AUTH default TOKEN works too (RESP2)" "$(resp "HELLO 2 AUTH default $TOKEN\r\nPING\r\n")" =~ "^\\*14\\|.*\\|:2\\|.*\\|\\+PONG\\|\\+OK\$"
expect "a pipeline AUTH wrong + NEXT: -WRONGPASS, then -NOAUTH (nothing minted)" \
    "$(resp "AUTH $WRONG\r\nNEXT ulid\r\n")" = "$WRONGPASS|$NOAUTH|+OK"
expect "a pipeline NEXT + AUTH TOKEN + NEXT: in order, only the NEXT after AUTH mints" \
    "$(resp "NEXT ulid\r\nAUTH $TOKEN\r\nNEXT ulid\r\n")" =~ "^-NOAUTH Authentication required\\.\\|\\+OK\\|\\\$26\\|$ULID\\|\\+OK\$"
expect "a failed AUTH after a good one leaves the connection authenticated (as Redis)" \
    "$(resp "AUTH $TOKEN\r\nAUTH $WRONG\r\nPING\r\n")" = "+OK|$WRONGPASS|+PONG|+OK"
expect "RESET takes the authentication back (as Redis)" "$(resp "AUTH $TOKEN\r\nRESET\r\nPING\r\n")" = "+OK|+RESET|$NOAUTH|+OK"
expect "AUTH with too many arguments: a syntax error" "$(resp 'AUTH a b c\r\n')" = "-ERR syntax error|+OK"
expect "commands refused for want of a token mint nothing" \
    "$(ametric 'idmint_ids_minted_total{format="ulid"}')" = $((minted0 + 2))
resp_failures=$(ametric 'idmint_auth_failures_total{protocol="resp"}')
expect "failures are counted in idmint_auth_failures_total{protocol=\"resp\"} (-NOAUTH and -WRONGPASS: 19)" \
    "$((resp_failures - resp_failures0))" = 19
check "redis-cli -a TOKEN mints" -L "$ULID" -n 1 -- redis-cli -p "$RESP_PORT" --no-auth-warning -a "$TOKEN" NEXT ulid
check "redis-cli --user default --pass TOKEN mints (AUTH default TOKEN)" -L "$ULID" -n 2 -- \
    redis-cli -p "$RESP_PORT" --no-auth-warning --user default --pass "$TOKEN" NEXT ulid 2
check "redis-cli -3 with the token (HELLO 3 AUTH default TOKEN)" -L "$ULID" -n 1 -- \
    redis-cli -3 -p "$RESP_PORT" --no-auth-warning -a "$TOKEN" NEXT ulid
check "CLIENT LIST shows no AUTH argument" -o '' \
    --sh "redis-cli -p $RESP_PORT --no-auth-warning -a '$TOKEN' CLIENT LIST | grep -F '$TOKEN' || true"
check "the token is never logged, nor a wrong one (log level debug)" -o '' \
    --sh "grep -F -e '$TOKEN' -e '$WRONG' '$SRV_LOG' || true"
sleep 1.1 # the log's once a second is for both protocols
resp 'PING\r\n' >/dev/null
check "RESP failures are logged too, rate-limited, naming the peer" \
    -O '.*warn: refused a RESP command from 127\.0\.0\.1:[0-9]+: (no token|a wrong token) .*' --sh "paste -sd ' ' '$SRV_LOG'"

# --- the real client libraries, with their password options ----------------------------

# clients.mjs and clients.py do the work (as in test_resp_clients.sh); a
# missing library fails its case with the import error.
declare -A HOW=([node-redis]="node-redis 5 with password (AUTH TOKEN)"
    [node-redis3]="node-redis 5 with password and RESP: 3 (HELLO 3 AUTH default TOKEN)"
    [ioredis]="ioredis with password (AUTH TOKEN, then its INFO ready check)")
for c in node-redis node-redis3 ioredis; do
    check "${HOW[$c]}: connects, mints, CLIENT replies" \
        -o '' -- timeout 30 node "$CLIENTS/clients.mjs" "$c" "$RESP_PORT" "$TOKEN"
done
# redis 6 declares node >= 20: run where it can (test_resp_clients.sh says so).
need=$(node -p 'require(process.argv[1]).engines.node.replace(/[^0-9.]/g, "").split(".")[0]' \
    "$CLIENTS/node_modules/redis-v6/package.json" 2>/dev/null || echo 0)
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge "$need" ]; then
    check "node-redis 6 with password (HELLO 3 AUTH default TOKEN on connect): connects, mints" \
        -o '' -- timeout 30 node "$CLIENTS/clients.mjs" node-redis6 "$RESP_PORT" "$TOKEN"
else
    echo "note: node-redis 6 not run: it needs node >= $need, this is $(node --version 2>/dev/null)"
fi
if "$PYTHON" -c 'import redis' 2>/dev/null; then
    check "redis-py with password=TOKEN: connects, mints, CLIENT replies" \
        -o '' -- timeout 30 "$PYTHON" "$CLIENTS/clients.py" "$RESP_PORT" "$TOKEN"
    check "redis-py with a wrong password: refused (WRONGPASS)" -s 1 \
        -O 'not ok - redis-py: [A-Za-z]+Error: (WRONGPASS )?invalid username-password pair or user is disabled\.' \
        -- timeout 30 "$PYTHON" "$CLIENTS/clients.py" "$RESP_PORT" "$WRONG"
    check "redis-py without a password: refused (NOAUTH)" -s 1 \
        -O 'not ok - redis-py: AuthenticationError: Authentication required\.' \
        -- timeout 30 "$PYTHON" "$CLIENTS/clients.py" "$RESP_PORT"
else
    CASE_NO=$((CASE_NO + 1))
    fail "redis-py is installed" "  $PYTHON cannot import redis: install Debian's python3-redis (scripts/test.sh does)"
fi
stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0

# --- the config file, and a token file with CR LF -------------------------------------------

start_server --config "$(token_file conf 600 "auth-token-file = $(token_file tcrlf 400 "$TOKEN\r\n")\n")"
http "auth-token-file in the config file: 401 without the token" -s 401 -h "$CHALLENGE" -- /v1/ids/ulid
http "a token file ending in CR LF (mode 0400): the token is what comes before it" \
    -L "$ULID" -n 1 -- /v1/ids/ulid "${AUTH[@]}"
stop_server

# The longest token, 1024 bytes, fits an Authorization header and a RESP argument.
LONG=$(printf 'x%.0s' {1..1024})
start_server --auth-token-file "$(token_file tmax 600 "$LONG")"
http "a 1024-byte token works over HTTP" -L "$ULID" -n 1 -- /v1/ids/ulid -H "Authorization: Bearer $LONG"
check "a 1024-byte token works over RESP (AUTH default TOKEN)" -L "$ULID" -n 1 -- \
    redis-cli -p "$RESP_PORT" --no-auth-warning --user default --pass "$LONG" NEXT ulid
stop_server

# --- /readyz tells a stranger no more than a class of the reason -------------------------

# Node 0 of a one-node range is held by a first server: the second waits,
# not ready, and its reason names the holder's pid, host and ports.
start_server --node-range 0..0 --state-dir "$T_DIR/state.h"
holder=$SRV_PID
start_server --auth-token-file "$TOK" --node-range 0..0 --state-dir "$T_DIR/state.w"
# The class, and since when (no pid, host or path).
PUBLIC_WAIT=$'not ready: no snowflake node\npaused since [0-9T:.Z-]+ \\([0-9]+ ms, node\\)'
http "idmintd(8): /readyz without the token: 503 and only a class of the reason" -s 503 \
    -h 'Retry-After: 1' -O "$PUBLIC_WAIT" -- /readyz
http "... none of the holder's details with a wrong token either" -s 503 \
    -O "$PUBLIC_WAIT" -- /readyz -H "Authorization: Bearer $WRONG"
http "... with the token, the details: the holder" -s 503 \
    -O "no snowflake node: node 0 is held by pid=$holder host=.* http=.*" -- /readyz "${AUTH[@]}"
http "/v1/node with the token says why no node is held" \
    -O ".*\"why\": \"no snowflake node: node 0 is held by pid=$holder .*" -- /v1/node "${AUTH[@]}"
http "... and /v1/node without it is refused" -s 401 -- /v1/node
http "/healthz: 200 while not ready" -o ok -- /healthz
stop_server

# --- without a token: as before ----------------------------------------------------------

start_server
http "without --auth-token-file no token is needed" -L "$ULID" -n 1 -- /v1/ids/ulid
http "without --auth-token-file an Authorization header is ignored" -L "$ULID" -n 1 -- /v1/ids/ulid \
    -H "Authorization: Bearer $WRONG"
expect "without --auth-token-file, AUTH answers as a passwordless Redis" \
    "$(resp "PING\r\nAUTH default anything\r\nAUTH x\r\n")" \
    = "+PONG|+OK|-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?|+OK"
stop_server
finish
