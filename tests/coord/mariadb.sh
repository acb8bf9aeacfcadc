# shellcheck shell=bash
# mariadb.sh - a real MariaDB server (Debian's 10.11, InnoDB) for the
# tests, sourced by tests/*/*.sh after services.sh (whose svc_* helpers it
# uses).
#
#   start_mariadb DIR
#                    a new server: mariadb-install-db into DIR/data, then
#                    mariadbd as root (--user=root) on a random loopback
#                    port and the socket DIR/sock, logging to
#                    DIR/mariadb.log; waits up to 30 s until it answers
#                    over the socket. Makes the database idmint and the
#                    user idmint (password MARIADB_PASSWORD, random unless
#                    set) for TCP clients from 127.0.0.1, with every right
#                    on idmint.* and SELECT on mysql.innodb_index_stats
#                    (the B-tree figures of idmb_read_stats). Sets
#                    MARIADB_PID, MARIADB_PORT, MARIADB_SOCK, MARIADB_USER,
#                    MARIADB_PASSWORD and
#                    MARIADB_URL=mysql://idmint:PASS@127.0.0.1:PORT/idmint.
#   stop_mariadb     SIGTERM to MARIADB_PID, waits up to 30 s (then
#                    SIGKILL).
#   restart_mariadb  mariadbd again on the same data, port and options
#                    (after stop_mariadb or a kill -9 of MARIADB_PID).
#   mariadb_sql ARGS...
#                    the mariadb client as root over the socket.
#   MARIADB_OPTS     extra mariadbd options, split on spaces, e.g.
#                    "--innodb-buffer-pool-size=32M
#                    --innodb-flush-log-at-trx-commit=0".
#
# A start that fails prints the server's log to stderr and returns 1. The
# server is a child of this shell, ended by its PID only: lib.sh's track or
# services.sh's own list kills it when the shell exits (svc_track), and
# this file's EXIT trap sends it SIGTERM first, so that InnoDB shuts down
# cleanly when it can.

MARIADB_DIR=
MARIADB_PID=
MARIADB_TRAP_SET=0

mariadb_installed() {
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]
}

mariadb_bin() {
    if command -v mariadbd >/dev/null 2>&1; then
        command -v mariadbd
    else
        echo /usr/sbin/mariadbd
    fi
}

mariadb_sql() {
    mariadb --no-defaults --socket="$MARIADB_DIR/sock" -uroot "$@"
}

mariadb_ready() {
    mariadb_sql -N -e 'SELECT 1' >/dev/null 2>&1
}

mariadb_cleanup() {
    [ -n "$MARIADB_PID" ] && svc_running "$MARIADB_PID" && svc_stop "$MARIADB_PID" 10
    MARIADB_PID=
}

mariadb_trap() {
    [ "$MARIADB_TRAP_SET" = 0 ] || return 0
    MARIADB_TRAP_SET=1
    # Keeps an EXIT trap set earlier: ours runs first, then it.
    local prev words
    prev=$(trap -p EXIT)
    if [ -n "$prev" ]; then
        eval "words=($prev)"
        MARIADB_PREV_TRAP=${words[2]}
    else
        MARIADB_PREV_TRAP=
    fi
    trap 'mariadb_cleanup; eval "$MARIADB_PREV_TRAP"' EXIT
}

# Starts mariadbd on MARIADB_DIR/data and MARIADB_PORT; sets MARIADB_PID.
mariadb_launch() {
    local opts=()
    # shellcheck disable=SC2206 # split on spaces, on purpose
    [ -n "${MARIADB_OPTS:-}" ] && opts=($MARIADB_OPTS)
    "$(mariadb_bin)" --no-defaults --user=root --datadir="$MARIADB_DIR/data" \
        --socket="$MARIADB_DIR/sock" --port="$MARIADB_PORT" --bind-address=127.0.0.1 \
        --pid-file="$MARIADB_DIR/pid" --log-error="$MARIADB_DIR/mariadb.log" \
        --skip-name-resolve ${opts[@]+"${opts[@]}"} </dev/null >>"$MARIADB_DIR/mariadb.out" 2>&1 &
    MARIADB_PID=$!
    svc_track "$MARIADB_PID"
}

start_mariadb() {
    MARIADB_DIR=$1
    if ! mariadb_installed || ! command -v mariadb-install-db >/dev/null 2>&1; then
        echo "mariadb.sh: no MariaDB server (apt-get install mariadb-server)" >&2
        return 1
    fi
    mkdir -p "$MARIADB_DIR" || return 1
    MARIADB_DIR=$(cd "$MARIADB_DIR" && pwd)
    # A socket path has at most 107 bytes.
    if [ ${#MARIADB_DIR} -gt 100 ]; then
        echo "mariadb.sh: $MARIADB_DIR is too long for a socket path" >&2
        return 1
    fi
    rm -rf "$MARIADB_DIR/data" "$MARIADB_DIR/sock"
    if ! mariadb-install-db --no-defaults --user=root --datadir="$MARIADB_DIR/data" \
        --auth-root-authentication-method=normal --skip-test-db >"$MARIADB_DIR/install.log" 2>&1; then
        echo "mariadb.sh: mariadb-install-db failed:" >&2
        tail -n 20 "$MARIADB_DIR/install.log" >&2
        return 1
    fi
    mariadb_trap
    MARIADB_USER=idmint
    MARIADB_PASSWORD=${MARIADB_PASSWORD:-p$RANDOM$RANDOM$RANDOM}
    local try
    for try in 1 2 3 4 5; do
        svc_random_port || continue
        MARIADB_PORT=$SVC_PORT
        mariadb_launch
        if svc_wait 30 "$MARIADB_PID" mariadb_ready; then
            # shellcheck disable=SC2034 # for the scripts that source this file
            MARIADB_SOCK=$MARIADB_DIR/sock
            # shellcheck disable=SC2034
            MARIADB_URL=mysql://$MARIADB_USER:$MARIADB_PASSWORD@127.0.0.1:$MARIADB_PORT/idmint
            if ! mariadb_sql -e "CREATE DATABASE idmint;
                CREATE USER '$MARIADB_USER'@'127.0.0.1' IDENTIFIED BY '$MARIADB_PASSWORD';
                GRANT ALL ON idmint.* TO '$MARIADB_USER'@'127.0.0.1';
                GRANT SELECT ON mysql.innodb_index_stats TO '$MARIADB_USER'@'127.0.0.1';" \
                >"$MARIADB_DIR/setup.log" 2>&1; then
                echo "mariadb.sh: creating the database and user failed: $(cat "$MARIADB_DIR/setup.log")" >&2
                return 1
            fi
            return 0
        fi
        svc_stop "$MARIADB_PID" 5
        MARIADB_PID=
        # Another process took the port between the check and the bind.
        grep -q 'Address already in use\|Do you already have another' "$MARIADB_DIR/mariadb.log" \
            2>/dev/null || break
        mv "$MARIADB_DIR/mariadb.log" "$MARIADB_DIR/mariadb.log.$try"
    done
    echo "mariadb.sh: MariaDB did not start; the end of $MARIADB_DIR/mariadb.log:" >&2
    tail -n 20 "$MARIADB_DIR/mariadb.log" >&2
    return 1
}

# restart_mariadb: mariadbd again on the data and port of start_mariadb
# (after stop_mariadb, or a kill -9 of MARIADB_PID: InnoDB recovers);
# waits up to 60 s until it answers.
restart_mariadb() {
    if [ -n "$MARIADB_PID" ] && svc_running "$MARIADB_PID"; then
        svc_stop "$MARIADB_PID" 30
    fi
    rm -f "$MARIADB_DIR/sock"
    mariadb_launch
    svc_wait 60 "$MARIADB_PID" mariadb_ready && return 0
    echo "mariadb.sh: MariaDB did not restart; the end of $MARIADB_DIR/mariadb.log:" >&2
    tail -n 20 "$MARIADB_DIR/mariadb.log" >&2
    return 1
}

stop_mariadb() {
    [ -n "$MARIADB_PID" ] || return 0
    svc_stop "$MARIADB_PID" 30
    MARIADB_PID=
    return 0
}
