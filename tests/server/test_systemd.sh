# test_systemd.sh - idmintd as systemd runs it, without systemd:
#   - `idmintd --check-config`: exit 0 for a valid file; for a bad one,
#     every problem with its line number (a syntax error does not hide the
#     lines after it) and exit 1, as nginx -t does;
#   - the readiness protocol (sd_notify(3)) on a datagram socket of the
#     test's own as $NOTIFY_SOCKET (a path, and an abstract '@' name):
#     READY=1 only once /readyz would answer 200 (not while every node of a
#     one-node range is held by another server: STATUS= names that), then
#     STATUS=ready, and STOPPING=1 when SIGTERM starts the drain;
#   - socket activation (systemd-socket-activate, as a .socket unit would):
#     listeners given as systemd:NAME (or systemd:N, the socket's place)
#     serve on the sockets passed, TCP and Unix; the token rule applies to
#     the address systemd bound; a missing socket is a clear error;
#   - the log on journald's stream ($JOURNAL_STREAM naming stderr's device
#     and inode): each line starts with its syslog priority (<4> warn, <6>
#     info) and carries no time stamp; elsewhere, as before.
# Usage: bash tests/server/test_systemd.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

# ---- --check-config ---------------------------------------------------------------------

cat >"$T_DIR/good.conf" <<'EOF'
# a valid file
http = 127.0.0.1:8080
resp = "127.0.0.1:6380"
layout = discord
max-count 5000
EOF
check "idmintd(8) --check-config: a valid file: exit 0, saying so" -s 0 \
    -O "idmintd: $T_DIR/good.conf: the settings are valid" \
    -- "$IDMINTD" --check-config --config "$T_DIR/good.conf"
cat >"$T_DIR/bad.conf" <<'EOF'
# every problem is reported
http = 127.0.0.1:8080
bogus = 1
node = 99999
max-count
"quoted-key = 1
max-count = many
layout = discord
tls-cert = /etc/ssl/x.pem
EOF
"$IDMINTD" --check-config --config "$T_DIR/bad.conf" >"$T_DIR/bad.out" 2>"$T_DIR/bad.err"
expect "a bad file: exit 1" "$?" = 1
expect "... nothing on stdout" "$(cat "$T_DIR/bad.out")" = ''
B=$T_DIR/bad.conf
expect "... every problem with its line number, in order, the lines after a syntax error too" \
    "$(cat "$T_DIR/bad.err")" = "idmintd: $B:3: unknown setting 'bogus'
idmintd: $B:5: missing value for 'max-count' (write \"max-count = value\")
idmintd: $B:6: invalid character '\"' in key at column 1 (keys are lowercase letters, digits and '-')
idmintd: $B:7: invalid max-count 'many': not a whole number (expected 1 to 10000000)
idmintd: $B:8: --node 99999 is out of range 0..1023 for layout discord
idmintd: $B:9: --tls-cert and --tls-key go together: --tls-key is missing
idmintd: $B: 6 problems found"
check "a missing file: exit 1, named" -s 1 \
    -O $'idmintd: cannot open config file /nonexistent/idmintd.conf: No such file or directory\nidmintd: /nonexistent/idmintd.conf: 1 problem found' \
    --sh "'$IDMINTD' --check-config --config /nonexistent/idmintd.conf 2>&1"
check "the command line's settings are checked too" -s 1 \
    -O $'idmintd: --node 5000 is out of range 0..1023 for layout twitter\nidmintd: the command line: 1 problem found' \
    --sh "'$IDMINTD' --check-config --node 5000 2>&1"
check "... and a flag mends the file's setting (flags win)" -s 0 -O '.*the settings are valid.*' \
    -- "$IDMINTD" --check-config --config "$T_DIR/good.conf" --node 5
check "without --check-config, the first problem stops the start (exit 2)" -s 2 \
    -O "idmintd: $B:3: unknown setting 'bogus'" --sh "'$IDMINTD' --config '$B' 2>&1"

# ---- sd_notify ----------------------------------------------------------------------------

# listen ADDR OUT: a datagram socket at ADDR (a path, or @name: abstract)
# writing each message it receives to OUT, one per record, "---" between.
listen() {
    python3 - "$1" "$2" <<'PY' &
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
open(out + ".bound", "w").close()
while True:
    msg = s.recv(65536).decode()
    with open(out, "a") as f:
        f.write(msg + "\n---\n")
PY
    track $!
    wait_until 5 test -e "$2.bound"
}
got() {
    cat "$1" 2>/dev/null
}
# listening PORT: something listens on 127.0.0.1:PORT (systemd-socket-activate
# binds before it waits; a connection made earlier would be refused, and the
# activator would wait for ever).
listening() {
    ss -Hltn "sport = :$1" | grep -q .
}

listen "$T_DIR/notify.sock" "$T_DIR/n1"
# A first server holds node 0 of a one-node range: the second waits.
start_server --node-range 0..0 --state-dir "$T_DIR/state.h"
holder=$SRV_PID
start_server --env "NOTIFY_SOCKET=$T_DIR/notify.sock" --node-range 0..0 --state-dir "$T_DIR/state.w"
wait_until 5 grep -q 'STATUS=' "$T_DIR/n1"
http "the second server is not ready (its node is held)" -s 503 -- /readyz
expect "idmintd(8): no READY=1 while /readyz says 503" "$(got "$T_DIR/n1" | grep -c '^READY=1$')" = 0
expect "... a STATUS= line names what it waits for (the holder)" \
    "$(got "$T_DIR/n1" | grep -cE "^STATUS=not ready \(node\): no snowflake node: node 0 is held by pid=$holder .*; ends with a node of 0\.\.0 freeing: .*held by node 0 \(pid=$holder host=")" = 1
kill -TERM "$holder"
wait "$holder" 2>/dev/null
wait_until 10 grep -q '^READY=1$' "$T_DIR/n1"
http "the holder gone: /readyz 200" -o ready -- /readyz
expect "READY=1 once it can mint, with STATUS=ready, in one datagram" \
    "$(got "$T_DIR/n1" | tail -n 3)" = $'READY=1\nSTATUS=ready\n---'
expect "READY=1 sent once" "$(got "$T_DIR/n1" | grep -c '^READY=1$')" = 1
stop_server TERM
expect "SIGTERM: exit 0" "$SRV_STATUS" = 0
expect "STOPPING=1 when the drain starts" "$(got "$T_DIR/n1" | tail -n 3)" = $'STOPPING=1\nSTATUS=draining\n---'

# An abstract socket name, and a server ready at once.
name="@idmint-test-$$-$RANDOM"
listen "$name" "$T_DIR/n2"
start_server --env "NOTIFY_SOCKET=$name"
wait_until 5 grep -q '^READY=1$' "$T_DIR/n2"
expect "an abstract \$NOTIFY_SOCKET: READY=1 first thing" "$(got "$T_DIR/n2" | head -n 3)" = $'READY=1\nSTATUS=ready\n---'
stop_server TERM
# A $NOTIFY_SOCKET nobody listens on: served anyway.
start_server --env "NOTIFY_SOCKET=$T_DIR/nobody.sock"
http "... /readyz 200" -o ready -- /readyz
check "... the failure logged once, with the reason" -O '1' \
    --sh "grep -c 'cannot notify systemd at \$NOTIFY_SOCKET: No such file or directory' '$SRV_LOG'"
stop_server TERM

# ---- socket activation --------------------------------------------------------------------

# systemd-socket-activate binds the ports (and a Unix socket), waits for a
# first connection, then runs idmintd with them as LISTEN_FDS.
act_port=$(random_port)
act_resp=$(random_port)
systemd-socket-activate -l "127.0.0.1:$act_port" -l "127.0.0.1:$act_resp" -l "$T_DIR/act.sock" \
    --fdname=http:resp:web "$IDMINTD" --http systemd:http --resp systemd:1 --memcache systemd:web \
    --state-dir "$T_DIR/state.a" --node-registry "$T_DIR/nodes" >"$T_DIR/act.log" 2>&1 &
apid=$!
track $apid
wait_until 5 listening "$act_port"
check "idmintd(8) socket activation: a port systemd bound, found by its name (systemd:http), serves HTTP" \
    -L '[0-9]+' -n 1 -- curl -s "http://127.0.0.1:$act_port/v1/ids/snowflake"
check "... one found by its place (systemd:1) serves the Redis protocol" \
    -o PONG -- redis-cli -p "$act_resp" PING
check "... and a Unix socket it bound, memcached's" -o 'VALUE uuidv7 0 36' \
    --sh "printf 'get uuidv7\r\nquit\r\n' | socat -t 2 - 'UNIX-CONNECT:$T_DIR/act.sock' | head -n 1 | tr -d '\r'"
check "... the log names each socket's own address" -O '3' \
    --sh "grep -cE 'listening for (http on 127.0.0.1:$act_port|resp on 127.0.0.1:$act_resp|memcache on unix:$T_DIR/act.sock) \(a socket systemd passed\)' '$T_DIR/act.log'"
kill -TERM $apid
SRV_PID=$apid wait_server 12
expect "... SIGTERM drains as ever (exit 0)" "$SRV_STATUS" = 0
expect "... and the Unix socket is systemd's: left in place" "$(test -S "$T_DIR/act.sock" && echo kept)" = kept
check "systemd:NAME with no sockets passed: exit 1, saying what to do" -s 1 \
    -O "idmintd: --http systemd:http: no sockets were passed \(LISTEN_PID and LISTEN_FDS are not set: start idmintd through its .socket unit\)" \
    --sh "'$IDMINTD' --http systemd:http --resp off --state-dir none 2>&1"
# refused_activation ADDR NAME LOG: systemd-socket-activate binds ADDR as
# NAME and runs idmintd with --http systemd:http on its first connection;
# idmintd must refuse to start: SRV_STATUS is its exit status, LOG its output.
refused_activation() {
    local pid
    systemd-socket-activate -l "$1" --fdname="$2" "$IDMINTD" --http systemd:http --resp off \
        --state-dir none --node-registry "$T_DIR/nodes" >"$3" 2>&1 &
    pid=$!
    track $pid
    wait_until 5 listening "${1##*:}"
    curl -s -m 5 -o /dev/null "http://127.0.0.1:${1##*:}/healthz"
    SRV_PID=$pid wait_server 12
}
refused_activation "0.0.0.0:$(random_port)" http "$T_DIR/wide.log"
expect "a socket systemd bound beyond loopback is held to the token rule: exit 2" "$SRV_STATUS" = 2
check "... naming the address systemd bound" -O '.*refusing to listen on 0\.0\.0\.0:[0-9]+ without --auth-token-file.*' \
    -- cat "$T_DIR/wide.log"
refused_activation "127.0.0.1:$(random_port)" other "$T_DIR/nope.log"
expect "a name no socket has: exit 1" "$SRV_STATUS" = 1
check "... with the names passed" -O ".*systemd:http: no socket of that name was passed \(LISTEN_FDNAMES 'other'.*" \
    -- cat "$T_DIR/nope.log"
check "--check-config takes systemd:NAME, and refuses a bad one" -s 1 \
    -O ".*invalid systemd:NAME 'systemd:a/b'.*" --sh "'$IDMINTD' --check-config --http systemd:a/b 2>&1"

# ---- journald's stream ----------------------------------------------------------------------

# $JOURNAL_STREAM names the log file itself (device:inode), as it names
# journald's socket under systemd; a second server's stderr is another
# file, which the variable does not name.
: >"$T_DIR/journal.log"
: >"$T_DIR/plain.log"
stream=$(stat -c '%d:%i' "$T_DIR/journal.log")
env JOURNAL_STREAM="$stream" "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off \
    --state-dir "$T_DIR/state.k" --node-registry "$T_DIR/nodes" 2>>"$T_DIR/journal.log" &
kpid=$!
track $kpid
env JOURNAL_STREAM="$stream" "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off \
    --state-dir "$T_DIR/state.p" --node-registry "$T_DIR/nodes" 2>>"$T_DIR/plain.log" &
ppid_=$!
track $ppid_
wait_until 5 grep -q 'ready (pid' "$T_DIR/journal.log"
wait_until 5 grep -q 'ready (pid' "$T_DIR/plain.log"
kill -TERM $kpid $ppid_
wait $kpid $ppid_ 2>/dev/null
expect "idmintd(8): on journald's stream every line starts with its priority, with no time stamp" \
    "$(grep -cvE '^<[3467]>idmintd (error|warn|info|debug): ' "$T_DIR/journal.log")" = 0
expect "... info as <6> (the start, the stop)" \
    "$(grep -c "^<6>idmintd info: idmintd .* ready (pid $kpid)" "$T_DIR/journal.log"):$(grep -c '^<6>idmintd info: stopped$' "$T_DIR/journal.log")" = 1:1
expect "... and a stderr that is not the stream named keeps its time stamps" \
    "$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z idmintd (error|warn|info|debug): ' "$T_DIR/plain.log"):$(grep -c 'ready (pid' "$T_DIR/plain.log")" = 0:1

finish
