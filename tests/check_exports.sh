#!/usr/bin/env bash
# The shared library exports exactly the public API: every dynamic symbol
# it defines starts with idm_ (and none with idm__, the internal prefix),
# and every function declared IDM_API in include/idmint/ is exported.
set -u
lib=$1
include_dir=$2
defined=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort)
fail=0
bad=$(printf '%s\n' "$defined" | grep -v '^idm_' | grep -v '^_' || true)
internal=$(printf '%s\n' "$defined" | grep '^idm__' || true)
if [ -n "$bad$internal" ]; then
    echo "unexpected exported symbols:"; printf '%s\n' $bad $internal; fail=1
fi
declared=$(grep -h "^IDM_API" "$include_dir"/idmint/*.h | grep -o "idm_[a-z0-9_]*(" | tr -d "(" | sort -u)
for fn in $declared; do
    if ! printf '%s\n' "$defined" | grep -qx "$fn"; then
        echo "declared but not exported: $fn"; fail=1
    fi
done
n=$(printf '%s\n' "$declared" | wc -l)
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed ($n API functions exported, nothing else)"; else echo "0 passed, 1 failed"; fi
exit $fail
