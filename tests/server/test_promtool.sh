# test_promtool.sh - /metrics passes Prometheus's own linter (idmintd(8),
# METRICS: names in base units, seconds and timestamps in seconds):
# `promtool check metrics` prints nothing and exits 0 for the page of a
# server with every option on that adds series (segment tags in use, HLC
# stamps, --key-file, a memcached listener, --auth-token-file with a
# refusal counted), after requests of each status class. The renamed
# series carry their values in seconds: the durable mark against the
# mark file, --max-offset, the lease's time left.
#
# Needs promtool (Debian's prometheus package, which scripts/test.sh
# installs); a missing one fails the case, naming the fix.
# Usage: bash tests/server/test_promtool.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

TOKEN=idmint-test-token-0123456789abcdef
printf '%s\n' "$TOKEN" >"$T_DIR/token"
chmod 600 "$T_DIR/token"
"$IDMINT" keygen "$T_DIR/key" >/dev/null 2>&1 || start_failed "idmint keygen failed"
STORE=sqlite:$T_DIR/seg.db
"$IDMINT" segment create orders --store "$STORE" >/dev/null || start_failed "segment create failed"
"$IDMINT" segment create invoices --store "$STORE" >/dev/null || start_failed "segment create failed"

start_server --segments "$STORE" --key-file "$T_DIR/key" --auth-token-file "$T_DIR/token" \
    --memcache-random --max-offset 750
AUTH=(-H "Authorization: Bearer $TOKEN")
# Every kind of series: a tag of each, an HLC stamp, IDs of several
# formats, a 4xx (wrong token, unknown format), a memcached and a RESP
# request.
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/segment/orders?count=3"
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/segment/invoices"
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/hlc"
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/ids/ulid?count=2"
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/ids/snowflake"
curl -s -o /dev/null "${AUTH[@]}" "$BASE/v1/ids/nope"
curl -s -o /dev/null -H 'Authorization: Bearer wrong-token-0123456789' "$BASE/v1/ids/ulid"
printf 'get x\r\nquit\r\n' | raw "$MC_PORT" 5 >/dev/null
redis-cli -p "$RESP_PORT" --no-auth-warning -a "$TOKEN" NEXT ulid >/dev/null

METRICS=$T_DIR/metrics.txt
curl -s "${AUTH[@]}" "$BASE/metrics" >"$METRICS"

if ! command -v promtool >/dev/null 2>&1; then
    CASE_NO=$((CASE_NO + 1))
    fail "promtool is installed" "  promtool is missing: apt-get install prometheus (scripts/test.sh installs it)"
else
    check "promtool check metrics: no problem, no warning (exit 0, nothing printed)" -o '' \
        --sh "promtool check metrics <'$METRICS' 2>&1"
fi
expect "the page has the series of each option (a tag's, memcached's, the renamed ones)" \
    "$(grep -cE '^(idmint_segment_ids_total\{tag="orders"\}|idmint_requests_total\{route="memcache",status="2xx"\}|idmint_hwm_persisted_timestamp_seconds|idmint_max_offset_seconds|idmint_node_lease_remaining_seconds) ' "$METRICS")" = 5
expect "no series is named in ms (or another abbreviated unit)" \
    "$(grep -cE '^idmint_[a-z_]*_(ms|us|ns|msec|usec|sec|secs)(_|\{| )' "$METRICS")" = 0

# The values in seconds, from the page read above (/metrics needs the token).
sample() {
    awk -v k="$1" '$1 == k { print $2 }' "$METRICS"
}
expect "idmint_max_offset_seconds is --max-offset in seconds" "$(sample idmint_max_offset_seconds)" = 0.750
durable=$(sample idmint_hwm_persisted_timestamp_seconds)
expect "idmint_hwm_persisted_timestamp_seconds is Unix seconds to the millisecond" \
    "$durable" =~ '^1[0-9]{9}\.[0-9]{3}$'
# The mark on disk is the durable one or, written since, a later one.
expect "... the durable mark: the mark file holds it or a later one" \
    "$(hwm_mark "$T_DIR/state")" -ge "${durable/./}"
expect "idmint_node_lease_remaining_seconds is 0 without a coordinator" \
    "$(sample idmint_node_lease_remaining_seconds)" = 0.000
stop_server
finish
