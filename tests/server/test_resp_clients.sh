# test_resp_clients.sh - the Redis client libraries people use, with their
# default options, against idmintd's RESP port: node-redis 5 (RESP2, and
# RESP3 after HELLO 3), node-redis 6 (HELLO 3 by default), ioredis and
# redis-py. Each connects, pings, mints (NEXT snowflake 3 is an array of 3,
# NEXT uuidv7 a string, NEXT uuidv7 1 an array of 1), gets an error reply,
# asks CLIENT ID, GETNAME, SETNAME, INFO, INFO and COMMAND COUNT, runs a
# transaction with the library's own MULTI (redis-py's default pipeline(),
# node-redis's and ioredis's multi().exec(): NEXT, INCR, INCRBY, PING, and
# one that EXEC aborts), and disconnects (tests/clients/clients.mjs and clients.py do the work).
#
# Needs node with tests/clients/node_modules and Debian's python3-redis,
# which scripts/test.sh installs. A missing one FAILS its case, with the
# command that installs it, rather than skipping.
# Usage: bash tests/server/test_resp_clients.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

CLIENTS=$(cd "$(dirname "$0")/../clients" && pwd)
# Debian's python3, where python3-redis is installed (not a PATH shim).
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(type -P python3)

# A segment tag for the transactions' INCR (tests/clients: "orders").
STORE="sqlite:$T_DIR/seg.db"
"$IDMINT" segment create orders --store "$STORE" || start_failed "segment create orders failed"
start_server --segments "$STORE"

# node_ok PACKAGE: whether node and the pinned package are installed (a
# failed case naming the fix when not).
node_ok() {
    local why=''
    if ! command -v node >/dev/null 2>&1; then
        why="node is not installed (scripts/test.sh installs Debian's nodejs)"
    elif [ ! -f "$CLIENTS/node_modules/$1/package.json" ]; then
        why="tests/clients/node_modules/$1 is missing: run scripts/test.sh (or 'npm ci' in tests/clients)"
    fi
    [ -z "$why" ] && return 0
    CASE_NO=$((CASE_NO + 1))
    fail "the npm package '$1' is installed" "  $why"
    return 1
}

# node_major: node's major version number.
node_major() {
    node -p 'process.versions.node.split(".")[0]'
}

if node_ok redis; then
    check "node-redis 5 with default options (RESP2): connects, mints, errors and CLIENT replies of the right types" \
        -o '' -- timeout 30 node "$CLIENTS/clients.mjs" node-redis "$RESP_PORT"
    check "node-redis 5 with RESP: 3 (HELLO 3): connects, mints, errors and CLIENT replies of the right types" \
        -o '' -- timeout 30 node "$CLIENTS/clients.mjs" node-redis3 "$RESP_PORT"
fi
if node_ok redis-v6; then
    # redis 6 declares node >= 20 (Debian 12 ships 18): run where it can.
    need=$(node -p 'require(process.argv[1]).engines.node.replace(/[^0-9.]/g, "").split(".")[0]' \
        "$CLIENTS/node_modules/redis-v6/package.json")
    if [ "$(node_major)" -ge "$need" ]; then
        check "node-redis 6 with default options (RESP3, HELLO 3 on connect): connects, mints, errors and CLIENT replies" \
            -o '' -- timeout 30 node "$CLIENTS/clients.mjs" node-redis6 "$RESP_PORT"
    else
        echo "note: node-redis 6 not run: it needs node >= $need, this is $(node --version)" \
            "(node-redis 5 with RESP: 3 covers the same HELLO 3 handshake)"
    fi
fi
if node_ok ioredis; then
    check "ioredis with default options: ready check, mints, errors and CLIENT replies of the right types" \
        -o '' -- timeout 30 node "$CLIENTS/clients.mjs" ioredis "$RESP_PORT"
fi
if "$PYTHON" -c 'import redis' 2>/dev/null; then
    check "redis-py with default options: connects, mints, errors and CLIENT replies of the right types" \
        -o '' -- timeout 30 "$PYTHON" "$CLIENTS/clients.py" "$RESP_PORT"
else
    CASE_NO=$((CASE_NO + 1))
    fail "redis-py is installed" "  $PYTHON cannot import redis: install Debian's python3-redis (scripts/test.sh does)"
fi

# The server is unharmed: every client disconnected and it still serves.
check "idmintd still answers after the clients left" -o PONG -- redis-cli -p "$RESP_PORT" PING

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
