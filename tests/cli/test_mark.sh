# test_mark.sh - `idmint gen FORMAT --mark FILE` (idmint(1), docs/design.md
# "The durable mark"): runs killed with SIGKILL at random moments, then a
# run with the clock set back 5 s (libfaketime), still mint only above
# everything minted before; the file's refusals; the lowering at exit that
# keeps back-to-back runs from drifting ahead of the clock.
# Usage: bash tests/cli/test_mark.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

D=$T_DIR
# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"
export D FAKETIME_LIB

# ---- the option --------------------------------------------------------------

check "--mark makes a 1024-byte file of mode 0600 and prints the IDs" -o "3 1024 600" --sh '
    n=$("$IDMINT" gen uuidv7 -n 3 --mark "$D/m0" | wc -l)
    echo "$n $(stat -c "%s %a" "$D/m0")"'
check "--mark applies only to time-ordered formats" -s 2 \
    -e "option '--mark' applies only to time-ordered formats, not uuidv4" \
    -- "$IDMINT" gen uuidv4 --mark "$D/m0"
check "--mark and --state do not go together" -s 2 -e "'--mark' and '--state' do not go together" \
    -- "$IDMINT" gen ulid --mark "$D/m0" --state "$D/st"
check "--mark with no file is a usage error" -s 2 -e "--mark: needs a file" \
    -- "$IDMINT" gen ulid --mark ""
check "a damaged mark file is refused, naming it, and left as it is" -s 1 \
    -o "garbage" -e "idmint: --mark: mark file $D/bad is damaged" --sh '
    printf "garbage\n" >"$D/bad"
    "$IDMINT" gen uuidv7 --mark "$D/bad"; st=$?
    cat "$D/bad"; exit $st'
check "a mark file others may write is refused" -s 1 -e "writable by other users" --sh '
    : >"$D/open"; chmod 666 "$D/open"; "$IDMINT" gen uuidv7 --mark "$D/open"'
check "a symbolic link is not followed" -s 1 -e "symbolic link" --sh '
    ln -sf "$D/m0" "$D/link"; "$IDMINT" gen uuidv7 --mark "$D/link"'
check "a directory is refused" -s 1 -e "mark file $D is a directory" \
    -- "$IDMINT" gen uuidv7 --mark "$D"
check "one run per file at a time: a second is refused while the first runs" -s 1 \
    -e "is in use by another process" --sh '
    "$IDMINT" gen ulid -n 2000000000 --mark "$D/busy" >/dev/null &
    pid=$!
    sleep 0.3
    "$IDMINT" gen ulid --mark "$D/busy"; st=$?
    kill -9 $pid; wait $pid 2>/dev/null
    exit $st'

check "back-to-back runs do not drift ahead of the clock (the mark is lowered at exit)" -o ok --sh '
    for i in $(seq 30); do "$IDMINT" gen uuidv7 --mark "$D/drift" || exit 1; done >"$D/drift.ids"
    last=$(tail -n 1 "$D/drift.ids"); hex=${last//-/}
    ms=$((16#${hex:0:12})); now=$(($(date +%s%3N)))
    sort -c -u "$D/drift.ids" && [ "$ms" -le $((now + 100)) ] && echo ok'

check "a reader that goes away (head -1) still lowers the mark: the next run is not ahead of the clock" \
    -o ok --sh '
    "$IDMINT" gen uuidv7 -n 2000000000 --mark "$D/pipe" | head -n 1 >/dev/null
    next=$("$IDMINT" gen uuidv7 --mark "$D/pipe"); hex=${next//-/}
    ms=$((16#${hex:0:12})); now=$(date +%s%3N)
    [ "$ms" -le $((now + 100)) ] && echo ok || echo "next ID at $ms, the clock at $now"'

# ---- crashes -------------------------------------------------------------------

# kill_runs FORMAT FILE OUT LEN [ARGS...]: five runs, each killed with
# SIGKILL after 0.1 to 0.5 s (snowflakes 1 s later). An awk on a FIFO reads each run's output as
# it comes (and so paces it), keeps the whole lines (LEN characters: the
# one a kill cut short is not), checks that they increase, and appends
# "FIRST LAST" of the run to OUT, or "BAD ..." at the first line out of
# order. A run resumes above the last: each FIRST must sort after the
# previous LAST, which with in-run order means no ID ever repeats.
kill_runs() {
    local fmt=$1 file=$2 out=$3 len=$4
    shift 4
    local i pid reader t
    : >"$out"
    rm -f "$out.fifo"
    mkfifo "$out.fifo"
    for i in 1 2 3 4 5; do
        rm -f "$out.started"
        # The reader says when the run's first whole ID is in ($out.started),
        # so that every run is killed while it mints, however slow the
        # machine is to start it (a snowflake run first waits out the mark
        # its killed predecessor left ahead of the clock).
        awk -v len="$len" -v started="$out.started" 'length($0) == len {
                if (prev != "" && ($0 "") <= (prev "")) { print "BAD " prev " then " $0; bad = 1; exit }
                if (first == "") { first = $0; print "" >started; close(started) }
                prev = $0; n++
            }
            END { if (!bad) print first, prev, n }' <"$out.fifo" >>"$out" &
        reader=$!
        "$IDMINT" gen "$fmt" -n 2000000000 --mark "$file" "$@" >"$out.fifo" &
        pid=$!
        for t in $(seq 600); do
            [ -e "$out.started" ] && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        sleep "0.$((RANDOM % 5 + 1))"
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        wait "$reader"
    done
    rm -f "$out.fifo" "$out.started"
}
export -f kill_runs

# runs_ok OUT: five runs, each printed IDs (kill_runs waits for the first)
# in order, each above the one before.
runs_ok() {
    awk 'NF == 0 { empty++; next }
         NF != 3 || $1 == "BAD" || (prev != "" && ($1 "") <= (prev "")) { print "bad run: " $0; bad = 1 }
         { prev = $2 }
         END { if (NR != 5 || empty > 0) { print NR " runs, " empty " empty"; bad = 1 }
               if (!bad) print "ok"; exit bad }' "$1"
}
export -f runs_ok

check "uuidv7: five runs killed at random moments never repeat an ID, each resumes above the last" \
    -o ok --sh 'kill_runs uuidv7 "$D/k.v7" "$D/k.v7.runs" 36 && runs_ok "$D/k.v7.runs"'
check "ulid: the same" -o ok --sh 'kill_runs ulid "$D/k.ulid" "$D/k.ulid.runs" 26 && runs_ok "$D/k.ulid.runs"'
check "ksuid: the same" -o ok --sh 'kill_runs ksuid "$D/k.ksuid" "$D/k.ksuid.runs" 27 && runs_ok "$D/k.ksuid.runs"'
check "typeid: the same" -o ok --sh 'kill_runs typeid "$D/k.tid" "$D/k.tid.runs" 31 --prefix user && runs_ok "$D/k.tid.runs"'
check "snowflake: the same" -o ok --sh 'kill_runs snowflake "$D/k.sf" "$D/k.sf.runs" 19 --node 7 && runs_ok "$D/k.sf.runs"'

# The clock set back 5 s after a kill: libfaketime and the sanitizers'
# runtimes do not go together (tests/unit/test_mark.c covers the same with
# an injected clock in every build).
if [ -z "${IDM_SANITIZE:-}" ]; then
    check "libfaketime is installed (the clock-back cases need it)" -o yes --sh '
        [ -f "$FAKETIME_LIB" ] && LD_PRELOAD=$FAKETIME_LIB FAKETIME=-5s timeout 10 "$IDMINT" --version >/dev/null && echo yes'
    # clock_back FORMAT LEN [ARGS...]: killed runs, then one with the clock
    # 5 s behind; its first ID must sort after the last one killed, while
    # the same clock without --mark mints below it (so the case can fail).
    clock_back() {
        local fmt=$1 len=$2
        shift 2
        kill_runs "$fmt" "$D/c.$fmt" "$D/c.$fmt.runs" "$len" "$@" && runs_ok "$D/c.$fmt.runs" >/dev/null ||
            { cat "$D/c.$fmt.runs"; exit 1; }
        last=$(awk 'NF == 3 { last = $2 } END { print last }' "$D/c.$fmt.runs")
        LD_PRELOAD=$FAKETIME_LIB FAKETIME=-5s FAKETIME_DONT_FAKE_MONOTONIC=1 \
            "$IDMINT" gen "$fmt" -n 100000 --mark "$D/c.$fmt" "$@" >"$D/c.$fmt.after" || exit 1
        fake=$(LD_PRELOAD=$FAKETIME_LIB FAKETIME=-5s FAKETIME_DONT_FAKE_MONOTONIC=1 "$IDMINT" gen "$fmt" "$@")
        first=$(head -n 1 "$D/c.$fmt.after")
        [[ "$fake" < "$last" ]] || { echo "the clock is not behind: $fake >= $last"; exit 1; }
        [[ "$last" < "$first" ]] && sort -c "$D/c.$fmt.after" && echo ok
    }
    export -f clock_back
    check "uuidv7: killed, then run with the clock 5 s behind: only IDs above all before" \
        -o ok --sh 'clock_back uuidv7 36'
    check "ulid: the same" -o ok --sh 'clock_back ulid 26'
    check "ksuid: the same" -o ok --sh 'clock_back ksuid 27'
    check "typeid: the same" -o ok --sh 'clock_back typeid 31 --prefix user'
    check "snowflake: killed, then the clock 5 s behind: refused by default, naming the mark" -s 1 \
        -e "clock moved back by [0-9]+ ms.*--mark's file" --sh '
        kill_runs snowflake "$D/c.sf" "$D/c.sf.runs" 19 --node 7
        LD_PRELOAD=$FAKETIME_LIB FAKETIME=-5s FAKETIME_DONT_FAKE_MONOTONIC=1 \
            "$IDMINT" gen snowflake --node 7 --mark "$D/c.sf"'
    check "... and with --max-rewind 7000 it waits, then mints above all before" -o ok --sh '
        last=$(awk '"'"'NF == 3 { last = $2 } END { print last }'"'"' "$D/c.sf.runs")
        first=$(LD_PRELOAD=$FAKETIME_LIB FAKETIME=-5s FAKETIME_DONT_FAKE_MONOTONIC=1 \
            "$IDMINT" gen snowflake --node 7 --max-rewind 7000 --mark "$D/c.sf" -n 1000 | head -n 1)
        [ -n "$first" ] && [ "$first" -gt "$last" ] && echo ok'
fi

finish
