# test_pauses_clock.sh - a pause in minting explained (docs/idmintd.md,
# "Pauses, explained"), for the clock: idmintd restarted with its clock
# (libfaketime, stopped) 4 s behind the mark a clean stop left. /readyz,
# /v1/node, INFO, the log and /metrics say why, since when, what ends it
# and the remaining ms, exactly; the clock set right ends it by itself.
# Not in the sanitizer builds (libfaketime and ASan's runtime do not mix:
# tests/CMakeLists.txt); test_pauses.sh covers the other causes there.
# Usage: bash tests/server/test_pauses_clock.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/server/pauses.sh
. "$(dirname "$0")/pauses.sh"

require_faketime test_pauses_clock.sh

# ---- 1. the clock behind the mark ---------------------------------------------------------

step_clock +0
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state.c"
last=$(curl -s "$BASE/v1/ids/snowflake")
expect "a snowflake before the restart" "$last" != ''
expect "minting from the start: nothing paused (/metrics idmint_paused{cause=\"clock\"})" \
    "$(metric_of 'idmint_paused{cause="clock"}')" = 0
stop_server TERM
# Restarted with the clock stopped 4 s before that ID (the mark a clean stop
# leaves): it waits for the clock, 4,000 ms less the 10 ms of --max-rewind.
last_ms=$("$IDMINT" inspect --json "$last" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')
freeze_clock $((last_ms - 4000))
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state.c"
http "idmintd(8): /readyz while the clock is behind the mark: why, since when, what ends it, the remaining ms" \
    -s 503 -O $'waiting for the clock to reach the time high-water mark of [^\n]+ \\(4000 ms ahead\\)\npaused since [0-9T:.Z-]+ \\([0-9]+ ms, clock\\)\nends with: the clock reaching 10 ms before the latest time used \\(3990 ms from now, unless it is stepped\\)\nexpected in about 3990 ms' \
    -- /readyz
http "/readyz as JSON (Accept: application/json): the pause as an object" -s 503 \
    -O '\{"ready": false, "pause": \{"cause": "clock", "class": "the clock is behind the time used", "since": "[0-9T:.Z-]+", "paused_ms": [0-9]+, "eta_ms": [0-9]+, "why": "waiting for the clock[^"]*", "ends": "the clock reaching[^"]*"\}\}' \
    -- /readyz -H 'Accept: application/json'
http "/v1/node says the same under \"pause\"" \
    -O '.*"pause": \{"cause": "clock", "class": "[^"]*", "since": "[^"]*", "paused_ms": [0-9]+, "eta_ms": [0-9]+, "why": "[^"]*", "ends": "[^"]*"\}\}' \
    -- /v1/node
check "INFO: pause_cause and pause_ms" -O '.*pause_cause:clock pause_ms:[0-9]+.*' \
    --sh "redis-cli -p $RESP_PORT INFO | tr -d '\r' | paste -sd ' '"
expect "/metrics: idmint_paused{cause=\"clock\"} 1 while paused" "$(metric_of 'idmint_paused{cause="clock"}')" = 1
expect "... and no other cause" "$(metric_of 'idmint_paused{cause="node"}')" = 0
expect "the log says once that minting paused, why and what ends it" \
    "$(grep -c 'minting paused (clock): waiting for the clock to reach the time high-water mark.*; ends with the clock reaching.*(expected in about [0-9]* ms)' "$SRV_LOG")" = 1
# The clock set right: the pause ends by itself.
step_clock +0
wait_until 5 ready
ended "the clock caught up" clock
http "... /readyz as JSON: no pause" -o '{"ready": true, "pause": null}' -- /readyz -H 'Accept: application/json'
http "... /v1/node: \"pause\": null" -O '.*"pause": null\}' -- /v1/node
expect "/metrics: idmint_paused{cause=\"clock\"} 0 again" "$(metric_of 'idmint_paused{cause="clock"}')" = 0
expect "/metrics: one pause counted for the clock" "$(metric_of 'idmint_pauses_total{cause="clock"}')" = 1
expect "... and none for the node" "$(metric_of 'idmint_pause_seconds_total{cause="node"}')" = 0.000
stop_server

finish
