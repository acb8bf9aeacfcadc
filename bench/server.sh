#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through start() and traps
# idmintd under load, side by side with nginx and redis-server (bench/SERVER.md):
#
#   bench/server.sh [--quick] [--only SECTION[,SECTION...]] [--old IDMINTD]
#
# 1. installs what is missing of wrk, nginx-light, redis-server, redis-tools,
#    curl and openssl (Debian's packages; apt-get update only when something
#    is);
# 2. builds idmintd in Release into build-srvbench/, and the /healthz
#    prober bench/healthz_probe.c and the hostile client
#    tests/server/attack.c next to it;
# 3. starts idmintd (--state-dir in the build dir and a node registry of its
#    own beside it, so that builds whose registry rules differ (--old) do
#    not meet in the host's; --log-level warn, default
#    node), nginx twice (1 and 2 worker processes, a generated nginx.conf
#    whose only location returns a one-line static body) and redis-server
#    (--save '' --appendonly no), each on a free loopback port, in the
#    foreground of a background job, and stops each by its PID;
# 4. http: wrk -t1 -c64 --latency against idmintd's /v1/ids/snowflake,
#    /v1/ids/uuidv7, /v1/ids/snowflake?count=100 and both nginx instances,
#    interleaved, 3 rounds of 5 s; resp: redis-benchmark -c 50
#    `NEXT snowflake` against idmintd and `INCR counter` against
#    redis-server, without pipelining (-n 1,000,000) and with -P 16
#    (-n 4,000,000), interleaved, 3 rounds; each ratio is given as the
#    best run against the best run, and as the min / median over the rounds
#    of each idmintd run against the peer's run of the same round (the
#    median is judged against the goal); memory from /proc/PID/status;
#    healthz: /healthz latency (p50, p99, max) probed every 5 ms on one
#    keep-alive connection, idle and while 4 wrk clients request
#    /v1/ids/snowflake?count=10000 on --layout sonyflake (and count=600 on
#    time=41,node=10,seq=8,unit=1s) in a loop: 3 rounds of 10 s per layout,
#    each on a fresh idmintd, for this tree's idmintd and, with --old, for
#    another build in the same run, side by side; pipeline: the same probe
#    while one RESP connection pipelines `NEXT snowflake 10000` back to back
#    and one HTTP connection `count=10000`, both reading their replies (this
#    tree and --old, side by side, 3 rounds of 10 s); memory: idmintd's
#    resident set (idle, peak, 5 s after) under 400 RESP connections that
#    pipeline `NEXT typeid 10000 PREFIX` and never read, and under 300
#    half-sent 1 MiB multibulk frames, this tree and --old, with
#    redis-server under the same clients for reference; flood: /healthz
#    (every 10 ms, one keep-alive connection) and a well-behaved RESP client
#    (`NEXT snowflake` every 10 ms, reading each reply), both through
#    bench/healthz_probe, while 500 connections each send 16.6 KB of one
#    large request (`NEXT typeid 10000 PREFIX` with a 63-character prefix,
#    `NEXT ksuid 10000`, `NEXT uuidv7 10000`, `NEXT snowflake 10000`, and
#    HTTP typeid and snowflake count=10000) with a 4 KiB receive window and
#    never read: p50 / p99 / max of both and idmintd's peak RSS, a fresh
#    idmintd per round, this tree and --old alternating, 3 rounds of 6 s;
#    with 2 cores or more idmintd runs on CPU 0 and the probes on CPU 1
#    (taskset), the flooders unpinned; tls: wrk over TLS
#    against idmintd (--tls-cert/--tls-key, when this idmintd has them) and
#    nginx with `listen ... ssl`, interleaved, 3 rounds of 5 s, and
#    redis-benchmark --tls against idmintd's RESP port and a redis-server
#    with --tls-port (when redis-benchmark has --tls);
# 5. checks that idmintd survived every run, answered no error (wrk's
#    "Non-2xx or 3xx responses", socket errors, /metrics error classes) and
#    that its /metrics counters match what the clients counted;
# 6. prints the machine and the tables, and writes them to
#    build-srvbench/server-results.md (raw tool output: build-srvbench/srvbench/).
#
# --quick: 1 round, of 2 s per HTTP line, -n 100,000 / 400,000 for RESP,
# 3 s per healthz layout and pipeline round, a quarter of the memory
# section's connections, 1 flood round of 3 s per kind. --only runs some of
# the sections http, resp, healthz, pipeline, memory, flood and tls
# (default: all). --old IDMINTD (or
# IDMINTD_OLD=IDMINTD; a binary or a build directory holding one) adds that
# idmintd to every section: in http and resp its own lines (snowflake
# over HTTP, NEXT snowflake with and without pipelining) interleaved with
# this tree's, their ratio round by round judged against 0.97, and to
# healthz, pipeline and memory as described above; e.g. a build of the
# commit before a change. IDM_SRVBENCH_BUILD moves the
# build directory, IDM_SRVBENCH_PORT the first port tried (default: a
# random one from 20000 to 59999). A report, not a test: exit 0 when goals
# are missed; non-zero only when something failed to build or run, or a
# check on idmintd failed (crash, hang, error responses, counters off).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${IDM_SRVBENCH_BUILD:-$root/build-srvbench}
quick=0
all_sections=http,resp,healthz,pipeline,memory,flood,tls
only=$all_sections
old=${IDMINTD_OLD-}
usage() {
    echo "usage: bench/server.sh [--quick] [--only $all_sections] [--old IDMINTD]" >&2
    exit 2
}
while (($#)); do
    case $1 in
    --quick) quick=1 ;;
    --only)
        (($# >= 2)) || usage
        only=$2
        shift
        ;;
    --only=*) only=${1#--only=} ;;
    --old)
        (($# >= 2)) || usage
        old=$2
        shift
        ;;
    --old=*) old=${1#--old=} ;;
    *) usage ;;
    esac
    shift
done
do_http=0 do_resp=0 do_healthz=0 do_pipeline=0 do_memory=0 do_flood=0 do_tls=0
IFS=, read -ra sections <<<"$only"
for sec in "${sections[@]}"; do
    case $sec in
    http) do_http=1 ;;
    resp) do_resp=1 ;;
    healthz) do_healthz=1 ;;
    pipeline) do_pipeline=1 ;;
    memory) do_memory=1 ;;
    flood) do_flood=1 ;;
    tls) do_tls=1 ;;
    *) usage ;;
    esac
done
((do_http + do_resp + do_healthz + do_pipeline + do_memory + do_flood + do_tls)) || usage
if [[ -n $old ]]; then
    [[ -d $old ]] && old=$old/idmintd
    if [[ ! -x $old ]]; then
        echo "bench/server.sh: --old: $old is not an executable idmintd" >&2
        exit 2
    fi
    old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")
fi

log() {
    printf 'bench/server.sh: %s\n' "$*" >&2
}
t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# --- parameters -------------------------------------------------------------

wrk_threads=1
wrk_conns=64
rb_conns=50
if ((quick)); then
    wrk_secs=2 rounds=1 rb_rounds=1 rb_n=100000 rb_np=400000
    hz_secs=3 hz_rounds=1 hz_idle_secs=1 hz_alone_n=1
    pl_secs=3 pl_rounds=1 mem_pipe_conns=100 mem_half_conns=75 mem_hold_max=8
    fl_secs=3 fl_rounds=1
    tls_rb_n=50000 tls_rb_np=200000
else
    wrk_secs=5 rounds=3 rb_rounds=3 rb_n=1000000 rb_np=4000000
    hz_secs=10 hz_rounds=3 hz_idle_secs=2 hz_alone_n=3
    pl_secs=10 pl_rounds=3 mem_pipe_conns=400 mem_half_conns=300 mem_hold_max=20
    fl_secs=6 fl_rounds=3
    tls_rb_n=300000 tls_rb_np=1200000
fi
rb_pipe=16
rb_timeout=120 # s; a hung server would keep redis-benchmark waiting forever
# healthz: LAYOUT|COUNT per line (sonyflake: 256 IDs per 10 ms, so 10,000
# take ~390 ms of clock; the 1 s unit: 256 per s, so 600 take ~2.3 s).
hz_layouts=("sonyflake|10000" "time=41,node=10,seq=8,unit=1s|600")
hz_clients=4      # wrk connections requesting COUNT in a loop
hz_interval_ms=5  # one /healthz probe due every 5 ms
hz_warm=1         # s of load before the probe starts
hz_wrk_timeout=60 # s; wrk's per-request timeout (4 clients at 256 IDs/s: ~9 s a request)
# pipeline: what each pipelining connection has to send, in bytes (2 MB of
# `NEXT snowflake 10000` asks for 900 million IDs: never used up in a round).
pl_bytes=2000000
# memory: bytes each non-reading connection pipelines (about 900 requests of
# NEXT typeid 10000 with a 63-character prefix: 900 MB of replies asked for);
# after the hold, how long the clients have been gone when RSS is read.
mem_pipe_bytes=100000
mem_after_secs=5
# flood: connections, the bytes of requests each sends once (200 x NEXT
# typeid 10000 with a 63-character prefix), the probes' interval, and how
# long after the probes start the flood connects.
fl_conns=500
fl_bytes=16600
fl_interval_ms=10
fl_lead_ms=500

# --- 1. dependencies ----------------------------------------------------------

# command -> Debian package
deps=(curl:curl)
((do_http || do_healthz || do_tls)) && deps+=(wrk:wrk)
((do_http || do_tls)) && deps+=(nginx:nginx-light)
((do_tls)) && deps+=(openssl:openssl)
((do_resp || do_memory || do_tls)) && deps+=(redis-server:redis-server redis-benchmark:redis-tools redis-cli:redis-tools)
((do_healthz || do_pipeline || do_memory || do_flood)) && deps+=(cc:gcc)
missing=()
for d in "${deps[@]}"; do
    cmd=${d%%:*} pkg=${d#*:}
    if ! command -v "$cmd" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$cmd ]]; then
        [[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
    fi
done
if ((${#missing[@]})); then
    sudo=
    ((EUID != 0)) && sudo=sudo
    log "installing ${missing[*]}"
    if ! $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 ||
        ! DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends "${missing[@]}" >&2; then
        log "FAILED: apt-get install ${missing[*]}"
        exit 1
    fi
fi
PATH=$PATH:/usr/sbin

# --- 2. build -----------------------------------------------------------------

log "building idmintd (Release) in $out"
if ! cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DIDM_TESTS=OFF -DIDM_BENCH=OFF >&2 ||
    ! cmake --build "$out" -j "$(nproc)" --target idmintd >&2; then
    log "FAILED: the idmintd build"
    exit 1
fi
idmintd=$out/idmintd
probe=$out/healthz_probe
if ((do_healthz || do_pipeline || do_flood)) &&
    ! "${CC:-cc}" -std=c11 -O2 -Wall -Wextra -o "$probe" "$root/bench/healthz_probe.c" >&2; then
    log "FAILED: the build of bench/healthz_probe.c"
    exit 1
fi
attack=$out/attack
# -D_GNU_SOURCE as the CMake build defines it for every target; OpenSSL
# for its TLS clients (tests/CMakeLists.txt links it the same way).
if ((do_pipeline || do_memory || do_flood)) &&
    ! "${CC:-cc}" -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -o "$attack" "$root/tests/server/attack.c" \
        -lssl -lcrypto >&2; then
    log "FAILED: the build of tests/server/attack.c"
    exit 1
fi

# --- helpers ------------------------------------------------------------------

work=$out/srvbench
rm -rf "$work"
mkdir -p "$work" || exit 1
failed=0
checks=()       # lines of the checks section
check_fail() { # a check on idmintd failed: the run is not a valid report
    log "CHECK FAILED: $*"
    checks+=("- **FAILED**: $*")
    failed=1
}
check_ok() {
    checks+=("- ok: $*")
}

pids=()
cleanup() {
    local p
    for p in "${pids[@]-}"; do
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A loopback port nobody listens on, from $next_port upwards.
next_port=${IDM_SRVBENCH_PORT:-$((20000 + RANDOM % 40000))}
free_port() { # -> port (not in a subshell: next_port moves on)
    local p=$next_port
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
        ((p++))
    done
    next_port=$((p + 1))
    port=$p
}

# wait_ready PID NAME COMMAND...: poll COMMAND for up to 10 s while PID lives.
wait_ready() {
    local pid=$1 name=$2 i
    shift 2
    for ((i = 0; i < 100; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "FAILED: $name exited at start-up (see $work/$name.log)"
            return 1
        fi
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    log "FAILED: $name not ready after 10 s"
    return 1
}

status_kib() { # PID FIELD (VmRSS, VmHWM)
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}
# The PID and its children (nginx: master and workers).
tree_pids() {
    local st
    echo "$1"
    for st in /proc/[0-9]*/status; do
        awk -v pp="$1" '$1 == "PPid:" && $2 == pp { split(FILENAME, a, "/"); print a[3] }' "$st" 2>/dev/null
    done
}
tree_kib() { # PID FIELD: summed over the tree
    local p sum=0 v
    for p in $(tree_pids "$1"); do
        v=$(status_kib "$p" "$2")
        sum=$((sum + ${v:-0}))
    done
    echo "$sum"
}

metric() { # NAME-WITH-LABELS [PORT]: one value from idmintd's /metrics
    curl -s --max-time 5 "http://127.0.0.1:${2:-$idm_http}/metrics" |
        awk -v k="$1" 'index($0, k " ") == 1 { print $2; found = 1 } END { if (!found) print 0 }'
}
metric_errors() { # ROUTE [PORT]: responses not 2xx on that route (all classes but 2xx)
    curl -s --max-time 5 "http://127.0.0.1:${2:-$idm_http}/metrics" |
        awk -v r="$1" 'index($0, "idmint_requests_total{route=\"" r "\",") == 1 && $0 !~ /status="2xx"/ { s += $2 }
                       END { print s + 0 }'
}

idm_alive() {
    kill -0 "$idm_pid" 2>/dev/null &&
        [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$idm_http/healthz") == 200 ]]
}
# idm_up WHAT: is idmintd still serving after WHAT? If not, one failed check
# that says how (exited with a status or a signal, or alive but not
# answering /healthz within 5 s), and idmintd's further runs are skipped.
idm_down=0
idm_up() {
    ((idm_down)) && return 1
    idm_alive && return 0
    idm_down=1
    if kill -0 "$idm_pid" 2>/dev/null; then
        check_fail "idmintd (pid $idm_pid) stopped answering /healthz within 5 s after $1 (a hang; see $work/idmintd.log); it was killed (SIGKILL) and its later runs skipped"
        kill -KILL "$idm_pid" 2>/dev/null
        wait "$idm_pid" 2>/dev/null
    else
        wait "$idm_pid"
        local rc=$?
        local how="exited $rc"
        ((rc > 128)) && how="was killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
        check_fail "idmintd $how during $1 (see $work/idmintd.log); its later runs were skipped"
    fi
    return 1
}

# Latency text ("676.00us", "1.24ms", "1.01s") or milliseconds -> a short form.
fmt_lat_ms() { # MS
    awk -v v="$1" 'BEGIN { if (v == "") { print "—"; exit }
        if (v < 1) printf "%.0f µs", v * 1000; else if (v < 100) printf "%.2f ms", v
        else if (v < 1000) printf "%.0f ms", v; else printf "%.2f s", v / 1000 }'
}
wrk_lat_ms() { # "676.00us" -> 0.676
    awk -v v="$1" 'BEGIN { u = v; sub(/^[0-9.]+/, "", u); n = v + 0
        if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
        if (v == "") print ""; else printf "%.4f", n }'
}
fmt_int() {
    awk -v v="$1" 'BEGIN { s = sprintf("%.0f", v); o = ""
        while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
        print s o }'
}
fmt_mib() { # KiB -> MiB
    awk -v v="$1" 'BEGIN { if (v + 0 == 0) print "—"; else printf "%.1f MiB", v / 1024 }'
}
ratio() { # A B -> A/B with 2 decimals, or — when B is 0 or empty
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "") print "—"; else printf "%.2f", a / b }'
}
verdict() { # RATIO GOAL: PASS/MISS for ratio >= goal
    awk -v r="$1" -v g="$2" 'BEGIN { if (r == "—") print "—"; else if (r + 0 >= g + 0) print "PASS"; else print "MISS" }'
}

# --- 3. servers ---------------------------------------------------------------

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem_gib=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$root" status --porcelain -- src include server common 2>/dev/null) ]]; then
    rev="$rev + uncommitted changes in src/, include/, server/ or common/"
fi

# Each server gets fresh ports and another try when it cannot start (another
# program may take a port between the probe and the bind).
# launch_idmintd BIN NAME: BIN on two fresh ports, its state in
# $work/NAME-state and its log in $work/NAME.log; sets l_http l_resp l_pid.
launch_idmintd() {
    free_port
    l_http=$port
    free_port
    l_resp=$port
    "$1" --http "127.0.0.1:$l_http" --resp "127.0.0.1:$l_resp" \
        --state-dir "$work/$2-state" --node-registry "$work/$2-nodes" --log-level warn \
        >"$work/$2.log" 2>&1 &
    l_pid=$!
    pids+=("$l_pid")
    wait_ready "$l_pid" "$2" curl -sf "http://127.0.0.1:$l_http/healthz"
}
start_idmintd() {
    launch_idmintd "$idmintd" idmintd
    local rc=$?
    idm_http=$l_http idm_resp=$l_resp idm_pid=$l_pid
    return $rc
}

# nginx: temp paths inside the prefix, so nothing is written outside it.
nginx_conf() { # PREFIX PORT WORKERS [CERT KEY]: with CERT and KEY, over TLS
    local prefix=$1 t m temps='' ssl='' tls=''
    for t in client_body proxy fastcgi uwsgi scgi; do
        case $t in client_body) m=http_client_body ;; *) m=http_$t ;; esac
        if ! nginx -V 2>&1 | grep -q -- "--without-${m}_module"; then
            temps+="    ${t}_temp_path $prefix/tmp/$t;"$'\n'
        fi
    done
    if [[ -n ${4-} ]]; then
        ssl=' ssl'
        tls="        ssl_certificate $4;"$'\n'"        ssl_certificate_key $5;"$'\n'
    fi
    cat <<EOF
# Generated by bench/server.sh: a one-line static response, the ceiling
# of an HTTP server on this machine.
worker_processes $3;
error_log $prefix/error.log warn;
pid $prefix/nginx.pid;
events {
    worker_connections 4096;
}
http {
    access_log off;
    default_type text/plain;
    keepalive_timeout 65s;
    keepalive_requests 1000000;
$temps    server {
        listen 127.0.0.1:$2$ssl;
$tls        location / {
            return 200 "1234567890123456789\n";
        }
    }
}
EOF
}
start_nginx() { # NAME WORKERS [CERT KEY] -> sets started_pid, started_port
    local prefix=$work/$1 scheme=http
    free_port
    started_port=$port
    mkdir -p "$prefix/tmp" || return 1
    nginx_conf "$prefix" "$started_port" "$2" "${3-}" "${4-}" >"$prefix/nginx.conf"
    [[ -n ${3-} ]] && scheme=https
    nginx -p "$prefix" -e "$prefix/error.log" -c "$prefix/nginx.conf" -g 'daemon off;' \
        >"$work/$1.log" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    wait_ready "$started_pid" "$1" curl -sfk "$scheme://127.0.0.1:$started_port/"
}
start_redis() {
    free_port
    redis_port=$port
    redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --daemonize no \
        --dir "$work" --logfile "$work/redis-server.log" >/dev/null 2>&1 &
    redis_pid=$!
    pids+=("$redis_pid")
    wait_ready "$redis_pid" redis-server redis-cli -h 127.0.0.1 -p "$redis_port" ping
}
start() { # COMMAND...: up to 3 tries
    local i
    for i in 1 2 3; do
        "$@" && return 0
        kill -TERM "${pids[-1]}" 2>/dev/null && wait "${pids[-1]}" 2>/dev/null
        ((i < 3)) && log "retrying on other ports"
    done
    return 1
}
# The --old build beside it, for the http and resp lines against it.
start_old_idmintd() {
    launch_idmintd "$old" old-idmintd
    local rc=$?
    old_http=$l_http old_resp=$l_resp old_pid=$l_pid
    return $rc
}
idm_pid='' ngx1_pid='' ngx2_pid='' redis_pid='' old_pid=''
idm_idle='' ngx1_idle='' ngx2_idle='' redis_idle=''
if ((do_http || do_resp)); then
    start start_idmintd || exit 1
    if [[ -n $old ]]; then
        start start_old_idmintd || exit 1
    fi
    if ((do_http)); then
        start start_nginx nginx1 1 || exit 1
        ngx1_pid=$started_pid ngx1_port=$started_port
        start start_nginx nginx2 2 || exit 1
        ngx2_pid=$started_pid ngx2_port=$started_port
    fi
    if ((do_resp)); then
        start start_redis || exit 1
    fi
    sleep 0.5
    idm_idle=$(status_kib "$idm_pid" VmRSS)
    if ((do_http)); then
        ngx1_idle=$(tree_kib "$ngx1_pid" VmRSS)
        ngx2_idle=$(tree_kib "$ngx2_pid" VmRSS)
        log "ports: idmintd http $idm_http resp $idm_resp, nginx $ngx1_port (1 worker) $ngx2_port (2 workers)"
    fi
    if ((do_resp)); then
        redis_idle=$(status_kib "$redis_pid" VmRSS)
        log "ports: idmintd resp $idm_resp, redis $redis_port"
    fi
fi

# Each run's req/s by KEY:ROUND, for the ratios round by round.
declare -A round_rps
# round_ratios KEY PEERKEY -> "MIN MEDIAN N": KEY's run against PEERKEY's run
# of the same round, over the rounds where both ran (the median of an even
# number is the mean of the middle two).
round_ratios() {
    local r list=
    for ((r = 1; r <= 100; r++)); do
        [[ -n ${round_rps[$1:$r]-} && -n ${round_rps[$2:$r]-} ]] || continue
        list+="$(awk -v a="${round_rps[$1:$r]}" -v b="${round_rps[$2:$r]}" 'BEGIN { if (b > 0) print a / b }') "
    done
    # shellcheck disable=SC2086 # one ratio per word
    printf '%s\n' $list | sort -g | awk 'NF { v[++n] = $1 }
        END { if (!n) { print "— — 0"; exit }
              m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
              printf "%.2f %.2f %d\n", v[1], m, n }'
}

# --- 4a. HTTP -----------------------------------------------------------------

# Results per line key: best req/s and its latencies.
declare -A rps p50 p99
# run_wrk KEY URL: one wrk run; appends the raw output; sets w_rps w_reqs
# w_p50 w_p99 w_non2xx w_sockerr.
run_wrk() {
    local key=$1 url=$2 f=$work/wrk-$1.txt
    {
        echo "### $(date -u +%T) wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency $url"
        timeout $((wrk_secs + 30)) wrk -t"$wrk_threads" -c"$wrk_conns" -d"${wrk_secs}s" --latency "$url" 2>&1
        echo "### exit $?"
    } >>"$f"
    local txt
    txt=$(awk '/^### [0-9]/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$f")
    w_rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$txt")
    w_reqs=$(awk '/ requests in / { print $1 }' <<<"$txt")
    w_p50=$(wrk_lat_ms "$(awk '$1 == "50%" { print $2 }' <<<"$txt")")
    w_p99=$(wrk_lat_ms "$(awk '$1 == "99%" { print $2 }' <<<"$txt")")
    w_non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' <<<"$txt")
    w_sockerr=$(grep -m1 'Socket errors:' <<<"$txt" | sed 's/^ *//')
    if [[ -z $w_rps || -z $w_reqs ]] || grep -q '^### exit [1-9]' <<<"$txt"; then
        log "FAILED: wrk against $url (see $f)"
        return 1
    fi
    log "$key: $(fmt_int "$w_rps") req/s, p50 $(fmt_lat_ms "$w_p50"), p99 $(fmt_lat_ms "$w_p99")${w_non2xx:+, NON-2XX $w_non2xx}${w_sockerr:+, $w_sockerr}"
}
declare -A runs # KEY -> every run's req/s
keep_best() { # KEY
    runs[$1]+="${runs[$1]:+, }$(fmt_int "$w_rps")"
    round_rps[$1:$round]=$w_rps
    if [[ -z ${rps[$1]-} ]] || awk -v a="$w_rps" -v b="${rps[$1]}" 'BEGIN { exit !(a > b) }'; then
        rps[$1]=$w_rps p50[$1]=$w_p50 p99[$1]=$w_p99
    fi
}

# An idmintd line: wrk, then the checks against /metrics.
idm_http_errors=0
idm_wrk() { # KEY PATH FORMAT COUNT
    local key=$1 url="http://127.0.0.1:$idm_http$2" fmt=$3 count=$4
    local r0 m0 e0 r1 m1 e1 dr dm
    idm_up "the runs before wrk on $2" || return 1
    r0=$(metric 'idmint_requests_total{route="/v1/ids",status="2xx"}')
    m0=$(metric "idmint_ids_minted_total{format=\"$fmt\"}")
    e0=$(metric_errors /v1/ids)
    if ! run_wrk "$key" "$url"; then
        idm_up "wrk on $2 (see $work/wrk-$key.txt)" && failed=1
        return 1
    fi
    idm_up "wrk on $2 (see $work/wrk-$key.txt)" || return 1
    r1=$(metric 'idmint_requests_total{route="/v1/ids",status="2xx"}')
    m1=$(metric "idmint_ids_minted_total{format=\"$fmt\"}")
    e1=$(metric_errors /v1/ids)
    dr=$((r1 - r0)) dm=$((m1 - m0))
    if [[ -n $w_non2xx ]]; then
        check_fail "$2: wrk saw $w_non2xx non-2xx/3xx responses"
    fi
    if [[ -n $w_sockerr ]]; then
        check_fail "$2: wrk: $w_sockerr"
    fi
    if ((e1 != e0)); then
        check_fail "$2: /metrics counts $((e1 - e0)) error responses on /v1/ids"
    fi
    # idmintd counts every response it wrote; wrk only those completed before
    # its timer stopped: up to one in flight per connection more.
    if ((dr < w_reqs || dr > w_reqs + 2 * wrk_conns)); then
        check_fail "$2: /metrics counts $dr responses, wrk $w_reqs"
    elif ((dm != dr * count)); then
        check_fail "$2: /metrics counts $dm $fmt IDs minted for $dr responses of $count"
    else
        check_ok "$2: wrk $(fmt_int "$w_reqs") responses, /metrics $(fmt_int "$dr") 2xx (+$((dr - w_reqs)) in flight at the end), $(fmt_int "$dm") IDs, no errors"
    fi
    idm_http_errors=$((idm_http_errors + e1 - e0))
}

if ((do_http)); then
    ngx1_url="http://127.0.0.1:$ngx1_port/"
    ngx2_url="http://127.0.0.1:$ngx2_port/"
    log "HTTP: warm-up (1 s each)"
    for u in "$ngx1_url" "$ngx2_url" "http://127.0.0.1:$idm_http/v1/ids/snowflake"; do
        timeout 30 wrk -t"$wrk_threads" -c"$wrk_conns" -d1s "$u" >>"$work/wrk-warmup.txt" 2>&1 || {
            log "FAILED: wrk warm-up against $u"
            exit 1
        }
    done
    for ((round = 1; round <= rounds; round++)); do
        log "HTTP: round $round of $rounds (wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency)"
        run_wrk nginx1 "$ngx1_url" && keep_best nginx1 || failed=1
        idm_wrk sf /v1/ids/snowflake snowflake 1 && keep_best sf
        run_wrk nginx2 "$ngx2_url" && keep_best nginx2 || failed=1
        idm_wrk uuidv7 /v1/ids/uuidv7 uuidv7 1 && keep_best uuidv7
        idm_wrk sf100 '/v1/ids/snowflake?count=100' snowflake 100 && keep_best sf100
        if [[ -n $old_pid ]]; then
            run_wrk sf_old "http://127.0.0.1:$old_http/v1/ids/snowflake" && keep_best sf_old || failed=1
        fi
    done
fi

# --- 4b. RESP -----------------------------------------------------------------

declare -A rb_rps rb_p50 rb_p99
# run_rb KEY PORT N PIPELINE COMMAND...
run_rb() {
    local key=$1 port=$2 n=$3 pipe=$4 f=$work/rb-$1.txt line
    shift 4
    {
        echo "### $(date -u +%T) redis-benchmark -h 127.0.0.1 -p $port -c $rb_conns -n $n -P $pipe --csv $*"
        timeout "$rb_timeout" redis-benchmark -h 127.0.0.1 -p "$port" -c "$rb_conns" -n "$n" -P "$pipe" --csv "$@" 2>&1
        echo "### exit $?"
    } >>"$f"
    # "NEXT snowflake","66313.00","0.509","0.056","0.311","1.631","4.479","12.335"
    local txt
    txt=$(awk '/^### [0-9]/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$f")
    line=$(grep -v '^"test"' <<<"$txt" | grep -m1 '^"' | tr -d '"')
    if [[ -z $line ]] || ! grep -q '^### exit 0$' <<<"$txt"; then
        log "FAILED: redis-benchmark $* on port $port (see $f)"
        return 1
    fi
    local r_rps r_p50 r_p99
    IFS=, read -r _ r_rps _ _ r_p50 _ r_p99 _ <<<"$line"
    log "$key: $(fmt_int "$r_rps") req/s, p50 $(fmt_lat_ms "$r_p50"), p99 $(fmt_lat_ms "$r_p99")"
    runs[$key]+="${runs[$key]:+, }$(fmt_int "$r_rps")"
    round_rps[$key:$round]=$r_rps
    if [[ -z ${rb_rps[$key]-} ]] || awk -v a="$r_rps" -v b="${rb_rps[$key]}" 'BEGIN { exit !(a > b) }'; then
        rb_rps[$key]=$r_rps rb_p50[$key]=$r_p50 rb_p99[$key]=$r_p99
    fi
}
idm_rb() { # KEY N PIPELINE
    local m0 e0 m1 e1 dm
    idm_up "the runs before redis-benchmark -P $3" || return 1
    m0=$(metric 'idmint_ids_minted_total{format="snowflake"}')
    e0=$(metric_errors resp)
    if ! run_rb "$1" "$idm_resp" "$2" "$3" NEXT snowflake; then
        idm_up "redis-benchmark -P $3 (see $work/rb-$1.txt)" && failed=1
        return 1
    fi
    idm_up "redis-benchmark -P $3 (see $work/rb-$1.txt)" || return 1
    m1=$(metric 'idmint_ids_minted_total{format="snowflake"}')
    e1=$(metric_errors resp)
    dm=$((m1 - m0))
    # -n rounds up to whole pipelines per client.
    if ((e1 != e0)); then
        check_fail "NEXT snowflake -P $3: /metrics counts $((e1 - e0)) RESP error replies"
    elif ((dm < $2 || dm > $2 + rb_conns * $3)); then
        check_fail "NEXT snowflake -P $3: /metrics counts $dm snowflakes minted for -n $2"
    else
        check_ok "NEXT snowflake -P $3: -n $(fmt_int "$2"), /metrics $(fmt_int "$dm") snowflakes minted, no error replies"
    fi
}

if ((do_resp)); then
    log "RESP: warm-up"
    timeout 30 redis-benchmark -h 127.0.0.1 -p "$redis_port" -c "$rb_conns" -n 20000 -q INCR counter >/dev/null 2>&1
    idm_up "the HTTP runs" &&
        timeout 30 redis-benchmark -h 127.0.0.1 -p "$idm_resp" -c "$rb_conns" -n 20000 -q NEXT snowflake >/dev/null 2>&1
    log "RESP: redis-benchmark -c $rb_conns -n $rb_n (no pipelining), -n $rb_np -P $rb_pipe"
    for ((round = 1; round <= rb_rounds; round++)); do
        log "RESP: round $round of $rb_rounds"
        run_rb redis1 "$redis_port" "$rb_n" 1 INCR counter || failed=1
        idm_rb idm1 "$rb_n" 1
        run_rb redis16 "$redis_port" "$rb_np" "$rb_pipe" INCR counter || failed=1
        idm_rb idm16 "$rb_np" "$rb_pipe"
        if [[ -n $old_pid ]]; then
            run_rb old1 "$old_resp" "$rb_n" 1 NEXT snowflake || failed=1
            run_rb old16 "$old_resp" "$rb_np" "$rb_pipe" NEXT snowflake || failed=1
        fi
    done
fi

# --- 4c. memory, then stop ----------------------------------------------------

if ((do_http || do_resp)); then
    if idm_up "the HTTP and RESP runs"; then
        exhaustion=$(metric idmint_sequence_exhaustion_waits_total)
        rewinds=$(metric idmint_clock_rewinds_total)
        checks+=("- info: snowflake sequence-exhaustion waits $(fmt_int "$exhaustion"), clock rewinds $(fmt_int "$rewinds") (/metrics)")
    fi

    idm_hwm=$(status_kib "$idm_pid" VmHWM) idm_rss=$(status_kib "$idm_pid" VmRSS)
    if ((do_http)); then
        ngx1_hwm=$(tree_kib "$ngx1_pid" VmHWM) ngx1_rss=$(tree_kib "$ngx1_pid" VmRSS)
        ngx2_hwm=$(tree_kib "$ngx2_pid" VmHWM)
    fi
    if ((do_resp)); then
        redis_hwm=$(status_kib "$redis_pid" VmHWM) redis_rss=$(status_kib "$redis_pid" VmRSS)
    fi

    # idmintd drains on SIGTERM and exits 0 (idmintd(8)).
    if ((!idm_down)) && kill -0 "$idm_pid" 2>/dev/null; then
        kill -TERM "$idm_pid"
        for ((i = 0; i < 150; i++)); do # the drain takes at most 10 s
            kill -0 "$idm_pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$idm_pid" 2>/dev/null; then
            check_fail "idmintd had not exited 15 s after SIGTERM (killed with SIGKILL; see $work/idmintd.log)"
            kill -KILL "$idm_pid"
        fi
        wait "$idm_pid"
        rc=$?
        if ((rc == 137)); then
            : # already reported
        elif ((rc == 0)); then
            check_ok "idmintd drained and exited 0 on SIGTERM"
        else
            check_fail "idmintd exited $rc on SIGTERM (see $work/idmintd.log)"
        fi
    elif ((!idm_down)); then
        check_fail "idmintd was not running at the end (see $work/idmintd.log)"
    fi
    for p in $ngx1_pid $ngx2_pid $redis_pid $old_pid; do
        kill -TERM "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    pids=()
    if [[ -s $work/idmintd.log ]]; then
        checks+=("- idmintd's log (warn and above): $(wc -l <"$work/idmintd.log") lines, first: \`$(head -n 1 "$work/idmintd.log")\`")
    fi
fi

# --- 4d. /healthz while snowflake requests wait for the clock -----------------

# A line is TAG-I: TAG new (this tree) or old (--old), I the index in
# hz_layouts. Per line: the idle probe; per round, KEY:ROUND, the probe's
# figures in µs and the IDs/s the wrk clients got.
minmed() { # values on stdin, one a line -> "MIN MEDIAN" (or "" when none)
    awk 'NF' | sort -g | awk '{ v[++n] = $1 }
        END { if (n) printf "%s %s\n", v[1], n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
declare -A hz_idle hz_alone hz hz_ran # hz: FIELD:KEY:ROUND, FIELD p50 p99 max late
hz_tags=(new)
[[ -n $old ]] && hz_tags+=(old)
old_rev=
if [[ -n $old ]]; then
    old_rev=$(git -C "$(dirname "$old")" rev-parse --short HEAD 2>/dev/null || echo unknown)
fi
hz_bin() { # TAG
    if [[ $1 == old ]]; then echo "$old"; else echo "$idmintd"; fi
}
hz_start() { # TAG LAYOUT STATE-DIR -> hz_pid, hz_port
    free_port
    hz_port=$port
    "$(hz_bin "$1")" --http "127.0.0.1:$hz_port" --resp off --layout "$2" --state-dir "$3" --node-registry "$3-nodes" \
        --log-level warn >>"$work/healthz-$1.log" 2>&1 &
    hz_pid=$!
    pids+=("$hz_pid")
    wait_ready "$hz_pid" "healthz-$1" curl -sf "http://127.0.0.1:$hz_port/healthz"
}
# hz_probe FILE-STEM SECS: one probe run; sets pr_p50 pr_p99 pr_max pr_late (µs).
hz_probe() {
    local f=$1 line rc
    line=$(timeout $(($2 + 120)) "$probe" 127.0.0.1 "$hz_port" /healthz "$hz_interval_ms" \
        $(($2 * 1000)) "$f.lat" 2>"$f.err")
    rc=$?
    echo "$line" >"$f.txt"
    if ((rc != 0)) || [[ $line != probes* ]]; then
        check_fail "/healthz probe ($f.txt): exit $rc: $(head -c 300 "$f.err")"
        return 1
    fi
    read -r _ _ _ pr_p50 _ pr_p99 _ pr_max _ pr_late <<<"$line"
}
# hz_stop TAG [SECTION]: SIGTERM to hz_pid, then up to 30 s for the drain
# (the old idmintd may first finish requests that block its loop for
# seconds). SECTION names the section (default healthz) and its log.
hz_stop() {
    local i rc sec=${2:-healthz}
    kill -TERM "$hz_pid" 2>/dev/null
    for ((i = 0; i < 300; i++)); do
        kill -0 "$hz_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$hz_pid" 2>/dev/null; then
        check_fail "$sec, idmintd ($1) had not exited 30 s after SIGTERM (killed; see $work/$sec-$1.log)"
        kill -KILL "$hz_pid" 2>/dev/null
    fi
    wait "$hz_pid"
    rc=$?
    ((rc == 0 || rc == 137)) || check_fail "$sec, idmintd ($1) exited $rc on SIGTERM (see $work/$sec-$1.log)"
}
# hz_alone_run TAG I: hz_alone_n requests of COUNT one after the other, no
# other client: how long one takes when only the layout's ceiling holds it
# back (sonyflake: 10,000 IDs need 39 units of 10 ms, ~390 ms; the 1 s unit:
# 600 need 2-3 units, 1-2 s by where in its second the request starts).
hz_alone_run() {
    local layout=${hz_layouts[$2]%|*} count=${hz_layouts[$2]#*|} k t f=$work/healthz-$1-$2-alone.txt
    local times=()
    for ((k = 0; k < hz_alone_n; k++)); do
        t=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 60 \
            "http://127.0.0.1:$hz_port/v1/ids/snowflake?count=$count")
        echo "$t" >>"$f"
        if [[ $t != "200 "* ]]; then
            check_fail "healthz, idmintd ($1), --layout $layout: a request of count=$count alone answered '$t'"
            return 1
        fi
        times+=("$(awk -v s="${t#200 }" 'BEGIN { printf "%.0f", s * 1000000 }')")
    done
    local med
    read -r _ med <<<"$(printf '%s\n' "${times[@]}" | minmed)"
    hz_alone[$1-$2]=$med
}
# hz_round TAG I: one round on idmintd TAG (hz_pid, hz_port) running layout
# I: wrk load and the probe.
hz_round() {
    local tag=$1 layout=${hz_layouts[$2]%|*} count=${hz_layouts[$2]#*|}
    local key=$1-$2 f wpid wrc non2xx sockerr url
    url="http://127.0.0.1:$hz_port/v1/ids/snowflake?count=$count"
    log "healthz: round $round of $hz_rounds, idmintd ($tag), --layout $layout: $hz_clients clients count=$count, probe ${hz_secs} s"
    f=$work/healthz-$key-r$round-wrk.txt
    timeout $((hz_warm + hz_secs + hz_wrk_timeout + 30)) wrk -t1 -c"$hz_clients" \
        -d$((hz_warm + hz_secs))s --timeout "${hz_wrk_timeout}s" --latency "$url" >"$f" 2>&1 &
    wpid=$!
    pids+=("$wpid")
    sleep "$hz_warm"
    if hz_probe "$work/healthz-$key-r$round" "$hz_secs"; then
        hz[p50:$key:$round]=$pr_p50 hz[p99:$key:$round]=$pr_p99
        hz[max:$key:$round]=$pr_max hz[late:$key:$round]=$pr_late
        hz_ran[$key]=$((${hz_ran[$key]:-0} + 1))
    fi
    wait "$wpid"
    wrc=$?
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$f")
    sockerr=$(grep -m1 'Socket errors:' "$f" | sed 's/^ *//')
    if ((wrc != 0)) || ! grep -q ' requests in ' "$f"; then
        check_fail "healthz, idmintd ($tag), --layout $layout: wrk exit $wrc (see $f)"
    elif [[ -n $non2xx || -n $sockerr ]]; then
        check_fail "healthz, idmintd ($tag), --layout $layout: wrk: ${non2xx:+$non2xx non-2xx responses }$sockerr (see $f)"
    fi
    # Let the server finish what the clients left in flight.
    curl -s -o /dev/null --max-time 60 "http://127.0.0.1:$hz_port/healthz"
}
# hz_layout I: a fresh idmintd of each tag on layout I (side by side, each
# with its own state directory), an idle probe of each, then hz_rounds
# rounds going through the tags in turn; stopped by PID at the end.
hz_layout() {
    local i=$1 layout=${hz_layouts[$1]%|*} count=${hz_layouts[$1]#*|} tag key e1
    declare -A t_pid t_port t_e0
    for tag in "${hz_tags[@]}"; do
        key=$tag-$i
        rm -rf "$work/healthz-$key-state"
        if ! start hz_start "$tag" "$layout" "$work/healthz-$key-state"; then
            check_fail "healthz: idmintd ($tag) did not start with --layout $layout"
            continue
        fi
        t_pid[$tag]=$hz_pid t_port[$tag]=$hz_port
        log "healthz: idmintd ($tag), --layout $layout: idle probe (${hz_idle_secs} s), $hz_alone_n request(s) of count=$count alone"
        hz_probe "$work/healthz-$key-idle" "$hz_idle_secs" && hz_idle[$key]="$pr_p99 $pr_max"
        hz_alone_run "$tag" "$i"
        t_e0[$tag]=$(metric_errors /v1/ids "$hz_port")
    done
    for ((round = 1; round <= hz_rounds; round++)); do
        for tag in "${hz_tags[@]}"; do
            [[ -n ${t_pid[$tag]-} ]] || continue
            hz_pid=${t_pid[$tag]} hz_port=${t_port[$tag]}
            kill -0 "$hz_pid" 2>/dev/null || continue
            hz_round "$tag" "$i"
        done
    done
    for tag in "${hz_tags[@]}"; do
        [[ -n ${t_pid[$tag]-} ]] || continue
        hz_pid=${t_pid[$tag]} hz_port=${t_port[$tag]} key=$tag-$i
        if ! kill -0 "$hz_pid" 2>/dev/null; then
            check_fail "healthz, idmintd ($tag), --layout $layout: it exited during the rounds (see $work/healthz-$tag.log)"
            wait "$hz_pid"
            continue
        fi
        e1=$(metric_errors /v1/ids "$hz_port")
        if ((e1 != t_e0[$tag])); then
            check_fail "healthz, idmintd ($tag), --layout $layout: /metrics counts $((e1 - t_e0[$tag])) error responses on /v1/ids"
        else
            check_ok "healthz, idmintd ($tag), --layout $layout: ${hz_ran[$key]:-0} of $hz_rounds loaded probe runs, every /healthz answered 200, no error responses on /v1/ids"
        fi
        hz_stop "$tag"
    done
}
if ((do_healthz)); then
    for ((li = 0; li < ${#hz_layouts[@]}; li++)); do
        hz_layout "$li"
    done
    pids=()
fi

# --- 4e. /healthz while one client of each protocol pipelines -----------------

# A fresh idmintd per tag (both ports, the default twitter layout, its own
# state directory), side by side. Per round and tag: one RESP connection
# sends `NEXT snowflake 10000` back to back (pl_bytes of them, which the
# server reads as it goes) and reads the replies, one HTTP connection does
# the same with count=10000 (tests/server/attack.c --read always), and the
# probe runs pl_secs s from hz_warm s in. IDs/s: snowflakes minted over the
# round (/metrics), both clients together.
declare -A pl pl_ran pl_idle # pl: FIELD:TAG:ROUND, FIELD p50 p99 max late rate
pl_start() { # TAG STATE-DIR -> hz_pid, hz_port (HTTP), pl_resp
    free_port
    hz_port=$port
    free_port
    pl_resp=$port
    "$(hz_bin "$1")" --http "127.0.0.1:$hz_port" --resp "127.0.0.1:$pl_resp" --state-dir "$2" --node-registry "$2-nodes" \
        --log-level warn >>"$work/pipeline-$1.log" 2>&1 &
    hz_pid=$!
    pids+=("$hz_pid")
    wait_ready "$hz_pid" "pipeline-$1" curl -sf "http://127.0.0.1:$hz_port/healthz"
}
# attack_kv FILE KEY: a count from the attack client's summary line (0 if none).
attack_kv() {
    sed -n 's/^summary: //p' "$1" 2>/dev/null | tr ' ' '\n' |
        awk -F= -v k="$2" '$1 == k { v = $2 } END { print v + 0 }'
}
# pl_client TAG FILE WHAT FIRST: the attack client's report FILE shows a
# connection that stayed open, received replies and whose first reply's
# first line is FIRST.
pl_client() {
    if (($(attack_kv "$2" conns) != 1 || $(attack_kv "$2" closed) != 0 || $(attack_kv "$2" received) == 0)) ||
        ! grep -qxF "reply 1 $4" "$2"; then
        check_fail "pipeline, idmintd ($1): the $3 client was refused, closed or not answered $4 (see $2)"
    fi
}
pl_round() { # TAG, on hz_pid, hz_port, pl_resp
    local tag=$1 f=$work/pipeline-$1-r$round hold=$(((hz_warm + pl_secs) * 1000 + 500)) a1 a2 m0 m1 t0 t1
    log "pipeline: round $round of $pl_rounds, idmintd ($tag): RESP and HTTP clients pipelining count 10000, probe ${pl_secs} s"
    m0=$(metric 'idmint_ids_minted_total{format="snowflake"}' "$hz_port")
    t0=${EPOCHREALTIME/./}
    "$attack" "127.0.0.1:$pl_resp" --fill 'NEXT snowflake 10000\r\n' "$pl_bytes" --read always \
        --hold-ms "$hold" >"$f-resp.txt" 2>&1 &
    a1=$!
    "$attack" "127.0.0.1:$hz_port" --fill 'GET /v1/ids/snowflake?count=10000 HTTP/1.1\r\nHost: bench\r\n\r\n' \
        "$pl_bytes" --read always --hold-ms "$hold" >"$f-http.txt" 2>&1 &
    a2=$!
    pids+=("$a1" "$a2")
    sleep "$hz_warm"
    if hz_probe "$f" "$pl_secs"; then
        pl[p50:$tag:$round]=$pr_p50 pl[p99:$tag:$round]=$pr_p99
        pl[max:$tag:$round]=$pr_max pl[late:$tag:$round]=$pr_late
        pl_ran[$tag]=$((${pl_ran[$tag]:-0} + 1))
    fi
    wait "$a1" "$a2"
    t1=${EPOCHREALTIME/./}
    m1=$(metric 'idmint_ids_minted_total{format="snowflake"}' "$hz_port")
    pl[rate:$tag:$round]=$(awk -v d=$((m1 - m0)) -v us=$((t1 - t0)) 'BEGIN { printf "%.0f", d * 1e6 / us }')
    pl_client "$tag" "$f-resp.txt" RESP '*10000'
    pl_client "$tag" "$f-http.txt" HTTP 'HTTP/1.1 200 OK'
    # The clients are gone; the server drops what they left.
    curl -s -o /dev/null --max-time 60 "http://127.0.0.1:$hz_port/healthz"
}
if ((do_pipeline)); then
    declare -A t_pid t_port t_resp
    for tag in "${hz_tags[@]}"; do
        rm -rf "$work/pipeline-$tag-state"
        if ! start pl_start "$tag" "$work/pipeline-$tag-state"; then
            check_fail "pipeline: idmintd ($tag) did not start"
            continue
        fi
        t_pid[$tag]=$hz_pid t_port[$tag]=$hz_port t_resp[$tag]=$pl_resp
        log "pipeline: idmintd ($tag): idle probe (${hz_idle_secs} s)"
        hz_probe "$work/pipeline-$tag-idle" "$hz_idle_secs" && pl_idle[$tag]="$pr_p99 $pr_max"
    done
    for ((round = 1; round <= pl_rounds; round++)); do
        for tag in "${hz_tags[@]}"; do
            [[ -n ${t_pid[$tag]-} ]] || continue
            hz_pid=${t_pid[$tag]} hz_port=${t_port[$tag]} pl_resp=${t_resp[$tag]}
            kill -0 "$hz_pid" 2>/dev/null || continue
            pl_round "$tag"
        done
    done
    for tag in "${hz_tags[@]}"; do
        [[ -n ${t_pid[$tag]-} ]] || continue
        hz_pid=${t_pid[$tag]}
        if ! kill -0 "$hz_pid" 2>/dev/null; then
            check_fail "pipeline, idmintd ($tag): it exited during the rounds (see $work/pipeline-$tag.log)"
            wait "$hz_pid"
            continue
        fi
        check_ok "pipeline, idmintd ($tag): ${pl_ran[$tag]:-0} of $pl_rounds loaded probe runs, every /healthz answered 200"
        hz_stop "$tag" pipeline
    done
    pids=()
fi

# --- 4f. memory under clients that do not read --------------------------------

# Each line on a fresh server: idmintd of each tag with its defaults, and
# redis-server for reference, under the same clients (tests/server/attack.c):
#   pipe: mem_pipe_conns RESP connections each pipeline mem_pipe_bytes of
#         `NEXT typeid 10000 PREFIX` (63 characters; redis-server: `INCR x`)
#         with a small TCP window (--small-window: the server's kernel
#         buffers only kilobytes of the replies, so they pile up where the
#         server keeps them) and read nothing;
#   half: mem_half_conns connections each send the start of a 1 MiB
#         multibulk frame (NEXT and 19 arguments of 50,000 bytes; about
#         490 KB of it) and read the reply once they have sent it.
# The hold lasts until what the server does for them (IDs minted; redis:
# the counter) has not moved for a second, at most mem_hold_max s; then the
# clients close. RSS idle (after one ordinary request), the peak (VmHWM of
# the fresh process) and RSS mem_after_secs s after the clients left.
declare -A mem # FIELD:SCENARIO:SERVER, FIELD idle peak after sent matched closed
mem_prefix=$(printf 'a%.0s' $(seq 1 63))
mem_servers=("${hz_tags[@]}" redis)
mem_start() { # SERVER STATE-DIR -> mem_pid, mem_port (RESP), mem_http (idmintd)
    free_port
    mem_port=$port
    if [[ $1 == redis ]]; then
        redis-server --bind 127.0.0.1 --port "$mem_port" --save '' --appendonly no --daemonize no \
            --dir "$work" --logfile "$work/memory-redis.log" >/dev/null 2>&1 &
        mem_pid=$!
        pids+=("$mem_pid")
        wait_ready "$mem_pid" memory-redis redis-cli -h 127.0.0.1 -p "$mem_port" ping
        return
    fi
    free_port
    mem_http=$port
    "$(hz_bin "$1")" --http "127.0.0.1:$mem_http" --resp "127.0.0.1:$mem_port" --state-dir "$2" --node-registry "$2-nodes" \
        --log-level warn >>"$work/memory-$1.log" 2>&1 &
    mem_pid=$!
    pids+=("$mem_pid")
    wait_ready "$mem_pid" "memory-$1" curl -sf "http://127.0.0.1:$mem_http/healthz"
}
# mem_progress SERVER: what moves while the server works for the clients,
# or "?" when it does not answer within 10 s.
mem_progress() {
    local m
    if [[ $1 == redis ]]; then
        timeout 10 redis-cli -h 127.0.0.1 -p "$mem_port" GET x 2>/dev/null || echo '?'
    elif m=$(curl -sf --max-time 10 "http://127.0.0.1:$mem_http/metrics"); then
        awk '/^idmint_ids_minted_total/ { s += $2 } END { print s + 0 }' <<<"$m"
    else
        echo '?'
    fi
}
# mem_line SCENARIO SERVER ATTACK-ARGS...
mem_line() {
    local sc=$1 srv=$2 f=$work/memory-$1-$2.txt prev='' cur i a ok
    shift 2
    rm -rf "$work/memory-$srv-state"
    if ! start mem_start "$srv" "$work/memory-$srv-state"; then
        check_fail "memory: $srv did not start"
        return 1
    fi
    if [[ $srv == redis ]]; then
        redis-cli -h 127.0.0.1 -p "$mem_port" INCR x >/dev/null
    else
        redis-cli -h 127.0.0.1 -p "$mem_port" NEXT typeid 10000 "$mem_prefix" >/dev/null
    fi
    mem[idle:$sc:$srv]=$(status_kib "$mem_pid" VmRSS)
    log "memory: $sc, $srv"
    "$attack" "127.0.0.1:$mem_port" "$@" --hold-ms $(((mem_hold_max + 30) * 1000)) >"$f" 2>&1 &
    a=$!
    pids+=("$a")
    for ((i = 0; i < mem_hold_max; i++)); do
        sleep 1
        cur=$(mem_progress "$srv")
        [[ $cur != '?' && $cur == "$prev" ]] && grep -q '^sent' "$f" && break
        prev=$cur
    done
    mem[peak:$sc:$srv]=$(status_kib "$mem_pid" VmHWM)
    kill -TERM "$a" 2>/dev/null
    wait "$a"
    sleep "$mem_after_secs"
    mem[after:$sc:$srv]=$(status_kib "$mem_pid" VmRSS)
    mem[sent:$sc:$srv]=$(attack_kv "$f" sent)
    mem[matched:$sc:$srv]=$(attack_kv "$f" matched)
    mem[closed:$sc:$srv]=$(attack_kv "$f" closed)
    if [[ $srv == redis ]]; then
        timeout 10 redis-cli -h 127.0.0.1 -p "$mem_port" ping >/dev/null 2>&1 && ok=1 || ok=0
    else
        curl -sf --max-time 10 -o /dev/null "http://127.0.0.1:$mem_http/healthz" && ok=1 || ok=0
    fi
    if ((ok)) && (($(attack_kv "$f" conns) > 0)); then
        check_ok "memory, $sc, $srv: $(attack_kv "$f" conns) connections, still serving after them"
    else
        check_fail "memory, $sc, $srv: not serving after the clients, or they could not connect (see $f)"
    fi
    if [[ $srv == redis ]]; then
        kill -TERM "$mem_pid" 2>/dev/null
        wait "$mem_pid" 2>/dev/null
    else
        hz_pid=$mem_pid
        hz_stop "$srv" memory
    fi
}
# shellcheck disable=SC2016 # the $ of RESP lengths, for the attack client
if ((do_memory)); then
    mem_half=(--send '*20\r\n$4\r\nNEXT\r\n')
    for ((i = 0; i < 9; i++)); do
        mem_half+=(--send '$50000\r\n' --fill a 50000 --send '\r\n')
    done
    mem_half+=(--send '$50000\r\n' --fill a 40000)
    for srv in "${mem_servers[@]}"; do
        if [[ $srv == redis ]]; then
            frame='*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n'
        else
            frame="*4\\r\\n\$4\\r\\nNEXT\\r\\n\$6\\r\\ntypeid\\r\\n\$5\\r\\n10000\\r\\n\$63\\r\\n$mem_prefix\\r\\n"
        fi
        mem_line pipe "$srv" --conns "$mem_pipe_conns" --small-window --fill "$frame" "$mem_pipe_bytes"
        mem_line half "$srv" --conns "$mem_half_conns" "${mem_half[@]}" --read after --expect '-ERR'
    done
    pids=()
fi

# --- 4g. /healthz and a well-behaved client under a flood of non-readers -----

# Per kind, round and tag, on a fresh idmintd (both ports, default options,
# its own state directory): from fl_lead_ms before the flood connects and
# for fl_secs s, bench/healthz_probe sends GET /healthz every
# fl_interval_ms ms on one keep-alive connection, and another sends
# `NEXT snowflake` on the RESP port as often (each reads its replies); the
# flood is fl_conns connections (tests/server/attack.c --small-window: a
# 4 KiB receive buffer and 536-byte segments) that each send fl_bytes of one
# large request, once, and never read. With 2 cores or more, idmintd runs
# on CPU 0 and the probes on CPU 1 (taskset); the flooders are not pinned
# (after sending they only wait). Kinds: NAME|PORT (http or resp)|FRAME.
fl_prefix=$(printf 'a%.0s' $(seq 1 63))
fl_kinds=(
    "RESP \`NEXT typeid 10000 <63-char prefix>\`|resp|NEXT typeid 10000 $fl_prefix\r\n"
    "RESP \`NEXT ksuid 10000\`|resp|NEXT ksuid 10000\r\n"
    "RESP \`NEXT uuidv7 10000\`|resp|NEXT uuidv7 10000\r\n"
    "RESP \`NEXT snowflake 10000\`|resp|NEXT snowflake 10000\r\n"
    "HTTP typeid count=10000, 63-char prefix|http|GET /v1/ids/typeid?count=10000&prefix=$fl_prefix HTTP/1.1\r\nHost: b\r\n\r\n"
    "HTTP snowflake count=10000|http|GET /v1/ids/snowflake?count=10000 HTTP/1.1\r\nHost: b\r\n\r\n"
)
declare -A fl fl_ran # fl: FIELD:TAG:KIND:ROUND, FIELD hp50 hp99 hmax rp50 rp99 rmax late peak
fl_pin_srv=() fl_pin_probe=()
fl_pinning="not pinned ($(nproc) core)"
if (($(nproc) >= 2)) && command -v taskset >/dev/null; then
    fl_pin_srv=(taskset -c 0) fl_pin_probe=(taskset -c 1)
    fl_pinning="idmintd on CPU 0, the two probes on CPU 1 (taskset), the flooders unpinned"
fi
# fl_probe PORT PATH FILE-STEM &: one probe; its line in FILE-STEM.txt.
fl_probe() {
    timeout $((fl_secs + 120)) "${fl_pin_probe[@]}" "$probe" 127.0.0.1 "$1" "$2" "$fl_interval_ms" \
        $((fl_secs * 1000)) "$3.lat" >"$3.txt" 2>"$3.err"
}
# fl_field FILE KEY: a figure from a probe's line ("" when it failed).
fl_field() {
    awk -v k="$2" '$1 == "probes" { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"
}
fl_round() { # TAG KIND-INDEX
    local tag=$1 ki=$2 kind=${fl_kinds[$2]} f=$work/flood-$1-$2-r$round a p1 p2 port http resp
    local name=${kind%%|*} rest=${kind#*|}
    local which=${rest%%|*} frame=${rest#*|}
    rm -rf "$work/flood-$tag-state"
    free_port
    http=$port
    free_port
    resp=$port
    "${fl_pin_srv[@]}" "$(hz_bin "$tag")" --http "127.0.0.1:$http" --resp "127.0.0.1:$resp" \
        --state-dir "$work/flood-$tag-state" --node-registry "$work/flood-$tag-state-nodes" \
        --log-level warn >>"$work/flood-$tag.log" 2>&1 &
    hz_pid=$!
    pids+=("$hz_pid")
    if ! wait_ready "$hz_pid" "flood-$tag" curl -sf "http://127.0.0.1:$http/healthz"; then
        check_fail "flood, idmintd ($tag) did not start"
        return
    fi
    port=$http
    [[ $which == resp ]] && port=$resp
    log "flood: round $round of $fl_rounds, idmintd ($tag): $fl_conns × $name, never read; probes ${fl_secs} s"
    fl_probe "$http" /healthz "$f-healthz" &
    p1=$!
    fl_probe "$resp" 'resp:NEXT snowflake' "$f-resp" &
    p2=$!
    pids+=("$p1" "$p2")
    sleep "$(awk -v ms="$fl_lead_ms" 'BEGIN { print ms / 1000 }')"
    "$attack" "127.0.0.1:$port" --conns "$fl_conns" --small-window --fill "$frame" "$fl_bytes" \
        --hold-ms $(((fl_secs + 30) * 1000)) >"$f-flood.txt" 2>&1 &
    a=$!
    pids+=("$a")
    wait "$p1" "$p2"
    fl[peak:$tag:$ki:$round]=$(status_kib "$hz_pid" VmHWM)
    kill -TERM "$a" 2>/dev/null
    wait "$a"
    local ok=1
    for probe_f in "$f-healthz" "$f-resp"; do
        if [[ -z $(fl_field "$probe_f.txt" p99_us) ]]; then
            check_fail "flood, idmintd ($tag), $name: a probe failed: $(head -c 300 "$probe_f.err")"
            ok=0
        fi
    done
    if (($(attack_kv "$f-flood.txt" conns) != fl_conns || $(attack_kv "$f-flood.txt" full) != fl_conns)); then
        check_fail "flood, idmintd ($tag), $name: not every flood connection opened and sent all (see $f-flood.txt)"
        ok=0
    fi
    if ((ok)); then
        fl[hp50:$tag:$ki:$round]=$(fl_field "$f-healthz.txt" p50_us)
        fl[hp99:$tag:$ki:$round]=$(fl_field "$f-healthz.txt" p99_us)
        fl[hmax:$tag:$ki:$round]=$(fl_field "$f-healthz.txt" max_us)
        fl[rp50:$tag:$ki:$round]=$(fl_field "$f-resp.txt" p50_us)
        fl[rp99:$tag:$ki:$round]=$(fl_field "$f-resp.txt" p99_us)
        fl[rmax:$tag:$ki:$round]=$(fl_field "$f-resp.txt" max_us)
        local l1 l2
        l1=$(fl_field "$f-healthz.txt" late_max_us) l2=$(fl_field "$f-resp.txt" late_max_us)
        fl[late:$tag:$ki:$round]=$((l1 > l2 ? l1 : l2))
        fl_ran[$tag:$ki]=$((${fl_ran[$tag:$ki]:-0} + 1))
    fi
    if ! curl -sf --max-time 10 -o /dev/null "http://127.0.0.1:$http/healthz"; then
        check_fail "flood, idmintd ($tag), $name: not serving after the flood"
    fi
    hz_stop "$tag" flood
}
if ((do_flood)); then
    for ((ki = 0; ki < ${#fl_kinds[@]}; ki++)); do
        for ((round = 1; round <= fl_rounds; round++)); do
            for tag in "${hz_tags[@]}"; do
                fl_round "$tag" "$ki"
            done
        done
    done
    for tag in "${hz_tags[@]}"; do
        n=0
        for ((ki = 0; ki < ${#fl_kinds[@]}; ki++)); do
            n=$((n + ${fl_ran[$tag:$ki]:-0}))
        done
        check_ok "flood, idmintd ($tag): $n of $((fl_rounds * ${#fl_kinds[@]})) rounds measured, every probe answered, still serving after each flood"
    done
    pids=()
fi

# --- 4h. TLS --------------------------------------------------------------------

# idmintd with --tls-cert/--tls-key (both ports over TLS) against nginx
# with `listen ... ssl` (1 worker, the same static body), wrk over TLS,
# interleaved rounds as in the HTTP section; redis-benchmark --tls against
# idmintd's RESP port and a redis-server with --tls-port. One self-signed
# P-256 certificate for 127.0.0.1, made with openssl in the build dir.
tls_note=
tls_rb=0
tls_idm_started() { # the TLS idmintd answers /healthz over TLS
    curl -sfk "https://127.0.0.1:$tls_http/healthz"
}
tls_start_idmintd() {
    free_port
    tls_http=$port
    free_port
    tls_resp=$port
    "$idmintd" --http "127.0.0.1:$tls_http" --resp "127.0.0.1:$tls_resp" --tls-cert "$tls_dir/cert.pem" \
        --tls-key "$tls_dir/key.pem" --state-dir "$work/tls-idmintd-state" --node-registry "$work/tls-idmintd-nodes" --log-level warn \
        >>"$work/tls-idmintd.log" 2>&1 &
    tls_pid=$!
    pids+=("$tls_pid")
    wait_ready "$tls_pid" tls-idmintd tls_idm_started
}
tls_start_redis() {
    free_port
    tls_redis_port=$port
    redis-server --bind 127.0.0.1 --port 0 --tls-port "$tls_redis_port" --tls-cert-file "$tls_dir/cert.pem" \
        --tls-key-file "$tls_dir/key.pem" --tls-auth-clients no --save '' --appendonly no --daemonize no \
        --dir "$work" --logfile "$work/tls-redis-server.log" >/dev/null 2>&1 &
    tls_redis_pid=$!
    pids+=("$tls_redis_pid")
    wait_ready "$tls_redis_pid" tls-redis-server redis-cli --tls --insecure -h 127.0.0.1 -p "$tls_redis_port" ping
}
tls_errors() { # responses not 2xx on /v1/ids, from /metrics over TLS
    curl -sk --max-time 5 "https://127.0.0.1:$tls_http/metrics" |
        awk 'index($0, "idmint_requests_total{route=\"/v1/ids\",") == 1 && $0 !~ /status="2xx"/ { s += $2 }
             END { print s + 0 }'
}
if ((do_tls)); then
    tls_dir=$work/tls
    if ! "$idmintd" --help 2>&1 | grep -q -- --tls-cert; then
        tls_note="skipped: this idmintd has no TLS"
        log "tls: $tls_note"
        checks+=("- info: tls: $tls_note (no --tls-cert in idmintd --help)")
    elif ! mkdir -p "$tls_dir" || ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$tls_dir/key.pem" \
        -out "$tls_dir/cert.pem" 2>"$tls_dir/openssl.err"; then
        log "FAILED: openssl req (see $tls_dir/openssl.err)"
        exit 1
    else
        start tls_start_idmintd || exit 1
        start start_nginx nginx-tls 1 "$tls_dir/cert.pem" "$tls_dir/key.pem" || exit 1
        tls_ngx_pid=$started_pid tls_ngx_port=$started_port
        if redis-benchmark --help 2>&1 | grep -q -- '--tls'; then
            if start tls_start_redis; then
                tls_rb=1
            else
                checks+=("- info: tls: redis-server would not start with --tls-port (see $work/tls-redis-server.log); redis-benchmark --tls ran against idmintd only")
                tls_rb=2
            fi
        else
            checks+=("- info: tls: this redis-benchmark has no --tls: the RESP lines were skipped")
        fi
        tls_ngx_url="https://127.0.0.1:$tls_ngx_port/"
        tls_idm_url="https://127.0.0.1:$tls_http/v1/ids/snowflake"
        log "tls: warm-up (1 s each)"
        for u in "$tls_ngx_url" "$tls_idm_url"; do
            timeout 30 wrk -t"$wrk_threads" -c"$wrk_conns" -d1s "$u" >>"$work/wrk-tls-warmup.txt" 2>&1
        done
        e0=$(tls_errors)
        for ((round = 1; round <= rounds; round++)); do
            log "tls: round $round of $rounds (wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency, https)"
            run_wrk tls_nginx1 "$tls_ngx_url" && keep_best tls_nginx1 || failed=1
            if run_wrk tls_sf "$tls_idm_url"; then
                keep_best tls_sf
                [[ -n $w_non2xx ]] && check_fail "tls: $tls_idm_url: wrk saw $w_non2xx non-2xx/3xx responses"
                [[ -n $w_sockerr ]] && check_fail "tls: $tls_idm_url: wrk: $w_sockerr"
            else
                failed=1
            fi
            if ((tls_rb)); then
                ((tls_rb == 1)) && { run_rb tls_redis1 "$tls_redis_port" "$tls_rb_n" 1 --tls --insecure INCR counter || failed=1; }
                run_rb tls_idm1 "$tls_resp" "$tls_rb_n" 1 --tls --insecure NEXT snowflake || failed=1
                ((tls_rb == 1)) && { run_rb tls_redis16 "$tls_redis_port" "$tls_rb_np" "$rb_pipe" --tls --insecure INCR counter || failed=1; }
                run_rb tls_idm16 "$tls_resp" "$tls_rb_np" "$rb_pipe" --tls --insecure NEXT snowflake || failed=1
            fi
        done
        e1=$(tls_errors)
        if ! kill -0 "$tls_pid" 2>/dev/null; then
            check_fail "tls: idmintd exited during the runs (see $work/tls-idmintd.log)"
        elif ((e1 != e0)); then
            check_fail "tls: /metrics counts $((e1 - e0)) error responses on /v1/ids"
        else
            check_ok "tls: idmintd served every wrk and redis-benchmark run over TLS, no error responses on /v1/ids"
        fi
        hz_pid=$tls_pid
        hz_stop idmintd tls
        for p in $tls_ngx_pid ${tls_redis_pid-}; do
            kill -TERM "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        done
    fi
    pids=()
fi

# --- 5. report ----------------------------------------------------------------

lat() { # P50 P99
    echo "$(fmt_lat_ms "$1") / $(fmt_lat_ms "$2")"
}
rows=()
row() { # test, idmintd, idmintd p50/p99, peer, peer req/s, peer p50/p99, best ratio, round ratios, goal
    local c line="|"
    for c in "$@"; do
        c=${c#"${c%%[! ]*}"} # trim
        c=${c%"${c##*[! ]}"}
        line+=" $c |"
    done
    rows+=("$line")
}
# ratio_cells KEY PEERKEY GOAL -> rr_cells "MIN / MEDIAN (N)" and rr_goal
# (the verdict on the median of the rounds' ratios), or info without GOAL.
ratio_cells() {
    local mn md nr
    read -r mn md nr <<<"$(round_ratios "$1" "$2")"
    if ((nr == 0)); then rr_cells="—"; else rr_cells="$mn / $md ($nr)"; fi
    if [[ -n $3 ]]; then rr_goal="≥ $3: $(verdict "$md" "$3")"; else rr_goal=info; fi
}
http_row() { # LABEL KEY PEERKEY PEERNAME GOAL
    local r extra=
    r=$(ratio "${rps[$2]-}" "${rps[$3]-}")
    ratio_cells "$2" "$3" "$5"
    [[ $2 == sf100 && -n ${rps[$2]-} ]] && extra=" ($(fmt_int "$(awk -v r="${rps[$2]}" 'BEGIN { print r * 100 }')") IDs/s)"
    row " $1 " " ${rps[$2]:+$(fmt_int "${rps[$2]}")}${extra} " " $(lat "${p50[$2]-}" "${p99[$2]-}") " " $4 " \
        " ${rps[$3]:+$(fmt_int "${rps[$3]}")} " " $(lat "${p50[$3]-}" "${p99[$3]-}") " " $r " " $rr_cells " " $rr_goal "
}
rb_row() { # LABEL KEY PEERKEY GOAL [PEERNAME]
    local r peer=${5:-"redis-server \`INCR counter\`"}
    r=$(ratio "${rb_rps[$2]-}" "${rb_rps[$3]-}")
    ratio_cells "$2" "$3" "$4"
    row " $1 " " ${rb_rps[$2]:+$(fmt_int "${rb_rps[$2]}")} " " $(lat "${rb_p50[$2]-}" "${rb_p99[$2]-}") " \
        " $peer " " ${rb_rps[$3]:+$(fmt_int "${rb_rps[$3]}")} " \
        " $(lat "${rb_p50[$3]-}" "${rb_p99[$3]-}") " " $r " " $rr_cells " " $rr_goal "
}
mem_row() { # LABEL IDM PEERNAME PEER
    row " $1 " " $(fmt_mib "$2") " " " " $3 " " $(fmt_mib "$4") " " " " $(ratio "$2" "$4") " " " " info (lower is smaller) "
}
if ((do_http)); then
    http_row "HTTP \`GET /v1/ids/snowflake\`" sf nginx1 "nginx, 1 worker" 0.8
    http_row "HTTP \`GET /v1/ids/snowflake\`" sf nginx2 "nginx, 2 workers" ""
    http_row "HTTP \`GET /v1/ids/uuidv7\`" uuidv7 nginx1 "nginx, 1 worker" ""
    http_row "HTTP \`GET /v1/ids/snowflake?count=100\`" sf100 nginx1 "nginx, 1 worker" ""
fi
if ((do_resp)); then
    rb_row "RESP \`NEXT snowflake\`, no pipelining" idm1 redis1 1.0
    rb_row "RESP \`NEXT snowflake\`, -P $rb_pipe" idm16 redis16 1.0
fi
if [[ -n $old_pid ]]; then
    ((do_http)) && http_row "HTTP \`GET /v1/ids/snowflake\`" sf sf_old "idmintd --old ($old_rev)" 0.97
    ((do_resp)) && rb_row "RESP \`NEXT snowflake\`, no pipelining" idm1 old1 0.97 "idmintd --old ($old_rev)"
    ((do_resp)) && rb_row "RESP \`NEXT snowflake\`, -P $rb_pipe" idm16 old16 0.97 "idmintd --old ($old_rev)"
fi
if ((do_http)); then
    mem_row "RSS idle (after start-up)" "$idm_idle" "nginx, 1 worker (master + worker)" "$ngx1_idle"
    mem_row "RSS peak under load (VmHWM)" "$idm_hwm" "nginx, 1 worker (master + worker)" "$ngx1_hwm"
fi
if ((do_resp)); then
    mem_row "RSS idle (after start-up)" "$idm_idle" "redis-server" "$redis_idle"
    mem_row "RSS peak under load (VmHWM)" "$idm_hwm" "redis-server" "$redis_hwm"
fi

# The healthz table: per layout and tag, the idle probe and the rounds'
# figures as min / median.
us() { # µs -> short text
    [[ -n $1 ]] && fmt_lat_ms "$(awk -v v="$1" 'BEGIN { print v / 1000 }')" || echo "—"
}
hz_values() { # FIELD KEY -> the rounds' values
    local r
    for ((r = 1; r <= hz_rounds; r++)); do
        [[ -n ${hz[$1:$2:$r]-} ]] && echo "${hz[$1:$2:$r]}"
    done
}
xratio() { # A B -> "N×", 2 significant figures at least
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "—"; else { r = a / b
        if (r >= 100) printf "%.0f×", r; else if (r >= 10) printf "%.1f×", r; else printf "%.2f×", r } }'
}
hz_rows=()
hz_sums=()
declare -A hz_med99 hz_medmax
if ((do_healthz)); then
    for ((li = 0; li < ${#hz_layouts[@]}; li++)); do
        lay=${hz_layouts[$li]%|*} cnt=${hz_layouts[$li]#*|}
        for tag in "${hz_tags[@]}"; do
            key=$tag-$li
            if [[ $tag == old ]]; then who="--old (commit $old_rev)"; else who="this tree"; fi
            read -r i99 imax <<<"${hz_idle[$key]-}"
            read -r _ m50 <<<"$(hz_values p50 "$key" | minmed)"
            read -r n99 m99 <<<"$(hz_values p99 "$key" | minmed)"
            read -r nmax mmax <<<"$(hz_values max "$key" | minmed)"
            read -r _ mlate <<<"$(hz_values late "$key" | minmed)"
            hz_med99[$key]=$m99 hz_medmax[$key]=$mmax
            hz_rows+=("| \`$lay\`, $hz_clients × count=$cnt | $who | $(us "$i99") / $(us "$imax") | $(us "$m50") | $(us "$n99") / $(us "$m99") | $(us "$nmax") / $(us "$mmax") | $(us "$mlate") | $(us "${hz_alone[$key]-}") | ${hz_ran[$key]:-0} |")
        done
        if [[ -n $old && -n ${hz_med99[new-$li]-} && -n ${hz_med99[old-$li]-} ]]; then
            hz_sums+=("- \`$lay\`: median p99 $(us "${hz_med99[old-$li]}") with --old, $(us "${hz_med99[new-$li]}") with this tree ($(xratio "${hz_med99[old-$li]}" "${hz_med99[new-$li]}") lower); median max $(us "${hz_medmax[old-$li]}") and $(us "${hz_medmax[new-$li]}") ($(xratio "${hz_medmax[old-$li]}" "${hz_medmax[new-$li]}") lower).")
        fi
    done
fi

# The pipeline table: per tag, the idle probe and the rounds' figures.
pl_values() { # FIELD TAG -> the rounds' values
    local r
    for ((r = 1; r <= pl_rounds; r++)); do
        [[ -n ${pl[$1:$2:$r]-} ]] && echo "${pl[$1:$2:$r]}"
    done
}
pl_rows=()
pl_sums=()
declare -A pl_med99 pl_medmax
if ((do_pipeline)); then
    for tag in "${hz_tags[@]}"; do
        if [[ $tag == old ]]; then who="--old (commit $old_rev)"; else who="this tree"; fi
        read -r i99 imax <<<"${pl_idle[$tag]-}"
        read -r _ m50 <<<"$(pl_values p50 "$tag" | minmed)"
        read -r n99 m99 <<<"$(pl_values p99 "$tag" | minmed)"
        read -r nmax mmax <<<"$(pl_values max "$tag" | minmed)"
        read -r _ mlate <<<"$(pl_values late "$tag" | minmed)"
        read -r _ mrate <<<"$(pl_values rate "$tag" | minmed)"
        pl_med99[$tag]=$m99 pl_medmax[$tag]=$mmax
        pl_rows+=("| 1 RESP × \`NEXT snowflake 10000\` + 1 HTTP × \`count=10000\`, pipelined | $who | $(us "$i99") / $(us "$imax") | $(us "$m50") | $(us "$n99") / $(us "$m99") | $(us "$nmax") / $(us "$mmax") | $(us "$mlate") | ${mrate:+$(fmt_int "$mrate")} | ${pl_ran[$tag]:-0} |")
    done
    if [[ -n $old && -n ${pl_med99[new]-} && -n ${pl_med99[old]-} ]]; then
        pl_sums+=("- median p99 $(us "${pl_med99[old]}") with --old, $(us "${pl_med99[new]}") with this tree ($(xratio "${pl_med99[old]}" "${pl_med99[new]}") lower); median max $(us "${pl_medmax[old]}") and $(us "${pl_medmax[new]}") ($(xratio "${pl_medmax[old]}" "${pl_medmax[new]}") lower).")
    fi
fi

# The memory table: a line per scenario and server.
mem_rows=()
mem_sums=()
if ((do_memory)); then
    for sc in pipe half; do
        if [[ $sc == pipe ]]; then
            what="$mem_pipe_conns RESP, $(fmt_int "$mem_pipe_bytes") bytes pipelined each, never read"
        else
            what="$mem_half_conns half-sent 1 MiB frames (~490 KB each)"
        fi
        for srv in "${mem_servers[@]}"; do
            key=$sc:$srv
            [[ -n ${mem[peak:$key]-} ]] || continue
            case $srv in
            new) who="idmintd, this tree" ;;
            old) who="idmintd, --old (commit $old_rev)" ;;
            redis) who="redis-server (\`INCR x\`)" ;;
            esac
            [[ $sc == half && $srv == redis ]] && who="redis-server"
            if [[ $sc == pipe ]]; then
                got="sent $(fmt_mib $((${mem[sent:$key]:-0} / 1024))), read nothing"
            else
                got="${mem[matched:$key]:-0} answered -ERR, ${mem[closed:$key]:-0} closed by the server"
            fi
            mem_rows+=("| $what | $who | $(fmt_mib "${mem[idle:$key]}") | $(fmt_mib "${mem[peak:$key]}") | $(fmt_mib "${mem[after:$key]}") | $got |")
        done
        if [[ -n $old && -n ${mem[peak:$sc:new]-} && -n ${mem[peak:$sc:old]-} ]]; then
            mem_sums+=("- $what: peak $(fmt_mib "${mem[peak:$sc:old]}") with --old, $(fmt_mib "${mem[peak:$sc:new]}") with this tree ($(xratio "${mem[peak:$sc:old]}" "${mem[peak:$sc:new]}") lower).")
        fi
    done
fi

# The flood table: per kind and tag, medians over the rounds.
fl_values() { # FIELD TAG KIND -> the rounds' values
    local r
    for ((r = 1; r <= fl_rounds; r++)); do
        [[ -n ${fl[$1:$2:$3:$r]-} ]] && echo "${fl[$1:$2:$3:$r]}"
    done
}
fl_rows=()
fl_sums=()
if ((do_flood)); then
    for ((ki = 0; ki < ${#fl_kinds[@]}; ki++)); do
        name=${fl_kinds[$ki]%%|*}
        declare -A fl_med=()
        for tag in "${hz_tags[@]}"; do
            if [[ $tag == old ]]; then who="--old (commit $old_rev)"; else who="this tree"; fi
            cells=()
            for fld in hp50 hp99 hmax rp50 rp99 rmax late; do
                read -r mn md <<<"$(fl_values "$fld" "$tag" "$ki" | minmed)"
                fl_med[$fld:$tag]=$md
                case $fld in
                hp99 | hmax | rp99 | rmax) cells+=("$(us "$mn") / $(us "$md")") ;;
                *) cells+=("$(us "$md")") ;;
                esac
            done
            read -r _ pk <<<"$(fl_values peak "$tag" "$ki" | minmed)"
            fl_rows+=("| $name | $who | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${cells[3]} | ${cells[4]} | ${cells[5]} | ${cells[6]} | $(fmt_mib "${pk%.*}") | ${fl_ran[$tag:$ki]:-0} |")
        done
        if [[ -n $old && -n ${fl_med[hp99:new]-} && -n ${fl_med[hp99:old]-} ]]; then
            fl_sums+=("- $name: /healthz median p99 $(us "${fl_med[hp99:old]}") with --old, $(us "${fl_med[hp99:new]}") with this tree ($(xratio "${fl_med[hp99:old]}" "${fl_med[hp99:new]}") lower), max $(us "${fl_med[hmax:old]}") and $(us "${fl_med[hmax:new]}") ($(xratio "${fl_med[hmax:old]}" "${fl_med[hmax:new]}")); \`NEXT snowflake\` p99 $(us "${fl_med[rp99:old]}") and $(us "${fl_med[rp99:new]}") ($(xratio "${fl_med[rp99:old]}" "${fl_med[rp99:new]}")), max $(us "${fl_med[rmax:old]}") and $(us "${fl_med[rmax:new]}") ($(xratio "${fl_med[rmax:old]}" "${fl_med[rmax:new]}")).")
        fi
        unset fl_med
    done
fi

# The TLS table: the main table's lines, for the TLS runs.
tls_rows=()
if ((do_tls)) && [[ -z $tls_note ]]; then
    main_rows=("${rows[@]}")
    rows=()
    http_row "HTTPS \`GET /v1/ids/snowflake\`" tls_sf tls_nginx1 "nginx, 1 worker, TLS" ""
    if ((tls_rb)); then
        rb_row "RESP over TLS \`NEXT snowflake\`, no pipelining" tls_idm1 tls_redis1 "" "redis-server \`INCR counter\`, TLS"
        rb_row "RESP over TLS \`NEXT snowflake\`, -P $rb_pipe" tls_idm16 tls_redis16 "" "redis-server \`INCR counter\`, TLS"
    fi
    tls_rows=("${rows[@]}")
    rows=("${main_rows[@]}")
fi

t_total=$(($(date +%s) - t_start))
report=$out/server-results.md
{
    echo "### Machine"
    echo
    echo "- command: \`bench/server.sh$( ((quick)) && echo ' --quick')$([[ $only != "$all_sections" ]] && echo " --only $only")$([[ -n $old ]] && echo " --old $old")\`"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- CPU: ${cpu:-unknown}, $(nproc) cores (nproc), ${mem_gib} GiB"
    echo "- kernel: $(uname -srm)"
    echo "- idmintd: commit $rev (Release), one event-loop thread${old:+; --old: $old (commit $old_rev)}"
    echo "- $(nginx -v 2>&1 | sed 's/^nginx version: //'); $(redis-server --version | awk '{ print "redis-server " $3 }' | sed 's/v=//'); $(wrk -v 2>&1 | head -n 1 | awk '{ print "wrk " $2 }'); $(redis-benchmark --version 2>&1 | head -n 1)"
    echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg); run took ${t_total} s"
    echo
    if ((do_http || do_resp)); then
        echo "### Results"
        echo
        echo "HTTP: \`wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency\`, $rounds round(s). RESP: \`redis-benchmark -c $rb_conns --csv\`,"
        echo "-n $(fmt_int "$rb_n") without pipelining, -n $(fmt_int "$rb_np") with -P $rb_pipe, $rb_rounds round(s). Runs interleaved; each line"
        echo "shows its best run (req/s) with that run's latencies (p50 / p99). Ratios are idmintd / peer: best run"
        echo "against best run, and each round's idmintd run against the peer's run of that round (min / median"
        echo "over the rounds, and how many); the goal is judged on that median."
        echo
    fi
    if ((failed)); then
        echo "**Something failed to run or a check on idmintd failed (see below and the log): the figures are not a"
        echo "valid measurement.**"
        echo
    fi
    if ((do_http || do_resp)); then
        echo "| test | idmintd req/s | idmintd p50 / p99 | peer | peer req/s | peer p50 / p99 | best / best | rounds: min / median | goal (median) |"
        echo "|---|---:|---:|---|---:|---:|---:|---:|---|"
        printf '%s\n' "${rows[@]}"
        echo
        if [[ -n ${rps[sf100]-} ]]; then
            echo "count=100 mints $(fmt_int "$(awk -v r="${rps[sf100]}" 'BEGIN { print r * 100 }')") snowflakes/s; one node of the default (twitter) layout mints"
            echo "at most 4,096,000/s (4,096 per ms), so that line is bound by the layout, not by HTTP."
        fi
        if ((do_http)); then
            echo "Every run, req/s: idmintd snowflake ${runs[sf]-}; uuidv7 ${runs[uuidv7]-}; count=100 ${runs[sf100]-};"
            echo "nginx 1 worker ${runs[nginx1]-}; 2 workers ${runs[nginx2]-}."
        fi
        if ((do_resp)); then
            echo "RESP: idmintd ${runs[idm1]-} (-P 16: ${runs[idm16]-}); redis-server ${runs[redis1]-} (-P 16: ${runs[redis16]-})."
        fi
        echo
        if ((do_http)); then
            echo "nginx with 2 workers: RSS idle $(fmt_mib "$ngx2_idle"), peak $(fmt_mib "$ngx2_hwm") (master + workers)."
        fi
        echo "After the load: idmintd RSS $(fmt_mib "$idm_rss")${ngx1_rss:+, nginx (1 worker) $(fmt_mib "$ngx1_rss")}${redis_rss:+, redis-server $(fmt_mib "$redis_rss")}."
        echo
    fi
    if ((do_healthz)); then
        echo "### /healthz while snowflake requests wait for the clock"
        echo
        echo "A fresh idmintd per layout (\`--layout L --resp off\`, its own state directory; with --old, both side"
        echo "by side, rounds alternating). \`bench/healthz_probe\` sends \`GET /healthz\` every $hz_interval_ms ms on one keep-alive"
        echo "connection (pipelined: on time whether or not earlier replies came back), and a probe's latency runs from"
        echo "when it was due to its reply. Idle: ${hz_idle_secs} s with no other client. Under load: \`wrk -t1 -c$hz_clients\` requesting"
        echo "\`/v1/ids/snowflake?count=N\` in a loop, the probe starting ${hz_warm} s in and running ${hz_secs} s; $hz_rounds round(s),"
        echo "min / median over them. \"probe late\": how late the probe itself sent (the median over the rounds of each"
        echo "round's worst; this machine's scheduling noise, part of every latency). \"count=N alone\": one such request"
        echo "on the idle server (median of $hz_alone_n; \`curl\`'s total time): the layout alone bounds it (sonyflake: 256 IDs per"
        echo "10 ms, so ~390 ms for 10,000; the 1 s unit: 256 per s, so 1-2 s for 600 by where in its second it starts)."
        echo
        echo "| layout, load | idmintd | idle p99 / max | load p50 (median) | load p99 min / median | load max min / median | probe late | count=N alone | rounds |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
        printf '%s\n' "${hz_rows[@]}"
        echo
        ((${#hz_sums[@]})) && printf '%s\n' "${hz_sums[@]}" && echo
    fi
    if ((do_pipeline)); then
        echo "### /healthz while clients pipeline count=10000"
        echo
        echo "A fresh idmintd per build (both ports, default layout; with --old, both side by side, rounds"
        echo "alternating). Per round: one RESP connection sends \`NEXT snowflake 10000\` back to back and one HTTP"
        echo "connection \`GET /v1/ids/snowflake?count=10000\` (tests/server/attack.c, $(fmt_int "$pl_bytes") bytes of requests each,"
        echo "read by the server as it goes), both reading their replies; \`bench/healthz_probe\` as above, from"
        echo "${hz_warm} s in for ${pl_secs} s; $pl_rounds round(s), min / median. IDs/s: snowflakes minted per second over the round, both"
        echo "clients together (the twitter layout's ceiling: 4,096,000/s)."
        echo
        echo "| load | idmintd | idle p99 / max | load p50 (median) | load p99 min / median | load max min / median | probe late | IDs/s (median) | rounds |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
        printf '%s\n' "${pl_rows[@]}"
        echo
        ((${#pl_sums[@]})) && printf '%s\n' "${pl_sums[@]}" && echo
    fi
    if ((do_memory)); then
        echo "### Memory under clients that do not read"
        echo
        echo "Each line on a fresh server with its default options. Pipelining: each RESP connection sends"
        echo "\`NEXT typeid 10000 PREFIX\` (a 63-character prefix; redis-server: \`INCR x\`) over and over, reads nothing,"
        echo "and has a small TCP window (\`--small-window\`: a 4 KiB receive buffer and 536-byte segments), so that"
        echo "the server's kernel buffers only kilobytes of its replies instead of megabytes per connection."
        echo "Half-sent frames: \`*20\`, \`NEXT\` and 19 arguments of 50,000 bytes, of which ~490 KB are sent; each"
        echo "connection reads once it has sent that. The clients hold until the server's work for them stops"
        echo "moving (IDs minted; redis: the counter) for a second, at most ${mem_hold_max} s, then close. RSS idle: after one"
        echo "ordinary request; peak: VmHWM; after: VmRSS ${mem_after_secs} s after the clients closed."
        echo
        echo "| clients | server | RSS idle | peak RSS (VmHWM) | RSS ${mem_after_secs} s after they left | the clients |"
        echo "|---|---|---:|---:|---:|---|"
        printf '%s\n' "${mem_rows[@]}"
        echo
        ((${#mem_sums[@]})) && printf '%s\n' "${mem_sums[@]}" && echo
    fi
    if ((do_flood)); then
        echo "### /healthz and a well-behaved client while 500 connections flood and never read"
        echo
        echo "A fresh idmintd per round (both ports, default options; with --old, both builds alternating)."
        echo "\`bench/healthz_probe\` sends \`GET /healthz\` every $fl_interval_ms ms on one keep-alive connection, and a"
        echo "second one \`NEXT snowflake\` on the RESP port every $fl_interval_ms ms (a client asking for one ID at a time),"
        echo "each on time whether or not its earlier replies came back; latency runs from when a request was due to"
        echo "its reply. ${fl_lead_ms} ms after they start, $fl_conns connections (tests/server/attack.c \`--small-window\`: a 4 KiB"
        echo "receive buffer, 536-byte segments) each send $(fmt_int "$fl_bytes") bytes of one request over and over, once, and"
        echo "never read; the probes run ${fl_secs} s in all. Pinning: $fl_pinning."
        echo "$fl_rounds round(s) per line; p99 and max as min / median over the rounds, the rest medians. \"late\": how late"
        echo "the probes themselves sent (this machine's scheduling noise, part of every latency). Goal: p99 under"
        echo "20 ms and max under 50 ms for both."
        echo
        echo "| flood (each connection, never read) | idmintd | /healthz p50 | /healthz p99 | /healthz max | NEXT snowflake p50 | p99 | max | late | peak RSS | rounds |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        printf '%s\n' "${fl_rows[@]}"
        echo
        ((${#fl_sums[@]})) && printf '%s\n' "${fl_sums[@]}" && echo
    fi
    if ((do_tls)); then
        echo "### TLS"
        echo
        if [[ -n $tls_note ]]; then
            echo "$tls_note."
        else
            echo "idmintd with \`--tls-cert/--tls-key\` (both ports over TLS) against nginx with \`listen ... ssl\` (1 worker,"
            echo "the same one-line body), one self-signed P-256 certificate: \`wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency https://...\`,"
            echo "$rounds round(s) interleaved$( ((tls_rb)) && echo "; \`redis-benchmark -c $rb_conns --tls --insecure\`, -n $(fmt_int "$tls_rb_n") / -n $(fmt_int "$tls_rb_np") with -P $rb_pipe,")"
            ((tls_rb == 1)) && echo "against idmintd and a redis-server with \`--tls-port\`."
            echo
            echo "| test | idmintd req/s | idmintd p50 / p99 | peer | peer req/s | peer p50 / p99 | best / best | rounds: min / median | goal (median) |"
            echo "|---|---:|---:|---|---:|---:|---:|---:|---|"
            printf '%s\n' "${tls_rows[@]}"
            echo
            echo "Every run, req/s: idmintd ${runs[tls_sf]-}; nginx ${runs[tls_nginx1]-}."
            ((tls_rb)) && echo "RESP: idmintd ${runs[tls_idm1]-} (-P $rb_pipe: ${runs[tls_idm16]-}); redis-server ${runs[tls_redis1]-} (-P $rb_pipe: ${runs[tls_redis16]-})."
        fi
        echo
    fi
    echo "### Checks on idmintd"
    echo
    printf '%s\n' "${checks[@]}"
} >"$report"
echo
cat "$report"
log "report written to $report (raw output: $work/)"
exit $failed
