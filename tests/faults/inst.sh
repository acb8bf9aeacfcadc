# shellcheck shell=bash
# inst.sh - the fault harness's idmintd instances and their load, sourced
# by tests/faults/run.sh (which sets RUN, IDMINTD, FC and track).
#
#   inst_add NAME KIND NETNS USER [IDMINTD OPTIONS...]
#       declares an instance: KIND sf (snowflakes) or seg (segments of the
#       tag "faults"); NETNS a network namespace to run it in (or ""),
#       USER another user to run it as (or ""); INST_ENV[NAME] a command
#       prefix such as "env -i PATH=..." (optional). Its number (the
#       checker's instance) is its order of declaration.
#   inst_start NAME   starts it on its ports (picked on the first start, the
#       same on every later one, so that its clients reconnect to it) with
#       --state-dir RUN/NAME.state unless given; waits for its "ready" line.
#   inst_kill NAME (SIGKILL and reap), inst_stop_all.
#   load_start NAME   its clients (faultclient load: HTTP, and RESP too for
#       a minter with a coordinator) and its /v1/node poller, in its
#       namespace; load_stop ends them all (SIGTERM, then waits).

declare -A INST_NO INST_KIND INST_NS INST_USER INST_ARGS INST_ENV INST_PH INST_PR INST_PID
INST_ORDER=()
CLIENT_NO=0
LOAD_COUNT=${LOAD_COUNT:-20}
LOAD_INTERVAL_MS=${LOAD_INTERVAL_MS:-5}

inst_add() {
    local name=$1
    INST_NO[$name]=${#INST_ORDER[@]}
    INST_KIND[$name]=$2
    INST_NS[$name]=$3
    INST_USER[$name]=$4
    shift 4
    INST_ARGS[$name]=$(printf '%q ' "$@")
    INST_ORDER+=("$name")
}

# inst_prefix NAME: the words that run a command in its namespace (and,
# with user, as its user) into array INST_PREFIX.
inst_prefix() {
    INST_PREFIX=()
    [ -n "${INST_NS[$1]}" ] && INST_PREFIX=(ip netns exec "${INST_NS[$1]}")
    if [ -n "${2:-}" ] && [ -n "${INST_USER[$1]}" ]; then
        INST_PREFIX+=(setpriv "--reuid=${INST_USER[$1]}" "--regid=$(id -g "${INST_USER[$1]}")"
            --clear-groups --)
    fi
}

inst_start() {
    local name=$1 ports args=() envs=() state=() before n=0 log=$RUN/$1.log
    if [ -z "${INST_PH[$name]:-}" ]; then
        pick_ports 2 ports || return 1
        INST_PH[$name]=${ports[0]}
        INST_PR[$name]=${ports[1]}
    fi
    eval "args=(${INST_ARGS[$name]})"
    case " ${args[*]} " in
    *" --state-dir "*) ;;
    *)
        state=(--state-dir "$RUN/$name.state")
        mkdir -p "$RUN/$name.state"
        chmod 0700 "$RUN/$name.state"
        [ -n "${INST_USER[$name]}" ] && chown "${INST_USER[$name]}" "$RUN/$name.state"
        ;;
    esac
    [ -n "${INST_ENV[$name]:-}" ] && read -ra envs <<<"${INST_ENV[$name]}"
    inst_prefix "$name" user
    before=$(grep -c 'ready (pid' "$log" 2>/dev/null)
    "${INST_PREFIX[@]}" "${envs[@]}" "$IDMINTD" --http "127.0.0.1:${INST_PH[$name]}" \
        --resp "127.0.0.1:${INST_PR[$name]}" "${state[@]}" "${args[@]}" >>"$log" 2>&1 </dev/null &
    INST_PID[$name]=$!
    track "${INST_PID[$name]}"
    while [ $n -lt 300 ]; do
        [ "$(grep -c 'ready (pid' "$log" 2>/dev/null)" -gt "${before:-0}" ] && return 0
        svc_running "${INST_PID[$name]}" || return 1
        sleep 0.05
        n=$((n + 1))
    done
    return 1
}

inst_kill() {
    kill_reap "${INST_PID[$1]}"
}

inst_stop_all() {
    local name
    for name in "${INST_ORDER[@]}"; do
        [ -n "${INST_PID[$name]:-}" ] || continue
        kill -CONT "${INST_PID[$name]}" 2>/dev/null
        svc_stop "${INST_PID[$name]}" 10
    done
}

# client NAME PROTO REQUEST: one faultclient load connection.
client() {
    local name=$1 port
    [ "$2" = http ] && port=${INST_PH[$name]} || port=${INST_PR[$name]}
    inst_prefix "$name"
    CLIENT_NO=$((CLIENT_NO + 1))
    "${INST_PREFIX[@]}" "$FC" load "--$2" "127.0.0.1:$port" --req "$3" \
        --inst "${INST_NO[$name]}" --client "$CLIENT_NO" --kind "${INST_KIND[$name]}" \
        --out "$RUN/$name.c$CLIENT_NO.ids" --interval-ms "$LOAD_INTERVAL_MS" \
        2>>"$RUN/clients.err" </dev/null &
    CLIENT_PIDS+=($!)
}

load_start() {
    local name=$1
    if [ "${INST_KIND[$name]}" = seg ]; then
        client "$name" http "/v1/segment/faults?count=$LOAD_COUNT"
        client "$name" resp "INCR faults"
    else
        client "$name" http "/v1/ids/snowflake?count=$LOAD_COUNT"
        case " ${INST_ARGS[$name]} " in
        *" --coord "*) client "$name" resp "NEXT snowflake $LOAD_COUNT" ;;
        esac
    fi
    inst_prefix "$name"
    "${INST_PREFIX[@]}" "$FC" poll --http "127.0.0.1:${INST_PH[$name]}" --inst "${INST_NO[$name]}" \
        --out "$RUN/$name.poll" 2>>"$RUN/clients.err" </dev/null &
    CLIENT_PIDS+=($!)
}

load_stop() {
    [ ${#CLIENT_PIDS[@]} -gt 0 ] || return 0
    kill -TERM "${CLIENT_PIDS[@]}" 2>/dev/null
    wait "${CLIENT_PIDS[@]}" 2>/dev/null
    CLIENT_PIDS=()
}
