# test_park.sh - a request that must wait is parked, never slept on: idmintd
# runs under libfaketime with its clock FROZEN, so that a snowflake request
# needing the next time unit cannot complete until the test moves the clock.
# While it is parked, other connections (/healthz, /metrics, UUIDv7, the
# RESP port) are answered; once the clock moves, it completes with correct
# IDs. Also: replies on one connection stay in request order behind a
# parked request, SIGTERM during a park drains it (answered in full, exit
# 0), and a layout with one-second units parks across two unit boundaries;
# a memcached get parked on its second key sends the first key's value and
# resumes at the second.
# Every check is deterministic (a frozen clock, the idmint_requests_parked
# gauge, whether a client has had any byte); waits are bounded only so that
# a server that blocks fails instead of hanging the test.
# Usage: bash tests/server/test_park.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'
UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
require_faketime test_park.sh

# Requests expected to be answered while another is parked get this long;
# on a loop that serves them at once they take milliseconds.
QUICK=(-m 5)
NL=$'\n'

# twitter_ms ID: the Unix ms of a twitter-layout snowflake (41-bit time
# since 2010-11-04T01:42:54.657Z, 10-bit node, 12-bit sequence).
twitter_ms() {
    echo $((($1 >> 22) + 1288834974657))
}
# inspect_ms LAYOUT ID: the Unix ms idmint inspect decodes.
inspect_ms() {
    "$IDMINT" inspect --json --layout "$1" "$2" | grep -Eo '"unix_ms": -?[0-9]+' | grep -Eo -- '-?[0-9]+$'
}
# parked: idmintd reports at least one request parked now.
parked() {
    local v
    v=$(metric idmint_requests_parked)
    [[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ]
}
# answered FILE...: a client has received at least one byte.
answered() {
    [ "$(cat "$@" 2>/dev/null | wc -c)" -gt 0 ]
}
# fetch NAME PATH: a background curl of PATH: headers to $T_DIR/NAME.head,
# body to NAME.body, status to NAME.code; its PID is in FETCH_PID.
fetch() {
    rm -f "$T_DIR/$1".{head,body,code}
    curl -s -m 120 -D "$T_DIR/$1.head" -o "$T_DIR/$1.body" -w '%{http_code}' "$BASE$2" >"$T_DIR/$1.code" &
    FETCH_PID=$!
    track "$FETCH_PID"
}
# send_bg PORT OUT FORMAT: FORMAT's bytes (printf) on a connection of
# their own in the background, the replies into OUT; its PID in BG_PID.
send_bg() {
    # shellcheck disable=SC2059
    printf "$3" | raw "$1" 60 >"$2" &
    BG_PID=$!
    track "$BG_PID"
}
# fetched PID: the background client has finished (its PID is gone).
fetched() {
    ! running "$1"
}

# --- a parked request (twitter: 4,096 per ms; 5,000 need the next ms) -----------------

step_clock +0
start_server "${FAKETIME_ENV[@]}" --layout twitter --state-dir "$T_DIR/s1"
# Every time used so far is at or below the real clock, so freezing at
# the real time now is no step back, and "+0" later a step forward.
T=$(now_ms)
freeze_clock "$T"
fetch big '/v1/ids/snowflake?count=5000'
big=$FETCH_PID
wait_until 15 parked
expect "a snowflake request that needs the next ms, with the clock frozen, is parked (idmint_requests_parked >= 1)" \
    "$(metric idmint_requests_parked)" -ge 1
expect "... and not answered while the clock stays frozen (client running, no byte received)" \
    "$(running $big && echo running):$(answered "$T_DIR"/big.{head,body} && echo answered)" = running:
http "while a request is parked: /healthz answers on another connection" -- /healthz "${QUICK[@]}"
http "while a request is parked: /metrics answers, with the parked request in idmint_requests_parked" \
    -O "(.*$NL)?idmint_requests_parked [1-9][0-9]*($NL.*)?" -- /metrics "${QUICK[@]}"
http "while a request is parked: /metrics has idmint_parks_total" -O "(.*$NL)?idmint_parks_total [1-9][0-9]*($NL.*)?" -- /metrics "${QUICK[@]}"
http "while a request is parked: /metrics has idmint_hwm_persisted_timestamp_seconds" -O "(.*$NL)?idmint_hwm_persisted_timestamp_seconds [1-9][0-9]*\\.[0-9]{3}($NL.*)?" -- /metrics "${QUICK[@]}"
http "while a request is parked: UUIDv7 requests are answered" -L "$UUID7" -n 3 \
    -- '/v1/ids/uuidv7?count=3' "${QUICK[@]}"
check "while a request is parked: RESP PING answers" -o PONG -- redis-cli -p "$RESP_PORT" PING
check "while a request is parked: RESP NEXT uuidv7 answers" -L "$UUID7" -n 1 -- redis-cli -p "$RESP_PORT" NEXT uuidv7
expect "... and the parked request is still not answered (the clock is still frozen)" \
    "$(running $big && echo running):$(answered "$T_DIR"/big.{head,body} && echo answered)" = running:
step_clock +0
wait_until 15 fetched "$big"
wait "$big" 2>/dev/null
expect "when the clock moves on, the parked request completes (HTTP 200)" "$(cat "$T_DIR/big.code")" = 200
check "... with 5000 snowflakes" -L "$SNOWFLAKE" -n 5000 -- cat "$T_DIR/big.body"
check "... distinct and strictly increasing" -- sort -c -u -n "$T_DIR/big.body"
first=$(head -n 1 "$T_DIR/big.body")
last=$(tail -n 1 "$T_DIR/big.body")
expect "... the first minted at the frozen time ($T)" "$(twitter_ms "${first:-0}")" = "$T"
expect "... the last at a later ms (the clock moved)" "$(twitter_ms "${last:-0}")" -gt "$T"
expect "idmint inspect agrees on the time of the last" "$(inspect_ms twitter "${last:-0}")" = "$(twitter_ms "${last:-0}")"
expect "the parked gauge is back to 0 once it completed" "$(metric idmint_requests_parked)" = 0
expect "the park was counted (idmint_parks_total)" "$(metric idmint_parks_total)" -ge 1

# --- a transaction whose command waits: EXEC parked, the loop free -----------------------

T=$(now_ms)
freeze_clock "$T"
send_bg "$RESP_PORT" "$T_DIR/tx.out" 'MULTI\r\nNEXT uuidv7\r\nNEXT snowflake 5000\r\nNEXT snowflake 1\r\nEXEC\r\nPING\r\nQUIT\r\n'
tx=$BG_PID
wait_until 15 parked
expect "EXEC whose NEXT snowflake 5000 needs the next ms, clock frozen: parked (idmint_requests_parked >= 1)" \
    "$(metric idmint_requests_parked)" -ge 1
check "while EXEC is parked: another RESP connection is answered" -o PONG -- redis-cli -p "$RESP_PORT" PING
check "... INFO counts the parked request in blocked_clients" -o 1 \
    --sh "redis-cli -p $RESP_PORT INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p'"
other=$(printf 'MULTI\r\nNEXT uuidv7\r\nEXEC\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')
expect "... another transaction on another connection runs" "$other" =~ "^\\+OK \\+QUEUED \\*1 \\\$36 $UUID7 \\+OK\$"
expect "... and the parked transaction's connection has had its +QUEUED replies, not the 5000 snowflakes" \
    "$(tr -d '\r' <"$T_DIR/tx.out" | grep -c -e '^+QUEUED$'):$(tr -d '\r' <"$T_DIR/tx.out" | grep -c -e '^\*5000$')" = 3:0
step_clock +0
wait_until 30 fetched "$tx"
wait "$tx" 2>/dev/null
tr -d '\r' <"$T_DIR/tx.out" >"$T_DIR/tx.txt"
expect "when the clock moves on, EXEC completes: an array of 3 (a UUIDv7, 5000 and 1 snowflakes), then PONG" \
    "$(grep -E '^[*+]' "$T_DIR/tx.txt" | paste -sd ' ')" = '+OK +QUEUED +QUEUED +QUEUED *3 *5000 *1 +PONG +OK'
grep -E "^$SNOWFLAKE\$" "$T_DIR/tx.txt" >"$T_DIR/tx.ids"
check "... 5001 snowflakes, increasing through the array" -o 5001 \
    --sh "sort -c -u -n '$T_DIR/tx.ids' && wc -l <'$T_DIR/tx.ids'"
expect "the parked gauge is back to 0" "$(metric idmint_requests_parked)" = 0

# --- replies on one connection stay in request order behind a parked one -------------

T=$(now_ms)
freeze_clock "$T"
send_bg "$HTTP_PORT" "$T_DIR/pipe.out" 'GET /v1/ids/snowflake?count=5000 HTTP/1.1\r\nHost: t\r\n\r\nGET /v1/ids/snowflake?count=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
pipe=$BG_PID
wait_until 15 parked
expect "pipelined behind a parked request: parked (idmint_requests_parked >= 1)" "$(metric idmint_requests_parked)" -ge 1
expect "... nothing answered on that connection while the clock is frozen" \
    "$(answered "$T_DIR/pipe.out" && echo answered)" = ''
http "... /healthz answers meanwhile" -- /healthz "${QUICK[@]}"
step_clock +0
wait_until 30 fetched "$pipe"
wait "$pipe" 2>/dev/null
tr -d '\r' <"$T_DIR/pipe.out" >"$T_DIR/pipe.txt"
expect "both pipelined requests are answered, 200 each" "$(grep -c '^HTTP/1.1 200' "$T_DIR/pipe.txt")" = 2
grep -E "^$SNOWFLAKE\$" "$T_DIR/pipe.txt" >"$T_DIR/pipe.ids"
expect "... 5000 + 1 snowflakes" "$(wc -l <"$T_DIR/pipe.ids")" = 5001
check "... in request order: every ID increasing through both replies (the second's ID above every ID of the first)" \
    -- sort -c -u -n "$T_DIR/pipe.ids"

# --- SIGTERM during a park drains it ------------------------------------------------

T=$(now_ms)
freeze_clock "$T"
fetch drain '/v1/ids/snowflake?count=5000'
drain=$FETCH_PID
wait_until 15 parked
expect "SIGTERM during a park: a request is parked first" "$(metric idmint_requests_parked)" -ge 1
kill -TERM "$SRV_PID"
wait_until 10 grep -q 'received SIGTERM' "$SRV_LOG"
check "... the loop handles SIGTERM while the request is parked (logged with the clock still frozen)" \
    -O '.*received SIGTERM.*' -- grep 'received SIGTERM' "$SRV_LOG"
expect "... the server waits for the parked request (still running, clock still frozen)" \
    "$(running "$SRV_PID" && echo running)" = running
step_clock +0
wait_until 20 fetched "$drain"
wait "$drain" 2>/dev/null
expect "... the parked request is answered (200) once the clock moves" "$(cat "$T_DIR/drain.code")" = 200
check "... in full: 5000 snowflakes, strictly increasing" -L "$SNOWFLAKE" -n 5000 \
    --sh "sort -c -u -n '$T_DIR/drain.body' && cat '$T_DIR/drain.body'"
expect "... with Connection: close" "$(tr -d '\r' <"$T_DIR/drain.head" | grep -ci '^Connection: close$')" = 1
wait_server 12
expect "... and idmintd exits 0 after the drain" "$SRV_STATUS" = 0

# --- one-second units: count=600 at 256 per unit needs three units -------------------------

L1S=time=41,node=10,seq=8,unit=1s
step_clock +0
start_server "${FAKETIME_ENV[@]}" --layout "$L1S" --state-dir "$T_DIR/s2"
# The next whole second: a step forward of less than a second.
T=$((($(now_ms) / 1000 + 1) * 1000))
freeze_clock "$T"
fetch slow '/v1/ids/snowflake?count=600'
slow=$FETCH_PID
wait_until 15 parked
expect "unit=1s, count=600: parked in the first unit (idmint_requests_parked >= 1)" \
    "$(metric idmint_requests_parked)" -ge 1
http "... /healthz answers while it is parked" -- /healthz "${QUICK[@]}"
expect "... not answered in the first unit" \
    "$(running $slow && echo running):$(answered "$T_DIR"/slow.{head,body} && echo answered)" = running:
freeze_clock $((T + 1000))
# The request needs a third unit: whatever idmintd did with the second,
# it is still parked, and /healthz must still answer.
wait_until 15 parked
http "... in the second unit, /healthz still answers" -- /healthz "${QUICK[@]}"
expect "... and it is still parked, not answered (it needs a third unit)" \
    "$(metric idmint_requests_parked):$(running $slow && echo running):$(answered "$T_DIR"/slow.{head,body} && echo answered)" \
    = 1:running:
# The clock runs on from T + 1000 (whether idmintd looked at the clock
# while it read T + 1000 or not: a frozen T + 2000 now could skip that unit
# and leave the request a fourth to wait for).
clock_at $((T + 1000))
wait_until 15 fetched "$slow"
wait "$slow" 2>/dev/null
expect "... once the clock runs, it completes (200)" "$(cat "$T_DIR/slow.code")" = 200
check "... with 600 snowflakes, strictly increasing" -L "$SNOWFLAKE" -n 600 \
    --sh "sort -c -u -n '$T_DIR/slow.body' && cat '$T_DIR/slow.body'"
expect "... the first in the first unit" "$(inspect_ms "$L1S" "$(head -n 1 "$T_DIR/slow.body")")" = "$T"
expect "... the last in the third unit or later" "$(inspect_ms "$L1S" "$(tail -n 1 "$T_DIR/slow.body")")" -ge $((T + 2000))
stop_server TERM
expect "exit 0 at the end" "$SRV_STATUS" = 0

# --- memcached: a get parked on a key resumes at that key --------------------

step_clock +0
# --seq-start zero: the count below is the unit's whole sequence.
start_server "${FAKETIME_ENV[@]}" --memcache-random --seq-start zero --state-dir "$T_DIR/smc"
T=$(now_ms)
freeze_clock "$T"
# 4095 of the frozen ms's 4096 sequence numbers (twitter, from 0): a's is
# the last, b must wait for the next ms.
http "memcached: a frozen clock: 4095 snowflakes of its ms over HTTP" -n 4095 -- '/v1/ids/snowflake?count=4095'
exec {mcfd}<>"/dev/tcp/127.0.0.1/$MC_PORT"
send "$mcfd" 'get a b c\r\n'
wait_until 15 bash -c "[ \"\$(curl -s '$BASE/metrics' | awk '\$1 == \"idmint_requests_parked\" { print \$2 }')\" = 1 ]"
expect "memcached: get a b c: parked on b (idmint_requests_parked 1)" "$(metric idmint_requests_parked)" = 1
timeout 2 cat <&"$mcfd" >"$T_DIR/part.out"
check "... a's value already went out, nothing after it" -O "VALUE a 0 19${NL}$SNOWFLAKE" \
    --sh "tr -d '\r' <'$T_DIR/part.out'"
check "memcached: ... other memcached connections are answered meanwhile (uuidv7)" -O "$UUID7" \
    -- memccat "--servers=127.0.0.1:$MC_PORT" uuidv7
step_clock +0
send "$mcfd" 'quit\r\n'
timeout 10 cat <&"$mcfd" >"$T_DIR/rest.out"
exec {mcfd}>&-
check "when the clock moves on, it resumes at b: b and c, then END (a not repeated)" \
    -O "VALUE b 0 19${NL}$SNOWFLAKE${NL}VALUE c 0 19${NL}$SNOWFLAKE${NL}END" --sh "tr -d '\r' <'$T_DIR/rest.out'"
ids=$(cat "$T_DIR/part.out" "$T_DIR/rest.out" | tr -d '\r' | grep -Ex "$SNOWFLAKE")
expect "... three distinct increasing snowflakes" "$(printf '%s\n' "$ids" | sort -u -n -c && printf '%s\n' "$ids" | wc -l)" = 3
stop_server
finish
