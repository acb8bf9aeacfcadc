# shellcheck shell=bash
# cluster.sh - a 3-member etcd cluster and a 3-member ZooKeeper ensemble
# for the fault harness (tests/faults/run.sh), on loopback ports picked
# as every test picks them (tests/ports.sh). Sourced after services.sh
# (svc_track, svc_running, svc_wait).
#
#   etcd_cluster_start DIR [EXTRA_IP]
#       members 0..2 in DIR/etcdK (data, etcd.log); each also listens for
#       clients on EXTRA_IP (the host's end of a veth pair, so that an
#       idmintd in a network namespace reaches them). Waits for every
#       member's /health. Sets ETCD_CPORT[K], ETCD_PPORT[K], ETCD_MPID[K],
#       ETCD_ENDPOINTS (127.0.0.1:P,127.0.0.1:P,127.0.0.1:P).
#   etcd_member_start K / etcd_member_down K
#       start again (same ports and data); SIGKILL and reap.
#   member_wait KIND K  waits for member K of etcd or zk to serve again.
#   etcd_leader   prints the index of the member that is leader (or -1).
#   zk_ensemble_start DIR, zk_member_start K, zk_member_down K, zk_leader
#       the same for ZooKeeper (ZK_CPORT[K],
#       ZK_MPID[K], ZK_ENDPOINTS). The JVM runs QuorumPeerMain directly
#       (Debian's zkServer.sh logs nothing), tickTime 500 ms so that
#       sessions of 1-2 s are allowed.
# Processes are ended by their PID only.

ETCD_CPORT=()
ETCD_PPORT=()
ETCD_MPID=()
ETCD_DIR0=
ETCD_EXTRA_IP=
ZK_CPORT=()
ZK_MPID=()
ZK_DIR0=

# pick_ports N VAR: N distinct free ports into array VAR.
pick_ports() {
    local -n _out=$2
    local p used=" "
    _out=()
    while [ ${#_out[@]} -lt "$1" ]; do
        pick_port p || return 1
        case $used in *" $p "*) continue ;; esac
        used+="$p "
        _out+=("$p")
    done
}

etcd_member_start() {
    local k=$1 i cluster="" clients="http://127.0.0.1:${ETCD_CPORT[$1]}"
    for i in 0 1 2; do
        cluster+="${cluster:+,}f$i=http://127.0.0.1:${ETCD_PPORT[i]}"
    done
    [ -n "$ETCD_EXTRA_IP" ] && clients+=",http://$ETCD_EXTRA_IP:${ETCD_CPORT[k]}"
    etcd --name "f$k" --data-dir "$ETCD_DIR0/etcd$k/data" \
        --listen-client-urls "$clients" \
        --advertise-client-urls "http://127.0.0.1:${ETCD_CPORT[k]}" \
        --listen-peer-urls "http://127.0.0.1:${ETCD_PPORT[k]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PPORT[k]}" \
        --initial-cluster "$cluster" --initial-cluster-state new \
        --initial-cluster-token "idmint-faults-${ETCD_PPORT[0]}" \
        --logger zap --log-outputs stderr >>"$ETCD_DIR0/etcd$k/etcd.log" 2>&1 </dev/null &
    ETCD_MPID[k]=$!
    svc_track "${ETCD_MPID[k]}"
}

etcd_member_healthy() {
    command curl -fs -m 2 "http://127.0.0.1:${ETCD_CPORT[$1]}/health" 2>/dev/null |
        grep -q '"health":"true"'
}

# kill_reap PID: SIGKILL, and waits for it (no "Killed" notice).
kill_reap() {
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

etcd_member_down() {
    kill_reap "${ETCD_MPID[$1]}"
}

etcd_member_ready() {
    etcd_member_healthy "$1"
}

# member_wait KIND K: up to 60 s for member K of etcd or zk to serve; 1
# with its log's end on stderr if it does not.
member_wait() {
    local -n _pids=${1^^}_MPID
    local log=$ETCD_DIR0/etcd$2/etcd.log
    [ "$1" = zk ] && log=$ZK_DIR0/zk$2/zk.log
    svc_wait 60 "${_pids[$2]}" "$1_member_ready" "$2" && return 0
    echo "cluster.sh: $1 member $2 does not serve; the end of its log:" >&2
    tail -n 20 "$log" >&2
    return 1
}

etcd_cluster_start() {
    ETCD_DIR0=$1
    ETCD_EXTRA_IP=${2:-}
    local k all
    pick_ports 6 all || return 1
    ETCD_CPORT=("${all[@]:0:3}")
    ETCD_PPORT=("${all[@]:3:3}")
    for k in 0 1 2; do
        mkdir -p "$ETCD_DIR0/etcd$k"
        etcd_member_start "$k"
    done
    cluster_wait etcd
}

# cluster_wait KIND: every member serving; sets KIND_ENDPOINTS.
cluster_wait() {
    local -n _ports=${1^^}_CPORT _eps=${1^^}_ENDPOINTS
    local k
    for k in 0 1 2; do
        member_wait "$1" "$k" || return 1
    done
    _eps=127.0.0.1:${_ports[0]},127.0.0.1:${_ports[1]},127.0.0.1:${_ports[2]}
}

# A member's status names its own id (header.member_id) and the leader's.
etcd_leader() {
    local k st me lead
    for k in 0 1 2; do
        svc_running "${ETCD_MPID[k]}" || continue
        st=$(command curl -fs -m 2 -X POST -d '{}' \
            "http://127.0.0.1:${ETCD_CPORT[k]}/v3/maintenance/status" 2>/dev/null) || continue
        me=$(sed -n 's/.*"member_id":"\([0-9]*\)".*/\1/p' <<<"$st")
        lead=$(sed -n 's/.*"leader":"\([0-9]*\)".*/\1/p' <<<"$st")
        if [ -n "$me" ] && [ "$me" = "$lead" ]; then
            echo "$k"
            return 0
        fi
    done
    echo -1
}

ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar

# zk_member_4lw K WORD: services.sh's zk_4lw to member K.
zk_member_4lw() {
    local ZK_PORT=${ZK_CPORT[$1]}
    zk_4lw "$2"
}

zk_member_ready() {
    zk_member_4lw "$1" srvr | grep -qE '^Mode: (leader|follower)'
}

zk_member_start() {
    local k=$1 d=$ZK_DIR0/zk$1
    java -Xmx96m -cp "$d:$ZK_CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain \
        "$d/zoo.cfg" >>"$d/zk.log" 2>&1 </dev/null &
    ZK_MPID[k]=$!
    svc_track "${ZK_MPID[k]}"
}

zk_member_down() {
    kill_reap "${ZK_MPID[$1]}"
}

zk_ensemble_start() {
    ZK_DIR0=$1
    local k i all servers="" d
    pick_ports 9 all || return 1
    ZK_CPORT=("${all[@]:0:3}")
    for i in 0 1 2; do
        servers+="server.$((i + 1))=127.0.0.1:${all[3 + i]}:${all[6 + i]}"$'\n'
    done
    for k in 0 1 2; do
        d=$ZK_DIR0/zk$k
        mkdir -p "$d/data"
        echo $((k + 1)) >"$d/data/myid"
        zk_log4j "$d"
        cat >"$d/zoo.cfg" <<EOF
tickTime=500
initLimit=20
syncLimit=10
dataDir=$d/data
clientPort=${ZK_CPORT[k]}
clientPortAddress=127.0.0.1
admin.enableServer=false
maxSessionTimeout=60000
4lw.commands.whitelist=ruok,srvr,stat
$servers
EOF
        zk_member_start "$k"
    done
    cluster_wait zk
}

zk_leader() {
    local k
    for k in 0 1 2; do
        svc_running "${ZK_MPID[k]}" || continue
        if zk_member_4lw "$k" srvr | grep -q '^Mode: leader'; then
            echo "$k"
            return 0
        fi
    done
    echo -1
}
