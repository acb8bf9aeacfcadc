# test_segments.sh - segment tags in idmintd (--segments URL, segments.h,
# docs/segments.md) on a real store: an SQLite file, or a PostgreSQL that
# this script starts (tests/coord/pg.sh). Every route (RESP INCR/INCRBY,
# /v1/segment, Leaf's and tinyid's), bad input, two servers sharing one
# store under concurrent load (no ID twice, each connection's increasing),
# kill -9 under load twenty times in a row (nothing repeats across the
# restarts), the store lost under load (PostgreSQL stopped -m immediate:
# served from the buffers, then 503 and not ready, then back by itself),
# and strides (odd and even stores never collide).
# Usage: bash tests/server/test_segments.sh IDMINTD IDMINT LOADCLIENT sqlite|pg
. "$(dirname "$0")/lib.sh"

BACKEND=${4:?usage: bash $0 IDMINTD IDMINT LOADCLIENT sqlite|pg}
case $BACKEND in
sqlite)
    STORE=sqlite:$T_DIR/segments.db
    ;;
pg)
    # shellcheck source=tests/coord/services.sh
    . "$(dirname "$0")/../coord/services.sh"
    # shellcheck source=tests/coord/pg.sh
    . "$(dirname "$0")/../coord/pg.sh"
    # The postgres user must reach its directory: T_DIR may be searched
    # (not listed) by others.
    chmod 0711 "$T_DIR"
    start_pg "$T_DIR/pg" || start_failed "PostgreSQL did not start"
    STORE=$PG_URL
    ;;
*)
    echo "test_segments.sh: the backend is sqlite or pg, not '$BACKEND'" >&2
    exit 2
    ;;
esac

seg() {
    "$IDMINT" segment "$@"
}
# A tag with a small step, so that the tests see many leases.
seg create orders --store "$STORE" --step 50 --max-step 400 || start_failed "segment create failed"
seg create invoices --store "$STORE" --first 1000 --step 20 || start_failed "segment create failed"

declare -A PORT PID
one() {
    local name=$1
    shift
    start_server --segments "$STORE" --state-dir "$T_DIR/state.$name" "$@"
    PORT[$name]=$HTTP_PORT
    PID[$name]=$SRV_PID
}
one a

# ---- the routes ---------------------------------------------------------------
http "GET /v1/segment/{tag}: the tag's first ID" -o 1 -- /v1/segment/orders
http "... ?count=N: the next N, one per line" -n 5 -L '[0-9]+' -- '/v1/segment/orders?count=5'
out=$(curl -s "$BASE/v1/segment/orders?count=5")
expect "... consecutive (step 1) and after the first" "$(echo $out)" = "7 8 9 10 11"
http "... a JSON array of strings with Accept: application/json" -O '\["12","13","14"\]' \
    -- '/v1/segment/orders?count=3' -H 'Accept: application/json'
http "Leaf: GET /api/segment/get/{tag}, the bare decimal" -O '15' -- /api/segment/get/orders
http "tinyid: nextIdSimple, comma-joined" -O '16,17,18' -- '/tinyid/id/nextIdSimple?bizType=orders&batchSize=3'
http "tinyid: nextId, its JSON shape" -O '\{"data":\[19,20\],"code":200,"message":""\}' \
    -- '/tinyid/id/nextId?bizType=orders&batchSize=2&token=abc'
http "A tag created with --first starts there" -o 1000 -- /v1/segment/invoices
check "RESP INCR tag: the next ID as an integer" -o 21 -- redis-cli -p "$RESP_PORT" INCR orders
check "RESP INCRBY tag n: reserves n consecutive IDs and returns the last" -o 31 \
    -- redis-cli -p "$RESP_PORT" INCRBY orders 10
check "... and INCR goes on after them" -o 32 -- redis-cli -p "$RESP_PORT" INCR orders
check "INCRBY larger than what is left of the range takes a range of its own (consecutive)" \
    -O '[0-9]+' -- redis-cli -p "$RESP_PORT" INCRBY orders 300
last=$(redis-cli -p "$RESP_PORT" INCRBY orders 300)
next=$(redis-cli -p "$RESP_PORT" INCR orders)
expect "... the next INCR is above the run's last" "$next" -gt "$last"

# ---- bad input -------------------------------------------------------------------
http "An unknown tag: 404 naming it" -s 404 -O '.*no tag .nosuch. in the segment store.*' -- /v1/segment/nosuch
check "... RESP: an error naming it" -O "ERR no tag 'nosuch' in the segment store.*" \
    -- redis-cli -p "$RESP_PORT" INCR nosuch
http "count=0: 400" -s 400 -O '.*count must be from 1 to.*' -- '/v1/segment/orders?count=0'
http "count above --max-count: 400" -s 400 -- '/v1/segment/orders?count=100001'
http "count not a number: 400" -s 400 -- '/v1/segment/orders?count=ten'
check "INCRBY 0: an error" -O 'ERR increment must be from 1 to.*' -- redis-cli -p "$RESP_PORT" INCRBY orders 0
check "INCRBY not a number: Redis's error" -O 'ERR value is not an integer or out of range.*' \
    -- redis-cli -p "$RESP_PORT" INCRBY orders x
http "An unsafe tag name: 400" -s 400 -O '.*invalid tag.*' -- /v1/segment/Orders
http "... too long: 400" -s 400 -O '.*invalid tag.*' -- "/v1/segment/$(printf 'a%.0s' $(seq 65))"
http "tinyid without bizType: 400" -s 400 -O '.*bizType is needed.*' -- '/tinyid/id/nextIdSimple?batchSize=2'
http "An unknown parameter: 400" -s 400 -- '/v1/segment/orders?cuont=2'
check "/metrics: leases and the step per tag" \
    -O '.*idmint_segment_leases_total\{tag="orders"\} [1-9][0-9]*.*idmint_segment_step\{tag="orders"\} [0-9]+.*' \
    --sh "curl -s $BASE/metrics | tr '\n' ' '"

# ---- two servers on one store, under load --------------------------------------------
one b
"$LOADCLIENT" --http "127.0.0.1:${PORT[a]}" --path '/v1/segment/orders?count=10' --conns 4 \
    --duration-ms 3000 --ids "$T_DIR/la.ids" >"$T_DIR/la.out" 2>&1 &
l1=$!
"$LOADCLIENT" --resp "127.0.0.1:$RESP_PORT" --cmd 'INCR orders' --conns 4 --pipeline 8 \
    --duration-ms 3000 --ids "$T_DIR/lb.ids" >"$T_DIR/lb.out" 2>&1 &
l2=$!
track $l1
track $l2
wait $l1
s1=$?
wait $l2
s2=$?
expect "Two servers on one store under load: the clients found every reply well formed and each connection's IDs increasing" "$s1:$s2" = 0:0
n=$(cat "$T_DIR/la.ids" "$T_DIR/lb.ids" | wc -l)
expect "... many IDs" "$n" -gt 1000
dups=$(cat "$T_DIR/la.ids" "$T_DIR/lb.ids" | sort | uniq -d | wc -l)
expect "... none issued twice across the two servers" "$dups" = 0

# ---- kill -9 under load, twenty times ------------------------------------------------
stop_server
for i in $(seq 1 20); do
    start_server --segments "$STORE" --state-dir "$T_DIR/state.k"
    "$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/segment/orders?count=20' --conns 2 \
        --duration-ms 2000 --ids "$T_DIR/k$i.ids" >"$T_DIR/k$i.out" 2>&1 &
    lk=$!
    track $lk
    sleep 0.$((2 + RANDOM % 5))
    kill -KILL "$SRV_PID"
    { wait "$SRV_PID"; } 2>/dev/null
    wait $lk 2>/dev/null
done
n=$(cat "$T_DIR"/k*.ids | wc -l)
expect "kill -9 under load twenty times: IDs were served in every round" \
    "$(for i in $(seq 1 20); do [ -s "$T_DIR/k$i.ids" ] && echo y; done | wc -l)" = 20
dups=$(cat "$T_DIR"/k*.ids "$T_DIR/la.ids" "$T_DIR/lb.ids" | sort | uniq -d | wc -l)
expect "... and none repeats across the restarts (nor with the earlier phases)" "$dups" = 0
echo "FIGURE $BACKEND kill9_rounds=20 ids=$n"

# ---- the store lost under load ---------------------------------------------------------
if [ "$BACKEND" = pg ]; then
    start_server --segments "$STORE" --state-dir "$T_DIR/state.p"
    curl -s "$BASE/v1/segment/orders?count=10" >/dev/null
    stop_pg immediate
    # What is in memory is still served.
    http "PostgreSQL stopped: IDs already leased are still served" -n 1 -L '[0-9]+' -- /v1/segment/orders
    # Drain the buffers: then 503 and not ready.
    for _ in $(seq 1 100); do
        code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/segment/orders?count=100")
        [ "$code" = 503 ] && break
    done
    expect "... once the buffers are dry: 503" "$code" = 503
    http "... naming the store" -s 503 -O '.*segment store cannot be reached.*' -- /v1/segment/orders
    http "... and not ready" -s 503 -O '.*segment tag orders has no IDs left.*' -- /readyz
    resume_pg
    wait_until 15 bash -c "curl -fs -o /dev/null $BASE/readyz"
    http "PostgreSQL back: served again, by itself" -n 1 -L '[0-9]+' -- /v1/segment/orders
    curl -s "$BASE/v1/segment/orders?count=1000" >"$T_DIR/p.ids"
    dups=$(cat "$T_DIR"/k*.ids "$T_DIR/la.ids" "$T_DIR/lb.ids" "$T_DIR/p.ids" | sort | uniq -d | wc -l)
    expect "... nothing repeats" "$dups" = 0
    stop_server
fi

# ---- stores that cannot be used ------------------------------------------------------------
seg create orders --store "sqlite:$T_DIR/ro.db"
chmod 0444 "$T_DIR/ro.db"
start_server --segments "sqlite:$T_DIR/ro.db" --state-dir "$T_DIR/state.r"
http "A read-only store: a tag's request gets 503 saying the store cannot be written" \
    -s 503 -O '.*read-only.*' -- /v1/segment/orders
stop_server
"$IDMINTD" --segments "mysql://x" --http off --resp "127.0.0.1:$(random_port)" \
    --state-dir none --node-registry "$T_DIR/nodes" >"$T_DIR/bad.log" 2>&1
expect "A store URL of another kind is a usage error" "$?" = 2
svc_port=$(random_port)
start_server --segments "postgresql://postgres@127.0.0.1:$svc_port/postgres?connect_timeout=1" \
    --state-dir "$T_DIR/state.u"
http "An unreachable store at the start: idmintd serves, and a tag gets 503 naming the store" \
    -s 503 -O '.*segment store cannot be reached.*' -- /v1/segment/orders
http "... and is not ready" -s 503 -O '.*segment tag orders has no IDs left.*' -- /readyz
http "... the other formats are served" -L '[0-9a-f-]{36}' -n 1 -- /v1/ids/uuidv7
stop_server

# ---- strides: odd and even stores never collide ------------------------------------------
seg create odd --store "sqlite:$T_DIR/odd.db" --stride 2 --offset 1 --step 30
seg create even --store "sqlite:$T_DIR/even.db" --stride 2 --offset 0 --step 30
start_server --segments "sqlite:$T_DIR/odd.db" --state-dir "$T_DIR/state.o"
curl -s "$BASE/v1/segment/odd?count=500" >"$T_DIR/odd.ids"
stop_server
start_server --segments "sqlite:$T_DIR/even.db" --state-dir "$T_DIR/state.e"
curl -s "$BASE/v1/segment/even?count=500" >"$T_DIR/even.ids"
expect "Strides: the odd store hands out odd IDs only" \
    "$(awk '$1 % 2 != 1' "$T_DIR/odd.ids" | wc -l):$(wc -l <"$T_DIR/odd.ids")" = 0:500
expect "... the even store even ones" \
    "$(awk '$1 % 2 != 0' "$T_DIR/even.ids" | wc -l):$(wc -l <"$T_DIR/even.ids")" = 0:500
expect "... and the two never collide" "$(cat "$T_DIR/odd.ids" "$T_DIR/even.ids" | sort | uniq -d | wc -l)" = 0

finish
