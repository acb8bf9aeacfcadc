# test_limits.sh - bad input and limits: counts, formats and prefixes out of
# range (400 with a JSON error), oversized request lines (414) and headers
# (431), malformed requests (400), too many connections (503 / RESP error,
# counted per port, logged and in /metrics), the open-file limit checked
# against --max-connections at start, idle and slow clients, malformed RESP, and random bytes at both ports,
# after which normal requests are still served in bounded memory.
# Usage: bash tests/server/test_limits.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

JSON='Content-Type: application/json'
JSON_ERROR='\{"error": "[^"]+"\}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'

# --- counts, formats, prefixes ----------------------------------------------------

start_server --max-count 100 --max-connections 5

http "--max-count N: the most IDs one request may ask for (100 here)" -n 100 -- '/v1/ids/ulid?count=100'
for c in 101 0 abc -1 1e3 '' '%205' 5x 0x10 99999999999999999999999 '%00'; do
    http "Bad requests (count out of range) get 400 with a JSON body {\"error\": \"...\"} (count=$c)" \
        -s 400 -h "$JSON" -O "$JSON_ERROR" -- "/v1/ids/ulid?count=$c"
done
http "the error names the limit" -s 400 -O '\{"error": "count must be from 1 to 100"\}' \
    -- '/v1/ids/snowflake?count=101'
for f in uuidv9 UUIDV7 snowflakes uuid 'ulid%00' '%2Fulid'; do
    http "Bad requests (unknown format) get 400 with a JSON body ($f)" \
        -s 400 -h "$JSON" -O '\{"error": "unknown format[^"]*"\}' -- "/v1/ids/$f"
done
for p in User 'a1' _user user_ "$(printf 'a%.0s' $(seq 1 64))" '%00' 'us%zzer' 'ü'; do
    http "Bad requests (a bad prefix) get 400 with a JSON body (typeid, prefix=$p)" \
        -s 400 -h "$JSON" -O "$JSON_ERROR" -- "/v1/ids/typeid?prefix=$p"
done
http "a prefix of 63 characters is the longest" -L "$(printf 'a%.0s' $(seq 1 63))_[0-9a-z]{26}" -n 1 \
    -- "/v1/ids/typeid?prefix=$(printf 'a%.0s' $(seq 1 63))"
http "typeid needs a prefix" -s 400 -O '\{"error": "typeid needs a prefix[^"]*"\}' -- /v1/ids/typeid
for f in uuidv7 snowflake ulid; do
    http "a prefix applies only to typeid and token ($f)" \
        -s 400 -O '\{"error": "prefix applies only to typeid and token[^"]*"\}' -- "/v1/ids/$f?prefix=user"
done
http "the connection stays usable after a 400" -L "$ULID" -n 1 -- /v1/ids/ulid

# --- oversized and malformed requests ------------------------------------------------

# answer [stream]: sends stdin (see raw) on a fresh connection and prints
# the status line and whether the server closed ("closed" or "open" after
# 5 s); the body goes to $T_DIR/last_body.
answer() {
    local got rc
    raw "$HTTP_PORT" 5 "${1:-}" >"$T_DIR/reply"
    rc=$?
    got=$(tr -d '\r' <"$T_DIR/reply")
    printf '%s %s\n' "$(head -n 1 <<<"$got")" "$([ $rc = 0 ] && echo closed || echo open)"
    sed -n '/^$/,$p' <<<"$got" | sed 1d >"$T_DIR/last_body"
}
long() {
    head -c "$1" /dev/zero | tr '\0' "${2:-a}"
}

# "/v1/ids/ulid?" is 13 bytes; the padding is empty query pairs ("&&&"),
# which are skipped (an unknown parameter would be a 400).
expect "a request-target of 8192 bytes (the limit) is served" \
    "$(answer < <(printf 'GET /v1/ids/ulid?%s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' "$(long $((8192 - 13)) '&')"))" \
    = 'HTTP/1.1 200 OK closed'
expect "Oversized request lines (414) are answered and the connection closed" \
    "$(answer < <(printf 'GET /v1/ids/ulid?%s HTTP/1.1\r\nHost: t\r\n\r\n' "$(long $((8193 - 13)) '&')"))" = 'HTTP/1.1 414 URI Too Long closed'
expect "414 comes with a JSON error body" "$(cat "$T_DIR/last_body")" =~ "^$JSON_ERROR\$"
expect "Oversized request lines (414): a 100 KB target" \
    "$(answer < <(printf 'GET /%s HTTP/1.1\r\nHost: t\r\n\r\n' "$(long 100000)"))" = 'HTTP/1.1 414 URI Too Long closed'
expect "Oversized request lines (414): a target sent in two parts, the second without a line feed" \
    "$(answer stream < <(printf 'GET /%s' "$(long 5000)"; sleep 0.3; long 5000; sleep 0.3))" = 'HTTP/1.1 414 URI Too Long closed'
expect "Oversized headers (431) are answered and the connection closed (one 17 KB header)" \
    "$(answer < <(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: %s\r\n\r\n' "$(long 17000)"))" \
    = 'HTTP/1.1 431 Request Header Fields Too Large closed'
expect "Oversized headers (431): a head that never ends" \
    "$(answer < <(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\n'; for i in $(seq 1 400); do printf 'X-H: %s\r\n' "$(long 60)"; done))" \
    = 'HTTP/1.1 431 Request Header Fields Too Large closed'
expect "Oversized headers (431): more header fields than the limit" \
    "$(answer < <(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\n'; for i in $(seq 1 40); do printf 'X-H%d: 1\r\n' "$i"; done; printf '\r\n'))" \
    = 'HTTP/1.1 431 Request Header Fields Too Large closed'
expect "a head just under the limit is served" \
    "$(answer < <(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\nX-Big: %s\r\n\r\n' "$(long 15000)"))" \
    = 'HTTP/1.1 200 OK closed'
for bad in 'GET  /healthz HTTP/1.1' 'GET /healthz  HTTP/1.1' 'GET /healthz' 'GET /healthz HTTP/1.x' \
    'HELLO' 'GET /healthz HTTP/1.1 extra' 'G(T /healthz HTTP/1.1' 'GET healthz\x01 HTTP/1.1' \
    'GET /healthz HTTP/1.1\r\nHost: t\r\nBad Header: 1' 'GET /healthz HTTP/1.1\r\nHost: t\r\n folded: 1' \
    'GET /healthz HTTP/1.1\rHost: t' 'GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: -1' \
    'GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1, 2' 'GET /healthz HTTP/1.1\r\nX: 1'; do
    expect "malformed requests (400) are answered and the connection closed: $bad" \
        "$(answer < <(printf "$bad\r\n\r\n"))" = 'HTTP/1.1 400 Bad Request closed'
    expect "400 comes with a JSON error body: $bad" "$(cat "$T_DIR/last_body")" =~ "^$JSON_ERROR\$"
done
expect "HTTP/2.0 gets 505 and the connection closed" \
    "$(answer < <(printf 'GET /healthz HTTP/2.0\r\nHost: t\r\n\r\n'))" = 'HTTP/1.1 505 HTTP Version Not Supported closed'
expect "a chunked request body gets 501 and the connection closed" \
    "$(answer < <(printf 'POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))" \
    = 'HTTP/1.1 501 Not Implemented closed'
expect "a malformed request after a good one on the same connection: 200, then 400 and close" \
    "$(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET  / HTTP/1.1\r\n\r\n' | raw "$HTTP_PORT" 5 | tr -d '\r' | grep '^HTTP' | paste -sd ' ')" \
    = 'HTTP/1.1 200 OK HTTP/1.1 400 Bad Request'
http "the server keeps serving after malformed requests" -L "$ULID" -n 1 -- /v1/ids/ulid

# --- malformed RESP ---------------------------------------------------------------

# resp_answer [stream]: sends stdin to the RESP port; prints the reply and
# "closed" or "open".
resp_answer() {
    local got rc
    raw "$RESP_PORT" 5 "${1:-}" >"$T_DIR/reply"
    rc=$?
    got=$(tr -d '\r' <"$T_DIR/reply")
    printf '%s %s\n' "$got" "$([ $rc = 0 ] && echo closed || echo open)"
}
for bad in '*abc\r\n' '*-5x\r\n' '*1\r\n$-5\r\n' '*1\r\nNEXT\r\n' '*1\r\n$4\r\nNEXTxx\r\n' '*2\r\n$4\r\nNEXT\r\n$99999999999\r\n' \
    '*1\r\n$+4\r\nPING\r\n' '*01\r\n$4\r\nPING\r\n' '*99999\r\n'; do
    expect "Malformed frames get a -ERR Protocol error reply and the connection closes ($bad)" \
        "$(printf "$bad" | resp_answer)" =~ '^-ERR Protocol error[^
]* closed$'
done
expect "malformed RESP: a 100 KB inline command" \
    "$(long 100000 | resp_answer)" =~ '^-ERR Protocol error[^
]* closed$'
expect "malformed RESP: a bulk argument not followed by CRLF, sent in two parts" \
    "$({ printf '*1\r\n$4\r\nPI'; sleep 0.3; printf 'NGxx'; sleep 0.3; } | resp_answer stream)" =~ '^-ERR Protocol error[^
]* closed$'
expect "malformed RESP: a bulk of 2 MB (over the server's bound)" \
    "$({ printf '*2\r\n$4\r\nNEXT\r\n$2000000\r\n'; long 2000000; printf '\r\n'; } | resp_answer)" =~ '^-ERR Protocol error[^
]* closed$'
expect "malformed RESP after good commands: the replies, then the error, then close" \
    "$(printf '*1\r\n$4\r\nPING\r\nPING\r\n*x\r\n' | resp_answer)" =~ '^\+PONG
\+PONG
-ERR Protocol error[^
]* closed$'

# --- too many connections ------------------------------------------------------------

# Each port takes five connections (the limit), each seen to be served.
fds=()
for i in 1 2 3 4 5; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
    send "$fd" 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
    read -r -t 5 line <&"$fd"
    fds+=("$fd")
done
expect "five HTTP connections are served at --max-connections 5" "${line%$'\r'}" = 'HTTP/1.1 200 OK'
expect "--max-connections N: further clients get an error reply and are closed (HTTP 503)" \
    "$(printf 'GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\n' | raw "$HTTP_PORT" 5 | tr -d '\r' | sed -n '1p;$p' | paste -sd ' ')" \
    = 'HTTP/1.1 503 Service Unavailable {"error": "too many open connections"}'
expect "idmintd(8): /healthz answers whenever the process is alive, at --max-connections too (then closes)" \
    "$(printf 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n' | raw "$HTTP_PORT" 5 | tr -d '\r' | sed -n '1p;/^Connection/p;$p' | paste -sd ' ')" \
    = 'HTTP/1.1 200 OK Connection: close ok'
expect "... /readyz too" \
    "$(printf 'GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n' | raw "$HTTP_PORT" 5 | tr -d '\r' | sed -n '1p;$p' | paste -sd ' ')" \
    = 'HTTP/1.1 200 OK ready'
expect "... a connection over the limit that sends nothing is refused within 2 s, not held" \
    "$(raw "$HTTP_PORT" 5 </dev/null | tr -d '\r' | sed -n '1p' )" = 'HTTP/1.1 503 Service Unavailable'
rfds=()
for i in 1 2 3 4 5; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
    send "$fd" 'PING\r\n'
    read -r -t 5 line <&"$fd"
    rfds+=("$fd")
done
expect "--max-connections N applies to each port: a full HTTP port leaves the RESP port its own five" \
    "${line%$'\r'}" = '+PONG'
expect "--max-connections N: further clients get an error reply and are closed (RESP)" \
    "$(printf 'PING\r\n' | raw "$RESP_PORT" 5 | tr -d '\r')" = '-ERR max number of clients reached'
send "${fds[0]}" 'GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
resp=$(timeout 5 cat <&"${fds[0]}" | tr -d '\r' | grep '^HTTP/' | tail -n 1)
expect "the connections already open keep being served" "$resp" = 'HTTP/1.1 200 OK'
fd=${fds[0]}
exec {fd}>&-
sleep 0.2
http "a closed connection frees its place" -L "$ULID" -n 1 -- /v1/ids/ulid
expect "/metrics: rejected connections are counted" "$(metric idmint_connections_rejected_total)" -ge 2
expect "/metrics: refused connections are counted by protocol and reason (HTTP)" \
    "$(metric 'idmint_connections_refused_total{protocol="http",reason="limit"}')" -ge 1
expect "/metrics: refused connections are counted by protocol and reason (RESP)" \
    "$(metric 'idmint_connections_refused_total{protocol="resp",reason="limit"}')" -ge 1
expect "/metrics: the limit per port" "$(metric idmint_connections_max)" = 5
check "refused connections are logged" -O '.* idmintd warn: refusing (http|resp) connections: 5 open, the limit per port \(1 refused so far\)' \
    --sh "grep -m 1 'refusing' '$SRV_LOG'"
# Thirty more refusals in a burst: logged at most once a second, so no
# more lines than the burst's whole seconds and one (however long a loaded
# machine takes for it), and fewer than the refusals.
before=$(grep -c 'refusing resp' "$SRV_LOG")
t0=${EPOCHREALTIME%.*}
for _ in $(seq 1 30); do
    printf 'PING\r\n' | raw "$RESP_PORT" 5 >/dev/null
done
secs=$((${EPOCHREALTIME%.*} - t0 + 1))
lines=$(($(grep -c 'refusing resp' "$SRV_LOG") - before))
expect "refusals are logged at most once a second (30 refused in a burst of $secs s: $lines lines)" \
    "$lines" -le "$(((secs < 29 ? secs : 29) + 1))"
expect "... and all counted" "$(metric 'idmint_connections_refused_total{protocol="resp",reason="limit"}')" -ge 31
for fd in "${fds[@]:1}" "${rfds[@]}"; do
    exec {fd}>&-
done
stop_server TERM
expect "exits 0 after the limits tests" "$SRV_STATUS" = 0

# --- the open-file limit against --max-connections ---------------------------------------

# idmintd started under `ulimit -n` (soft and hard) by a wrapper: the
# default --max-connections 10000 on two ports does not fit in 128 file
# descriptors; idmintd says so at start and takes what fits (128 less 32
# spare, over two ports: 48 each). The 49th HTTP client gets its 503, not
# a silent close.
real_idmintd=$IDMINTD
# with_nofile SOFT HARD: IDMINTD becomes a wrapper that starts idmintd
# with those limits (HARD empty: the hard limit is left as it is).
with_nofile() {
    local w=$T_DIR/idmintd-nofile-$1
    {
        echo '#!/bin/bash'
        echo "ulimit -S -n $1 || exit 99"
        [ -n "$2" ] && echo "ulimit -H -n $2 || exit 99"
        echo "exec '$real_idmintd' \"\$@\""
    } >"$w"
    chmod +x "$w"
    IDMINTD=$w
}
with_nofile 128 128
start_server
IDMINTD=$real_idmintd
check "start-up logs that the open-file limit cannot hold --max-connections, and what it takes instead" \
    -O '.* idmintd warn: --max-connections 10000 on 2 port\(s\) needs 20032 open files, but the limit \(RLIMIT_NOFILE\) is 128 \(hard limit 128; the hard limit\): taking at most 48 connections per port' \
    --sh "grep 'RLIMIT_NOFILE' '$SRV_LOG'"
expect "/metrics: the limit per port taken" "$(metric idmint_connections_max)" = 48
fds=()
served=0
for i in $(seq 1 48); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
    send "$fd" 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
    read -r -t 5 line <&"$fd" && [ "${line%$'\r'}" = 'HTTP/1.1 200 OK' ] && served=$((served + 1))
    fds+=("$fd")
done
expect "ulimit -n 128: 48 HTTP connections are served" "$served" = 48
http "ulimit -n 128: the 49th gets 503 (an error reply, not a silent close)" -s 503 \
    -O '\{"error": "too many open connections"\}.?' -- /v1/ids/ulid
check "ulimit -n 128: the RESP port still takes its own" -o PONG -- redis-cli -p "$RESP_PORT" PING
for fd in "${fds[@]}"; do
    exec {fd}>&-
done
stop_server TERM
expect "exits 0 after the small open-file limit" "$SRV_STATUS" = 0

# A soft limit under the hard one is raised to what the connections need.
hard=$(ulimit -H -n)
if [ "$hard" = unlimited ] || [ "$hard" -ge 2032 ]; then
    with_nofile 128 ''
    start_server --max-connections 1000
    IDMINTD=$real_idmintd
    check "a soft open-file limit below what --max-connections needs is raised (up to the hard limit), and logged" \
        -O '.* idmintd info: raised the open-file limit \(RLIMIT_NOFILE\) from 128 to 2032 for --max-connections 1000 on 2 port\(s\)' \
        --sh "grep 'RLIMIT_NOFILE' '$SRV_LOG'"
    check "... in effect for the process" -O '2032 +[0-9]+ +files *' --sh "grep '^Max open files' /proc/$SRV_PID/limits | sed 's/^Max open files *//'"
    # 300 connections (more than the 128 it was started with) are all served.
    fds=()
    for i in $(seq 1 300); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
        fds+=("$fd")
    done
    for fd in "${fds[@]}"; do
        send "$fd" 'PING\r\n'
    done
    pongs=0
    for fd in "${fds[@]}"; do
        read -r -t 5 line <&"$fd" && [ "${line%$'\r'}" = '+PONG' ] && pongs=$((pongs + 1))
    done
    expect "after raising the limit: 300 RESP connections are all served (started under ulimit -n 128)" "$pongs" = 300
    for fd in "${fds[@]}"; do
        exec {fd}>&-
    done
    stop_server TERM
    expect "exits 0 after raising the open-file limit" "$SRV_STATUS" = 0
fi

# --- idle and slow clients -------------------------------------------------------------

start_server --idle-timeout 500 --resp-idle-timeout 500
elapsed_ms() {
    local t0=${EPOCHREALTIME/./}
    "$@" >/dev/null
    echo $(((${EPOCHREALTIME/./} - t0) / 1000))
}
half() {
    printf 'GET /v1/ids/ulid HTTP/1.1\r\nHost:' | raw "$HTTP_PORT" 5
}
ms=$(elapsed_ms half)
expect "--idle-timeout 500: a half-sent request is closed after ~0.5 s (not before 0.4 s)" "$ms" -ge 400
expect "--idle-timeout 500: a half-sent request is closed after ~0.5 s (before 2 s)" "$ms" -lt 2000
silent() {
    raw "$HTTP_PORT" 5 </dev/null
}
ms=$(elapsed_ms silent)
expect "--idle-timeout 500: a connection that sends nothing is closed (after 0.4-2 s: $ms ms)" \
    "$( ((ms >= 400 && ms < 2000)) && echo ok)" = ok
resp_half() {
    printf '*2\r\n$4\r\nNEXT\r\n$4\r\nul' | raw "$RESP_PORT" 5
}
ms=$(elapsed_ms resp_half)
expect "--resp-idle-timeout 500: a half-sent RESP command is closed (after 0.4-2 s: $ms ms)" \
    "$( ((ms >= 400 && ms < 2000)) && echo ok)" = ok
# Twenty clients trickling a request byte by byte hold their connections;
# everyone else is served meanwhile.
trickle_pids=()
for i in $(seq 1 20); do
    (
        exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
        for b in G E T ' ' / h e a l t h z; do
            printf '%s' "$b" 1>&"$fd" 2>/dev/null || exit 0
            sleep 0.2
        done
    ) &
    trickle_pids+=($!)
    track $!
done
sleep 0.3
# Answered in full while they trickle (no time limit is asserted: how
# quickly depends on the machine; the slow clients' own requests are
# still open when this one is sent).
http "slow clients: the server keeps serving everyone else" -L "$ULID" -n 1000 -- '/v1/ids/ulid?count=1000'
for p in "${trickle_pids[@]}"; do
    wait "$p" 2>/dev/null
done
stop_server TERM
expect "exits 0 after the idle tests" "$SRV_STATUS" = 0

# The RESP port's idle timeout defaults to 0 (never), as Redis's: with
# --idle-timeout 500 for HTTP, a RESP connection quiet for 1.5 s is open.
start_server --idle-timeout 500
exec {r}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
exec {h}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
send "$r" 'PING\r\n'
read -r -t 5 line <&"$r"
sleep 1.5
send "$r" 'PING\r\n'
read -r -t 5 line <&"$r"
expect "--resp-idle-timeout defaults to 0: a quiet RESP connection stays open" "${line%$'\r'}" = '+PONG'
check "... while --idle-timeout closes the HTTP one" --sh "timeout 5 cat <&$h >/dev/null"
exec {r}>&-
exec {h}>&-
stop_server TERM
expect "exits 0 after the default RESP idle timeout" "$SRV_STATUS" = 0

# --- clients that do not read their replies -------------------------------------------

# The memory checks measure the server's resident set: in a sanitizer build,
# AddressSanitizer's quarantine of freed blocks (256 MB by default) is kept
# small so that it does not count as the server's own.
ASAN_SMALL_QUARANTINE=(--env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16")

# Each asks for far more than it reads: four HTTP connections with 16 KB of
# pipelined count=10000 requests each (about 300 requests, 110 MB of
# replies), one RESP connection with 600 NEXT uuidv7 10000 (260 MB). The
# replies beyond what the sockets hold must wait, not pile up in memory.
start_server "${ASAN_SMALL_QUARANTINE[@]}" --idle-timeout 10000
curl -s -o /dev/null "$BASE/v1/ids/uuidv7?count=10000"
hwm_before=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
for _ in $(seq 1 300); do printf 'GET /v1/ids/uuidv7?count=10000 HTTP/1.1\r\nHost: t\r\n\r\n'; done >"$T_DIR/big.http"
for _ in $(seq 1 600); do printf 'NEXT uuidv7 10000\r\n'; done >"$T_DIR/big.resp"
greedy=()
for _ in 1 2 3 4; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
    timeout 5 cat "$T_DIR/big.http" 1>&"$fd" 2>/dev/null
    greedy+=("$fd")
done
exec {fd}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
timeout 5 cat "$T_DIR/big.resp" 1>&"$fd" 2>/dev/null
greedy+=("$fd")
sleep 2
hwm_after=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
http "clients that do not read: everyone else is served" -n 3 -- '/v1/ids/ulid?count=3'
expect "clients that do not read their replies: memory stays bounded (peak RSS $hwm_before KiB before, $hwm_after KiB after; at most +64 MiB)" \
    "$hwm_after" -lt $((hwm_before + 65536))
for fd in "${greedy[@]}"; do
    exec {fd}>&-
done
stop_server TERM
expect "exits 0 after the greedy clients" "$SRV_STATUS" = 0

# --- random bytes ----------------------------------------------------------------------

start_server "${ASAN_SMALL_QUARANTINE[@]}" --idle-timeout 1000
curl -s -o /dev/null "$BASE/v1/ids/snowflake?count=10000"
rss_before=$(rss_kib "$SRV_PID")
errors_before=$(metric idmint_protocol_errors_total)
# junk PORT PREFIX: one connection: PREFIX, then 1-8 KB of random bytes,
# and whatever comes back within 0.3 s.
junk() {
    { printf "$2"; head -c $((RANDOM % 8192 + 1)) /dev/urandom; } | raw "$1" 0.3 >/dev/null 2>&1
}
prefixes_http=('' '' 'GET /' 'GET /v1/ids/' 'GET /v1/ids/ulid?count=' 'GET /healthz HTTP/1.1\r\n'
    'GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: ' 'POST /v1/inspect/ HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n')
prefixes_resp=('' '' '*' '*2\r\n$' '*2\r\n$4\r\nNEXT\r\n$' '*3\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n$' 'NEXT ' 'PING ')
t0=$SECONDS
for _ in $(seq 1 10); do
    junk_pids=()
    for i in $(seq 1 10); do
        junk "$HTTP_PORT" "${prefixes_http[RANDOM % ${#prefixes_http[@]}]}" &
        junk_pids+=($!)
        junk "$RESP_PORT" "${prefixes_resp[RANDOM % ${#prefixes_resp[@]}]}" &
        junk_pids+=($!)
    done
    wait "${junk_pids[@]}"
    [ $((SECONDS - t0)) -gt 60 ] && break
done
# Eight megabytes down one connection of each kind.
head -c 8000000 /dev/urandom | raw "$HTTP_PORT" 2 >/dev/null 2>&1
{ printf '*1\r\n$65536\r\n'; head -c 8000000 /dev/urandom; } | raw "$RESP_PORT" 2 >/dev/null 2>&1
expect "random bytes at both ports: the process is alive" "$(running "$SRV_PID" && echo alive)" = alive
http "random bytes at both ports: normal HTTP requests are still served" -L "$ULID" -n 5 -- '/v1/ids/ulid?count=5'
check "random bytes at both ports: normal RESP requests are still served" -L '[0-9]{15,19}' -n 3 \
    -- redis-cli -p "$RESP_PORT" NEXT snowflake 3
expect "random bytes are counted as protocol errors" "$(metric idmint_protocol_errors_total)" -gt "$((errors_before + 50))"
rss_after=$(rss_kib "$SRV_PID")
expect "random bytes: memory stays bounded (RSS ${rss_before} KiB before, ${rss_after} KiB after; at most +64 MiB)" \
    "$rss_after" -lt $((rss_before + 65536))
sleep 1.5
expect "random bytes: every junk connection is closed in the end (open connections besides this one)" \
    "$(metric idmint_connections_open)" = 1
stop_server TERM
expect "exits 0 after the random bytes" "$SRV_STATUS" = 0
finish
