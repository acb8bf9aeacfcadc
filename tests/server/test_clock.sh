# test_clock.sh - the clock discipline for real: idmintd runs under
# libfaketime (LD_PRELOAD, its offset read from a file on every clock
# read) while clients load it over keep-alive connections; its clock steps
# back 5 ms, five times (waited out), then 5 s (refused: 503 + Retry-After, RESP
# errors, /readyz failing), then forward again (served again by itself).
# Then restarts with the same --state-dir and the clock set back, after a
# SIGTERM (3 s behind the last ID) and after a SIGKILL (0.5 s back). Every ID a client
# received is checked: none repeated, each connection strictly increasing,
# and every snowflake minted after a restart above every one before.
# Usage: bash tests/server/test_clock.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'
require_faketime test_clock.sh

step_clock +0
start_server "${FAKETIME_ENV[@]}"

# load NAME [LOADCLIENT OPTIONS]: starts a client in the background; its
# summary goes to $T_DIR/NAME.out, its IDs to $T_DIR/NAME.ids.
declare -A CLIENT
load() {
    local name=$1
    shift
    "$LOADCLIENT" "$@" --ids "$T_DIR/$name.ids" >"$T_DIR/$name.out" 2>"$T_DIR/$name.err" &
    CLIENT[$name]=$!
    track $!
}
# phase: ends the clients' current phase (each prints its counts).
phase() {
    local c
    for c in "${CLIENT[@]}"; do
        kill -USR1 "$c"
    done
    sleep 0.05
}
# pv NAME PHASE KEY: a count of a client's phase.
pv() {
    grep "^phase $2:" "$T_DIR/$1.out" | grep -Eo " $3=[0-9]+" | sed 's/.*=//'
}
# finish_clients: stops the clients and waits; their exit statuses go to
# CLIENT_RC[NAME].
declare -A CLIENT_RC
finish_clients() {
    local name
    for name in "${!CLIENT[@]}"; do
        kill -TERM "${CLIENT[$name]}" 2>/dev/null
    done
    for name in "${!CLIENT[@]}"; do
        wait "${CLIENT[$name]}"
        CLIENT_RC[$name]=$?
    done
    CLIENT=()
}

H=127.0.0.1:$HTTP_PORT
R=127.0.0.1:$RESP_PORT
load sf --http "$H" --path '/v1/ids/snowflake?count=5' --path /api/snowflake/get/k --conns 6 --pipeline 4 \
    --interval-ms 1 --duration-ms 30000
load v7 --http "$H" --path '/v1/ids/uuidv7?count=3' --path '/v1/ids/ulid?count=3' --path '/v1/ids/ksuid?count=2' \
    --conns 6 --pipeline 4 --interval-ms 1 --duration-ms 30000
load rsf --resp "$R" --cmd 'NEXT snowflake 5' --cmd 'NEXT snowflake' --conns 4 --pipeline 4 --interval-ms 1 \
    --duration-ms 30000
load rv7 --resp "$R" --cmd 'NEXT uuidv7 2' --cmd 'NEXT ulid' --conns 2 --pipeline 4 --interval-ms 1 --duration-ms 30000

sleep 0.7
phase # 0: the clock as it is
waits0=$(metric idmint_clock_rewind_waits_total)
# Five steps of 5 ms back (a step goes unnoticed if no snowflake is
# minted in the 5 ms after it, as when the server is not scheduled then).
for offset in -0.005 -0.010 -0.015 -0.020 -0.025; do
    step_clock "$offset"
    sleep 0.2
done
phase # 1: 5 ms back, five times
waits1=$(metric idmint_clock_rewind_waits_total)
# 5 s: the checks of phase 2 take over a second on a loaded machine, and
# phase 3 must end before the clock has caught up.
step_clock -5
sleep 0.3
phase # 2: 5 s back (settling)
http "a backwards step beyond the tolerance: requests get HTTP 503 with Retry-After and a JSON error naming the rewind" \
    -s 503 -h 'Retry-After: [1-9][0-9]*' -h 'Content-Type: application/json' \
    -O '\{"error": "clock moved back by [0-9]+ ms \(tolerance 10 ms\)[^"]*"\}' -- /v1/ids/snowflake
http "... the Leaf route in Leaf's words: 500, Result{id=-3} (Leaf's clock moved back)" -s 500 \
    -O '.*"message":"Result\{id=-3, status=EXCEPTION\}","path":"/api/snowflake/get/k"\}' -- /api/snowflake/get/k
http "/readyz: 503 while the clock is behind the latest time used by more than the tolerance" \
    -s 503 -O '.*behind the latest time used.*' -- /readyz
check "... a RESP error on the Redis port, naming the rewind" -O 'ERR clock moved back by [0-9]+ ms.*' \
    --sh "redis-cli -p $RESP_PORT NEXT snowflake | grep -v '^\$'"
check "INFO says not ready" -O '.*ready:0.*' --sh "redis-cli -p $RESP_PORT INFO | tr -d '\r' | paste -sd ' '"
http "UUIDv7, ULID and KSUID never refuse: they count on from the last value" \
    -L '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}' -n 3 -- '/v1/ids/uuidv7?count=3'
http "/healthz: 200 while the process serves, even while the clock is refused" -- /healthz
sleep 0.5
phase # 3: 5 s back (refused)
step_clock +0
sleep 0.3
phase # 4: forward again (settling)
http "after the clock has caught up, idmintd serves again by itself (/readyz)" -- /readyz
http "... snowflakes" -L "$SNOWFLAKE" -n 2 -- '/v1/ids/snowflake?count=2'
sleep 0.7
phase # 5: served again
finish_clients

for c in sf v7 rsf rv7; do
    expect "$c: every reply whole and valid, no ID repeated, each connection strictly increasing" \
        "${CLIENT_RC[$c]}:$(cat "$T_DIR/$c.err")" = '0:'
    expect "$c: the clock as it is: served" "$(pv $c 0 s200)" -gt 10
    expect "$c: the clock as it is: nothing refused" "$(pv $c 0 s503):$(pv $c 0 s4xx)" = 0:0
    expect "$c: 5 ms back (within --max-rewind 10): served" "$(pv $c 1 s200)" -gt 10
    expect "$c: 5 ms back: nothing refused (the step is waited out)" "$(pv $c 1 s503):$(pv $c 1 s4xx)" = 0:0
    expect "$c: forward again: served" "$(pv $c 5 s200)" -gt 10
    expect "$c: forward again: nothing refused" "$(pv $c 5 s503):$(pv $c 5 s4xx)" = 0:0
done
expect "a backwards step within tolerance waits (idmint_clock_rewind_waits_total grows over five 5 ms steps)" "$waits1" -gt "$waits0"
for c in sf rsf; do
    expect "$c: 5 s back: snowflakes refused" "$(pv $c 3 s503)" -gt 0
    expect "$c: 5 s back: no snowflake served" "$(pv $c 3 s200)" = 0
    expect "$c: 5 s back: every refusal names the clock" "$(pv $c 3 clock503)" = "$(pv $c 3 s503)"
    expect "$c: 5 s back: every refusal says when to retry (Retry-After / 'retry in')" \
        "$(pv $c 3 retry503)" = "$(pv $c 3 s503)"
done
for c in v7 rv7; do
    expect "$c: 5 s back: UUIDv7, ULID and KSUID never refuse" "$(pv $c 3 s503)" = 0
    expect "$c: 5 s back: UUIDv7, ULID and KSUID are served" "$(pv $c 3 s200)" -gt 10
done
expect "no ID repeated across all clients and connections" \
    "$(cat "$T_DIR"/{sf,v7,rsf,rv7}.ids | sort | uniq -d | head -n 3)" = ''
expect "/metrics: refusals counted" "$(metric idmint_clock_refusals_total)" -gt 0
expect "/metrics: rewinds seen" "$(metric idmint_clock_rewinds_total)" -gt 0
refusal_lines=$(grep -c 'refusing to mint' "$SRV_LOG")
expect "refusals are logged (warn)" "$refusal_lines" -gt 0

# --- restart with the clock set back (after SIGTERM) ---------------------------------------

old_max=$(cat "$T_DIR/sf.ids" "$T_DIR/rsf.ids" | sort -n | tail -n 1)
stop_server TERM
expect "SIGTERM under libfaketime: exit 0" "$SRV_STATUS" = 0
# 3 s behind the last snowflake handed out, however long the stop took.
old_ms=$("$IDMINT" inspect --json "$old_max" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')
clock_at $((old_ms - 3000))
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state"
check "a restart with the clock behind the high-water mark says it is not ready" \
    -O '.*not ready yet.*' --sh "grep 'not ready yet' '$SRV_LOG'"
http "restarted 3 s back: /readyz fails" -s 503 -- /readyz
http "restarted 3 s back: snowflakes refused (503 + Retry-After)" -s 503 -h 'Retry-After: [1-9][0-9]*' -- /v1/ids/snowflake
load r1 --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=3' --conns 2 --interval-ms 5 --duration-ms 5000 \
    --quiet-phases
n=0
while [ $n -lt 60 ] && ! curl -fs -o /dev/null "$BASE/readyz"; do
    sleep 0.1
    n=$((n + 1))
done
sleep 0.3
finish_clients
expect "restarted 3 s back: every reply whole and valid, no repeat, increasing" "${CLIENT_RC[r1]}:$(cat "$T_DIR/r1.err")" = '0:'
expect "restarted 3 s back: refused at first" "$(kv "$T_DIR/r1.out" s503)" -gt 0
expect "restarted 3 s back: serves again by itself once the clock passes the mark" "$(kv "$T_DIR/r1.out" s200)" -gt 0
new_min=$(sort -n "$T_DIR/r1.ids" | head -n 1)
expect "restart after SIGTERM, clock 3 s back: every new snowflake above every old one ($new_min > $old_max)" \
    "$( ((new_min > old_max)) && echo yes)" = yes

# --- restart with the clock set back (after SIGKILL) ---------------------------------------

load k1 --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=5' --path /api/snowflake/get/k --conns 4 \
    --pipeline 8 --duration-ms 5000 --quiet-phases
load k2 --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 5' --conns 2 --pipeline 8 --duration-ms 5000 --quiet-phases
sleep 0.7
stop_server KILL
finish_clients
expect "SIGKILL while loaded (HTTP client saw only whole replies)" "$(kv "$T_DIR/k1.out" malformed):$(kv "$T_DIR/k1.out" truncated):$(kv "$T_DIR/k1.out" dups):$(kv "$T_DIR/k1.out" order)" = 0:0:0:0
expect "SIGKILL while loaded (RESP client saw only whole replies)" "$(kv "$T_DIR/k2.out" malformed):$(kv "$T_DIR/k2.out" truncated):$(kv "$T_DIR/k2.out" dups):$(kv "$T_DIR/k2.out" order)" = 0:0:0:0
old=$T_DIR/old.ids
cat "$T_DIR"/{sf,rsf,r1,k1,k2}.ids | sort -u >"$old"
old_max=$(sort -n "$old" | tail -n 1)
expect "snowflakes were minted before the crash" "$(wc -l <"$T_DIR/k1.ids")" -gt 100
# The mark on disk (STATE_DIR/mark, lib.sh's hwm_mark) is at or above the
# time of every snowflake handed out.
mark=$(hwm_mark "$T_DIR/state")
used_ms=$("$IDMINT" inspect --json "$old_max" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')
expect "the high-water mark is on disk ahead of use after a crash (mark $mark >= $used_ms)" \
    "$( ((mark >= used_ms)) && echo yes)" = yes
step_clock -3.5
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state"
load k3 --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=5' --path /api/snowflake/get/k --conns 2 \
    --interval-ms 5 --duration-ms 5000 --quiet-phases
load k4 --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 5' --conns 2 --interval-ms 5 --duration-ms 5000 --quiet-phases
n=0
while [ $n -lt 40 ] && ! curl -fs -o /dev/null "$BASE/readyz"; do
    sleep 0.1
    n=$((n + 1))
done
sleep 0.5
finish_clients
for c in k3 k4; do
    expect "restart after SIGKILL, clock 0.5 s back ($c): every reply whole and valid, no repeat, increasing" \
        "${CLIENT_RC[$c]}:$(cat "$T_DIR/$c.err")" = '0:'
    expect "restart after SIGKILL ($c): served again" "$(kv "$T_DIR/$c.out" s200)" -gt 0
done
expect "restart after SIGKILL, clock 0.5 s back: no snowflake repeats one from before" \
    "$(cat "$T_DIR"/{k3,k4}.ids | sort -u | comm -12 - "$old" | head -n 3)" = ''
new_min=$(cat "$T_DIR"/{k3,k4}.ids | sort -n | head -n 1)
expect "restart after SIGKILL, clock 0.5 s back: every new snowflake above every old one ($new_min > $old_max)" \
    "$( ((new_min > old_max)) && echo yes)" = yes
stop_server TERM
expect "SIGTERM after the crash recovery: exit 0" "$SRV_STATUS" = 0

# --- a graceful stop leaves the mark at the time last used ----------------------------------

last=$(cat "$T_DIR"/{k3,k4}.ids | sort -n | tail -n 1)
used_ms=$("$IDMINT" inspect --json "$last" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')
mark=$(hwm_mark "$T_DIR/state")
expect "after a graceful stop the mark is the time last used (mark $mark, last snowflake at $used_ms)" \
    "$( ((mark >= used_ms && mark <= used_ms + 100)) && echo yes)" = yes
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state"
http "... so a restart on the same clock does not wait (/readyz at once)" -- /readyz
http "... and mints at once" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
expect "... above every snowflake before" "$( (($(curl -s "$BASE/v1/ids/snowflake") > last)) && echo yes)" = yes
stop_server TERM
expect "exit 0 at the end" "$SRV_STATUS" = 0
finish
