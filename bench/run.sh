#!/usr/bin/env bash
# The benchmark in one command (bench/README.md):
#
#   bench/run.sh [--quick] [--no-peers]
#
# 1. installs the peers' packages (bench/deps.sh: Debian's and npm's only);
# 2. builds idmint in Release (-O2) into build-bench/;
# 3. runs build-bench/bench/idmint_bench, bench/peers/run_peers.sh and the
#    CLI path of idmint (`idmint gen FORMAT -n 10000000 > /dev/null`, timed
#    by the same helper as the peers' programs), all in this one run;
# 4. prints one table and the goals of issue 3 evaluated from it (PASS or
#    MISS with the figures), and writes them to build-bench/results.md.
#
# Every run also says what ran: build-bench/results.txt gets one STATUS
# line for idmint and for each peer (floor, libuuid, go, rust, node),
#   STATUS<TAB>name<TAB>ok|failed|skipped<TAB>toolchain, or why not
# and the report lists them under "What ran", so a peer that did not build
# or run is named with its reason instead of leaving rows out silently
# (scripts/test.sh counts one test per line).
#
# --quick is the CI smoke test: tiny counts, every line of the table, well
# under 90 s. --no-peers skips the peers (for a quick look at idmint
# alone). IDM_BENCH_BUILD moves the build directory (default build-bench/),
# and the peers build into its peers/ folder unless PEER_BUILD says otherwise.
#
# The numbers are a report, not assertions: exit 0 even when a goal is
# missed. Non-zero only when something failed to build or run (idmint or a
# peer), or when the snowflake check (no millisecond over 4,096 IDs)
# failed; the table is still printed with what was measured.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${IDM_BENCH_BUILD:-$root/build-bench}
export PEER_BUILD=${PEER_BUILD:-$out/peers}
quick=0
peers=1
usage() {
    echo "usage: bench/run.sh [--quick] [--no-peers]" >&2
    exit 2
}
while (($#)); do
    case $1 in
    --quick) quick=1 ;;
    --no-peers) peers=0 ;;
    *) usage ;;
    esac
    shift
done

log() {
    printf 'bench/run.sh: %s\n' "$*" >&2
}

mkdir -p "$out" || exit 1
raw=$out/results.txt
machine=$out/machine.md
: >"$raw"
failed=0
note() {
    log "FAILED: $*"
    printf 'NOTE %s\n' "$*" >>"$raw"
    failed=1
}
# What went wrong with idmint's own runs (the first failure), for its
# STATUS line.
idm_why=
idm_note() {
    note "$@"
    [[ -n $idm_why ]] || idm_why=$*
}
status_line() { # NAME ok|failed|skipped DETAIL
    printf 'STATUS\t%s\t%s\t%s\n' "$1" "$2" "${3//$'\t'/ }" >>"$raw"
}
peer_names=(floor libuuid go rust node) # run_peers.sh's STATUS lines
t_start=$(date +%s)

# --- 1. dependencies ----------------------------------------------------------

# Also brings node, which prints the report.
# shellcheck source=deps.sh
source "$root/bench/deps.sh" || note "bench/deps.sh failed"
command -v node >/dev/null 2>&1 || {
    log "node is missing: cannot print the report"
    exit 1
}

# --- the machine ----------------------------------------------------------------

first_line() {
    "$@" 2>/dev/null | head -n 1
}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem_gib=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
{
    echo "- command: \`bench/run.sh$( ((quick)) && echo ' --quick')\`"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- CPU: ${cpu:-unknown}, $(nproc) cores (nproc), ${mem_gib} GiB"
    echo "- kernel: $(uname -srm)"
    rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [[ -n $(git -C "$root" status --porcelain -- src include cli common 2>/dev/null) ]]; then
        rev="$rev + uncommitted changes in src/, include/, cli/ or common/"
    fi
    echo "- idmint: commit $rev"
    echo "- compiler: $(first_line gcc --version) (idmint: Release, -O2)"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$machine"

# --- 2. build ---------------------------------------------------------------------

log "building idmint (Release, -O2) in $out"
if ! cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE='-O2 -DNDEBUG' \
    -DIDM_TESTS=OFF -DIDM_BENCH=ON >&2 ||
    ! cmake --build "$out" -j "$(nproc)" --target idmint idmint_bench >&2; then
    log "FAILED: the idmint build"
    status_line idmint failed "the idmint build failed (no report)"
    exit 1
fi

# --- 3. runs ----------------------------------------------------------------------

log "idmint_bench$( ((quick)) && echo ' --quick')"
qarg=()
((quick)) && qarg=(--quick)
"$out/bench/idmint_bench" "${qarg[@]}" >>"$raw"
rc=$?
((rc == 0)) || idm_note "idmint_bench exited $rc (a failed run or a failed snowflake CHECK)"

if ((peers)); then
    log "bench/peers/run_peers.sh$( ((quick)) && echo ' --quick')"
    # stdout (RESULT lines) to the results, stderr shown and kept: the CLI
    # peers' peak RSS is only said there.
    PEER_NO_DEPS=1 bash "$root/bench/peers/run_peers.sh" "${qarg[@]}" 2>&1 >>"$raw" |
        tee "$out/peers.log" >&2
    rc=${PIPESTATUS[0]}
    ((rc == 0)) || note "bench/peers/run_peers.sh exited $rc (see $out/peers.log)"
    # A peer that run_peers.sh did not get to report on is missing too.
    for p in "${peer_names[@]}"; do
        if ! grep -q "^STATUS"$'\t'"$p"$'\t' "$raw"; then
            status_line "$p" failed "bench/peers/run_peers.sh exited $rc before reporting on it"
        fi
    done
    sed -nE 's/^cli: ([^ ]+) ([^ ]+): .* peak RSS ([0-9]+) KiB$/MEM \1 cli_peak_rss:\2 \3/p' \
        "$out/peers.log" | awk '{ print $1, $2, $3, $4 * 1024 }' >>"$raw"
else
    for p in "${peer_names[@]}"; do
        status_line "$p" skipped "--no-peers"
    done
fi

# The CLI path, timed like the peers' programs (bench/peers/cli_peers.sh).
# shellcheck source=peers/cli_peers.sh
source "$root/bench/peers/cli_peers.sh"
if ((quick)); then
    cli_n=20000
    # shellcheck disable=SC2034 # read by peer_cli_time
    PEER_CLI_RUNS=1
else
    cli_n=10000000
fi
idmint_cli=$out/idmint
for f in uuidv7 uuidv4 ulid ksuid snowflake typeid token; do
    case $f in
    snowflake) extra=(--node 1) ;;
    typeid) extra=(--prefix user) ;;
    *) extra=() ;;
    esac
    cmd=("$idmint_cli" gen "$f" "${extra[@]}" -n '{N}')
    if ! peer_cli_check "$f" "${cmd[@]}"; then
        idm_note "idmint gen $f: wrong output"
        continue
    fi
    if peer_cli_time idmint "$f" "$cli_n" "${cmd[@]}" >>"$raw"; then
        printf 'MEM idmint cli_peak_rss:%s %s\n' "$f" "$((PEER_CLI_MAXRSS_KIB * 1024))" >>"$raw"
    else
        idm_note "idmint gen $f -n $cli_n failed"
    fi
done
if [[ -n $idm_why ]]; then
    status_line idmint failed "$idm_why"
else
    status_line idmint ok "$(first_line gcc --version), Release -O2"
fi

# --- 4. report --------------------------------------------------------------------

echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg); run took $(($(date +%s) - t_start)) s" \
    >>"$machine"
node "$root/bench/report.mjs" "$raw" "$machine" "$out/results.md" || {
    log "FAILED: bench/report.mjs"
    exit 1
}
log "table written to $out/results.md (raw lines: $out/results.txt)"
exit $failed
