#!/usr/bin/env bash
# run.sh - the fault harness: real coordinators, real idmintd, real load,
# real faults, and a checker that judges every ID received.
#
#   bash tests/faults/run.sh --bounded [--build DIR] [--keep]
#   bash tests/faults/run.sh --minutes N [--seed S] [--ttl S] [--build DIR] [--keep]
#
# It starts, on loopback ports of its own (tests/ports.sh):
#   - a 3-member etcd cluster and a 3-member ZooKeeper ensemble
#     (cluster.sh), and a PostgreSQL server (tests/coord/pg.sh);
#   - idmintd instances (inst.sh), each with its own state directory:
#     e0..e3 `--coord` over all three etcd members, nodes 0..2 (so e3
#     waits for a free node: the standby that takes over), e2 in a network
#     namespace of its own joined to the host by a veth pair (the
#     partitions); z0, z1 `--coord` over the ZooKeeper ensemble, nodes
#     8..10; l0 (root) and l1 (user nobody, an empty environment) on a
#     shared host-local registry, nodes 16..17; c0 under libfaketime,
#     node 18; d0 with its state on a 2 MiB tmpfs, node 19; s0, s1 serving
#     segments of one tag from the PostgreSQL store;
#   - load: faultclient connections over HTTP and RESP to every instance
#     (two to each snowflake minter with a coordinator), recording each ID
#     and when it arrived, and a /v1/node poller per instance (100 ms);
# then injects faults (faults.sh), each logged with its start and end in
# faults.log, stops the load and runs the checker (checker.c) over
# everything received: duplicates, order per connection, fencing (no
# snowflake stamped after its lease's deadline), segment IDs beyond the
# store's leases; and the figures (IDs, longest pause per instance and per
# fault, node moves).
#
# --bounded (the test command, about 2.5 minutes): each fault once, in a
#   fixed order, with --lease-ttl 2: etcd's leader killed, a follower
#   stopped, quorum lost, a one-way and a two-way partition of e2, an
#   idmintd stopped past its TTL and one killed, ZooKeeper's leader
#   killed, the host-local registry and a state directory removed under
#   load (and a third server started on the registry meanwhile), c0's
#   clock stepped back, d0's disk full, PostgreSQL stopped -m immediate.
# --minutes N: faults drawn at random (seeded; the seed is printed: run
#   again with --seed S for the same sequence) until N minutes have
#   passed, with random durations; also rolling restarts, ZooKeeper's
#   quorum loss, leaders stopped, and requests dropped one way.
# --ttl S: --lease-ttl of the coordinated instances (default 2 bounded,
#   10 long: idmintd's default).
# LOAD_COUNT, LOAD_INTERVAL_MS (environment): IDs per request (20) and the
#   pause after each reply (5 ms bounded, 20 ms long).
# --keep: keep the run directory (it is kept anyway when the check fails,
#   and its path printed: the evidence).
#
# Needs root (network namespaces, nftables, a tmpfs, a second user), etcd,
# java with ZooKeeper's jars, PostgreSQL, nft, ip and libfaketime; exits
# 77 when not root or when one is missing (a failure under
# IDM_COORD_REQUIRED=ON). Exit 0 when the checker found nothing, 1 when it
# found a violation or the harness could not run.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODE=
MINUTES=0
SEED=
TTL=
BUILD=$ROOT/build
KEEP=0

usage() {
    sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case $1 in
    --bounded) MODE=bounded; shift ;;
    --minutes)
        MODE=long
        MINUTES=${2:-}
        case $MINUTES in '' | *[!0-9]* | 0) echo "run.sh: --minutes needs a whole number above 0, got '$MINUTES'" >&2; exit 2 ;; esac
        shift 2 ;;
    --seed)
        SEED=${2:-}
        case $SEED in '' | *[!0-9]*) echo "run.sh: --seed needs a whole number, got '$SEED'" >&2; exit 2 ;; esac
        shift 2 ;;
    --ttl)
        TTL=${2:-}
        case $TTL in '' | *[!0-9]* | 0 | 1) echo "run.sh: --ttl needs whole seconds, at least 2, got '$TTL'" >&2; exit 2 ;; esac
        shift 2 ;;
    --build) BUILD=${2:?run.sh: --build needs a directory}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (--bounded, --minutes N, --seed S, --ttl S, --build DIR, --keep, --help)" >&2; exit 2 ;;
    esac
done
[ -n "$MODE" ] || { echo "run.sh: say --bounded or --minutes N (--help)" >&2; exit 2; }
[ -n "$SEED" ] || SEED=$((RANDOM * 32768 + RANDOM))
if [ -z "$TTL" ]; then
    [ "$MODE" = bounded ] && TTL=2 || TTL=10
fi
RANDOM=$SEED
# Load: IDs per request and the pause between a reply and the next request
# of each connection (a long run asks for less, so that its tens of
# millions of IDs fit the checker's memory: 24 bytes each).
if [ "$MODE" = bounded ]; then
    export LOAD_COUNT=${LOAD_COUNT:-20} LOAD_INTERVAL_MS=${LOAD_INTERVAL_MS:-5}
else
    export LOAD_COUNT=${LOAD_COUNT:-20} LOAD_INTERVAL_MS=${LOAD_INTERVAL_MS:-20}
fi

IDMINTD=$BUILD/idmintd
IDMINT=$BUILD/idmint
FC=$BUILD/tests/faultclient
CHECKER=$BUILD/tests/checker
export LC_ALL=C

skip() {
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "run.sh: $1 (a failure: IDM_COORD_REQUIRED=ON)" >&2
        exit 1
    fi
    echo "run.sh: skipped: $1" >&2
    exit 77
}
[ "$(id -u)" = 0 ] || skip "the fault harness needs root (network namespaces, nftables, tmpfs)"
for f in "$IDMINTD" "$IDMINT" "$FC" "$CHECKER"; do
    [ -x "$f" ] || { echo "run.sh: $f is not built (--build DIR)" >&2; exit 1; }
done
for c in etcd java ip nft curl runuser setpriv mount; do
    command -v "$c" >/dev/null || skip "$c is not installed"
done
# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"
[ -f "$FAKETIME_LIB" ] || skip "libfaketime is not installed"

RUN=$(mktemp -d "${TMPDIR:-/tmp}/idmint-faults.XXXXXX")
chmod 0711 "$RUN" # the postgres user and nobody reach their directories
PIDS=()
CLIENT_PIDS=()
SUFFIX=$$
NS=idf$SUFFIX
VH=idfh$SUFFIX
VN=idfn$SUFFIX
# A /30 of 10.231.0.0/16 per run (the process number picks it).
NET=10.231.$((SUFFIX % 250)).$((SUFFIX / 250 % 60 * 4))
HOST_IP=${NET%.*}.$((${NET##*.} + 1))
NS_IP=${NET%.*}.$((${NET##*.} + 2))
TMPFS=$RUN/d0.state
MOUNTED=0
FAILED_RUN=0

track() {
    PIDS+=("$1")
}

cleanup() {
    local p
    for p in "${CLIENT_PIDS[@]}" "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    wait 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    ip link del "$VH" 2>/dev/null
    [ "$MOUNTED" = 1 ] && umount "$TMPFS" 2>/dev/null
    if [ "$KEEP" = 1 ] || [ "$FAILED_RUN" = 1 ]; then
        echo "run.sh: the run's directory is kept: $RUN" >&2
    else
        rm -rf "$RUN"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$ROOT/tests/coord/pg.sh"
# shellcheck source=tests/faults/cluster.sh
. "$HERE/cluster.sh"
# shellcheck source=tests/faults/inst.sh
. "$HERE/inst.sh"
# shellcheck source=tests/faults/faults.sh
. "$HERE/faults.sh"

now_us() {
    echo "${EPOCHREALTIME/./}"
}

say() {
    printf '%s run.sh: %s\n' "$(date -u +%H:%M:%S)" "$*"
}

die() {
    FAILED_RUN=1
    say "$*" >&2
    exit 1
}

say "mode $MODE, seed $SEED (run again with --seed $SEED), lease TTL ${TTL}s, $LOAD_COUNT IDs a request every ${LOAD_INTERVAL_MS} ms, directory $RUN"

# ---- the network namespace of e2 -------------------------------------------
ip netns add "$NS" || die "cannot make a network namespace"
ip link add "$VH" type veth peer name "$VN" || die "cannot make a veth pair"
ip link set "$VN" netns "$NS"
ip addr add "$HOST_IP/30" dev "$VH"
ip link set "$VH" up
ip netns exec "$NS" ip addr add "$NS_IP/30" dev "$VN"
ip netns exec "$NS" ip link set "$VN" up
ip netns exec "$NS" ip link set lo up

# ---- the services ----------------------------------------------------------
etcd_cluster_start "$RUN/etcd" "$HOST_IP" || die "the etcd cluster did not start"
zk_ensemble_start "$RUN/zk" || die "the ZooKeeper ensemble did not start"
start_pg "$RUN/pg" || die "PostgreSQL did not start"
"$IDMINT" segment create faults --store "$PG_URL" --step 1000 --max-step 8000 ||
    die "cannot create the segment tag"
say "etcd ${ETCD_ENDPOINTS}, ZooKeeper ${ZK_ENDPOINTS}, PostgreSQL $PG_PORT"

# ---- the instances ---------------------------------------------------------
ETCD_URL=etcd://$ETCD_ENDPOINTS/idmint-faults
ETCD_URL_NS=etcd://$HOST_IP:${ETCD_CPORT[0]},$HOST_IP:${ETCD_CPORT[1]},$HOST_IP:${ETCD_CPORT[2]}/idmint-faults
ZK_URL=zk://$ZK_ENDPOINTS/idmint-faults
mkdir -p "$RUN/nodes" "$TMPFS"
chmod 1777 "$RUN/nodes"
mount -t tmpfs -o size=2m,mode=0700 idmint-faults "$TMPFS" || die "cannot mount a tmpfs"
MOUNTED=1
echo +0 >"$RUN/c0.faketime"

COORD=(--lease-ttl "$TTL")
inst_add e0 sf "" "" --coord "$ETCD_URL" --node-range 0..2 "${COORD[@]}"
inst_add e1 sf "" "" --coord "$ETCD_URL" --node-range 0..2 "${COORD[@]}"
inst_add e2 sf "$NS" "" --coord "$ETCD_URL_NS" --node-range 0..2 "${COORD[@]}"
inst_add e3 sf "" "" --coord "$ETCD_URL" --node-range 0..2 "${COORD[@]}"
inst_add z0 sf "" "" --coord "$ZK_URL" --node-range 8..10 "${COORD[@]}"
inst_add z1 sf "" "" --coord "$ZK_URL" --node-range 8..10 "${COORD[@]}"
inst_add l0 sf "" "" --node-registry "$RUN/nodes" --node-range 16..17
inst_add l1 sf "" nobody --node-registry "$RUN/nodes" --node-range 16..17
INST_ENV[l1]="env -i PATH=/usr/bin:/bin"
inst_add c0 sf "" "" --node-registry "$RUN/nodes.c0" --node-range 18..18
INST_ENV[c0]="env LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$RUN/c0.faketime FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1"
inst_add d0 sf "" "" --node-registry "$RUN/nodes.d0" --node-range 19..19 --state-dir "$TMPFS"
inst_add s0 seg "" "" --segments "$PG_URL"
inst_add s1 seg "" "" --segments "$PG_URL"

for name in "${INST_ORDER[@]}"; do
    inst_start "$name" || die "idmintd $name did not start; the end of its log: $(tail -n 5 "$RUN/$name.log")"
done
say "instances: ${INST_ORDER[*]}"

# ---- the load ---------------------------------------------------------------
for name in "${INST_ORDER[@]}"; do
    load_start "$name"
done
sleep 2

# ---- the faults ---------------------------------------------------------------
T_START=$(now_us)
if [ "$MODE" = bounded ]; then
    faults_bounded
else
    faults_random $((MINUTES * 60))
fi
sleep 2
T_END=$(now_us)
say "faults done in $(((T_END - T_START) / 1000000)) s; stopping the load"

# ---- the check ---------------------------------------------------------------
load_stop
SEG_MAX=$(pg_psql -Atc "SELECT next_id FROM idmint_segments WHERE tag = 'faults'" 2>/dev/null)
case $SEG_MAX in '' | *[!0-9]*) die "cannot read the store's next ID for the tag (got '$SEG_MAX')" ;; esac
inst_stop_all
say "checking (the segment store's next ID: $SEG_MAX)"
"$CHECKER" --dir "$RUN" --layout twitter --seg-max "$SEG_MAX" --json "$RUN/result.json" |
    tee "$RUN/result.txt"
rc=${PIPESTATUS[0]}
if grep -q 'malformed=[1-9]' "$RUN/clients.err"; then
    FAILED_RUN=1
    say "a client received a malformed reply:"
    grep 'malformed=[1-9]' "$RUN/clients.err"
    exit 1
fi
if [ "$rc" != 0 ]; then
    FAILED_RUN=1
    say "the checker found violations (exit $rc); seed $SEED; evidence in $RUN"
    exit 1
fi
# A run whose load never got through is no evidence: every minter must
# have answered.
for name in "${INST_ORDER[@]}"; do
    [ "$name" = l2 ] && continue # it must wait: its range is held
    grep -q "^  instance ${INST_NO[$name]}: " "$RUN/result.txt" ||
        die "instance $name ($((INST_NO[$name]))) answered no ID at all"
done
say "passed: seed $SEED"
