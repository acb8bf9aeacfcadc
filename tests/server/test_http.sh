# test_http.sh - idmintd's HTTP routes over loopback: every format, counts,
# JSON, prefixes, inspect (byte for byte as `idmint inspect --json`), the
# Leaf route, health, readiness, metrics, unknown query parameters,
# absolute-form targets, methods, HEAD (which mints nothing), keep-alive and
# pipelining. test_http_inspect.sh has /v1/inspect's query and its limits.
# Usage: bash tests/server/test_http.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
UUID4='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
KSUID='[0-9A-Za-z]{27}'
SNOWFLAKE='[1-9][0-9]{0,18}'
SUFFIX='[0-7][0-9a-hjkmnp-tv-z]{25}'
TOKEN='[0-9A-Za-z]{22}'
TRACEPARENT='00-[0-9a-f]{32}-[0-9a-f]{16}-01'
TEXT='Content-Type: text/plain; charset=utf-8'
JSON='Content-Type: application/json'
JSON_ERROR='\{"error": "[^"]+"\}'

start_server

# --- /v1/ids/{format} ----------------------------------------------------------

declare -A RE=([uuidv7]=$UUID7 [uuidv4]=$UUID4 [ulid]=$ULID [ksuid]=$KSUID [snowflake]=$SNOWFLAKE
    [token]=$TOKEN [traceparent]=$TRACEPARENT)
for f in uuidv7 uuidv4 ulid ksuid snowflake token traceparent; do
    http "GET /v1/ids/FORMAT?count=N: N IDs (default 1) of FORMAT, one per line as text/plain ($f)" \
        -h "$TEXT" -L "${RE[$f]}" -n 1 -- "/v1/ids/$f"
    http "GET /v1/ids/FORMAT?count=N: N IDs of FORMAT, one per line as text/plain ($f, count=7)" \
        -h "$TEXT" -h 'Content-Length: [0-9]+' -L "${RE[$f]}" -n 7 -- "/v1/ids/$f?count=7"
done
http "GET /v1/ids/typeid?count=N&prefix=P: PREFIX_ + a UUIDv7's base32" \
    -h "$TEXT" -L "user_$SUFFIX" -n 4 -- '/v1/ids/typeid?count=4&prefix=user'
http "GET /v1/ids/token?prefix=P: PREFIX_ + the token" \
    -L "sk_live_$TOKEN" -n 3 -- '/v1/ids/token?prefix=sk_live&count=3'
http "query parameters in either order" \
    -L "acct_$SUFFIX" -n 2 -- '/v1/ids/typeid?prefix=acct&count=2'
http "count at the limit (--max-count, default 10000) is served" \
    -L "$UUID7" -n 10000 -- '/v1/ids/uuidv7?count=10000'

check "snowflakes of one request are strictly increasing (numerically) and unique" -o '' \
    --sh "curl -s 'http://127.0.0.1:$HTTP_PORT/v1/ids/snowflake?count=5000' | sort -n -C -u && \
          test \$(curl -s 'http://127.0.0.1:$HTTP_PORT/v1/ids/snowflake?count=5000' | sort -u | wc -l) = 5000"
check "uuidv7s and ulids of one request are strictly increasing" -o '' \
    --sh "curl -s 'http://127.0.0.1:$HTTP_PORT/v1/ids/uuidv7?count=5000' | sort -C -u && \
          curl -s 'http://127.0.0.1:$HTTP_PORT/v1/ids/ulid?count=5000' | sort -C -u"

# --- JSON ----------------------------------------------------------------------

http "a JSON array of strings when the request has Accept: application/json; snowflakes are strings" \
    -h "$JSON" -O "\[\"$SNOWFLAKE\"(,\"$SNOWFLAKE\"){2}\]" -n 1 \
    -- '/v1/ids/snowflake?count=3' -H 'Accept: application/json'
http "a JSON array of strings (uuidv7, count 1)" \
    -h "$JSON" -O "\[\"$UUID7\"\]" -- /v1/ids/uuidv7 -H 'Accept: application/json'
http "a JSON array of strings (typeid with a prefix)" \
    -h "$JSON" -O "\[\"user_$SUFFIX\",\"user_$SUFFIX\"\]" \
    -- '/v1/ids/typeid?prefix=user&count=2' -H 'Accept: application/json'
http "a JSON array of strings (Accept listing several types, JSON among them)" \
    -h "$JSON" -O "\[\"$ULID\"\]" -- /v1/ids/ulid -H 'Accept: text/html, application/json;q=0.9'
http "one per line as text/plain without Accept: application/json" \
    -h "$TEXT" -L "$ULID" -n 1 -- /v1/ids/ulid -H 'Accept: text/plain'
json=$(curl -s -H 'Accept: application/json' "$BASE/v1/ids/snowflake?count=50")
above=0
for x in $(grep -oE '"[0-9]+"' <<<"$json" | tr -d '"'); do
    ((x > 9007199254740992)) && above=$((above + 1))
done
expect "snowflakes are strings in JSON: JavaScript numbers lose precision above 2^53 (50 such IDs)" \
    "$above" = 50

# --- /v1/inspect/{id} ----------------------------------------------------------

mint() {
    curl -s "http://127.0.0.1:$HTTP_PORT/v1/ids/$1"
}
for id in "$(mint uuidv7)" "$(mint uuidv4)" "$(mint ulid)" "$(mint ksuid)" "$(mint snowflake)" \
    "$(mint 'typeid?prefix=order')" 01ARZ3NDEKTSV4RRFFQ69G5FAV 0 \
    "$(mint uuidv7 | tr -d -)"; do
    http "GET /v1/inspect/ID: the JSON object of idmint inspect --json ($id)" \
        -h "$JSON" -o "$("$IDMINT" inspect --json "$id")" -- "/v1/inspect/$id"
done
typeid=$(mint 'typeid?prefix=user')
http "GET /v1/inspect/ID: a percent-encoded ID is decoded" \
    -h "$JSON" -o "$("$IDMINT" inspect --json "$typeid")" -- "/v1/inspect/${typeid/_/%5F}"
for bad in zzz 01ARZ3NDEKTSV4RRFFQ69G5FA 99999999999999999999 "$(mint token)"; do
    http "an invalid ID gets status 400 and the error object ($bad)" \
        -s 400 -h "$JSON" -O '\{"input": .*, "error": "[^"]+"\}' \
        -o "$("$IDMINT" inspect --json "$bad")" -- "/v1/inspect/$bad"
done

# --- Leaf ----------------------------------------------------------------------

http "GET /api/snowflake/get/KEY: the bare decimal ID" \
    -h "$TEXT" -O "$SNOWFLAKE" -- /api/snowflake/get/anykey
check "GET /api/snowflake/get/KEY: the bare decimal ID, no newline (the key is ignored)" -o '' \
    --sh "curl -s http://127.0.0.1:$HTTP_PORT/api/snowflake/get/leaf-segment-test | tr -d 0-9"
check "the Leaf route mints from the same snowflake generator (later IDs are larger)" -o '' \
    --sh "a=\$(curl -s http://127.0.0.1:$HTTP_PORT/v1/ids/snowflake)
          b=\$(curl -s http://127.0.0.1:$HTTP_PORT/api/snowflake/get/k)
          c=\$(curl -s http://127.0.0.1:$HTTP_PORT/v1/ids/snowflake)
          [ \$a -lt \$b ] && [ \$b -lt \$c ]"

# --- health, readiness, metrics --------------------------------------------------

http "GET /healthz: liveness, 200 while the process serves" -h "$TEXT" -- /healthz
http "GET /readyz: readiness, 200 when a snowflake can be minted now" -- /readyz
http "GET /metrics: Prometheus text" \
    -h 'Content-Type: text/plain; version=0.0.4(; charset=utf-8)?' \
    -L '# (HELP|TYPE) idmint_[a-z_]+ .+|idmint_[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+(\.[0-9]+)?' \
    -- /metrics
for family in 'idmint_ids_minted_total counter' 'idmint_requests_total counter' \
    'idmint_clock_rewinds_total counter' 'idmint_clock_rewind_waits_total counter' \
    'idmint_clock_refusals_total counter' 'idmint_sequence_exhaustion_waits_total counter' \
    'idmint_connections_open gauge' 'idmint_connections_total counter' \
    'idmint_connections_rejected_total counter' 'idmint_protocol_errors_total counter' \
    'idmint_high_water_mark_writes_total counter'; do
    check "/metrics has the documented family: $family" -o 1 \
        --sh "curl -s http://127.0.0.1:$HTTP_PORT/metrics | grep -c '^# TYPE $family\$'"
done
for f in uuidv7 uuidv4 ulid ksuid snowflake typeid token traceparent; do
    check "/metrics: IDs minted per format ($f)" -O '1' \
        --sh "curl -s http://127.0.0.1:$HTTP_PORT/metrics | grep -c '^idmint_ids_minted_total{format=\"$f\"} [0-9]'"
done
ulid_before=$(metric 'idmint_ids_minted_total{format="ulid"}')
ok_before=$(metric 'idmint_requests_total{route="/v1/ids",status="2xx"}')
bad_before=$(metric 'idmint_requests_total{route="/v1/ids",status="4xx"}')
conns_before=$(metric 'idmint_connections_total')
curl -s -o /dev/null "$BASE/v1/ids/ulid?count=7"
curl -s -o /dev/null "$BASE/v1/ids/ulid?count=0"
expect "/metrics: the minted count grows by the IDs served" \
    "$(metric 'idmint_ids_minted_total{format="ulid"}')" = $((ulid_before + 7))
expect "/metrics: requests per route and status class (2xx)" \
    "$(metric 'idmint_requests_total{route="/v1/ids",status="2xx"}')" = $((ok_before + 1))
expect "/metrics: requests per route and status class (4xx)" \
    "$(metric 'idmint_requests_total{route="/v1/ids",status="4xx"}')" = $((${bad_before:-0} + 1))
expect "/metrics: accepted connections are counted" \
    "$(metric 'idmint_connections_total')" -ge $((conns_before + 3))
expect "/metrics: open connections (this one)" "$(metric 'idmint_connections_open')" -ge 1

# --- methods, unknown routes, HEAD ---------------------------------------------

for m in POST PUT DELETE PATCH OPTIONS; do
    http "Methods other than GET and HEAD get 405 ($m), with Allow" \
        -s 405 -h 'Allow: GET, HEAD' -h "$JSON" -O "$JSON_ERROR" -- /v1/ids/uuidv7 -X "$m"
done
http "405 for a POST with a body; the connection stays usable" \
    -s 405 -h 'Allow: GET, HEAD' -- /v1/ids/uuidv7 -d 'count=3'
skipped=$(
    {
        printf 'POST /v1/ids/ulid HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nxxxxxxxxxx'
        printf 'GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
    } | raw "$HTTP_PORT" 5 | tr -d '\r'
)
expect "a POST body is skipped: the next request on the connection is served" \
    "$(grep -E '^(HTTP/1.1 .*|[0-9A-Z]{26})$' <<<"$skipped" | paste -sd ' ')" \
    =~ "^HTTP/1.1 405 Method Not Allowed HTTP/1.1 200 OK $ULID\$"
for p in /nope / /v1/ids /v1/ids/ /v1/ids/uuidv7/extra /v1/inspect/ /api/snowflake/get/ /healthz/x /metricsx; do
    http "an unknown route gets 404 with a JSON error ($p)" -s 404 -h "$JSON" -O "$JSON_ERROR" -- "$p"
done
get_len=$(curl -s -D - -o /dev/null "$BASE/healthz" | tr -d '\r' | sed -n 's/^Content-Length: //p')
nope_len=$(curl -s -D - -o /dev/null "$BASE/nope" | tr -d '\r' | sed -n 's/^Content-Length: //p')
# A HEAD response followed by a GET response on one connection: a body
# after the HEAD response would show up where the second status line
# belongs.
head_then_get=$(
    {
        printf 'HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
        printf 'HEAD /v1/ids/uuidv7?count=2 HTTP/1.1\r\nHost: t\r\n\r\n'
        printf 'HEAD /nope HTTP/1.1\r\nHost: t\r\n\r\n'
        printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
    } | raw "$HTTP_PORT" 5 | tr -d '\r' | grep -vE '^(Date|Server):'
)
expect "HEAD is answered like GET without a body (/healthz, an ID route, a 404)" "$head_then_get" = \
"HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8
Content-Length: $get_len

HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8
Content-Length: 74

HTTP/1.1 404 Not Found
Content-Type: application/json
Content-Length: $nope_len

HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8
Content-Length: $get_len
Connection: close

ok"

# --- HEAD on the minting routes -------------------------------------------------

minted_total() {
    curl -s "$BASE/metrics" | awk '/^idmint_ids_minted_total\{/ { n += $2 } END { print n + 0 }'
}
before=$(minted_total)
for t in '/v1/ids/ulid?count=5' '/v1/ids/snowflake?count=3' '/api/snowflake/get/k' \
    '/v1/ids/typeid?prefix=user&count=2' '/v1/ids/uuidv7?count=10000'; do
    curl -s -I -o /dev/null "$BASE$t"
    curl -s -I -o /dev/null -H 'Accept: application/json' "$BASE$t"
done
expect "HEAD does not mint: idmint_ids_minted_total is unchanged by HEADs on every minting route" \
    "$(minted_total)" = "$before"
http "HEAD on a snowflake route: the GET's Content-Type, no Content-Length (the digits vary)" \
    -h "$TEXT" -x 'Content-Length:.*' -- '/v1/ids/snowflake?count=3' -I
http "HEAD on Leaf's route: the GET's Content-Type, no Content-Length" \
    -h "$TEXT" -x 'Content-Length:.*' -- /api/snowflake/get/k -I
http "HEAD with Accept: application/json: the JSON Content-Type" \
    -h "$JSON" -- '/v1/ids/snowflake?count=3' -I -H 'Accept: application/json'
# The length a GET for that count and format has, when it is fixed.
for t in 'uuidv7?count=3' uuidv4 'ulid?count=10' ksuid 'typeid?prefix=user&count=4' \
    'typeid?prefix=' 'typeid?prefix=a_b&count=2' token 'token?prefix=sk_live&count=2' \
    'token?prefix=' 'traceparent?count=2' 'uuidv7?count=10000'; do
    for accept in text/plain application/json; do
        got=$(curl -s -H "Accept: $accept" "$BASE/v1/ids/$t" | wc -c)
        head_len=$(curl -s -I -H "Accept: $accept" "$BASE/v1/ids/$t" | tr -d '\r' |
            sed -n 's/^Content-Length: //p')
        expect "HEAD: Content-Length is the length of the GET's body for a fixed-length format ($t, $accept)" \
            "${head_len:-none}" = "$got"
    done
done
# HEAD makes the checks a GET makes: the same status line and headers.
for t in 'ulid?count=0' 'ulid?count=10001' 'ulid?count=x' typeid 'uuidv7?prefix=user' \
    'typeid?prefix=Bad' 'nosuch' 'ulid?cuont=2' 'ulid?count=1&count=1'; do
    get_h=$(curl -s -D - -o /dev/null "$BASE/v1/ids/$t" | tr -d '\r' | grep -vE '^(Date|Server):')
    head_h=$(curl -s -I "$BASE/v1/ids/$t" | tr -d '\r' | grep -vE '^(Date|Server):')
    expect "HEAD is refused as a GET is, with the same status and headers ($t)" \
        "$head_h" = "$get_h"
done
head_pipe=$(
    {
        printf 'HEAD /v1/ids/snowflake?count=2 HTTP/1.1\r\nHost: t\r\n\r\n'
        printf 'HEAD /api/snowflake/get/x HTTP/1.1\r\nHost: t\r\n\r\n'
        printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
    } | raw "$HTTP_PORT" 5 | tr -d '\r' | grep -vE '^(Date|Server):'
)
expect "HEAD without Content-Length on a kept-alive connection: the next response follows at once" \
    "$head_pipe" = "HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8

HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8

HTTP/1.1 200 OK
Content-Type: text/plain; charset=utf-8
Content-Length: 3
Connection: close

ok"

# --- query parameters --------------------------------------------------------------

ERR_UNKNOWN="\\{\"error\": \"unknown query parameter '[^']*' \\(this route takes [^\"]+\\)\"\\}"
before=$(minted_total)
http "unknown query parameters are a 400, not ignored (a misspelt count)" \
    -s 400 -h "$JSON" -o "{\"error\": \"unknown query parameter 'cuont' (this route takes count, prefix and after)\"}" \
    -- '/v1/ids/ulid?cuont=5'
expect "a refused query mints nothing" "$(minted_total)" = "$before"
http "query parameter names are case-sensitive (Count is unknown)" \
    -s 400 -O "$ERR_UNKNOWN" -- '/v1/ids/ulid?Count=2'
http "a parameter given twice is a 400" \
    -s 400 -h "$JSON" -o "{\"error\": \"query parameter 'count' is given more than once\"}" \
    -- '/v1/ids/ulid?count=2&count=3'
http "a parameter given twice is a 400 (once percent-encoded)" \
    -s 400 -O '\{"error": "query parameter .* more than once"\}' -- '/v1/ids/typeid?prefix=a&pre%66ix=b'
http "a parameter without a value is still a parameter (flag)" \
    -s 400 -O "$ERR_UNKNOWN" -- '/v1/ids/ulid?count=2&verbose'
for t in '/healthz?x=1' '/readyz?verbose' '/metrics?name[]=x' \
    '/v1/ids/uuidv7?=3' '/v1/ids/uuidv7?%zz=1'; do
    http "unknown query parameters are a 400 on idmintd's own routes ($t)" -s 400 -h "$JSON" -O "$ERR_UNKNOWN" -- "$t"
done
http "... Leaf's route ignores them, as Leaf does" -O "$SNOWFLAKE" -- '/api/snowflake/get/k?key=1'
http "empty pairs are skipped (?&count=2&)" -L "$ULID" -n 2 -- '/v1/ids/ulid?&count=2&'
http "a percent-encoded name is its decoded name (pre%66ix)" \
    -L "user_$SUFFIX" -n 2 -- '/v1/ids/typeid?pre%66ix=user&count=2'

# --- absolute-form targets (RFC 9112 section 3.2.2) --------------------------------

absolute=$(printf 'GET http://127.0.0.1:%s/v1/ids/ulid?count=2 HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' \
    "$HTTP_PORT" "$HTTP_PORT" | raw "$HTTP_PORT" 5 | tr -d '\r')
expect "absolute-form targets are accepted: the path and query are used" \
    "$(grep -E '^(HTTP/1.1 .*|[0-9A-Z]{26})$' <<<"$absolute" | paste -sd ' ')" \
    =~ "^HTTP/1.1 200 OK $ULID $ULID\$"
check "absolute-form: curl through idmintd as its proxy (GET http://idmint.invalid/...)" -L "$UUID7" -n 3 \
    --sh "curl -s -f --proxy http://127.0.0.1:$HTTP_PORT 'http://idmint.invalid/v1/ids/uuidv7?count=3'"
abs_req() {
    printf 'GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' "$1" | raw "$HTTP_PORT" 5 |
        tr -d '\r' | sed -n '1p;$p' | paste -sd ' '
}
expect "absolute-form: the scheme in any case, https too (HTTPS://h/healthz)" \
    "$(abs_req 'HTTPS://example.com:443/healthz')" = 'HTTP/1.1 200 OK ok'
expect "absolute-form: the inspector's segment and query (http://h/v1/inspect/0?as=snowflake)" \
    "$(abs_req 'http://h/v1/inspect/0?as=snowflake' | cut -c 1-15)" = 'HTTP/1.1 200 OK'
expect "absolute-form: its query is checked like any other (unknown parameter)" \
    "$(abs_req 'http://h/v1/ids/ulid?n=2' | cut -c 1-24)" = 'HTTP/1.1 400 Bad Request'
expect "absolute-form: an unknown path is a 404 (http://h, no path)" \
    "$(abs_req 'http://h' | cut -c 1-22)" = 'HTTP/1.1 404 Not Found'
expect "absolute-form: an http URI with an empty host is a 400 (RFC 9110 section 4.2.1)" \
    "$(abs_req 'http:///v1/ids/ulid')" = \
    'HTTP/1.1 400 Bad Request {"error": "an http URI with an empty host (RFC 9110 section 4.2.1)"}'

# --- keep-alive and pipelining ---------------------------------------------------

check "keep-alive: curl reuses one connection for three requests" -o '1
0
0' --sh "curl -s -w '%{num_connects}\n' -o /dev/null http://127.0.0.1:$HTTP_PORT/healthz \
         -o /dev/null http://127.0.0.1:$HTTP_PORT/v1/ids/ulid -o /dev/null http://127.0.0.1:$HTTP_PORT/readyz"

req() {
    printf 'GET %s HTTP/1.1\r\nHost: t\r\n%s\r\n' "$1" "${2:+$2$'\r\n'}"
}
pipelined=$(
    {
        req /v1/ids/snowflake
        req /healthz
        req '/v1/ids/ulid?count=2' 'Connection: close'
    } | raw "$HTTP_PORT" 5
)
rc=$?
expect "pipelining: three requests in one write, the server closes after Connection: close" "$rc" = 0
expect "pipelining: three responses, in order" \
    "$(printf '%s' "$pipelined" | tr -d '\r' | grep -E '^(HTTP/1.1 [0-9]+ .*|[0-9]+|ok|[0-9A-Z]{26})$' | paste -sd ' ')" \
    =~ "^HTTP/1.1 200 OK $SNOWFLAKE HTTP/1.1 200 OK ok HTTP/1.1 200 OK $ULID $ULID\$"
expect "pipelining: only the last response says Connection: close" \
    "$(printf '%s' "$pipelined" | tr -d '\r' | grep -ciE '^Connection: close$')" = 1

got=$(
    {
        for _ in $(seq 1 99); do req '/v1/ids/snowflake?count=2'; done
        req /v1/ids/snowflake 'Connection: close'
    } | raw "$HTTP_PORT" 5 | tr -d '\r'
)
expect "pipelining: 100 requests in one write get 100 responses" "$(grep -c '^HTTP/1.1 200 OK$' <<<"$got")" = 100
expect "pipelining: the 199 snowflakes of 100 pipelined requests are strictly increasing" \
    "$(grep -E '^[0-9]{15,}$' <<<"$got" | sort -n -C -u && grep -cE '^[0-9]{15,}$' <<<"$got")" = 199

http10=$(printf 'GET /healthz HTTP/1.0\r\n\r\n' | raw "$HTTP_PORT" 5)
expect "HTTP/1.0 without keep-alive: answered, then closed" "$?" = 0
expect "HTTP/1.0 without keep-alive: answered" "$(head -n 1 <<<"$http10" | tr -d '\r')" = 'HTTP/1.1 200 OK'
# HTTP/1.0 with Connection: keep-alive (RFC 9112 section 9.3): HTTP/1.0
# closes by default, so a connection kept open must say so in the reply;
# the next request on it is answered (this one without keep-alive: then
# the server closes).
got=$(printf 'GET /v1/ids/snowflake HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n' |
    exchange "$HTTP_PORT" 5)
expect "HTTP/1.0 keep-alive: the reply says Connection: keep-alive" \
    "$(grep -c '^Connection: keep-alive$' <<<"$got")" = 1
expect "HTTP/1.0 keep-alive: the next request is answered on the same connection, then it closes" \
    "$(grep -c '^HTTP/1.1 200 OK$' <<<"$got"),$(tail -n 1 <<<"$got")" = "2,closed"
# ApacheBench's -k is HTTP/1.0 keep-alive: every request answered on kept
# connections (before, each connection waited out the idle timeout).
ab_out=$(timeout 120 ab -k -n 2000 -c 10 "http://127.0.0.1:$HTTP_PORT/v1/ids/snowflake" 2>&1)
expect "ab -k -n 2000 -c 10: complete, failed and keep-alive requests" \
    "$(awk '/^Complete requests:/ {c = $3} /^Failed requests:/ {f = $3}
            /^Keep-Alive requests:/ {k = $3} END {print c "," f "," k}' <<<"$ab_out")" = "2000,0,2000"
http "Connection: close is honoured" -h 'Connection: close' -- /healthz -H 'Connection: close'
http "keep-alive responses do not say Connection: close" -x 'Connection: close' -- /healthz

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
