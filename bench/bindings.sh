#!/usr/bin/env bash
# bench/bindings.sh - the language bindings against each language's own
# libraries, side by side in one run (bench/BINDINGS.md has the figures).
#
#   bench/bindings.sh [--quick] [--rounds R]
#
# 1. installs the Python binding into a venv of Debian's python3 under
#    build-bindbench/python (pip install --no-build-isolation, offline) and
#    the Node binding with its npm peers into bench/node (npm install: the
#    pinned uuid, ulid, ulidx, ksuid, typeid-js from the npm registry);
# 2. runs bench/bindings_python.py (uuid7/uuid4/uuid7_n, ulid and
#    Snowflake.next against uuid.uuid4(), uuid.uuid1() and a pure-Python
#    snowflake generator) and bench/bindings_node.mjs (uuidv7/uuidv4, ulid,
#    ksuid, typeid against npm uuid, crypto.randomUUID(), ulid, ulidx,
#    ksuid, typeid-js), each with interleaved rounds and medians; each
#    prints a markdown table with the ratios (peer time / idmint time);
# 3. writes both tables, with the machine and the load, to
#    build-bindbench/bindings-results.md.
#
# --quick: 3 rounds and short measurements (the smoke run); --rounds R
# (default 9). Ratios, not absolute times, are what carries between runs on
# a shared machine.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build-bindbench
rounds=9
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 rounds=3 ;;
    --rounds)
        rounds=${2:?--rounds needs a number}
        shift
        ;;
    -h | --help)
        sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "bench/bindings.sh: unknown argument $1" >&2
        exit 2
        ;;
    esac
    shift
done
case "$rounds" in
'' | *[!0-9]* | 0)
    echo "bench/bindings.sh: --rounds must be a positive whole number" >&2
    exit 2
    ;;
esac

mkdir -p "$OUT"
PY=/usr/bin/python3
echo "bench/bindings.sh: installing the Python binding into $OUT/python/venv"
rm -rf "$OUT/python/venv"
"$PY" -m venv --system-site-packages "$OUT/python/venv"
(cd "$ROOT" && "$OUT/python/venv/bin/pip" install -q --no-build-isolation --no-index \
    --no-cache-dir --disable-pip-version-check ./bindings/python)
echo "bench/bindings.sh: installing the Node binding and its peers into bench/node"
(cd "$ROOT/bench/node" && npm install --no-audit --no-fund --loglevel=error)

calls=()
[ "$quick" = 1 ] && calls=(--calls 2000)
py_table=$(cd "$OUT" && "$OUT/python/venv/bin/python" "$ROOT/bench/bindings_python.py" \
    --rounds "$rounds" "${calls[@]}")
node_table=$(node "$ROOT/bench/bindings_node.mjs" "$rounds")

report=$OUT/bindings-results.md
{
    echo "### Machine"
    echo "- command: \`bench/bindings.sh $([ "$quick" = 1 ] && echo --quick) --rounds $rounds\`"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- CPU: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- $("$PY" --version 2>&1) (Debian's); Node $(node --version)"
    echo
    echo "### Python"
    echo "$py_table"
    echo
    echo "### Node"
    echo "$node_table"
} >"$report"
cat "$report"
echo "bench/bindings.sh: report written to $report"
