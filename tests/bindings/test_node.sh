#!/usr/bin/env bash
# tests/bindings/test_node.sh [BUILD_DIR] - the Node.js binding
# (bindings/node): installs it into a scratch project under BUILD_DIR
# (default build/node) the documented way, `npm install ./bindings/node`
# (its install script compiles the addon with the system C compiler, no
# network but the npm registry), next to the test devDependencies (npm ci,
# pinned by bindings/node/test/package-lock.json), then runs the tests with
# `node --test` and type-checks an example with tsc --noEmit --strict.
# Run from the repository root. Exits non-zero on any failure; missing
# tools fail rather than skip.
set -uo pipefail

root=$(pwd)
if [ ! -f "$root/bindings/node/package.json" ]; then
    echo "not ok - run from the repository root (no bindings/node/package.json here)" >&2
    exit 2
fi
build=${1:-build/node}
case $build in /*) ;; *) build=$root/$build ;; esac
proj=$build/project

fail() {
    echo "not ok - $*"
    exit 1
}

for tool in node npm cc; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (Debian: nodejs npm gcc libssl-dev)"
done

rm -rf "$proj"
mkdir -p "$proj" || fail "cannot make $proj"
# The test project: the devDependencies (pinned) and allowScripts, which
# npm 11 needs to run a dependency's install script (it builds the addon).
cp "$root/bindings/node/test/package.json" "$root/bindings/node/test/package-lock.json" "$proj/" ||
    fail "cannot copy the test package files"
cd "$proj" || fail "cannot enter $proj"
npm ci --no-audit --no-fund >npm-ci.log 2>&1 || { cat npm-ci.log; fail "npm ci of the test devDependencies"; }
echo "ok - npm ci of the test devDependencies"
# Built afresh: a stale addon from another checkout must not pass.
rm -rf "$root/bindings/node/build"
# --install-links=false: npm 9.0 to 9.3 (Debian 12's is 9.2) install a
# folder as a packed copy, without the sources around it it builds from;
# every npm links it with this (the default again from npm 9.4).
npm install --install-links=false --no-audit --no-fund --foreground-scripts "$root/bindings/node" \
    >npm-install.log 2>&1 ||
    { cat npm-install.log; fail "npm install ./bindings/node"; }
[ -f node_modules/idmint/build/idmint.node ] ||
    { cat npm-install.log; fail "npm install ./bindings/node did not build the addon"; }
echo "ok - npm install ./bindings/node built and installed the addon"
node -e "require('idmint').uuidv7()" || fail "require('idmint') in the scratch project"
node --input-type=module -e "import { uuidv7 } from 'idmint'; uuidv7();" || fail "import from 'idmint'"
echo "ok - the addon loads through require and import"

# The tests run from the scratch project, so that 'idmint' is the
# installed package.
mkdir -p test types
cp "$root"/bindings/node/test/*.test.mjs "$root"/bindings/node/test/*.test.cjs \
    "$root"/bindings/node/test/helpers.mjs test/ || fail "cannot copy the tests"
cp "$root"/bindings/node/test/types/* types/ || fail "cannot copy the type example"
status=0
IDMINT_SOURCE_DIR=$root node --test --test-concurrency=1 test/*.test.mjs test/*.test.cjs || status=1
if [ $status -eq 0 ]; then
    echo "ok - node --test"
else
    echo "not ok - node --test"
fi

if node_modules/.bin/tsc -p types/tsconfig.json; then
    echo "ok - tsc --noEmit --strict on the example"
else
    echo "not ok - tsc --noEmit --strict on the example"
    status=1
fi
exit $status
