#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through start() and traps
# idmintd under load, side by side with nginx and redis-server (bench/SERVER.md):
#
#   bench/server.sh [--quick]
#
# 1. installs what is missing of wrk, nginx-light, redis-server, redis-tools
#    and curl (Debian's packages; apt-get update only when something is);
# 2. builds idmintd in Release into build-srvbench/;
# 3. starts idmintd (--state-dir in the build dir, --log-level warn, default
#    node), nginx twice (1 and 2 worker processes, a generated nginx.conf
#    whose only location returns a one-line static body) and redis-server
#    (--save '' --appendonly no), each on a free loopback port, in the
#    foreground of a background job, and stops each by its PID;
# 4. HTTP: wrk -t1 -c64 --latency against idmintd's /v1/ids/snowflake,
#    /v1/ids/uuidv7, /v1/ids/snowflake?count=100 and both nginx instances,
#    interleaved, 3 rounds of 5 s; RESP: redis-benchmark -c 50
#    `NEXT snowflake` against idmintd and `INCR counter` against
#    redis-server, without pipelining (-n 1,000,000) and with -P 16
#    (-n 4,000,000), interleaved, 2 rounds; each line's best run counts
#    (the machine is shared: other work only slows a run down), and every
#    run is listed; memory from /proc/PID/status;
# 5. checks that idmintd survived every run, answered no error (wrk's
#    "Non-2xx or 3xx responses", socket errors, /metrics error classes) and
#    that its /metrics counters match what the clients counted;
# 6. prints the machine and ONE table with the ratios, and writes them to
#    build-srvbench/server-results.md (raw tool output: build-srvbench/srvbench/).
#
# --quick: 1 round, of 2 s per HTTP line, -n 100,000 / 400,000 for RESP.
# IDM_SRVBENCH_BUILD moves the build directory, IDM_SRVBENCH_PORT the first
# port tried (default 47180). A report, not a test: exit 0 when goals are
# missed; non-zero only when something failed to build or run, or a check on
# idmintd failed (crash, hang, error responses, counters off).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${IDM_SRVBENCH_BUILD:-$root/build-srvbench}
quick=0
usage() {
    echo "usage: bench/server.sh [--quick]" >&2
    exit 2
}
while (($#)); do
    case $1 in
    --quick) quick=1 ;;
    *) usage ;;
    esac
    shift
done

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
else
    wrk_secs=5 rounds=3 rb_rounds=2 rb_n=1000000 rb_np=4000000
fi
rb_pipe=16
rb_timeout=120 # s; a hung server would keep redis-benchmark waiting forever

# --- 1. dependencies ----------------------------------------------------------

# command -> Debian package
deps=(wrk:wrk nginx:nginx-light redis-server:redis-server redis-benchmark:redis-tools
    redis-cli:redis-tools curl:curl)
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
next_port=${IDM_SRVBENCH_PORT:-47180}
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

metric() { # NAME-WITH-LABELS: one value from idmintd's /metrics
    curl -s --max-time 5 "http://127.0.0.1:$idm_http/metrics" |
        awk -v k="$1" 'index($0, k " ") == 1 { print $2; found = 1 } END { if (!found) print 0 }'
}
metric_errors() { # ROUTE: responses not 2xx on that route (all classes but 2xx)
    curl -s --max-time 5 "http://127.0.0.1:$idm_http/metrics" |
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
        if (v < 1) printf "%.0f µs", v * 1000; else if (v < 100) printf "%.2f ms", v; else printf "%.0f ms", v }'
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
start_idmintd() {
    free_port
    idm_http=$port
    free_port
    idm_resp=$port
    "$idmintd" --http "127.0.0.1:$idm_http" --resp "127.0.0.1:$idm_resp" \
        --state-dir "$work/idmintd-state" --log-level warn >"$work/idmintd.log" 2>&1 &
    idm_pid=$!
    pids+=("$idm_pid")
    wait_ready "$idm_pid" idmintd curl -sf "http://127.0.0.1:$idm_http/healthz"
}

# nginx: temp paths inside the prefix, so nothing is written outside it.
nginx_conf() { # PREFIX PORT WORKERS
    local prefix=$1 t m temps=
    for t in client_body proxy fastcgi uwsgi scgi; do
        case $t in client_body) m=http_client_body ;; *) m=http_$t ;; esac
        if ! nginx -V 2>&1 | grep -q -- "--without-${m}_module"; then
            temps+="    ${t}_temp_path $prefix/tmp/$t;"$'\n'
        fi
    done
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
        listen 127.0.0.1:$2;
        location / {
            return 200 "1234567890123456789\n";
        }
    }
}
EOF
}
start_nginx() { # NAME WORKERS -> sets started_pid, started_port
    local prefix=$work/$1
    free_port
    started_port=$port
    mkdir -p "$prefix/tmp" || return 1
    nginx_conf "$prefix" "$started_port" "$2" >"$prefix/nginx.conf"
    nginx -p "$prefix" -e "$prefix/error.log" -c "$prefix/nginx.conf" -g 'daemon off;' \
        >"$work/$1.log" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    wait_ready "$started_pid" "$1" curl -sf "http://127.0.0.1:$started_port/"
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
start start_idmintd || exit 1
start start_nginx nginx1 1 || exit 1
ngx1_pid=$started_pid ngx1_port=$started_port
start start_nginx nginx2 2 || exit 1
ngx2_pid=$started_pid ngx2_port=$started_port
start start_redis || exit 1

sleep 0.5
idm_idle=$(status_kib "$idm_pid" VmRSS)
ngx1_idle=$(tree_kib "$ngx1_pid" VmRSS)
ngx2_idle=$(tree_kib "$ngx2_pid" VmRSS)
redis_idle=$(status_kib "$redis_pid" VmRSS)
log "ports: idmintd http $idm_http resp $idm_resp, nginx $ngx1_port (1 worker) $ngx2_port (2 workers), redis $redis_port"

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
done

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
done

# --- 4c. memory, then stop ----------------------------------------------------

if idm_up "the RESP runs"; then
    exhaustion=$(metric idmint_sequence_exhaustion_waits_total)
    rewinds=$(metric idmint_clock_rewinds_total)
    checks+=("- info: snowflake sequence-exhaustion waits $(fmt_int "$exhaustion"), clock rewinds $(fmt_int "$rewinds") (/metrics)")
fi

idm_hwm=$(status_kib "$idm_pid" VmHWM) idm_rss=$(status_kib "$idm_pid" VmRSS)
ngx1_hwm=$(tree_kib "$ngx1_pid" VmHWM) ngx1_rss=$(tree_kib "$ngx1_pid" VmRSS)
ngx2_hwm=$(tree_kib "$ngx2_pid" VmHWM)
redis_hwm=$(status_kib "$redis_pid" VmHWM) redis_rss=$(status_kib "$redis_pid" VmRSS)

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
for p in "$ngx1_pid" "$ngx2_pid" "$redis_pid"; do
    kill -TERM "$p" 2>/dev/null
    wait "$p" 2>/dev/null
done
pids=()
if [[ -s $work/idmintd.log ]]; then
    checks+=("- idmintd's log (warn and above): $(wc -l <"$work/idmintd.log") lines, first: \`$(head -n 1 "$work/idmintd.log")\`")
fi

# --- 5. report ----------------------------------------------------------------

lat() { # P50 P99
    echo "$(fmt_lat_ms "$1") / $(fmt_lat_ms "$2")"
}
rows=()
row() { # test, idmintd, idmintd p50/p99, peer, peer req/s, peer p50/p99, ratio, goal
    local c line="|"
    for c in "$@"; do
        c=${c#"${c%%[! ]*}"} # trim
        c=${c%"${c##*[! ]}"}
        line+=" $c |"
    done
    rows+=("$line")
}
http_row() { # LABEL KEY PEERKEY PEERNAME GOAL
    local r v extra=
    r=$(ratio "${rps[$2]-}" "${rps[$3]-}")
    if [[ -n $5 ]]; then v="≥ $5: $(verdict "$r" "$5")"; else v=info; fi
    [[ $2 == sf100 && -n ${rps[$2]-} ]] && extra=" ($(fmt_int "$(awk -v r="${rps[$2]}" 'BEGIN { print r * 100 }')") IDs/s)"
    row " $1 " " ${rps[$2]:+$(fmt_int "${rps[$2]}")}${extra} " " $(lat "${p50[$2]-}" "${p99[$2]-}") " " $4 " \
        " ${rps[$3]:+$(fmt_int "${rps[$3]}")} " " $(lat "${p50[$3]-}" "${p99[$3]-}") " " $r " " $v "
}
rb_row() { # LABEL KEY PEERKEY GOAL
    local r
    r=$(ratio "${rb_rps[$2]-}" "${rb_rps[$3]-}")
    row " $1 " " ${rb_rps[$2]:+$(fmt_int "${rb_rps[$2]}")} " " $(lat "${rb_p50[$2]-}" "${rb_p99[$2]-}") " \
        " redis-server \`INCR counter\` " " ${rb_rps[$3]:+$(fmt_int "${rb_rps[$3]}")} " \
        " $(lat "${rb_p50[$3]-}" "${rb_p99[$3]-}") " " $r " " ≥ $4: $(verdict "$r" "$4") "
}
mem_row() { # LABEL IDM PEERNAME PEER
    row " $1 " " $(fmt_mib "$2") " " " " $3 " " $(fmt_mib "$4") " " " " $(ratio "$2" "$4") " " info (lower is smaller) "
}
http_row "HTTP \`GET /v1/ids/snowflake\`" sf nginx1 "nginx, 1 worker" 0.8
http_row "HTTP \`GET /v1/ids/snowflake\`" sf nginx2 "nginx, 2 workers" ""
http_row "HTTP \`GET /v1/ids/uuidv7\`" uuidv7 nginx1 "nginx, 1 worker" ""
http_row "HTTP \`GET /v1/ids/snowflake?count=100\`" sf100 nginx1 "nginx, 1 worker" ""
rb_row "RESP \`NEXT snowflake\`, no pipelining" idm1 redis1 1.0
rb_row "RESP \`NEXT snowflake\`, -P $rb_pipe" idm16 redis16 1.0
mem_row "RSS idle (after start-up)" "$idm_idle" "nginx, 1 worker (master + worker)" "$ngx1_idle"
mem_row "RSS peak under load (VmHWM)" "$idm_hwm" "nginx, 1 worker (master + worker)" "$ngx1_hwm"
mem_row "RSS idle (after start-up)" "$idm_idle" "redis-server" "$redis_idle"
mem_row "RSS peak under load (VmHWM)" "$idm_hwm" "redis-server" "$redis_hwm"

t_total=$(($(date +%s) - t_start))
report=$out/server-results.md
{
    echo "### Machine"
    echo
    echo "- command: \`bench/server.sh$( ((quick)) && echo ' --quick')\`"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- CPU: ${cpu:-unknown}, $(nproc) cores (nproc), ${mem_gib} GiB"
    echo "- kernel: $(uname -srm)"
    echo "- idmintd: commit $rev (Release), one event-loop thread"
    echo "- $(nginx -v 2>&1 | sed 's/^nginx version: //'); $(redis-server --version | awk '{ print "redis-server " $3 }' | sed 's/v=//'); $(wrk -v 2>&1 | head -n 1 | awk '{ print "wrk " $2 }'); $(redis-benchmark --version 2>&1 | head -n 1)"
    echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg); run took ${t_total} s"
    echo
    echo "### Results"
    echo
    echo "HTTP: \`wrk -t$wrk_threads -c$wrk_conns -d${wrk_secs}s --latency\`, $rounds round(s). RESP: \`redis-benchmark -c $rb_conns --csv\`,"
    echo "-n $(fmt_int "$rb_n") without pipelining, -n $(fmt_int "$rb_np") with -P $rb_pipe, $rb_rounds round(s). Runs interleaved; each line"
    echo "shows its best run (req/s) with that run's latencies (p50 / p99). Ratio: idmintd / peer."
    echo
    if ((failed)); then
        echo "**Something failed to run or a check on idmintd failed (see below and the log): the figures are not a"
        echo "valid measurement.**"
        echo
    fi
    echo "| test | idmintd req/s | idmintd p50 / p99 | peer | peer req/s | peer p50 / p99 | idmintd/peer | goal |"
    echo "|---|---:|---:|---|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    if [[ -n ${rps[sf100]-} ]]; then
        echo "count=100 mints $(fmt_int "$(awk -v r="${rps[sf100]}" 'BEGIN { print r * 100 }')") snowflakes/s; one node of the default (twitter) layout mints"
        echo "at most 4,096,000/s (4,096 per ms), so that line is bound by the layout, not by HTTP."
    fi
    echo "Every run, req/s: idmintd snowflake ${runs[sf]-}; uuidv7 ${runs[uuidv7]-}; count=100 ${runs[sf100]-};"
    echo "nginx 1 worker ${runs[nginx1]-}; 2 workers ${runs[nginx2]-}."
    echo "RESP: idmintd ${runs[idm1]-} (-P 16: ${runs[idm16]-}); redis-server ${runs[redis1]-} (-P 16: ${runs[redis16]-})."
    echo
    echo "nginx with 2 workers: RSS idle $(fmt_mib "$ngx2_idle"), peak $(fmt_mib "$ngx2_hwm") (master + workers)."
    echo "After the load: idmintd RSS $(fmt_mib "$idm_rss"), nginx (1 worker) $(fmt_mib "$ngx1_rss"), redis-server $(fmt_mib "$redis_rss")."
    echo
    echo "### Checks on idmintd"
    echo
    printf '%s\n' "${checks[@]}"
} >"$report"
echo
cat "$report"
log "report written to $report (raw output: $work/)"
exit $failed
