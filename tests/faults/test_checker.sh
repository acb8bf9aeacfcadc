#!/usr/bin/env bash
# test_checker.sh - the fault checker's self-test: a clean run passes, and
# each planted fault (a duplicate, an ID out of order on a connection, a
# snowflake stamped after its lease's deadline, a node minted by two
# instances at once, a segment ID past what the store leased) makes it
# exit 1 naming it.
#
# Usage: bash tests/faults/test_checker.sh PATH_TO_CHECKER
set -uo pipefail
CHECKER=${1:?usage: bash $0 PATH_TO_CHECKER}
T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-checker.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASSED=0
FAILED=0
EPOCH=1288834974657 # twitter's
T0=1800000000000    # ms: the clean run's first stamp

# sf MS NODE SEQ: a twitter snowflake.
sf() {
    echo $((($1 - EPOCH) << 22 | $2 << 12 | $3))
}

# A clean run: instance 0 holds node 0 (generation 7) and instance 1 node 1
# (generation 8), each lease confirmed up to T0 + 2 s; 3 IDs a connection.
clean() {
    local d=$1 i
    mkdir -p "$d"
    for i in 0 1 2; do
        echo "$(sf $((T0 + i * 100)) 0 0) $(((T0 + i * 100) * 1000 + 300)) 1 0 1"
        echo "$(sf $((T0 + i * 100)) 1 0) $(((T0 + i * 100) * 1000 + 300)) 2 1 1"
        echo "$((100 + i)) $(((T0 + i * 100 + (i > 0) * 200) * 1000 + 400)) 3 2 2"
    done >"$d/a.idtxt"
    for i in 0 1; do
        echo "$(((T0 - 500) * 1000)) $i held $i $((7 + i)) 1900"
        echo "$(((T0 + 100) * 1000)) $i held $i $((7 + i)) 1900"
    done >"$d/p.poll"
    echo "$(((T0 + 50) * 1000)) $(((T0 + 60) * 1000)) kill9 inst=2" >"$d/faults.log"
}

# expect NAME STATUS PATTERN DIR: the checker's status and a line of its
# output matching PATTERN.
expect() {
    local out rc
    out=$("$CHECKER" --dir "$4" --layout twitter --seg-max 1000 --json "$4/result.json" 2>&1)
    rc=$?
    if [ "$rc" = "$2" ] && grep -qE -- "$3" <<<"$out"; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        printf 'FAIL: %s: expected status %s and /%s/, got %s:\n%s\n' "$1" "$2" "$3" "$rc" "$out" >&2
    fi
}

clean "$T/clean"
expect "a clean run passes" 0 '^ids checked: 9 \(6 snowflakes, 3 segment IDs\)' "$T/clean"
expect "the JSON summary" 0 '^no violation' "$T/clean"
grep -q '"duplicates": 0' "$T/clean/result.json" && PASSED=$((PASSED + 1)) ||
    { FAILED=$((FAILED + 1)); echo "FAIL: result.json lacks duplicates 0" >&2; }

clean "$T/dup"
echo "$(sf $((T0 + 100)) 0 0) $(((T0 + 150) * 1000)) 4 1 1" >"$T/dup/b.idtxt"
expect "a snowflake received twice (another instance, another connection)" 1 \
    "^DUPLICATE snowflake $(sf $((T0 + 100)) 0 0) " "$T/dup"

clean "$T/order"
echo "$(sf $((T0 + 150)) 0 0) $(((T0 + 400) * 1000)) 1 0 1" >>"$T/order/a.idtxt"
expect "an ID below the previous one on its connection" 1 '^ORDER ' "$T/order"

clean "$T/fence"
# Stamped 3 s past the last confirmation: the lease's deadline (T0 + 100
# + 1900 ms) is 1 s behind it.
echo "$(sf $((T0 + 3100)) 0 5) $(((T0 + 3100) * 1000)) 1 0 1" >>"$T/fence/a.idtxt"
expect "a snowflake stamped after its lease's deadline" 1 '^FENCING snowflake ' "$T/fence"

clean "$T/fence_ok"
# The same ID once a poll shows a new lease of node 0 (generation 9): fine.
echo "$(((T0 + 3000) * 1000)) 0 held 0 9 1900" >>"$T/fence_ok/p.poll"
echo "$(sf $((T0 + 3100)) 0 5) $(((T0 + 3100) * 1000)) 1 0 1" >>"$T/fence_ok/a.idtxt"
expect "a snowflake of a later lease of the node passes" 0 '^no violation' "$T/fence_ok"

clean "$T/stale"
# A new lease of node 0 begins after T0 + 2900 (the poll before it); an ID
# stamped at T0 + 2500 received after it fits neither lease: the first
# ended at T0 + 2000, the second began later.
echo "$(((T0 + 2900) * 1000)) 0 lost - 0 -" >>"$T/stale/p.poll"
echo "$(((T0 + 3000) * 1000)) 0 held 0 9 1900" >>"$T/stale/p.poll"
echo "$(sf $((T0 + 2500)) 0 5) $(((T0 + 3100) * 1000)) 1 0 1" >>"$T/stale/a.idtxt"
expect "a stale ID received after the next lease began" 1 '^FENCING snowflake ' "$T/stale"

clean "$T/twominters"
# Instance 3 (no coordinator: not fenced) mints node 0 above instance 0's
# IDs but received them 1.2 s before instance 0's last: node 0 minted by
# two instances at once, in disjoint ranges (no duplicate).
echo "$(sf $((T0 + 1500)) 0 0) $(((T0 - 1000) * 1000)) 9 3 1" >>"$T/twominters/a.idtxt"
expect "a node minted by two instances at once" 1 '^SHARED node 0: instance 3 ' "$T/twominters"

clean "$T/late"
# Instance 0's last reply, minted at T0 + 250 (within its lease), reaches
# its client only at T0 + 4000 (instance 0 was stopped between minting and
# writing it); instance 3 took node 0 over at T0 + 2500: no second minter.
echo "$(sf $((T0 + 250)) 0 0) $(((T0 + 4000) * 1000)) 1 0 1" >>"$T/late/a.idtxt"
echo "$(sf $((T0 + 2500)) 0 0) $(((T0 + 2500) * 1000)) 9 3 1" >>"$T/late/a.idtxt"
expect "a reply minted in time and received late is not a second minter" 0 '^no violation' "$T/late"

clean "$T/seg"
echo "1000 $(((T0 + 500) * 1000)) 3 2 2" >>"$T/seg/a.idtxt"
expect "a segment ID past what the store leased" 1 '^SEGMENT 1000 ' "$T/seg"

clean "$T/pause"
expect "the pause a fault caused is attributed to it" 0 'kill9 .* pause +300\.0 ms \(instance 2\)' "$T/pause"

mkdir -p "$T/bad"
echo "12 x" >"$T/bad/a.idtxt"
expect "a malformed record is refused" 2 'expected "ID RECV_US CONN INST KIND"' "$T/bad"

clean "$T/badfault"
echo "1 2 clock_back inst=x" >>"$T/badfault/faults.log"
expect "a fault line with a bad instance is refused" 2 'inst= needs a whole number' "$T/badfault"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
