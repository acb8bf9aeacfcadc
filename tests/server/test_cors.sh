# test_cors.sh - cross-origin calls from browser pages (idmintd(8),
# --cors-origin, and "Cross-origin requests" under HTTP): off by default (OPTIONS keeps
# its 405, no Access-Control-* header); with the option, a preflight from
# a listed origin is answered 204 with the allowed origin, methods,
# headers (Authorization for the token) and max age, without a token and
# for any path; a request from a listed origin gets
# Access-Control-Allow-Origin (errors too, so that a page can read them),
# one from another origin none; every response says Vary: Origin. The
# list from repeated flags, comma lists and the config file (flags
# replace the file's); bad origins refused at start naming why.
# Usage: bash tests/server/test_cors.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-9A-HJKMNP-TV-Z]{26}'
APP=https://app.example
PREFLIGHT=(-X OPTIONS -H "Origin: $APP" -H 'Access-Control-Request-Method: GET'
    -H 'Access-Control-Request-Headers: authorization')

# --- off by default -------------------------------------------------------------------------
start_server
http "without --cors-origin, a preflight gets today's 405 and no CORS header" -s 405 \
    -h 'Allow: GET, HEAD' -x 'Access-Control-.*' -x 'Vary: .*' -- /v1/ids/ulid "${PREFLIGHT[@]}"
http "without --cors-origin, a GET with Origin gets no CORS header" -L "$ULID" \
    -x 'Access-Control-.*' -x 'Vary: .*' -- /v1/ids/ulid -H "Origin: $APP"
stop_server

# --- listed origins -------------------------------------------------------------------------
start_server --cors-origin "$APP" --cors-origin 'http://localhost:3000, HTTPS://B.Example:8443'
http "a preflight from a listed origin: 204 with the origin, methods, headers, max age" -s 204 \
    -h "Access-Control-Allow-Origin: $APP" -h 'Access-Control-Allow-Methods: GET, HEAD, POST' \
    -h 'Access-Control-Allow-Headers: Authorization, Content-Type' \
    -h 'Access-Control-Max-Age: 600' -h 'Vary: Origin' -o '' -- /v1/ids/ulid "${PREFLIGHT[@]}"
http "... without Content-Length or Content-Type (RFC 9110 section 8.6: none in a 204)" -s 204 \
    -x 'Content-Length: .*' -x 'Content-Type: .*' -- /v1/ids/ulid "${PREFLIGHT[@]}"
http "... for any path, a route or not (it tells nothing about routes)" -s 204 \
    -h "Access-Control-Allow-Origin: $APP" -- /no/such/route "${PREFLIGHT[@]}"
http "an origin of a comma list" -s 204 -h 'Access-Control-Allow-Origin: http://localhost:3000' \
    -- /v1/ids/ulid -X OPTIONS -H 'Origin: http://localhost:3000' -H 'Access-Control-Request-Method: GET'
http "an origin listed in upper case is matched as browsers send it (lower case)" -s 204 \
    -h 'Access-Control-Allow-Origin: https://b.example:8443' -- /v1/ids/ulid -X OPTIONS \
    -H 'Origin: https://b.example:8443' -H 'Access-Control-Request-Method: GET'
http "a preflight from an origin not listed: today's 405, no Access-Control-Allow-Origin" -s 405 \
    -x 'Access-Control-.*' -h 'Vary: Origin' -- /v1/ids/ulid -X OPTIONS \
    -H 'Origin: https://evil.example' -H 'Access-Control-Request-Method: GET'
http "another port is another origin" -s 405 -x 'Access-Control-.*' -- /v1/ids/ulid -X OPTIONS \
    -H 'Origin: http://localhost:3001' -H 'Access-Control-Request-Method: GET'
http "OPTIONS without Access-Control-Request-Method is no preflight: 405" -s 405 \
    -x 'Access-Control-Allow-Methods: .*' -- /v1/ids/ulid -X OPTIONS -H "Origin: $APP"
http "a GET from a listed origin: the IDs with Access-Control-Allow-Origin and Vary: Origin" \
    -L "$ULID" -n 2 -h "Access-Control-Allow-Origin: $APP" -h 'Vary: Origin' \
    -h 'Access-Control-Expose-Headers: Retry-After, WWW-Authenticate' \
    -- '/v1/ids/ulid?count=2' -H "Origin: $APP"
http "... an error too (the page can read it)" -s 400 -h "Access-Control-Allow-Origin: $APP" \
    -O '\{"error": "unknown format .*"\}' -- /v1/ids/nope -H "Origin: $APP"
http "a GET from another origin: no Access-Control-Allow-Origin, still Vary: Origin" -L "$ULID" \
    -x 'Access-Control-.*' -h 'Vary: Origin' -- /v1/ids/ulid -H 'Origin: https://evil.example'
http "a GET without Origin: Vary: Origin (a cache keeps the two apart)" -L "$ULID" \
    -x 'Access-Control-.*' -h 'Vary: Origin' -- /v1/ids/ulid
# A preflight, then the request, on one keep-alive connection.
got=$(printf 'OPTIONS /v1/ids/ulid HTTP/1.1\r\nHost: x\r\nOrigin: %s\r\nAccess-Control-Request-Method: GET\r\n\r\nGET /v1/ids/ulid HTTP/1.1\r\nHost: x\r\nOrigin: %s\r\nConnection: close\r\n\r\n' \
    "$APP" "$APP" | raw "$HTTP_PORT" 5 | tr -d '\r' | grep -E '^(HTTP/|Access-Control-Allow-Origin|[0-9A-Z]{26}$)' | paste -sd ' ')
expect "a preflight and its request on one connection: 204, then 200 with the ULID, both allowed" \
    "$got" =~ "^HTTP/1.1 204 No Content Access-Control-Allow-Origin: $APP HTTP/1.1 200 OK Access-Control-Allow-Origin: $APP $ULID\$"
stop_server

# --- any origin, with a token ---------------------------------------------------------------
TOKEN=idmint-test-token-0123456789abcdef
printf '%s\n' "$TOKEN" >"$T_DIR/token"
chmod 600 "$T_DIR/token"
start_server --cors-origin '*' --auth-token-file "$T_DIR/token"
http "--cors-origin '*': a preflight from any origin, without a token: 204, origin *" -s 204 \
    -h 'Access-Control-Allow-Origin: \*' -h 'Access-Control-Allow-Headers: Authorization, Content-Type' \
    -- /v1/ids/ulid -X OPTIONS -H 'Origin: https://anyone.example' -H 'Access-Control-Request-Method: GET' \
    -H 'Access-Control-Request-Headers: authorization'
http "... the request without the token: 401 the page can read (origin *, the challenge exposed)" -s 401 \
    -h 'Access-Control-Allow-Origin: \*' -h 'WWW-Authenticate: Bearer realm="idmintd"' \
    -h 'Access-Control-Expose-Headers: Retry-After, WWW-Authenticate' \
    -- /v1/ids/ulid -H 'Origin: https://anyone.example'
http "... with the token: the ID, origin *" -L "$ULID" -h 'Access-Control-Allow-Origin: \*' \
    -- /v1/ids/ulid -H 'Origin: https://anyone.example' -H "Authorization: Bearer $TOKEN"
http "OPTIONS without Origin is no preflight: the token is still asked for (401)" -s 401 \
    -x 'Access-Control-.*' -- /v1/ids/ulid -X OPTIONS -H 'Access-Control-Request-Method: GET'
expect "preflights are not counted as auth failures (only the two 401s are)" \
    "$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/metrics" | awk '$1 == "idmint_auth_failures_total{protocol=\"http\"}" { print $2 }')" = 2
stop_server

# --- the config file ------------------------------------------------------------------------
cat >"$T_DIR/conf" <<EOF
cors-origin = https://conf.example, https://conf2.example
EOF
start_server --config "$T_DIR/conf"
http "cors-origin in the config file (a comma list)" -s 204 \
    -h 'Access-Control-Allow-Origin: https://conf2.example' -- /v1/ids/ulid -X OPTIONS \
    -H 'Origin: https://conf2.example' -H 'Access-Control-Request-Method: GET'
stop_server
start_server --config "$T_DIR/conf" --cors-origin "$APP"
http "--cors-origin on the command line replaces the file's list: the flag's origin" -s 204 \
    -h "Access-Control-Allow-Origin: $APP" -- /v1/ids/ulid "${PREFLIGHT[@]}"
http "... the file's origins no longer" -s 405 -x 'Access-Control-.*' -- /v1/ids/ulid -X OPTIONS \
    -H 'Origin: https://conf.example' -H 'Access-Control-Request-Method: GET'
stop_server
start_server --config "$T_DIR/conf" --cors-origin none
http "--cors-origin none turns the file's list off" -s 405 -x 'Access-Control-.*' -x 'Vary: .*' \
    -- /v1/ids/ulid -X OPTIONS -H 'Origin: https://conf.example' -H 'Access-Control-Request-Method: GET'
stop_server

# --- bad origins ----------------------------------------------------------------------------
refused() {
    local value=$1 why=$2
    check "--cors-origin '$value' is refused at start: $why" -s 2 -O "idmintd: --cors-origin: .*$why.*" \
        --sh "timeout 5 \"\$IDMINTD\" --http 127.0.0.1:$(random_port) --resp off --state-dir none \
            --cors-origin '$value' 2>&1 >/dev/null"
}
refused 'https://a.example/' 'scheme://host\[:port\]'
refused 'https://a.example/app' 'scheme://host\[:port\]'
refused 'a.example' 'scheme://host\[:port\]'
refused 'https://user@a.example' 'scheme://host\[:port\]'
refused 'https://a.example:443' 'leave the default port out'
refused 'http://a.example:80' 'leave the default port out'
refused 'https://a.example:99999' 'port'
refused 'null' 'null'
refused 'https://a.example,,https://b.example' 'empty'
refused "$(printf 'https://h%d.example,' $(seq 1 17))https://last.example" 'at most 16'
check "a bad origin in the config file names the file and line" -s 2 \
    -O "idmintd: $T_DIR/bad.conf:2: cors-origin: .*" \
    --sh "printf '# x\\ncors-origin = https://a.example/\\n' >'$T_DIR/bad.conf'; timeout 5 \"\$IDMINTD\" \
        --http 127.0.0.1:$(random_port) --resp off --state-dir none --config '$T_DIR/bad.conf' 2>&1 >/dev/null"
finish
