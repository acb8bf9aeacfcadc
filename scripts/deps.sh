# shellcheck shell=bash
# scripts/deps.sh - installs Debian packages that are missing; sourced by
# scripts/test.sh and scripts/demo.sh (not run on its own).
#
# idm_apt_install PKG...  installs those of PKG that dpkg does not report
# as installed. `apt-get update` runs only when something is missing, so a
# machine that has everything stays fast and needs no network. Runs as
# root, or through sudo when not root.

idm_apt_missing() {
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
        if [ "$status" != "installed" ]; then
            printf '%s\n' "$pkg"
        fi
    done
}

idm_apt_install() {
    local -a missing sudo=()
    mapfile -t missing < <(idm_apt_missing "$@")
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "deps: all present ($*)"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "deps: missing ${missing[*]} and not root (no sudo to install them)" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    echo "deps: installing ${missing[*]}"
    # env carries DEBIAN_FRONTEND through sudo, which resets the environment.
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get -o DPkg::Lock::Timeout=600 update -q || return 1
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
        "${missing[@]}" || return 1
}

# The packages the build needs (gcc, cmake, OpenSSL's libcrypto, libuv for
# idmintd, and the coordinators' client libraries: libcurl and jansson for
# etcd, libzookeeper-mt for ZooKeeper, sqlite3 and libpq for the segment
# stores; coord/CMakeLists.txt).
# shellcheck disable=SC2034 # used by the scripts that source this file
IDM_BUILD_PACKAGES=(build-essential cmake pkg-config libssl-dev libuv1-dev
    libcurl4-openssl-dev libjansson-dev libzookeeper-mt-dev libsqlite3-dev libpq-dev)
