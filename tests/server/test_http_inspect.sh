# test_http_inspect.sh - idmintd's /v1/inspect/{id} query (layout, epoch
# and as, parsed as `idmint inspect --layout L --epoch E --as KIND` parses
# them, so the objects are byte for byte the CLI's), its refusals, and its
# input limits: client input never gets a 5xx.
# Usage: bash tests/server/test_http_inspect.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

JSON='Content-Type: application/json'
ERROR='\{"error": "[^"]+"\}'

# inspect_case EVIDENCE QUERY ID [CLI OPTIONS...]: /v1/inspect/ID?QUERY is
# `idmint inspect --json [CLI OPTIONS] ID`, with the CLI's status (200 for
# an ID that decodes, 400 for one that does not).
inspect_case() {
    local evidence=$1 query=$2 id=$3 want status=200
    shift 3
    want=$("$IDMINT" inspect --json "$@" "$id") || status=400
    http "$evidence" -s "$status" -h "$JSON" -o "$want" -- "/v1/inspect/$id${query:+?$query}"
}

# cli_message ARGS...: the first line of idmint inspect's usage error,
# without "idmint: ", as a JSON error body (its quotes escaped).
cli_message() {
    local m
    m=$("$IDMINT" inspect --json "$@" 2>&1 >/dev/null | head -n 1)
    m=${m#idmint: }
    printf '{"error": "%s"}' "${m//\"/\\\"}"
}

start_server

sf=$(curl -s "$BASE/v1/ids/snowflake")
ulid=$(curl -s "$BASE/v1/ids/ulid")
uuid=$(curl -s "$BASE/v1/ids/uuidv7")

# --- layout, epoch, as -------------------------------------------------------------

for l in discord instagram sonyflake baidu safe53 twitter; do
    inspect_case "?layout=L: the snowflake is decoded with layout L, as idmint inspect --layout L ($l)" \
        "layout=$l" "$sf" --layout "$l"
done
inspect_case "?layout=SPEC: a spec, as idmint inspect --layout SPEC" \
    'layout=time%3D41%2Cnode%3D5%2Cseq%3D17%2Cunit%3D1ms%2Cepoch%3D1000' "$sf" \
    --layout 'time=41,node=5,seq=17,unit=1ms,epoch=1000'
inspect_case "?layout=L&epoch=E: the epoch applied to the layout (Unix ms)" \
    'layout=discord&epoch=1420070400000' 1288834974657 --layout discord --epoch 1420070400000
inspect_case "?layout=L&epoch=E: the epoch as an RFC 3339 time with an offset (+ sent as %2B)" \
    'epoch=2015-01-01T00:00:00%2B01:00&layout=discord' 1288834974657 \
    --layout discord --epoch 2015-01-01T00:00:00+01:00
inspect_case "?epoch=E alone: the server's layout (twitter here) with that epoch, as idmint inspect --epoch E" \
    'epoch=0' 1288834974657 --epoch 0
inspect_case "?as=KIND: decoded as that kind only (ulid)" "as=ulid" "$ulid" --as ulid
inspect_case "?as=KIND: decoded as that kind only (snowflake, with a layout)" \
    "as=snowflake&layout=sonyflake" "$sf" --as snowflake --layout sonyflake
inspect_case "?as=KIND: an input that is not of that kind gets 400 and the CLI's error object" \
    "as=uuid" "$ulid" --as uuid
inspect_case "?as=KIND: a UUID asked as a ULID gets 400 and the CLI's error object" \
    "as=ulid" "$uuid" --as ulid
inspect_case "no query: the server's layout (twitter here), as before" '' "$sf"

# --- refusals ------------------------------------------------------------------------

http "an invalid layout is a 400 with the CLI's message" \
    -s 400 -h "$JSON" -o "$(cli_message --layout nosuch 1)" -- '/v1/inspect/1?layout=nosuch'
http "an invalid spec is a 400 with the CLI's message" \
    -s 400 -h "$JSON" -o "$(cli_message --layout time=41,node=10 1)" -- '/v1/inspect/1?layout=time%3D41,node%3D10'
http "an invalid epoch is a 400 with the CLI's message" \
    -s 400 -h "$JSON" -o "$(cli_message --layout discord --epoch yesterday 1)" \
    -- '/v1/inspect/1?layout=discord&epoch=yesterday'
http "an invalid epoch alone is a 400 with the CLI's message" \
    -s 400 -h "$JSON" -o "$(cli_message --epoch 99999999999999999999 1)" \
    -- '/v1/inspect/1?epoch=99999999999999999999'
http "an invalid kind is a 400 with the CLI's message" \
    -s 400 -h "$JSON" -o "$(cli_message --as bogus 1)" -- '/v1/inspect/1?as=bogus'
for q in 'layout=' 'epoch=' 'as=' 'layout' 'as=%zz' 'epoch=1%00'; do
    http "an empty or malformed value is refused, not taken for unset (?$q)" \
        -s 400 -h "$JSON" -O "$ERROR" -- "/v1/inspect/1?$q"
done
http "an unknown query parameter is a 400 (kind=ulid)" \
    -s 400 -h "$JSON" \
    -o "{\"error\": \"unknown query parameter 'kind' (this route takes layout, epoch and as)\"}" \
    -- "/v1/inspect/$ulid?kind=ulid"
http "a parameter given twice is a 400 (layout)" \
    -s 400 -h "$JSON" -o "{\"error\": \"query parameter 'layout' is given more than once\"}" \
    -- "/v1/inspect/$sf?layout=discord&layout=twitter"
http "a long layout value is refused with a 400 naming it" \
    -s 400 -h "$JSON" -O '\{"error": "invalid layout[^"]*"\}' \
    -- "/v1/inspect/1?layout=$(printf 'x%.0s' $(seq 300))"

# --- input limits: client input never produces a 5xx ---------------------------------

# rep TEXT N: TEXT N times.
rep() {
    local s='' i
    for ((i = 0; i < $2; i++)); do s+=$1; done
    printf '%s' "$s"
}
for n in 511 2700; do
    http "a long percent-encoded input (%01 x $n) is a 400 with a clear message, not a 500" \
        -s 400 -h "$JSON" -o "{\"error\": \"the ID is too long: $n bytes decoded (at most 256)\"}" \
        -- "/v1/inspect/$(rep %01 "$n")"
done
http "a long percent-encoded input (%22 x 2000, quotes) is a 400, not a 500" \
    -s 400 -h "$JSON" -o '{"error": "the ID is too long: 2000 bytes decoded (at most 256)"}' \
    -- "/v1/inspect/$(rep %22 2000)"
http "257 decoded bytes are too long" \
    -s 400 -o '{"error": "the ID is too long: 257 bytes decoded (at most 256)"}' \
    -- "/v1/inspect/$(rep A 257)"
# 256 control bytes are looked at: the CLI's error object, each escaped.
ctl=$(rep $'\x01' 256)
http "256 decoded bytes (%01 x 256) are inspected: 400 with the CLI's error object" \
    -s 400 -h "$JSON" -o "$("$IDMINT" inspect --json "$ctl")" -- "/v1/inspect/$(rep %01 256)"
http "256 decoded bytes with a layout: 400 with the CLI's error object" \
    -s 400 -h "$JSON" -o "$("$IDMINT" inspect --json --layout discord "$ctl")" \
    -- "/v1/inspect/$(rep %01 256)?layout=discord"
http "a malformed escape is a 400 with a clear message" \
    -s 400 -h "$JSON" -o '{"error": "the ID is not a valid path segment (a malformed %-escape or a %00)"}' \
    -- '/v1/inspect/01AR%zz'
http "%00 in the ID is a 400" -s 400 -h "$JSON" -O "$ERROR" -- '/v1/inspect/01AR%00'
http "a request-target over 8192 bytes is a 414" \
    -s 414 -h "$JSON" -O "$ERROR" -- "/v1/inspect/$(rep %41 2800)"
x5=$(metric 'idmint_requests_total{route="/v1/inspect",status="5xx"}')
expect "no 5xx was counted for any of these requests" "${x5:-0}" = 0
expect "the server still serves after them" "$(curl -s "$BASE/healthz")" = ok
stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0

# --- a server with its own layout --------------------------------------------------------

start_server --layout discord --epoch 1420070400000
sf=$(curl -s "$BASE/v1/ids/snowflake")
inspect_case "no query: the server's --layout and --epoch" '' "$sf" \
    --layout discord --epoch 1420070400000
inspect_case "?epoch=E alone: the server's layout with that epoch" 'epoch=1288834974657' "$sf" \
    --layout discord --epoch 1288834974657
inspect_case "?layout=L: the layout's own epoch, not the server's" 'layout=twitter' "$sf" --layout twitter
stop_server TERM
expect "SIGTERM: exits 0 (second server)" "$SRV_STATUS" = 0
finish
