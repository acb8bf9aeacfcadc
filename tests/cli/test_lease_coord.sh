# test_lease_coord.sh - `idmint gen snowflake --node auto|N --coord URL` and
# `idmint lease list --coord URL` against real etcd and ZooKeeper servers
# (tests/coord/services.sh), with idmintd (--coord) as the other holder.
# Usage: bash tests/cli/test_lease_coord.sh PATH_TO_IDMINT PATH_TO_IDMINTD
# Without etcd or java it fails (scripts/test.sh installs them); it exits
# 77 (skipped) only in a build configured without IDM_COORD_REQUIRED.
. "$(dirname "$0")/lib.sh"

IDMINTD=${2:?usage: bash $0 PATH_TO_IDMINT PATH_TO_IDMINTD}
case $IDMINTD in
/*) ;;
*) IDMINTD=$PWD/$IDMINTD ;;
esac
export IDMINTD

SERVICES=$(dirname "$0")/../coord/services.sh
if ! command -v etcd >/dev/null || ! command -v java >/dev/null; then
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "test_lease_coord.sh: etcd and java (etcd-server, zookeeperd) are missing: FAIL" >&2
        exit 1
    fi
    echo "test_lease_coord.sh: needs etcd and java; skipped"
    exit 77
fi
. "$SERVICES"

# The node of the first snowflake a command prints (inspect --json).
node_of() {
    "$IDMINT" inspect --json | head -n 1 | sed 's/.*"node": \([0-9]*\).*/\1/'
}
export -f node_of

# idmintd holding node 0 of URL: SRV_PID once lease list shows it held.
start_holder() {
    "$IDMINTD" --coord "$1" --node 0 --http 127.0.0.1:0 --resp off \
        --state-dir "$T_DIR/state.$2" --log-file "$T_DIR/idmintd.$2.log" </dev/null &
    SRV_PID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        "$IDMINT" lease list --coord "$1" 2>/dev/null | grep -Eq "^0 +held .*pid=$SRV_PID " && return 0
        sleep 0.1
    done
    echo "test_lease_coord.sh: idmintd did not lease node 0 of $1; its log:" >&2
    cat "$T_DIR/idmintd.$2.log" >&2
    return 1
}

stop_holder() {
    kill -TERM "$SRV_PID" 2>/dev/null
    wait "$SRV_PID" 2>/dev/null
}

# The same cases for each service: URL NAME.
cases() {
    local U=$1 name=$2
    export U
    check "$name: --node auto --coord leases the lowest free node (0); the IDs decode to it" \
        -o 'ok 0' --sh 'out=$("$IDMINT" gen snowflake --node auto --coord "$U" -n 1000) || exit 9
            [ "$(printf "%s\n" "$out" | wc -l)" = 1000 ] || exit 8
            nodes=$(printf "%s\n" "$out" | "$IDMINT" inspect --json | sed "s/.*\"node\": \([0-9]*\).*/\1/" | sort -u)
            printf "%s\n" "$out" | sort -C -u -n && echo "ok $nodes"'
    check "$name: --coord without --node means auto (node 0, free again)" \
        -o 0 --sh '"$IDMINT" gen snowflake --coord "$U" | node_of'
    check "$name: lease list: a released slot is free and keeps its mark" \
        -O 'NODE  STATE  GENERATION  MARK                      TTL LEFT  HOLDER
0     free   -           20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z  -         -' \
        -- "$IDMINT" lease list --coord "$U"

    start_holder "$U" "$name" || { FAILED=$((FAILED + 1)); return; }
    export SRV_PID
    check "$name: --node 0 --coord while idmintd holds node 0: exit 1, naming the holder" \
        -o '' -e "^idmint: --node 0: .*pid=$SRV_PID .*program=idmintd.*coordinator $U" -s 1 -- \
        "$IDMINT" gen snowflake --node 0 --coord "$U"
    check "$name: --node auto while node 0 is held: node 1" \
        -o 1 --sh '"$IDMINT" gen snowflake --node auto --coord "$U" -n 10 | node_of'
    check "$name: --node-range: the lowest free node of the range" \
        -o 7 --sh '"$IDMINT" gen snowflake --coord "$U" --node-range 7..9 | node_of'
    check "$name: every node of the range held: exit 1" \
        -o '' -e "^idmint: no free snowflake node at $U: " -s 1 -- \
        "$IDMINT" gen snowflake --coord "$U" --node-range 0..0
    check "$name: lease list shows the holder, its generation and mark" \
        -O "NODE  STATE  GENERATION +MARK +TTL LEFT  HOLDER
0 +held +[0-9]+ +20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z +([0-9]+\.[0-9]s|-) +pid=$SRV_PID .*program=idmintd
1 +free +- +20[^ ]+Z +- +-
7 +free +- +20[^ ]+Z +- +-" \
        -- "$IDMINT" lease list --coord "$U"
    check "$name: lease list --json parses: one object per slot, in node order" \
        -o ok --sh '"$IDMINT" lease list --coord "$U" --json | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert [r[\"node\"] for r in rows] == [0, 1, 7], rows
r0 = rows[0]
assert r0[\"held\"] is True and r0[\"generation\"].isdigit(), r0
assert r0[\"holder\"].startswith(\"pid=$SRV_PID \"), r0
assert isinstance(r0[\"mark_ms\"], int) and r0[\"mark_ms\"] > 0 and r0[\"mark\"].endswith(\"Z\"), r0
assert r0[\"ttl_ms_left\"] is None or 0 < r0[\"ttl_ms_left\"] <= 10000, r0
for r in rows[1:]:
    assert r[\"held\"] is False and r[\"generation\"] is None and r[\"holder\"] is None, r
    assert r[\"ttl_ms_left\"] is None and r[\"mark_ms\"] > 0, r
print(\"ok\")"'
    stop_holder

    check "$name: a second run on the node mints above the first run's last ID" \
        -o ok --sh 'a=$("$IDMINT" gen snowflake --node 0 --coord "$U" -n 50000 | tail -n 1) || exit 9
            b=$("$IDMINT" gen snowflake --node 0 --coord "$U" -n 1) || exit 8
            [ "$b" -gt "$a" ] && echo ok'
    if [ "$FAKETIME_OK" = 1 ]; then
        check "$name: the mark hands over: a run with its clock 2.5 s ahead, then one on the real clock waits for the mark and mints above it" \
            -o ok -e "^idmint: node 0: waiting [0-9.]+ s for the clock to pass the slot's mark" --sh '
              a=$(LD_PRELOAD=$FAKETIME_LIB FAKETIME=+2.5s timeout 60 "$IDMINT" gen snowflake --node 0 --coord "$U" -n 1000 | tail -n 1) || exit 9
              b=$("$IDMINT" gen snowflake --node 0 --coord "$U" -n 1) || exit 8
              [ "$(printf "%s\n" "$b" | node_of)" = 0 ] && [ "$b" -gt "$a" ] && echo ok'
    fi
    check "$name: a run of millions of IDs records marks and keeps its lease as it goes" \
        -o ok --sh 'out=$("$IDMINT" gen snowflake --coord "$U" --lease-ttl 2 -n 4000000 | sort -c -u -n && echo sorted) || exit 9
            [ "$out" = sorted ] && echo ok'
    check "$name: a closed stdout ends a leased run with status 0 and gives the node back" \
        -o 'ok 0' --sh '"$IDMINT" gen snowflake --coord "$U" -n 1000000000 | head -n 1 >/dev/null
            st=${PIPESTATUS[0]}
            "$IDMINT" lease list --coord "$U" --json | grep -q "\"node\": 0, \"held\": false" && echo "ok $st"'
}

# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"
export FAKETIME_LIB
# libfaketime and a sanitizer's runtime do not go together: the hand-over
# case runs where the preload works (the plain build).
# Not even where a probe works: ASan's runtime and the preload can
# deadlock at start (a run hung on a futex in a fresh root).
FAKETIME_OK=0
if [ -z "${IDM_SANITIZE:-}" ] && [ -f "$FAKETIME_LIB" ] &&
    LD_PRELOAD=$FAKETIME_LIB FAKETIME=+0 timeout 10 "$IDMINT" --version >/dev/null 2>&1; then
    FAKETIME_OK=1
elif [ -z "${IDM_SANITIZE:-}" ]; then
    # Without a sanitizer it must work (scripts/test.sh installs it).
    check "libfaketime works here (the hand-over cases need it)" -o yes -- echo no
fi

# --- etcd ------------------------------------------------------------------------
if start_etcd "$T_DIR/etcd"; then
    cases "etcd://127.0.0.1:$ETCD_PORT/idmint/cli" etcd
    U=etcd://127.0.0.1:$ETCD_PORT/idmint/lost
    export U
    # The service goes away under a run: it stops once its lease's deadline
    # passes without a keep-alive (TTL 2 s: within 2 s), exit 1; what it
    # printed is valid (strictly increasing).
    check "etcd: the coordinator gone mid-run: the run stops (exit 1) with the IDs printed so far valid" \
        -o ok --sh '( "$IDMINT" gen snowflake --coord "$U" --lease-ttl 2 -n 100000000000 >"$T_DIR/run.out" 2>"$T_DIR/run.err"; echo $? >"$T_DIR/run.st" ) &
            sleep 1; kill -STOP '"$ETCD_PID"'; wait
            kill -CONT '"$ETCD_PID"'
            [ "$(cat "$T_DIR/run.st")" = 1 ] || exit 9
            grep -q "^idmint: the lease of node 0 ran out: .*stopping (the IDs printed are valid)" "$T_DIR/run.err" || exit 8
            sort -c -u -n "$T_DIR/run.out" && [ -s "$T_DIR/run.out" ] && echo ok'
    stop_etcd
    check "etcd unreachable: exit 1 with a message, promptly" \
        -o '' -e "^idmint: cannot lease a snowflake node from etcd://127\.0\.0\.1:$ETCD_PORT/idmint/cli: " -s 1 -- \
        timeout 20 "$IDMINT" gen snowflake --coord "etcd://127.0.0.1:$ETCD_PORT/idmint/cli"
    check "etcd unreachable: lease list exits 1 with a message" \
        -o '' -e "^idmint: cannot list the leases at etcd://127\.0\.0\.1:$ETCD_PORT/idmint/cli: " -s 1 -- \
        timeout 20 "$IDMINT" lease list --coord "etcd://127.0.0.1:$ETCD_PORT/idmint/cli"
else
    FAILED=$((FAILED + 1))
fi

# --- ZooKeeper -------------------------------------------------------------------
if start_zk "$T_DIR/zk"; then
    cases "zk://127.0.0.1:$ZK_PORT/idmint/cli" zookeeper
    stop_zk
    check "ZooKeeper unreachable: exit 1 with a message, within the request timeouts" \
        -o '' -e "^idmint: cannot lease a snowflake node from zk://127\.0\.0\.1:$ZK_PORT/idmint/cli: " -s 1 -- \
        timeout 20 "$IDMINT" gen snowflake --coord "zk://127.0.0.1:$ZK_PORT/idmint/cli"
    check "ZooKeeper unreachable: lease list exits 1 with a message" \
        -o '' -e "^idmint: cannot list the leases at zk://127\.0\.0\.1:$ZK_PORT/idmint/cli: " -s 1 -- \
        timeout 20 "$IDMINT" lease list --coord "zk://127.0.0.1:$ZK_PORT/idmint/cli"
else
    FAILED=$((FAILED + 1))
fi

finish
