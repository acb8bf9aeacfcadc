# test_nodes_clock.sh - time hand-over through the node registry: a holder
# of node 0 mints and dies (kill -9); a new idmintd takes node 0 with its
# clock 3 s behind (libfaketime) and a state directory of its own that
# knows nothing of the first. The slot's mark makes it wait, not ready,
# until its clock has passed what the first may have minted; every ID it
# then mints is above every ID of the first. Runs under libfaketime, so not
# in the sanitizer builds (tests/CMakeLists.txt).
# Usage: bash tests/server/test_nodes_clock.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

require_faketime test_nodes_clock.sh
REG=$T_DIR/reg

start_server --state-dir "$T_DIR/state.a" --node-registry "$REG"
for _ in $(seq 20); do
    curl -s "$BASE/v1/ids/snowflake?count=500"
done >"$T_DIR/a.ids"
a_max=$(sort -n "$T_DIR/a.ids" | tail -n 1)
expect "the first holder minted" "$(wc -l <"$T_DIR/a.ids")" = 10000
stop_server KILL

step_clock -3s
start_server "${FAKETIME_ENV[@]}" --state-dir "$T_DIR/state.b" --node-registry "$REG"
check "docs/leases.md: the new holder of node 0 ..." -O '.*"node": 0.*' -- curl -s "$BASE/v1/node"
http "... is not ready while its clock is behind the previous holder's mark" -s 503 \
    -O 'waiting for the clock to reach the time high-water mark of the node.s previous holder, recorded in its slot .*' \
    -- /readyz
wait_until 15 curl -fs -o /dev/null "$BASE/readyz"
http "... and ready once its clock has passed it" -o ready -- /readyz
for _ in $(seq 20); do
    curl -s "$BASE/v1/ids/snowflake?count=500"
done >"$T_DIR/b.ids"
b_min=$(sort -n "$T_DIR/b.ids" | head -n 1)
expect "every ID of the new holder is above every ID of the previous one (clock 3 s behind)" \
    "$b_min" -gt "$a_max"
expect "... and it minted them all" "$(grep -cE '^[1-9][0-9]*$' "$T_DIR/b.ids")" = 10000
stop_server
step_clock +0
expect "SIGTERM exits 0" "$SRV_STATUS" = 0
finish
