#!/usr/bin/env bash
# tests/dist/test_version.sh SOURCE_DIR - the Debian packaging states the
# version CMake's project() decides (tests/check_version.sh holds the
# programs, the header, the man pages and the bindings to it):
#   - debian/changelog's upstream version (the package version before the
#     Debian revision, without an epoch) is the project version;
#   - the shared library's package is named after its soname,
#     libidmint<MAJOR.MINOR> (CMakeLists.txt: IDM_SOVERSION), in
#     debian/control, its debian/*.install file and the symbols file;
#   - pg_idmint's SQL version (pg/Makefile's EXTVERSION, which moves on its
#     own, not with the project) is the control file's default_version, and
#     CREATE EXTENSION has a script that reaches it.
# Exits 77 (skipped) without dpkg-parsechangelog (dpkg-dev).
set -uo pipefail
SRC=${1:?usage: test_version.sh SOURCE_DIR}
export LC_ALL=C
command -v dpkg-parsechangelog >/dev/null || { echo "SKIP: no dpkg-parsechangelog (dpkg-dev)"; exit 77; }
passed=0
failed=0

# expect WHAT WANTED GOT
expect() {
    if [ -n "$3" ] && [ "$2" = "$3" ]; then
        passed=$((passed + 1))
    else
        echo "FAIL: $1 is '$3', expected '$2'" >&2
        failed=$((failed + 1))
    fi
}

project=$(sed -n 's/^project(idmint VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$project" ] || { echo "FAIL: no project(idmint VERSION ...) in CMakeLists.txt" >&2; exit 1; }
package=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
upstream=${package%-*}
upstream=${upstream#*:}
expect "debian/changelog's upstream version ($package)" "$project" "$upstream"

lib="libidmint${project%.*}"
expect "debian/control's shared library package" "$lib" \
    "$(sed -n 's/^Package: \(libidmint[0-9].*\)$/\1/p' "$SRC/debian/control")"
expect "the shared library's .install file" "$lib.install" \
    "$(cd "$SRC/debian" && ls libidmint[0-9]*.install 2>/dev/null)"
expect "the symbols file's library line" "libidmint.so.${project%.*} $lib" \
    "$(sed -n 's/^\(libidmint\.so\.[^ ]* [^ ]*\) .*/\1/p' "$SRC"/debian/libidmint*.symbols 2>/dev/null)"

ext=$(sed -n 's/^EXTVERSION = //p' "$SRC/pg/Makefile")
expect "pg/pg_idmint.control's default_version" "$ext" \
    "$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SRC/pg/pg_idmint.control")"
script=$(cd "$SRC/pg" && ls "pg_idmint--$ext.sql" pg_idmint--*--"$ext.sql" 2>/dev/null | head -n 1)
expect "the script that reaches pg_idmint $ext" "present" "${script:+present}"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
