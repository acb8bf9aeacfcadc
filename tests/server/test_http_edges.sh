# test_http_edges.sh - the HTTP request path's generic rules (idmintd(8),
# HTTP API): content negotiation by Accept with q-values on every route
# that offers JSON, escapes of unreserved characters decoded before
# routing (and every other escape left to the route, decoded once), and
# the HTTP/2 connection preface refused in HTTP/2's own framing (SETTINGS,
# GOAWAY HTTP_1_1_REQUIRED, close), as curl --http2-prior-knowledge and
# the raw bytes show.
# Usage: bash tests/server/test_http_edges.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-9A-HJKMNP-TV-Z]{26}'
UUIDV7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
STORE=sqlite:$T_DIR/seg.db
"$IDMINT" segment create orders --store "$STORE" >/dev/null || start_failed "segment create failed"
"$IDMINT" keygen "$T_DIR/key" >/dev/null 2>&1 || start_failed "idmint keygen failed"
start_server --segments "$STORE" --key-file "$T_DIR/key"

# --- Accept ---------------------------------------------------------------------------------
# Each of JSON and text takes the q of its most specific matching range; a
# tie goes to JSON when its range is at least as specific and not */*.
JSON_IDS="\\[\"$ULID\"(,\"$ULID\")*\\]"
accept_json() {
    http "Accept: $1 gives JSON" -h 'Content-Type: application/json' -O "$JSON_IDS" \
        -- '/v1/ids/ulid?count=2' -H "Accept: $1"
}
accept_text() {
    http "Accept: $1 gives text" -h 'Content-Type: text/plain; charset=utf-8' -L "$ULID" -n 2 \
        -- '/v1/ids/ulid?count=2' -H "Accept: $1"
}
accept_json 'application/*'
accept_json 'application/*;q=0.5, */*;q=0.4'
accept_json '*/*;q=0.5, application/*'
accept_json 'application/json;q=0.9, text/plain;q=0.1'
accept_json '*/*;q=0.8, application/json'
accept_json '*/*;q=0.1, text/plain;q=0'
accept_json 'text/*, application/*'
accept_json 'application/xml, application/*;q=0.1'
accept_text '*/*'
accept_text 'text/plain;q=0.9, */*;q=0.1'
accept_text 'application/*;q=0, */*'
accept_text 'application/json;q=0, application/*'
accept_text 'text/plain, application/*'
accept_text 'image/png'
accept_text '*/json'
http "no Accept header (-H 'Accept:' removes curl's): text" -L "$ULID" -n 1 -- /v1/ids/ulid -H 'Accept:'
http "application/* on /v1/hlc: its JSON object" -h 'Content-Type: application/json' \
    -O '\{"stamp": "[0-9a-f]{16}", .*\}' -- /v1/hlc -H 'Accept: application/*'
http "application/* on /v1/segment/{tag}: a JSON array of strings" -h 'Content-Type: application/json' \
    -O '\["[0-9]+"\]' -- /v1/segment/orders -H 'Accept: application/*'
http "application/* on /v1/obfuscate/{id}: the JSON object" -h 'Content-Type: application/json' \
    -O '\{"id": "5", "token": "[0-9A-Za-z]+"\}' -- /v1/obfuscate/5 -H 'Accept: application/*'
http "HEAD with application/*: JSON's Content-Type and length (2 ULIDs: 2 * 29 + 2)" \
    -h 'Content-Type: application/json' -h 'Content-Length: 60' -- '/v1/ids/ulid?count=2' \
    -I -H 'Accept: application/*'

# --- unreserved escapes in the path ---------------------------------------------------------
http "/v1/ids/uuid%76%37 is /v1/ids/uuidv7 (RFC 3986 section 2.3)" -L "$UUIDV7" -n 1 -- '/v1/ids/uuid%76%37'
http "lower-case hex: /v1/ids/%75%6c%69%64 is /v1/ids/ulid" -L "$ULID" -n 1 -- '/v1/ids/%75%6c%69%64'
http "in a fixed route: /heal%74hz is /healthz" -o ok -- '/heal%74hz'
http "in the route's prefix: /v1/%69ds/ulid" -L "$ULID" -n 1 -- '/v1/%69ds/ulid'
http "... the query is not touched (?count=2 after an escaped path)" -L "$ULID" -n 2 -- '/v1/ids/%75lid?count=2'
http "a segment tag: /v1/segment/%6Frders is orders" -O '[0-9]+' -- '/v1/segment/%6Frders'
http "%2F is not a '/': /v1/ids%2Fulid is no route" -s 404 -- '/v1/ids%2Fulid'
http "%3F is not a '?': /v1/ids/ulid%3Fcount=2 is an unknown format" -s 400 \
    -O '\{"error": "unknown format .*"\}' -- '/v1/ids/ulid%3Fcount=2'
http "decoded once: /v1/segment/a%252Eb is the tag a%2Eb (refused), not a.b" -s 400 \
    -O '\{"error": ".*%.*"\}' -- '/v1/segment/a%252Eb'
http "decoded once: /v1/ids/%2575lid is not ulid" -s 400 -O '\{"error": "unknown format .*"\}' \
    -- '/v1/ids/%2575lid'
http "a malformed escape keeps its answer: /v1/ids/ulid%zz is an unknown format" -s 400 \
    -O '\{"error": "unknown format .*"\}' -- '/v1/ids/ulid%zz'
http "... and /v1/segment/or%4 a malformed %-escape" -s 400 \
    -O '\{"error": "invalid tag: a malformed %-escape"\}' -- '/v1/segment/or%4'
http "an escape of an unreserved character does not hide a malformed one: /v1/ids/%75lid%" -s 400 \
    -O '\{"error": "unknown format .*"\}' -- '/v1/ids/%75lid%'

# --- the HTTP/2 connection preface -----------------------------------------------------------
PREFACE='PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
# SETTINGS (empty), then GOAWAY: length 36, type 7, stream 0, last stream
# 0, HTTP_1_1_REQUIRED (0xd), the debug text.
REFUSAL=000000040000000000''000024070000000000''00000000''0000000d$(printf 'idmintd speaks HTTP/1.1 only' | od -An -tx1 | tr -d ' \n')
# hexof: stdin as hex digits.
hexof() {
    od -An -tx1 | tr -d ' \n'
}
got=$(printf "$PREFACE" | exchange "$HTTP_PORT" 5 | tail -n 1)
expect "the preface alone: the connection is closed" "$got" = closed
got=$(printf "$PREFACE" | raw "$HTTP_PORT" 5 | hexof)
expect "the preface alone: SETTINGS then GOAWAY(HTTP_1_1_REQUIRED)" "$got" = "$REFUSAL"
# A client's SETTINGS frame follows the preface at once.
got=$(printf "$PREFACE"'\0\0\0\4\0\0\0\0\0' | raw "$HTTP_PORT" 5 | hexof)
expect "the preface and the client's SETTINGS frame in one write: the same" "$got" = "$REFUSAL"
got=$({
    printf 'PRI * HTTP/2.0\r\n'
    sleep 0.3
    printf '\r\nSM\r\n\r\n'
} | raw "$HTTP_PORT" 5 stream | hexof)
expect "the preface in two writes (split after its first line): the same" "$got" = "$REFUSAL"
check "curl --http2-prior-knowledge reports the refusal (exit 16, the HTTP/2 framing layer), no body" \
    -s 16 -o '' -- curl -s --http2-prior-knowledge "$BASE/v1/ids/ulid"
check "... and its log names the GOAWAY with error 13 (HTTP_1_1_REQUIRED)" \
    -O '.*GOAWAY, error=13, last_stream=0.*' \
    --sh "curl -v --http2-prior-knowledge '$BASE/v1/ids/ulid' 2>&1 | tr '\\n' ' '"
got=$(printf 'PRI * HTTP/2.0\r\n\r\nSX\r\n\r\n' | exchange "$HTTP_PORT" 5 | tr '\n' ' ')
expect "a request line of HTTP/2.0 that is not the preface still gets the HTTP/1.1 505" "$got" \
    =~ '^HTTP/1.1 505 HTTP Version Not Supported .*"HTTP version not supported".* closed $'
got=$(printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'"$PREFACE" | raw "$HTTP_PORT" 5 | hexof)
expect "after an HTTP/1.1 request on the connection (ok), the preface is refused the same way" \
    "$got" =~ "^485454502f312e3120323030.*0d0a0d0a6f6b0a$REFUSAL\$"
expect "the refusals are counted as 5xx requests and protocol errors" \
    "$(metric 'idmint_requests_total{route="other",status="5xx"}')" -ge 6
http "the server goes on serving HTTP/1.1" -L "$ULID" -n 1 -- /v1/ids/ulid
stop_server
finish
