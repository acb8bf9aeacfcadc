# test_signals.sh - SIGTERM drains under load (every answer received is
# whole and valid, no request the server read goes unanswered, exit 0
# within 10 s), idle and half-received connections at drain time, SIGINT,
# and SIGHUP reopening the log file.
# Usage: bash tests/server/test_signals.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'

# --- SIGTERM under load --------------------------------------------------------------

start_server
# Each connection sends a batch of 16 pipelined requests in one write and
# the next batch once all 16 are answered, so the server reads a batch
# whole or not at all. When the server closes, a batch must have been
# answered in full, not at all (not read), or (HTTP) up to a reply with
# Connection: close, after which RFC 9112 section 9.6 forbids processing
# more; loadclient counts any other batch cut short as "cut".
"$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=5' --path '/v1/ids/ulid?count=3' \
    --path /api/snowflake/get/k --path '/v1/ids/uuidv7?count=2' \
    --conns 16 --pipeline 16 --duration-ms 15000 --ids "$T_DIR/http.ids" >"$T_DIR/http.out" 2>"$T_DIR/http.err" &
http_client=$!
track $http_client
"$LOADCLIENT" --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 5' --cmd 'NEXT ulid' \
    --conns 8 --pipeline 16 --duration-ms 15000 --ids "$T_DIR/resp.ids" >"$T_DIR/resp.out" 2>"$T_DIR/resp.err" &
resp_client=$!
track $resp_client
sleep 1
served_before=$(metric 'idmint_requests_total{route="/v1/ids",status="2xx"}')
stop_server TERM
expect "SIGTERM drains and exits 0" "$SRV_STATUS" = 0
expect "SIGTERM: the drain ends within 10 seconds (took $SRV_STOP_MS ms)" "$SRV_STOP_MS" -lt 10000
expect "the load was running when SIGTERM came" "$served_before" -gt 100
wait $http_client
expect "HTTP clients: every answer received is whole and valid (no malformed, truncated or invalid reply; IDs unique, increasing per connection)" \
    "$?:$(cat "$T_DIR/http.err")" = '0:'
wait $resp_client
expect "RESP clients: every answer received is whole and valid" "$?:$(cat "$T_DIR/resp.err")" = '0:'
for side in http resp; do
    out=$T_DIR/$side.out
    expect "$side: answers before the drain" "$(kv "$out" s200)" -gt 100
    expect "$side: only successful answers" "$(kv "$out" s200)" = "$(($(kv "$out" s200) + $(kv "$out" s4xx) + $(kv "$out" s503) + $(kv "$out" sother)))"
    expect "$side: the server closed every connection" "$(kv "$out" eof)" = "$(if [ $side = http ]; then echo 16; else echo 8; fi)"
    expect "$side: no accepted request is dropped (no batch the server read is cut short unannounced)" \
        "$(kv "$out" cut)" = 0
done
check "SIGTERM is logged, with a level, one line per event" -O '.* idmintd info: received SIGTERM: draining [0-9]+ connection\(s\)' \
    --sh "grep 'received SIGTERM' '$SRV_LOG'"
check "the log ends with the stop" -O '.* idmintd info: stopped' --sh "tail -n 1 '$SRV_LOG'"

# --- idle and half-received connections at drain time -----------------------------------

start_server
exec {idle}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
send "$idle" 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
read -r -t 5 _ <&"$idle"
exec {half}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
send "$half" 'GET /v1/ids/ulid HTTP/1.1\r\nHost:'
sleep 0.2
kill -TERM "$SRV_PID"
expect "SIGTERM: idle connections close at once" "$(timeout 2 cat <&"$idle" | tr -d '\r' | grep -c '^HTTP/')" = 0
exec {idle}>&-
check "SIGTERM: the listeners close (new clients are refused)" -s 7 -- curl -s -m 2 "$BASE/healthz"
send "$half" ' t\r\n\r\n'
drained=$(timeout 5 cat <&"$half" | tr -d '\r')
expect "SIGTERM: a request half-received when the drain began is answered" "$(head -n 1 <<<"$drained")" = 'HTTP/1.1 200 OK'
expect "SIGTERM: ... with Connection: close" "$(grep -ci '^Connection: close$' <<<"$drained")" = 1
expect "SIGTERM: ... and a ULID" "$(tail -n 1 <<<"$drained")" =~ "^$ULID\$"
exec {half}>&-
stop_server TERM
expect "SIGTERM with idle and half-received connections: exit 0" "$SRV_STATUS" = 0
expect "... within 2 s (took $SRV_STOP_MS ms)" "$SRV_STOP_MS" -lt 2000

# A request half-received when the drain begins, completed by a write that
# carries two more: the server reads all three, so it answers all three
# ("answer the requests already received (with Connection: close)": the
# close goes on the last, RFC 9112 section 9.6).
start_server
exec {half}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
exec {rhalf}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
send "$half" 'GET /v1/ids/ulid HTTP/1.1\r\nHost:'
send "$rhalf" '*2\r\n$4\r\nNEXT\r\n$4\r\nul'
sleep 0.2
kill -TERM "$SRV_PID"
sleep 0.2
send "$half" ' t\r\n\r\nGET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\nGET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\n'
send "$rhalf" 'id\r\n*2\r\n$4\r\nNEXT\r\n$4\r\nulid\r\nPING\r\n'
drained=$(timeout 5 cat <&"$half" | tr -d '\r')
rdrained=$(timeout 5 cat <&"$rhalf" | tr -d '\r' | paste -sd ' ')
expect "drain: three requests read together are all answered (HTTP)" "$(grep -c '^HTTP/1.1 200 OK$' <<<"$drained")" = 3
expect "drain: ... the last with Connection: close" \
    "$(grep -iE '^(HTTP/1.1|Connection:)' <<<"$drained" | paste -sd ' ')" \
    = 'HTTP/1.1 200 OK HTTP/1.1 200 OK HTTP/1.1 200 OK Connection: close'
expect "drain: three commands read together are all answered (RESP)" "$rdrained" =~ "^\\\$26 $ULID \\\$26 $ULID \\+PONG\$"
exec {half}>&-
exec {rhalf}>&-
stop_server TERM
expect "exit 0 after draining pipelined requests" "$SRV_STATUS" = 0

# --- SIGTERM while clients have replies queued and do not read -------------------------

# One RESP and one HTTP connection pipeline far more than the sockets hold
# and never read: the drain cannot finish their replies, so at its deadline
# (10 s) it closes them, and the process still exits 0 having shrunk the
# mark to the time last used.
start_server
for _ in $(seq 1 600); do printf 'NEXT uuidv7 10000\r\n'; done >"$T_DIR/big.resp"
for _ in $(seq 1 300); do printf 'GET /v1/ids/uuidv7?count=10000 HTTP/1.1\r\nHost: t\r\n\r\n'; done >"$T_DIR/big.http"
exec {stuck_r}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
timeout 5 cat "$T_DIR/big.resp" 1>&"$stuck_r" 2>/dev/null
exec {stuck_h}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
timeout 5 cat "$T_DIR/big.http" 1>&"$stuck_h" 2>/dev/null
wait_until 10 test "$(metric idmint_connections_open)" = 3
mark_before=$(hwm_mark "$T_DIR/state")
stop_server TERM
expect "SIGTERM with unread replies queued: exit 0 (no abort)" "$SRV_STATUS" = 0
check "... the drain's deadline closes them" -O '.*drain timed out; closing the remaining 2 connection\(s\)' \
    --sh "grep 'drain timed out' '$SRV_LOG'"
check "... and the mark is still written (shrunk to the time last used)" \
    -O '.*time high-water mark set to the last time used' --sh "grep 'high-water mark set' '$SRV_LOG'"
expect "... the mark on disk is below the reserve written at start" "$(hwm_mark "$T_DIR/state")" -lt "$mark_before"
check "... and the log ends with the stop" -O '.* idmintd info: stopped' --sh "tail -n 1 '$SRV_LOG'"
exec {stuck_r}>&-
exec {stuck_h}>&-

# --- requests sent while idmintd is stopped longer than the idle timeout ---------------

# SIGSTOP for 1.5 s with 500 ms idle timeouts on both ports; the clients
# send meanwhile. After SIGCONT, libuv finds the idle timers due before it
# has read anything (epoll_wait returns EINTR after SIGCONT): the requests
# must be answered, not the connections closed.
start_server --idle-timeout 500 --resp-idle-timeout 500
exec {h}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
send "$h" 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
read -r -t 5 line <&"$h"
expect "before the stop: HTTP served" "${line%$'\r'}" = 'HTTP/1.1 200 OK'
exec {r}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
send "$r" 'PING\r\n'
read -r -t 5 line <&"$r"
expect "before the stop: RESP served" "${line%$'\r'}" = '+PONG'
exec {h2}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
exec {r2}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
# All four accepted (and their idle timers running) before the stop.
wait_until 10 test "$(metric idmint_connections_open)" = 5
kill -STOP "$SRV_PID"
sleep 1.5
send "$h2" 'GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
send "$r2" 'NEXT ulid\r\nQUIT\r\n'
sleep 0.2
kill -CONT "$SRV_PID"
got=$(timeout 5 cat <&"$h2" | tr -d '\r')
expect "a request sent during a stop longer than --idle-timeout is answered (HTTP)" "$(head -n 1 <<<"$got")" = 'HTTP/1.1 200 OK'
expect "... with its ULID" "$(tail -n 1 <<<"$got")" =~ "^$ULID\$"
got=$(timeout 5 cat <&"$r2" | tr -d '\r' | paste -sd ' ')
expect "a request sent during a stop longer than --resp-idle-timeout is answered (RESP)" "$got" =~ "^\\\$26 $ULID \\+OK\$"
exec {h2}>&-
exec {r2}>&-
check "connections that got nothing meanwhile still close when idle after the stop (HTTP)" \
    --sh "timeout 5 cat <&$h >/dev/null"
check "... (RESP)" --sh "timeout 5 cat <&$r >/dev/null"
exec {h}>&-
exec {r}>&-
stop_server TERM
expect "exit 0 after SIGSTOP and SIGCONT" "$SRV_STATUS" = 0

# --- SIGINT --------------------------------------------------------------------------------

start_server
curl -s -o /dev/null "$BASE/v1/ids/snowflake"
stop_server INT
expect "SIGINT drains like SIGTERM: exit 0" "$SRV_STATUS" = 0
check "SIGINT is logged" -O '.*received SIGINT: draining.*' --sh "grep 'received SIGINT' '$SRV_LOG'"

# --- SIGHUP reopens the log file ------------------------------------------------------

log=$T_DIR/logs/idmintd.log
mkdir -p "$T_DIR/logs"
start_server --log-file "$log"
expect "--log-file FILE: the log goes to FILE" "$(grep -c 'ready (pid' "$log")" = 1
expect "--log-file FILE: ... not to standard error" "$(cat "$SRV_LOG")" = ''
mv "$log" "$log.1"
kill -HUP "$SRV_PID"
n=0
while [ ! -s "$log" ] && [ $n -lt 100 ]; do
    sleep 0.05
    n=$((n + 1))
done
check "SIGHUP reopens the log file: the new file gets new lines" -O '.* idmintd info: log file reopened' -- cat "$log"
http "SIGHUP does not stop the server" -L "$ULID" -n 1 -- /v1/ids/ulid
stop_server TERM
expect "exit 0 after SIGHUP and SIGTERM" "$SRV_STATUS" = 0
check "after SIGHUP, later events go to the new file" -O '.*received SIGTERM.*' --sh "grep 'received SIGTERM' '$log'"
expect "after SIGHUP, the renamed file gets nothing more" "$(grep -c 'SIGTERM\|reopened' "$log.1")" = 0
check "log lines: a UTC timestamp, idmintd, a level, a message" \
    -L '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z idmintd (error|warn|info|debug): .+' \
    --sh "cat '$log.1' '$log'"
# A supervisor that insists: SIGTERM sent again and again, from the drain
# to the very end of the exit. The process must keep the exit status of a
# drain that ended well (0), never die of the signal (143), also in its
# last steps, after the loop's handles are closed.
for round in $(seq 10); do
    start_server
    ( while kill -TERM "$SRV_PID" 2>/dev/null; do :; done ) &
    insist=$!
    wait_server 12
    wait "$insist" 2>/dev/null
    expect "SIGTERM sent again and again until the process is gone (round $round): exit 0" "$SRV_STATUS" = 0
done

finish
