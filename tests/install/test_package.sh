#!/usr/bin/env bash
# test_package.sh - an installed idmint can be built against, both ways a
# user would, and the install tree can be moved.
#
#   1. `cmake --install BUILD --prefix T/usr` into a fresh temporary T;
#   2. pkg-config (PKG_CONFIG_PATH=T/usr/LIBDIR/pkgconfig): prefix, libdir
#      and includedir resolve into T/usr, not the configure-time prefix;
#      tests/install/hello.c builds with `pkg-config --cflags --libs idmint`
#      (C11, -Wall -Wextra -Wpedantic -Werror) and prints a UUIDv7;
#   3. CMake (CMAKE_PREFIX_PATH=T/usr): tests/install/consumer/ finds the
#      package with find_package(idmint CONFIG), from T/usr, and builds hello
#      against idmint::idmint (which must link libidmint.so) and
#      idmint::idmint_static (which must not); both print a UUIDv7;
#   4. the tree is moved to T/moved/elsewhere: steps 2 and 3 again there,
#      with the old place gone.
#
# No network. The programs are built with the build's compiler and its
# sanitizers (IDM_SANITIZE), so the test runs in the ASan build as well.
#
# Usage: bash tests/install/test_package.sh BUILD_DIR C_COMPILER LIBDIR [SANITIZE]
#   LIBDIR is the build's CMAKE_INSTALL_LIBDIR (lib, lib/x86_64-linux-gnu),
#   SANITIZE its IDM_SANITIZE (e.g. address,undefined; may be empty).
set -u

if [ $# -lt 3 ]; then
    echo "usage: $0 BUILD_DIR C_COMPILER LIBDIR [SANITIZE]" >&2
    exit 2
fi
BUILD=$1
CC=$2
LIBDIR=$3
SANITIZE=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)

SAN_FLAGS=()
if [ -n "$SANITIZE" ]; then
    SAN_FLAGS=("-fsanitize=$SANITIZE" -fno-omit-frame-pointer)
fi
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then
    GENERATOR=(-G Ninja)
fi

passed=0
failed=0
pass() {
    passed=$((passed + 1))
    echo "ok: $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-install.XXXXXX")
cleanup() {
    rm -rf "$T"
}
trap cleanup EXIT

# real DIR prints DIR with symlinks and .. resolved ("" if it is missing).
real() {
    (cd "$1" 2>/dev/null && pwd -P) || true
}

# uuidv7 TEXT succeeds when TEXT's first line is a canonical UUIDv7.
uuidv7() {
    printf '%s\n' "$1" | head -n 1 |
        grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
}

# run_hello LABEL PROGRAM [ENV...] runs PROGRAM and checks it printed a UUIDv7.
run_hello() {
    local label=$1 prog=$2 out rc=0
    shift 2
    out=$(env "$@" "$prog" 2>&1) || rc=$?
    if [ "$rc" -eq 0 ] && uuidv7 "$out"; then
        pass "$label: prints a UUIDv7 ($(printf '%s' "$out" | head -n 1))"
    else
        fail "$label: exit status $rc, output: $out"
    fi
}

# check_pkgconfig PREFIX: idmint.pc under PREFIX resolves into PREFIX, and
# check_component WHERE PACKAGE PROGRAM EXPECTED WHAT [ARGS...]: PROGRAM.c
# builds against the installed PACKAGE with pkg-config's flags, and run
# with ARGS prints EXPECTED.
check_component() {
    local where=$1 pkg=$2 prog=$3 want=$4 what=$5
    shift 5
    local flags out rc=0
    if ! flags=$(pkg-config --cflags --libs "$pkg" 2>&1); then
        fail "pkg-config ($where): pkg-config --cflags --libs $pkg: $flags"
        return
    fi
    # shellcheck disable=SC2086 # pkg-config's output is meant to be split
    out=$("$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror "${SAN_FLAGS[@]}" \
        "$HERE/$prog.c" -o "$T/$prog" $flags 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "pkg-config ($where): $CC $prog.c $flags: $out"
    else
        out=$("$T/$prog" "$@" 2>&1)
        if [ "$out" = "$want" ]; then
            pass "pkg-config ($where): $prog.c builds with $pkg and $what"
        else
            fail "pkg-config ($where): $prog printed: $out"
        fi
    fi
    rm -f "$T/$prog"
}

# hello builds and runs with it.
check_pkgconfig() {
    local prefix=$1 where=$2 pcdir="$1/$LIBDIR/pkgconfig" var got want out rc
    want=$(real "$prefix")
    if [ ! -f "$pcdir/idmint.pc" ]; then
        fail "pkg-config ($where): no $pcdir/idmint.pc"
        return
    fi
    export PKG_CONFIG_PATH="$pcdir"
    for var in prefix libdir includedir; do
        out=$(pkg-config --variable="$var" idmint 2>&1)
        got=$(real "$out")
        case $var in
        prefix) want=$(real "$prefix") ;;
        libdir) want=$(real "$prefix/$LIBDIR") ;;
        includedir) want=$(real "$prefix/include") ;;
        esac
        if [ -n "$got" ] && [ "$got" = "$want" ]; then
            pass "pkg-config ($where): $var is the install tree's ($out)"
        else
            fail "pkg-config ($where): $var is '$out', expected $want"
        fi
    done
    local flags
    if ! flags=$(pkg-config --cflags --libs idmint 2>&1); then
        fail "pkg-config ($where): pkg-config --cflags --libs idmint: $flags"
        return
    fi
    rc=0
    # shellcheck disable=SC2086 # pkg-config's output is meant to be split
    out=$("$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror "${SAN_FLAGS[@]}" \
        "$HERE/hello.c" -o "$T/hello_pc" $flags 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "pkg-config ($where): $CC hello.c $flags: $out"
        return
    fi
    pass "pkg-config ($where): hello.c builds with: $CC ${SAN_FLAGS[*]} $flags"
    run_hello "pkg-config ($where)" "$T/hello_pc" LD_LIBRARY_PATH="$prefix/$LIBDIR"
    rm -f "$T/hello_pc"
    # The coordination component and the segment stores: each its own
    # static library and .pc file, which brings the clients' libraries
    # (libcurl, jansson, libzookeeper_mt; sqlite3, libpq).
    check_component "$where" idmint-coord coord_hello \
        "etcd etcd://127.0.0.1:2379/idmint/hello"$'\n'"zookeeper zk://127.0.0.1:2181/idmint/hello" \
        "opens both kinds of coordinator"
    rm -f "$T/hello.db"
    check_component "$where" idmint-segstore segstore_hello "sqlite 1 11 1 1" \
        "leases from an SQLite store" "$T/hello.db"
    rm -f "$T/hello.db" "$T/hello.db-wal" "$T/hello.db-shm"
    unset PKG_CONFIG_PATH
}

# check_cmake PREFIX: the consumer project finds idmint under PREFIX and
# builds hello against the shared and the static target.
check_cmake() {
    local prefix=$1 where=$2 bdir="$T/consumer-$2" out rc=0 found
    out=$(cmake "${GENERATOR[@]}" -S "$HERE/consumer" -B "$bdir" \
        -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
        -DCMAKE_C_FLAGS="${SAN_FLAGS[*]}" -DCMAKE_EXE_LINKER_FLAGS="${SAN_FLAGS[*]}" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "cmake ($where): find_package(idmint CONFIG) failed: $(printf '%s\n' "$out" | grep -v '^--' | head -n 20)"
        return
    fi
    found=$(printf '%s\n' "$out" | sed -n 's/^-- idmint_DIR=//p')
    case $(real "$found") in
    "$(real "$prefix")"/*) pass "cmake ($where): find_package(idmint CONFIG) found $found" ;;
    *)
        fail "cmake ($where): idmint_DIR is '$found', not under $prefix"
        return
        ;;
    esac
    rc=0
    out=$(cmake --build "$bdir" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "cmake ($where): building hello_shared and hello_static: $out"
        return
    fi
    pass "cmake ($where): hello builds against idmint::idmint and idmint::idmint_static"
    if readelf -d "$bdir/hello_shared" | grep -q 'NEEDED.*\[libidmint\.so'; then
        pass "cmake ($where): idmint::idmint is the shared library"
    else
        fail "cmake ($where): hello_shared does not link libidmint.so"
    fi
    if readelf -d "$bdir/hello_static" | grep -q 'NEEDED.*\[libidmint\.so'; then
        fail "cmake ($where): idmint::idmint_static links libidmint.so"
    else
        pass "cmake ($where): idmint::idmint_static is the static library"
    fi
    # CMake gives the consumer an RPATH to the install tree's libdir.
    run_hello "cmake ($where) idmint::idmint" "$bdir/hello_shared"
    run_hello "cmake ($where) idmint::idmint_static" "$bdir/hello_static"
}

START=$SECONDS
PREFIX="$T/usr"
rc=0
out=$(cmake --install "$BUILD" --prefix "$PREFIX" 2>&1) || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "cmake --install $BUILD --prefix $PREFIX: $out"
    echo "$passed passed, $failed failed"
    exit 1
fi
pass "cmake --install into $PREFIX"

check_pkgconfig "$PREFIX" installed
check_cmake "$PREFIX" installed

MOVED="$T/moved/elsewhere"
mkdir -p "$T/moved"
mv "$PREFIX" "$MOVED"
check_pkgconfig "$MOVED" moved
check_cmake "$MOVED" moved

echo "install test took $((SECONDS - START))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
