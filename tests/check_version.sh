# check_version.sh - one version number everywhere: CMake's project()
# version (the one place it is decided) is what `idmint --version` and
# `idmintd --version` print, what the library's header says
# (IDM_VERSION_STRING and IDM_VERSION_NUMBER, which idm_version() and
# idmintd report), what the man pages' .TH lines carry ("idmint X.Y.Z"),
# and what the bindings' packages declare (setup.py, __version__,
# package.json). A release changes project() and then each of these, and
# this test names any it missed. (pg_idmint's default_version is the
# extension's SQL version, which moves on its own.)
# Usage: bash tests/check_version.sh SOURCE_DIR PROJECT_VERSION IDMINT IDMINTD
SRC=${1:?usage: check_version.sh SOURCE_DIR PROJECT_VERSION IDMINT IDMINTD}
V=${2:?usage: check_version.sh SOURCE_DIR PROJECT_VERSION IDMINT IDMINTD}
IDMINT=$3
IDMINTD=$4
export LC_ALL=C
failed=0
passed=0

# same WHAT ACTUAL: ACTUAL must be the project's version.
same() {
    if [ "$2" = "$V" ]; then
        passed=$((passed + 1))
    else
        echo "FAIL: $1 says '$2', CMake's project() says '$V'" >&2
        failed=$((failed + 1))
    fi
}

# th PAGE: the version in the page's .TH line (its fourth field, "idmint X").
th() {
    sed -n 's/^\.TH [^ ]* [^ ]* "[^"]*" "idmint \([^"]*\)".*/\1/p' "$1"
}

same "idmint --version" "$("$IDMINT" --version 2>&1 | sed -n 's/^idmint \([^ ]*\)$/\1/p')"
same "idmintd --version" "$("$IDMINTD" --version 2>&1 | sed -n 's/^idmintd \([^ ]*\)$/\1/p')"
same "man/idmint.1's .TH" "$(th "$SRC/man/idmint.1")"
same "man/idmintd.8's .TH" "$(th "$SRC/man/idmintd.8")"
same "include/idmint/idmint.h's IDM_VERSION_STRING" \
    "$(sed -n 's/^#define IDM_VERSION_STRING "\(.*\)"$/\1/p' "$SRC/include/idmint/idmint.h")"
number=$(sed -n 's/^#define IDM_VERSION_NUMBER 0x\([0-9a-fA-F]*\)$/\1/p' "$SRC/include/idmint/idmint.h")
same "include/idmint/idmint.h's IDM_VERSION_NUMBER (0xMMmmpp)" \
    "$([ -n "$number" ] && printf '%d.%d.%d' $((16#${number:0:2})) $((16#${number:2:2})) $((16#${number:4:2})))"
same "bindings/python/setup.py" "$(sed -n 's/^ *version="\(.*\)",$/\1/p' "$SRC/bindings/python/setup.py")"
same "bindings/python/idmint/__init__.py's __version__" \
    "$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$SRC/bindings/python/idmint/__init__.py")"
same "bindings/node/package.json" \
    "$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$SRC/bindings/node/package.json")"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
