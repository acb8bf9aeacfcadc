#!/usr/bin/env bash
# Builds and runs every peer of idmint's benchmark (bench/peers/README.md).
#
#   bash bench/peers/run_peers.sh [--quick] [--only c|floor|go|rust|node|cli]
#
# stdout: RESULT lines, then one STATUS line per peer run (libuuid is the C
# peer; floor is the C floor):
#   RESULT<TAB>impl<TAB>format<TAB>mode<TAB>threads<TAB>ns_per_id
#   STATUS<TAB>floor|libuuid|go|rust|node<TAB>ok|failed<TAB>detail
# where detail is the toolchain used (ok) or why the peer is missing or
# incomplete (failed): its first error line. A peer whose build fails is
# not run. stderr: progress, and each step's output (kept in
# $PEER_BUILD/logs/). Builds go to build-bench/peers/ under the repository
# root (PEER_BUILD overrides it). Missing packages are installed first by
# bench/deps.sh unless PEER_NO_DEPS=1.
#
# Rust builds with `cargo` from PATH (else ~/.cargo/bin/cargo), or
# PEER_CARGO; it compiles with RUSTC, else the rustc beside that cargo, so
# PEER_CARGO=/usr/bin/cargo means Debian's rustc too.
#
# --quick is CI's smoke test: every RESULT line, tiny counts, under a minute.
# Each figure is otherwise the median of 5 runs of ~250 ms after a warm-up.
# Exits non-zero when any peer failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PEER_ROOT=$(cd "$here/../.." && pwd)
PEER_BUILD=${PEER_BUILD:-$PEER_ROOT/build-bench/peers}
export PEER_ROOT PEER_BUILD
# shellcheck source=bench/peers/cli_peers.sh
source "$here/cli_peers.sh"

quick=0
only=
usage() {
    echo "usage: run_peers.sh [--quick] [--only c|floor|go|rust|node|cli]" >&2
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
    -h | --help) usage ;;
    *) usage ;;
    esac
    shift
done
case $only in
'' | c | floor | go | rust | node | cli) ;;
*) usage ;;
esac

if ((quick)); then
    bench_args=(2 1) # run-ms, runs
    PEER_CLI_QUICK=1 # read by peer_cli_auto (cli_peers.sh)
else
    bench_args=("${PEER_RUN_MS:-250}" "${PEER_RUNS:-5}")
fi

want() {
    [[ -z $only || $only == "$1" ]]
}

# The peers this run covers, in report order; --only c means libuuid, and
# --only cli the peers that have CLI programs.
case $only in
'') groups=(floor libuuid go rust node) ;;
c) groups=(libuuid) ;;
cli) groups=(libuuid go rust node) ;;
*) groups=("$only") ;;
esac

t_start=$(date +%s)
status=0
declare -A why=()  # peer -> why it is missing (its first failure); unset = ok
declare -A tool=() # peer -> toolchain used
fail() {
    local peer=$1
    shift
    peer_log "run_peers: FAILED: $peer: $*"
    [[ -n ${why[$peer]:-} ]] || why[$peer]=$*
    status=1
}
ok() {
    [[ -z ${why[$1]:-} ]]
}

if [[ ${PEER_NO_DEPS:-0} != 1 ]]; then
    # On failure, go on: each peer that then lacks something says what.
    bash "$PEER_ROOT/bench/deps.sh" >&2 || {
        peer_log "run_peers: FAILED: bench/deps.sh"
        status=1
    }
fi
logs=$PEER_BUILD/logs
mkdir -p "$PEER_BUILD" "$logs" || exit 1
for g in "${groups[@]}"; do
    : >"$logs/$g.log"
done

# ": " and the first line of LOG that reads like an error (else its last
# line), tabs flattened, at most 200 characters; nothing for an empty LOG.
first_error() {
    local line
    line=$(grep -m 1 -iE 'error|cannot|not found|no such|fatal|panicked|undefined' "$1")
    [[ -n $line ]] || line=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
    line=$(printf '%s' "$line" | tr '\t' ' ' | sed 's/^[[:space:]]*//')
    [[ -z $line ]] || printf ': %.200s' "$line"
}

# step PEER WHAT CMD [ARG...]: runs CMD for PEER unless PEER has already
# failed. CMD's stdout passes through (RESULT lines); its stderr is shown
# and appended to logs/PEER.log. A failure marks PEER as missing: WHAT,
# the exit status and CMD's first error line.
step() {
    local peer=$1 what=$2 rc
    shift 2
    ok "$peer" || return 1
    local log=$logs/$peer.step
    {
        "$@" 2>&1 1>&3 3>&- | tee "$log" >&2
        rc=${PIPESTATUS[0]}
    } 3>&1
    cat "$log" >>"$logs/$peer.log"
    if ((rc != 0)); then
        fail "$peer" "$what failed (exit $rc)$(first_error "$log")"
        return 1
    fi
}

# need PEER TOOL PACKAGES: TOOL must be on PATH (or a path), else PEER is
# missing, naming the Debian packages that bring it.
need() {
    command -v "$2" >/dev/null 2>&1 && return 0
    fail "$1" "$2 not found (Debian: $3)"
    return 1
}

first_line() {
    "$@" 2>/dev/null | head -n 1
}

# --- builds -----------------------------------------------------------------

cflags=(-std=c11 -O2 -pthread -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wformat=2 -Wvla)
cc=${CC:-cc}

# The build and check functions below run through step.
# shellcheck disable=SC2317
build_c() { # OUT SOURCE LIB
    ${cc} "${cflags[@]}" -o "$PEER_BUILD/$1" "$here/c/$2" "$here/c/harness.c" "$3" >&2
}

# GOPATH mode against Debian's /usr/share/gocode: no modules, no proxy.
# shellcheck disable=SC2317
build_go() {
    mkdir -p "$PEER_BUILD/go-cache" "$PEER_BUILD/go-path" &&
        (cd "$here/go" &&
            GO111MODULE=off GOFLAGS='' GOPROXY=off GOTOOLCHAIN=local \
                GOPATH="$PEER_BUILD/go-path:/usr/share/gocode" GOCACHE="$PEER_BUILD/go-cache" \
                go build -trimpath -o "$PEER_BUILD/idmint-peer-go" peers.go) >&2
}

cargo_bin() {
    if [[ -n ${PEER_CARGO:-} ]]; then
        echo "$PEER_CARGO"
    elif command -v cargo >/dev/null 2>&1; then
        command -v cargo
    elif [[ -x $HOME/.cargo/bin/cargo ]]; then
        echo "$HOME/.cargo/bin/cargo"
    else
        echo cargo
    fi
}

# The rustc that goes with CARGO: RUSTC if set, else the one beside it (so
# Debian's /usr/bin/cargo gets Debian's rustc even when rustup's is first
# on PATH), else rustc from PATH.
rustc_bin() {
    local dir
    dir=$(dirname "$(command -v "$1" 2>/dev/null || echo "$1")")
    if [[ -n ${RUSTC:-} ]]; then
        echo "$RUSTC"
    elif [[ -x $dir/rustc ]]; then
        echo "$dir/rustc"
    else
        echo rustc
    fi
}

# Offline against Debian's crate directory (.cargo/config.toml). The source
# is copied afresh into the build tree so that Cargo.lock stays out of the
# repo (and one written by another cargo cannot get in the way); two target
# directories because fast-rng changes the uuid crate itself.
# shellcheck disable=SC2317
build_rust() { # CARGO RUSTC FEATURE
    local src=$PEER_BUILD/rust-src
    local -a fl=()
    [[ $3 == fast ]] && fl=(--features fast-rng)
    rm -rf "$src" && mkdir -p "$src" && cp -rp "$here/rust/." "$src/" || return 1
    (cd "$src" && RUSTC=$2 RUSTFLAGS="--cfg uuid_unstable" CARGO_NET_OFFLINE=true \
        "$1" build --quiet --release --offline "${fl[@]}" \
        --target-dir "$PEER_BUILD/rust-$3") >&2
}

# shellcheck disable=SC2317
check_node() {
    [[ -f $here/node/node_modules/uuid/package.json ]] || {
        echo "bench/peers/node/node_modules is missing (run bench/deps.sh)" >&2
        return 1
    }
}

# The versions of the npm packages installed for the Node peers.
# shellcheck disable=SC2016 # JavaScript template strings, not shell
node_versions() {
    (cd "$here/node" && node -e '
        const { readFileSync } = require("node:fs");
        const json = (f) => JSON.parse(readFileSync(f, "utf8"));
        const deps = Object.keys(json("package.json").dependencies).sort();
        console.log(deps.map((d) => `${d} ${json(`node_modules/${d}/package.json`).version}`).join(", "));
    ') 2>/dev/null
}

for g in "${groups[@]}"; do
    case $g in
    floor | libuuid)
        need "$g" "$cc" "gcc libc6-dev" && tool[$g]=$(first_line "$cc" --version)
        peer_log "run_peers: building the C $g program"
        if [[ $g == floor ]]; then
            step floor "build" build_c floor floor.c -lcrypto
        else
            step libuuid "build" build_c libuuid_peer libuuid_peer.c -luuid
        fi
        ;;
    go)
        need go go golang-go && tool[go]=$(first_line go version)
        peer_log "run_peers: building Go peers (GOPATH mode, offline)"
        step go "go build" build_go
        ;;
    rust)
        cargo=$(cargo_bin)
        rustc=$(rustc_bin "$cargo")
        need rust "$cargo" "cargo rustc" && need rust "$rustc" rustc &&
            tool[rust]="$(first_line "$rustc" --version), $(first_line "$cargo" --version)"
        peer_log "run_peers: building Rust peers with ${tool[rust]:-$cargo} (offline, /usr/share/cargo/registry)"
        step rust "cargo build" build_rust "$cargo" "$rustc" os &&
            step rust "cargo build --features fast-rng" build_rust "$cargo" "$rustc" fast
        ;;
    node)
        need node node "nodejs npm" && tool[node]="node $(first_line node --version); $(node_versions)"
        step node "npm packages" check_node
        ;;
    esac
done
if want cli; then
    # The timer of every CLI program (idmint's too, in bench/run.sh).
    peer_cli_timer >/dev/null || {
        for g in "${groups[@]}"; do
            [[ $g == floor ]] || fail "$g" "bench/peers/c/timecmd.c did not build"
        done
    }
fi

# --- runs -------------------------------------------------------------------

b=$PEER_BUILD
run=(--run-ms "${bench_args[0]}" --runs "${bench_args[1]}")
for g in "${groups[@]}"; do
    [[ $only == cli ]] && break
    ok "$g" || continue
    peer_log "run_peers: $g"
    case $g in
    floor) step floor "bench run" "$b/floor" bench "${run[@]}" ;;
    libuuid) step libuuid "bench run" "$b/libuuid_peer" bench "${run[@]}" ;;
    go) step go "bench run" "$b/idmint-peer-go" bench -run-ms "${bench_args[0]}" -runs "${bench_args[1]}" ;;
    rust)
        step rust "bench run" "$b/rust-os/release/idmint-peer-rust" bench "${run[@]}" &&
            step rust "bench run (fast-rng)" "$b/rust-fast/release/idmint-peer-rust" bench "${run[@]}"
        ;;
    node) step node "bench run" node "$here/node/peers.mjs" bench "${run[@]}" ;;
    esac
done
if want cli; then
    for g in "${groups[@]}"; do
        if [[ $g == floor ]] || ! ok "$g"; then
            continue
        fi
        peer_log "run_peers: CLI programs of $g"
        step "$g" "CLI program" peer_cli_peers "$g"
    done
fi

# --- one STATUS line per peer -----------------------------------------------

for g in "${groups[@]}"; do
    if ok "$g"; then
        printf 'STATUS\t%s\tok\t%s\n' "$g" "${tool[$g]:-}"
    else
        printf 'STATUS\t%s\tfailed\t%s%s\n' "$g" "${why[$g]}" "${tool[$g]:+ [${tool[$g]}]}"
    fi
done
peer_log "run_peers: done in $(($(date +%s) - t_start)) s$( ((status)) && echo ', with failures')"
exit $status
