#!/usr/bin/env bash
# tests/interop/test_node.sh IDMINT - checks IDs minted by the idmint CLI
# with other ecosystems' libraries: npm's uuid and ulid, and Node itself
# (tests/interop/interop.mjs does the work).
#
# Needs node and tests/interop/node_modules, which scripts/test.sh installs
# (npm ci, pinned by package-lock.json). Without them this test FAILS rather
# than skipping, so that a machine missing them cannot pass by accident.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$#" -ne 1 ]; then
    echo "usage: $0 PATH_TO_IDMINT" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
if ! command -v node >/dev/null 2>&1; then
    echo "not ok - node is not installed: run scripts/test.sh, which installs it"
    echo "0 passed, 1 failed"
    exit 1
fi
for pkg in uuid ulid; do
    if [ ! -f "$here/node_modules/$pkg/package.json" ]; then
        echo "not ok - tests/interop/node_modules/$pkg is missing: run scripts/test.sh" \
            "(or 'npm ci' in tests/interop) to install the pinned npm packages"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
exec node "$here/interop.mjs" "$1"
