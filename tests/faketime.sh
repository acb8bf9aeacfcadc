# shellcheck shell=bash
# tests/faketime.sh - Debian's libfaketime for the tests that run a
# program on a faked clock; sourced (tests/server/lib.sh, tests/cli,
# tests/pg, tests/packages).
#
# FAKETIME_LIB: the preload library for this machine's architecture.
# require_faketime NAME: exits 1 (a failed test, "0 passed, 1 failed")
# when it is missing, naming the package.

FAKETIME_LIB=$(printf '%s\n' /usr/lib/*/faketime/libfaketimeMT.so.1 | head -n 1)

require_faketime() {
    if [ ! -e "$FAKETIME_LIB" ]; then
        echo "$1: $FAKETIME_LIB is missing (Debian package libfaketime)" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
}
