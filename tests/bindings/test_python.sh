#!/usr/bin/env bash
# test_python.sh - the Python binding (bindings/python): makes a venv under
# BUILD_DIR with Debian's python3 (/usr/bin/python3; IDM_PYTHON overrides),
# installs the binding into it offline the documented way
# (pip install --no-build-isolation), then runs its pytest suite, the
# example, and mypy --strict on the example against the package's stubs.
# Exits non-zero on any failure.
#
# Usage, from the repository root: bash tests/bindings/test_python.sh [BUILD_DIR]
#   BUILD_DIR defaults to build/python.
# Needs (Debian 12): python3-dev python3-venv python3-setuptools python3-wheel
# python3-pytest mypy libssl-dev libfaketime.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:-build/python}
case $DIR in
/*) ;;
*) DIR=$PWD/$DIR ;;
esac
PY=${IDM_PYTHON:-/usr/bin/python3}
VENV=$DIR/venv

fail() {
    echo "test_python.sh: $*" >&2
    exit 1
}

[ -x "$PY" ] || fail "$PY not found (Debian: apt-get install python3)"
for m in venv setuptools pytest mypy; do
    "$PY" -c "import $m" 2>/dev/null ||
        fail "$PY cannot import $m (Debian 12: apt-get install python3-venv python3-setuptools python3-wheel python3-pytest mypy)"
done
[ -f /usr/include/python3.11/Python.h ] || [ -n "$("$PY" -c 'import sysconfig,os; p=sysconfig.get_paths()["include"]; print(p if os.path.exists(p+"/Python.h") else "")')" ] ||
    fail "Python.h missing (Debian: apt-get install python3-dev)"

mkdir -p "$DIR" || fail "cannot make $DIR"
rm -rf "$VENV"
"$PY" -m venv --system-site-packages "$VENV" || fail "cannot make the venv $VENV"

echo "== pip install --no-build-isolation ./bindings/python"
(cd "$ROOT" && "$VENV/bin/pip" install --no-build-isolation --no-index --no-cache-dir \
    --disable-pip-version-check ./bindings/python) || fail "the install failed"

# Run everything outside the source tree, so that `import idmint` is the
# installed package and not bindings/python/idmint.
cd "$DIR" || fail "cannot enter $DIR"
where=$("$VENV/bin/python" -c 'import idmint, os; print(os.path.dirname(idmint.__file__))') ||
    fail "the installed package does not import"
case $where in
"$VENV"/*) ;;
*) fail "idmint imports from $where, not from the venv" ;;
esac

st=0
echo "== pytest"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/bindings/python/tests" || st=1
echo "== example"
"$VENV/bin/python" "$ROOT/bindings/python/examples/example.py" >/dev/null || st=1
echo "== mypy --strict"
"$VENV/bin/python" -m mypy --strict --cache-dir "$DIR/mypy-cache" \
    "$ROOT/bindings/python/examples/example.py" || st=1
if [ "$st" -ne 0 ]; then
    echo "test_python.sh: FAILED" >&2
fi
exit "$st"
