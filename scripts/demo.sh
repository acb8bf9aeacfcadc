#!/usr/bin/env bash
# scripts/demo.sh - the first quick-start command: installs the build
# dependencies, builds idmint and idmintd into build/, shows the CLI at work
# (every format minted, a few inspected and converted, HLC stamps, causal
# minting, keyed obfuscation and signed tokens), then starts idmintd
# on its built-in defaults, asks it for IDs with curl and redis-cli, and
# keeps it serving in the foreground until Ctrl-C (when run from a
# terminal; IDM_DEMO_NO_WAIT=1 stops it at the end instead).
# Runs from any directory; running it again only rebuilds what changed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/deps.sh
. "$ROOT/scripts/deps.sh"

section() {
    printf '\n==== %s ====\n' "$*"
}

section "dependencies"
idm_apt_install "${IDM_BUILD_PACKAGES[@]}" curl redis-tools

section "build (build/)"
BUILD="$ROOT/build"
# IDM_SERVER=ON in case build/ was configured without idmintd before.
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIDM_SERVER=ON >/dev/null
cmake --build "$BUILD" --target idmint idmintd -j "$(nproc)"
IDMINT="$BUILD/idmint"

failures=0
LAST=""

# run CMD... prints the command (relative to the repository), runs it,
# prints its output and keeps it in $LAST for the commands that follow.
run() {
    local rc=0
    printf '\n$ build/idmint %s\n' "$*"
    LAST=$("$IDMINT" "$@" 2>&1) || rc=$?
    printf '%s\n' "$LAST"
    if [ "$rc" -ne 0 ]; then
        printf '(exit status %d)\n' "$rc"
        failures=$((failures + 1))
    fi
}

first_line() {
    printf '%s\n' "$LAST" | head -n 1
}

section "mint one of each format"
run gen uuidv7 -n 3
uuidv7=$(first_line)
run gen uuidv4 -n 2
run gen ulid -n 3
ulid=$(first_line)
run gen ksuid -n 2
ksuid=$(first_line)
run gen snowflake --node 1 -n 3
snowflake=$(first_line)
run gen snowflake --node 7 --layout discord
run gen typeid --prefix user
typeid=$(first_line)
run gen token --prefix sk
run gen traceparent

section "inspect"
run inspect "$uuidv7"
run inspect "$ulid" "$ksuid"
run inspect "$snowflake"
run inspect --json "$typeid"
run inspect --json 01890a5d-ac96-774b-bcce-b302099a8057

section "convert (same 128 bits, other text forms)"
run convert --to ulid "$uuidv7"
run convert --to typeid --prefix user "$uuidv7"
run convert --to uuid "$ulid"

section "causal order: hybrid logical clock stamps, and IDs minted after one seen elsewhere"
run hlc now
stamp=$(first_line)
run hlc inspect "$stamp"
run hlc update "$stamp"
run gen uuidv7 --after "$uuidv7"

section "public IDs: keyed obfuscation and signed expiring tokens"
KEY="$BUILD/demo.key"
run keygen --force "$KEY"
run obfuscate --key-file "$KEY" --prefix user 1000 1001 1002
public=$(first_line)
run reveal --key-file "$KEY" "$public"
run gen token --expires 7d --key-file "$KEY" --prefix share
run verify --key-file "$KEY" "$(first_line)"

section "idmintd: the ID service on its defaults (HTTP 127.0.0.1:8080, Redis protocol 127.0.0.1:6380)"
STATE="$BUILD/idmintd-state"
# The host's node registry, shared by every idmintd on the host, is made by
# the first process that can: root. As a user, it is made once here, as a
# package's tmpfiles.d line would (docs/leases.md).
if [ ! -d /run/idmint/nodes ] && [ "$(id -u)" -ne 0 ]; then
    echo "demo: making the host's node registry /run/idmint/nodes (sudo)"
    sudo install -d -m 0755 /run/idmint && sudo install -d -m 1777 /run/idmint/nodes
fi
"$BUILD/idmintd" --state-dir "$STATE" --key-file "$KEY" &
IDMINTD_PID=$!
trap 'kill -TERM "$IDMINTD_PID" 2>/dev/null; wait "$IDMINTD_PID" 2>/dev/null' EXIT
for _ in $(seq 1 50); do
    curl -sf http://127.0.0.1:8080/healthz >/dev/null 2>&1 && break
    sleep 0.1
done
show() {
    printf '\n$ %s\n' "$*"
    "$@" || failures=$((failures + 1))
}
show curl -s 'http://127.0.0.1:8080/v1/ids/snowflake?count=3'
show curl -s -H 'Accept: application/json' 'http://127.0.0.1:8080/v1/ids/uuidv7?count=2'
show curl -s 'http://127.0.0.1:8080/v1/ids/typeid?count=2&prefix=user'
show curl -s "http://127.0.0.1:8080/v1/inspect/$ulid"
show curl -s http://127.0.0.1:8080/v1/hlc
show curl -s -X POST --data "$stamp" http://127.0.0.1:8080/v1/hlc
show curl -s "http://127.0.0.1:8080/v1/ids/uuidv7?after=$uuidv7"
show curl -s "http://127.0.0.1:8080/v1/obfuscate/1000?prefix=user"
show curl -s "http://127.0.0.1:8080/v1/reveal/$public"
if command -v redis-cli >/dev/null 2>&1; then
    show redis-cli -p 6380 NEXT ulid 3
    show redis-cli -p 6380 NEXT snowflake
    show redis-cli -p 6380 HLC
else
    echo "(redis-cli is not installed: apt-get install redis-tools to try the Redis protocol)"
fi

section "done"
if [ "$failures" -ne 0 ]; then
    echo "demo: $failures command(s) failed"
    exit 1
fi
echo "demo: all commands succeeded; the CLI is at $IDMINT"
if [ "${IDM_DEMO_NO_WAIT:-}" = 1 ] || [ ! -t 0 ]; then
    exit 0
fi
echo "idmintd keeps serving on 127.0.0.1:8080 (HTTP) and 127.0.0.1:6380 (Redis protocol); Ctrl-C stops it."
wait "$IDMINTD_PID"
