# test_node_ip.sh - `--node ip` (idmintd(8), docs/leases.md): the node is
# the low bits of the host's first private IPv4 address, registered as a
# static node would be. The machine has no private address, so the cases
# that need one run idmintd in a network namespace of their own (unshare
# -n, as root) whose loopback carries 10.1.2.3 and 192.168.7.9.
# Usage: bash tests/server/test_node_ip.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

# in_netns ADDR... -- IDMINTD ARGS: runs idmintd in a fresh network
# namespace with ADDRs on its loopback, prints its /v1/node (or its log if
# it did not start), and stops it.
in_netns() {
    local addrs=()
    while [ "$1" != -- ]; do
        addrs+=("$1")
        shift
    done
    shift
    unshare -n bash -c '
        ip link set lo up || exit 9
        while [ "$1" != -- ]; do ip addr add "$1" dev lo || exit 9; shift; done
        shift
        log=$1; shift
        "$@" --http 127.0.0.1:8080 --resp off >"$log" 2>&1 &
        pid=$!
        for _ in $(seq 100); do
            if curl -fs -m 1 http://127.0.0.1:8080/v1/node; then kill -TERM $pid; wait $pid; exit 0; fi
            kill -0 $pid 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL $pid 2>/dev/null
        cat "$log"; exit 1' _ "${addrs[@]}" -- "$T_DIR/ns.log" "$@"
}

if ! unshare -n true 2>/dev/null; then
    # Not a skip counted as a pass: this machine cannot run the case.
    CASE_NO=$((CASE_NO + 1))
    fail "unshare -n works (root)" "  cannot make a network namespace here"
    finish
fi

# 10.1.2.3 = 0x0A010203: its low 10 bits are 0x203 = 515.
check "--node ip: the node is the low bits of the first private IPv4 address (10.1.2.3 -> 515 of 1024)" \
    -O '\{"node": 515, .*"coord": "static", "state": "static".*' \
    -- in_netns 10.1.2.3/8 -- "$IDMINTD" --node ip --state-dir none --node-registry "$T_DIR/nodes"
# 192.168.7.9 = 0xC0A80709: low 10 bits 0x309 = 777; on a 2-bit layout, 9 % 4 = 1.
check "... modulo the layout's node count (192.168.7.9 on a 2-bit layout -> 1)" \
    -O '\{"node": 1, .*' \
    -- in_netns 192.168.7.9/24 -- "$IDMINTD" --node ip --layout time=41,node=2,seq=20 --state-dir none --node-registry "$T_DIR/nodes"
check "... public addresses are passed over for the private one" \
    -O '\{"node": 777, .*' \
    -- in_netns 192.0.2.2/24 192.168.7.9/24 -- "$IDMINTD" --node ip --state-dir none --node-registry "$T_DIR/nodes"

# This machine's own namespace has no private address: refused. (A host
# that has one - a veth of a test's namespace, say - would start a server
# here that nothing stops: checked in a namespace instead.)
if ip -4 -o addr | grep -Eq ' inet (10\.|172\.(1[6-9]|2[0-9]|3[01])\.|192\.168\.)'; then
    expect "(this host has a private address: the refusal is checked in a namespace instead)" 1 = 1
    check "--node ip without a private IPv4 address is refused" -s 1 \
        -- in_netns 192.0.2.2/24 -- "$IDMINTD" --node ip --state-dir none --node-registry "$T_DIR/nodes"
else
    "$IDMINTD" --node ip --http off --resp "127.0.0.1:$(random_port)" --state-dir none \
        --node-registry "$T_DIR/nodes" >"$T_DIR/noip.log" 2>&1
    st=$?
    expect "--node ip without a private IPv4 address is refused" "$st" = 1
    check "... saying why and what to do" -O '.*--node ip: this host has no private IPv4 address .*give --node N.*' \
        -- cat "$T_DIR/noip.log"
fi

# Registered like a static node: a second process with the same address's node is refused.
check "... and registered as --node N is: a second holder of that node is refused" \
    -O '.*--node 515: node 515 is held by pid=[0-9]+ .*' \
    --sh "unshare -n bash -c 'ip link set lo up; ip addr add 10.1.2.3/8 dev lo
        \"$IDMINTD\" --node ip --http 127.0.0.1:8080 --resp off --state-dir none --node-registry \"$T_DIR/nodes2\" >\"$T_DIR/first.log\" 2>&1 &
        p=\$!
        for _ in \$(seq 100); do curl -fs -m 1 -o /dev/null http://127.0.0.1:8080/healthz && break; sleep 0.05; done
        \"$IDMINTD\" --node ip --http 127.0.0.1:8081 --resp off --state-dir none --node-registry \"$T_DIR/nodes2\" 2>&1
        kill -TERM \$p; wait \$p'"

finish
