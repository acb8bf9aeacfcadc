# test_tls_memory.sh - memory against floods of connections that never
# finish their first request: thousands of TLS connections that send part
# of a ClientHello, or all of it, and stall; thousands of plain HTTP ones
# that send half a head (in two reads), or nothing. What each costs stays
# within the per-connection figures docs/idmintd.md gives ("Bounded
# memory"), the TLS state is counted in idmint_buffered_bytes{direction=
# "tls"}, handshakes in progress stay within their part of --max-buffered
# (the rest wait for a slot, and a real client among them is served), the
# header timeout closes them all, memory goes back to the system once they
# are gone, and a real client is served afterwards.
#
# Memory is read from /proc/PID/status: VmHWM (the peak resident set over
# the whole flood) and VmRSS (now), against the resident set before the
# flood on a server that has already served (a TLS handshake, for TLS). A
# connection's figure is (peak - before) / connections. Each flood has a
# server of its own, as VmHWM is the peak of a process's whole life.
#
# In a sanitizer build (IDM_SANITIZE) the bounds are not judged, and said
# so: ASan's redzones and quarantine are most of what they would measure,
# and its allocator does not give memory back (test_memory.sh). The
# functional checks run all the same.
# Usage: bash tests/server/test_tls_memory.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
MIB=1024 # KiB
ASAN_SMALL_QUARANTINE=(--env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16")
judged=1
if [ -n "${IDM_SANITIZE:-}" ]; then
    judged=0
    echo "note: a -DIDM_SANITIZE=$IDM_SANITIZE build: the memory bounds are shown, not judged"
fi

PKI=$T_DIR/pki
bash "$HERE/tls_cert.sh" "$PKI" one "idmint test one" || {
    echo "test_tls_memory.sh: cannot make test certificates with openssl" >&2
    exit 1
}
CA=$PKI/ca.pem
TLS=(--tls-cert "$PKI/one.pem" --tls-key "$PKI/one.key")
curl() {
    command curl -m 10 --cacert "$CA" "$@"
}
export -f curl

# Connections per flood: 6,000, fewer when the open-file limit is lower
# (the attack client's and idmintd's, each raised to the hard limit:
# idmintd wants --max-connections, N + 100, for each of its two ports).
N=6000
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((2 * N + 300)) ]; then
    N=$(((hard - 300) / 2))
fi
if [ "$N" -lt 1000 ]; then
    echo "skipped: the open-file limit ($hard) allows fewer than 1,000 connections"
    exit 0
fi
HEADER_TIMEOUT=5000

# The figures of docs/idmintd.md ("Bounded memory", per connection, in
# bytes), with some headroom over what was measured (glibc 2.36, OpenSSL
# 3.0, libuv 1.44).
PLAIN_IDLE=2048      # docs: 1.2 KB (its idms_conn)
PLAIN_HALF_HEAD=2048 # docs: 1.4 KB (11.3 KB before)
TLS_HALF_HELLO=2560  # docs: 1.5 KB (49.6 KB before)

# within EVIDENCE VALUE BOUND: VALUE <= BOUND, judged outside a sanitizer build.
within() {
    echo "$1: $2 (at most $3)"
    if [ $judged = 1 ]; then
        expect "$1 ($2; at most $3)" "$2" -le "$3"
    fi
}

metric_or_0() {
    local v
    v=$(metric "$1")
    echo "${v:-0}"
}

# flood NAME PORT [ATTACK ARGS...]: N connections of the attack client
# against the running server's PORT, reading what comes back once they have
# sent, held until the server has closed them all. Sets OUT (the attack's
# report), RSS0 (before, KiB), PEAK (VmHWM after, KiB), PER_CONN (bytes).
# FLOOD_HOOK, when set, runs once every connection has sent (the server's
# view during the flood).
flood() {
    local name=$1 port=$2
    shift 2
    OUT=$T_DIR/$name.out
    RSS0=$(rss_kib "$SRV_PID")
    "$ATTACK" "127.0.0.1:$port" --conns "$N" --read after --hold-ms 120000 "$@" >"$OUT" 2>&1 &
    local attack=$!
    track "$attack"
    wait_until 60 grep -q '^sent' "$OUT"
    [ -n "${FLOOD_HOOK:-}" ] && "$FLOOD_HOOK"
    wait_until 60 bash -c "! kill -0 $attack 2>/dev/null"
    wait "$attack"
    PEAK=$(peak_kib "$SRV_PID")
    PER_CONN=$(((PEAK - RSS0) * 1024 / N))
    echo "$name: $(grep '^summary' "$OUT")"
    echo "$name: RSS $RSS0 KiB before, peak $PEAK KiB: $PER_CONN bytes a connection"
    expect "$name: the attack client opened its $N connections" "$(kv "$OUT" conns):$(kv "$OUT" connect)" = "$N:0"
}

# gone_and_given_back NAME: every flood connection is gone, and the
# resident set comes back to within 8 MiB of before the flood (the trim
# runs every second once the bytes counted - TLS state and connections
# included - fall to a quarter of their peak).
gone_and_given_back() {
    local name=$1
    only_this() {
        [ "$(metric idmint_connections_open)" = 1 ]
    }
    wait_until 20 only_this
    expect "$name: every flood connection is gone (open connections besides this one)" \
        "$(metric idmint_connections_open)" = 1
    back_down() {
        [ "$(rss_kib "$SRV_PID")" -le $((RSS0 + 8 * MIB)) ]
    }
    if [ $judged = 1 ]; then
        wait_until 10 back_down
        echo "$name: RSS $(rss_kib "$SRV_PID") KiB after (before: $RSS0 KiB)"
        expect "$name: memory goes back to the system once they are gone (RSS $RSS0 KiB before, $PEAK KiB at the peak, at most +8 MiB after)" \
            "$(rss_kib "$SRV_PID")" -le $((RSS0 + 8 * MIB))
    else
        echo "$name: not judged under the sanitizer: memory goes back to the system ($(rss_kib "$SRV_PID") KiB now)"
    fi
}

# --- TLS: 15 bytes of a ClientHello ----------------------------------------------------

# docs/idmintd.md: "A TLS connection whose first record (the ClientHello)
# is not complete has no SSL object yet: it holds the bytes received".
SRV_SCHEME=https
start_server "${ASAN_SMALL_QUARANTINE[@]}" "${TLS[@]}" --header-timeout $HEADER_TIMEOUT \
    --max-connections $((N + 100))
http "TLS: a real client is served before the flood" -o ok -- /healthz
tls_seen() {
    local tls
    tls=$(metric_or_0 'idmint_buffered_bytes{direction="tls"}')
    [ "$tls" -ge $((N * 15)) ]
}
during_half_hello() {
    wait_until 30 tls_seen
    TLS_BYTES=$(metric_or_0 'idmint_buffered_bytes{direction="tls"}')
}
FLOOD_HOOK=during_half_hello flood tls-half-hello "$HTTP_PORT" --tls-hello 15
expect "TLS half-handshakes: what they hold is counted in idmint_buffered_bytes{direction=\"tls\"} (at least their 15 bytes each: $TLS_BYTES)" \
    "$TLS_BYTES" -ge $((N * 15))
within "TLS half-handshakes: a connection that sent 15 bytes of a ClientHello costs at most $TLS_HALF_HELLO bytes (peak RSS over before, a connection)" \
    "$PER_CONN" "$TLS_HALF_HELLO"
expect "... the handshake deadline (--header-timeout) closes them all" "$(kv "$OUT" closed)" = "$N"
expect "... counted as request timeouts" "$(metric 'idmint_request_timeouts_total{protocol="http"}')" = "$N"
gone_and_given_back "TLS half-handshakes"
http "TLS half-handshakes: a real handshake (curl --cacert) is served after the flood" -L "$ULID" -n 1 -- /v1/ids/ulid
stop_server TERM
expect "exits 0 after the TLS half-handshakes" "$SRV_STATUS" = 0

# --- TLS: whole ClientHellos, and no more -----------------------------------------------

# docs/idmintd.md: "handshakes in progress hold a slot each, as many as a
# quarter of --max-buffered allows ... the others wait for one". With
# --max-buffered 16M, 4 MiB of handshakes.
HALF=$((N / 2))
start_server "${ASAN_SMALL_QUARANTINE[@]}" "${TLS[@]}" --header-timeout $HEADER_TIMEOUT \
    --max-connections $((N + 100)) --max-buffered 16M
http "TLS: a real client is served before the flood of ClientHellos" -o ok -- /healthz
# /metrics during the flood comes over a connection whose handshake came
# before it (a new one would wait for a slot like the others).
GOT=$T_DIR/metrics.got
timeout 60 python3 "$HERE/tlsio.py" "$HTTP_PORT" "$CA" "$GOT" "mark:$T_DIR/connected" \
    "wait:$T_DIR/flooded" 'send:GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n' \
    'until:idmint_tls_handshake_waits_total [0-9]+\n' >"$T_DIR/tlsio.out" 2>&1 &
tlsio_pid=$!
track $tlsio_pid
wait_until 20 test -e "$T_DIR/connected"
from_got() {
    awk -v k="$1" '$1 == k { print $2 }' "$GOT" | tr -d '\r'
}
during_hellos() {
    # Once the first connection waits for a slot (logged):
    wait_until 30 grep -q 'TLS handshakes wait' "$SRV_LOG"
    touch "$T_DIR/flooded"
    wait_until 30 bash -c "! kill -0 $tlsio_pid 2>/dev/null"
    HS_NOW=$(from_got idmint_tls_handshakes_in_progress)
    HS_MAX=$(from_got idmint_tls_handshakes_max)
    HS_WAITING=$(from_got idmint_tls_handshakes_waiting)
    # A real client among them: it waits for a slot (the slots' holders
    # came first, and their deadline is sooner than its own).
    DURING=$(command curl -s -m 20 --cacert "$CA" "$BASE/v1/ids/ulid")
}
N_SAVED=$N
N=$HALF
t0=$(now_ms)
FLOOD_HOOK=during_hellos flood tls-hellos "$RESP_PORT" --tls-hello 0
# A flood of under SECS s spans SECS + 1 seconds of the clock at most.
secs=$((($(now_ms) - t0) / 1000 + 2))
echo "handshakes: $HS_NOW in progress of at most $HS_MAX, $HS_WAITING waiting"
expect "ClientHellos that stall: /metrics over a connection made before them is answered during the flood" \
    "$(cat "$T_DIR/tlsio.out")" = open
expect "... handshakes in progress stay within their slots (a quarter of --max-buffered 16M: idmint_tls_handshakes_max $HS_MAX)" \
    "$HS_NOW" -le "$HS_MAX"
expect "... and fill them" "$HS_NOW" = "$HS_MAX"
expect "... 4 MiB of handshakes: 64 slots of 64 KiB" "$HS_MAX" = 64
expect "... the others wait for a slot (idmint_tls_handshakes_waiting)" "$HS_WAITING" -gt 0
expect "... and a real client among them is served once it has one" "$DURING" =~ "^$ULID\$"
expect "... the waits are counted (idmint_tls_handshake_waits_total)" \
    "$(metric_or_0 idmint_tls_handshake_waits_total)" -gt 0
waits_logged=$(grep -c 'TLS handshakes wait' "$SRV_LOG")
expect "... and logged at most once a second ($waits_logged lines in about $secs s)" "$waits_logged" -le "$secs"
expect "... at least once" "$waits_logged" -ge 1
bound=$((16 * MIB / 4 + HALF * TLS_HALF_HELLO / 1024 + 4 * MIB))
within "ClientHellos that stall: the peak resident set grows by at most a quarter of --max-buffered 16M (the handshakes), $TLS_HALF_HELLO bytes a connection and 4 MiB (KiB)" \
    "$((PEAK - RSS0))" "$bound"
expect "... the handshake deadline closes them all" "$(kv "$OUT" closed)" = "$HALF"
gone_and_given_back "ClientHellos that stall"
check "ClientHellos that stall: redis-cli --tls is served after the flood" -o PONG \
    -- redis-cli --tls --cacert "$CA" -p "$RESP_PORT" PING
stop_server TERM
expect "exits 0 after the ClientHellos" "$SRV_STATUS" = 0
N=$N_SAVED

# --- plain HTTP: half a head, in two reads, and idle connections -----------------------

SRV_SCHEME=http
start_server "${ASAN_SMALL_QUARANTINE[@]}" --header-timeout $HEADER_TIMEOUT \
    --idle-timeout $HEADER_TIMEOUT --max-connections $((N + 100))
http "plain: a client is served before the flood" -L "$ULID" -n 1 -- /v1/ids/ulid
# docs/idmintd.md: "a connection keeps, in an allocation of its own and of
# just that size, only what the adapter left: an incomplete request".
flood plain-half-head "$HTTP_PORT" --send 'GET /v1/ids/ulid HTTP/1.1\r\nHost: x' --split 12
within "plain: a connection that sent half a head (in two reads) costs at most $PLAIN_HALF_HEAD bytes" \
    "$PER_CONN" "$PLAIN_HALF_HEAD"
expect "... the header timeout answers them all with 408 and closes" \
    "$(kv "$OUT" closed):$(awk '/^reply [0-9]+ HTTP\/1.1 408 / { n += $2 } END { print n + 0 }' "$OUT")" = "$N:$N"
gone_and_given_back "plain half heads"
http "plain half heads: a client is served after the flood" -L "$ULID" -n 1 -- /v1/ids/ulid
stop_server TERM
expect "exits 0 after the half heads" "$SRV_STATUS" = 0
# A fresh server: VmHWM is the peak of the process's whole life.
start_server "${ASAN_SMALL_QUARANTINE[@]}" --header-timeout $HEADER_TIMEOUT \
    --idle-timeout $HEADER_TIMEOUT --max-connections $((N + 100))
http "plain: a client is served before the flood of idle connections" -L "$ULID" -n 1 -- /v1/ids/ulid
flood plain-idle "$HTTP_PORT"
within "plain: an idle connection costs at most $PLAIN_IDLE bytes" "$PER_CONN" "$PLAIN_IDLE"
expect "... the idle timeout closes them all" "$(kv "$OUT" closed)" = "$N"
gone_and_given_back "plain idle connections"
http "plain idle connections: a client is served after the flood" -L "$ULID" -n 1 -- /v1/ids/ulid
stop_server TERM
expect "exits 0 after the idle connections" "$SRV_STATUS" = 0
finish
