# test_tls.sh - TLS on both ports (--tls-cert, --tls-key): curl, redis-cli
# --tls and a scripted Python client (tlsio.py) against certificates of a
# throw-away CA (tls_cert.sh): keep-alive, pipelining and large replies,
# close_notify, plain text and garbage at the TLS ports, TLS 1.1 refused,
# the handshake failures counted and logged at most once a second, the
# limit of connections, SIGHUP reloading the pair (open connections keep
# theirs; a broken or mismatched pair keeps the old one), refusals at
# start, the SIGTERM drain, and bounded memory.
# Usage: bash tests/server/test_tls.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
UUID='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

PKI=$T_DIR/pki
for name in one two three; do
    bash "$HERE/tls_cert.sh" "$PKI" "$name" "idmint test $name" || {
        echo "test_tls.sh: cannot make test certificates with openssl" >&2
        exit 1
    }
done
CA=$PKI/ca.pem
export CA
# The pair idmintd serves: files the test replaces before a SIGHUP.
CERT=$T_DIR/served.pem
KEY=$T_DIR/served.key
cp "$PKI/one.pem" "$CERT"
cp "$PKI/one.key" "$KEY"

# Every curl trusts the test CA; BASE and lib.sh's http are https://.
SRV_SCHEME=https
curl() {
    command curl -m 10 --cacert "$CA" "$@"
}
export -f curl

# tlsio PORT STEP...: tlsio.py's verdict on stdout, what it received in
# $GOT ($T_DIR/got unless set).
tlsio() {
    local port=$1
    shift
    timeout 60 python3 "$HERE/tlsio.py" "$port" "$CA" "${GOT:-$T_DIR/got}" "$@"
}
# served_serial PORT: the serial of the certificate a new connection gets.
served_serial() {
    openssl s_client -connect "127.0.0.1:$1" -CAfile "$CA" </dev/null 2>/dev/null |
        openssl x509 -noout -serial 2>/dev/null
}
serial_of() {
    openssl x509 -noout -serial -in "$1"
}
log_lines() {
    grep -c "$1" "$SRV_LOG"
}

# --- refusals at start -------------------------------------------------------------

run() {
    timeout 5 "$IDMINTD" --http "127.0.0.1:$((20000 + RANDOM % 40000))" --resp off --state-dir none "$@" 2>&1
}
export -f run
export IDMINTD PKI T_DIR
check "--tls-cert without --tls-key is a usage error (exit 2)" -s 2 \
    -O "idmintd: --tls-cert and --tls-key go together: --tls-key is missing.*" \
    --sh 'run --tls-cert "$PKI/one.pem"'
check "--tls-key without --tls-cert is a usage error (exit 2)" -s 2 \
    -O "idmintd: --tls-cert and --tls-key go together: --tls-cert is missing.*" \
    --sh 'run --tls-key "$PKI/one.key"'
check "a key that does not match the certificate: idmintd refuses to start (exit 1), naming both" -s 1 \
    -O ".*error: the TLS private key .*/two.key does not match the certificate .*/one.pem \(key values mismatch\)" \
    --sh 'run --tls-cert "$PKI/one.pem" --tls-key "$PKI/two.key"'
check "a certificate file that cannot be read: refused at start (exit 1)" -s 1 \
    -O ".*error: cannot open the TLS certificate .*/missing.pem: No such file or directory" \
    --sh 'run --tls-cert "$PKI/missing.pem" --tls-key "$PKI/one.key"'
check "a key file that cannot be read: refused at start (exit 1)" -s 1 \
    -O ".*error: cannot open the TLS private key .*/missing.key: No such file or directory" \
    --sh 'run --tls-cert "$PKI/one.pem" --tls-key "$PKI/missing.key"'
check "a certificate file that is not PEM (the key given twice): refused at start (exit 1)" -s 1 \
    -O ".*error: cannot load the TLS certificate chain .*/one.key: no PEM certificate in it" \
    --sh 'run --tls-cert "$PKI/one.key" --tls-key "$PKI/one.key"'
openssl pkey -in "$PKI/one.key" -aes128 -passout pass:secret -out "$T_DIR/encrypted.key" 2>/dev/null
check "an encrypted key is refused (no passphrase prompt that would hang the server)" -s 1 \
    -O ".*error: cannot read the TLS private key .*/encrypted.key: it is encrypted, and idmintd takes no passphrase" \
    --sh 'run --tls-cert "$PKI/one.pem" --tls-key "$T_DIR/encrypted.key"'

# --- both ports over TLS -------------------------------------------------------------

# The config file takes the pair as the flags do.
printf 'tls-cert = %s\ntls-key = %s\n' "$CERT" "$KEY" >"$T_DIR/idmintd.conf"
start_server --config "$T_DIR/idmintd.conf" --resp-idle-timeout 500
check "the log names the certificate loaded" \
    -O ".* info: TLS certificate loaded from $CERT: subject CN=idmint test one, serial 0x[0-9A-F]+, valid until [0-9T:-]+Z" \
    --sh "grep 'TLS certificate loaded' '$SRV_LOG'"
http "HTTPS: GET /v1/ids/uuidv7 (curl --cacert)" -L "$UUID" -n 1 -- /v1/ids/uuidv7
http "HTTPS: GET /healthz" -o ok -- /healthz
check "the HTTP port speaks TLS 1.3 with curl" -O 'TLSv1.3' \
    --sh "curl -sv -o /dev/null '$BASE/healthz' 2>&1 | grep -o 'SSL connection using TLSv1.3' | cut -d' ' -f4"
check "keep-alive over TLS: three requests, one connection" -o $'1\n0\n0' \
    -- curl -s -w '%{num_connects}\n' -o /dev/null "$BASE/v1/ids/ulid" -o /dev/null "$BASE/healthz" \
    -o /dev/null "$BASE/v1/ids/ksuid"

for _ in $(seq 1 2000); do printf 'GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\n'; done >"$T_DIR/pipeline.http"
printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' >>"$T_DIR/pipeline.http"
expect "pipelining over TLS: 2,001 requests (88 KB, more than the input buffer) in one write; the server closes with close_notify" \
    "$(tlsio "$HTTP_PORT" "sendfile:$T_DIR/pipeline.http" end)" = notify
tr -d '\r' <"$T_DIR/got" >"$T_DIR/got.txt"
expect "... every one answered, in order" "$(grep -c '^HTTP/1.1 200 OK$' "$T_DIR/got.txt")" = 2001
expect "... 2,000 distinct ULIDs" "$(grep -E "^$ULID\$" "$T_DIR/got.txt" | sort -u | wc -l)" = 2000
expect "... the last reply is /healthz's, with Connection: close" "$(tail -n 1 "$T_DIR/got.txt")" = ok

# Replies of 74 KB: the adapter stops at its batch (1 MiB) and reading
# pauses with requests still inside the TLS session (decrypted beyond the
# input buffer's room, or not yet): resuming must take them from there, as
# the client has nothing more to send.
for _ in $(seq 1 500); do printf 'GET /v1/ids/uuidv7?count=2000 HTTP/1.1\r\nHost: t\r\n\r\n'; done >"$T_DIR/batches.http"
printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' >>"$T_DIR/batches.http"
expect "pipelining over TLS past the output batch: 501 requests (29 KB) whose replies are 37 MB" \
    "$(tlsio "$HTTP_PORT" "sendfile:$T_DIR/batches.http" end)" = notify
expect "... every one answered" "$(tr -d '\r' <"$T_DIR/got" | grep -c '^HTTP/1.1 200 OK$')" = 501
expect "... with all its IDs" "$(tr -d '\r' <"$T_DIR/got" | grep -cE "^$UUID\$")" = 1000000

prefix=$(printf 'a%.0s' $(seq 1 63))
http "a large reply over TLS arrives complete (10,000 TypeIDs with a 63-character prefix: 910 KB)" \
    -L "${prefix}_[0-7][0-9a-hjkmnp-tv-z]{25}" -n 10000 -- "/v1/ids/typeid?count=10000&prefix=$prefix"

check "RESP over TLS: redis-cli --tls --cacert CA NEXT ulid 3" -L "$ULID" -n 3 \
    -- redis-cli --tls --cacert "$CA" -p "$RESP_PORT" NEXT ulid 3
check "RESP over TLS: PING" -o PONG -- redis-cli --tls --cacert "$CA" -p "$RESP_PORT" PING
check "RESP over TLS: a 10,000-ID reply" -L "$UUID" -n 10000 \
    -- redis-cli --tls --cacert "$CA" -p "$RESP_PORT" NEXT uuidv7 10000
for _ in $(seq 1 100); do printf 'NEXT uuidv7 10000\r\n'; done >"$T_DIR/pipeline.resp"
printf 'QUIT\r\n' >>"$T_DIR/pipeline.resp"
expect "RESP pipelining over TLS: 100 commands of 10,000 IDs (43 MB of replies, written while the client reads)" \
    "$(tlsio "$RESP_PORT" "sendfile:$T_DIR/pipeline.resp" end)" = notify
expect "... every ID arrives" "$(tr -d '\r' <"$T_DIR/got" | grep -cE "^$UUID\$")" = 1000000
expect "... and QUIT's +OK last" "$(tail -c 5 "$T_DIR/got" | tr -d '\r\n')" = '+OK'
expect "an idle TLS connection closed by --resp-idle-timeout gets close_notify" \
    "$(tlsio "$RESP_PORT" 'send:PING\r\n' end)" = notify
expect "... after its reply" "$(tr -d '\r' <"$T_DIR/got")" = '+PONG'

# --- what is not TLS ---------------------------------------------------------------

failures=$(metric idmint_tls_handshake_failures_total)
check "plain HTTP to the TLS port fails (curl gets no HTTP reply)" -o '' \
    --sh "! command curl -s -m 10 'http://127.0.0.1:$HTTP_PORT/healthz'"
check "plain RESP to the TLS port gets no reply" -s 1 -o '' \
    --sh "timeout 5 \"\$(type -P redis-cli)\" -p $RESP_PORT PING | grep PONG"
head -c 3000 /dev/urandom >"$T_DIR/garbage"
raw "$HTTP_PORT" 5 <"$T_DIR/garbage" >/dev/null
expect "a bad handshake (garbage bytes) closes the connection" "$?" = 0
expect "the failed handshakes are counted (idmint_tls_handshake_failures_total)" \
    "$(metric idmint_tls_handshake_failures_total)" = $((failures + 3))
check "... and logged with OpenSSL's reason" \
    -O ".* warn: TLS handshake failed on the http port: http request \([0-9]+ so far\)" \
    --sh "grep 'TLS handshake failed on the http port: http request' '$SRV_LOG'"
http "the server still serves over TLS" -o ok -- /healthz
expect "successful handshakes are counted too" "$(metric idmint_tls_handshakes_total)" -gt 10
before=$(log_lines 'TLS handshake failed')
t0=$(now_ms)
for _ in $(seq 1 30); do
    cat "$T_DIR/garbage" 2>/dev/null >"/dev/tcp/127.0.0.1/$RESP_PORT"
done
secs=$((($(now_ms) - t0) / 1000 + 1))
wait_until 10 test "$(metric idmint_tls_handshake_failures_total)" -ge $((failures + 33))
expect "30 bad handshakes in a burst are all counted" "$(metric idmint_tls_handshake_failures_total)" = $((failures + 33))
# A burst of under SECS s spans SECS + 1 seconds of the clock at most.
expect "... but logged at most once a second (a burst of $secs s)" $(($(log_lines 'TLS handshake failed') - before)) -le $((secs + 1))
{
    printf 'GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: '
    head -c 20000 /dev/zero | tr '\0' a
} >"$T_DIR/big.http"
expect "an oversized head over TLS (a 20 KB header, more than the input buffer): 431, then close_notify" \
    "$(tlsio "$HTTP_PORT" "sendfile:$T_DIR/big.http" end)" = notify
expect "... the 431" "$(head -n 1 "$T_DIR/got" | tr -d '\r')" = 'HTTP/1.1 431 Request Header Fields Too Large'

# --- SIGHUP reloads the pair -----------------------------------------------------------

expect "before SIGHUP: the certificate served is the first" "$(served_serial "$HTTP_PORT")" = "$(serial_of "$PKI/one.pem")"
rm -f "$T_DIR/held" "$T_DIR/go"
tlsio "$HTTP_PORT" 'send:GET /v1/ids/ulid HTTP/1.1\r\nHost: t\r\n\r\n' "until:\\r\\n$ULID\\n" \
    "cert:$T_DIR/held.pem" "mark:$T_DIR/held" "wait:$T_DIR/go" \
    'send:GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' end >"$T_DIR/held.out" &
held=$!
track $held
wait_until 10 test -e "$T_DIR/held"
cp "$PKI/two.pem" "$CERT"
cp "$PKI/two.key" "$KEY"
kill -HUP "$SRV_PID"
wait_until 10 grep -q 'TLS certificate reloaded' "$SRV_LOG"
check "SIGHUP reloads the certificate and key, and logs the new one" \
    -O ".* info: TLS certificate reloaded from $CERT: subject CN=idmint test two, serial 0x[0-9A-F]+, .*" \
    --sh "grep 'TLS certificate reloaded' '$SRV_LOG'"
expect "after SIGHUP: new connections get the new certificate (HTTP)" "$(served_serial "$HTTP_PORT")" = "$(serial_of "$PKI/two.pem")"
expect "... (RESP)" "$(served_serial "$RESP_PORT")" = "$(serial_of "$PKI/two.pem")"
check "... and redis-cli --tls works with it" -o PONG -- redis-cli --tls --cacert "$CA" -p "$RESP_PORT" PING
expect "a connection opened before SIGHUP had the old certificate" "$(serial_of "$T_DIR/held.pem")" = "$(serial_of "$PKI/one.pem")"
touch "$T_DIR/go"
wait $held
expect "... and is still served after it, on its old session, to a clean close" "$(cat "$T_DIR/held.out")" = notify
expect "... its second reply" "$(tr -d '\r' <"$T_DIR/got" | tail -n 1)" = ok
expect "the reload is counted" "$(metric 'idmint_tls_reloads_total{result="ok"}')" = 1

printf 'not a certificate\n' >"$CERT"
kill -HUP "$SRV_PID"
wait_until 10 grep -q 'keeping the certificate in service' "$SRV_LOG"
check "SIGHUP with a broken certificate file: the error is logged, the old pair stays" \
    -O ".* error: cannot load the TLS certificate chain $CERT: no PEM certificate in it; keeping the certificate in service" \
    --sh "grep 'keeping the certificate in service' '$SRV_LOG'"
expect "... and new connections still get it" "$(served_serial "$HTTP_PORT")" = "$(serial_of "$PKI/two.pem")"
http "... and are served" -L "$ULID" -n 1 -- /v1/ids/ulid
cp "$PKI/three.pem" "$CERT" # the key is still two's
kill -HUP "$SRV_PID"
wait_until 10 grep -q 'does not match.*keeping' "$SRV_LOG"
check "SIGHUP with a certificate that does not match the key: refused, the old pair stays" \
    -O ".* error: the TLS private key $KEY does not match the certificate $CERT \(key values mismatch\); keeping the certificate in service" \
    --sh "grep 'does not match.*keeping' '$SRV_LOG'"
expect "... still the second certificate" "$(served_serial "$HTTP_PORT")" = "$(serial_of "$PKI/two.pem")"
expect "failed reloads are counted" "$(metric 'idmint_tls_reloads_total{result="failed"}')" = 2
check "SIGHUP still reopens the log" -O '[0-9]' --sh "grep -c 'log file reopened' '$SRV_LOG'"

# --- the SIGTERM drain with TLS connections open ----------------------------------------

rm -f "$T_DIR/idle" "$T_DIR/half" "$T_DIR/go"
GOT=$T_DIR/idle.got tlsio "$HTTP_PORT" 'send:GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n' 'until:ok\n' \
    "mark:$T_DIR/idle" end >"$T_DIR/idle.out" &
idle=$!
track $idle
# A request half-sent when the drain begins is answered after it.
tlsio "$HTTP_PORT" 'send:GET /v1/ids/ulid HTTP/1.1\r\nHost:' "mark:$T_DIR/half" "wait:$T_DIR/go" \
    'send: t\r\n\r\n' end >"$T_DIR/half.out" &
half=$!
track $half
wait_until 10 test -e "$T_DIR/idle" -a -e "$T_DIR/half"
sleep 0.2
kill -TERM "$SRV_PID"
wait $idle
expect "SIGTERM: an idle TLS connection is closed at once, with close_notify" "$(cat "$T_DIR/idle.out")" = notify
touch "$T_DIR/go"
wait $half
expect "SIGTERM: a request half-received over TLS is answered, then close_notify" "$(cat "$T_DIR/half.out")" = notify
tr -d '\r' <"$T_DIR/got" >"$T_DIR/got.txt"
expect "... with its ULID and Connection: close" \
    "$(grep -iE "^(HTTP/1.1 200 OK|Connection: close|$ULID)\$" "$T_DIR/got.txt" | paste -sd ' ')" =~ "^HTTP/1.1 200 OK Connection: close $ULID\$"
wait_server 12
expect "SIGTERM with TLS connections open: exit 0" "$SRV_STATUS" = 0
check "the log ends with the stop" -O '.* idmintd info: stopped' --sh "tail -n 1 '$SRV_LOG'"

# --- TLS 1.2 at least ------------------------------------------------------------------

# An OpenSSL configuration that allows TLS 1.0 and 1.1 (security level 0),
# for idmintd and the client: without idmintd's own minimum, TLS 1.1 would
# then be served.
cat >"$T_DIR/lax.cnf" <<'EOF'
openssl_conf = init
[init]
ssl_conf = ssl
[ssl]
system_default = lax
[lax]
MinProtocol = TLSv1
CipherString = DEFAULT@SECLEVEL=0
EOF
cp "$PKI/one.pem" "$CERT"
cp "$PKI/one.key" "$KEY"
start_server --env "OPENSSL_CONF=$T_DIR/lax.cnf" --tls-cert "$CERT" --tls-key "$KEY"
export HTTP_PORT
s_client() {
    OPENSSL_CONF=$T_DIR/lax.cnf openssl s_client -connect "127.0.0.1:$HTTP_PORT" -CAfile "$CA" \
        -cipher 'DEFAULT@SECLEVEL=0' "$@" </dev/null 2>&1
}
export -f s_client
failures=$(metric idmint_tls_handshake_failures_total)
check "TLS 1.1 is refused (openssl s_client -tls1_1: a protocol version alert)" -O '.*alert protocol version.*' \
    --sh "s_client -tls1_1 | grep -m 1 'alert protocol version'"
check "TLS 1.2 is served (the same client with -tls1_2)" -O '.*Protocol *: TLSv1.2' \
    --sh "s_client -tls1_2 | grep -m 1 'Protocol *:'"
check "TLS 1.0 is refused" -O '.*alert protocol version.*' \
    --sh "s_client -tls1 | grep -m 1 'alert protocol version'"
expect "... both counted as failed handshakes" "$(metric idmint_tls_handshake_failures_total)" = $((failures + 2))
check "... and logged as such" -O '.* warn: TLS handshake failed on the http port: unsupported protocol .*' \
    --sh "grep -m 1 'unsupported protocol' '$SRV_LOG'"
stop_server TERM
expect "exit 0" "$SRV_STATUS" = 0

# --- the connection limit and memory ---------------------------------------------------

# AddressSanitizer's quarantine of freed blocks (256 MB by default) is kept
# small so that it does not count as the server's own (as test_limits.sh).
ASAN_SMALL_QUARANTINE=(--env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16")
start_server "${ASAN_SMALL_QUARANTINE[@]}" --tls-cert "$CERT" --tls-key "$KEY" --max-connections 3
curl -s -o /dev/null "$BASE/v1/ids/uuidv7?count=10000"
hwm0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
# Clients that pipeline much more than they read: replies wait (bounded),
# and reading stops.
for _ in $(seq 1 2000); do printf 'NEXT uuidv7 10000\r\n'; done >"$T_DIR/flood.resp"
for _ in $(seq 1 2000); do printf 'GET /v1/ids/uuidv7?count=10000 HTTP/1.1\r\nHost: t\r\n\r\n'; done >"$T_DIR/flood.http"
tlsio "$RESP_PORT" "flood:$T_DIR/flood.resp" "mark:$T_DIR/flooded.resp" "wait:$T_DIR/stop" >/dev/null &
track $!
tlsio "$HTTP_PORT" "flood:$T_DIR/flood.http" "mark:$T_DIR/flooded.http" "wait:$T_DIR/stop" >/dev/null &
track $!
wait_until 30 test -e "$T_DIR/flooded.resp" -a -e "$T_DIR/flooded.http"
hwm1=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
expect "two TLS clients that send without reading: memory stays bounded (peak RSS $hwm0 KiB before, $hwm1 KiB after; at most +64 MiB)" \
    "$hwm1" -lt $((hwm0 + 65536))
http "... and others are served meanwhile" -L "$ULID" -n 1 -- /v1/ids/ulid
# The flooding client and these two take the three HTTP connections.
exec {keep1}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
exec {keep2}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
sleep 0.3
check "over --max-connections, a TLS client's /healthz is answered all the same (a probe over the limit)" \
    -o ok -- curl -s "$BASE/healthz"
check "... and any other request gets the 503, over TLS" \
    -O '\{"error": "too many open connections"\}.?' -- curl -s "$BASE/v1/ids/ulid"
exec {keep1}>&-
exec {keep2}>&-
sleep 0.3
expect "... counted as refused at the limit (the probe is not)" \
    "$(metric 'idmint_connections_refused_total{protocol="http",reason="limit"}')" = 1
touch "$T_DIR/stop"
wait_until 10 test "$(metric 'idmint_connections_open')" = 1
http "the server serves on" -o ok -- /healthz

# An idle TLS connection's memory (after its handshake): 200 connections
# held open by one client. docs/idmintd.md gives 16.5 KB (a plain one
# costs 1.2 KB; OpenSSL keeps 14 KB between records, 7.6 KB of it the SSL
# object). Not judged under AddressSanitizer, whose redzones and quarantine
# are most of what it would measure.
cat >"$T_DIR/hold.py" <<'EOF'
import socket, ssl, sys, time
port, ca, n, tls = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "tls"
ctx = ssl.create_default_context(cafile=ca)
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if tls:
        s = ctx.wrap_socket(s, server_hostname="localhost")
    s.sendall(b"PING\r\n")
    assert s.recv(100) == b"+PONG\r\n"
    socks.append(s)
print("held", flush=True)
time.sleep(30)
EOF
stop_server TERM
start_server --tls-cert "$CERT" --tls-key "$KEY"
rss0=$(rss_kib "$SRV_PID")
timeout 40 python3 "$T_DIR/hold.py" "$RESP_PORT" "$CA" 200 tls >"$T_DIR/hold.out" &
holder=$!
track $holder
wait_until 20 grep -q held "$T_DIR/hold.out"
rss1=$(rss_kib "$SRV_PID")
per_conn=$(((rss1 - rss0) * 1024 / 200))
echo "memory per idle TLS connection (RESP, after PING): $per_conn bytes" >&2
if ! grep -qa __asan_init "$IDMINTD"; then
    expect "an idle TLS connection costs less than 24 KiB ($per_conn bytes)" "$per_conn" -lt $((24 * 1024))
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
stop_server TERM
expect "exit 0" "$SRV_STATUS" = 0

# docs/idmintd.md: "a handshake must be complete within --header-timeout of
# the accept, on both ports". A client that connects and sends half a
# ClientHello (or nothing) is closed, RESP port included, whose idle timeout
# is off by default.
start_server --tls-cert "$CERT" --tls-key "$KEY" --header-timeout 1000
for port in "$RESP_PORT" "$HTTP_PORT"; do
    printf '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' | raw "$port" 8 >/dev/null
    expect "a handshake stalled halfway on port $port is closed (raw gives up after 8 s)" "$?" = 0
done
expect "... counted as request timeouts" "$(($(metric 'idmint_request_timeouts_total{protocol="resp"}') + $(metric 'idmint_request_timeouts_total{protocol="http"}')))" = 2
stop_server TERM
finish
