#!/usr/bin/env bash
# Builds and runs every peer of idmint's benchmark (bench/peers/README.md).
#
#   bash bench/peers/run_peers.sh [--quick] [--only c|floor|go|rust|node|cli]
#
# stdout: only RESULT lines,
#   RESULT<TAB>impl<TAB>format<TAB>mode<TAB>threads<TAB>ns_per_id
# stderr: progress. Builds go to build-bench/peers/ under the repository root
# (PEER_BUILD overrides it). Missing packages are installed first by
# bench/deps.sh unless PEER_NO_DEPS=1.
#
# --quick is CI's smoke test: every RESULT line, tiny counts, under a minute.
# Each figure is otherwise the median of 5 runs of ~250 ms after a warm-up.
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

t_start=$(date +%s)
status=0
fail() {
    peer_log "run_peers: FAILED: $*"
    status=1
}

if [[ ${PEER_NO_DEPS:-0} != 1 ]]; then
    bash "$PEER_ROOT/bench/deps.sh" >&2 || {
        peer_log "run_peers: bench/deps.sh failed"
        exit 1
    }
fi
mkdir -p "$PEER_BUILD" || exit 1

# --- builds -----------------------------------------------------------------

cflags=(-std=c11 -O2 -pthread -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wformat=2 -Wvla)

build_c() {
    local c=$here/c
    peer_log "run_peers: building C peers"
    ${CC:-cc} "${cflags[@]}" -o "$PEER_BUILD/libuuid_peer" "$c/libuuid_peer.c" "$c/harness.c" \
        -luuid >&2 &&
        ${CC:-cc} "${cflags[@]}" -o "$PEER_BUILD/floor" "$c/floor.c" "$c/harness.c" -lcrypto >&2 &&
        peer_cli_timer >/dev/null
}

# GOPATH mode against Debian's /usr/share/gocode: no modules, no proxy.
build_go() {
    peer_log "run_peers: building Go peers (GOPATH mode, offline)"
    mkdir -p "$PEER_BUILD/go-cache" "$PEER_BUILD/go-path" &&
        (cd "$here/go" &&
            GO111MODULE=off GOFLAGS='' GOPROXY=off GOTOOLCHAIN=local \
                GOPATH="$PEER_BUILD/go-path:/usr/share/gocode" GOCACHE="$PEER_BUILD/go-cache" \
                go build -trimpath -o "$PEER_BUILD/idmint-peer-go" peers.go) >&2
}

cargo_bin() {
    if command -v cargo >/dev/null 2>&1; then
        command -v cargo
    elif [[ -x $HOME/.cargo/bin/cargo ]]; then
        echo "$HOME/.cargo/bin/cargo"
    else
        echo cargo
    fi
}

# Offline against Debian's crate directory (.cargo/config.toml). The source
# is copied into the build tree so that Cargo.lock stays out of the repo;
# two target directories because fast-rng changes the uuid crate itself.
build_rust() {
    local src=$PEER_BUILD/rust-src cargo
    cargo=$(cargo_bin)
    peer_log "run_peers: building Rust peers (offline, /usr/share/cargo/registry)"
    mkdir -p "$src" && cp -rp "$here/rust/." "$src/" || return 1
    local feat
    for feat in os fast; do
        local -a fl=()
        [[ $feat == fast ]] && fl=(--features fast-rng)
        (cd "$src" && RUSTFLAGS="--cfg uuid_unstable" CARGO_NET_OFFLINE=true \
            "$cargo" build --quiet --release --offline "${fl[@]}" \
            --target-dir "$PEER_BUILD/rust-$feat") >&2 || return 1
    done
}

check_node() {
    [[ -f $here/node/node_modules/uuid/package.json ]] || {
        peer_log "run_peers: bench/peers/node/node_modules missing (run bench/deps.sh)"
        return 1
    }
}

if want c || want floor || want cli; then build_c || fail "C build"; fi
if want go || want cli; then build_go || fail "Go build"; fi
if want rust || want cli; then build_rust || fail "Rust build"; fi
if want node || want cli; then check_node || fail "Node modules"; fi

# --- runs -------------------------------------------------------------------

run_bench() {
    local name=$1
    shift
    peer_log "run_peers: $name"
    "$@" || fail "$name"
}

b=$PEER_BUILD
if want floor; then
    run_bench floor "$b/floor" bench --run-ms "${bench_args[0]}" --runs "${bench_args[1]}"
fi
if want c; then
    run_bench libuuid "$b/libuuid_peer" bench --run-ms "${bench_args[0]}" --runs "${bench_args[1]}"
fi
if want go; then
    run_bench go "$b/idmint-peer-go" bench -run-ms "${bench_args[0]}" -runs "${bench_args[1]}"
fi
if want rust; then
    run_bench rust "$b/rust-os/release/idmint-peer-rust" bench \
        --run-ms "${bench_args[0]}" --runs "${bench_args[1]}"
    run_bench rust+fast-rng "$b/rust-fast/release/idmint-peer-rust" bench \
        --run-ms "${bench_args[0]}" --runs "${bench_args[1]}"
fi
if want node; then
    run_bench node node "$here/node/peers.mjs" bench \
        --run-ms "${bench_args[0]}" --runs "${bench_args[1]}"
fi
if want cli; then
    peer_log "run_peers: CLI peers"
    peer_cli_peers || fail "CLI peers"
fi

peer_log "run_peers: done in $(($(date +%s) - t_start)) s$( ((status)) && echo ', with failures')"
exit $status
