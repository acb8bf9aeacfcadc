#!/usr/bin/env bash
# test_pg.sh - pg_idmint in a real PostgreSQL (tests/coord/pg.sh starts a
# fresh cluster on a random loopback port): what pg_regress cannot show,
# the server's many backends, its crashes, restarts and clocks.
#
#   1. load: pgbench, 8 clients on 2 threads, 3,000 transactions each, every
#      one inserting a row into a table keyed by DEFAULT uuidv7() and one
#      keyed by DEFAULT snowflake() (primary keys): no failed transaction,
#      exact row counts, no duplicate; run once with the extension loaded
#      by each backend (CREATE EXTENSION) and once, after a restart, with
#      shared_preload_libraries = 'pg_idmint';
#   2. order: in both runs, each session's IDs (pg_backend_pid() on every
#      row) increase in the order it inserted them (a bigserial), for
#      uuidv7() and snowflake(), while the sessions interleaved; snowflakes
#      are unique across sessions; the mark file is at or above the time of
#      every snowflake;
#   3. a backend killed (SIGKILL, its pid from pg_stat_activity) under the
#      load: the postmaster's crash recovery (same postmaster, the log says
#      so), then inserts go on: no failure, no ID repeated, every new
#      snowflake above every earlier one;
#   4. a restart with the clock 5 s behind (libfaketime preloaded into the
#      postmaster): snowflake() fails with 55000 saying how far behind
#      (pg_idmint.max_rewind 1 s); uuidv7() works; with max_rewind raised
#      (ALTER SYSTEM, reload) statement_timeout cancels the wait (57014) in
#      time, and without one snowflake() waits and returns an ID above all
#      minted before; rows inserted then repeat nothing; the clock stepped
#      back 2 s more under an open session: its snowflake() waits and stays
#      above, its uuidv7() and ulid() still increase;
#   5. a power loss as a lost page cache could leave it: stop -m immediate,
#      the .state file removed, a start with the clock 8 s behind (more than
#      the restart takes, less than pg_idmint.max_rewind, 60 s since case
#      4): every new snowflake sorts above every earlier one and above the
#      mark read before (the mark path), the state is made again, the mark
#      survives and covers every snowflake; a mark file overwritten with
#      garbage (server stopped): snowflake() raises XX001 and leaves it as
#      it is, uuidv7() works; removing both files, as the hint says,
#      recovers;
#   5b. a pg_idmint 0.2 mark file (its own format, built here with its
#      CRC-32C) 120 s ahead, no state: carried into the library's mark
#      (snowflake() refuses with 55000, the new mark is at or above it) and
#      removed;
#   6. pg_idmint.node 5000 with the twitter layout: 22023 naming the range;
#      pg_idmint.layout = 'instagram' with node 7 (ALTER SYSTEM, reload):
#      the next snowflake() of an open session is an instagram ID of node 7
#      from now (snowflake_timestamp, idmint_inspect);
#   7. preloaded: 20 fresh sessions (each a fork of the postmaster) get 20
#      different random parts in their first ulid() and uuidv7().
# Each case prints ok or FAIL; lines starting "# " are what was measured.
#
# Usage: bash tests/pg/test_pg.sh      (ctest: pg.test_pg, label pg)
# Needs pgbench (postgresql) and libfaketime; tests/pg/lib.sh says when a
# missing server or extension fails or skips. KEEP_T_DIR=1 keeps the
# temporary directory (the server's log, pgbench's output).
# shellcheck source=tests/pg/lib.sh
. "$(dirname "$0")/lib.sh"

[ -x "$PG_BIN/pgbench" ] || not_ready "no $PG_BIN/pgbench (Debian: postgresql)"
# shellcheck source=tests/faketime.sh
. "$(dirname "$0")/../faketime.sh"

CLIENTS=8
TX=3000
ROWS=$((CLIENTS * TX))

# ---- helpers ----------------------------------------------------------------

# What was measured ("# " lines) goes to fd 3, the script's stdout, also
# from inside $(...).
exec 3>&1

# q SQL...: psql -At, each argument a -c; prints the result, errors to
# $T_DIR/q.err (shown by the cases that fail).
q() {
    local a args=()
    for a in "$@"; do
        args+=(-c "$a")
    done
    pg_psql -At "${args[@]}" 2>"$T_DIR/q.err"
}

# sql_error SQL...: runs SQL that should fail; prints "SQLSTATE message"
# from the first ERROR line (VERBOSITY verbose), and its DETAIL/HINT lines.
sql_error() {
    local a args=()
    for a in "$@"; do
        args+=(-c "$a")
    done
    pg_psql -At -v VERBOSITY=verbose "${args[@]}" >"$T_DIR/err.out" 2>&1
    sed -n 's/^\(psql:[^ ]* \)\{0,1\}ERROR:  //p; s/^\(DETAIL\|HINT\):  /\1: /p' "$T_DIR/err.out"
}

# must EVIDENCE COMMAND...: what the cases after it need (a start of the
# server): its failure is counted and the script ends there.
must() {
    local evidence=$1
    shift
    if ! "$@" >"$T_DIR/must.log" 2>&1; then
        CASE_NO=$((CASE_NO + 1))
        fail "$evidence" "$(cat "$T_DIR/must.log")"$'\n'"  the end of the server's log:"$'\n'"$(tail -n 20 "$PG_DIR/pg.log" 2>/dev/null)"
        finish
    fi
}

# ms_since T0: milliseconds since now_ms printed T0.
ms_since() {
    echo $(($(now_ms) - $1))
}

# pgbench_run LOG ARGS...: pgbench on the cluster (bounded in time);
# $T_DIR/LOG holds its output; returns its status.
pgbench_run() {
    local log=$T_DIR/$1
    shift
    timeout -k 5 180 "$PG_BIN/pgbench" -n -h "$PG_DIR/sock" -p "$PG_PORT" -U postgres "$@" postgres \
        >"$log" 2>&1 </dev/null
}

# pgbench_problems LOG STATUS WANT_TX: what is wrong with a pgbench run
# that should have done WANT_TX transactions without a failure.
pgbench_problems() {
    local log=$T_DIR/$1 rc=$2 want=$3 p=''
    [ "$rc" = 0 ] || p+="  pgbench exited $rc"$'\n'
    grep -q "^number of transactions actually processed: $want/$want\$" "$log" ||
        p+="  not $want/$want transactions processed"$'\n'
    grep -q '^number of failed transactions: 0 ' "$log" || p+="  failed transactions reported"$'\n'
    if [ -n "$p" ]; then
        p+="  pgbench's output:"$'\n'"$(grep -v '^progress' "$log" | tail -n 25)"
    fi
    printf '%s' "$p"
}

# id_ms: SQL for the Unix ms of a twitter-layout snowflake column id.
ID_MS='((id >> 22) + 1288834974657)'

# mark_ms FILE: the mark in the newest slot (by sequence) of libidmint's
# mark file (include/idmint/mark.h): {"IDMMARK1", seq u64, mark_ms i64,
# ...} at offsets 0 and 512. "none" when neither slot has the magic.
mark_ms() {
    local f=$1 best_seq=-1 best=none i magic seq ms
    for i in 0 1; do
        magic=$(dd if="$f" bs=1 skip=$((i * 512)) count=8 2>/dev/null)
        [ "$magic" = IDMMARK1 ] || continue
        read -r seq ms < <(od -A n -t d8 -j $((i * 512 + 8)) -N 16 "$f")
        if [ "$seq" -gt "$best_seq" ]; then
            best_seq=$seq
            best=$ms
        fi
    done
    echo "$best"
}

# mark_tag FILE: the newest slot's 16-byte tag (offset 36) in hex: what
# pg_idmint records there is the boot of the machine, for the state's trust.
mark_tag() {
    local f=$1 best_seq=-1 best=none i magic seq
    for i in 0 1; do
        magic=$(dd if="$f" bs=1 skip=$((i * 512)) count=8 2>/dev/null)
        [ "$magic" = IDMMARK1 ] || continue
        seq=$(od -A n -t d8 -j $((i * 512 + 8)) -N 8 "$f" | tr -d ' ')
        if [ "$seq" -gt "$best_seq" ]; then
            best_seq=$seq
            best=$(od -A n -t x1 -j $((i * 512 + 36)) -N 16 "$f" | tr -d ' \n')
        fi
    done
    echo "$best"
}

SF_DIR=
sf_files() {
    SF_DIR=$PG_DIR/data/pg_idmint
    MARK=$(printf '%s\n' "$SF_DIR"/snowflake-0-*.idmark | head -n 1)
    STATE=${MARK%.idmark}.state
}

# with_clock OFFSET COMMAND...: COMMAND (resume_pg, restart_pg) with
# libfaketime preloaded into pg_ctl and the server (pg.sh's PG_ENV), the
# clock OFFSET seconds off (-5: 5 s behind). The server started so keeps
# the offset until it is started without. Only processes of the postgres
# user are preloaded: libfaketime shares a semaphore, named by the PID of
# the first preloaded process, with that process's children; one of root
# (runuser) cannot be opened by them, and they then make their own by
# their PID, which fails, and ends the process, when a preloaded process
# of root that was killed left one of that name in /dev/shm.
# shellcheck disable=SC2317 # called through must
with_clock() {
    printf '%s\n' "$1" >"$T_DIR/faketime.new"
    chmod 0644 "$T_DIR/faketime.new"
    mv -f "$T_DIR/faketime.new" "$T_DIR/faketime"
    shift
    local PG_ENV=(LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$T_DIR/faketime" FAKETIME_NO_CACHE=1
        FAKETIME_DONT_FAKE_MONOTONIC=1)
    "$@"
}

# server_skew_ms: the server's clock (a fresh backend's) minus ours.
server_skew_ms() {
    local s
    s=$(q "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
    echo $((s - $(now_ms)))
}

# set_guc NAME VALUE: ALTER SYSTEM SET (RESET for VALUE 'DEFAULT'),
# pg_reload_conf(), and waits until a new session shows it; returns 1,
# saying why, if it never showed.
set_guc() {
    local name=$1 value=$2 want n=0
    if [ "$value" = DEFAULT ]; then
        q "ALTER SYSTEM RESET $name" "SELECT pg_reload_conf()" >/dev/null || { cat "$T_DIR/q.err"; return 1; }
        want=$(q "SELECT boot_val FROM pg_settings WHERE name = '$name'")
    else
        q "ALTER SYSTEM SET $name = '$value'" "SELECT pg_reload_conf()" >/dev/null || { cat "$T_DIR/q.err"; return 1; }
        want=$value
    fi
    while [ $n -lt 100 ]; do
        [ "$(q "SELECT setting FROM pg_settings WHERE name = '$name'")" = "$want" ] && return 0
        sleep 0.05
        n=$((n + 1))
    done
    echo "$name did not become '$want' in 5 s"
    return 1
}

# order_problems TABLE RUN: per session (pid) of a run, the IDs in the
# order of the bigserial; and that the sessions interleaved.
order_problems() {
    local t=$1 run=$2 bad sessions switches p=''
    IFS='|' read -r bad sessions switches < <(q "
        SELECT (SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY pid ORDER BY n) AS prev
                                      FROM $t WHERE run = $run) s WHERE prev >= id),
               (SELECT count(DISTINCT pid) FROM $t WHERE run = $run),
               (SELECT count(*) FROM (SELECT pid, lag(pid) OVER (ORDER BY n) AS prev
                                      FROM $t WHERE run = $run) s WHERE prev <> pid)")
    [ "$bad" = 0 ] || p+="  $t run $run: ${bad:-?} rows whose id is not above the session's previous one"$'\n'
    [ "$sessions" = "$CLIENTS" ] || p+="  $t run $run: ${sessions:-?} sessions, not $CLIENTS"$'\n'
    [ "${switches:-0}" -gt 0 ] 2>/dev/null ||
        p+="  $t run $run: the sessions did not interleave (${switches:-?} switches)"$'\n'
    echo "# $t run $run: $sessions sessions, $switches switches between sessions in insertion order" >&3
    printf '%s' "$p"
}

# count_problems RUN WANT: both tables hold WANT rows of RUN, and no id
# appears twice in either (over every run).
count_problems() {
    local run=$1 want=$2 u s du ds tu ts p=''
    IFS='|' read -r u s du tu ds ts < <(q "
        SELECT (SELECT count(*) FROM t_uuid WHERE run = $run), (SELECT count(*) FROM t_sf WHERE run = $run),
               (SELECT count(DISTINCT id) FROM t_uuid), (SELECT count(*) FROM t_uuid),
               (SELECT count(DISTINCT id) FROM t_sf), (SELECT count(*) FROM t_sf)")
    [ "$u" = "$want" ] || p+="  t_uuid has ${u:-?} rows of run $run, not $want"$'\n'
    [ "$s" = "$want" ] || p+="  t_sf has ${s:-?} rows of run $run, not $want"$'\n'
    [ -n "$tu" ] && [ "$du" = "$tu" ] || p+="  t_uuid: ${du:-?} distinct ids in ${tu:-?} rows"$'\n'
    [ -n "$ts" ] && [ "$ds" = "$ts" ] || p+="  t_sf: ${ds:-?} distinct ids in ${ts:-?} rows"$'\n'
    printf '%s' "$p"
}

# ---- the server -------------------------------------------------------------

t0=$(now_ms)
must "PostgreSQL starts (tests/coord/pg.sh start_pg)" start_pg "$T_DIR/pg"
# Asynchronous commits keep the load quick; the crash case asks for
# synchronous ones, so that every row acknowledged survives recovery.
cat >>"$PG_DIR/data/postgresql.conf" <<'CONF'
synchronous_commit = off
max_connections = 40
CONF
must "PostgreSQL restarts with synchronous_commit = off" restart_pg fast
echo "# PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') on 127.0.0.1:$PG_PORT, up in $(ms_since "$t0") ms"
if ! q "CREATE EXTENSION pg_idmint" \
    "CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT uuidv7(), run int NOT NULL, pid int NOT NULL, n bigserial)" \
    "CREATE TABLE t_sf (id bigint PRIMARY KEY DEFAULT snowflake(), run int NOT NULL, pid int NOT NULL, n bigserial)" \
    >/dev/null; then
    fail "CREATE EXTENSION pg_idmint and the tables" "$(cat "$T_DIR/q.err")"
    finish
fi
cat >"$T_DIR/insert.sql" <<'SQL'
INSERT INTO t_uuid (run, pid) VALUES (:run, pg_backend_pid());
INSERT INTO t_sf (run, pid) VALUES (:run, pg_backend_pid());
SQL

# ---- 1, 2: load and order, without and with preloading ---------------------

load_case() {
    local run=$1 how=$2 t0 rc p
    t0=$(now_ms)
    pgbench_run "pgbench.$run.log" -c "$CLIENTS" -j 2 -t "$TX" -f "$T_DIR/insert.sql" -D run="$run"
    rc=$?
    echo "# run $run ($how): pgbench -c $CLIENTS -j 2 -t $TX, 2 inserts a transaction: $(ms_since "$t0") ms," \
        "$(sed -n 's/^tps = \([0-9]*\).*/\1 tps/p' "$T_DIR/pgbench.$run.log")"
    p=$(pgbench_problems "pgbench.$run.log" $rc "$ROWS")
    p+=$(count_problems "$run" "$ROWS")
    check "load, $how: $CLIENTS sessions x $TX rows into DEFAULT uuidv7() and DEFAULT snowflake() keys: no failed transaction, $ROWS rows each, no duplicate" "$p"
    p=$(order_problems t_uuid "$run")
    p+=$(order_problems t_sf "$run")
    check "order, $how: each session's uuidv7() and snowflake() IDs increase in its insertion order" "$p"
}

# mark_covers_problems: the mark on disk is at or above every snowflake's time.
mark_covers_problems() {
    local m top
    sf_files
    m=$(mark_ms "$MARK")
    top=$(q "SELECT max($ID_MS) FROM t_sf")
    if [ "$m" = none ] || [ -z "$top" ] || [ "$m" -lt "$top" ]; then
        echo "  mark $m ($MARK), newest snowflake's time $top"
        ls -la "$SF_DIR" 2>&1
    fi
    echo "# mark $m ms, $((m - top)) ms above the newest snowflake" >&3
}

load_case 1 "loaded per backend"
check "the mark file covers every snowflake minted (loaded per backend)" "$(mark_covers_problems)"
# The mark's tag after a write by a backend that trusted the state (not the
# first of the server's life): still this boot, so that a restart trusts
# the state. pg_idmint.reserve 10 ms makes 100,000 snowflakes of one new
# session raise the mark several times.
tag_case() {
    local boot_hex
    boot_hex=$(tr -d '\n-' </proc/sys/kernel/random/boot_id)
    must "ALTER SYSTEM SET pg_idmint.reserve = 10 ms, pg_reload_conf()" set_guc pg_idmint.reserve 10
    sf_files
    # Two sessions, the tag checked after each: whichever of them found
    # the state trusted, both leave this boot in the mark.
    q "SELECT count(snowflake()) FROM generate_series(1, 100000)" >/dev/null
    local t1
    t1=$(mark_tag "$MARK")
    q "SELECT count(snowflake()) FROM generate_series(1, 100000)" >/dev/null
    expect "two sessions raised the mark (one of them trusting the state): its tag is this boot after each (so a restart trusts the state)" \
        "$t1 $(mark_tag "$MARK")" = "$boot_hex $boot_hex"
    must "ALTER SYSTEM RESET pg_idmint.reserve" set_guc pg_idmint.reserve DEFAULT
}

echo "shared_preload_libraries = 'pg_idmint'" >>"$PG_DIR/data/postgresql.conf"
must "PostgreSQL restarts with shared_preload_libraries = 'pg_idmint'" restart_pg fast
expect "the server preloads pg_idmint" "$(q "SHOW shared_preload_libraries")" = pg_idmint
load_case 2 "preloaded"
check "the mark file covers every snowflake minted (preloaded)" "$(mark_covers_problems)"
tag_case

# ---- 3: a backend killed under the load ---------------------------------------

kill_case() {
    local t0 bench rows=0 victim pm_before p='' n=0 before rc
    pm_before=$PG_PID
    before=$(q "SELECT max(id) FROM t_sf")
    t0=$(now_ms)
    PGOPTIONS='-c synchronous_commit=on' pgbench_run pgbench.3.log -c "$CLIENTS" -j 2 -T 60 \
        -f "$T_DIR/insert.sql" -D run=3 &
    bench=$!
    track "$bench"
    while [ $n -lt 300 ] && [ "${rows:-0}" -lt 1000 ]; do
        sleep 0.05
        rows=$(q "SELECT count(*) FROM t_sf WHERE run = 3")
        n=$((n + 1))
    done
    victim=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' AND backend_type = 'client backend' ORDER BY pid LIMIT 1")
    if [ -z "$victim" ]; then
        kill -KILL "$bench" 2>/dev/null
        wait "$bench" 2>/dev/null
        check "a backend killed under the load: crash recovery, then no ID repeats" \
            "  no pgbench backend found after $rows rows"$'\n'"$(cat "$T_DIR/q.err")"
        return
    fi
    kill -KILL "$victim"
    echo "# killed backend $victim (SIGKILL) after $(ms_since "$t0") ms and $rows rows of run 3"
    # Every session is ended by the recovery, so pgbench stops.
    n=0
    while [ $n -lt 600 ] && svc_running "$bench"; do
        sleep 0.05
        n=$((n + 1))
    done
    if svc_running "$bench"; then
        p+="  pgbench still runs 30 s after the kill"$'\n'
        kill -KILL "$bench" 2>/dev/null
    fi
    wait "$bench" 2>/dev/null
    t0=$(now_ms)
    svc_wait 30 "$PG_PID" pg_ready || p+="  the server does not accept connections 30 s after the kill"$'\n'
    echo "# the server accepts connections again after $(ms_since "$t0") ms more"
    svc_running "$pm_before" || p+="  the postmaster $pm_before is gone"$'\n'
    grep -q "server process (PID $victim) was terminated by signal 9" "$PG_DIR/pg.log" ||
        p+="  the log does not say that backend $victim was killed"$'\n'
    grep -q "all server processes terminated; reinitializing" "$PG_DIR/pg.log" ||
        p+="  the log does not say the postmaster reinitialized"$'\n'
    local kept top
    IFS='|' read -r kept top < <(q "SELECT count(*), max(id) FROM t_sf WHERE run = 3")
    [ "${kept:-0}" -gt 0 ] 2>/dev/null || p+="  no row of run 3 survived ($kept)"$'\n'
    [ -n "$top" ] || top=$before
    check "a backend SIGKILLed under the load: the postmaster recovers (same postmaster, the log says so)" "$p"

    pgbench_run pgbench.4.log -c 4 -j 2 -t 1000 -f "$T_DIR/insert.sql" -D run=4
    rc=$?
    p=$(pgbench_problems pgbench.4.log $rc 4000)
    p+=$(count_problems 4 4000)
    local low
    low=$(q "SELECT min(id) FROM t_sf WHERE run = 4")
    if [ -z "$low" ] || [ "$low" -le "$top" ]; then
        p+="  a snowflake after the crash ($low) is not above the newest one before ($top)"$'\n'
    fi
    echo "# after the crash: $kept rows of run 3 kept; the lowest new snowflake is $((low - top)) above the newest before"
    p+=$(order_problems t_sf 3)
    check "after the crash: inserts go on (4 x 1000), no ID repeats, every new snowflake above every earlier one" "$p"
}
kill_case

# ---- 4: a restart with the clock set back ------------------------------------

clock_case() {
    local before skew out ms p t0 id took
    if [ ! -f "$FAKETIME_LIB" ]; then
        check "a restart with the clock 5 s behind" "  libfaketime is not installed (Debian: libfaketime)"
        return
    fi
    before=$(q "SELECT max(id) FROM t_sf")
    stop_pg fast
    must "PostgreSQL starts with its clock 5 s behind (libfaketime)" with_clock -5 resume_pg
    skew=$(server_skew_ms)
    echo "# the server's clock reads $skew ms off ours"
    expect "restarted with libfaketime: the server's clock reads about 5 s behind" "$skew" -le -4500 &&
        expect "restarted with libfaketime: the server's clock reads about 5 s behind (not more)" "$skew" -ge -6000

    out=$(sql_error "SELECT snowflake()")
    ms=$(printf '%s\n' "$out" | sed -n '1s/.*the clock reads \([0-9]*\) ms behind.*/\1/p')
    echo "# $(printf '%s\n' "$out" | head -n 1)"
    p=''
    [[ $out == "55000: snowflake(): the clock reads "*" ms behind the latest time used for node 0"* ]] ||
        p+="  not the 55000 error: $out"$'\n'
    [ -n "$ms" ] && [ "$ms" -gt 1000 ] && [ "$ms" -le 5000 ] ||
        p+="  it says ${ms:-no number of} ms behind, not between 1000 (max_rewind) and 5000 (the step)"$'\n'
    [[ $out == *"HINT: "*"pg_idmint.max_rewind (now 1000 ms)"* ]] || p+="  no hint naming pg_idmint.max_rewind"$'\n'
    check "clock 5 s behind, max_rewind 1 s: snowflake() fails with SQLSTATE 55000 saying how far behind" "$p"

    out=$(q "SELECT uuid_extract_version(u), (extract(epoch FROM uuid_extract_timestamp(u)) * 1000)::bigint - (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM (SELECT uuidv7() AS u) s")
    expect "clock 5 s behind: uuidv7() still works (a version 7 from the server's clock)" "$out" =~ '^7\|-?[0-9]{1,3}$'

    must "ALTER SYSTEM SET pg_idmint.max_rewind = 60 s, pg_reload_conf(): new sessions show it" \
        set_guc pg_idmint.max_rewind 60000

    t0=$(now_ms)
    out=$(sql_error "SET statement_timeout = '300ms'" "SELECT snowflake()")
    took=$(ms_since "$t0")
    echo "# with statement_timeout 300 ms: '$(printf '%s\n' "$out" | head -n 1)' after $took ms"
    p=''
    [ "$(printf '%s\n' "$out" | head -n 1)" = "57014: canceling statement due to statement timeout" ] ||
        p+="  not 57014: $out"$'\n'
    [ "$took" -ge 250 ] && [ "$took" -lt 2500 ] || p+="  the statement ended after $took ms, not about 300"$'\n'
    check "max_rewind 60 s: statement_timeout (300 ms) cancels a waiting snowflake() with 57014, in time" "$p"

    # The server's clock before and after the call, and the ID's time: an
    # ID later than the clock read before the call is one it waited for
    # (snowflake() never mints ahead of the clock). Not a duration: how
    # much of the 5 s is left by now depends on the machine's speed.
    local c0 c1 id_ms
    IFS='|' read -r c0 id c1 id_ms < <(q "SELECT c0, id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
        (extract(epoch FROM snowflake_timestamp(id)) * 1000)::bigint
        FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS c0) a,
             LATERAL (SELECT snowflake() + 0 * c0 AS id) b")
    echo "# without a timeout snowflake() returned after $((c1 - c0)) ms (server clock), an ID of $((id_ms - c0)) ms after the call began"
    p=''
    [[ $id =~ ^[0-9]+$ ]] || p+="  no ID: $id $(cat "$T_DIR/q.err")"$'\n'
    [[ $id_ms =~ ^[0-9]+$ ]] && [ "$id_ms" -gt "$c0" ] && [ "$id_ms" -le "$c1" ] ||
        p+="  its time ($id_ms) does not lie after the call began ($c0) and by its end ($c1): it did not wait for the clock"$'\n'
    [[ $id =~ ^[0-9]+$ ]] && [ "$id" -gt "$before" ] || p+="  $id is not above $before, the newest before the restart"$'\n'
    check "max_rewind 60 s, no timeout: snowflake() waits for the clock and returns an ID above every earlier one" "$p"

    q "INSERT INTO t_sf (run, pid) SELECT 5, pg_backend_pid() FROM generate_series(1, 2000)" \
        "INSERT INTO t_uuid (run, pid) SELECT 5, pg_backend_pid() FROM generate_series(1, 2000)" >/dev/null
    p=$(count_problems 5 2000)
    local low
    low=$(q "SELECT min(id) FROM t_sf WHERE run = 5")
    [ -n "$low" ] && [ "$low" -gt "$id" ] || p+="  the rows' lowest snowflake $low is not above $id"$'\n'
    check "clock behind: 2000 more rows, no ID repeated, their snowflakes above those before" "$p"

    # A step back while the server runs, 5 s behind to 7 s, between two
    # statements of one session (its generators have seen the later time).
    cat >"$T_DIR/step.sql" <<SQL
SELECT snowflake(), uuidv7(), ulid();
\\! printf '%s\\n' -7 >"$T_DIR/faketime.new" && mv -f "$T_DIR/faketime.new" "$T_DIR/faketime"
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
SELECT snowflake(), uuidv7(), ulid();
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
SQL
    local out1 a1 u1 l1 c1 a2 u2 l2 c2
    t0=$(now_ms)
    out1=$(pg_psql -At -F ' ' -f "$T_DIR/step.sql" 2>&1)
    took=$(ms_since "$t0")
    { read -r a1 u1 l1; read -r c1; read -r a2 u2 l2; read -r c2; } <<<"$out1"
    echo "# the clock stepped back 2 s in a session: its next snowflake() came after $((c2 - c1)) ms of the server's clock ($took ms of ours)"
    p=''
    [[ ${a1:-x} =~ ^[0-9]+$ && ${a2:-x} =~ ^[0-9]+$ ]] || p+="  no snowflakes: $out1"$'\n'
    [[ ${a1:-x} =~ ^[0-9]+$ && ${a2:-x} =~ ^[0-9]+$ ]] && [ "$a2" -gt "$a1" ] || p+="  snowflake $a2 after the step is not above $a1"$'\n'
    [[ ${c1:-x} =~ ^[0-9]+$ && ${c2:-x} =~ ^[0-9]+$ ]] && [ $((c2 - c1)) -ge 1000 ] ||
        p+="  snowflake() did not wait for the clock (server clock ${c1:-?} to ${c2:-?})"$'\n'
    [[ -n ${u1:-} && ${u2:-} > ${u1:-} ]] || p+="  uuidv7 $u2 after the step is not above $u1"$'\n'
    [[ -n ${l1:-} && ${l2:-} > ${l1:-} ]] || p+="  ulid $l2 after the step is not above $l1"$'\n'
    check "the clock stepped back 2 s under a running session: its snowflake() waits and stays above, its uuidv7() and ulid() keep increasing" "$p"

    # The clock back to ours (a step forward of 7 s).
    must "PostgreSQL restarts with the real clock" restart_pg fast
}
clock_case

# ---- 5: a power loss, a damaged mark -----------------------------------------

powerloss_case() {
    local before mark0 skew took id low p='' m top garbage out
    if [ ! -f "$FAKETIME_LIB" ]; then
        check "a power loss (the state file lost)" "  libfaketime is not installed (Debian: libfaketime)"
        return
    fi
    # The last IDs as late as they can be: minted just before the stop.
    q "INSERT INTO t_sf (run, pid) SELECT 6, pg_backend_pid() FROM generate_series(1, 2000)" >/dev/null
    before=$(q "SELECT max(id) FROM t_sf")
    stop_pg immediate
    sf_files
    mark0=$(mark_ms "$MARK")
    rm -f "$STATE"
    # 8 s: the mark lies up to pg_idmint.reserve (1 s) past the last ID, and
    # the stop and the start take up to 4 s on a loaded machine; the case
    # needs the server's clock behind the mark when it starts.
    must "PostgreSQL starts after the power loss, its clock 8 s behind" with_clock -8 resume_pg
    skew=$(server_skew_ms)
    echo "# power loss: the state removed; the mark read $mark0; the server's clock reads $skew ms off ours," \
        "$(($(now_ms) + skew - mark0)) ms from the mark"
    expect "after the power loss the server's clock is behind the mark (else the case proves nothing)" \
        $(($(now_ms) + skew - mark0)) -lt 0

    t0=$(now_ms)
    id=$(q "SELECT snowflake()")
    took=$(ms_since "$t0")
    echo "# the first snowflake after the power loss came after $took ms"
    [[ $id =~ ^[0-9]+$ ]] || p+="  no ID: $id $(cat "$T_DIR/q.err")"$'\n'
    q "INSERT INTO t_sf (run, pid) SELECT 7, pg_backend_pid() FROM generate_series(1, 1000)" >/dev/null
    q "INSERT INTO t_sf (run, pid) SELECT 7, pg_backend_pid() FROM generate_series(1, 1000)" >/dev/null
    IFS='|' read -r low m < <(q "SELECT min(id), min($ID_MS) FROM t_sf WHERE run = 7")
    [ "$(q "SELECT count(*) FROM t_sf WHERE run = 7")" = 2000 ] || p+="  not 2000 rows of run 7"$'\n'
    [[ $id =~ ^[0-9]+$ ]] && [ "$id" -gt "$before" ] || p+="  the first snowflake $id is not above $before"$'\n'
    [ -n "$low" ] && [ "$low" -gt "$before" ] || p+="  the lowest of 2000 new snowflakes $low is not above $before"$'\n'
    [ -n "$m" ] && [ "$m" -ge "$mark0" ] || p+="  the new snowflakes' time $m is below the mark $mark0"$'\n'
    check "power loss (state file gone, clock 8 s behind): every new snowflake sorts above every earlier one and the mark" "$p"

    p=''
    [ -f "$STATE" ] || p+="  no $STATE"$'\n'
    [ "$(stat -c %s "$MARK" 2>/dev/null)" = 1024 ] || p+="  $MARK is not 1024 bytes"$'\n'
    p+=$(mark_covers_problems)
    check "after the power loss the state is made again and the mark survives, covering every snowflake" "$p"

    # A damaged mark, written while the server is stopped.
    stop_pg fast
    garbage=$T_DIR/garbage.mark
    head -c 1024 /dev/urandom >"$garbage"
    cp "$garbage" "$MARK"
    must "PostgreSQL starts with a damaged mark file" resume_pg
    out=$(sql_error "SELECT snowflake()")
    echo "# $(printf '%s\n' "$out" | head -n 1)"
    p=''
    [[ $out == "XX001: \"pg_idmint/snowflake-0-"*".idmark\" holds no valid snowflake mark"* ]] ||
        p+="  not XX001 naming the file: $out"$'\n'
    [[ $out == *"HINT: "*"remove the file"* ]] || p+="  no hint"$'\n'
    cmp -s "$garbage" "$MARK" || p+="  the damaged file was changed"$'\n'
    check "a mark file overwritten with garbage: snowflake() raises XX001 (data_corrupted), mints nothing, leaves the file" "$p"
    expect "a damaged mark: uuidv7() still works" "$(q "SELECT uuid_extract_version(uuidv7())")" = 7

    stop_pg fast
    rm -f "$MARK" "$STATE"
    must "PostgreSQL starts without the snowflake files" resume_pg
    top=$(q "SELECT max(id) FROM t_sf")
    id=$(q "SELECT snowflake()")
    p=''
    [[ $id =~ ^[0-9]+$ ]] && [ "$id" -gt "$top" ] || p+="  snowflake() gave '$id' (newest before $top) $(cat "$T_DIR/q.err")"$'\n'
    check "the hint's remedy (server stopped, the files removed, the clock past every ID): snowflake() mints again" "$p"
}
powerloss_case

# ---- 5b: a mark of pg_idmint 0.2 -------------------------------------------------

# crc32c FILE OFFSET LEN: CRC-32C (Castagnoli, reflected) of LEN bytes.
crc32c() {
    local crc=$((0xFFFFFFFF)) b k
    for b in $(od -A n -t u1 -j "$2" -N "$3" -v "$1"); do
        crc=$((crc ^ b))
        for ((k = 0; k < 8; k++)); do
            crc=$(((crc >> 1) ^ (0x82F63B78 & -(crc & 1))))
        done
    done
    echo $(((~crc) & 0xFFFFFFFF))
}

# le BYTES VALUE: VALUE as BYTES little-endian bytes, printf-escaped.
le() {
    local i out=''
    for ((i = 0; i < $1; i++)); do out+=$(printf '\\x%02x' $((($2 >> (8 * i)) & 255))); done
    printf '%s' "$out"
}

# old_mark FILE MS: a pg_idmint 0.2 mark file: slot 0 {"IDMPGMK1", seq 1,
# MS, 40 bytes of boot id (none), CRC-32C of those 64 bytes}, 192 bytes.
old_mark() {
    local f=$1
    { printf 'IDMPGMK1'; printf "$(le 8 1)$(le 8 "$2")"; head -c 40 /dev/zero; } >"$f.tmp"
    { cat "$f.tmp"; printf "$(le 4 "$(crc32c "$f.tmp" 0 64)")"; head -c $((192 - 68)) /dev/zero; } >"$f"
    rm -f "$f.tmp"
}

migration_case() {
    local old out p=''
    stop_pg fast
    sf_files
    # The 0.2 mark 120 s ahead of the clock, and no state: only that mark
    # says IDs up to then may exist. Carried over, it makes snowflake()
    # refuse (the clock is further behind than pg_idmint.max_rewind, 60 s
    # since case 4); ignored, snowflake() would mint below it.
    old=$(($(now_ms) + 120000))
    rm -f "$MARK" "$STATE"
    old_mark "${MARK%.idmark}.mark" "$old"
    must "PostgreSQL starts with a pg_idmint 0.2 mark file" resume_pg
    out=$(sql_error "SELECT snowflake()")
    echo "# $(printf '%s\n' "$out" | head -n 1)"
    [[ $out == "55000: snowflake(): the clock reads "*" ms behind the latest time used"* ]] ||
        p+="  not 55000 (clock behind): $out"$'\n'
    [ -e "${MARK%.idmark}.mark" ] && p+="  the 0.2 mark file is still there"$'\n'
    [ "$(mark_ms "$MARK")" != none ] && [ "$(mark_ms "$MARK")" -ge "$old" ] ||
        p+="  the new mark $(mark_ms "$MARK") does not carry the 0.2 mark $old"$'\n'
    check "a pg_idmint 0.2 mark is carried into the library's mark file (snowflake() refuses to mint below it) and the old file removed" "$p"
    # Back to a usable server: the files removed while it is stopped.
    stop_pg fast
    rm -f "$MARK" "$STATE"
    must "PostgreSQL starts again without the snowflake files" resume_pg
}
migration_case

# ---- 6: node and layout ----------------------------------------------------------

layout_case() {
    local out p='' id ts node tw
    must "ALTER SYSTEM SET pg_idmint.node = 5000, pg_reload_conf(): new sessions show it" \
        set_guc pg_idmint.node 5000
    out=$(sql_error "SELECT snowflake()")
    echo "# $(printf '%s\n' "$out" | head -n 1)"
    [[ $out == "22023: pg_idmint.node = 5000 is out of range for layout twitter"* ]] || p+="  not 22023: $out"$'\n'
    [[ $out == *"DETAIL: The layout's node field holds 0 to 1023."* ]] || p+="  no detail giving the range"$'\n'
    check "pg_idmint.node = 5000 with the twitter layout: snowflake() raises 22023 naming the range" "$p"
    must "ALTER SYSTEM RESET pg_idmint.node" set_guc pg_idmint.node DEFAULT

    # One session across the change: the next statement sees the reload.
    cat >"$T_DIR/layout.sql" <<SQL
SELECT snowflake() IS NOT NULL AS before_change;
\\! "$PG_BIN/psql" -X -q -At -h "$PG_DIR/sock" -p "$PG_PORT" -U postgres -d postgres -c "ALTER SYSTEM SET pg_idmint.node = 7" -c "ALTER SYSTEM SET pg_idmint.layout = 'instagram'" -c "SELECT pg_reload_conf()" >/dev/null; sleep 0.5
SELECT s.id, round(extract(epoch FROM snowflake_timestamp(s.id, 'instagram') - clock_timestamp()) * 1000),
       abs(extract(epoch FROM snowflake_timestamp(s.id, 'twitter') - clock_timestamp())) > 86400,
       idmint_inspect(s.id::text, 'instagram')->>'node', current_setting('pg_idmint.layout')
FROM (SELECT snowflake() AS id) s;
SQL
    out=$(pg_psql -At -F ' ' -f "$T_DIR/layout.sql" 2>&1)
    echo "# $(printf '%s\n' "$out" | tr '\n' ' ')"
    p=''
    read -r id ts tw node layout < <(printf '%s\n' "$out" | sed -n 2p)
    [ "$(printf '%s\n' "$out" | head -n 1)" = t ] || p+="  no snowflake before the change: $out"$'\n'
    [ "${layout:-}" = instagram ] || p+="  the session does not see pg_idmint.layout = instagram: $out"$'\n'
    [ "${node:-}" = 7 ] || p+="  idmint_inspect(id, 'instagram') gives node '${node:-}', not 7"$'\n'
    [[ ${ts:-x} =~ ^-?[0-9]+$ ]] && [ "${ts#-}" -lt 5000 ] ||
        p+="  snowflake_timestamp(id, 'instagram') is '${ts:-}' ms from now"$'\n'
    [ "${tw:-}" = t ] || p+="  the ID also reads as a twitter ID from about now (is it instagram?)"$'\n'
    check "ALTER SYSTEM SET pg_idmint.layout = 'instagram', node 7, reload: an open session's next snowflake() is an instagram ID of node 7 from now" "$p"

    CASE_NO=$((CASE_NO + 1))
    if set_guc pg_idmint.layout DEFAULT && set_guc pg_idmint.node DEFAULT &&
        [[ $(q "SELECT snowflake()") =~ ^[0-9]+$ ]]; then
        pass "ALTER SYSTEM RESET pg_idmint.layout and pg_idmint.node: twitter again, snowflake() mints"
    else
        fail "ALTER SYSTEM RESET pg_idmint.layout and pg_idmint.node" "$(cat "$T_DIR/q.err")"
    fi
}
layout_case

# ---- 7: fresh sessions of a preloaded server ----------------------------------------

streams_case() {
    local i line u uuids=() ulids=() du dl
    for ((i = 0; i < 20; i++)); do
        line=$(q "SELECT ulid(), uuidv7()")
        ulids+=("${line%%|*}")
        u=${line#*|}
        uuids+=("$u")
    done
    # The random parts: a ULID's last 16 characters (80 bits), a UUIDv7's
    # last 16 hex digits (the variant and rand_b).
    dl=$(printf '%s\n' "${ulids[@]}" | cut -c 11-26 | grep -cE '^[0-9A-Z]{16}$' )
    du=$(printf '%s\n' "${ulids[@]}" | cut -c 11-26 | sort -u | grep -c .)
    local p=''
    [ "$dl" = 20 ] || p+="  not 20 ULIDs: $(printf '%s ' "${ulids[@]}")"$'\n'
    [ "$du" = 20 ] || p+="  $du distinct random parts in 20 first ULIDs: $(printf '%s ' "${ulids[@]}")"$'\n'
    du=$(printf '%s\n' "${uuids[@]}" | tr -d - | cut -c 17-32 | sort -u | grep -c '^[0-9a-f]\{16\}$')
    [ "$du" = 20 ] || p+="  $du distinct random parts in 20 first UUIDv7s: $(printf '%s ' "${uuids[@]}")"$'\n'
    [ "$(q "SHOW shared_preload_libraries")" = pg_idmint ] || p+="  the server is not preloading pg_idmint"$'\n'
    check "preloaded: 20 fresh sessions' first ulid() and uuidv7() have 20 different random parts" "$p"
}
streams_case

stop_pg fast
finish
