# shellcheck shell=bash
# faults.sh - the faults of the harness, sourced by tests/faults/run.sh.
# Each f_NAME injects one fault, holds it HOLD seconds, undoes it and
# waits for the service it broke to be back, then appends to
# RUN/faults.log "START_US END_US NAME DETAIL" (the checker attributes
# pauses to it). faults_bounded runs each once; faults_random SECONDS draws
# them, and how long each is held, from a generator seeded by the run's
# seed (rnd) until SECONDS have passed.

fault_log() {
    echo "$1 $(now_us) $2 ${3:-}" >>"$RUN/faults.log"
    say "fault $2 ${3:-} done ($((($(now_us) - $1) / 1000)) ms)"
}

# A member other than k (and other than l, if given).
other_member() {
    local i
    for i in 0 1 2; do
        [ "$i" != "$1" ] && [ "$i" != "${2:--}" ] && { echo "$i"; return; }
    done
}

# leader KIND: the index of etcd's or ZooKeeper's leader (0 when none).
leader() {
    local k
    k=$("$1_leader")
    [ "$k" -ge 0 ] 2>/dev/null && echo "$k" || echo 0
}

# member_pid KIND K
member_pid() {
    local -n _pids=${1^^}_MPID
    echo "${_pids[$2]}"
}

# f_member KIND ROLE HOW HOLD: the leader (ROLE leader) or a follower
# (follower) of etcd or ZooKeeper killed (HOW kill9) or stopped (stop),
# held, then started again or continued.
f_member() {
    local t0 kind=$1 role=$2 how=$3 k
    t0=$(now_us)
    k=$(leader "$kind")
    [ "$role" = follower ] && k=$(other_member "$k")
    if [ "$how" = kill9 ]; then
        "${kind}_member_down" "$k"
        sleep "$4"
        "${kind}_member_start" "$k"
    else
        kill -STOP "$(member_pid "$kind" "$k")"
        sleep "$4"
        kill -CONT "$(member_pid "$kind" "$k")"
    fi
    member_wait "$kind" "$k"
    fault_log "$t0" "${kind}_${role}_$how" "member=$k"
}

# f_quorum_loss KIND HOLD: two of three members killed (the leader and
# another): no lease can be confirmed; both started again.
f_quorum_loss() {
    local t0 kind=$1 a b
    t0=$(now_us)
    a=$(leader "$kind")
    b=$(other_member "$a")
    "${kind}_member_down" "$a"
    "${kind}_member_down" "$b"
    sleep "$2"
    "${kind}_member_start" "$a"
    "${kind}_member_start" "$b"
    member_wait "$kind" "$a"
    member_wait "$kind" "$b"
    fault_log "$t0" "${kind}_quorum_loss" "members=$a,$b"
}

# f_rolling KIND: each member stopped (SIGTERM) and started again in turn,
# the next once it serves.
f_rolling() {
    local t0 kind=$1 k
    t0=$(now_us)
    for k in 0 1 2; do
        svc_stop "$(member_pid "$kind" "$k")" 10
        "${kind}_member_start" "$k"
        member_wait "$kind" "$k"
    done
    fault_log "$t0" "${kind}_rolling_restart"
}

# e2's traffic with the coordinator dropped in one direction (nftables in
# its namespace: input = the replies, output = the requests), or both
# (its veth down). Its clients run in the namespace: they are not cut.
f_partition() {
    local t0 dir=$2 inst=${INST_NO[e2]}
    t0=$(now_us)
    case $dir in
    replies | requests)
        local hook=input match="ip saddr $HOST_IP"
        [ "$dir" = requests ] && { hook=output; match="ip daddr $HOST_IP"; }
        ip netns exec "$NS" nft add table inet idmfault
        ip netns exec "$NS" nft add chain inet idmfault cut "{ type filter hook $hook priority 0; }"
        # shellcheck disable=SC2086 # the match is words
        ip netns exec "$NS" nft add rule inet idmfault cut $match drop
        sleep "$1"
        ip netns exec "$NS" nft delete table inet idmfault
        fault_log "$t0" "partition_${dir}_dropped" "inst=$inst"
        ;;
    both)
        ip netns exec "$NS" ip link set "$VN" down
        sleep "$1"
        ip netns exec "$NS" ip link set "$VN" up
        fault_log "$t0" partition_two_way "inst=$inst"
        ;;
    esac
}

f_idmintd_stop() {
    local t0 name=$2
    t0=$(now_us)
    kill -STOP "${INST_PID[$name]}"
    sleep "$1"
    kill -CONT "${INST_PID[$name]}"
    fault_log "$t0" idmintd_sigstop "inst=${INST_NO[$name]} name=$name"
}

f_idmintd_kill() {
    local t0 name=$2
    t0=$(now_us)
    inst_kill "$name"
    sleep "$1"
    inst_start "$name" || say "idmintd $name did not start again"
    fault_log "$t0" idmintd_kill9 "inst=${INST_NO[$name]} name=$name"
}

# The host-local registry removed under load, and another server, started
# from an empty environment, on it at once: the holders (root's l0 and
# nobody's l1) keep their nodes (l2 must wait, not take one), then put
# their files back.
F_L2_ADDED=0
f_registry_removed() {
    local t0
    t0=$(now_us)
    if [ "$F_L2_ADDED" = 0 ]; then
        inst_add l2 sf "" "" --node-registry "$RUN/nodes" --node-range 16..17
        INST_ENV[l2]="env -i PATH=/usr/bin:/bin"
        F_L2_ADDED=1
    fi
    rm -rf "$RUN/nodes"
    inst_start l2 || say "idmintd l2 did not start"
    # Its clients, once: they reconnect to its ports when it runs again.
    [ "$F_L2_ADDED" = 1 ] && load_start l2 && F_L2_ADDED=2
    sleep "$1"
    svc_stop "${INST_PID[l2]}" 10
    fault_log "$t0" registry_removed "inst=${INST_NO[l2]} name=l2"
}

# l0's state directory removed under load, then l0 killed and started
# again: it must resume above what it minted (the registry's mark).
f_state_removed() {
    local t0
    t0=$(now_us)
    rm -rf "$RUN/l0.state"
    sleep "$1"
    inst_kill l0
    inst_start l0 || say "idmintd l0 did not start again"
    fault_log "$t0" state_removed "inst=${INST_NO[l0]} name=l0"
}

# c0's clock (libfaketime) stepped back, held, then set right.
f_clock_back() {
    local t0 s=$2
    t0=$(now_us)
    echo "-$s" >"$RUN/c0.faketime.new"
    mv "$RUN/c0.faketime.new" "$RUN/c0.faketime"
    sleep "$1"
    echo +0 >"$RUN/c0.faketime.new"
    mv "$RUN/c0.faketime.new" "$RUN/c0.faketime"
    fault_log "$t0" clock_back "inst=${INST_NO[c0]} slack_ms=$((s * 1000)) step_s=$s"
}

# d0's state disk (a 2 MiB tmpfs) filled, d0 killed and started again on
# it, held, freed (and d0 started again if it could not start full).
f_disk_full() {
    local t0
    t0=$(now_us)
    dd if=/dev/zero of="$TMPFS/fill" bs=64k 2>/dev/null
    inst_kill d0
    inst_start d0 || say "idmintd d0 did not start on a full disk"
    sleep "$1"
    rm -f "$TMPFS/fill"
    svc_running "${INST_PID[d0]}" || inst_start d0 || say "idmintd d0 did not start again"
    fault_log "$t0" disk_full "inst=${INST_NO[d0]}"
}

f_pg_immediate() {
    local t0
    t0=$(now_us)
    stop_pg immediate
    sleep "$1"
    resume_pg || say "PostgreSQL did not start again"
    fault_log "$t0" pg_stop_immediate
}

# Each fault once. e3 starts as the standby (nodes 0..2 for e0..e3): the
# one-way partition moves e2's node to e3, e3 stopped past its TTL moves it
# back, the two-way partition moves it to e3 again, and e1 killed gives
# its node to e2.
faults_bounded() {
    local ttl=$TTL rest=2
    f_member etcd leader kill9 3; sleep $rest
    f_member etcd follower stop 3; sleep $rest
    f_quorum_loss etcd 5; sleep 3
    f_partition $((ttl + 2)) replies; sleep $rest
    f_idmintd_stop $((ttl + 3)) e3; sleep 3
    f_partition $((ttl + 2)) both; sleep $rest
    f_idmintd_kill 1 e1; sleep 3
    f_member zk leader kill9 3; sleep $rest
    f_registry_removed 3
    f_state_removed 1
    f_clock_back 3 2
    f_disk_full 3
    f_pg_immediate 3
}

# rnd LO HI: R = a whole number in [LO, HI], the next of a generator of
# its own seeded with the run's seed (bash's RANDOM also picks the ports,
# a number of draws that varies: the sequence would not replay).
FSEED=${SEED:-1}
rnd() {
    FSEED=$(((FSEED * 1103515245 + 12345) % 2147483648))
    R=$(($1 + FSEED / 65536 % ($2 - $1 + 1)))
}

faults_random() {
    local until=$(($(now_us) + $1 * 1000000)) ttl=$TTL pick name step
    local minters=(e0 e1 e2 e3 z0 z1)
    while [ "$(now_us)" -lt "$until" ]; do
        rnd 0 19
        pick=$R
        rnd 0 $((${#minters[@]} - 1))
        name=${minters[R]}
        case $pick in
        4 | 7) rnd 2 12 ;;
        9 | 10 | 11) rnd 1 $((ttl * 2)) ;;
        12) rnd $((ttl + 1)) $((ttl * 2 + 3)) ;;
        13 | 14) rnd 0 3 ;;
        16) rnd 1 3 ;;
        19) rnd 1 6 ;;
        *) rnd 1 8 ;;
        esac
        case $pick in
        0) f_member etcd leader kill9 "$R" ;;
        1) f_member etcd leader stop "$R" ;;
        2) f_member etcd follower kill9 "$R" ;;
        3) f_member etcd follower stop "$R" ;;
        4) f_quorum_loss etcd "$R" ;;
        5) f_rolling etcd ;;
        6) f_member zk leader kill9 "$R" ;;
        7) f_quorum_loss zk "$R" ;;
        8) f_rolling zk ;;
        9) f_partition "$R" replies ;;
        10) f_partition "$R" requests ;;
        11) f_partition "$R" both ;;
        12) f_idmintd_stop "$R" "$name" ;;
        13 | 14) f_idmintd_kill "$R" "$name" ;;
        15) f_registry_removed "$R" ;;
        16) f_state_removed "$R" ;;
        17)
            step=$R
            rnd 1 3
            f_clock_back "$step" "$R"
            ;;
        18) f_disk_full "$R" ;;
        19) f_pg_immediate "$R" ;;
        esac
        rnd 2 8
        sleep "$R"
    done
}
