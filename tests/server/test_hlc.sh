# test_hlc.sh - idmintd's hybrid logical clock (idmintd(8): GET and POST
# /v1/hlc, RESP HLC [stamp], --max-offset; server/hlc.h): stamps strictly
# increasing across both protocols, a received stamp merged, one too far
# ahead refused without moving the clock, malformed and oversized bodies,
# HEAD that does not advance the clock, parking until the mark is durable,
# and (under libfaketime, in builds without a sanitizer) order across a
# restart with the clock stepped back and an exchange between two servers
# whose clocks are 200 ms apart.
# Usage: bash tests/server/test_hlc.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

HEX='[0-9a-f]{16}'
cli() {
    redis-cli -p "$RESP_PORT" "$@"
}
# wall STAMP: its wall_ms; stamp WALL_MS LOGICAL: the text.
wall() {
    echo $((16#${1:0:12}))
}
stamp() {
    printf '%012x%04x\n' "$1" "$2"
}
get() {
    curl -s "$BASE/v1/hlc"
}
post() {
    curl -s --data-binary "$1" "$BASE/v1/hlc"
}
# increasing FILE: every line strictly after the one before (byte order).
increasing() {
    LC_ALL=C sort -c -u "$1" 2>/dev/null
}
# after A B: A > B as strings (the order of stamps).
after() {
    [[ $1 > $2 ]] && echo yes || echo "no ($1 <= $2)"
}
# merged GOT R DONE_MS: whether GOT is what the receive rule makes of R,
# a stamp whose wall time was still ahead of the clock: R's wall_ms with
# logical + 1. DONE_MS is the clock when the reply was in: if it is
# already past R's wall time (a loaded machine took that long), idmintd's
# clock may have passed R too, and then the rule gives the clock's own
# time, later than R's, with logical 0.
merged() {
    local want
    want=$(stamp "$(wall "$2")" $((16#${2:12:4} + 1)))
    if [ "$1" = "$want" ]; then
        echo yes
    elif [ "$3" -ge "$(wall "$2")" ] && [ "$(wall "$1")" -gt "$(wall "$2")" ] && [ "${1:12:4}" = 0000 ]; then
        echo yes
    else
        echo "no ($1, not $want)"
    fi
}

start_server

# ---- GET ---------------------------------------------------------------------------
http "GET /v1/hlc: a stamp (16 lowercase hex digits) and a newline" -O "$HEX" -n 1 \
    -h 'content-type: text/plain; charset=utf-8' -h 'content-length: 17' -- /v1/hlc
for _ in $(seq 30); do get; done >"$T_DIR/g"
expect "successive GETs are strictly increasing" "$(increasing "$T_DIR/g" && echo ok)" = ok
s=$(get)
now=$(now_ms)
expect "a stamp's wall_ms is the server's clock (within 2 s)" $((now - $(wall "$s"))) -lt 2000
expect "... and not ahead of it" $(($(wall "$s") - now)) -le 5
http "GET with Accept: application/json: the inspect object" \
    -O '\{"stamp": "[0-9a-f]{16}", "wall_ms": [0-9]+, "time": "[0-9-]{10}T[0-9:]{8}\.[0-9]{3}Z", "logical": [0-9]+\}' \
    -h 'content-type: application/json' -- /v1/hlc -H 'Accept: application/json'
check "the JSON's members agree with each other (jq)" -o ok --sh "
    curl -s -H 'Accept: application/json' $BASE/v1/hlc | jq -e '(.stamp[0:12] | explode | length) == 12 and .logical >= 0 and (.time | test(\"Z\$\"))' >/dev/null && echo ok"
http "a query parameter is refused (400)" -s 400 -O '.*unknown query parameter .count.*' -- '/v1/hlc?count=2'

# ---- HEAD: the clock does not move -------------------------------------------------
n0=$(metric idmint_hlc_stamps_total)
head_get=$(printf 'HEAD /v1/hlc HTTP/1.1\r\nHost: t\r\n\r\nHEAD /v1/hlc HTTP/1.1\r\nHost: t\r\nAccept: application/json\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' |
    raw "$HTTP_PORT" 5 | tr -d '\r' | grep -E '^(HTTP/|Content-Length|Content-Type|ok)' | paste -sd ' ')
expect "HEAD /v1/hlc: a GET's headers and no body (Content-Length 17; none for JSON, whose length varies)" \
    "$head_get" = "HTTP/1.1 200 OK Content-Type: text/plain; charset=utf-8 Content-Length: 17 HTTP/1.1 200 OK Content-Type: application/json HTTP/1.1 200 OK Content-Type: text/plain; charset=utf-8 Content-Length: 3 ok"
expect "HEAD hands out no stamp (idmint_hlc_stamps_total unchanged)" "$(metric idmint_hlc_stamps_total)" = "$n0"

# ---- POST: merge -------------------------------------------------------------------
s=$(get)
r300=$(stamp $(($(wall "$s") + 300)) 7)
got=$(post "$r300")
done_ms=$(now_ms)
expect "POST a stamp 300 ms ahead: a stamp after it" "$(after "$got" "$r300")" = yes
expect "... with its wall_ms and logical + 1 (the receive rule)" "$(merged "$got" "$r300" "$done_ms")" = yes
g2=$(get)
expect "the next GET is after the merged stamp" "$(after "$g2" "$got")" = yes
expect "the durable mark covers every stamp handed out" "$(hwm_mark "$T_DIR/state")" -ge "$(wall "$got")"
old=$(stamp $(($(wall "$g2") - 60000)) 3)
expect "POST a stamp from the past: a stamp after the clock's last" "$(after "$(post "$old")" "$g2")" = yes
got=$(post "$(stamp $(($(now_ms) + 100)) 0)"$'\n')
expect "a body with a trailing newline is taken" "$got" =~ "^$HEX\$"
got=$(post "$(stamp $(($(now_ms) + 100)) 0)"$'\r\n')
expect "... and with CRLF" "$got" =~ "^$HEX\$"
http "POST's reply as JSON with Accept: application/json" -O '\{"stamp": "[0-9a-f]{16}", .*\}' \
    -- /v1/hlc --data-binary "$(get)" -H 'Accept: application/json'

# ---- POST: refused -----------------------------------------------------------------
before=$(get)
far=$(stamp $(($(now_ms) + 2000)) 0)
# The stamp is 2 s ahead when made: by the time idmintd reads it, up to
# 2000 ms (less the request's delay on a loaded machine, hence from 1000).
http "POST a stamp 2 s ahead: 422, says how far ahead and the limit" -s 422 \
    -O '\{"error": "remote clock is (1[0-9]{3}|2000) ms ahead of the local clock, more than the limit of 500 ms \(--max-offset\)"\}' \
    -- /v1/hlc --data-binary "$far"
g=$(get)
floor=$(now_ms)
[ "$(wall "$before")" -gt "$floor" ] && floor=$(wall "$before")
expect "after a refusal the next GET is not dragged ahead (wall_ms <= max(now, the last) + 50)" \
    $(($(wall "$g") - floor)) -le 50
expect "... and still after the one before" "$(after "$g" "$before")" = yes
expect "the refusal is counted (idmint_hlc_offset_refusals_total)" "$(metric idmint_hlc_offset_refusals_total)" -ge 1
http "a malformed stamp: 400 with the reason and position" -s 400 \
    -o '{"error": "invalid stamp: a stamp is lowercase hex; position 4 is not (0-9, a-f)"}' \
    -- /v1/hlc --data-binary 019AD9C297800000
http "a stamp of the wrong length: 400" -s 400 -O '.*must be 16 characters, got 15.*' \
    -- /v1/hlc --data-binary 019ad9c29780000
http "an empty body: 400" -s 400 -O '.*must be 16 characters, got 0.*' -- /v1/hlc -X POST
http "a body over 64 bytes: 413, and the connection closes" -s 413 -h 'connection: close' \
    -O '.*at most 64 bytes, got 100.*' -- /v1/hlc --data-binary "$(printf 'a%.0s' $(seq 100))"
http "PUT: 405 with Allow: GET, HEAD, POST" -s 405 -h 'allow: GET, HEAD, POST' -- /v1/hlc -X PUT
http "POST elsewhere is still 405 (only /v1/hlc reads a body)" -s 405 -h 'allow: GET, HEAD' \
    -- /v1/ids/ulid --data-binary x
s=$(get)
check "a body that arrives after its head (separate writes) is waited for" -O "HTTP/1.1 200 OK.*" --sh "
    { printf 'POST /v1/hlc HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\nConnection: close\r\n\r\n'; sleep 0.3; printf 0000; sleep 0.2; printf 000000000001; } |
    { exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT; cat >&3 & timeout 5 cat <&3; } | tr -d '\r' | paste -sd ' '"
check "keep-alive: GET, POST and GET pipelined on one connection answer in order" -o ok --sh "
    b=\$(printf '%s' '$s')
    printf 'GET /v1/hlc HTTP/1.1\r\nHost: x\r\n\r\nPOST /v1/hlc HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n%s\nGET /v1/hlc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' \"\$b\" |
    { exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT; cat >&3 & timeout 5 cat <&3; } | tr -d '\r' | grep -E '^[0-9a-f]{16}\$' >$T_DIR/pipe
    [ \$(wc -l <$T_DIR/pipe) = 3 ] && sort -c -u $T_DIR/pipe && [[ \$(sed -n 2p $T_DIR/pipe) > \$b ]] && echo ok"

# ---- RESP ---------------------------------------------------------------------------
check "RESP HLC: a bulk string stamp" -O "$HEX" -- cli HLC
s=$(cli HLC)
r=$(stamp $(($(wall "$s") + 300)) 5)
got=$(cli HLC "$r")
done_ms=$(now_ms)
expect "RESP HLC stamp: merged, a stamp after it" "$(merged "$got" "$r" "$done_ms")" = yes
check "RESP HLC with a stamp 2 s ahead: -ERR remote clock is N ms ahead ... limit" \
    -O 'ERR remote clock is [0-9]+ ms ahead of the local clock, more than the limit of 500 ms.*' \
    -- cli HLC "$(stamp $(($(now_ms) + 2000)) 0)"
check "RESP HLC with a malformed stamp: -ERR invalid stamp" -O "ERR invalid stamp 'xyz': .*" -- cli HLC xyz
check "RESP HLC with two arguments: wrong number of arguments" -O "ERR wrong number of arguments for 'hlc' command.*" \
    -- cli HLC "$s" "$s"
check "COMMAND INFO hlc: in the command table" -O '.*hlc.*' --sh "redis-cli -p $RESP_PORT COMMAND INFO hlc | paste -sd ' '"
check "COMMAND DOCS hlc: its summary" -O '.*hybrid logical clock.*' --sh "redis-cli -p $RESP_PORT COMMAND DOCS hlc | paste -sd ' '"
check "INFO counts the stamps" -O 'hlc_stamps:[1-9][0-9]*' --sh "redis-cli -p $RESP_PORT INFO | tr -d '\r' | grep ^hlc_stamps:"
check "RESP HLC pipelined: 100 stamps on one connection, strictly increasing" -o ok --sh "
    for i in \$(seq 100); do echo HLC; done | redis-cli -p $RESP_PORT >$T_DIR/rp && [ \$(wc -l <$T_DIR/rp) = 100 ] && sort -c -u $T_DIR/rp && echo ok"

# ---- HTTP and RESP interleaved ------------------------------------------------------
: >"$T_DIR/mix"
for i in $(seq 40); do
    if [ $((i % 3)) = 0 ]; then
        cli HLC "$(tail -n 1 "$T_DIR/mix")" >>"$T_DIR/mix"
    elif [ $((i % 2)) = 0 ]; then
        cli HLC >>"$T_DIR/mix"
    else
        get >>"$T_DIR/mix"
    fi
done
expect "HTTP and RESP on one server: one clock, strictly increasing" "$(wc -l <"$T_DIR/mix") $(increasing "$T_DIR/mix" && echo ok)" = "40 ok"
stop_server
expect "a drained stop exits 0" "$SRV_STATUS" = 0
last=$(tail -n 1 "$T_DIR/mix")
expect "the mark left at stop covers the last stamp" "$(hwm_mark "$T_DIR/state")" -ge "$(wall "$last")"

# ---- --max-offset, --reserve: parking until the mark is durable -----------------------
start_server --max-offset 5000 --reserve 10 --state-dir "$T_DIR/state2"
f=$(stamp $(($(now_ms) + 2000)) 9)
w0=$(metric idmint_ceiling_waits_total)
got=$(post "$f")
expect "--max-offset 5000: a stamp 2 s ahead is merged" "$got" = "$(stamp "$(wall "$f")" 10)"
expect "... after parking until a mark covering it was durable (--reserve 10)" \
    "$(metric idmint_ceiling_waits_total)" -gt "$w0"
expect "... and the durable mark covers it" "$(hwm_mark "$T_DIR/state2")" -ge "$(wall "$got")"
check "RESP HLC 3 s ahead parks and answers too" -o ok --sh "
    r=\$(redis-cli -p $RESP_PORT HLC $(stamp $(($(now_ms) + 3000)) 0)); [[ \$r =~ ^[0-9a-f]{16}\$ ]] && echo ok"
http "--max-offset 5000 still refuses 10 s ahead" -s 422 -O '.*limit of 5000 ms.*' \
    -- /v1/hlc --data-binary "$(stamp $(($(now_ms) + 10000)) 0)"
stop_server

# ---- --auth-token-file ----------------------------------------------------------------
printf 'hlc-test-token-0123456789abcdef\n' >"$T_DIR/token"
chmod 600 "$T_DIR/token"
start_server --auth-token-file "$T_DIR/token" --state-dir "$T_DIR/state3"
http "with --auth-token-file, GET /v1/hlc needs the token (401)" -s 401 -- /v1/hlc
http "... POST too, before its body is looked at" -s 401 -- /v1/hlc --data-binary xyz
http "... and the token lets it through" -O "$HEX" -- /v1/hlc -H 'Authorization: Bearer hlc-test-token-0123456789abcdef'
check "RESP HLC without AUTH: -NOAUTH" -O 'NOAUTH.*' -- cli HLC
stop_server

# ---- libfaketime: restarts and two nodes ------------------------------------------------
if [ -n "${IDM_SANITIZE:-}" ] || [ ! -e "$FAKETIME_LIB" ]; then
    finish
fi

step_clock +0
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state4"
for _ in $(seq 5); do get; done >"$T_DIR/r1"
ahead=$(post "$(stamp $(($(now_ms) + 400)) 0)")
echo "$ahead" >>"$T_DIR/r1"
stop_server
last=$(tail -n 1 "$T_DIR/r1")
step_clock -3
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state4"
first=$(get)
expect "restart after SIGTERM with the clock 3 s back: the first stamp is after the last before" \
    "$(after "$first" "$last")" = yes
for _ in $(seq 5); do get; done >"$T_DIR/r2"
expect "... and they go on increasing" "$(increasing "$T_DIR/r2" && echo ok)" = ok
last=$(tail -n 1 "$T_DIR/r2")
stop_server KILL
step_clock -6
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state4"
first=$(cli HLC)
expect "restart after SIGKILL with the clock 6 s back: still after the last stamp" "$(after "$first" "$last")" = yes
stop_server

# Two servers whose clocks are 200 ms apart exchange messages: A's send
# stamp is POSTed to B (its receive), B's send to A, 20 rounds.
step_clock +0
printf '%s\n' -0.2 >"$T_DIR/faketime_b"
# Each its own state and node registry: nothing of the runs above (their
# marks are ahead of the clock now) is resumed from.
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/stateA" --node-registry "$T_DIR/nodesA"
A=$BASE A_PID=$SRV_PID
start_server --env "LD_PRELOAD=$FAKETIME_LIB" --env "FAKETIME_TIMESTAMP_FILE=$T_DIR/faketime_b" \
    --env FAKETIME_NO_CACHE=1 --env FAKETIME_DONT_FAKE_MONOTONIC=1 --state-dir "$T_DIR/stateB" \
    --node-registry "$T_DIR/nodesB"
B=$BASE
# B read before A and after it: a delay between the requests (a loaded
# machine) only widens the first difference and narrows the second, so
# each bound holds however slow the requests are, and fails only when the
# clocks are not 200 ms apart.
sb1=$(curl -s "$B/v1/hlc")
sa=$(curl -s "$A/v1/hlc")
sb2=$(curl -s "$B/v1/hlc")
expect "the two clocks are about 200 ms apart" $(($(wall "$sa") - $(wall "$sb1"))) -ge 150
expect "... not more" $(($(wall "$sa") - $(wall "$sb2"))) -le 400
bad=0
: >"$T_DIR/na"
: >"$T_DIR/nb"
for _ in $(seq 20); do
    send=$(curl -s "$A/v1/hlc")
    recv=$(curl -s --data-binary "$send" "$B/v1/hlc")
    [[ $recv > $send ]] || bad=$((bad + 1))
    printf '%s\n%s\n' "$send" >>"$T_DIR/na"
    back=$(curl -s "$B/v1/hlc")
    recv2=$(curl -s --data-binary "$back" "$A/v1/hlc")
    [[ $recv2 > $back ]] || bad=$((bad + 1))
    printf '%s\n%s\n' "$recv" "$back" >>"$T_DIR/nb"
    printf '%s\n' "$recv2" >>"$T_DIR/na"
done
sed -i '/^$/d' "$T_DIR/na" "$T_DIR/nb"
expect "every receive stamp is after its send stamp (40 messages)" "$bad" = 0
expect "node A's stamps increase" "$(wc -l <"$T_DIR/na") $(increasing "$T_DIR/na" && echo ok)" = "40 ok"
expect "node B's stamps increase" "$(wc -l <"$T_DIR/nb") $(increasing "$T_DIR/nb" && echo ok)" = "40 ok" ||
    paste -sd ' ' "$T_DIR/nb" "$T_DIR/na" >&2
stop_server
SRV_PID=$A_PID
stop_server
finish
