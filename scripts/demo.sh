#!/usr/bin/env bash
# scripts/demo.sh - the first quick-start command: installs the build
# dependencies, builds idmint into build/, and shows the CLI at work on its
# built-in defaults (every format minted, a few inspected and converted).
# Runs from any directory; running it again only rebuilds what changed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/deps.sh
. "$ROOT/scripts/deps.sh"

section() {
    printf '\n==== %s ====\n' "$*"
}

section "dependencies"
idm_apt_install "${IDM_BUILD_PACKAGES[@]}"

section "build (build/)"
BUILD="$ROOT/build"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target idmint -j "$(nproc)"
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

section "done"
if [ "$failures" -ne 0 ]; then
    echo "demo: $failures command(s) failed"
    exit 1
fi
echo "demo: all commands succeeded; the CLI is at $IDMINT"
