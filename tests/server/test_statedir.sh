# test_statedir.sh - one idmintd per state directory, and a mark that must
# be durable: a second idmintd started on a running one's --state-dir
# refuses to start before it touches anything (no port bound, no file
# changed), and the running one keeps serving; a state directory deleted
# under a running server makes /readyz fail with the reason, logged once;
# after a kill -9 restart the wait for the high-water mark is reported as
# such, not as a clock step; and --epoch -1000 is accepted.
# No libfaketime here (it runs in the sanitizer builds too): the restart
# case uses --reserve 3000, so that the restart comes well before the mark
# (checked), on the real clock.
# Usage: bash tests/server/test_statedir.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'

# listing DIR: what a start could change in DIR: every entry's name, type,
# mode, size, inode and modification time (ns), and every file's checksum;
# except mark's size, inode, time and content, which the running server
# itself may rewrite (or replace) at any time (hwm_mark checks that the mark
# is not lowered).
listing() {
    (
        cd "$1" || exit 1
        find . -mindepth 1 ! -name mark -printf '%P %y %m %s %i %T@\n'
        find . -mindepth 1 -name mark -printf '%P %y %m\n'
        find . -type f ! -name mark -exec md5sum {} +
    ) | sort
}
ready() {
    curl -fs -o /dev/null "$BASE/readyz"
}

# --- a second start on a running server's state directory ----------------------------

SD=$T_DIR/state
start_server --state-dir "$SD"
http "the first idmintd serves snowflakes" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
http "... and is ready" -- /readyz
load_out=$T_DIR/load.out
"$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=5' --conns 2 --interval-ms 2 \
    --duration-ms 60000 --quiet-phases --ids "$T_DIR/load.ids" >"$load_out" 2>"$T_DIR/load.err" &
load=$!
track $load
sleep 0.3
before=$(listing "$SD")
mark_before=$(hwm_mark "$SD")
# Given the first one's own ports: a second idmintd that bound (or tried to
# bind) them before looking at the state directory fails with "cannot
# listen" instead of naming the directory.
timeout 15 "$IDMINTD" --http "127.0.0.1:$HTTP_PORT" --resp "127.0.0.1:$RESP_PORT" --state-dir "$SD" \
    >"$T_DIR/second.log" 2>&1
rc=$?
expect "a second idmintd on a running one's --state-dir refuses to start (exit status non-zero, not a timeout: $rc)" \
    "$( ((rc != 0 && rc != 124 && rc != 137)) && echo refused)" = refused
check "... with a message naming the directory and that another idmintd holds it" \
    -O ".*[Aa]nother idmintd.*" --sh "grep -F -- '$SD' '$T_DIR/second.log'"
check "... before it binds its ports (given the running one's ports, it says nothing of listening)" \
    -o '' --sh "grep -iE 'cannot listen|already in use' '$T_DIR/second.log'; true"
# With free ports of its own: still refused, nothing bound, nothing ready.
p1=$(random_port)
p2=$(random_port)
timeout 15 "$IDMINTD" --http "127.0.0.1:$p1" --resp "127.0.0.1:$p2" --state-dir "$SD" >"$T_DIR/third.log" 2>&1
rc=$?
expect "... also with free ports of its own (exit status $rc)" \
    "$( ((rc != 0 && rc != 124 && rc != 137)) && echo refused)" = refused
check "... naming the directory and the other idmintd" -O ".*[Aa]nother idmintd.*" \
    --sh "grep -F -- '$SD' '$T_DIR/third.log'"
check "... and without listening or getting ready" -o '' \
    --sh "grep -iE 'listening|ready \(pid' '$T_DIR/third.log'; true"
after=$(listing "$SD")
expect "... it changes nothing in the state directory (no file created, removed, written or touched)" \
    "$after" = "$before"
mark_after=$(hwm_mark "$SD")
expect "... and does not lower the running one's mark ($mark_after >= $mark_before)" \
    "$( ((mark_after >= mark_before)) && echo kept)" = kept
sleep 1.5
http "the running one stays ready (/readyz 200)" -- /readyz
http "... and serves snowflakes" -L "$SNOWFLAKE" -n 3 -- '/v1/ids/snowflake?count=3'
kill -TERM $load
wait $load
load_rc=$?
expect "... its clients saw every reply whole, valid, unique and increasing" "$load_rc:$(cat "$T_DIR/load.err")" = 0:
expect "... and were served throughout" "$(kv "$load_out" s200)" -gt 100
expect "... never 503 (nor any other error) because of the second start" \
    "$(kv "$load_out" s503):$(kv "$load_out" s4xx):$(kv "$load_out" sother)" = 0:0:0
stop_server TERM
expect "the first one stops cleanly (exit 0)" "$SRV_STATUS" = 0
timeout 15 "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off --state-dir "$SD" >"$T_DIR/fourth.log" 2>&1 &
fourth=$!
track $fourth
wait_until 10 grep -q 'ready (pid' "$T_DIR/fourth.log"
check "... and then a new one can use the directory" -O '.*ready \(pid.*' -- grep 'ready (pid' "$T_DIR/fourth.log"
kill -TERM $fourth
wait $fourth

# --- the state directory deleted under a running server --------------------------------
# idmintd looks every second: a deleted directory is made again (with the
# lock and a mark no lower than the durable one), and said once; one that
# cannot be made again (a file in its place) makes /readyz 503 with the
# reason, logged once however many requests come, until it can.

SD=$T_DIR/state2
start_server --state-dir "$SD"
http "a fresh state directory: ready" -- /readyz
http "... serves snowflakes" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
durable=$(durable_ms)
rm -rf "$SD"
remade() { [ -s "$SD/mark" ] && [ -e "$SD/lock" ]; }
wait_until 10 remade
check "state directory deleted: it is made again with the mark" -s 0 -- test -s "$SD/mark"
expect "... the mark in it is not below the durable one ($(hwm_mark "$SD") >= $durable)" \
    "$(hwm_mark "$SD")" -ge "$durable"
check "... and the lock is held again (a second idmintd is refused)" -s 1 -- \
    timeout 10 "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp "127.0.0.1:$(random_port)" \
    --state-dir "$SD"
wait_until 5 grep -q 'made it again' "$SRV_LOG"
check "... said once in the log" -o 1 -- grep -c 'made it again' "$SRV_LOG"
http "... /readyz is 200" -- /readyz
http "... snowflakes are served" -L "$SNOWFLAKE" -n 3 -- '/v1/ids/snowflake?count=3'

log_lines=$(wc -l <"$SRV_LOG")
# A file where the directory was: it cannot be made again. (idmintd may
# make the directory again between the two steps: then they are retried.)
for _ in 1 2 3 4 5; do
    rm -rf "$SD"
    : 2>/dev/null >"$SD" && break
done
not_ready_now() {
    curl -s -o /dev/null "$BASE/v1/ids/snowflake?count=1000"
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 503 ]
}
wait_until 10 not_ready_now
http "state directory replaced by a file: /readyz is 503 with the reason (the state directory / high-water mark)" \
    -s 503 -O '.*([Ss]tate dir|high-water mark).*' -- /readyz
check "... and stays so" -o 503 -- curl -s -o /dev/null -w '%{http_code}\n' "$BASE/readyz"
"$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=100' --path /readyz \
    --path '/v1/ids/snowflake' --conns 6 --pipeline 10 --duration-ms 1500 --quiet-phases \
    >"$T_DIR/gone.out" 2>"$T_DIR/gone.err"
requests=$(kv "$T_DIR/gone.out" requests)
expect "... many requests meanwhile ($requests)" "${requests:-0}" -ge 200
http "... a request past the durable mark gets 503 naming it, not a 500" -s 503 \
    -O '.*high-water mark.*' -- '/v1/ids/snowflake?count=1'
tail -n +$((log_lines + 1)) "$SRV_LOG" >"$T_DIR/gone.log"
n_logged=$(grep -ciE 'state dir|high-water|hwm' "$T_DIR/gone.log")
expect "... the error is logged" "$n_logged" -ge 1
expect "... once, not per request: at most a few lines after $requests requests (got $n_logged: $(head -n 3 "$T_DIR/gone.log" | cut -c 1-200 | paste -sd '|'))" \
    "$n_logged" -le 5
rm -f "$SD"
ready_now() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ]; }
wait_until 10 ready_now
http "... once the directory can be made again: ready by itself" -- /readyz
http "... and serving" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
stop_server TERM
expect "... it still stops when asked" "$SRV_STATUS" = 0

# --- a kill -9 restart: the wait is for the high-water mark -------------------------------

SD=$T_DIR/state3
start_server --reserve 3000 --state-dir "$SD"
http "--reserve 3000: serves snowflakes" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
before=$(curl -s "$BASE/v1/ids/snowflake")
stop_server KILL
start_server --reserve 3000 --state-dir "$SD"
http "restarted after kill -9 before the mark: /readyz is 503 and says it waits for the high-water mark" \
    -s 503 -O '.*high-water mark of the previous run, recorded in the state directory.*' -- /readyz
readyz_body=$(curl -s "$BASE/readyz")
expect "... not that the clock moved back" "$(grep -ciE 'clock (moved|is) .*back|behind the latest time' <<<"$readyz_body")" = 0
http "... a snowflake request then gets 503 saying it waits for the high-water mark" \
    -s 503 -O '.*high-water mark.*' -- /v1/ids/snowflake
sf_body=$(curl -s "$BASE/v1/ids/snowflake")
expect "... not that the clock moved back ($sf_body)" "$(grep -ciE 'clock moved back|rewind' <<<"$sf_body")" = 0
mark=$(hwm_mark "$SD")
expect "(these checks came before the mark: $(now_ms) < ${mark:-missing})" "$(now_ms)" -lt "${mark:-0}"
wait_until 15 ready
http "once the clock passes the mark, ready again by itself" -- /readyz
after=$(curl -s "$BASE/v1/ids/snowflake")
expect "... and serves snowflakes above the ones before the crash ($after > $before)" \
    "$( ((${after:-0} > ${before:-0})) && echo yes)" = yes
stop_server TERM
expect "... and stops with exit 0" "$SRV_STATUS" = 0

# --- --epoch -1000 -----------------------------------------------------------------------

# Last: if it is refused, start_server ends the script.
start_server --layout twitter --epoch -1000 --state-dir "$T_DIR/state4"
http "--layout twitter --epoch -1000 starts and serves snowflakes" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
id=$(curl -s "$BASE/v1/ids/snowflake")
ms=$("$IDMINT" inspect --json --layout twitter --epoch -1000 "${id:-0}" | grep -Eo '"unix_ms": -?[0-9]+' | grep -Eo -- '-?[0-9]+$')
now=$(now_ms)
expect "... whose time, decoded with the same epoch, is the time now (within 10 min: $ms, now $now)" \
    "$( ((${ms:-0} > now - 600000 && ${ms:-0} < now + 600000)) && echo yes)" = yes
stop_server TERM
expect "exit 0 at the end" "$SRV_STATUS" = 0
finish
