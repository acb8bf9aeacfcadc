# test_causal.sh - causal minting across two idmintd whose clocks differ by
# 200 ms (libfaketime): GET /v1/ids/{format}?after=ID and RESP NEXT format
# [count] [prefix] AFTER ID. For every time-ordered format (uuidv7, ulid,
# ksuid, typeid, snowflake with the slow node both below and above the fast
# one's), an ID minted by the slow server after observing the fast one's
# sorts after it (string order for text, numeric for snowflakes), where
# without after= it sorts before; an ID further ahead than --max-offset
# (the fast clock at +2 s) is 422 / -ERR; IDs that do not parse, or of a
# format without time, are 400; and a restart of the slow server right
# after observing keeps the order (the durable mark covers the lead).
# Usage: bash tests/server/test_causal.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

require_faketime test_causal.sh

# The fast server's clock: its own libfaketime offset file.
FAST_CLOCK=$T_DIR/fast.faketime
set_fast() {
    printf '%s\n' "$1" >"$FAST_CLOCK.new"
    mv -f "$FAST_CLOCK.new" "$FAST_CLOCK"
}
set_fast +0.2
FAST_ENV=(--env "LD_PRELOAD=$FAKETIME_LIB" --env "FAKETIME_TIMESTAMP_FILE=$FAST_CLOCK"
    --env FAKETIME_NO_CACHE=1 --env FAKETIME_DONT_FAKE_MONOTONIC=1)

# start_as NAME [start_server args]: starts a server and keeps its ports
# and pid as NAME_HTTP, NAME_RESP, NAME_PID.
start_as() {
    local name=$1
    shift
    start_server "$@"
    printf -v "${name}_HTTP" '%s' "$HTTP_PORT"
    printf -v "${name}_RESP" '%s' "$RESP_PORT"
    printf -v "${name}_PID" '%s' "$SRV_PID"
}

# The fast server holds node 5; SLOW node 3 (below: its IDs follow a seen
# snowflake only in the next unit) with a small --reserve, so that a lead
# is past its durable mark and minting parks on the ceiling; SLOW2 node 7
# (above: in seen's own unit).
start_as FAST "${FAST_ENV[@]}" --node 5 --state-dir "$T_DIR/fast" --node-registry "$T_DIR/nodes-fast"
SLOW_ARGS=(--node 3 --reserve 50 --state-dir "$T_DIR/slow" --node-registry "$T_DIR/nodes-slow")
start_as SLOW "${SLOW_ARGS[@]}"
start_as SLOW2 --node 7 --state-dir "$T_DIR/slow2" --node-registry "$T_DIR/nodes-slow2"

# get PORT PATH: the body of a GET (stdout), its status in $T_DIR/status.
get() {
    curl -s -o "$T_DIR/body" -w '%{http_code}' "http://127.0.0.1:$1$2" >"$T_DIR/status"
    cat "$T_DIR/body"
}
# next PORT ARGS...: a RESP command's reply lines.
next() {
    redis-cli -p "$1" "${@:2}" | tr -d '\r' | grep -v '^$'
}

# all_after FORMAT SEEN IDS: "yes" when every line of IDS sorts after SEEN
# and after the line before it, else the first that does not.
all_after() {
    local f=$1 prev=$2 id
    [ -n "$3" ] || {
        echo "no IDs"
        return
    }
    while IFS= read -r id; do
        if [ "$f" = snowflake ]; then
            [[ $id =~ ^[0-9]+$ ]] && ((id > prev)) || {
                echo "$id <= $prev"
                return
            }
        else
            [[ $id > $prev ]] || {
                echo "$id <= $prev"
                return
            }
        fi
        prev=$id
    done <<<"$3"
    echo yes
}

query_of() {
    case $1 in
    typeid) printf 'prefix=user&' ;;
    esac
}
prefix_arg() {
    [ "$1" = typeid ] && printf 'user'
}

FORMATS=(uuidv7 ulid ksuid typeid snowflake)

# --- 200 ms apart -------------------------------------------------------------------------

# First without after=, before any observation (typeid shares uuidv7's
# state, so a uuidv7 observation would move it too): the slow server's IDs
# sort before the fast one's, which shows the cases below can fail.
# KSUIDs count whole seconds: 200 ms apart they often share one, and then
# their order is the payload's, either way.
for f in uuidv7 ulid typeid snowflake; do
    slows=(SLOW)
    [ "$f" = snowflake ] && slows=(SLOW SLOW2)
    for s in "${slows[@]}"; do
        sp=${s}_HTTP
        q=$(query_of "$f")
        # The slow one first: the fast one's, minted later, is 200 ms
        # ahead however slowly this machine runs the requests.
        before=$(get "${!sp}" "/v1/ids/$f?${q}count=1")
        seen=$(get "$FAST_HTTP" "/v1/ids/$f?${q}count=1")
        expect "without after=, the slow server's $f ($s) sorts before the fast one's" \
            "$(all_after "$f" "$before" "$seen")" = yes
    done
done

for f in "${FORMATS[@]}"; do
    slows=(SLOW)
    [ "$f" = snowflake ] && slows=(SLOW SLOW2)
    for s in "${slows[@]}"; do
        sp=${s}_HTTP sr=${s}_RESP
        q=$(query_of "$f")
        seen=$(get "$FAST_HTTP" "/v1/ids/$f?${q}count=1")
        ids=$(get "${!sp}" "/v1/ids/$f?${q}count=5&after=$seen")
        expect "GET /v1/ids/$f?after=ID on the slow server ($s): 200" "$(cat "$T_DIR/status")" = 200
        expect "GET /v1/ids/$f?after=ID ($s): every ID sorts after ID" "$(all_after "$f" "$seen" "$ids")" = yes
        expect "GET /v1/ids/$f?after=ID ($s): 5 IDs" "$(grep -c . <<<"$ids")" = 5

        seen=$(next "$FAST_RESP" NEXT "$f" $(prefix_arg "$f"))
        ids=$(next "${!sr}" NEXT "$f" 3 $(prefix_arg "$f") AFTER "$seen")
        expect "NEXT $f 3 AFTER ID ($s): every ID sorts after ID" "$(all_after "$f" "$seen" "$ids")" = yes
        seen=$(next "$FAST_RESP" NEXT "$f" $(prefix_arg "$f"))
        id=$(next "${!sr}" NEXT "$f" $(prefix_arg "$f") AFTER "$seen")
        expect "NEXT $f AFTER ID without a count: one bulk string after ID ($s)" "$(all_after "$f" "$seen" "$id")" = yes
    done
done

# A JSON reply, and the old forms still work.
BASE=http://127.0.0.1:$SLOW_HTTP
seen=$(get "$FAST_HTTP" "/v1/ids/ulid")
http "after= with Accept: application/json: a JSON array" -O '\["[0-9A-Z]{26}","[0-9A-Z]{26}"\]' \
    -- "/v1/ids/ulid?count=2&after=$seen" -H 'Accept: application/json'
check "NEXT typeid 2 user: without AFTER as before" -L 'user_[0-7][0-9a-hjkmnp-tv-z]{25}' -n 2 \
    -- next "$SLOW_RESP" NEXT typeid 2 user

# --- refusals -------------------------------------------------------------------------

for bad in uuidv4 token traceparent; do
    http "after= for $bad (no time): 400" -s 400 \
        -O '\{"error": "after applies only to uuidv7, ulid, ksuid, snowflake and typeid, not '"$bad"'"\}' \
        -- "/v1/ids/$bad?after=01J0000000000000000000000"
done
http "after= that is not an ID of the format: 400 with the parser's reason" -s 400 \
    -O '\{"error": "the ID to mint after is not a ulid \(.0123.\): ULID must be 26 characters, got 4"\}' \
    -- "/v1/ids/ulid?after=0123"
http "after= a UUIDv4 for uuidv7: 400" -s 400 -O '\{"error": "the ID to mint after is not a uuidv7 .*version 4, not 7"\}' \
    -- "/v1/ids/uuidv7?after=$(get "$FAST_HTTP" /v1/ids/uuidv4)"
http "after= a ULID for ksuid: 400" -s 400 -O '\{"error": "the ID to mint after is not a ksuid .*"\}' \
    -- "/v1/ids/ksuid?after=$(get "$FAST_HTTP" /v1/ids/ulid)"
http "after= given twice: 400" -s 400 -O '\{"error": "query parameter .after. is given more than once"\}' \
    -- "/v1/ids/ulid?after=a&after=b"
check "HEAD with a bad after=: the GET's 400" -O 400 \
    --sh "curl -s -I -o /dev/null -w '%{http_code}' '$BASE/v1/ids/ulid?after=0123'"
check "NEXT ulid AFTER garbage: -ERR with the parser's reason" \
    -O 'ERR the ID to mint after is not a ulid.*26 characters.*' -- next "$SLOW_RESP" NEXT ulid AFTER 0123
check "NEXT uuidv4 AFTER id: -ERR" -O 'ERR after applies only to .*not uuidv4' \
    -- next "$SLOW_RESP" NEXT uuidv4 AFTER 0123
check "NEXT with AFTER and too many other arguments: -ERR" -O 'ERR wrong number of arguments.*' \
    -- next "$SLOW_RESP" NEXT typeid 1 user x AFTER 0123

# --- a restart right after observing ---------------------------------------------------

# The slow server (node 3, --reserve 50) observes an ID 400 ms ahead and
# mints in the lead; it is killed at once and started again on the same
# state directory: what it mints then sorts after what it minted before.
# The fast clock at +0.4 s here: the lead stays well past the slow one's
# mark (--reserve 50) however long the requests take on a busy machine.
set_fast +0.4
declare -A LAST
BASE=http://127.0.0.1:$SLOW_HTTP
waits0=$(metric idmint_ceiling_waits_total)
for f in "${FORMATS[@]}"; do
    q=$(query_of "$f")
    seen=$(get "$FAST_HTTP" "/v1/ids/$f?${q}count=1")
    LAST[$f]=$(get "$SLOW_HTTP" "/v1/ids/$f?${q}count=2&after=$seen" | tail -n 1)
    expect "before the restart: $f after the observed ID" "$(all_after "$f" "$seen" "${LAST[$f]}")" = yes
done
expect "a lead past the durable mark parks on the ceiling" "$(metric idmint_ceiling_waits_total)" -gt "$waits0"
SRV_PID=$SLOW_PID
stop_server KILL
start_as SLOW "${SLOW_ARGS[@]}"
for f in "${FORMATS[@]}"; do
    q=$(query_of "$f")
    # The snowflake generator waits for the clock to reach the mark.
    wait_until 5 bash -c "curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$SLOW_HTTP/v1/ids/$f?${q}count=1' | grep -q 200"
    id=$(get "$SLOW_HTTP" "/v1/ids/$f?${q}count=1")
    expect "after a SIGKILL and restart: $f sorts after the IDs minted in the lead" \
        "$(all_after "$f" "${LAST[$f]}" "$id")" = yes
done

# Too far ahead: the fast clock at +2 s, --max-offset 500 (the default).
BASE=http://127.0.0.1:$SLOW_HTTP
set_fast +2
for f in "${FORMATS[@]}"; do
    q=$(query_of "$f")
    seen=$(get "$FAST_HTTP" "/v1/ids/$f?${q}count=1")
    http "after= more than --max-offset ahead ($f): 422 with the library's message" -s 422 \
        -O '\{"error": "the [A-Za-z0-9]+ seen is [0-9]+ ms ahead of the local clock, more than the limit of 500 ms"\}' \
        -- "/v1/ids/$f?${q}after=$seen"
done
seen=$(next "$FAST_RESP" NEXT snowflake)
check "NEXT snowflake AFTER an ID 2 s ahead: -ERR" \
    -O 'ERR the snowflake seen is [0-9]+ ms ahead of the local clock, more than the limit of 500 ms' \
    -- next "$SLOW_RESP" NEXT snowflake AFTER "$seen"
expect "the refusals are counted" "$(metric idmint_observations_refused_total)" -ge 5
expect "--max-offset in /metrics, in seconds" "$(metric idmint_max_offset_seconds)" = 0.500
check "--max-offset in INFO" -O '.*max_offset_ms:500.*' --sh "redis-cli -p $SLOW_RESP INFO | tr -d '\r' | paste -sd ' '"


finish
