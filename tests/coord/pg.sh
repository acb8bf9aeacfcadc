# shellcheck shell=bash
# pg.sh - a real PostgreSQL server for the segment store tests, sourced by
# tests/coord/*.sh after services.sh (whose svc_* helpers it uses).
#
#   start_pg DIR     a new cluster (Debian's PostgreSQL 15: initdb, then
#                    pg_ctl) in DIR/data, listening on a random loopback
#                    port and a Unix socket in DIR/sock, logging to
#                    DIR/pg.log; waits up to 30 s for pg_isready. Sets
#                    PG_PORT, PG_PID (the postmaster's, from
#                    DIR/data/postmaster.pid) and
#                    PG_URL=postgresql://postgres@127.0.0.1:PORT/postgres.
#                    Authentication is trust (loopback only); every role
#                    connects without a password.
#   stop_pg [MODE]   pg_ctl stop -m MODE (smart, fast or immediate; default
#                    fast), waits up to 30 s (then SIGKILL to PG_PID).
#   resume_pg        starts the stopped cluster again on the same port and
#                    data (after a crash, immediate mode, it recovers).
#   restart_pg [MODE] [COMMAND...]
#                    stop_pg MODE, runs COMMAND (if given) while the server
#                    is down, then resume_pg.
#   pg_psql ARGS...  psql as postgres over the cluster's socket.
#   PG_ENV           VAR=VALUE words that pg_ctl, and so the server, is
#                    started with (by start_pg, resume_pg, restart_pg), e.g.
#                    libfaketime's LD_PRELOAD: set through env after
#                    runuser, so that root's runuser is not preloaded too.
#
# initdb refuses to run as root: as root, initdb and pg_ctl run as the
# postgres user (runuser), DIR is given to it, and DIR's parents must be
# searchable by it. A start that fails prints pg_ctl's message and the
# server's log to stderr and returns 1. The server is ended by pg_ctl or
# by its PID, never by name; a cluster still running when the shell exits
# is stopped (immediate) before any EXIT trap that was set before the
# first start.

PG_BIN=${PG_BIN:-}
PG_DIR=
PG_ENV=()
PG_TRAP_SET=0

# pg_bin: sets PG_BIN to the newest installed server's bin directory.
pg_bin() {
    [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] && return 0
    local d
    while read -r d; do
        [ -x "$d/initdb" ] && PG_BIN=$d
    done < <(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V)
    [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]
}

pg_installed() {
    pg_bin
}

# pg_as COMMAND...: runs COMMAND as postgres when we are root, from DIR
# (a working directory that postgres can enter).
pg_as() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$PG_DIR" && runuser -u postgres -- "$@")
    else
        (cd "$PG_DIR" && "$@")
    fi
}

pg_psql() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR/sock" -p "$PG_PORT" -U postgres -d postgres "$@"
}

pg_cleanup() {
    if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then
        pg_as timeout 20 "$PG_BIN/pg_ctl" -D "$PG_DIR/data" stop -m immediate -w >/dev/null 2>&1
        [ -n "${PG_PID:-}" ] && svc_running "$PG_PID" && kill -KILL "$PG_PID" 2>/dev/null
    fi
}

pg_trap() {
    [ "$PG_TRAP_SET" = 0 ] || return 0
    PG_TRAP_SET=1
    # Keeps an EXIT trap set earlier: ours runs first, then it.
    local prev words
    prev=$(trap -p EXIT)
    if [ -n "$prev" ]; then
        # "trap -- 'COMMAND' EXIT", quoted for eval.
        eval "words=($prev)"
        PG_PREV_TRAP=${words[2]}
    else
        PG_PREV_TRAP=
    fi
    trap 'pg_cleanup; eval "$PG_PREV_TRAP"' EXIT
}

pg_ready() {
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -t 2
}

# pg_launch: pg_ctl start on the existing cluster; 0 once it accepts
# connections on 127.0.0.1:PG_PORT.
pg_launch() {
    if ! pg_as env ${PG_ENV[@]+"${PG_ENV[@]}"} "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/pg.log" -w -t 30 start \
        >"$PG_DIR/pg_ctl.log" 2>&1; then
        echo "pg.sh: pg_ctl start failed: $(tr '\n' ' ' <"$PG_DIR/pg_ctl.log")" >&2
        return 1
    fi
    PG_PID=$(head -n 1 "$PG_DIR/data/postmaster.pid" 2>/dev/null)
    [ -n "$PG_PID" ] || return 1
    svc_wait 30 "$PG_PID" pg_ready || {
        echo "pg.sh: the postmaster ($PG_PID) $(svc_running "$PG_PID" && echo 'does not accept connections' || echo exited)" >&2
        return 1
    }
}

start_pg() {
    PG_DIR=$1
    pg_bin || {
        echo "pg.sh: no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)" >&2
        return 1
    }
    mkdir -p "$PG_DIR" || return 1
    PG_DIR=$(cd "$PG_DIR" && pwd)
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$PG_DIR" || return 1
        if ! runuser -u postgres -- test -w "$PG_DIR"; then
            echo "pg.sh: the postgres user cannot reach $PG_DIR (a parent directory it cannot search?)" >&2
            return 1
        fi
    fi
    pg_trap
    rm -rf "$PG_DIR/data" "$PG_DIR/sock"
    pg_as mkdir -m 0700 "$PG_DIR/sock" || return 1
    # --no-sync: a test cluster need not survive a power cut of its own
    # making; the server itself keeps fsync on.
    if ! pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 \
        --locale=C.UTF-8 --no-sync >"$PG_DIR/initdb.log" 2>&1; then
        echo "pg.sh: initdb failed:" >&2
        tail -n 20 "$PG_DIR/initdb.log" >&2
        return 1
    fi
    local try
    for try in 1 2 3 4 5; do
        svc_random_port || continue
        PG_PORT=$SVC_PORT
        # Settings in postgresql.conf itself (pg_ctl -o would silently
        # override ALTER SYSTEM).
        cat >>"$PG_DIR/data/postgresql.conf" <<CONF
# pg.sh (try $try)
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_DIR/sock'
max_connections = 60
shared_buffers = 16MB
logging_collector = off
CONF
        # shellcheck disable=SC2034 # for the scripts that source this file
        PG_URL=postgresql://postgres@127.0.0.1:$PG_PORT/postgres
        pg_launch && return 0
        pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" stop -m immediate >/dev/null 2>&1
        # Another process took the port between the check and the bind.
        grep -q 'could not bind\|already in use' "$PG_DIR/pg.log" 2>/dev/null || break
        mv "$PG_DIR/pg.log" "$PG_DIR/pg.log.$try"
    done
    echo "pg.sh: PostgreSQL did not start; the end of $PG_DIR/pg.log:" >&2
    tail -n 20 "$PG_DIR/pg.log" >&2
    return 1
}

stop_pg() {
    local mode=${1:-fast}
    [ -n "$PG_DIR" ] || return 0
    if ! pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" stop -m "$mode" -w -t 30 >/dev/null 2>&1; then
        if [ -n "${PG_PID:-}" ] && svc_running "$PG_PID"; then
            echo "pg.sh: pg_ctl stop -m $mode failed; killing $PG_PID" >&2
            kill -KILL "$PG_PID" 2>/dev/null
        fi
    fi
    return 0
}

resume_pg() {
    if ! pg_launch; then
        echo "pg.sh: PostgreSQL did not start again; the end of $PG_DIR/pg.log:" >&2
        tail -n 20 "$PG_DIR/pg.log" >&2
        return 1
    fi
}

restart_pg() {
    local mode=fast
    case ${1:-} in
    smart | fast | immediate)
        mode=$1
        shift
        ;;
    esac
    stop_pg "$mode"
    [ $# -gt 0 ] && "$@"
    resume_pg
}
