# test_compat.sh - idmintd as a drop-in for the services users come from
# (issue 23; docs/idmintd.md "tinyid" and "Leaf", idmintd(8)): tinyid's
# four routes as tinyid's server answers them (any method, parameters from
# the query or a form body, its token rule and --tinyid-open, its
# always-200 envelope, batchSize 0 and clamping, unknown parameters
# ignored), a Java client that mints from nextSegmentIdSimple's segments as
# tinyid's own client does (tests/server/TinyIdClient.java, compiled here
# with javac) against two idmintd on one SQLite store, with and without a
# token file; and every compatibility route's body parsed strictly
# (Long.parseLong).
# Usage: bash tests/server/test_compat.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(type -P python3)
STORE=sqlite:$T_DIR/segments.db
TOKEN=tinyid-test-token-0123456789abcdef
TOK=$T_DIR/token
printf '%s\n' "$TOKEN" >"$TOK"
chmod 600 "$TOK"
seg() {
    "$IDMINT" segment "$@" --store "$STORE"
}
seg create test --step 10 || start_failed "segment create failed"
seg create strided --step 7 --stride 3 --offset 1 --first 100 || start_failed "segment create failed"
seg create Orders --first 5000 || start_failed "segment create failed"
seg create 'order:id' --first 7000 || start_failed "segment create failed"
seg create open --step 10 || start_failed "segment create failed"

# The Java client, compiled from the tree with Debian's JDK.
JDIR=$T_DIR/java
mkdir -p "$JDIR"
javac -d "$JDIR" "$(dirname "$0")/TinyIdClient.java" || start_failed "javac failed"
jclient() {
    java -cp "$JDIR" TinyIdClient "$@"
}
# use PORT: the server http and BASE talk to.
use() {
    HTTP_PORT=$1
    BASE=http://127.0.0.1:$1
}

# Two servers on the store with the token, one serving tinyid without a
# token (--tinyid-open), one with neither (tinyid's routes refuse all).
start_server --segments "$STORE" --auth-token-file "$TOK" --max-count 50 --state-dir "$T_DIR/sa"
A=$HTTP_PORT
A_LOG=$SRV_LOG
start_server --segments "$STORE" --auth-token-file "$TOK" --state-dir "$T_DIR/sb"
B=$HTTP_PORT
start_server --segments "$STORE" --tinyid-open --state-dir "$T_DIR/sc"
C=$HTTP_PORT
C_LOG=$SRV_LOG
start_server --segments "$STORE" --state-dir "$T_DIR/sd"
D=$HTTP_PORT
D_LOG=$SRV_LOG
use $A
T="token=$TOKEN"
TOKEN_ERR='\{"data":null,"code":5,"message":"token is error"\}'

check "the start says what tinyid's routes take: the token file's token" \
    -O '.*tinyid.s routes \(/tinyid/id/\.\.\.\) take the token of .*token as their token parameter' \
    --sh "grep -o 'tinyid.*' '$A_LOG'"
check "... served without one: --tinyid-open named" \
    -O ".*tinyid.s routes \(/tinyid/id/\.\.\.\) are served without a token \(--tinyid-open\)" \
    --sh "grep -o 'tinyid.*' '$C_LOG'"
check "... refused without a token file, saying how to serve them" \
    -O '.*refuse every request \(code 5, token is error\): tinyid requires a token; give --auth-token-file, or --tinyid-open.*' \
    --sh "grep -o 'tinyid.*' '$D_LOG'"

# ---- methods, query and form body ------------------------------------------------
for m in GET POST PUT DELETE PATCH; do
    http "tinyid nextIdSimple with $m: comma-joined IDs" -O '[0-9]+,[0-9]+' \
        -h 'Content-Type: text/plain; charset=utf-8' -- "/tinyid/id/nextIdSimple?bizType=test&batchSize=2&$T" -X "$m"
done
http "nextId: tinyid's JSON" -O '\{"data":\[[0-9]+,[0-9]+,[0-9]+\],"code":200,"message":""\}' \
    -h 'Content-Type: application/json' -- "/tinyid/id/nextId?bizType=test&batchSize=3&$T"
http "parameters from a form body (POST, application/x-www-form-urlencoded)" -O '[0-9]+,[0-9]+,[0-9]+' \
    -- /tinyid/id/nextIdSimple --data "bizType=test&batchSize=3&$T"
http "... the query's and the body's together" -O '[0-9]+,[0-9]+' \
    -- "/tinyid/id/nextIdSimple?bizType=test" --data "batchSize=2&$T"
http "... a form body with a charset parameter, + and %-escapes decoded" -O '[0-9]+,[0-9]+' \
    -- /tinyid/id/nextIdSimple -H 'Content-Type: application/x-www-form-urlencoded; charset=UTF-8' \
    --data "biz%54ype=te%73t&batchSize=+2&$T"
http "a body of another type is not read (no parameters there: code 5)" -o '' \
    -- /tinyid/id/nextIdSimple -H 'Content-Type: text/plain' --data "bizType=test&$T"
http "a form body over 4096 bytes: 413, closed" -s 413 -h 'Connection: close' \
    -- "/tinyid/id/nextIdSimple?bizType=test&$T" --data "x=$(printf 'a%.0s' $(seq 5000))"
http "unknown parameters are ignored (a cache buster)" -O '[0-9]+' \
    -- "/tinyid/id/nextIdSimple?bizType=test&$T&_=1700000000&foo"
http "HEAD: 200, no body, nothing minted" -h 'Content-Type: text/plain; charset=utf-8' \
    -- "/tinyid/id/nextIdSimple?bizType=test&$T" -I

# ---- the token -------------------------------------------------------------------
http "no token: 200 and code 5 (tinyid's TOKEN_ERR)" -O "$TOKEN_ERR" -- '/tinyid/id/nextId?bizType=test'
http "a wrong token: code 5" -O "$TOKEN_ERR" -- '/tinyid/id/nextId?bizType=test&token=nope'
http "... nextIdSimple: an empty body, 200" -o '' -h 'Content-Length: 0' -- '/tinyid/id/nextIdSimple?bizType=test&token=nope'
http "... nextSegmentId: code 5" -O "$TOKEN_ERR" -- '/tinyid/id/nextSegmentId?bizType=test&token=nope'
http "... nextSegmentIdSimple: empty" -o '' -- '/tinyid/id/nextSegmentIdSimple?bizType=test&token=nope'
http "the token given twice: code 5" -O "$TOKEN_ERR" -- "/tinyid/id/nextId?bizType=test&$T&$T"
http "the token in the body too: code 5" -O "$TOKEN_ERR" -- "/tinyid/id/nextId?bizType=test&$T" --data "$T"
http "an Authorization: Bearer header instead of the parameter" -O '[0-9]+' \
    -- '/tinyid/id/nextIdSimple?bizType=test' -H "Authorization: Bearer $TOKEN"
check "a wrong token is counted as an authentication failure" -O '[1-9][0-9]*' \
    --sh "curl -s -H 'Authorization: Bearer $TOKEN' $BASE/metrics | sed -n 's/^idmint_auth_failures_total{protocol=\"http\"} //p'"
http "no bizType: code 5 (tinyid's canVisit)" -O "$TOKEN_ERR" -- "/tinyid/id/nextId?$T"
http "an empty bizType: code 5" -O "$TOKEN_ERR" -- "/tinyid/id/nextId?bizType=&$T"
use $D
http "without a token file, the right token is refused too (code 5)" -O "$TOKEN_ERR" \
    -- "/tinyid/id/nextId?bizType=test&$T"
use $C
http "--tinyid-open: served without a token" -O '[0-9]+,[0-9]+' -- '/tinyid/id/nextIdSimple?bizType=test&batchSize=2'
http "... and with any token" -O '[0-9]+' -- '/tinyid/id/nextIdSimple?bizType=test&token=anything'
use $A

# ---- failures, batchSize ---------------------------------------------------------
http "an unknown tag: code 6 with the reason" \
    -O '\{"data":null,"code":6,"message":"no tag .nope. in the segment store .*"\}' \
    -- "/tinyid/id/nextId?bizType=nope&$T"
http "... nextIdSimple: empty" -o '' -- "/tinyid/id/nextIdSimple?bizType=nope&$T"
http "a name no tag can have: code 6, the byte named" \
    -O '\{"data":null,"code":6,"message":"invalid tag: byte 0x2f .*"\}' -- "/tinyid/id/nextId?bizType=a%2Fb&$T"
http "... a %00: code 6, the byte named" \
    -O '\{"data":null,"code":6,"message":"invalid tag: byte 0x00 at 2 .*"\}' -- "/tinyid/id/nextId?bizType=ab%00&$T"
http "batchSize=0: an empty list (tinyid)" -O '\{"data":\[\],"code":200,"message":""\}' \
    -- "/tinyid/id/nextId?bizType=test&batchSize=0&$T"
http "... nextIdSimple: empty" -o '' -- "/tinyid/id/nextIdSimple?bizType=test&batchSize=0&$T"
http "batchSize=-3: an empty list" -O '\{"data":\[\],"code":200,"message":""\}' \
    -- "/tinyid/id/nextId?bizType=test&batchSize=-3&$T"
check "batchSize above --max-count (50 here): clamped to it, as tinyid clamps to its maximum" -o 50 \
    --sh "curl -s '$BASE/tinyid/id/nextIdSimple?bizType=test&batchSize=100000&$T' | tr , '\n' | grep -c ."
http "batchSize not a number: code 6" -O '\{"data":null,"code":6,"message":"batchSize must be .*"\}' \
    -- "/tinyid/id/nextId?bizType=test&batchSize=ten&$T"
http "batchSize past a Java int: code 6" -O '\{"data":null,"code":6,.*\}' \
    -- "/tinyid/id/nextId?bizType=test&batchSize=2147483648&$T"
http "batchSize empty: 1" -O '[0-9]+' -- "/tinyid/id/nextIdSimple?bizType=test&batchSize=&$T"

# ---- tags: upper case and ':' ----------------------------------------------------
http "an upper-case tag (Leaf's and tinyid's names)" -O '5000,5001' -- "/tinyid/id/nextIdSimple?bizType=Orders&batchSize=2&$T"
http "a tag with ':' (order:id), %-encoded" -O '7000' -- "/tinyid/id/nextIdSimple?bizType=order%3Aid&$T"
http "... and as it is" -O '7001' -- "/tinyid/id/nextIdSimple?bizType=order:id&$T"
http "/v1/segment/Orders too" -o '5002' -- /v1/segment/Orders -H "Authorization: Bearer $TOKEN"
http "/v1/segment/order:id too" -o '7002' -- /v1/segment/order:id -H "Authorization: Bearer $TOKEN"

# ---- whole segments --------------------------------------------------------------
http "nextSegmentIdSimple: currentId,loadingId,maxId,delta,remainder" -O '[0-9]+,[0-9]+,[0-9]+,1,0' \
    -- "/tinyid/id/nextSegmentIdSimple?bizType=test&$T" -X POST
check "nextSegmentId: tinyid's JSON (data: maxId, loadingId, currentId, delta, remainder)" -o ok --sh "
    curl -s '$BASE/tinyid/id/nextSegmentId?bizType=strided&$T' | $PYTHON -c '
import json, sys
r = json.loads(sys.stdin.read())
assert list(r) == [\"data\", \"code\", \"message\"] and r[\"code\"] == 200 and r[\"message\"] == \"\", r
d = r[\"data\"]
assert list(d) == [\"maxId\", \"loadingId\", \"currentId\", \"delta\", \"remainder\"], d
# 7 IDs, 3 apart, each 1 modulo 3: (currentId, maxId] with delta 3.
assert d[\"delta\"] == 3 and d[\"remainder\"] == 1, d
assert d[\"maxId\"] - d[\"currentId\"] == 21 and d[\"maxId\"] % 3 == 1, d
assert d[\"loadingId\"] == d[\"currentId\"] + 21 // 5, d
print(\"ok\")'"
check "no body of a Simple route ends with a line feed (od)" -o 0 --sh "
    for u in 'nextIdSimple?bizType=test&batchSize=3' 'nextSegmentIdSimple?bizType=test'; do
        curl -s \"$BASE/tinyid/id/\$u&$T\" | od -An -c
    done | grep -cF '\\n' || true"

# ---- strict parses (Java's Long.parseLong) ---------------------------------------
check "Java parses nextIdSimple's body strictly (Long.parseLong each part)" -n 4 -L '[0-9]+' \
    -- jclient parse longs "$BASE/tinyid/id/nextIdSimple?bizType=test&batchSize=4&$T"
check "... a batch of 1" -n 1 -L '[0-9]+' -- jclient parse longs "$BASE/tinyid/id/nextIdSimple?bizType=test&$T"
check "... nextSegmentIdSimple's five numbers (POST, as tinyid's client)" -n 5 -L '[0-9]+' \
    -- jclient parse segment "$BASE/tinyid/id/nextSegmentIdSimple?bizType=test&$T" POST

# ---- tinyid's client: two servers on one store -------------------------------------
# The Java client mints 400 IDs of each tag from segments leased in turn
# from A and B (about 40 segments of 10 or 7 IDs), while idmintd's own
# nextIdSimple hands out IDs of the same tags from both: every ID once,
# each from the store's range of the tag and on its residue.
mint_run() { # TAG N TOKEN HOSTS OUT
    jclient mint "$1" "$2" "$3" "$4" >"$5" 2>"$5.err"
}
both() { # PORT TAG TOKEN-PARAM OUT: idmintd's own IDs, 20 requests of 3
    local i
    for i in $(seq 20); do
        curl -s "http://127.0.0.1:$1/tinyid/id/nextIdSimple?bizType=$2&batchSize=3&$3" | tr , '\n'
        echo
    done >>"$4"
}
in_range() { # TAG FILE...: every ID from the tag's first to next_id, on its residue, once
    "$IDMINT" segment show "$1" --store "$STORE" --json | $PYTHON -c '
import json, sys
t = json.loads(sys.stdin.read())
ids = [int(x) for f in sys.argv[2:] for x in open(f).read().split()]
first = int(sys.argv[1])
nxt = int(t["next_id"])
assert len(ids) == len(set(ids)), "repeated: %d" % (len(ids) - len(set(ids)))
bad = [i for i in ids if not (first <= i < nxt) or i % t["stride"] != t["offset"]]
assert not bad, bad[:5]
print(len(ids))' "$2" "${@:3}"
}
for tag in test strided; do
    : >"$T_DIR/own.$tag"
    mint_run "$tag" 400 "$TOKEN" "127.0.0.1:$A,127.0.0.1:$B" "$T_DIR/java.$tag" &
    J=$!
    both "$A" "$tag" "$T" "$T_DIR/own.$tag"
    both "$B" "$tag" "$T" "$T_DIR/own.$tag"
    wait "$J"
    check "Java client, tag $tag, token: 400 IDs across segments of A and B" -n 400 -L '[0-9]+' \
        -- cat "$T_DIR/java.$tag"
    check "... from many segments (refetched across boundaries)" -O '# segments (4[0-9]|[5-9][0-9])' \
        -- cat "$T_DIR/java.$tag.err"
done
check "every ID of test (client's and idmintd's own) unique and within the store's range" -o 520 \
    -- in_range test 1 "$T_DIR/java.test" "$T_DIR/own.test"
check "... of strided (stride 3, offset 1) too" -o 520 \
    -- in_range strided 100 "$T_DIR/java.strided" "$T_DIR/own.strided"
start_server --segments "$STORE" --tinyid-open --state-dir "$T_DIR/sc2"
C2=$HTTP_PORT
: >"$T_DIR/own.open"
mint_run open 300 - "127.0.0.1:$C,127.0.0.1:$C2" "$T_DIR/java.open" &
J=$!
both "$C" open x "$T_DIR/own.open"
both "$C2" open x "$T_DIR/own.open"
wait "$J"
check "Java client without a token (--tinyid-open): 300 IDs from C and C2" -n 300 -L '[0-9]+' \
    -- cat "$T_DIR/java.open"
check "... unique and within the store's range with idmintd's own" -o 420 \
    -- in_range open 1 "$T_DIR/java.open" "$T_DIR/own.open"
check "a client without the token gets nothing: TinyIdClient fails on the empty body" -s 1 \
    --sh "java -cp '$JDIR' TinyIdClient mint test 1 - 127.0.0.1:$A >/dev/null 2>&1"

# ---- Leaf ------------------------------------------------------------------------
# A server without a token (Leaf has none), on the same store.
start_server --segments "$STORE" --state-dir "$T_DIR/sl"
L=$HTTP_PORT
use $L
SNOWFLAKE='[1-9][0-9]{0,18}'
LEAF_ERR='\{"timestamp":[0-9]+,"status":500,"error":"Internal Server Error","exception":"com\.sankuai\.inf\.leaf\.server\.exception\.LeafServerException","message":"Result\{id=%s, status=EXCEPTION\}","path":"%s"\}'
# shellcheck disable=SC2059 # LEAF_ERR is the format
leaf_err() { printf "$LEAF_ERR" "$1" "$2"; }
for m in GET POST PUT DELETE; do
    http "Leaf's segment route with $m: the bare decimal" -O '[0-9]+' -- /api/segment/get/test -X "$m"
    http "Leaf's snowflake route with $m" -O "$SNOWFLAKE" -- /api/snowflake/get/x -X "$m"
done
http "query parameters are ignored, as Leaf's controller takes none" -O '[0-9]+' -- '/api/segment/get/test?t=123&x'
http "... on the snowflake route too" -O "$SNOWFLAKE" -- '/api/snowflake/get/x?t=123'
http "an upper-case key (Leaf's biz_tag is a varchar(128))" -O '[5-9][0-9]{3}' -- /api/segment/get/Orders
http "a key with ':'" -O '[7-9][0-9]{3}' -- /api/segment/get/order:id
http "no such key: 500, Leaf's Result{id=-2} in Spring's error JSON" -s 500 \
    -h 'Content-Type: application/json;charset=UTF-8' -O "$(leaf_err -2 /api/segment/get/nope)" -- /api/segment/get/nope
http "... a name no key can have: -2 too" -s 500 -O "$(leaf_err -2 '/api/segment/get/a b')" -- '/api/segment/get/a%20b'
http "... a POST gets the same" -s 500 -O "$(leaf_err -2 /api/segment/get/nope)" -- /api/segment/get/nope -X POST
start_server --state-dir "$T_DIR/sn"
http "no segment store: -1 (Leaf: not initialised)" -s 500 -O "$(leaf_err -1 /api/segment/get/test)" \
    -- /api/segment/get/test
use $L
check "Java parses Leaf's segment body strictly (Long.parseLong)" -n 1 -L '[0-9]+' \
    -- jclient parse long "$BASE/api/segment/get/test"
check "... and the snowflake body" -n 1 -L '[0-9]+' -- jclient parse long "$BASE/api/snowflake/get/x" POST
# Both buffers dry while the store fails: the store's file made unreadable
# under the server (a tag with a step of 2, its two IDs taken first).
seg create dry --step 2 --max-step 2 || start_failed "segment create failed"
start_server --segments "sqlite:$T_DIR/dry.db" --state-dir "$T_DIR/sdry"
"$IDMINT" segment create dry2 --step 1 --max-step 1 --store "sqlite:$T_DIR/dry.db" || start_failed "segment create failed"
http "a tag with a step of 1: its first ID" -O '1' -- /api/segment/get/dry2
check "... the store gone (its table dropped) and the ID in memory used" -o ok --sh "
    curl -s $BASE/api/segment/get/dry2 >/dev/null
    sqlite3 '$T_DIR/dry.db' 'DROP TABLE idmint_segments' && echo ok"
wait_until 5 sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$HTTP_PORT/api/segment/get/dry2 | grep -q 500"
http "both buffers empty and the store failing: -3" -s 500 -O "$(leaf_err -3 /api/segment/get/dry2)" \
    -- /api/segment/get/dry2
use $L

# decodeSnowflakeId, /cache, /db.
ID=$(curl -s "$BASE/api/snowflake/get/x")
check "decodeSnowflakeId: Leaf's members in Leaf's order, the node and the time of idmintd's layout" -o ok --sh "
    curl -s '$BASE/decodeSnowflakeId?snowflakeId=$ID' | $PYTHON -c '
import json, sys, time
r = json.loads(sys.stdin.read())
assert list(r) == [\"workerId\", \"sequenceId\", \"timestamp\"], r
i = $ID
assert r[\"workerId\"] == str((i >> 12) & 1023), r
assert r[\"sequenceId\"] == str(i & 4095), r
ms = (i >> 22) + 1288834974657
local = time.strftime(\"%Y-%m-%d %H:%M:%S\", time.localtime(ms // 1000)) + \".%03d\" % (ms % 1000)
assert r[\"timestamp\"] == \"%d(%s)\" % (ms, local), (r, local)
print(\"ok\")'"
http "decodeSnowflakeId of no number: Leaf's errorMsg" -O '\{"errorMsg":"snowflake Id.*"\}' \
    -- '/decodeSnowflakeId?snowflakeId=abc'
http "decodeSnowflakeId without the parameter: Spring's 400" -s 400 \
    -O '\{"timestamp":[0-9]+,"status":400,"error":"Bad Request",.*"message":"Required String parameter .snowflakeId. is not present","path":"/decodeSnowflakeId"\}' \
    -- /decodeSnowflakeId
check "/cache: the tags in memory, by name (step, IDs available)" -o ok --sh "
    curl -s -X POST '$BASE/cache' | $PYTHON -c '
import json, sys
r = json.loads(sys.stdin.read())
t = r[\"test\"]
assert t[\"key\"] == \"test\" and t[\"initOk\"] is True and t[\"step\"] >= 10 and t[\"available\"] >= 0, t
assert \"Orders\" in r and \"order:id\" in r, r
print(\"ok\")'"
http "/db: not served, saying where the rows are" -s 404 -O '.*idmint segment list --store URL.*' -- /db

# --seq-start random (the default): at one ID per millisecond every
# sequence starts afresh; 200 IDs are not all even.
check "Leaf's snowflakes at low traffic spread: id % 2 over 200 IDs is not all even" -O '[1-9][0-9]*' --sh "
    for i in \$(seq 200); do curl -s $BASE/api/snowflake/get/x; echo; sleep 0.001; done |
        $PYTHON -c 'import sys; print(sum(int(x) % 2 for x in sys.stdin.read().split()))'"
start_server --seq-start zero --state-dir "$T_DIR/szero"
check "... with --seq-start zero every one of them is even (the sequence starts at 0)" -o 0 --sh "
    for i in \$(seq 50); do curl -s $BASE/api/snowflake/get/x; echo; sleep 0.002; done |
        $PYTHON -c 'import sys; print(sum(int(x) % 2 for x in sys.stdin.read().split()))'"

finish
