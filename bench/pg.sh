#!/usr/bin/env bash
# bench/pg.sh - pg_idmint's functions against PostgreSQL's own, side by side
# in one session (bench/PG.md has the figures and what they show):
#
#   bench/pg.sh [--rows N] [--rounds R] [--shared-buffers SIZE] [--loops] [--quick]
#
# --loops runs the loops alone, no inserts (bench/sql.sh's PostgreSQL part).
#
# Builds pg_idmint (make -C pg) and installs it when the installed module,
# SQL script or control file differ from this tree's; starts a throwaway
# PostgreSQL (tests/coord/pg.sh: initdb, trust on loopback) with initdb's
# settings except those printed under "Settings", CREATE EXTENSION
# pg_idmint, and runs everything in ONE psql session (one backend):
#
#   - a warm-up of every statement below with 10,000 rows (not reported);
#   - R rounds (default 5; --quick: 1), each: a CHECKPOINT, then
#       SELECT count(*) FROM generate_series(1, N)       (the empty loop)
#       SELECT count(f()) FROM generate_series(1, N)
#     for gen_random_uuid(), uuidv7(), ulid(), ksuid(), typeid('user'),
#     snowflake() (twitter, whose 4,096 IDs per ms bound a loop at 244 ns
#     an ID; and again in a layout with 18 sequence bits, the cost of a
#     call) and nextval('a_sequence'); then for gen_random_uuid (uuid
#     key), uuidv7 (uuid), ulid (text), snowflake (bigint) and nextval
#     (bigserial): a fresh table (id TYPE PRIMARY KEY, n int) with
#     autovacuum off, a CHECKPOINT, and the timed
#       INSERT INTO t (id, n) SELECT f(), g FROM generate_series(1, N) g
#     after which its heap and index sizes and the WAL it wrote are read
#     and the table is dropped. Each round starts one place further along
#     both lists, so no statement always runs first.
#
# Timing is the server's: a procedure reads clock_timestamp() before the
# statement (run by EXECUTE) and after its COMMIT, so no client round trip
# or psql output is in a figure, and an insert's figure includes its
# commit. N defaults to 1,000,000 (--quick: 100,000), so "s per million"
# is the statement's time scaled to 1,000,000 rows.
#
# Prints a markdown table on stdout: per statement the median and minimum
# over the rounds in seconds per million rows, per call net of the empty
# loop (median over rounds of f - empty in the same round); per insert also
# the table and index sizes and the WAL; and the goals, each the median over
# rounds of the ratio of two statements of the same round:
#   gen_random_uuid / uuidv7 >= 3, nextval / uuidv7 >= 1, uuidv7 / snowflake
#   (18 sequence bits) >= 0.83 (a call at most 1.2x uuidv7()), nextval /
#   snowflake (18 sequence bits) >= 1
#   (the loops), and gen_random_uuid / uuidv7 >= 1 (the inserts), PASS or
#   MISS.
# --quick (CI's smoke run) runs every statement but does not judge them.
# A report, not a test: exit 0 when goals are missed; non-zero only when
# something failed to build or run. The cluster is removed on exit,
# Ctrl-C included.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}
rows='' rounds='' quick=0 loops_only=0 shared_buffers=128MB
bad_usage() {
    echo "bench/pg.sh: $* (--rows N, --rounds R, --shared-buffers SIZE, --loops, --quick; --help)" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --rows | --rounds | --shared-buffers)
        [ $# -ge 2 ] || bad_usage "$1 wants a value"
        case $1 in
        --rows) rows=$2 ;;
        --rounds) rounds=$2 ;;
        *) shared_buffers=$2 ;;
        esac
        shift 2
        ;;
    --quick) quick=1; shift ;;
    --loops) loops_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) bad_usage "unknown option '$1'" ;;
    esac
done
if ((quick)); then
    rows=${rows:-100000} rounds=${rounds:-1}
else
    rows=${rows:-1000000} rounds=${rounds:-5}
fi
for v in rows rounds; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || bad_usage "--$v wants a positive integer, got '${!v}'"
done
[[ $shared_buffers =~ ^[1-9][0-9]*(kB|MB|GB)$ ]] ||
    bad_usage "--shared-buffers wants a size such as 128MB, got '$shared_buffers'"

log() { printf 'bench/pg.sh: %s\n' "$*" >&2; }
started=$EPOCHREALTIME
work=$(mktemp -d "${TMPDIR:-/tmp}/idmint-pg-bench.XXXXXX") || exit 1
chmod 0711 "$work" # the postgres user reaches its directory
psql_pid=
stop_psql() {
    if [ -n "$psql_pid" ]; then
        kill -TERM "$psql_pid" 2>/dev/null
        wait "$psql_pid" 2>/dev/null
        psql_pid=
    fi
}
cleanup() {
    stop_psql
    rm -rf "$work"
}
# pg.sh's own EXIT trap (set by start_pg) stops the cluster, then runs this;
# on a signal psql goes first, so that it does not report the lost server.
trap cleanup EXIT
trap 'log interrupted; stop_psql; exit 130' INT
trap 'log terminated; stop_psql; exit 143' TERM
# shellcheck source=tests/coord/services.sh
. "$ROOT/tests/coord/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$ROOT/tests/coord/pg.sh"

pg_bin || { log "no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)"; exit 1; }
PG_CONFIG=${PG_CONFIG:-$PG_BIN/pg_config}
[ -x "$PG_CONFIG" ] || { log "$PG_CONFIG is missing (apt-get install postgresql-server-dev-$(basename "$(dirname "$PG_BIN")"))"; exit 1; }

# --- pg_idmint: this tree's, installed when it differs ----------------------
if ! make -C "$ROOT/pg" PG_CONFIG="$PG_CONFIG" >"$work/make.log" 2>&1; then
    log "make -C pg failed:"
    tail -n 20 "$work/make.log" >&2
    exit 1
fi
pkglib=$("$PG_CONFIG" --pkglibdir) share=$("$PG_CONFIG" --sharedir)/extension
installed_same() {
    local f
    cmp -s "$ROOT/pg/pg_idmint.so" "$pkglib/pg_idmint.so" || return 1
    for f in "$ROOT"/pg/pg_idmint.control "$ROOT"/pg/pg_idmint--*.sql; do
        cmp -s "$f" "$share/$(basename "$f")" || return 1
    done
}
if installed_same; then
    log "pg_idmint: the installed module is this tree's"
else
    log "pg_idmint: installing this tree's build (make -C pg install)"
    if ! make -C "$ROOT/pg" PG_CONFIG="$PG_CONFIG" install >"$work/install.log" 2>&1; then
        log "make -C pg install failed:"
        tail -n 20 "$work/install.log" >&2
        exit 1
    fi
    installed_same || { log "the installed pg_idmint still differs from this tree's build"; exit 1; }
fi

# --- the cluster --------------------------------------------------------------
start_pg "$work/pg" || exit 1
# Settings on top of initdb's (and of pg.sh's listen/port/socket,
# max_connections = 60, logging_collector = off): shared_buffers back to
# initdb's 128MB (pg.sh's 16MB suits its tests, not a benchmark), and no
# JIT: at N = 1,000,000 these plans cost 15,000-22,500, under
# jit_above_cost (100,000), so JIT would not run anyway; off keeps a larger
# --rows comparable.
cat >>"$PG_DIR/data/postgresql.conf" <<CONF
# bench/pg.sh
shared_buffers = $shared_buffers
jit = off
CONF
restart_pg fast || exit 1

# --- the session ----------------------------------------------------------------
L_NAME=(empty gen_random_uuid uuidv7 ulid ksuid typeid snowflake snowflake_wide nextval)
L_EXPR=('*' 'gen_random_uuid()' 'uuidv7()' 'ulid()' 'ksuid()' "typeid('user')" 'snowflake()' 'snowflake()' "nextval('a_sequence')")
# snowflake() twice: in the default layout (twitter: 12 sequence bits, so
# one server mints at most 4,096 IDs per millisecond, one per 244 ns:
# a loop faster than that waits for the next millisecond), and as
# snowflake_wide in a layout with 18 sequence bits, which no loop here
# exhausts: what a call costs. The session switches pg_idmint.layout around
# that statement (ALTER SYSTEM, pg_reload_conf) and checks that it took.
WIDE_LAYOUT='time=41,node=4,seq=18,unit=1ms,epoch=1288834974657'
I_NAME=(gen_random_uuid uuidv7 ulid snowflake nextval)
I_EXPR=('gen_random_uuid()' 'uuidv7()' 'ulid()' 'snowflake()' "nextval('pgb_t_id_seq')")
I_TYPE=(uuid uuid text bigint bigserial)
((loops_only)) && I_NAME=()

# The statements that switch the server's snowflake layout, and check in
# the session that the switch took (a reload reaches the backend before
# its next statement).
layout_sql() {
    cat <<SQL
ALTER SYSTEM SET pg_idmint.layout = '$1';
SELECT pg_reload_conf();
SELECT pg_sleep(0.3);
DO \$\$ BEGIN
    IF current_setting('pg_idmint.layout') <> '$1' THEN
        RAISE EXCEPTION 'pg_idmint.layout is %, not $1', current_setting('pg_idmint.layout');
    END IF;
END \$\$;
SQL
}

sql=$work/bench.sql
{
    cat <<'SQL'
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = notice;
CREATE EXTENSION pg_idmint;
CREATE SEQUENCE a_sequence;
CREATE TABLE pgb_result (
    round int, pos int, kind text, name text, seconds float8,
    heap bigint, idx bigint, wal bigint);

-- The statement's time, from before it starts to after its COMMIT.
CREATE PROCEDURE pgb_loop(r int, pos int, fname text, expr text, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    secs float8;
BEGIN
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(%s) FROM generate_series(1, %s)', expr, n);
    COMMIT;
    secs := extract(epoch FROM clock_timestamp() - t0);
    INSERT INTO pgb_result (round, pos, kind, name, seconds) VALUES (r, pos, 'loop', fname, secs);
    COMMIT;
    IF r > 0 THEN
        RAISE NOTICE 'round % loop %: % s', r, fname, round(secs::numeric, 3);
    END IF;
END
$$;

-- A fresh table, a checkpoint (so the earlier runs' dirty pages are
-- written before, not during, the timed insert), the insert and its
-- COMMIT; then its sizes and WAL, and the table dropped.
CREATE PROCEDURE pgb_insert(r int, pos int, fname text, expr text, keytype text, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    secs float8;
    lsn0 pg_lsn;
    wal bigint;
    heap bigint;
    idx bigint;
BEGIN
    EXECUTE format('CREATE TABLE pgb_t (id %s PRIMARY KEY, n int) WITH (autovacuum_enabled = off)',
                   keytype);
    COMMIT;
    EXECUTE 'CHECKPOINT';
    COMMIT;
    lsn0 := pg_current_wal_insert_lsn();
    t0 := clock_timestamp();
    EXECUTE format('INSERT INTO pgb_t (id, n) SELECT %s, g FROM generate_series(1, %s) g', expr, n);
    COMMIT;
    secs := extract(epoch FROM clock_timestamp() - t0);
    wal := pg_current_wal_insert_lsn() - lsn0;
    EXECUTE $q$SELECT pg_relation_size('pgb_t'), pg_indexes_size('pgb_t')$q$ INTO heap, idx;
    DROP TABLE pgb_t;
    INSERT INTO pgb_result VALUES (r, pos, 'insert', fname, secs, heap, idx, wal);
    COMMIT;
    IF r > 0 THEN
        RAISE NOTICE 'round % insert %: % s, % MB WAL', r, fname, round(secs::numeric, 3),
            round(wal / 1048576.0, 1);
    END IF;
END
$$;
SQL
    # Round 0 is the warm-up (10,000 rows; not reported): the module is
    # loaded, the generators made, snowflake()'s state and mark created.
    for ((r = 0; r <= rounds; r++)); do
        n=$rows
        ((r == 0)) && n=10000
        echo "CHECKPOINT;"
        # shellcheck disable=SC2016 # $e$...$e$ is SQL's dollar quoting
        for ((k = 0; k < ${#L_NAME[@]}; k++)); do
            i=$(((k + r) % ${#L_NAME[@]}))
            [ "${L_NAME[i]}" = snowflake_wide ] && layout_sql "$WIDE_LAYOUT"
            printf 'CALL pgb_loop(%d, %d, %s, $e$%s$e$, %d);\n' "$r" "$k" "'${L_NAME[i]}'" "${L_EXPR[i]}" "$n"
            [ "${L_NAME[i]}" = snowflake_wide ] && layout_sql twitter
        done
        for ((k = 0; k < ${#I_NAME[@]}; k++)); do
            i=$(((k + r) % ${#I_NAME[@]}))
            # shellcheck disable=SC2016
            printf 'CALL pgb_insert(%d, %d, %s, $e$%s$e$, %s, %d);\n' "$r" "$k" "'${I_NAME[i]}'" \
                "${I_EXPR[i]}" "'${I_TYPE[i]}'" "$n"
        done
    done
    echo "DELETE FROM pgb_result WHERE round = 0;"
    echo "\\o $work/report.txt"
    # The report: lines of markdown, each a row of a query.
    cat <<SQL
\\qecho '@loops'
WITH e AS (SELECT round, seconds FROM pgb_result WHERE kind = 'loop' AND name = 'empty'),
l AS (SELECT r.name, r.seconds, r.seconds - e.seconds AS net
      FROM pgb_result r JOIN e USING (round) WHERE r.kind = 'loop')
SELECT name, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) * 1e6 / $rows,
       min(seconds) * 1e6 / $rows,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY net) * 1e9 / $rows
FROM l GROUP BY name;
\\qecho '@inserts'
-- net: the insert less the loop of the same function in the same round
-- (generate_series and the key's minting), the cost of storing a row.
SELECT i.name, percentile_cont(0.5) WITHIN GROUP (ORDER BY i.seconds) * 1e6 / $rows,
       min(i.seconds) * 1e6 / $rows,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.seconds - l.seconds) * 1e9 / $rows,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.heap) / 1048576.0,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.idx) / 1048576.0,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.wal) / 1048576.0
FROM pgb_result i JOIN pgb_result l ON l.round = i.round AND l.kind = 'loop' AND l.name = i.name
WHERE i.kind = 'insert' GROUP BY i.name;
\\qecho '@ratios'
-- KIND|A|B|median over rounds of A/B|median of A - empty / median of B - empty
-- (the medians of the differences, not of their ratios: a round whose
-- empty loop ran slow would swing a ratio of two small differences)
SELECT a.kind, a.name, b.name,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.seconds / b.seconds),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.seconds - e.seconds) /
           nullif(percentile_cont(0.5) WITHIN GROUP (ORDER BY b.seconds - e.seconds), 0)
FROM pgb_result a JOIN pgb_result b USING (round, kind)
     JOIN pgb_result e ON e.round = a.round AND e.kind = 'loop' AND e.name = 'empty'
WHERE (a.kind, a.name, b.name) IN (('loop', 'gen_random_uuid', 'uuidv7'), ('loop', 'nextval', 'uuidv7'),
                                   ('loop', 'uuidv7', 'snowflake_wide'), ('loop', 'nextval', 'snowflake_wide'),
                                   ('insert', 'gen_random_uuid', 'uuidv7'))
GROUP BY a.kind, a.name, b.name;
\\qecho '@runs'
SELECT kind, name, string_agg(to_char(seconds, 'FM9990.000'), ' ' ORDER BY round)
FROM pgb_result GROUP BY kind, name;
\\qecho '@settings'
SELECT name, current_setting(name) FROM pg_settings
WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_buffers', 'synchronous_commit',
               'fsync', 'full_page_writes', 'wal_level', 'jit', 'work_mem', 'max_connections')
ORDER BY name;
\\qecho '@version'
SELECT current_setting('server_version'), extversion FROM pg_extension WHERE extname = 'pg_idmint';
SQL
} >"$sql"

log "$rounds round(s) of $rows rows (a full run takes a few minutes); server log $PG_DIR/pg.log"
# psql as pg_psql runs it, but in the background and by its own PID, so
# that Ctrl-C (or SIGTERM) ends it at once; the procedures' NOTICEs are the
# progress lines.
"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR/sock" -p "$PG_PORT" -U postgres -d postgres \
    -f "$sql" >"$work/psql.out" 2> >(sed -u 's/^.*NOTICE:  /bench\/pg.sh: /' >&2) &
psql_pid=$!
wait "$psql_pid"
rc=$?
psql_pid=
if [ "$rc" != 0 ]; then
    log "psql failed (exit $rc); the end of the server's log:"
    tail -n 20 "$PG_DIR/pg.log" >&2
    exit 1
fi
installed_same || log "warning: the installed pg_idmint changed during the run (another install?): the figures may be another build's"
# Checkpoints the server started by itself ("time" or "wal", against ours:
# "immediate force wait", and the restart's "shutdown"): one during a timed
# statement would slow it.
own_ckpt=$(grep -c 'checkpoint starting:.* \(time\|wal\)' "$PG_DIR/pg.log")

# --- the report -------------------------------------------------------------------
declare -A LMED LMIN LNET IMED IMIN INS IHEAP IIDX IWAL RAT RATNET SET RUNS
section=
while IFS='|' read -r a b c d e f g; do
    case $a in
    @*) section=${a#@}; continue ;;
    '') continue ;;
    esac
    case $section in
    loops) LMED[$a]=$b LMIN[$a]=$c LNET[$a]=$d ;;
    inserts) IMED[$a]=$b IMIN[$a]=$c INS[$a]=$d IHEAP[$a]=$e IIDX[$a]=$f IWAL[$a]=$g ;;
    ratios) RAT[$a|$b|$c]=$d RATNET[$a|$b|$c]=$e ;;
    runs) RUNS[$a|$b]=$c ;;
    settings) SET[$a]=$b ;;
    version) pgver=$a extver=$b ;;
    esac
done <"$work/report.txt"
fmt() { awk -v x="$1" -v p="${2:-3}" 'BEGIN { if (x == "") print "?"; else printf "%.*f", p, x }'; }

rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
printf '\n## pg_idmint against PostgreSQL %s (bench/pg.sh)\n\n' "$pgver"
printf '%s; %s cores, load %s; pg_idmint %s (tree %s); %d round(s) of %s rows, the order rotated each round; seconds per million rows.\n\n' \
    "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$extver" "$rev" "$rounds" "$rows"
printf 'Settings: initdb (C.UTF-8, trust), then'
for s in shared_buffers jit max_connections; do printf ' %s=%s' "$s" "${SET[$s]}"; done
printf '; unchanged:'
for s in max_wal_size checkpoint_timeout wal_buffers synchronous_commit fsync full_page_writes wal_level work_mem; do
    printf ' %s=%s' "$s" "${SET[$s]}"
done
printf '.\n\n'

printf '| SELECT count(f()) FROM generate_series(1, N) | s per million, median | min | ns per call, net of the empty loop |\n'
printf '|---|---:|---:|---:|\n'
for ((i = 0; i < ${#L_NAME[@]}; i++)); do
    nm=${L_NAME[i]} ex=${L_EXPR[i]}
    label="\`$ex\`"
    [ "$nm" = empty ] && label='`(none: count(*), the empty loop)`'
    [ "$nm" = snowflake ] && label='`snowflake()`, twitter (4,096 per ms: 0.244 s per million at best)'
    [ "$nm" = snowflake_wide ] && label="\`snowflake()\`, \`$WIDE_LAYOUT\`"
    net=$(fmt "${LNET[$nm]:-}" 1)
    [ "$nm" = empty ] && net=—
    printf '| %s | %s | %s | %s |\n' "$label" "$(fmt "${LMED[$nm]:-}")" "$(fmt "${LMIN[$nm]:-}")" "$net"
done
((loops_only)) || printf '\n| INSERT INTO t (id, n) SELECT f(), g FROM generate_series(1, N) g | key | s per million, median | min | ns per row, net of the loop of f() | heap MB | index MB | WAL MB |\n|---|---|---:|---:|---:|---:|---:|---:|\n'
for ((i = 0; i < ${#I_NAME[@]}; i++)); do
    nm=${I_NAME[i]}
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "\`${I_EXPR[i]}\`" "${I_TYPE[i]}" \
        "$(fmt "${IMED[$nm]:-}")" "$(fmt "${IMIN[$nm]:-}")" "$(fmt "${INS[$nm]:-}" 0)" \
        "$(fmt "${IHEAP[$nm]:-}" 1)" "$(fmt "${IIDX[$nm]:-}" 1)" "$(fmt "${IWAL[$nm]:-}" 1)"
done

printf '\n### Goals (median over the rounds of the ratio within a round; > 1 means uuidv7() is faster)\n\n'
goal() { # KIND A B GOAL TEXT
    local key="$1|$2|$3" x verdict
    x=${RAT[$key]:-}
    if [ -z "$x" ]; then
        verdict='not measured'
    elif ((quick)); then
        verdict='not judged (--quick)'
    else
        verdict=$(awk -v x="$x" -v g="$4" 'BEGIN { print (x >= g ? "PASS" : "MISS") }')
    fi
    if [ "$1" = loop ]; then
        printf -- '- %s: %s× (net of the empty loop: %s×); goal ≥ %s — %s\n' "$5" "$(fmt "$x" 2)" \
            "$(fmt "${RATNET[$key]:-}" 2)" "$4" "$verdict"
    else
        printf -- '- %s: %s×; goal ≥ %s — %s\n' "$5" "$(fmt "$x" 2)" "$4" "$verdict"
    fi
}
goal loop gen_random_uuid uuidv7 3 'loop, gen_random_uuid() / uuidv7()'
goal loop nextval uuidv7 1 "loop, nextval() / uuidv7()"
goal loop uuidv7 snowflake_wide 0.83 'loop, uuidv7() / snowflake() with 18 sequence bits (a call at most 1.2× uuidv7())'
goal loop nextval snowflake_wide 1 'loop, nextval() / snowflake() with 18 sequence bits (below nextval())'
((loops_only)) || goal insert gen_random_uuid uuidv7 1 'insert, gen_random_uuid() key / uuidv7() key'
printf '\nThe goals are judged on the whole statement, empty loop included.'
if ((own_ckpt > 0)); then
    printf ' **%d checkpoint(s) started by the server itself during the run** (max_wal_size or checkpoint_timeout): a timed statement may have paid for one.' "$own_ckpt"
fi
printf '\n'
printf '\nEvery run, in round order (seconds for %s rows):\n\n' "$rows"
for ((i = 0; i < ${#L_NAME[@]}; i++)); do
    printf -- '- loop %s: %s\n' "${L_NAME[i]}" "${RUNS[loop|${L_NAME[i]}]:-}"
done
for ((i = 0; i < ${#I_NAME[@]}; i++)); do
    printf -- '- insert %s: %s\n' "${I_NAME[i]}" "${RUNS[insert|${I_NAME[i]}]:-}"
done
log "done in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
