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
seg create tiny --store "$STORE" || start_failed "segment create failed"
seg create 'order:42' --store "$STORE" --first 500 || start_failed "segment create failed"
seg create '{user}:seq' --store "$STORE" --first 900 || start_failed "segment create failed"

declare -A PORT PID
one() {
    local name=$1
    shift
    start_server --segments "$STORE" --state-dir "$T_DIR/state.$name" --tinyid-open "$@"
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
# Byte for byte: tinyid's body has no line feed, and its clients parse the
# last part strictly (Java's Long.parseLong("1576\n") throws).
out=$(curl -s "$BASE/tinyid/id/nextIdSimple?bizType=tiny&batchSize=2" | od -An -c | tr -s ' \n' ' ')
expect "tinyid: nextIdSimple's body ends without a line feed" "$out" = " 1 , 2 "
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
check "RESP INCR order:42: a Redis-style key with ':' is a tag" -o 500 -- redis-cli -p "$RESP_PORT" INCR order:42
check "... and INCRBY {user}:seq 5 (a cluster hash tag's braces)" -o 904 \
    -- redis-cli -p "$RESP_PORT" INCRBY '{user}:seq' 5
check "... a key with a byte outside the rule ('/') is refused, naming it" \
    -O "ERR invalid tag: byte 0x2f \('/'\) at 5 .*" -- redis-cli -p "$RESP_PORT" INCR order/42
check "INCRBY 0: an error" -O 'ERR increment must be from 1 to.*' -- redis-cli -p "$RESP_PORT" INCRBY orders 0
check "INCRBY not a number: Redis's error" -O 'ERR value is not an integer or out of range.*' \
    -- redis-cli -p "$RESP_PORT" INCRBY orders x
http "An unsafe tag name: 400" -s 400 -O '.*invalid tag.*byte 0x2c.*' -- /v1/segment/a,b
http "... too long: 400" -s 400 -O '.*invalid tag.*at most 128 bytes, got 129.*' -- "/v1/segment/$(printf 'a%.0s' $(seq 129))"
http "tinyid without bizType: tinyid's code 5" -O '\{"data":null,"code":5,"message":"token is error"\}' \
    -- '/tinyid/id/nextId?batchSize=2'
http "An unknown parameter: 400" -s 400 -- '/v1/segment/orders?cuont=2'
check "/metrics: leases and the step per tag" \
    -O '.*idmint_segment_leases_total\{tag="orders"\} [1-9][0-9]*.*idmint_segment_step\{tag="orders"\} [0-9]+.*' \
    --sh "curl -s $BASE/metrics | tr '\n' ' '"

# ---- tags are bytes; floods of names -------------------------------------------------------
seg create fresh1 --store "$STORE" || start_failed "segment create failed"
seg create fresh2 --store "$STORE" || start_failed "segment create failed"
seg create fresh3 --store "$STORE" || start_failed "segment create failed"
seg create fresh4 --store "$STORE" || start_failed "segment create failed"
# A RESP bulk string is bytes: "a\0b" is three of them, not the tag "a".
out=$(printf '*2\r\n$4\r\nINCR\r\n$3\r\na\0b\r\n*1\r\n$4\r\nQUIT\r\n' | raw "$RESP_PORT" 15 | tr -d '\r')
expect "RESP INCR of a tag holding a NUL byte: refused, naming the byte and its position" \
    "$out" =~ "^-ERR invalid tag: .*byte 0x00 at 1 .*"$'\n'"\+OK$"
check "... INCRBY too" -O "ERR invalid tag: .*byte 0x00 at 3 .*" \
    --sh "printf '*3\r\n\$6\r\nINCRBY\r\n\$5\r\nabc\0d\r\n\$1\r\n2\r\n*1\r\n\$4\r\nQUIT\r\n' | timeout 10 socat -t5 - TCP:127.0.0.1:$RESP_PORT | head -n 1 | tr -d '\r' | sed 's/^-//'"
check "... afterwards a tag of the store not asked for before is served over RESP" -O '[0-9]+' \
    -- redis-cli -p "$RESP_PORT" INCR fresh1
http "... and over HTTP" -n 1 -L '[0-9]+' -- /v1/segment/fresh1
http "HTTP: the tag's path segment is percent-decoded (fr%65sh2 is fresh2)" -n 1 -L '[0-9]+' \
    -- /v1/segment/fr%65sh2
http "... a %00 in it is refused the same way, naming the byte and its position" \
    -s 400 -O '.*invalid tag: .*byte 0x00 at 1 .*' -- /v1/segment/a%00b
http "... on Leaf's route too, in Leaf's words (no such key: -2)" -s 500 \
    -O '.*"message":"Result\{id=-2, status=EXCEPTION\}".*' -- /api/segment/get/a%00b
http "... and in tinyid's bizType (tinyid's code 6)" -O '.*"code":6,.*invalid tag: .*byte 0x00 at 2 .*' \
    -- '/tinyid/id/nextId?bizType=ab%00'
http "... any byte outside the rule is named with its position" -s 400 \
    -O '.*invalid tag: .*byte 0x2f .*at 5 .*' -- /v1/segment/fresh%2f1
# A name refused a moment ago is answered from the cache, without the store:
# 20 asks pipelined over one connection cost one lookup (two if a second
# passes between them).
l0=$(metric idmint_segment_lookups_total)
awk 'BEGIN { for (i = 0; i < 20; i++) printf "*2\r\n$4\r\nINCR\r\n$7\r\nnosuch2\r\n"; printf "*1\r\n$4\r\nQUIT\r\n" }' \
    >"$T_DIR/again.resp"
n=$(raw "$RESP_PORT" 15 <"$T_DIR/again.resp" | grep -c "no tag 'nosuch2'")
expect "An unknown tag asked 20 times: 20 errors naming it" "$n" = 20
l1=$(metric idmint_segment_lookups_total)
expect "... and at most two store lookups (the rest from the cache of missing tags)" \
    "$((${l1:-0} - ${l0:-0})):${l1:-none}" =~ '^[12]:[0-9]+$'
# A flood of names that are not in the store (more than the cache of
# missing tags holds, over one connection) evicts only missing names: the
# tags of the store are served meanwhile and after, and the server stays
# ready. The flooder pays: its connection waits for its share of lookups.
awk 'BEGIN { for (i = 0; i < 5000; i++) { t = "junk" i; printf "*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n", length(t), t }
             printf "*1\r\n$4\r\nQUIT\r\n" }' >"$T_DIR/flood.resp"
raw "$RESP_PORT" 120 <"$T_DIR/flood.resp" >"$T_DIR/flood.out" &
flood=$!
track $flood
wait_until 60 bash -c "[ \$(tr -cd '\n' <'$T_DIR/flood.out' | wc -c) -ge 1500 ]"
check "While a flood of unknown names goes on, a tag in use is served over RESP" -O '[0-9]+' \
    -- redis-cli -p "$RESP_PORT" INCR orders
check "... and a tag of the store not asked for before" -O '[0-9]+' -- redis-cli -p "$RESP_PORT" INCR fresh2
http "... also over HTTP" -n 1 -L '[0-9]+' -- /v1/segment/fresh3
wait $flood
n=$(grep -c "^-ERR no tag 'junk[0-9]*' in the segment store" "$T_DIR/flood.out")
expect "The flood of 5000 unknown names: each answered 404 (none refused for a full table)" "$n" = 5000
check "... then a tag of the store not asked for before is served over RESP" -O '[0-9]+' \
    -- redis-cli -p "$RESP_PORT" INCR fresh4
http "... and over HTTP" -O '[0-9]+' -- /api/segment/get/fresh4
http "... and /readyz is 200 (the table of live tags is not full)" -- /readyz
n=$(metric idmint_segment_lookup_waits_total)
expect "... the flooder's connection waited for its share of lookups" "${n:-none}" =~ '^[1-9][0-9]*$'
n=$(metric idmint_segment_tags_evicted_total)
expect "... missing names were evicted from the cache" "${n:-none}" =~ '^[1-9][0-9]*$'
n=$(metric 'idmint_segment_tags{state="cached"}')
expect "... which holds at most 4096" "${n:-none}" -le 4096

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
orders_served() {
    [ "$(metric 'idmint_segment_ids_total{tag="orders"}')" -gt 0 ] 2>/dev/null
}
stop_server
for i in $(seq 1 20); do
    start_server --segments "$STORE" --state-dir "$T_DIR/state.k"
    "$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/segment/orders?count=20' --conns 2 \
        --duration-ms 2000 --ids "$T_DIR/k$i.ids" >"$T_DIR/k$i.out" 2>&1 &
    lk=$!
    track $lk
    # Killed at a random moment once it serves (a slow machine may take a
    # while to get the client going).
    wait_until 30 orders_served
    sleep 0.$((1 + RANDOM % 5))
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

# ---- a failing store is tried again once a second, not in a loop ---------------------------
# SQLite: the table swapped for one of other columns (every statement then
# fails at once, and so does reopening); PostgreSQL: the server stopped.
if [ "$BACKEND" = sqlite ]; then
    PACE_STORE=sqlite:$T_DIR/pace.db
    break_store() {
        sqlite3 "$T_DIR/pace.db" 'ALTER TABLE idmint_segments RENAME TO saved; CREATE TABLE idmint_segments (x TEXT)'
    }
    mend_store() {
        sqlite3 "$T_DIR/pace.db" 'DROP TABLE idmint_segments; ALTER TABLE saved RENAME TO idmint_segments'
    }
else
    PACE_STORE=$STORE
    break_store() {
        stop_pg immediate
    }
    mend_store() {
        resume_pg
    }
fi
seg create pace --store "$PACE_STORE" --step 10 --max-step 10 || start_failed "segment create failed"
start_server --segments "$PACE_STORE" --state-dir "$T_DIR/state.pace"
curl -s "$BASE/v1/segment/pace" >/dev/null
# Both buffers leased (the second at 10% of the first used).
wait_until 10 bash -c "[ \"\$(curl -s $BASE/metrics | awk '\$1 == \"idmint_segment_leases_total{tag=\\\"pace\\\"}\" { print \$2 }')\" = 2 ]"
e0=$(metric idmint_segment_store_errors_total)
break_store
# Nine left in the first buffer and ten in the second: taking eleven asks
# for the next range (at 10% of the second used).
curl -s "$BASE/v1/segment/pace?count=11" >/dev/null
wait_until 10 bash -c "[ \"\$(curl -s $BASE/metrics | awk '\$1 == \"idmint_segment_store_errors_total\" { print \$2 }')\" -gt $e0 ]"
t0=$(now_ms)
sleep 3
e1=$(metric idmint_segment_store_errors_total)
secs=$((($(now_ms) - t0 + 999) / 1000))
expect "A failing store: the tag's next range is asked for about once a second (failures since the first, in ${secs} s)" \
    "$((e1 - e0))" -le $((secs + 2))
expect "... and still asked for (not given up)" "$((e1 - e0))" -ge 2
mend_store
wait_until 15 bash -c "[ \"\$(curl -s $BASE/metrics | awk '\$1 == \"idmint_segment_leases_total{tag=\\\"pace\\\"}\" { print \$2 }')\" = 3 ]"
n=$(metric 'idmint_segment_leases_total{tag="pace"}')
expect "... the store back: the range is leased, by itself" "$n" = 3
http "... and the tag served" -n 1 -L '[0-9]+' -- '/v1/segment/pace?count=1'
stop_server
# A lookup that failed is asked again once a second too: /readyz comes back
# by itself, with no request for the tag meanwhile.
break_store
start_server --segments "$PACE_STORE" --state-dir "$T_DIR/state.pace2"
http "A tag looked up while the store fails: 503" -s 503 -O '.*segment store cannot be reached.*' \
    -- /v1/segment/pace
http "... and not ready" -s 503 -O '.*segment tag pace has no IDs left.*' -- /readyz
mend_store
wait_until 15 bash -c "curl -fs -o /dev/null $BASE/readyz"
http "... the store back: ready again by itself" -- /readyz
n=$(metric 'idmint_segment_leases_total{tag="pace"}')
expect "... the tag's first range leased meanwhile" "$n" = 1
stop_server

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

# ---- the table of live tags is bounded (--segment-tags) --------------------------------------
start_server --segments "$STORE" --state-dir "$T_DIR/state.full" --segment-tags 3
for t in orders invoices fresh1; do
    curl -s -o /dev/null "$BASE/v1/segment/$t"
done
http "--segment-tags 3, three tags served: ready (no tag was refused)" -- /readyz
http "A fourth tag: 503, the table of live tags is full" -s 503 \
    -O '.*the segment tag table is full: 3 tags .*--segment-tags.*' -- /v1/segment/fresh2
check "... RESP: an error saying so" -O "ERR .*the segment tag table is full.*" \
    -- redis-cli -p "$RESP_PORT" INCR fresh3
http "... /readyz is 503 and says why" -s 503 -O '.*the segment tag table is full: 3 tags .*' -- /readyz
http "... the tags in the table are still served" -n 1 -L '[0-9]+' -- /v1/segment/orders
check "... over RESP too" -O '[0-9]+' -- redis-cli -p "$RESP_PORT" INCR invoices
http "... and an unknown name is still 404" -s 404 -O '.*no tag .nosuch3. in the segment store.*' \
    -- /v1/segment/nosuch3
stop_server

finish
