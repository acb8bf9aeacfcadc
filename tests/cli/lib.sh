# lib.sh - the acceptance tests' runner, sourced by tests/cli/test_*.sh.
#
# Each case states, declaratively, the man page sentence it proves (its
# evidence), the command, its stdin, and the expected stdout, stderr and
# exit status (after SQLite's EVIDENCE-OF tags and curl's tests/data):
#
#   check "EVIDENCE" [-i STDIN] [-o STDOUT | -O ERE] [-L ERE] [-n LINES]
#         [-e ERE | -E] [-s STATUS] -- COMMAND ARGS...
#   check "EVIDENCE" [...] --sh 'SHELL SNIPPET'
#
#   -i TEXT  standard input (default: empty)
#   -o TEXT  stdout is exactly TEXT plus a newline (-o '' : stdout is empty)
#   -O ERE   stdout, less its final newline, matches ERE as a whole
#   -L ERE   every line of stdout matches ERE as a whole
#   -n N     stdout is exactly N newline-terminated lines
#   -e ERE   stderr matches ERE somewhere; without -e or -E it must be empty
#   -E       stderr is not checked
#   -s N     exit status (default 0)
#
# Commands run with $IDMINT (the binary under test) exported, LC_ALL=C and
# no terminal on stdout. A mismatch prints the case, the command, and the
# expected and actual sides. `finish` prints "N passed, N failed" and exits
# non-zero when any case failed.
#
# Needs only bash and coreutils (grep, sort, wc, head, timeout).

IDMINT=${1:?usage: bash $0 PATH_TO_IDMINT}
case $IDMINT in
/*) ;;
*) IDMINT=$PWD/$IDMINT ;;
esac
export IDMINT
export LC_ALL=C

PASSED=0
FAILED=0
CASE_NO=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idmint-cli.XXXXXX")
trap 'rm -rf "$T_DIR"' EXIT

# Prints at most 40 lines of a value, marking the end so that trailing
# newlines are visible.
show() {
    printf '%s' "$1" | head -n 40
    printf '%s\n' '<END>'
}

check() {
    local evidence=$1
    shift
    local stdin='' out_exact='' have_exact=0 out_re='' have_re=0 line_re='' have_lines=0
    local n_lines='' err_re='' have_err=0 err_any=0 want_status=0 snippet='' have_snippet=0
    while [ $# -gt 0 ]; do
        case $1 in
        -i) stdin=$2; shift 2 ;;
        -o) out_exact=$2; have_exact=1; shift 2 ;;
        -O) out_re=$2; have_re=1; shift 2 ;;
        -L) line_re=$2; have_lines=1; shift 2 ;;
        -n) n_lines=$2; shift 2 ;;
        -e) err_re=$2; have_err=1; shift 2 ;;
        -E) err_any=1; shift ;;
        -s) want_status=$2; shift 2 ;;
        --sh) snippet=$2; have_snippet=1; shift 2; break ;;
        --) shift; break ;;
        *) echo "lib.sh: bad check option '$1'" >&2; exit 2 ;;
        esac
    done
    CASE_NO=$((CASE_NO + 1))
    local out_f=$T_DIR/out err_f=$T_DIR/err status cmd_text
    if [ $have_snippet = 1 ]; then
        cmd_text=$snippet
        printf '%s' "$stdin" | bash -c "$snippet" >"$out_f" 2>"$err_f"
        status=$?
    else
        cmd_text=$(printf '%q ' "$@")
        printf '%s' "$stdin" | "$@" >"$out_f" 2>"$err_f"
        status=$?
    fi
    local out err problems=''
    out=$(cat "$out_f"; printf x)
    out=${out%x}
    err=$(cat "$err_f"; printf x)
    err=${err%x}

    if [ "$status" != "$want_status" ]; then
        problems+="  exit status: expected $want_status, got $status"$'\n'
    fi
    if [ $have_exact = 1 ]; then
        local want=$out_exact
        [ -n "$want" ] && want+=$'\n'
        if [ "$out" != "$want" ]; then
            problems+="  stdout: expected exactly:"$'\n'"$(show "$want")"$'\n'
        fi
    fi
    if [ -n "$out" ] && [ "${out: -1}" != $'\n' ]; then
        problems+="  stdout: does not end with a newline"$'\n'
    fi
    if [ $have_re = 1 ]; then
        local body=${out%$'\n'}
        if ! [[ $body =~ ^($out_re)$ ]]; then
            problems+="  stdout: expected to match /$out_re/"$'\n'
        fi
    fi
    if [ $have_lines = 1 ]; then
        local bad
        bad=$(grep -cvE "^($line_re)\$" "$out_f")
        if [ "$bad" != 0 ]; then
            problems+="  stdout: $bad line(s) do not match /$line_re/, e.g. $(grep -vE "^($line_re)\$" "$out_f" | head -n 1)"$'\n'
        fi
    fi
    if [ -n "$n_lines" ]; then
        local got_lines
        got_lines=$(wc -l <"$out_f")
        if [ "$got_lines" != "$n_lines" ]; then
            problems+="  stdout: expected $n_lines line(s), got $got_lines"$'\n'
        fi
    fi
    if [ $have_err = 1 ]; then
        if ! [[ $err =~ $err_re ]]; then
            problems+="  stderr: expected to match /$err_re/"$'\n'
        fi
    elif [ $err_any = 0 ] && [ -n "$err" ]; then
        problems+="  stderr: expected to be empty"$'\n'
    fi

    if [ -z "$problems" ]; then
        PASSED=$((PASSED + 1))
        return 0
    fi
    FAILED=$((FAILED + 1))
    {
        echo "FAIL #$CASE_NO: $evidence"
        echo "  command: $cmd_text"
        [ -n "$stdin" ] && echo "  stdin:" && show "$stdin"
        printf '%s' "$problems"
        echo "  actual exit status: $status"
        echo "  actual stdout:"
        show "$out"
        echo "  actual stderr:"
        show "$err"
        echo
    } >&2
    return 1
}

# tcheck EVIDENCE PROBLEMS: a case checked by the caller's own means,
# which passes when PROBLEMS is empty.
tcheck() {
    CASE_NO=$((CASE_NO + 1))
    if [ -z "$2" ]; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        printf 'FAIL #%d: %s\n%s\n\n' "$CASE_NO" "$1" "$2"
    fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}
