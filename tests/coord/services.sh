# shellcheck shell=bash
# services.sh - real etcd and ZooKeeper servers for the coordinator tests,
# sourced by tests/coord/*.sh (and by tests/server/lib.sh-based scripts:
# source lib.sh first, then this).
#
#   start_etcd DIR   etcd (Debian's 3.4) on random loopback client and peer
#                    ports, its data in DIR/etcd.data, logging to
#                    DIR/etcd.log; waits up to 15 s for /health. Sets
#                    ETCD_PORT, ETCD_PEER_PORT, ETCD_PID and
#                    ETCD_URL_HOSTPORT (127.0.0.1:PORT).
#   stop_etcd        SIGTERM to ETCD_PID, waits up to 10 s (then SIGKILL).
#   restart_etcd [COMMAND...]
#                    stop_etcd, runs COMMAND (if given) while etcd is down,
#                    then starts etcd again on the same ports and data.
#   start_zk DIR     ZooKeeper (Debian's 3.8, the JVM run directly: Debian's
#                    zkServer.sh logs nothing) with DIR/zoo.cfg, its data in
#                    DIR/zk.data, logging to DIR/zk.log; waits up to 30 s for
#                    ruok -> imok. Sets ZK_PORT, ZK_PID.
#   stop_zk, restart_zk [COMMAND...]  the same for ZooKeeper.
#
# A start that fails prints the server's log to stderr and returns 1; the
# caller decides what that means. Processes are ended by their PID only. A
# started server is given to lib.sh's `track` when the caller has one (its
# cleanup kills it by PID at exit); otherwise this file keeps its own list
# and kills those PIDs at exit, before any EXIT trap that was set before
# the first start.

# shellcheck source=tests/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

SVC_PIDS=()
SVC_TRAP_SET=0

svc_cleanup() {
    local p
    for p in "${SVC_PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    for p in "${SVC_PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    SVC_PIDS=()
}

# svc_track PID: lib.sh's track when defined, else our own list and trap.
svc_track() {
    if declare -F track >/dev/null; then
        track "$1"
        return
    fi
    SVC_PIDS+=("$1")
    if [ "$SVC_TRAP_SET" = 0 ]; then
        SVC_TRAP_SET=1
        # Keeps an EXIT trap set earlier: ours runs first, then it.
        local prev
        prev=$(trap -p EXIT)
        if [ -n "$prev" ]; then
            eval "set -- $prev"
            SVC_PREV_TRAP=$3
        else
            SVC_PREV_TRAP=
        fi
        trap 'svc_cleanup; eval "$SVC_PREV_TRAP"' EXIT
    fi
}

# svc_running PID: the process exists and is not a zombie.
svc_running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# svc_random_port: sets SVC_PORT to a free loopback port, picked as every
# test script picks them (pick_port, tests/ports.sh).
svc_random_port() {
    pick_port SVC_PORT
}

# svc_stop PID SECONDS: SIGTERM, waits up to SECONDS for the exit, then
# SIGKILL. The PID must be a child of this shell.
svc_stop() {
    local pid=$1 n=0 limit=$(($2 * 20))
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    while [ $n -lt $limit ] && svc_running "$pid"; do
        sleep 0.05
        n=$((n + 1))
    done
    if svc_running "$pid"; then
        echo "services.sh: $pid did not exit $2 s after SIGTERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    return 0
}

# svc_wait SECONDS PID COMMAND...: runs COMMAND every 100 ms until it
# succeeds (0), PID exits (1) or SECONDS pass (1).
svc_wait() {
    local limit=$(($1 * 1000000 + ${EPOCHREALTIME/./})) pid=$2
    shift 2
    while :; do
        "$@" && return 0
        svc_running "$pid" || return 1
        [ "${EPOCHREALTIME/./}" -ge "$limit" ] && return 1
        sleep 0.1
    done
}

# ---- etcd ------------------------------------------------------------------

etcd_healthy() {
    command curl -fs -m 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'
}

# etcd_launch: etcd on ETCD_PORT/ETCD_PEER_PORT with ETCD_DIR; 0 once healthy.
etcd_launch() {
    local peer=http://127.0.0.1:$ETCD_PEER_PORT client=http://127.0.0.1:$ETCD_PORT
    # The --initial-* flags matter only for a new data directory (a restart
    # reads the member from it).
    etcd --name idmint-test --data-dir "$ETCD_DIR/etcd.data" \
        --listen-client-urls "$client" --advertise-client-urls "$client" \
        --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
        --initial-cluster "idmint-test=$peer" --initial-cluster-state new \
        --initial-cluster-token "idmint-test-$ETCD_PEER_PORT" \
        --logger zap --log-outputs stderr >>"$ETCD_DIR/etcd.log" 2>&1 </dev/null &
    ETCD_PID=$!
    svc_track "$ETCD_PID"
    # shellcheck disable=SC2034 # for the scripts that source this file
    ETCD_URL_HOSTPORT=127.0.0.1:$ETCD_PORT
    svc_wait 15 "$ETCD_PID" etcd_healthy
}

start_etcd() {
    ETCD_DIR=$1
    mkdir -p "$ETCD_DIR" || return 1
    local try
    for try in 1 2 3 4 5; do
        svc_random_port || continue
        ETCD_PORT=$SVC_PORT
        svc_random_port || continue
        ETCD_PEER_PORT=$SVC_PORT
        [ "$ETCD_PORT" = "$ETCD_PEER_PORT" ] && continue
        rm -rf "$ETCD_DIR/etcd.data"
        etcd_launch && return 0
        svc_stop "$ETCD_PID" 5
        # Another process took a port between the check and the bind: again.
        grep -q 'address already in use' "$ETCD_DIR/etcd.log" 2>/dev/null || break
        mv "$ETCD_DIR/etcd.log" "$ETCD_DIR/etcd.log.$try"
    done
    echo "services.sh: etcd did not start; the end of $ETCD_DIR/etcd.log:" >&2
    tail -n 20 "$ETCD_DIR/etcd.log" >&2
    return 1
}

stop_etcd() {
    svc_stop "$ETCD_PID" 10
}

restart_etcd() {
    stop_etcd
    [ $# -gt 0 ] && "$@"
    if ! etcd_launch; then
        echo "services.sh: etcd did not start again; the end of $ETCD_DIR/etcd.log:" >&2
        tail -n 20 "$ETCD_DIR/etcd.log" >&2
        return 1
    fi
}

# ---- ZooKeeper -------------------------------------------------------------

ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar

# zk_4lw WORD: sends a four-letter command and prints the answer.
zk_4lw() {
    # shellcheck disable=SC2016 # expanded by the inner bash
    timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3' \
        _ "$ZK_PORT" "$1" 2>/dev/null
}

# ruok answers imok as soon as the server runs, before it serves (srvr
# then says "not currently serving requests"): both are waited for.
zk_ok() {
    [ "$(zk_4lw ruok)" = imok ] && zk_4lw srvr | grep -q '^Mode: '
}

zk_launch() {
    java -Xmx128m -cp "$ZK_DIR:$ZK_CLASSPATH" org.apache.zookeeper.server.ZooKeeperServerMain \
        "$ZK_DIR/zoo.cfg" >>"$ZK_DIR/zk.log" 2>&1 </dev/null &
    ZK_PID=$!
    svc_track "$ZK_PID"
    svc_wait 30 "$ZK_PID" zk_ok
}

# zk_log4j DIR: DIR/log4j.properties, logging to DIR/zk.log (log4j 1.2
# finds it on the class path, DIR first). Also for tests/faults/cluster.sh.
zk_log4j() {
    cat >"$1/log4j.properties" <<EOF
log4j.rootLogger=INFO, F
log4j.appender.F=org.apache.log4j.FileAppender
log4j.appender.F.File=$1/zk.log
log4j.appender.F.Append=true
log4j.appender.F.layout=org.apache.log4j.PatternLayout
log4j.appender.F.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n
EOF
}

start_zk() {
    ZK_DIR=$1
    mkdir -p "$ZK_DIR" || return 1
    zk_log4j "$ZK_DIR"
    local try
    for try in 1 2 3 4 5; do
        svc_random_port || continue
        ZK_PORT=$SVC_PORT
        rm -rf "$ZK_DIR/zk.data"
        # tickTime=500 allows sessions from 1 s (2 ticks); no admin server
        # (Jetty would bind 0.0.0.0:8080).
        cat >"$ZK_DIR/zoo.cfg" <<EOF
tickTime=500
dataDir=$ZK_DIR/zk.data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
maxSessionTimeout=60000
4lw.commands.whitelist=ruok,srvr,stat
EOF
        zk_launch && return 0
        svc_stop "$ZK_PID" 5
        grep -q 'Address already in use' "$ZK_DIR/zk.log" 2>/dev/null || break
        mv "$ZK_DIR/zk.log" "$ZK_DIR/zk.log.$try"
    done
    echo "services.sh: ZooKeeper did not start; the end of $ZK_DIR/zk.log:" >&2
    tail -n 20 "$ZK_DIR/zk.log" >&2
    return 1
}

stop_zk() {
    svc_stop "$ZK_PID" 10
}

restart_zk() {
    stop_zk
    [ $# -gt 0 ] && "$@"
    if ! zk_launch; then
        echo "services.sh: ZooKeeper did not start again; the end of $ZK_DIR/zk.log:" >&2
        tail -n 20 "$ZK_DIR/zk.log" >&2
        return 1
    fi
}
