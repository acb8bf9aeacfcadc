# test_fair.sh - one client cannot stop the server for everyone: a
# connection that pipelines thousands of big requests and reads its replies
# gets one batch per loop turn, and /healthz, /metrics and the RESP port
# answer on other connections while it runs; its replies stay whole and in
# order.
# Every check is causal, not timed: twitter snowflakes come at most 4,096
# per millisecond, so 2,000 x NEXT snowflake 10000 (20 million IDs) take at
# least 4.9 s to mint; /healthz answered and idmint_ids_minted_total still
# below that total means /healthz was served while the pipeline ran. (A
# loop that runs one client's pipeline to its end answers /healthz only
# afterwards, with every ID minted.) The pipelines run with --reserve
# 60000: the time high-water mark then needs no write while they run, so
# the only thing that can give others a turn is the loop's fairness (a
# write of the mark completing would interrupt a greedy loop too, every
# half reserve). Waits are bounded only so that a server that blocks fails
# instead of hanging the test.
# Usage: bash tests/server/test_fair.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'

# minted FORMAT: idmint_ids_minted_total for FORMAT (empty if /metrics
# does not answer in 60 s).
minted() {
    curl -s -m 60 "$BASE/metrics" | awk -v k="idmint_ids_minted_total{format=\"$1\"}" '$1 == k { print $2 }'
}

# --- RESP: one connection pipelines 2,000 x NEXT snowflake 10000 and reads ----------

start_server --reserve 60000
N=2000
for _ in $(seq 1 $N); do printf 'NEXT snowflake 10000\r\n'; done >"$T_DIR/pipe.resp"
printf 'QUIT\r\n' >>"$T_DIR/pipe.resp"
exec {pfd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
# The reader counts the arrays as they come (grep reads far faster than
# snowflakes can be minted), and notes when the server has closed.
(
    grep -c '^\*10000' <&"$pfd" >"$T_DIR/pipe.count"
    touch "$T_DIR/pipe.done"
) &
reader=$!
track "$reader"
timeout 10 cat "$T_DIR/pipe.resp" 1>&"$pfd"
sleep 0.3
http "a client pipelining NEXT snowflake 10000 does not hold up /healthz on another connection" \
    -o ok -- /healthz -m 60
during=$(minted snowflake)
expect "... /healthz and /metrics were answered while the pipeline ran (snowflakes minted then: $during of $((N * 10000)))" \
    "${during:-0}" -lt $((N * 10000))
expect "... the pipelining client had not received all its replies yet" "$([ -e "$T_DIR/pipe.done" ] && echo done || echo running)" = running
check "... nor does it hold up the RESP port (another connection)" -L "$SNOWFLAKE" -n 3 \
    -- redis-cli -p "$RESP_PORT" NEXT snowflake 3
wait_until 120 test -e "$T_DIR/pipe.done"
expect "the pipelining client gets every reply, then the close after QUIT" "$(cat "$T_DIR/pipe.count")" = $N
exec {pfd}>&-
stop_server TERM
expect "exit 0 after the RESP pipeline" "$SRV_STATUS" = 0

# --- HTTP: one connection pipelines 1,000 x GET /v1/ids/snowflake?count=10000 --------

start_server --reserve 60000
N=1000
for i in $(seq 1 $N); do
    close=
    [ "$i" = $N ] && close='Connection: close\r\n'
    printf "GET /v1/ids/snowflake?count=10000 HTTP/1.1\r\nHost: t\r\n$close\r\n"
done >"$T_DIR/pipe.http"
rm -f "$T_DIR/pipe.done"
exec {pfd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
(
    grep -c '^HTTP/1.1 200 OK' <&"$pfd" >"$T_DIR/pipe.count"
    touch "$T_DIR/pipe.done"
) &
reader=$!
track "$reader"
timeout 10 cat "$T_DIR/pipe.http" 1>&"$pfd" &
track $!
sleep 0.3
http "a client pipelining HTTP count=10000 requests does not hold up /healthz" -o ok -- /healthz -m 60
during=$(minted snowflake)
expect "... /healthz and /metrics were answered while the pipeline ran (snowflakes minted then: $during of $((N * 10000)))" \
    "${during:-0}" -lt $((N * 10000))
expect "... the pipelining client had not received all its replies yet" "$([ -e "$T_DIR/pipe.done" ] && echo done || echo running)" = running
wait_until 120 test -e "$T_DIR/pipe.done"
expect "the pipelining HTTP client gets every reply" "$(cat "$T_DIR/pipe.count")" = $N
exec {pfd}>&-
stop_server TERM
expect "exit 0 after the HTTP pipeline" "$SRV_STATUS" = 0

# --- replies stay whole and in order across the turns ----------------------------------

start_server
# 40 x (NEXT snowflake 10000, ECHO i), then QUIT: every reply comes back in
# request order, the snowflakes strictly increasing across the replies.
for i in $(seq 1 40); do printf 'NEXT snowflake 10000\r\nECHO e%d\r\n' "$i"; done >"$T_DIR/order.resp"
printf 'QUIT\r\n' >>"$T_DIR/order.resp"
raw "$RESP_PORT" 60 <"$T_DIR/order.resp" | tr -d '\r' >"$T_DIR/order.out"
expect "in order: 40 arrays of 10000 and 40 echoes, interleaved as asked, then +OK" \
    "$(grep -vE "^(\\\$[0-9]+|$SNOWFLAKE)\$" "$T_DIR/order.out" | paste -sd ' ')" \
    = "$(for i in $(seq 1 40); do printf '*10000 e%d ' "$i"; done)+OK"
grep -E "^$SNOWFLAKE\$" "$T_DIR/order.out" >"$T_DIR/order.ids"
expect "in order: 400,000 snowflakes" "$(wc -l <"$T_DIR/order.ids")" = 400000
check "in order: the snowflakes strictly increase across replies" -- sort -n -u -c "$T_DIR/order.ids"
# Many clients at once, each checked by loadclient (whole replies, IDs
# unique and increasing per connection), with /healthz answered meanwhile.
"$LOADCLIENT" --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 10000' --cmd 'NEXT ulid 5000' \
    --conns 4 --pipeline 64 --batches 3 --duration-ms 60000 --ids "$T_DIR/many.ids" >"$T_DIR/many.out" 2>"$T_DIR/many.err" &
load=$!
track $load
sleep 0.3
http "several pipelining clients: /healthz still answers" -o ok -- /healthz -m 60
wait $load
expect "several pipelining clients: every reply whole and valid" "$?:$(cat "$T_DIR/many.err")" = '0:'
expect "several pipelining clients: every request answered" "$(kv "$T_DIR/many.out" s200)" = $((4 * 64 * 3))
stop_server TERM
expect "exit 0 after the order checks" "$SRV_STATUS" = 0
# --- a big reply is minted in slices: others are answered in the middle of it ---------

start_server
# One connection pipelines N x NEXT uuidv7 10000 (430 KB a reply) and reads
# them; meanwhile another asks for one UUIDv7 at a time. Both come from the
# server's one generator, strictly increasing, so a probe's ID tells where
# in the flood's minting it was served: strictly between the first and
# last ID of one flood reply means it was answered while that reply was
# being minted. A loop that renders a whole reply in one step can only
# answer it between replies.
N=500
for _ in $(seq 1 $N); do printf 'NEXT uuidv7 10000\r\n'; done >"$T_DIR/slices.resp"
printf 'QUIT\r\n' >>"$T_DIR/slices.resp"
rm -f "$T_DIR/slices.done"
exec {pfd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
# The reader only copies the replies to a file (each reply's first and
# last ID are found afterwards): a reader parsing as it went (tr | awk,
# 5 million lines) fell behind the server on a loaded machine, which then
# waited for it between replies, and the probes were all answered in those
# waits (0 of 10 in one CI run).
(
    cat <&"$pfd" >"$T_DIR/slices.raw"
    touch "$T_DIR/slices.done"
) &
track $!
timeout 10 cat "$T_DIR/slices.resp" 1>&"$pfd" &
track $!
sleep 0.3
# The probes on one connection of their own, one at a time.
exec {qfd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
for _ in $(seq 1 10); do
    printf 'NEXT uuidv7\r\n' >&"$qfd"
    IFS=$'\r' read -r -t 60 _ <&"$qfd"
    IFS=$'\r' read -r -t 60 id <&"$qfd"
    echo "$id"
done >"$T_DIR/slices.probes"
exec {qfd}>&-
expect "... the pipelining client had not received all its replies when the probes were answered" \
    "$([ -e "$T_DIR/slices.done" ] && echo done || echo running)" = running
wait_until 120 test -e "$T_DIR/slices.done"
# Each reply's first and last ID ("FIRST LAST" a line).
tr -d '\r' <"$T_DIR/slices.raw" | awk '/^\*/ { if (n) print first, last; n = 0; next }
    /^\$/ { next }
    /^\+OK$/ { next }
    { if (!n) first = $0; last = $0; n++ }
    END { if (n) print first, last }' >"$T_DIR/slices.ranges"
rm -f "$T_DIR/slices.raw"
expect "the pipelining client gets every reply" "$(wc -l <"$T_DIR/slices.ranges")" = $N
expect "the probes got one UUIDv7 each" "$(grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-7' "$T_DIR/slices.probes")" = 10
# Probes answered strictly inside a flood reply (string order is the
# UUIDs' order: lower-case hex of one length).
inside=$(awk 'NR == FNR { lo[NR] = $1; hi[NR] = $2; n = NR; next }
    { for (i = 1; i <= n; i++) if (lo[i] < $1 && $1 < hi[i]) { k++; break } }
    END { print k + 0 }' "$T_DIR/slices.ranges" "$T_DIR/slices.probes")
expect "a reply of 10000 UUIDv7s is minted in slices: probes on another connection are answered between two of its IDs ($inside of 10)" \
    "$inside" -ge 1
exec {pfd}>&-
stop_server TERM
expect "exit 0 after the sliced replies" "$SRV_STATUS" = 0

finish
