# test_unix.sh - --http unix:PATH and --resp unix:PATH: both protocols on
# Unix sockets (mode 0660, whatever the umask), for sidecars; the mode is
# their access control (idmintd(8), ACCESS CONTROL): they start without
# --auth-token-file or --allow-unauthenticated, idmintd's user and group
# may connect and other users may not; a socket left by a server that
# died is replaced, one a server answers on or a file that is not a socket
# is refused; the sockets go when idmintd stops.
# Usage: bash tests/server/test_unix.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

H=$T_DIR/http.sock
R=$T_DIR/resp.sock

# start_unix [OPTIONS]: idmintd on the two sockets (UX_PID, UX_LOG); waits
# for its "ready" line or its exit.
start_unix() {
    UX_LOG=$T_DIR/unix.$RANDOM.log
    (umask 000 && exec "$IDMINTD" --http "unix:$H" --resp "unix:$R" --state-dir "$T_DIR/state" "$@") \
        >"$UX_LOG" 2>&1 &
    UX_PID=$!
    track "$UX_PID"
    wait_until 10 bash -c "grep -q 'ready (pid' '$UX_LOG' || ! kill -0 $UX_PID 2>/dev/null"
}

start_unix
check "idmintd(8): --http unix:PATH makes a Unix socket of mode 0660, whatever the umask" -o 660 \
    -- stat -c %a "$H"
check "--resp unix:PATH too" -o 660 -- stat -c %a "$R"
check "HTTP over the Unix socket (curl --unix-socket)" -O '[0-9A-HJKMNP-TV-Z]{26}' \
    -- curl -s --unix-socket "$H" http://localhost/v1/ids/ulid
check "/healthz over the Unix socket" -o ok -- curl -s --unix-socket "$H" http://localhost/healthz
check "RESP over the Unix socket (redis-cli -s)" -n 2 -L '[0-9a-f-]{36}' \
    -- redis-cli -s "$R" NEXT uuidv7 2
check "CLIENT INFO names the socket as Redis does (addr=PATH:0)" -O ".*addr=$R:0 laddr=$R:0 .*" \
    -- redis-cli -s "$R" CLIENT INFO

# The socket's mode is its access control: without a token (and without
# --allow-unauthenticated) idmintd starts on it with no protected-mode
# refusal or warning, and only its user and group may connect.
check "unix: sockets without --auth-token-file: started, no protected-mode warning in the log" -o 0 \
    --sh "grep -c -i 'refusing\|unauthenticated\|without --auth-token-file' '$UX_LOG' || :"
check "the access case runs as root (id -u is 0), to connect as other users" -o 0 -- id -u
chmod 0711 "$T_DIR" # others may traverse it: the socket's own mode decides
check "a user in idmintd's group may connect (mode 0660: group rw)" -o ok -- \
    setpriv --reuid=nobody "--regid=$(id -g)" --clear-groups -- curl -s --unix-socket "$H" http://localhost/healthz
check "a user neither idmintd's nor in its group may not: connect is refused (curl exit 7)" -s 7 -o '' -- \
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- curl -s --unix-socket "$H" http://localhost/healthz
check "... nor over RESP" -s 1 -O '.*[Pp]ermission denied.*' --sh \
    "setpriv --reuid=nobody --regid=nogroup --clear-groups -- redis-cli -s '$R' PING 2>&1"
chmod 0700 "$T_DIR"

# A second idmintd on the same path (its own state directory) refuses.
"$IDMINTD" --http "unix:$H" --resp off --state-dir "$T_DIR/state2" >"$T_DIR/second.log" 2>&1
expect "A socket another server answers on is refused" "$?" = 1
check "... saying so" -O '.*unix:.*another server answers there.*' -- cat "$T_DIR/second.log"
check "... and the first still serves on it" -o ok -- curl -s --unix-socket "$H" http://localhost/healthz

kill -TERM "$UX_PID"
wait "$UX_PID"
expect "SIGTERM exits 0" "$?" = 0
expect "... and removes the sockets" "$(ls "$H" "$R" 2>/dev/null | wc -l)" = 0

# kill -9 leaves the socket files behind; the next start replaces them.
start_unix
kill -KILL "$UX_PID"
wait "$UX_PID" 2>/dev/null
expect "kill -9 leaves the socket behind" "$(stat -c %F "$H" 2>/dev/null)" = socket
start_unix
check "A socket nobody answers on is replaced at start" -o ok \
    -- curl -s --unix-socket "$H" http://localhost/healthz
kill -TERM "$UX_PID"
wait "$UX_PID"

: >"$H"
"$IDMINTD" --http "unix:$H" --resp off --state-dir "$T_DIR/state" >"$T_DIR/file.log" 2>&1
expect "A path that is a regular file is refused (never removed)" "$?" = 1
check "... saying so" -O '.*the path exists and is not a socket.*' -- cat "$T_DIR/file.log"
expect "... and the file is left alone" "$(stat -c %F "$H")" = "regular empty file"
rm -f "$H"

long=$T_DIR/$(printf 'x%.0s' {1..120})
"$IDMINTD" --http "unix:$long" --resp off --state-dir "$T_DIR/state" >"$T_DIR/long.log" 2>&1
expect "A path longer than a Unix socket takes is a clear error" "$?" != 0
check "... naming the limit" -O '.*--http: invalid unix:PATH \(a path of 1 to 107 bytes\).*' \
    -- cat "$T_DIR/long.log"
finish
