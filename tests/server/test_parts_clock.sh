# test_parts_clock.sh - a reply sent in parts whose rest is refused: the
# clock steps back past --max-rewind while a client that asked for a
# million snowflakes has read only part of them. The reply is cut short
# (the connection closes after the IDs already sent, every one of them
# valid), never completed with IDs from a rewound clock, and the refusal is
# counted and logged. Runs under libfaketime, so not in the sanitizer
# builds (tests/CMakeLists.txt).
# Usage: bash tests/server/test_parts_clock.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

require_faketime test_parts_clock.sh
step_clock +0
start_server "${FAKETIME_ENV[@]}" --max-count 1000000

# The client: a small receive buffer, the request, then nothing read until
# the clock has been stepped back 10 s; then it reads to the end.
cat >"$T_DIR/client.py" <<'PY'
import os, socket, sys, time
port, clock = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", port))
s.sendall(b"*3\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n$7\r\n1000000\r\n")
time.sleep(1.0)
with open(clock + ".new", "w") as f:
    f.write("-10s\n")
os.rename(clock + ".new", clock)
data = b""
s.settimeout(20)
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    data += d
lines = data.split(b"\r\n")
ids = [int(l) for l in lines[2::2] if l]
print(lines[0].decode(), len(ids), int(len(ids) == len(set(ids)) and ids == sorted(ids)))
PY
read -r header n ordered < <(timeout 30 python3 "$T_DIR/client.py" "$RESP_PORT" "$T_DIR/faketime")
expect "The reply in parts announced its whole length" "$header" = '*1000000'
expect "idmintd(8): a reply in parts that is refused midway is cut short (the connection closes)" \
    "$n" -lt 1000000
expect "... after the IDs already sent" "$n" -gt 0
expect "... each of them valid: unique and in order" "$ordered" = 1
check "The cut is logged" -O '.*a snowflake reply sent in parts was cut short: .*' -- cat "$SRV_LOG"
expect "... and counted as a refusal" "$(metric 'idmint_requests_total{route="resp",status="5xx"}')" = 1
check "Other requests still get the rewind's error, whole" -O '.*ERR.*' \
    -- redis-cli -p "$RESP_PORT" NEXT snowflake 5
step_clock +0
stop_server
expect "SIGTERM exits 0" "$SRV_STATUS" = 0
finish
