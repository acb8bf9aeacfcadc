# test_nodes.sh - the host-local node registry (docs/leases.md): idmintd
# started without --node leases the lowest free snowflake node of this
# host; --node N is registered and refused while another process holds N;
# when every node is held it waits, not ready, and takes the first one that
# frees (kill -9 of a holder frees its slot); concurrent starts never
# share a node, and a new holder resumes above its predecessor's mark.
# Usage: bash tests/server/test_nodes.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

REG=$T_DIR/reg
declare -A PORT PID
# one NAME [OPTIONS]: an idmintd of its own (state directory, ports) on
# the shared registry $REG.
one() {
    local name=$1
    shift
    start_server --state-dir "$T_DIR/state.$name" --node-registry "$REG" "$@"
    PORT[$name]=$HTTP_PORT
    PID[$name]=$SRV_PID
}
node_of() {
    curl -s "http://127.0.0.1:${PORT[$1]}/v1/node" | python3 -c 'import json,sys; n=json.load(sys.stdin)["node"]; print("null" if n is None else n)'
}
field_of() {
    curl -s "http://127.0.0.1:${PORT[$1]}/v1/node" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
# The node a snowflake of server NAME carries (idmint inspect, the layout given).
minted_node() {
    local id
    id=$(curl -s "http://127.0.0.1:${PORT[$1]}/v1/ids/snowflake")
    "$IDMINT" inspect --json --layout "$2" "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["node"])'
}

one a
one b
expect "idmintd(8): without --node, idmintd leases the lowest free node of this host's registry" "$(node_of a)" = 0
expect "... and a second one the next: two started with defaults never share a node" "$(node_of b)" = 1
expect "GET /v1/node says where it came from" "$(field_of b coord):$(field_of b state)" = local:held
expect "... and the snowflakes carry it" "$(minted_node b twitter)" = 1
check "The log says which node it got and that several hosts need a coordinator" \
    -O '.*leased node 1 from this host.s registry .*with several hosts, nodes need a coordinator.*' \
    -- cat "$SRV_LOG"
check "INFO carries the node too" -O '.*node:1.*node_coord:local.*node_state:held.*' \
    -- redis-cli -p "$RESP_PORT" INFO

"$IDMINTD" --node 0 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/state.x" \
    --node-registry "$REG" >"$T_DIR/x.log" 2>&1
expect "--node N already held by another process on the host is refused" "$?" = 1
check "... saying by whom" -O ".*--node 0: node 0 is held by pid=${PID[a]} host=.*two processes minting as one node would repeat IDs.*" \
    -- cat "$T_DIR/x.log"

one s --node 5
expect "--node N is registered: /v1/node says static" "$(node_of s):$(field_of s coord):$(field_of s state)" = 5:static:static
"$IDMINTD" --node 5 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/state.y" \
    --node-registry "$REG" >"$T_DIR/y.log" 2>&1
expect "... and a second --node 5 is refused" "$?" = 1
one c
expect "auto skips a node held statically (0, 1 and 5 are held: 2)" "$(node_of c)" = 2

# A layout with 2 node bits: 4 nodes.
L='time=41,node=2,seq=20'
for n in p q r s2; do
    one "$n" --layout "$L"
done
expect "Four servers on a 2-bit layout hold nodes 0..3" \
    "$(for n in p q r s2; do node_of "$n"; done | sort | tr '\n' ' ')" = '0 1 2 3 '
one w --layout "$L"
expect "A fifth waits: no node" "$(node_of w):$(field_of w state)" = null:waiting
http "... not ready, naming the range, and the holders" -s 503 -O $'no snowflake node: every node from 0 to 3 is held [^\n]*waiting for one to free\n.*held by node [0-3] \\(pid=[0-9]+ host=.*' -- /readyz
http "... snowflakes refused with 503 and Retry-After" -s 503 -h 'Retry-After: 1' -O '\{"error": "no snowflake node: .*\}' -- /v1/ids/snowflake
http "... while the other formats are served" -L '[0-9a-f-]{36}' -n 1 -- /v1/ids/uuidv7
victim=$(node_of q)
last=$(curl -s "http://127.0.0.1:${PORT[q]}/v1/ids/snowflake?count=100" | tail -n 1)
kill -KILL "${PID[q]}"
wait "${PID[q]}" 2>/dev/null
wait_until 15 bash -c "[ \"\$(curl -s http://127.0.0.1:${PORT[w]}/v1/node | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"node\"])')\" = $victim ]"
expect "kill -9 of a holder frees its slot: the waiting one takes it" "$(node_of w)" = "$victim"
# The previous holder's slot records its durable mark (its clock + the
# reserve): the new holder is not ready until its clock has passed it.
wait_until 5 bash -c "curl -fs -o /dev/null http://127.0.0.1:${PORT[w]}/readyz"
http "... and is ready once its clock has passed the previous holder's mark (at most the reserve)" -o ready -- /readyz
first=$(curl -s -m 15 "http://127.0.0.1:${PORT[w]}/v1/ids/snowflake")
expect "... and mints above what the previous holder minted" "$first" -gt "$last"
expect "... as that node" "$(minted_node w "$L")" = "$victim"

# Eight at once on a 3-bit layout: eight distinct nodes.
L3='time=41,node=3,seq=19'
pids=()
for i in 1 2 3 4 5 6 7 8; do
    # Unix sockets: eight random ports could collide with each other or
    # with another test's (one of eight failed to listen in a CI run).
    "$IDMINTD" --layout "$L3" --http off --resp "unix:$T_DIR/c$i.sock" \
        --state-dir "$T_DIR/state.c$i" --node-registry "$T_DIR/reg8" >"$T_DIR/c$i.log" 2>&1 &
    pids+=($!)
    track $!
done
wait_until 15 bash -c "[ \$(cat $T_DIR/c?.log | grep -c 'ready (pid') = 8 ]"
expect "Eight started at once on a 3-bit layout lease eight distinct nodes" \
    "$(cat "$T_DIR"/c?.log | grep -o 'leased node [0-9]*' | sort -u | wc -l)" = 8
for p in "${pids[@]}"; do kill -TERM "$p"; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done

# A server that claims a node and then cannot listen minted nothing: the
# node's slot keeps no mark of its, so the next holder need not wait out
# its reserve (the mark went back to nothing; it used to stay one reserve
# ahead, and a later server on that node waited, not ready, for a second).
REG2=$T_DIR/reg-listen
busy=$(printf '%s\n' "$BASE" | sed 's/.*://')
"$IDMINTD" --http "127.0.0.1:$busy" --resp off --state-dir "$T_DIR/state.l" \
    --node-registry "$REG2" >"$T_DIR/l.log" 2>&1
expect "idmintd whose port is taken exits 1 after claiming a node" "$?:$(grep -c 'registered\|leased node' "$T_DIR/l.log")" = 1:1
check "... and leaves no mark in the node's slot" -o '' \
    --sh "\"$IDMINT\" lease list --registry \"$REG2\" --layout twitter --json | grep '\"mark_ms\": [1-9]' || true"

stop_server
expect "SIGTERM exits 0" "$SRV_STATUS" = 0
finish
