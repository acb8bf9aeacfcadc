# test_deadlines.sh - clients that hold a connection without finishing a
# request: an error reply before the close reaches a client that is still
# sending (lingering close), a request head, a skipped body or a RESP frame
# must be complete within --header-timeout of its first byte however
# slowly its bytes trickle in (slow-loris), a keep-alive connection quiet
# between requests is left to --idle-timeout, and slow-loris connections
# on the HTTP port cannot lock out the RESP port, nor the HTTP port for
# longer than the header timeout.
# The deadlines are checked against a much longer --idle-timeout (60 s):
# a connection closed within the 20 s the test waits was closed by the
# header timeout. Nothing is timed more closely than that.
# Usage: bash tests/server/test_deadlines.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'

# --- lingering close: the error reply reaches a client still sending ---------------------

# linger N PORT REPLY_ERE ATTACK_ARGS...: N tries, one after the other, of a
# client that writes a whole oversized request and only then reads; prints
# how many wrote it all, got a reply whose first line matches REPLY_ERE,
# and then the server's close (an end of file, no reset), and how many
# tries saw a reset instead (of their writes or of their reads).
linger() {
    local n=$1 port=$2 want=$3 good=0 resets=0 out=$T_DIR/linger.out
    shift 3
    for _ in $(seq 1 "$n"); do
        "$ATTACK" "127.0.0.1:$port" "$@" --read after --hold-ms 10000 >"$out" 2>&1
        if [ "$(kv "$out" write_errors):$(kv "$out" resets)" != 0:0 ]; then
            resets=$((resets + 1))
        elif [ "$(kv "$out" full):$(kv "$out" closed)" = 1:1 ] && grep -qE "^reply 1 ($want)\$" "$out"; then
            good=$((good + 1))
        fi
    done
    echo "$good $resets"
}

# docs/idmintd.md: "Lingering close: a connection closed after a reply (an
# error such as 414, 431 or 408, ...) shuts down its write side once the
# reply is written and reads and drops whatever the client still sends
# until the client closes, for at most 2 s".
start_server
read -r good resets < <(linger 30 "$HTTP_PORT" 'HTTP/1.1 (414 URI Too Long|431 Request Header Fields Too Large)' \
    --send 'GET /' --fill a 1000000 --send ' HTTP/1.1\r\nHost: t\r\n\r\n')
expect "lingering close: the reply reaches a client still sending: a 1 MB request line gets its 414 (or 431) and a close every time, not a TCP reset (30 tries: $good answered, $resets reset)" \
    "$good" = 30
read -r good resets < <(linger 10 "$HTTP_PORT" 'HTTP/1.1 431 Request Header Fields Too Large' \
    --send 'GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ' --fill a 1000000 --send '\r\n\r\n')
expect "lingering close: a 1 MB header gets its 431 every time (10 tries: $good answered, $resets reset)" "$good" = 10
read -r good resets < <(linger 10 "$RESP_PORT" '-ERR Protocol error: .*' \
    --send '*2\r\n$4\r\nECHO\r\n$1000000\r\n' --fill a 1000000 --send '\r\n')
expect "lingering close: a 1 MB RESP argument gets its -ERR Protocol error every time (10 tries: $good answered, $resets reset)" \
    "$good" = 10
http "the server serves on after the oversized requests" -L "$ULID" -n 5 -- '/v1/ids/ulid?count=5'
stop_server TERM
expect "exits 0 after the lingering closes" "$SRV_STATUS" = 0

# --- the header timeout ------------------------------------------------------------------

# trickle PORT TEXT SECONDS: a fresh connection sends TEXT one byte a
# second (slow-loris) while the reply is read; prints the reply with its
# CRs removed, then "closed" (the server closed the connection) or "open"
# (it had not after SECONDS).
trickle() {
    local fd pid reply rc
    exec {fd}<>"/dev/tcp/127.0.0.1/$1"
    (
        for ((i = 0; i < ${#2}; i++)); do
            printf '%s' "${2:i:1}" 1>&"$fd" 2>/dev/null || exit 0
            sleep 1
        done
    ) &
    pid=$!
    reply=$(timeout "$3" cat <&"$fd" 2>/dev/null | tr -d '\r'; exit "${PIPESTATUS[0]}")
    rc=$?
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exec {fd}>&-
    printf '%s\n' "$reply"
    [ $rc = 124 ] && echo open || echo closed
}
elapsed_s() {
    echo $((SECONDS - $1))
}

# idmintd(8), --header-timeout: "A request must be complete within this
# long of its first byte (default 10000; 0 never): an HTTP head that is not
# gets 408 Request Timeout and the connection closes, however slowly its
# bytes keep coming (the idle timeout restarts on every read, this one does
# not); a request body that idmintd skips must arrive within it too, else
# the connection closes; a half-sent Redis command gets -ERR Protocol
# error: request incomplete after MS ms and the connection closes."
start_server --header-timeout 2000 --idle-timeout 60000
t0=$SECONDS
out=$(trickle "$HTTP_PORT" $'GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n' 20)
expect "--header-timeout 2000: an HTTP head not complete within it gets 408 Request Timeout, however slowly its bytes keep coming (one a second; after $(elapsed_s $t0) s, --idle-timeout 60000)" \
    "$(head -n 1 <<<"$out")" = 'HTTP/1.1 408 Request Timeout'
expect "... with Connection: close" "$(grep -ci '^connection: close$' <<<"$out")" = 1
expect "... and the connection closes" "$(tail -n 1 <<<"$out")" = closed
t0=$SECONDS
out=$(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 999999999999\r\n\r\n' | exchange "$HTTP_PORT" 20)
expect "a request body that idmintd skips must arrive within it too, else the connection closes (Content-Length: 999999999999, no body; closed after $(elapsed_s $t0) s; got $(head -n 1 <<<"$out"))" \
    "$(tail -n 1 <<<"$out")" = closed
t0=$SECONDS
out=$(printf '*2\r\n$4\r\nNEXT\r\n$4\r\nul' | exchange "$RESP_PORT" 20)
expect "a half-sent Redis command gets -ERR Protocol error: request incomplete after MS ms and the connection closes (after $(elapsed_s $t0) s)" \
    "$(paste -sd ' ' <<<"$out")" = '-ERR Protocol error: request incomplete after 2000 ms closed'
t0=$SECONDS
out=$(trickle "$RESP_PORT" $'*3\r\n$4\r\nNEXT\r\n$6\r\ntypeid\r\n$30\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n' 20)
expect "... however slowly its bytes keep coming (one a second; after $(elapsed_s $t0) s)" \
    "$(paste -sd ' ' <<<"$out")" = '-ERR Protocol error: request incomplete after 2000 ms closed'

# healthz_on FD: GET /healthz on the open connection FD; prints the status
# line once the reply's body ("ok") has been read.
healthz_on() {
    local line status=''
    send "$1" 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
    while read -r -t 5 line <&"$1"; do
        line=${line%$'\r'}
        [ -z "$status" ] && status=$line
        [ "$line" = ok ] && break
    done
    echo "$status"
}
exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
first=$(healthz_on "$fd")
sleep 3
expect "complete within this long of its first byte: a keep-alive connection quiet between requests (3 s, past --header-timeout 2000) is left to --idle-timeout, and its next request is served" \
    "$first $(healthz_on "$fd")" = 'HTTP/1.1 200 OK HTTP/1.1 200 OK'
exec {fd}>&-
exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
sleep 3
expect "... of its first byte: a connection quiet for 3 s before its first request is served" \
    "$(healthz_on "$fd")" = 'HTTP/1.1 200 OK'
exec {fd}>&-
expect "a head completed within the deadline is served (sent in two parts 0.5 s apart)" \
    "$({ printf 'GET /healthz HTTP/1.1\r\n'; sleep 0.5; printf 'Host: t\r\nConnection: close\r\n\r\n'; } | exchange "$HTTP_PORT" 10 stream | head -n 1)" \
    = 'HTTP/1.1 200 OK'
exec {fd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
send "$fd" 'PING\r\n'
read -r -t 5 line <&"$fd"
sleep 3
send "$fd" 'PING\r\n'
read -r -t 5 line2 <&"$fd"
expect "a RESP connection quiet for 3 s between commands is served (no frame was half-sent)" \
    "${line%$'\r'} ${line2%$'\r'}" = '+PONG +PONG'
exec {fd}>&-
expect "the timeouts are counted in idmint_request_timeouts_total (HTTP: the slow-loris head and the body)" \
    "$(metric 'idmint_request_timeouts_total{protocol="http"}')" -ge 2
expect "... (RESP: the two half-sent commands)" "$(metric 'idmint_request_timeouts_total{protocol="resp"}')" -ge 2
stop_server TERM
expect "exits 0 after the header timeouts" "$SRV_STATUS" = 0

# --- slow-loris against --max-connections ------------------------------------------------

# idmintd(8), --max-connections: "the HTTP and the Redis port count their
# own, so that a flood on one does not lock out the other. Further clients
# get an error reply (HTTP 503, ...)". 50 slow-loris HTTP connections fill
# the HTTP port's 50 places; each sends one byte a second of a head that
# would take minutes, until --header-timeout closes it.
start_server --max-connections 50 --header-timeout 4000 --idle-timeout 60000
out=$T_DIR/loris.out
"$ATTACK" "127.0.0.1:$HTTP_PORT" --conns 50 --send 'GET /healthz HTTP/1.1\r\nHost: t\r\n' \
    --fill 'X-Slow: 1\r\n' 400 --trickle-ms 1000 --read always --hold-ms 30000 \
    --expect 'HTTP/1.1 408 Request Timeout' >"$out" 2>&1 &
attack=$!
track "$attack"
# held: idmintd has accepted the 50 (INFO counts HTTP and RESP clients,
# this one included).
held() {
    [ "$(redis-cli -p "$RESP_PORT" INFO | tr -d '\r' | sed -n 's/^connected_clients://p')" -ge 51 ]
}
wait_until 10 held
check "--max-connections: a flood on one port does not lock out the other: 50 slow-loris HTTP connections (the limit) leave the RESP port serving" \
    -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
http "... Further clients get an error reply: HTTP's 51st gets its 503" -s 503 -- /v1/ids/ulid
http "... while /healthz is answered all the same (a probe over the limit)" -o ok -- /healthz
served() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/ids/ulid")" = 200 ]
}
t0=$SECONDS
wait_until 20 served
expect "an HTTP head that is not complete within --header-timeout gets 408 and the connection closes: the slow-loris connections' places free up (HTTP served again after $(elapsed_s $t0) s, --idle-timeout 60000)" \
    "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/ids/ulid")" = 200
wait "$attack"
echo "slow-loris: $(grep -E '^(summary|reply)' "$out" | paste -sd ';')"
expect "... each of the 50 got its 408" "$(kv "$out" matched)" = 50
expect "... and was closed" "$(kv "$out" closed)" = 50
stop_server TERM
expect "exits 0 after the slow-loris connections" "$SRV_STATUS" = 0
finish
