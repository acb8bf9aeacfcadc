#!/usr/bin/env bash
# tests/packages/test_install.sh - the Debian packages as a user meets them
# (issue 26): built from this tree, installed into a fresh Debian 12,
# idmintd run as its unit says, upgraded, removed and purged.
#
#   bash tests/packages/test_install.sh [--keep]
#
#   1. scripts/build-debs.sh, both builds at once: --lintian, the tree's
#      version (a lintian error fails), and --version TREE+upgrade1 for the
#      upgrade (waited for only before the upgrade);
#   2. a fresh root: debootstrap --variant=minbase bookworm, with the
#      built packages' dependencies (and sqlite3 when the SQLite module is
#      built) pre-installed, cached as a tarball (IDM_PKGTEST_CACHE, default
#      ~/.cache/idmint/pkgtest/, outside the tree so that a new clone finds
#      it; one per dependency list; made again when a week old) so that a
#      second run only unpacks it; policy-rc.d forbids maintainer scripts to start
#      services. `apt-get install ./*.deb` of the tree's version there;
#   3. files where Debian policy puts them, the conffile, the user idmintd
#      (nologin shell), each optional package that was built
#      (python3-idmint: import and mint; libsqlite3-mod-idmint: .load in
#      sqlite3 and select; postgresql-15-idmint, mariadb-plugin-idmint:
#      their files and libraries), `idmintd --check-config`;
#   4. idmintd started as systemd would start the installed unit: its
#      ExecStartPre, ExecStart, User, Group, StateDirectory,
#      RuntimeDirectory and UMask read from the unit file, the directories
#      made and owned as systemd makes them, the commands run in the root
#      (chroot) as the unit's user, NOTIFY_SOCKET a datagram socket of the
#      test's; the operator's edit of the conffile (random loopback ports);
#      READY=1, IDs over HTTP (curl) and the Redis protocol (redis-cli);
#   5. the upgrade: snowflakes minted (their max kept), SIGTERM (exit 0,
#      STOPPING=1), `apt-get install ./new/*.deb` (--force-confold), the
#      version, the mark and the operator's conffile kept; /run/idmint
#      emptied as a reboot would; idmintd started again with its clock set
#      back (libfaketime) to before those snowflakes: every new one must be
#      above their max (only the mark in the state directory can make it
#      so);
#   6. apt-get remove: the state and the user stay; dpkg --purge: both
#      gone, and the conffile;
#   7. every process it started killed by its pid, every mount unmounted,
#      the root and the builds removed (--keep leaves them, for a look);
#      the cache stays.
#
# Needs root, debootstrap, debhelper, dh-python, lintian (the
# test command installs them: scripts/deps.sh), curl, redis-cli, python3,
# libfaketime, and the first time the Debian mirror (IDM_PKGTEST_MIRROR,
# default http://deb.debian.org/debian; the root's sources are its
# bookworm and bookworm-updates, and bookworm-security from
# IDM_PKGTEST_SECURITY, default http://deb.debian.org/debian-security, as
# Debian's installer sets them). Without them it fails. Each step prints
# its time; docs/packaging-test.md has the figures.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/ports.sh
. "$ROOT/tests/ports.sh"
export LC_ALL=C

keep=0
for arg in "$@"; do
    case $arg in
    --keep) keep=1 ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "test_install.sh: unknown argument '$arg' (--keep, --help)" >&2
        exit 2
        ;;
    esac
done

WORK=${IDM_PKGTEST_WORK:-$ROOT/build/packages-test}
CACHE=${IDM_PKGTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/idmint/pkgtest}
MIRROR=${IDM_PKGTEST_MIRROR:-http://deb.debian.org/debian}
SECURITY=${IDM_PKGTEST_SECURITY:-http://deb.debian.org/debian-security}
SUITE=bookworm
R=$WORK/root
IN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
T_START=$SECONDS

# ---- output: ok / not ok, as TAP ------------------------------------------

PASSED=0
FAILED=0
N=0
ok() {
    N=$((N + 1))
    PASSED=$((PASSED + 1))
    echo "ok $N - $1"
}
# not_ok WHAT [DETAIL]
not_ok() {
    N=$((N + 1))
    FAILED=$((FAILED + 1))
    echo "not ok $N - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 30 | sed 's/^/#   /'
    return 0
}
# check WHAT COMMAND ARGS...: ok when COMMAND succeeds (its output shown on
# failure).
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$what"
    else
        not_ok "$what" "exit $?: $*"$'\n'"$out"
        return 1
    fi
}
# expect WHAT ACTUAL OP EXPECTED, OP one of = != -gt -ge -lt -le =~
expect() {
    local what=$1 a=$2 op=$3 e=$4 good=0
    case $op in
    '=') [ "$a" = "$e" ] && good=1 ;;
    '!=') [ "$a" != "$e" ] && good=1 ;;
    '=~') [[ $a =~ $e ]] && good=1 ;;
    -gt | -ge | -lt | -le) [[ $a =~ ^-?[0-9]+$ ]] && [[ $e =~ ^-?[0-9]+$ ]] && test "$a" "$op" "$e" && good=1 ;;
    *) echo "expect: unknown operator $op" >&2 ;;
    esac
    if [ $good = 1 ]; then
        ok "$what"
    else
        not_ok "$what" "expected: $op $e"$'\n'"actual:   $a"
        return 1
    fi
}
# timed STEP START: the time a step took, on a line of its own.
timed() {
    printf '# time: %-40s %4d s\n' "$1" $((SECONDS - $2))
}
finish() {
    echo "# time: whole test $((SECONDS - T_START)) s"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ] && exit 0
    exit 1
}
# fatal WHAT DETAIL: a failure the rest cannot go on after.
fatal() {
    not_ok "$1" "${2:-}"
    echo "# stopping here: the steps after this one need it"
    finish
}

# ---- cleanup: processes by pid, mounts, the root ---------------------------

PIDS=()
MOUNTS=()
cleanup() {
    local i
    [ ${#PIDS[@]} -eq 0 ] || kill -KILL "${PIDS[@]}" 2>/dev/null
    [ ${#PIDS[@]} -eq 0 ] || wait "${PIDS[@]}" 2>/dev/null
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" 2>/dev/null
    done
    if [ "$keep" = 1 ]; then
        echo "# kept $WORK (the root, the builds); unmounted" >&2
    elif grep -q " ${R}[/ ]" /proc/mounts; then
        echo "# $R still has mounts: left in place" >&2
    else
        rm -rf --one-file-system "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mnt() { # mnt TYPE|--bind SRC DST
    if [ "$1" = --bind ]; then
        mount --bind "$2" "$3" || return 1
    else
        mount -t "$1" "$2" "$3" || return 1
    fi
    MOUNTS+=("$3")
}

# inroot COMMAND ARGS...: COMMAND in the root as root, clean environment.
inroot() {
    chroot "$R" /usr/bin/env -i PATH=$IN_PATH HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# wait_for SECONDS COMMAND ARGS...: polls COMMAND every 50 ms, for at most
# SECONDS (only a bound: what is checked is the command).
wait_for() {
    local limit=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -ge "$limit" ] && return 1
        sleep 0.05
    done
}

# ---- what the test needs ---------------------------------------------------

[ "$(id -u)" -eq 0 ] || fatal "runs as root (debootstrap, chroot, mounts)" \
    "run it as root: sudo bash $0"
missing=
for tool in debootstrap dpkg-buildpackage dh lintian curl redis-cli python3 chroot; do
    command -v "$tool" >/dev/null 2>&1 || missing+=" $tool"
done
# shellcheck source=tests/faketime.sh
. "$ROOT/tests/faketime.sh"
[ -f "$FAKETIME_LIB" ] || missing+=" libfaketime"
[ -z "$missing" ] || fatal "the tools the test runs are installed" \
    "missing:$missing (scripts/test.sh installs them: scripts/deps.sh's IDM_TEST_PACKAGES)"
ok "root, and the tools installed (debootstrap, debhelper, lintian, curl, redis-cli, libfaketime)"

if grep -q " ${R}[/ ]" /proc/mounts; then
    fatal "no mounts left below $R by an earlier run" "$(grep " ${R}[/ ]" /proc/mounts)"
fi
rm -rf --one-file-system "$WORK"
mkdir -p "$WORK" "$CACHE" || fatal "make $WORK and $CACHE"

# ---- 1. the packages ---------------------------------------------------------

TREE_VERSION=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
NEW_VERSION=$TREE_VERSION+upgrade1
# Both builds at once (each is mostly one core's work); the upgrade's is
# waited for only before the upgrade.
T_BUILDS=$SECONDS
bash "$ROOT/scripts/build-debs.sh" --lintian "$WORK/old" >"$WORK/build-old.out" 2>&1 &
OLD_BUILD=$!
bash "$ROOT/scripts/build-debs.sh" --version "$NEW_VERSION" "$WORK/new" >"$WORK/build-new.out" 2>&1 &
NEW_BUILD=$!
PIDS+=("$OLD_BUILD" "$NEW_BUILD")
# debs_of ARRAY DIR VERSION: the packages built into DIR as VERSION, less
# the debug symbols.
debs_of() {
    local -n debs=$1
    local f
    debs=()
    for f in "$2"/*_"$3"_*.deb; do
        case $f in *-dbgsym_*) continue ;; esac
        [ -f "$f" ] && debs+=("$f")
    done
}
wait "$OLD_BUILD"
rc=$?
timed "build $TREE_VERSION (+ lintian; the other build at once)" "$T_BUILDS"
debs_of OLD_DEBS "$WORK/old" "$TREE_VERSION"
[ ${#OLD_DEBS[@]} -gt 0 ] || fatal "scripts/build-debs.sh builds the packages of $TREE_VERSION" \
    "$(tail -n 30 "$WORK/build-old.out")"
ok "scripts/build-debs.sh builds $TREE_VERSION: $(printf '%s ' "${OLD_DEBS[@]##*/}")"
if [ $rc -eq 0 ]; then
    ok "lintian: no errors"
else
    not_ok "lintian: no errors (scripts/build-debs.sh --lintian exit $rc)" \
        "$(grep -E '^(E|W): |build-debs.sh:' "$WORK/build-old.out")"
fi

# pkg_built NAME: the tree's .deb of package NAME, if built.
pkg_built() {
    local f
    for f in "${OLD_DEBS[@]}"; do
        [ "$(dpkg-deb -f "$f" Package)" = "$1" ] && { echo "$f"; return 0; }
    done
    return 1
}
OPTIONAL=()
for p in python3-idmint libsqlite3-mod-idmint postgresql-15-idmint mariadb-plugin-idmint; do
    if pkg_built "$p" >/dev/null; then
        OPTIONAL+=("$p")
    else
        echo "# $p: not built by this tree's debian/ (yet): its checks are not run"
    fi
done

# ---- 2. the fresh root -------------------------------------------------------

# The dependencies of what was built (an alternative: its first package),
# less the packages built here; with sqlite3 for the SQLite module's check.
for f in "${OLD_DEBS[@]}"; do dpkg-deb -f "$f" Package; done >"$WORK/built-names"
DEPS=$(for f in "${OLD_DEBS[@]}"; do
    dpkg-deb -f "$f" Pre-Depends Depends | sed 's/^[A-Za-z-]*: //' | tr ',' '\n' |
        sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g'
done | grep -vxF -e '' -f "$WORK/built-names" | sort -u)
case " ${OPTIONAL[*]} " in *" libsqlite3-mod-idmint "*) DEPS+=$'\nsqlite3' ;; esac
DEPS=$(printf '%s\n' $DEPS | sort -u | paste -sd ' ')
KEY=$(printf '%s %s %s %s %s\n' "$SUITE" minbase "$MIRROR" "$SECURITY" "$DEPS" | sha256sum | cut -c 1-16)
BASE_TAR=$CACHE/$SUITE-minbase.tar
DEPS_TAR=$CACHE/$SUITE-deps-$KEY.tar
# A root a week old is made again: it follows the suite's point releases
# and security updates, as a machine's weekly upgrade would.
find "$CACHE" -maxdepth 1 -name "$SUITE-*.tar" -mtime +6 -delete

# prepare_root: the host's resolv.conf, no service started by a
# maintainer script (invoke-rc.d asks policy-rc.d: 101 is "no"; the
# databases' packages would start theirs), /proc and /dev mounted.
prepare_root() {
    cp /etc/resolv.conf "$R/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
    chmod 755 "$R/usr/sbin/policy-rc.d"
    mnt proc proc "$R/proc" && mnt --bind /dev "$R/dev" || fatal "mount /proc and /dev in the root"
}
mkdir -p "$R"
t=$SECONDS
if [ -f "$DEPS_TAR" ]; then
    tar -C "$R" -xf "$DEPS_TAR" || fatal "unpack the cached root $DEPS_TAR"
    timed "unpack the cached root" "$t"
else
    if [ -f "$BASE_TAR" ]; then
        tar -C "$R" -xf "$BASE_TAR" || fatal "unpack the cached root $BASE_TAR"
        timed "unpack the cached minbase root" "$t"
    else
        if ! debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
            fatal "debootstrap --variant=minbase $SUITE from $MIRROR" \
                "$(tail -n 15 "$WORK/debootstrap.log")"$'\n'"(is the mirror reachable? the whole log: $WORK/debootstrap.log, kept with --keep)"
        fi
        timed "debootstrap --variant=minbase $SUITE" "$t"
        t=$SECONDS
        tar -C "$R" -cf "$BASE_TAR.tmp" . && mv "$BASE_TAR.tmp" "$BASE_TAR"
        timed "cache it: $BASE_TAR" "$t"
    fi
    t=$SECONDS
    prepare_root
    # The suites a Debian 12 installed by its installer uses: the release,
    # its updates and its security updates (a package built here against
    # an update, as postgresql-15's, may need it).
    printf 'deb %s %s main\n' "$MIRROR" "$SUITE" "$MIRROR" "$SUITE-updates" "$SECURITY" "$SUITE-security" \
        >"$R/etc/apt/sources.list"
    if ! inroot apt-get -q update >"$WORK/deps.log" 2>&1 ||
        ! inroot apt-get -q install -y --no-install-recommends $DEPS >>"$WORK/deps.log" 2>&1; then
        fatal "the packages' dependencies install in the root from $MIRROR" "$(tail -n 15 "$WORK/deps.log")"
    fi
    inroot apt-get clean
    timed "install the dependencies in the root ($DEPS)" "$t"
    t=$SECONDS
    rm -f "$CACHE/$SUITE"-deps-*.tar
    # Not what is mounted in it (/proc, /dev).
    tar -C "$R" --one-file-system -cf "$DEPS_TAR.tmp" . && mv "$DEPS_TAR.tmp" "$DEPS_TAR"
    timed "cache it: $DEPS_TAR" "$t"
fi
ok "a fresh $SUITE minbase root with the dependencies ($(du -sh --one-file-system "$R" | cut -f1))"

[ ${#MOUNTS[@]} -gt 0 ] || prepare_root

# install_debs LOG OPTIONS... -- DEB...: apt-get install of the .debs,
# copied into the root; apt-get update and a second try if the cached
# lists no longer match the mirror.
install_debs() {
    local log=$1 opts=() f inside=()
    shift
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    mkdir -p "$R/tmp/debs"
    rm -f "$R"/tmp/debs/*.deb
    for f in "$@"; do
        cp "$f" "$R/tmp/debs/" && inside+=("/tmp/debs/${f##*/}")
    done
    inroot apt-get -q install -y --no-install-recommends "${opts[@]}" "${inside[@]}" >"$log" 2>&1 && return 0
    inroot apt-get -q update >>"$log" 2>&1 &&
        inroot apt-get -q install -y --no-install-recommends "${opts[@]}" "${inside[@]}" >>"$log" 2>&1
}
t=$SECONDS
install_debs "$WORK/install-old.log" -- "${OLD_DEBS[@]}" ||
    fatal "apt-get install ./*.deb ($TREE_VERSION) in the root" "$(tail -n 20 "$WORK/install-old.log")"
timed "apt-get install ./*.deb" "$t"
ok "apt-get install -y ./*.deb of $TREE_VERSION in the fresh root"

# installed PACKAGE: its version, if installed.
installed() {
    inroot dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null | sed -n 's/^installed //p'
}
for p in libidmint0.3 idmint idmintd libidmint-dev "${OPTIONAL[@]}"; do
    expect "$p is installed, version $TREE_VERSION" "$(installed "$p")" = "$TREE_VERSION"
done

# ---- 3. where the files are --------------------------------------------------

in_root_file() { [ -f "$R$1" ] || [ -L "$R$1" ]; }
check "/usr/bin/idmint" in_root_file /usr/bin/idmint
check "/usr/sbin/idmintd (a daemon for the administrator: sbin)" in_root_file /usr/sbin/idmintd
check "idmint(1) under /usr/share/man/man1" in_root_file /usr/share/man/man1/idmint.1.gz
check "idmintd(8) under /usr/share/man/man8" in_root_file /usr/share/man/man8/idmintd.8.gz
check "/etc/idmint/idmintd.conf" in_root_file /etc/idmint/idmintd.conf
expect "... a conffile of idmintd (dpkg-query \${Conffiles})" \
    "$(inroot dpkg-query -W -f='${Conffiles}' idmintd)" =~ '^ */etc/idmint/idmintd\.conf [0-9a-f]{32}'
UNIT=
for d in /lib/systemd/system /usr/lib/systemd/system; do
    [ -f "$R$d/idmintd.service" ] && UNIT=$d/idmintd.service
done
expect "the unit idmintd.service in /lib/systemd/system or /usr/lib/systemd/system" "$UNIT" != ''
libs=$(cd "$R" && ls usr/lib/x86_64-linux-gnu/libidmint.so.0.3* 2>/dev/null | paste -sd ' ')
expect "libidmint.so.0.3* in /usr/lib/x86_64-linux-gnu" "$libs" =~ 'libidmint\.so\.0\.3'
expect "... libidmint0.3 owns them (dpkg -S)" \
    "$(inroot dpkg -S /usr/lib/x86_64-linux-gnu/libidmint.so.0.3 2>&1)" =~ '^libidmint0\.3(:amd64)?: '
check "... the headers and pkg-config file of libidmint-dev" \
    inroot sh -c 'test -f /usr/include/idmint/idmint.h || ls /usr/include/idmint*.h; test -f /usr/lib/x86_64-linux-gnu/pkgconfig/idmint.pc'
check "idmint runs (idmint gen uuidv7)" inroot idmint gen uuidv7
pw=$(inroot getent passwd idmintd)
expect "the user idmintd exists (getent passwd in the root)" "$pw" =~ '^idmintd:'
expect "... a system user (uid below 1000)" "$(cut -d: -f3 <<<"$pw")" -lt 1000
expect "... with a nologin shell" "$(cut -d: -f7 <<<"$pw")" =~ '/(nologin|false)$'
check "idmintd --check-config --config /etc/idmint/idmintd.conf passes" \
    inroot idmintd --check-config --config /etc/idmint/idmintd.conf

# as_user USER COMMAND ARGS...: in the root as USER (its groups), clean
# environment; run it in a subshell (it execs, so that $! of a background
# one is the server's pid).
as_user() {
    local user=$1
    shift
    exec chroot "$R" /usr/bin/setpriv --reuid="$user" --regid="$user" --init-groups -- \
        /usr/bin/env -i PATH=$IN_PATH LANG=C.UTF-8 HOME=/tmp "$@"
}
# stop_db PID: SIGTERM (both servers' clean shutdown), at most 30 s.
stop_db() {
    kill -TERM "$1" 2>/dev/null
    wait_for 30 eval '! kill -0 '"$1"' 2>/dev/null'
    wait "$1" 2>/dev/null
}
# pg_in_root: a PostgreSQL 15 of the root's own (initdb in /tmp, a Unix
# socket only), CREATE EXTENSION pg_idmint and an ID from it, as a user of
# the package does.
pg_in_root() {
    local bin=/usr/lib/postgresql/15/bin d=/tmp/idmint-pg pid out
    inroot install -d -o postgres -g postgres -m 0700 "$d"
    if ! (as_user postgres "$bin/initdb" -D "$d" -A trust -U postgres) >"$WORK/pg.log" 2>&1; then
        not_ok "... initdb of the root's PostgreSQL 15" "$(tail -n 15 "$WORK/pg.log")"
        return 1
    fi
    (as_user postgres "$bin/postgres" -D "$d" -k /tmp -c listen_addresses=) >>"$WORK/pg.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_for 30 eval '(as_user postgres "$bin/pg_isready" -q -h /tmp)'
    out=$( (as_user postgres "$bin/psql" -h /tmp -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 \
        -c 'CREATE EXTENSION pg_idmint' \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_idmint'" \
        -c 'SELECT uuid_extract_version(uuidv7())') 2>&1)
    expect "... CREATE EXTENSION pg_idmint in the root's PostgreSQL 15: version 0.3, uuidv7() a version 7" \
        "$out" = $'0.3\n7' || sed 's/^/#   /' "$WORK/pg.log" | tail -n 10
    stop_db "$pid"
}
# mariadb_in_root: a MariaDB of the root's own (mariadb-install-db in
# /tmp, a Unix socket only), the package's install.sql, then its functions.
mariadb_in_root() {
    local d=/tmp/idmint-mariadb sock=/tmp/idmint-mariadb.sock pid out
    local sql=/usr/share/mariadb-plugin-idmint
    inroot install -d -o mysql -g mysql -m 0700 "$d"
    if ! (as_user mysql mariadb-install-db --no-defaults --datadir="$d" --skip-test-db \
        --auth-root-authentication-method=normal) >"$WORK/mariadb.log" 2>&1; then
        not_ok "... mariadb-install-db in the root" "$(tail -n 15 "$WORK/mariadb.log")"
        return 1
    fi
    (as_user mysql mariadbd --no-defaults --datadir="$d" --socket="$sock" --skip-networking \
        --pid-file=/tmp/idmint-mariadb.pid) >>"$WORK/mariadb.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_for 60 test -S "$R$sock"
    out=$( (as_user mysql mariadb --no-defaults -uroot -S "$sock" -N -B) <"$R$sql/install.sql" 2>&1 &&
        (as_user mysql mariadb --no-defaults -uroot -S "$sock" -N -B -e \
            "SELECT uuid_v7() REGEXP '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\$', LENGTH(ulid())") 2>&1)
    expect "... its install.sql in the root's MariaDB, then uuid_v7() (a version 7) and ulid() (26 characters)" \
        "$out" = $'1\t26' || sed 's/^/#   /' "$WORK/mariadb.log" | tail -n 10
    out=$( (as_user mysql mariadb --no-defaults -uroot -S "$sock" -N -B) <"$R$sql/uninstall.sql" 2>&1 &&
        (as_user mysql mariadb --no-defaults -uroot -S "$sock" -N -B -e \
            "SELECT COUNT(*) FROM mysql.func WHERE dl = 'idmint_udf.so'") 2>&1)
    expect "... and its uninstall.sql drops them all" "$out" = 0
    stop_db "$pid"
}
for p in "${OPTIONAL[@]}"; do
    files=$(inroot dpkg -L "$p")
    case $p in
    python3-idmint)
        expect "python3-idmint: the module under /usr/lib/python3/dist-packages" \
            "$(grep -c '^/usr/lib/python3/dist-packages/idmint' <<<"$files")" -gt 0
        check "... python3 -c 'import idmint' mints a UUIDv7 and a snowflake" \
            inroot python3 -c 'import idmint
u = idmint.uuid7(); assert u.version == 7, u
with idmint.Snowflake(7, "twitter") as sf:
    a, b = sf.next(), sf.next()
assert 0 < a < b, (a, b)
print(u, a, b)'
        ;;
    libsqlite3-mod-idmint)
        so=$(grep -m 1 '/idmint_sqlite\.so$' <<<"$files")
        expect "libsqlite3-mod-idmint: idmint_sqlite.so under /usr/lib/x86_64-linux-gnu" \
            "$so" =~ '^/usr/lib/x86_64-linux-gnu/'
        out=$(inroot sqlite3 :memory: ".load ${so%.so}" 'SELECT uuidv7();' 2>&1)
        expect "... sqlite3 .load it and SELECT uuidv7()" "$out" =~ \
            '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
        ;;
    postgresql-15-idmint)
        expect "postgresql-15-idmint: pg_idmint.so in /usr/lib/postgresql/15/lib" \
            "$(grep -cx '/usr/lib/postgresql/15/lib/pg_idmint\.so' <<<"$files")" = 1
        expect "... pg_idmint.control and its SQL in /usr/share/postgresql/15/extension" \
            "$(grep -cE '^/usr/share/postgresql/15/extension/pg_idmint(\.control|--.*\.sql)$' <<<"$files")" -ge 2
        expect "... its libraries all found (ldd)" \
            "$(inroot ldd /usr/lib/postgresql/15/lib/pg_idmint.so 2>&1 | grep -c 'not found')" = 0
        pg_in_root
        ;;
    mariadb-plugin-idmint)
        so=$(grep -m 1 '/idmint_udf\.so$' <<<"$files")
        expect "mariadb-plugin-idmint: idmint_udf.so in MariaDB's plugin directory /usr/lib/mysql/plugin" \
            "$so" = /usr/lib/mysql/plugin/idmint_udf.so
        expect "... its libraries all found (ldd)" \
            "$(inroot ldd "${so:-/nonexistent}" 2>&1 | grep -c 'not found\|No such')" = 0
        mariadb_in_root
        ;;
    esac
done

# ---- 4. idmintd as its unit runs it ------------------------------------------

[ -n "$UNIT" ] || fatal "the unit file is needed to start idmintd as systemd would"
# unit_get KEY: the values of KEY= in the unit's [Service] section, one a
# line (continuation lines joined).
unit_get() {
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$R$UNIT" |
        awk -v k="$1" '/^\[/ { s = ($0 == "[Service]") } s && index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}
U_USER=$(unit_get User | tail -n 1)
U_GROUP=$(unit_get Group | tail -n 1)
U_STATE=$(unit_get StateDirectory | tail -n 1)
U_STATE_MODE=$(unit_get StateDirectoryMode | tail -n 1)
U_RUN=$(unit_get RuntimeDirectory | tail -n 1)
U_RUN_MODE=$(unit_get RuntimeDirectoryMode | tail -n 1)
U_UMASK=$(unit_get UMask | tail -n 1)
mapfile -t U_PRE < <(unit_get ExecStartPre)
U_START=$(unit_get ExecStart | tail -n 1)
expect "the unit runs idmintd as a user of its own (User=)" "$U_USER" != ''
expect "... has an ExecStart=" "$U_START" != ''
echo "# the unit: User=$U_USER Group=${U_GROUP:-its own} StateDirectory=$U_STATE RuntimeDirectory=$U_RUN UMask=${U_UMASK:-0022}"

# argv CMDLINE: the words of a unit's command line (systemd's quoting is
# the shell's for what a unit file holds here), NUL-terminated, without the
# prefixes (- @ : + !). A $VARIABLE or a %specifier is not expanded here:
# refused.
argv() {
    python3 -c '
import shlex, sys
line = sys.argv[1].lstrip("-@:+!")
if "$" in line or "%" in line:
    sys.exit("variables and specifiers are not expanded by this test: " + line)
sys.stdout.write("".join(w + "\0" for w in shlex.split(line)))' "$1"
}

U_UID=$(cut -d: -f3 <<<"$pw")
U_GID=$(cut -d: -f4 <<<"$pw")
if [ -n "$U_GROUP" ]; then
    U_GID=$(inroot getent group "$U_GROUP" | cut -d: -f3)
fi
# systemd's directories: made if missing, owned by the user, their modes.
unit_dirs() {
    local d
    for d in ${U_STATE:+/var/lib/$U_STATE} ${U_RUN:+/run/$U_RUN}; do
        mkdir -p "$R$d" && chown "$U_UID:$U_GID" "$R$d" || return 1
    done
    [ -z "$U_STATE" ] || chmod "${U_STATE_MODE:-0755}" "$R/var/lib/$U_STATE"
    [ -z "$U_RUN" ] || chmod "${U_RUN_MODE:-0755}" "$R/run/$U_RUN"
}

# The operator's edit: the listeners on random loopback ports.
CONF=$R/etc/idmint/idmintd.conf
cp "$CONF" "$WORK/idmintd.conf.orig"
pick_port HTTP_PORT
pick_port RESP_PORT
while [ "$RESP_PORT" = "$HTTP_PORT" ]; do pick_port RESP_PORT; done
sed -i -e "s|^# *http = .*|http = 127.0.0.1:$HTTP_PORT|" -e "s|^# *resp = .*|resp = 127.0.0.1:$RESP_PORT|" "$CONF"
expect "the operator sets the ports in /etc/idmint/idmintd.conf (http, resp lines)" \
    "$(grep -cE "^(http = 127\.0\.0\.1:$HTTP_PORT|resp = 127\.0\.0\.1:$RESP_PORT)\$" "$CONF")" = 2
cp "$CONF" "$WORK/idmintd.conf.operator"

# A datagram socket for $NOTIFY_SOCKET, in the root (writable by the
# unit's user): each message to OUT, "---" after each.
NOTIFY=/run/idmint-test-notify.sock
listen_notify() {
    rm -f "$R$NOTIFY" "$1"
    python3 - "$R$NOTIFY" "$1" <<'PY' &
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
open(out, "w").close()
while True:
    msg = s.recv(65536).decode()
    with open(out, "a") as f:
        f.write(msg + "\n---\n")
PY
    NOTIFY_PID=$!
    PIDS+=("$NOTIFY_PID")
    wait_for 5 test -e "$1"
}
# as_unit_user COMMAND ARGS...: in the root as the unit's user and group
# (no other groups), with the unit's umask and a clean environment plus
# NOTIFY_SOCKET and $EXTRA_ENV.
EXTRA_ENV=()
as_unit_user() {
    umask "${U_UMASK:-0022}"
    exec chroot "$R" /usr/bin/setpriv --reuid="$U_UID" --regid="$U_GID" --clear-groups -- \
        /usr/bin/env -i PATH=$IN_PATH LANG=C.UTF-8 NOTIFY_SOCKET=$NOTIFY "${EXTRA_ENV[@]}" "$@"
}
# start_unit LABEL: the unit's directories, ExecStartPre (each must exit
# 0), then ExecStart in the background (SRV_PID), READY=1 awaited.
start_unit() {
    local label=$1 pre cmd rc
    unit_dirs || { not_ok "$label: the unit's directories made"; return 1; }
    listen_notify "$WORK/notify.$label"
    for pre in "${U_PRE[@]}"; do
        mapfile -d '' -t cmd < <(argv "$pre") && [ ${#cmd[@]} -gt 0 ] ||
            { not_ok "$label: ExecStartPre=$pre parsed"; return 1; }
        (as_unit_user "${cmd[@]}") >"$WORK/pre.$label.log" 2>&1
        rc=$?
        expect "$label: ExecStartPre=$pre exits 0 as $U_USER" "$rc" = 0 ||
            { sed 's/^/#   /' "$WORK/pre.$label.log"; return 1; }
    done
    mapfile -d '' -t cmd < <(argv "$U_START") && [ ${#cmd[@]} -gt 0 ] ||
        { not_ok "$label: ExecStart=$U_START parsed"; return 1; }
    SRV_LOG=$WORK/idmintd.$label.log
    (as_unit_user "${cmd[@]}") >"$SRV_LOG" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    local t0=$SECONDS
    wait_for 30 grep -qx 'READY=1' "$WORK/notify.$label"
    READY_MS=$(date +%s%3N)
    if grep -qx 'READY=1' "$WORK/notify.$label"; then
        ok "$label: ExecStart=$U_START as $U_USER in the root: READY=1 on \$NOTIFY_SOCKET after $((SECONDS - t0)) s"
    else
        not_ok "$label: ExecStart=$U_START: READY=1 on \$NOTIFY_SOCKET within 30 s" \
            "notify:"$'\n'"$(cat "$WORK/notify.$label")"$'\n'"log:"$'\n'"$(tail -n 20 "$SRV_LOG")"
        return 1
    fi
    expect "$label: the process is the unit's user's" "$(stat -c %u "/proc/$SRV_PID")" = "$U_UID"
}
# stop_unit LABEL: SIGTERM, exit status 0 within 20 s, STOPPING=1.
stop_unit() {
    local label=$1 status n=0
    kill -TERM "$SRV_PID"
    # At most 20 s, as the unit's TimeoutStopSec=, then SIGKILL. (bash
    # reaps its children as they end: kill -0 fails from then on, and
    # wait still gives the status.)
    while kill -0 "$SRV_PID" 2>/dev/null && [ $n -lt 400 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    if kill -0 "$SRV_PID" 2>/dev/null; then
        kill -KILL "$SRV_PID"
        wait "$SRV_PID"
        status="no exit within 20 s"
    else
        wait "$SRV_PID"
        status=$?
    fi
    expect "$label: SIGTERM: idmintd drains and exits 0" "$status" = 0
    expect "$label: ... STOPPING=1 on \$NOTIFY_SOCKET" "$(grep -cx 'STOPPING=1' "$WORK/notify.$label")" = 1
    kill "$NOTIFY_PID" 2>/dev/null
    wait "$NOTIFY_PID" 2>/dev/null
}
curl_ids() { # curl_ids PATH
    curl -fsS -m 10 "http://127.0.0.1:$HTTP_PORT$1"
}
resp() {
    timeout 10 redis-cli -p "$RESP_PORT" "$@"
}

t=$SECONDS
start_unit first || fatal "idmintd starts as its unit says" "$(tail -n 20 "${SRV_LOG:-/dev/null}")"
expect "/var/lib/$U_STATE is the user's, mode ${U_STATE_MODE:-0755}" \
    "$(stat -c '%u %a' "$R/var/lib/$U_STATE")" = "$U_UID $(printf '%o' $((8#${U_STATE_MODE:-0755})))"
expect "HTTP: curl /v1/ids/uuidv7?count=3 gets 3 UUIDv7s" \
    "$(curl_ids '/v1/ids/uuidv7?count=3' | grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')" = 3
expect "Redis protocol: redis-cli PING" "$(resp PING)" = PONG
expect "Redis protocol: redis-cli NEXT snowflake 3 gets 3 snowflakes" \
    "$(resp NEXT snowflake 3 | grep -cE '^[0-9]+$')" = 3

# ---- 5. the upgrade ------------------------------------------------------------

OLD_IDS=$(curl_ids '/v1/ids/snowflake?count=1000'; resp NEXT snowflake 1000)
T_MINTED=$(date +%s%N)
expect "1000 snowflakes over HTTP and 1000 over the Redis protocol" "$(grep -cE '^[0-9]+$' <<<"$OLD_IDS")" = 2000
OLD_MAX=$(grep -E '^[0-9]+$' <<<"$OLD_IDS" | sort -n | tail -n 1)
echo "# the largest snowflake before the upgrade: $OLD_MAX"
stop_unit first
timed "start, serve, stop" "$t"
MARK_BEFORE=$(cat "$R/var/lib/$U_STATE/mark" 2>/dev/null | md5sum)
check "the state directory holds the mark" test -s "$R/var/lib/$U_STATE/mark"

t=$SECONDS
wait "$NEW_BUILD"
rc=$?
echo "# time: build $NEW_VERSION (in the background): $(grep -o 'built in [0-9]* s' "$WORK/build-new.out")"
timed "... the wait for it here" "$t"
debs_of NEW_DEBS "$WORK/new" "$NEW_VERSION"
[ $rc -eq 0 ] && [ ${#NEW_DEBS[@]} -eq ${#OLD_DEBS[@]} ] ||
    fatal "scripts/build-debs.sh --version $NEW_VERSION builds the same packages" "$(tail -n 30 "$WORK/build-new.out")"
ok "scripts/build-debs.sh --version $NEW_VERSION builds the same ${#NEW_DEBS[@]} packages"
t=$SECONDS
install_debs "$WORK/install-new.log" -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -- "${NEW_DEBS[@]}" ||
    not_ok "apt-get install ./new/*.deb (the upgrade to $NEW_VERSION)" "$(tail -n 20 "$WORK/install-new.log")"
timed "apt-get install ./new/*.deb" "$t"
for p in libidmint0.3 idmint idmintd libidmint-dev "${OPTIONAL[@]}"; do
    expect "upgrade: $p is now $NEW_VERSION" "$(installed "$p")" = "$NEW_VERSION"
done
expect "upgrade: the operator's /etc/idmint/idmintd.conf is kept" "$(md5sum <"$CONF")" = "$(md5sum <"$WORK/idmintd.conf.operator")"
expect "upgrade: the mark in /var/lib/$U_STATE is kept" "$(cat "$R/var/lib/$U_STATE/mark" 2>/dev/null | md5sum)" = "$MARK_BEFORE"
expect "upgrade: the user idmintd is kept, same uid" "$(inroot getent passwd idmintd | cut -d: -f3)" = "$U_UID"
expect "upgrade: no service started by a maintainer script (no idmintd running in the root)" \
    "$(for p in /proc/[0-9]*; do [ "$(readlink "$p/root")" = "$R" ] && cat "$p/comm"; done 2>/dev/null | grep -c '^idmintd$')" = 0

# A reboot after the upgrade: /run is a tmpfs (RuntimeDirectoryPreserve=
# keeps /run/idmint across restarts only), and the node registry there
# records each node's last mark too. So, with the clock set back to 3 s
# before the last snowflake minted, only the mark in the state directory
# keeps the new ones above the old.
rm -rf "${R:?}/run/${U_RUN:-idmint}"
back_ns=$(($(date +%s%N) - T_MINTED + 3000000000))
back=$(printf -- '-%d.%03d' $((back_ns / 1000000000)) $((back_ns / 1000000 % 1000)))
mkdir -p "$R/usr/local/lib/faketime"
cp "$FAKETIME_LIB" "$R/usr/local/lib/faketime/"
EXTRA_ENV=("LD_PRELOAD=/usr/local/lib/faketime/${FAKETIME_LIB##*/}" "FAKETIME=$back" FAKETIME_DONT_FAKE_MONOTONIC=1)
echo "# idmintd's clock: FAKETIME=$back (3 s before the last snowflake)"
t=$SECONDS
if start_unit upgraded; then
    # idmintd's own clock: its log's time stamp of "ready", against the
    # time READY=1 arrived.
    ready_at=$(grep -m 1 -o '^[0-9T:.-]*Z idmintd info: idmintd .* ready' "$SRV_LOG" | cut -d' ' -f1)
    lag_ms=$((READY_MS - $(date -d "${ready_at:-now}" +%s%3N)))
    expect "upgraded: idmintd's clock (its log's \"ready\" stamp) lags by about ${back#-} s: libfaketime in effect" \
        "$((lag_ms >= back_ns / 1000000 - 1000 && lag_ms < back_ns / 1000000 + 3000))" = 1
    NEW_IDS=$(curl_ids '/v1/ids/snowflake?count=1000'; resp NEXT snowflake 1000)
    expect "upgraded: 2000 snowflakes minted" "$(grep -cE '^[0-9]+$' <<<"$NEW_IDS")" = 2000
    NEW_MIN=$(grep -E '^[0-9]+$' <<<"$NEW_IDS" | sort -n | head -n 1)
    below=$(grep -E '^[0-9]+$' <<<"$NEW_IDS" | awk -v m="$OLD_MAX" 'length($0) < length(m) || (length($0) == length(m) && $0 <= m)' | wc -l)
    expect "upgraded, clock set back: every new snowflake is above the old max $OLD_MAX (the smallest: $NEW_MIN)" "$below" = 0
    stop_unit upgraded
fi
timed "start with the clock set back, mint, stop" "$t"
EXTRA_ENV=()

# ---- 6. remove, purge ------------------------------------------------------------

t=$SECONDS
check "apt-get remove idmintd" inroot apt-get -q remove -y idmintd
expect "removed: idmintd's status is config-files" \
    "$(inroot dpkg-query -W -f='${db:Status-Status}' idmintd 2>/dev/null)" = config-files
check "removed: /usr/sbin/idmintd is gone" test ! -e "$R/usr/sbin/idmintd"
check "removed: the state /var/lib/$U_STATE stays, with the mark" test -s "$R/var/lib/$U_STATE/mark"
expect "removed: the user idmintd stays" "$(inroot getent passwd idmintd | cut -d: -f1)" = idmintd
check "removed: the conffile stays" test -f "$CONF"
check "dpkg --purge idmintd" inroot dpkg --purge idmintd
expect "purged: idmintd is not installed" "$(inroot dpkg-query -W -f='${db:Status-Status}' idmintd 2>/dev/null)" =~ '^(not-installed)?$'
check "purged: /etc/idmint/idmintd.conf is gone" test ! -e "$CONF"
check "purged: /var/lib/idmintd is gone" test ! -e "$R/var/lib/idmintd"
expect "purged: the user idmintd is gone" "$(inroot getent passwd idmintd)" = ''
expect "purged: the group idmintd is gone" "$(inroot getent group idmintd)" = ''
timed "remove, purge" "$t"

finish
