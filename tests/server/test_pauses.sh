# test_pauses.sh - a pause in minting explained (docs/idmintd.md, "Pauses,
# explained"): /readyz, /v1/node, the log and /metrics say why minting
# stopped, since when, what ends it and (where known) how long that should
# take, for a node range held by others and a coordinator that cannot
# confirm the lease (the clock's pause: test_pauses_clock.sh):
#   1. no free node in a one-node range held by another server on the same
#      host registry: the holder named, ending when it stops;
#   2. a third server waiting for a node of a two-node range held through a
#      real etcd: the holders, with the time left on their leases as the
#      expected end; and etcd stopped (SIGSTOP) past a holder's lease
#      deadline: the pause names the coordinator and ends when it answers.
# Each pause is logged once when it starts and once when it ends, with its
# length; /metrics counts the time per cause.
# Usage: bash tests/server/test_pauses.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/server/pauses.sh
. "$(dirname "$0")/pauses.sh"
# shellcheck source=tests/coord/services.sh
. "$(dirname "$0")/../coord/services.sh"

# ---- 1. no free node: the holder named ----------------------------------------------------

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

# ---- 2. a coordinator that cannot confirm the lease ---------------------------------------

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
