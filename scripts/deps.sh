# shellcheck shell=bash
# scripts/deps.sh - installs Debian packages that are missing, and the
# lists of them; sourced by scripts/test.sh, demo.sh, check-tools.sh and
# fresh-root.sh (not run on its own).
#
# idm_apt_install PKG...  installs those of PKG that dpkg does not report
# as installed. `apt-get update` runs only when something is missing, so a
# machine that has everything stays fast and needs no network. Runs as
# root, or through sudo when not root.

# idm_script_help FILE prints FILE's header comment (its second line up
# to the line before `set -uo`), without the comment marks: the --help of
# the scripts that source this file.
idm_script_help() {
    sed -n '2,/^set -uo/p' "$1" | sed '$d' | sed 's/^# \{0,1\}//'
}

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

# The packages the tests need besides (scripts/test.sh installs both
# lists; scripts/check-tools.sh checks that every command the tests run
# comes from one of them, from their dependencies or from a minimal Debian
# 12, with scripts/test-tools.txt naming each command's package).
# server.depgraph reads server/'s source with Universal Ctags (universal-ctags).
# The server tests run real clients (curl, redis-cli, redis-benchmark,
# redis-py; for TLS the openssl command makes certificates and tries old
# protocol versions, and Python's ssl module checks close_notify) and step
# idmintd's clock with libfaketime. The coordinator tests (tests/coord) run
# a real etcd and a real ZooKeeper (zookeeperd brings OpenJDK) against the
# backends built with their client libraries (also in IDM_BUILD_PACKAGES),
# and the segment stores against a real PostgreSQL (postgresql) and SQLite
# files (the sqlite3 tool holds a file's lock in test_stores.sh). The
# extension pg_idmint builds against the server's headers and PGXS
# (postgresql-server-dev-15, which pulls clang and LLVM for its bitcode);
# its tests (tests/pg) drive the server with pgbench (in postgresql) and
# step its clock with libfaketime. The databases of `idmint bench btree`
# (dbbench/) are built against libmariadb (libmariadb-dev) as well as
# sqlite3 and libpq, and tested (tests/dbbench) against a real MariaDB
# (mariadb-server; tests/coord/mariadb.sh starts it). The memcached front
# end is tested (tests/server/test_memcache.sh) with libmemcached's memccat
# and memcstat (libmemcached-tools) and Python's pymemcache. Valgrind's
# callgrind counts the parser calls of a waiting request
# (tests/server/test_parse_once.sh). The Python binding builds with Debian's
# python3-dev and setuptools (and wheel) into a venv (python3-venv) and is
# tested with python3-pytest and mypy (tests/bindings/test_python.sh).
# ApacheBench (apache2-utils) checks HTTP/1.0 keep-alive (test_http.sh).
# Prometheus's promtool (in Debian's prometheus package; its server is not
# used) lints idmintd's /metrics (test_promtool.sh).
# A Java client of tinyid's routes (tests/server/TinyIdClient.java) is
# compiled at test time with Debian's JDK (default-jdk-headless: javac).
# jq reads the CLI's and idmintd's JSON (test_hlc.sh, test_inspect.sh);
# socat sends raw RESP frames (test_segments.sh); iproute2's ip sets up a
# network namespace's loopback (test_node_ip.sh); git lists the tree's
# files (check_citations.sh); groff (groff-base) renders the man pages
# (check_man.sh). The package test (tests/packages/test_install.sh) builds
# the .debs with debhelper and dh-python (python3-all-dev), checks them with
# lintian, and installs them into a root made by debootstrap. Node.js and
# npm (the interop, client and binding tests) are IDM_NODE_PACKAGES,
# installed where the machine has no node or npm of its own.
# shellcheck disable=SC2034 # used by the scripts that source this file
IDM_TEST_PACKAGES=(clang libclang-rt-14-dev curl redis-tools python3-redis faketime libfaketime
    universal-ctags libmemcached-tools python3-pymemcache valgrind
    python3-dev python3-venv python3-setuptools python3-wheel python3-pytest mypy apache2-utils prometheus
    openssl etcd-server etcd-client zookeeperd
    postgresql postgresql-server-dev-15 sqlite3 mariadb-server libmariadb-dev
    jq socat iproute2 nftables git groff-base default-jdk-headless systemd
    debootstrap debhelper dh-python python3-all-dev lintian)
# shellcheck disable=SC2034
IDM_NODE_PACKAGES=(nodejs npm)
