# test_pauses.sh - a pause in minting explained (docs/idmintd.md, "Pauses"):
# /readyz, /v1/node, INFO, the log and /metrics say why minting stopped,
# since when, what ends it and (where known) how long that should take, for
# the three pauses an operator meets:
#   1. the clock behind the mark a restart resumed above (libfaketime): the
#      remaining ms, ending by itself once the clock reaches it;
#   2. no free node in a one-node range held by another server on the same
#      host registry: the holder named, ending when it stops;
#   3. a coordinator (a real etcd) that cannot confirm the lease (SIGSTOP):
#      the pause names the coordinator and ends when it answers again; and a
#      second server waiting for the node it holds: the holder, with the
#      time left on its lease as the expected end.
# Each pause is logged once when it starts and once when it ends, with its
# length; /metrics counts the time per cause.
# Usage: bash tests/server/test_pauses.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/coord/services.sh
. "$(dirname "$0")/../coord/services.sh"

if [ ! -e "$FAKETIME_LIB" ]; then
    echo "test_pauses.sh: $FAKETIME_LIB is missing (Debian package libfaketime)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

# metric_of NAME{LABELS}: the value of one labelled sample.
metric_of() {
    curl -s "$BASE/metrics" | grep -F "$1 " | head -n 1 | awk '{print $2}'
}
# ready: /readyz answers 200.
ready() {
    curl -fs -o /dev/null "$BASE/readyz"
}
not_ready() {
    ! ready
}
# logged REGEX: a line of the server's log matches.
logged() {
    grep -Eq "$1" "$SRV_LOG"
}
# positive VALUE: a number above 0 (a decimal fraction allowed).
positive() {
    awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'
}
# ended WHO CAUSE [END_RE]: once ready again, the log holds one start of a
# pause for CAUSE and one end (for END_RE, default CAUSE: the cause it
# ended with), and /metrics counts time paused for CAUSE.
ended() {
    local who=$1 cause=$2 end=${3:-$2} secs
    http "$who: ready again" -o ready -- /readyz
    expect "$who: the log says once that the pause began ($cause) and once that it ended, with its length" \
        "$(grep -c "minting paused ($cause)" "$SRV_LOG"):$(grep -cE "minting resumed after a pause of [0-9]+ ms \(($end)\)" "$SRV_LOG")" = 1:1
    secs=$(metric_of "idmint_pause_seconds_total{cause=\"$cause\"}")
    expect "$who: /metrics counts the time paused for the $cause ($secs s)" "$(positive "$secs" && echo yes)" = yes
}

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

# ---- 2. no free node: the holder named ----------------------------------------------------

start_server --node-range 0..0 --state-dir "$T_DIR/state.h"
holder=$SRV_PID
start_server --node-range 0..0 --state-dir "$T_DIR/state.w"
waiter=$SRV_PID
http "idmintd(8): /readyz with every node held: the holder by pid and host, and what ends the pause" -s 503 \
    -O "no snowflake node: node 0 is held by pid=$holder [^"$'\n'"]*"$'\n'"paused since [0-9T:.Z-]+ \\([0-9]+ ms, node\\)"$'\n'"ends with: a node of 0\\.\\.0 freeing: a slot frees when its holder exits \\(tried every 1000 ms\\); held by node 0 \\(pid=$holder host=[^)]*\\)" \
    -- /readyz
http "/v1/node: the pause's cause is the node, with no expected end (the holder may never stop)" \
    -O '.*"pause": \{"cause": "node", [^}]*"eta_ms": null, [^}]*\}\}' -- /v1/node
expect "/metrics: idmint_paused{cause=\"node\"} 1" "$(metric_of 'idmint_paused{cause="node"}')" = 1
# The holder stops: the waiter claims the node within a retry.
kill -TERM "$holder"
wait "$holder" 2>/dev/null
wait_until 10 ready
ended "the holder gone, the waiter" node
stop_server

# ---- 3. a coordinator that cannot confirm the lease ---------------------------------------

SVC=$T_DIR/svc
mkdir -p "$SVC"
start_etcd "$SVC" || start_failed "etcd did not start"
URL=etcd://$ETCD_URL_HOSTPORT/idmint-pauses
TTL=2
# A two-node range (a claim of exactly one node is refused at start while
# held): two servers hold it, a third waits.
start_server --node-range 5..6 --state-dir "$T_DIR/state.e0" --coord "$URL" --lease-ttl "$TTL"
e0=$SRV_PID
start_server --node-range 5..6 --state-dir "$T_DIR/state.e1" --coord "$URL" --lease-ttl "$TTL"
e1=$SRV_PID
e1_ports="$HTTP_PORT $RESP_PORT $BASE $SRV_LOG"
http "two servers hold nodes 5 and 6 through etcd and mint" -L '[0-9]+' -- /v1/ids/snowflake
start_server --node-range 5..6 --state-dir "$T_DIR/state.e2" --coord "$URL" --lease-ttl "$TTL"
e2=$SRV_PID
wait_until 5 logged 'minting paused \(node\)'
expect "... its log: from the start, paused for want of a node (not the coordinator, which answered)" \
    "$(grep -c 'minting paused (node)' "$SRV_LOG"):$(grep -c 'minting paused (coordinator)' "$SRV_LOG")" = 1:0
http "idmintd(8): a third server waiting for a node through etcd: the holders, and their leases' time left" -s 503 \
    -O ".*"$'\n'"ends with: a node of 5\\.\\.6 freeing: a holder's lease ending or released \\(asked every 500 ms\\); held by node 5 \\(pid=$e0 host=[^,]*, lease ends in [0-9]+ ms\\); node 6 \\(pid=$e1 host=[^,]*, lease ends in [0-9]+ ms\\)"$'\n'"expected in about [0-9]+ ms" \
    -- /readyz
http "... /v1/node: the expected end is the soonest lease's time left" \
    -O '.*"pause": \{"cause": "node", [^}]*"eta_ms": [0-9]+, [^}]*\}\}' -- /v1/node
kill -TERM "$e2" "$e0"
wait "$e2" "$e0" 2>/dev/null
read -r HTTP_PORT RESP_PORT BASE SRV_LOG <<<"$e1_ports"
SRV_PID=$e1
# etcd stops answering: the lease cannot be confirmed past its deadline.
kill -STOP "$ETCD_PID"
wait_until 10 not_ready
http "idmintd(8): etcd stopped: /readyz names the coordinator and what ends the pause" -s 503 \
    -O ".*paused since [0-9T:.Z-]+ \\([0-9]+ ms, coordinator\\)"$'\n'"ends with: etcd confirming the lease .*" \
    -- /readyz
# Past the lease's deadline (the TTL less its margin): the pause goes on,
# for the same cause, until etcd answers.
wait_until 10 logged 'the lease of node [56] ran out'
http "... past the lease's deadline: still the coordinator, whose answer ends the pause" -s 503 \
    -O ".*\\([0-9]+ ms, coordinator\\)"$'\n'"ends with: etcd confirming the lease of node [56] again, or reporting it lost \\(then a node is claimed anew\\).*" \
    -- /readyz
http "... and the public class: the lease cannot be confirmed" -s 503 \
    -O ".*\"class\": \"the node's lease cannot be confirmed\".*" -- /readyz -H 'Accept: application/json'
expect "/metrics: idmint_paused{cause=\"coordinator\"} 1" "$(metric_of 'idmint_paused{cause="coordinator"}')" = 1
kill -CONT "$ETCD_PID"
wait_until 20 ready
# The same lease confirmed, or (taken as lost) a node claimed anew.
ended "etcd back" coordinator 'coordinator|node'
http "... and snowflakes again" -L '[0-9]+' -- /v1/ids/snowflake
stop_server
stop_etcd

finish
