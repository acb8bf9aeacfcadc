# test_registry.sh - one node registry per host, whoever starts idmintd
# (docs/leases.md): servers started with defaults by root and by an
# ordinary user, with and without XDG_RUNTIME_DIR, share the host's
# registry and hold different nodes, and a user who cannot make the
# registry is refused, not given one of its own; a registry removed under
# its holders hands no node out twice (the holders put their slots back); a
# slot whose mark is past the layout's end is refused when read and never
# written.
#
# Runs as root: it creates a user (idmint-test, removed again if it made
# it), and runs in a mount namespace of its own with a fresh tmpfs on /run
# and a network namespace of its own (the nodes' abstract socket names are
# per network namespace), so that the host's real registry is neither used
# nor changed.
# Usage: bash tests/server/test_registry.sh IDMINTD IDMINT LOADCLIENT
if [ "$(id -u)" != 0 ]; then
    echo "test_registry.sh: needs root (it creates a user and a private /run)" >&2
    exit 1
fi
if [ -z "${IDM_PRIVATE_RUN:-}" ]; then
    exec unshare -m -n --propagation private env IDM_PRIVATE_RUN=1 bash "$0" "$@"
fi
if ! ip link set lo up; then
    echo "test_registry.sh: cannot bring up loopback in a network namespace" >&2
    exit 1
fi
if ! mount -t tmpfs -o mode=0755,size=16m idmint-test-run /run; then
    echo "test_registry.sh: cannot mount a private /run" >&2
    exit 1
fi
. "$(dirname "$0")/lib.sh"

U=idmint-test
made_user=0
if ! id "$U" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$U" || {
        echo "test_registry.sh: cannot create user $U" >&2
        exit 1
    }
    made_user=1
fi
UID_U=$(id -u "$U")
trap 'cleanup; [ $made_user = 1 ] && userdel "$U" 2>/dev/null' EXIT
# The user's state directories live under T_DIR, which it must traverse.
chmod 0711 "$T_DIR"
# The binaries the user runs, copied where it may run them: the tree may be
# a clone under a home the user cannot enter (/root is 0700 on Debian).
mkdir -p "$T_DIR/bin" && chmod 0755 "$T_DIR/bin" &&
    cp "$IDMINTD" "$IDMINT" "$T_DIR/bin/" && chmod 0755 "$T_DIR/bin/idmintd" "$T_DIR/bin/idmint" || {
    echo "test_registry.sh: cannot copy the binaries into $T_DIR/bin" >&2
    exit 1
}
IDMINTD=$T_DIR/bin/idmintd
IDMINT=$T_DIR/bin/idmint
export IDMINTD IDMINT
UD=$T_DIR/u
mkdir -p "$UD" && chown "$U" "$UD"
# As a login session would have it.
mkdir -p "/run/user/$UID_U" && chown "$U" "/run/user/$UID_U" && chmod 0700 "/run/user/$UID_U"
mkdir -p /run/user/0 && chmod 0700 /run/user/0
AS_U=(setpriv "--reuid=$UID_U" "--regid=$(id -g "$U")" --clear-groups --)
REG=/run/idmint/nodes

declare -A PORT PID
node_of() {
    curl -s "http://127.0.0.1:${PORT[$1]}/v1/node" | python3 -c 'import json,sys; n=json.load(sys.stdin)["node"]; print("null" if n is None else n)'
}
# The node the snowflakes of server NAME carry.
minted_node() {
    local id
    id=$(curl -s "http://127.0.0.1:${PORT[$1]}/v1/ids/snowflake")
    "$IDMINT" inspect --json "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["node"])'
}
declare -A LOG
keep() {
    PORT[$1]=$HTTP_PORT
    PID[$1]=$SRV_PID
    LOG[$1]=$SRV_LOG
}
# holders [LEASE LIST OPTIONS]: `idmint lease list --json` as
# "NODE:held:PID" (or NODE:free) words, run by the command before it.
holders() {
    "$@" --json | python3 -c '
import json, sys
out = []
for line in sys.stdin:
    r = json.loads(line)
    pid = (r["holder"] or "-").split()[0].replace("pid=", "")
    out.append("%d:%s" % (r["node"], "held:" + pid if r["held"] else "free"))
print(" ".join(out))'
}

# --- defaults, any user, any environment ---------------------------------------

"${AS_U[@]}" env -u XDG_RUNTIME_DIR timeout 5 "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off \
    --state-dir "$UD/s0" >"$T_DIR/u0.log" 2>&1
expect "idmintd(8): a user who cannot make the host's registry is refused, not given one of its own" "$?" = 1
check "... saying where it is and what to do" \
    -O ".*this host's node registry /run/idmint/nodes does not exist and uid $UID_U cannot make it.*install -d -m 1777 /run/idmint/nodes.*--node-registry.*" \
    -- cat "$T_DIR/u0.log"

start_server --host-registry --env XDG_RUNTIME_DIR=/run/user/0 --state-dir "$T_DIR/s.root1"
keep root1
start_server --host-registry --as "$U" --env "XDG_RUNTIME_DIR=/run/user/$UID_U" --state-dir "$UD/s.u1"
keep u1
start_server --host-registry --as "$U" --env --unset=XDG_RUNTIME_DIR --state-dir "$UD/s.u2"
keep u2
start_server --host-registry --env --unset=XDG_RUNTIME_DIR --state-dir "$T_DIR/s.root2"
keep root2
expect "Four servers started with defaults by root and a user, with and without XDG_RUNTIME_DIR, hold four nodes" \
    "$(for n in root1 u1 u2 root2; do node_of "$n"; done | tr '\n' ' ')" = '0 1 2 3 '
expect "... and mint as them" \
    "$(for n in root1 u1 u2 root2; do minted_node "$n"; done | tr '\n' ' ')" = '0 1 2 3 '
for n in root1 u1 u2 root2; do
    curl -s "http://127.0.0.1:${PORT[$n]}/v1/ids/snowflake?count=5000"
done >"$T_DIR/four.ids"
expect "... 20,000 snowflakes from the four, none twice" "$(sort "$T_DIR/four.ids" | uniq -d | wc -l):$(wc -l <"$T_DIR/four.ids")" = 0:20000
check "The registry is the host's one place: /run/idmint 0755, nodes and its namespace 1777 (sticky), root's" \
    -o $'755 root\n1777 root\n1777 root' -- stat -c '%a %U' /run/idmint "$REG" "$REG/twitter"
check "... slot files any user can lock and raise, owned by who made them" \
    -o $'node-0 666 root\nnode-1 666 idmint-test\nnode-2 666 idmint-test\nnode-3 666 root' \
    --sh "cd $REG/twitter && stat -c '%n %a %U' node-0 node-1 node-2 node-3"
expect "idmint lease list as the user without XDG_RUNTIME_DIR shows all four holders" \
    "$(holders "${AS_U[@]}" env -u XDG_RUNTIME_DIR "$IDMINT" lease list)" = \
    "0:held:${PID[root1]} 1:held:${PID[u1]} 2:held:${PID[u2]} 3:held:${PID[root2]}"
expect "... and as root" "$(holders "$IDMINT" lease list)" = \
    "0:held:${PID[root1]} 1:held:${PID[u1]} 2:held:${PID[u2]} 3:held:${PID[root2]}"

timeout 10 "$IDMINTD" --node 2 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/s.x" >"$T_DIR/x.log" 2>&1
expect "--node 2 as root, on defaults, while the user's server holds 2: refused" "$?" = 1
check "... naming the holder" -O ".*--node 2: node 2 is held by pid=${PID[u2]} .*" -- cat "$T_DIR/x.log"

# A node freed by one user is taken by another, and its mark carried.
last_u1=$(curl -s "http://127.0.0.1:${PORT[u1]}/v1/ids/snowflake?count=100" | tail -n 1)
SRV_PID=${PID[u1]}
stop_server
expect "The user's node-1 server stops cleanly" "$SRV_STATUS" = 0
start_server --host-registry --state-dir "$T_DIR/s.root3"
keep root3
expect "... root's next server takes node 1, a slot file the user made" "$(node_of root3)" = 1
first_root3=$(curl -s "http://127.0.0.1:${PORT[root3]}/v1/ids/snowflake")
expect "... and mints above the user's last ID" "$first_root3" -gt "$last_u1"
SRV_PID=${PID[root1]}
stop_server
start_server --host-registry --as "$U" --env --unset=XDG_RUNTIME_DIR --state-dir "$UD/s.u3"
keep u3
expect "... and the user's next server takes node 0, root's file" "$(node_of u3)" = 0

# --- a registry removed under its holders ---------------------------------------

R=$T_DIR/reg
start_server --node-registry "$R" --state-dir "$T_DIR/s.a"
keep a
"$LOADCLIENT" --http "127.0.0.1:${PORT[a]}" --path '/v1/ids/snowflake?count=50' --conns 2 \
    --duration-ms 4000 --ids "$T_DIR/a.ids" >"$T_DIR/a.load" 2>&1 &
load_a=$!
track "$load_a"
sleep 0.3
rm -rf "$R"
start_server --node-registry "$R" --state-dir "$T_DIR/s.b"
keep b
expect "A registry removed under its holder: the next server does not get the holder's node 0" "$(node_of b)" = 1
"$LOADCLIENT" --http "127.0.0.1:${PORT[b]}" --path '/v1/ids/snowflake?count=50' --conns 2 \
    --duration-ms 2500 --ids "$T_DIR/b.ids" >"$T_DIR/b.load" 2>&1 &
load_b=$!
track "$load_b"
timeout 10 "$IDMINTD" --node 0 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/s.y" \
    --node-registry "$R" >"$T_DIR/y.log" 2>&1
expect "... and --node 0 is refused" "$?" = 1
check "... saying it is held though its file was removed" \
    -O ".*--node 0: node 0 is held by .*" -- cat "$T_DIR/y.log"
wait_until 5 grep -q "of node 0 was removed or replaced" "${LOG[a]}"
check "The holder notices and says so" \
    -O ".*the slot file $R/twitter/node-0 of node 0 was removed or replaced while this process held it: made it again with the mark.*" \
    -- cat "${LOG[a]}"
wait_until 5 test -f "$R/twitter/node-0"
expect "... its slot file is back, held" "$(holders "$IDMINT" lease list --registry "$R")" = \
    "0:held:${PID[a]} 1:held:${PID[b]}"
wait "$load_a" "$load_b"
expect "... both served throughout" "$(kv "$T_DIR/a.load" dups):$(kv "$T_DIR/b.load" dups)" = 0:0
expect "... and no snowflake of one is the other's" "$(sort "$T_DIR/a.ids" "$T_DIR/b.ids" | uniq -d | wc -l)" = 0
expect "... (the holder minted throughout: some IDs)" "$(wc -l <"$T_DIR/a.ids")" -gt 1000
# Only the slot file, while b holds it.
rm -f "$R/twitter/node-1"
start_server --node-registry "$R" --state-dir "$T_DIR/s.c"
keep c
expect "A slot file removed alone: node 1 is not handed out either" "$(node_of c)" = 2
wait_until 5 test -f "$R/twitter/node-1"
expect "... and comes back" "$(node_of b)" = 1

# --- a slot whose mark is past the layout's end -----------------------------------

R2=$T_DIR/reg2
mkdir -m 0700 -p "$R2/twitter"
# IDMSLOT1, a mark in 2100 (past twitter's 2080), a holder line at 64.
python3 -c '
import struct, sys
rec = b"IDMSLOT1" + struct.pack("<q", 4102444800000)
rec = rec.ljust(64, b"\0") + b"pid=1 host=old since=2100-01-01T00:00:00Z program=idmintd\n"
sys.stdout.buffer.write(rec.ljust(512, b"\0"))' >"$R2/twitter/node-0"
chmod 0600 "$R2/twitter/node-0"
before=$(md5sum <"$R2/twitter/node-0")
timeout 10 "$IDMINTD" --node 0 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/s.p" \
    --node-registry "$R2" >"$T_DIR/p.log" 2>&1
expect "A slot whose mark is past the layout's end: --node 0 is refused" "$?" = 1
check "... naming the slot and how to clear it" \
    -O ".*the slot of node 0, $R2/twitter/node-0, records a time high-water mark .* past the layout's last time .*rm $R2/twitter/node-0.*" \
    -- cat "$T_DIR/p.log"
timeout 10 "$IDMINTD" --node 0 --http off --resp "127.0.0.1:$(random_port)" --state-dir "$T_DIR/s.p" \
    --node-registry "$R2" >/dev/null 2>&1
expect "... and the slot is never written, however often it is tried" "$(md5sum <"$R2/twitter/node-0")" = "$before"
start_server --node-registry "$R2" --state-dir "$T_DIR/s.q"
keep q
expect "Without --node the unusable slot is skipped: node 1" "$(node_of q)" = 1
check "... with a warning naming it" -O ".*skipped the slot of node 0, $R2/twitter/node-0, .*" -- cat "${LOG[q]}"
expect "... and it is still not written" "$(md5sum <"$R2/twitter/node-0")" = "$before"

finish
