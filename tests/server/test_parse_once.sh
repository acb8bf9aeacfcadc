# test_parse_once.sh - a request that waits (parked until the snowflake
# layout's next time unit, or with its reply going out in parts) is parsed
# once: when it resumes, each front end goes on from what it kept of the
# request (idmintd's docs/design.md, "Front ends"), and only the mint
# service is called again. idmintd runs under valgrind's callgrind, which
# counts the calls of each parser and of the mint service; a layout of 16
# IDs per 10 ms (seq=4) makes a request for 200 snowflakes wait a dozen
# times whatever the machine's speed; inside a RESP transaction (MULTI,
# NEXT, EXEC) the same: the command is parsed when it is queued, and EXEC
# runs it from the queue and resumes it from its record. Not in the
# sanitizer builds
# (valgrind cannot run their runtimes).
# Usage: bash tests/server/test_parse_once.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(type -P python3)
CG=$T_DIR/callgrind.out
LAYOUT=time=41,node=10,seq=4,unit=10ms
SNOWFLAKE='[1-9][0-9]{0,18}'

# calls NAME...: how many times callgrind saw each function called, one
# "NAME COUNT" line each.
calls() {
    "$PYTHON" - "$CG" "$@" <<'PY'
import re, sys
names, counts, callee = {}, {}, None
fn = re.compile(r'^(c?fn)=\((\d+)\)(?: (.*))?$')
for line in open(sys.argv[1], errors='replace'):
    m = fn.match(line)
    if m:
        kind, idx, name = m.groups()
        if name:
            names[idx] = name
        callee = names.get(idx) if kind == 'cfn' else None
    elif line.startswith('calls=') and callee is not None:
        counts[callee] = counts.get(callee, 0) + int(line[6:].split()[0])
        callee = None
for name in sys.argv[2:]:
    print(name, counts.get(name, 0))
PY
}

check "(valgrind is installed)" -s 0 -- valgrind --version
start_server --under "valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=$CG" \
    --layout "$LAYOUT" --memcache-random
keys=$(for i in $(seq 100); do printf ' k%d' "$i"; done)
check "HTTP: 200 snowflakes on a layout of 16 per 10 ms (the request waits a dozen times)" \
    -L "$SNOWFLAKE" -n 200 -- curl -fsS -m 60 "$BASE/v1/ids/snowflake?count=200"
check "RESP: NEXT snowflake 200, the same" -L "$SNOWFLAKE" -n 200 --sh \
    "redis-cli -p '$RESP_PORT' NEXT snowflake 200"
tx=$(printf 'MULTI\r\nNEXT snowflake 200\r\nEXEC\r\nQUIT\r\n' | raw "$RESP_PORT" 60 | tr -d '\r')
expect "RESP: MULTI, NEXT snowflake 200, EXEC: 200 snowflakes in EXEC's array" \
    "$(grep -cE "^$SNOWFLAKE\$" <<<"$tx"):$(grep -E '^[*+]' <<<"$tx" | paste -sd ' ')" = '200:+OK +QUEUED *1 *200 +OK'
mc=$(printf 'get%s\r\nquit\r\n' "$keys" | raw "$MC_PORT" 60 | grep -c '^VALUE k')
expect "memcached: a get of 100 keys, each a snowflake, then quit" "$mc" = 100
stop_server TERM
expect "idmintd stops (exit 0) and callgrind writes its counts" "$SRV_STATUS:$(test -s "$CG" && echo written)" = 0:written

counts=$(calls idms_http_parse_request idms_resp_parse idms_mc_parse idms_mint_after)
count_of() { printf '%s\n' "$counts" | awk -v n="$1" '$1 == n { print $2 }'; }
mints=$(count_of idms_mint_after)
# Five minting requests (the four above and the /healthz start_server
# waits for is not one): every call past five is a resumed one.
expect "the mint service was called again for the waiting requests ($mints calls for 5 requests)" \
    "${mints:-0}" -ge 25
# HTTP: the /healthz of start_server (and a retry of it, if its curl gave
# up under valgrind's pace) and the request: at most three parses.
n=$(count_of idms_http_parse_request)
expect "HTTP: the request was parsed once, not again on each resume ($n parses)" "${n:-0}" -le 3
n=$(count_of idms_resp_parse)
# NEXT on its own, then MULTI, NEXT (parsed once, when queued: EXEC runs
# it from the queue and resumes it from its record), EXEC and QUIT.
expect "RESP: NEXT was parsed once, also inside EXEC ($n parses)" "${n:-0}" = 5
n=$(count_of idms_mc_parse)
expect "memcached: the get and the quit after it were parsed once each ($n parses)" "${n:-0}" = 2
finish
