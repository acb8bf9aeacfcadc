# shellcheck shell=bash
# lib.sh - what tests/sqlite/test_*.sh share: a temporary directory, the
# processes to stop, and the counting of cases.
#
#   pass NAME / fail NAME DETAIL     count a case (failures are printed)
#   expect NAME ACTUAL OP EXPECTED   OP: = != -lt -le -gt -ge, =~ (ERE)
#   track PID                        kill PID (by its id) when the script ends
#   finish                           "N passed, N failed"; non-zero on a failure
#
# T_DIR is removed at the end (kept with KEEP_T_DIR=1). PY is Debian's
# python3 (the PATH's may be another build, without loadable extensions).
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmsq.XXXXXX")
# shellcheck disable=SC2034 # used by the scripts that source this file
PY=${IDMSQ_PYTHON:-/usr/bin/python3}
PASSED=0
FAILED=0
T_PIDS=()

track() { T_PIDS+=("$1"); }

t_cleanup() {
    local p
    for p in "${T_PIDS[@]}"; do
        kill -9 "$p" 2>/dev/null
    done
    wait 2>/dev/null
    if [[ ${KEEP_T_DIR:-0} == 1 ]]; then
        echo "kept $T_DIR" >&2
    else
        rm -rf "$T_DIR"
    fi
}
trap t_cleanup EXIT

pass() {
    PASSED=$((PASSED + 1))
    echo "ok   $1"
}

fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL $1" >&2
    [[ -n ${2:-} ]] && printf '     %s\n' "$2" >&2
    return 0
}

expect() {
    local name=$1 actual=$2 op=$3 want=$4 ok=1
    case $op in
    =) [[ $actual == "$want" ]] || ok=0 ;;
    !=) [[ $actual != "$want" ]] || ok=0 ;;
    =~) [[ $actual =~ $want ]] || ok=0 ;;
    -lt | -le | -gt | -ge) [[ $actual =~ ^-?[0-9]+$ ]] && test "$actual" "$op" "$want" || ok=0 ;;
    *) ok=0 ;;
    esac
    if ((ok)); then
        pass "$name"
    else
        fail "$name" "got '$actual', wanted $op '$want'"
    fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    ((FAILED == 0))
}
