#!/usr/bin/env bash
# Installs what the benchmark's peers need (see bench/peers/README.md), from
# Debian's packages and the npm registry only; run it or source it.
# Idempotent: quiet, and touching no network, when everything is present.
#
#   bash bench/deps.sh        (as root, or with sudo available)

idm_bench_deps() {
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || return 1

    local -a pkgs=(
        # C: libuuid, OpenSSL (the CSPRNG floor), a compiler.
        gcc libc6-dev uuid-dev libssl-dev
        # Go: Debian's toolchain and the peers' source packages (GOPATH mode).
        golang-go
        golang-github-google-uuid-dev golang-github-gofrs-uuid-dev
        golang-github-oklog-ulid-dev golang-github-segmentio-ksuid-dev
        golang-github-rs-xid-dev
        # Rust: uuid with its v4/v7/fast-rng dependencies, as crate sources
        # in /usr/share/cargo/registry.
        librust-uuid-dev librust-rand-dev librust-getrandom-dev
        librust-atomic-dev
    )
    # Use the machine's cargo (rustup) when there is one; else Debian's.
    if ! command -v cargo >/dev/null 2>&1 && [[ ! -x $HOME/.cargo/bin/cargo ]]; then
        pkgs+=(cargo)
    fi
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        pkgs+=(nodejs npm)
    fi

    local -a missing=()
    local p
    for p in "${pkgs[@]}"; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]})); then
        local sudo=
        if ((EUID != 0)); then
            sudo=sudo
        fi
        echo "bench/deps.sh: installing ${missing[*]}" >&2
        $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || return 1
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends "${missing[@]}" >&2 || return 1
    fi

    # Node peers: exact versions from package-lock.json. Skip when the
    # installed tree already matches the lock file.
    local nd=$root/bench/peers/node
    if [[ ! -f $nd/node_modules/.package-lock.json ]] ||
        ! cmp -s <(idm_bench_lock_versions "$nd/package-lock.json") \
            <(idm_bench_lock_versions "$nd/node_modules/.package-lock.json"); then
        echo "bench/deps.sh: npm ci in bench/peers/node" >&2
        (cd "$nd" && npm ci --no-audit --no-fund --loglevel=error >&2) || return 1
    fi
}

# The "node_modules/NAME": version pairs of an npm lock file, sorted.
idm_bench_lock_versions() {
    node -e '
        const l = require(process.argv[1]);
        const out = [];
        for (const [k, v] of Object.entries(l.packages || {})) {
            if (k !== "") out.push(k + " " + v.version);
        }
        console.log(out.sort().join("\n"));
    ' "$1"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    idm_bench_deps
    exit $?
else
    idm_bench_deps
fi
