# test_hlc.sh - `idmint hlc now|update|inspect` (man/idmint.1, "hlc":
# idmint hlc now [--at UNIX_MS] [--state PATH], idmint hlc
# update [--max-offset MS] STAMP, idmint hlc inspect [--json] STAMP with the
# members stamp, wall_ms, time, logical; issue 13).
# Usage: bash tests/cli/test_hlc.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

HEX='[0-9a-f]{16}'
T0=1764590000000 # 2025-12-01T11:53:20.000Z
S0=019ad9c297800000
D=$T_DIR
export D
# shellcheck source=tests/faketime.sh
. "$(dirname "${BASH_SOURCE[0]}")/../faketime.sh"

# ---- formats -----------------------------------------------------------------

check "hlc now prints one stamp: 16 lowercase hex digits" \
    -O "$HEX" -n 1 -- "$IDMINT" hlc now
check "hlc now -n N prints N stamps" -n 5 -L "$HEX" -- "$IDMINT" hlc now -n 5
check "--at uses that wall time: the first stamp is at_ms << 16" \
    -o "$S0" -- "$IDMINT" hlc now --at "$T0"
check "-n with a frozen clock counts the logical part" \
    -o "$S0"$'\n'019ad9c297800001$'\n'019ad9c297800002 -- "$IDMINT" hlc now --at "$T0" -n 3
check "stamps of one run are strictly increasing (string order)" \
    -o ok --sh '"$IDMINT" hlc now -n 20000 >"$D/n" && sort -c -u "$D/n" && echo ok'
check "a stamp's wall_ms is the clock's time (within 5 s)" -o ok --sh '
    s=$("$IDMINT" hlc now); now=$(date +%s%3N); w=$((16#${s:0:12}))
    [ $((now - w)) -ge 0 ] && [ $((now - w)) -lt 5000 ] && echo ok'
check "--at 0 is the epoch (the first stamp is after stamp 0, the clock's empty state)" \
    -o 0000000000000001 -- "$IDMINT" hlc now --at 0

# ---- --state: successive runs ------------------------------------------------

check "--state: a second run at the same time counts on" \
    -o "$S0 019ad9c297800001 019ad9c297800002" --sh '
    rm -f "$D/s1"; for i in 1 2 3; do "$IDMINT" hlc now --at '"$T0"' --state "$D/s1"; done | paste -sd " "'
check "--state: --at going back 10 s keeps the order (wall_ms stays, logical counts)" \
    -o "019ad9c297800003" -- "$IDMINT" hlc now --at $((T0 - 10000)) --state "$D/s1"
check "--state: the clock moving on restarts logical at 0; stepping back then counts on" \
    -o "019ad9c297840000 019ad9c297840001" --sh '
    echo "$("$IDMINT" hlc now --at '"$((T0 + 4))"' --state "$D/s1")" "$("$IDMINT" hlc now --at '"$((T0 - 50000))"' --state "$D/s1")"'
check "--state: the file holds the last stamp and a newline, mode 0600" \
    -o "019ad9c297840001 600 17" --sh 'printf "%s %s %s\n" "$(head -c 16 "$D/s1")" "$(stat -c %a "$D/s1")" "$(stat -c %s "$D/s1")"'
check "--state with -n: the last of the batch is kept" \
    -o ok --sh 'rm -f "$D/s2"; l=$("$IDMINT" hlc now --state "$D/s2" -n 5000 | tail -n 1); [ "$(head -c 16 "$D/s2")" = "$l" ] && echo ok'
check "without --state, two runs at one time print the same stamp (one run is one clock)" \
    -o "$S0 $S0" --sh 'echo $("$IDMINT" hlc now --at '"$T0"') $("$IDMINT" hlc now --at '"$T0"')'

if [ -z "${IDM_SANITIZE:-}" ] && [ -e "$FAKETIME_LIB" ]; then
    check "--state under a clock stepped back 3 s (libfaketime): still after the last stamp" \
        -o ok --sh '
        rm -f "$D/s3"
        a=$("$IDMINT" hlc now --state "$D/s3" -n 3 | tail -n 1)
        b=$(LD_PRELOAD='"$FAKETIME_LIB"' FAKETIME="-3s" FAKETIME_DONT_FAKE_MONOTONIC=1 "$IDMINT" hlc now --state "$D/s3")
        c=$(LD_PRELOAD='"$FAKETIME_LIB"' FAKETIME="-3s" FAKETIME_DONT_FAKE_MONOTONIC=1 "$IDMINT" hlc now --state "$D/s3")
        fake=$(LD_PRELOAD='"$FAKETIME_LIB"' FAKETIME="-3s" FAKETIME_DONT_FAKE_MONOTONIC=1 "$IDMINT" hlc now)
        [[ "$a" < "$b" && "$b" < "$c" && "$fake" < "$a" ]] && [ "${a:0:12}" = "${c:0:12}" ] && echo ok'
fi

# ---- --state: concurrent runs --------------------------------------------------

check "--state: 4 processes x 50 runs in parallel: all distinct, each process's increasing" \
    -o ok --sh '
    rm -f "$D/s4"
    for p in 1 2 3 4; do
        ( for i in $(seq 50); do "$IDMINT" hlc now --state "$D/s4" || exit 1; done >"$D/p$p" ) &
    done
    wait
    for p in 1 2 3 4; do [ "$(wc -l <"$D/p$p")" = 50 ] && sort -c -u "$D/p$p" || exit 1; done
    [ "$(cat "$D"/p[1-4] | sort -u | wc -l)" = 200 ] || exit 1
    [ "$(head -c 16 "$D/s4")" = "$(cat "$D"/p[1-4] | sort | tail -n 1)" ] && echo ok'
check "--state: concurrent runs with a frozen clock: 200 consecutive logical values" \
    -o ok --sh '
    rm -f "$D/s5"
    for p in 1 2 3 4; do
        ( for i in $(seq 50); do "$IDMINT" hlc now --at '"$T0"' --state "$D/s5"; done >"$D/q$p" ) &
    done
    wait
    [ "$(cat "$D"/q[1-4] | sort -u | wc -l)" = 200 ] && [ "$(head -c 16 "$D/s5")" = 019ad9c2978000c7 ] && echo ok'

# ---- --state: files it refuses -----------------------------------------------

check "--state refuses a symbolic link" -s 1 -e "^idmint: state file .*s6: is a symbolic link|symbolic link" \
    --sh 'ln -sf "$D/target" "$D/s6"; "$IDMINT" hlc now --state "$D/s6"'
check "--state refuses a file others may write" -s 1 -e "writable by its group or by others" \
    --sh 'printf "%s\n" '"$S0"' >"$D/s7"; chmod 622 "$D/s7"; "$IDMINT" hlc now --state "$D/s7"'
check "--state refuses a file that does not hold a stamp, and leaves it alone" -s 1 \
    -o 'garbage' -e "does not hold an hlc stamp" \
    --sh 'echo garbage >"$D/s8"; chmod 600 "$D/s8"; "$IDMINT" hlc now --state "$D/s8"; rc=$?; cat "$D/s8"; exit $rc'
check "--state refuses a directory" -s 1 -e "state file" -- "$IDMINT" hlc now --state "$D"

# ---- update -------------------------------------------------------------------

check "update: a stamp from the past gives the clock's time" \
    -o 019ad9c297800000 -- "$IDMINT" hlc update --at "$T0" 019ad9c000000005
check "update: a stamp 300 ms ahead is merged: its wall_ms, logical + 1" \
    -o 019ad9c298ac0008 -- "$IDMINT" hlc update --at "$T0" 019ad9c298ac0007
check "update: exactly 500 ms ahead (the default limit) is accepted" \
    -o 019ad9c299740001 -- "$IDMINT" hlc update --at "$T0" 019ad9c299740000
check "update: 501 ms ahead is refused by default: exit 1, says how far and the limit" -s 1 -o '' \
    -e "^idmint: 019ad9c299750000: remote clock is 501 ms ahead of the local clock, more than the limit of 500 ms" \
    -- "$IDMINT" hlc update --at "$T0" 019ad9c299750000
check "update: --max-offset 5000 accepts 2 s ahead" \
    -o 019ad9c29f500001 -- "$IDMINT" hlc update --at "$T0" --max-offset 5000 019ad9c29f500000
check "update: --max-offset 0 refuses 1 ms ahead" -s 1 -e "1 ms ahead.*limit of 0 ms" \
    -- "$IDMINT" hlc update --at "$T0" --max-offset 0 019ad9c297810000
check "update: the result is after the received stamp and after the state file's" \
    -o "019ad9c297800005 019ad9c297800006" --sh '
    rm -f "$D/u"; "$IDMINT" hlc now --at '"$T0"' --state "$D/u" -n 5 >/dev/null
    a=$("$IDMINT" hlc update --at '"$T0"' --state "$D/u" 019ad9c000000000)
    echo "$a $(head -c 16 "$D/u" | xargs "$IDMINT" hlc update --at '"$T0"')"'
check "update: a refused stamp leaves the state file unchanged" -o "$S0" --sh '
    rm -f "$D/u2"; "$IDMINT" hlc now --at '"$T0"' --state "$D/u2" >/dev/null
    "$IDMINT" hlc update --at '"$T0"' --state "$D/u2" 019ad9d000000000 2>/dev/null; head -c 16 "$D/u2"; echo'
check "update: a real-clock round trip: the result is after what was received" -o ok --sh '
    s=$("$IDMINT" hlc now); r=$("$IDMINT" hlc update "$s"); [[ "$r" > "$s" ]] && echo ok'
check "update: a malformed stamp is an invalid input (1) with the position" -s 1 -o '' \
    -e "^idmint: 019AD9C297800000: a stamp is lowercase hex; position 4 is not \(0-9, a-f\)" \
    -- "$IDMINT" hlc update 019AD9C297800000
check "update: a stamp of the wrong length says so" -s 1 -e "must be 16 characters, got 15" \
    -- "$IDMINT" hlc update 019ad9c29780000

# ---- inspect ------------------------------------------------------------------

check "inspect: stamp, wall_ms, time (RFC 3339 with ms) and logical" \
    -o "stamp: 019ad9c297800001
wall_ms: 1764590000000
time: 2025-12-01T11:53:20.000Z
logical: 1" -- "$IDMINT" hlc inspect 019ad9c297800001
check "inspect: a blank line between stamps" -n 9 -- "$IDMINT" hlc inspect "$S0" 019ad9c297800001
check "inspect --json: one object per stamp with stamp, wall_ms, time, logical" \
    -o '{"stamp": "019ad9c2978003e8", "wall_ms": 1764590000000, "time": "2025-12-01T11:53:20.000Z", "logical": 1000}' \
    -- "$IDMINT" hlc inspect --json 019ad9c2978003e8
check "inspect --json: valid JSON (jq), numbers as numbers" -o "1764590000000 65535 true" --sh '
    "$IDMINT" hlc inspect --json 019ad9c29780ffff | jq -r "\"\(.wall_ms) \(.logical) \(.stamp == \"019ad9c29780ffff\")\""'
check "inspect --json: the largest stamp's time in six-digit-year form" \
    -O '\{"stamp": "ffffffffffffffff", "wall_ms": 281474976710655, "time": "\+010889-08-02T05:31:50.655Z", "logical": 65535\}' \
    -- "$IDMINT" hlc inspect --json ffffffffffffffff
check "inspect: mixed valid and invalid: the valid ones printed, exit 1" -s 1 -n 9 \
    -e "^idmint: nope: " -- "$IDMINT" hlc inspect "$S0" nope 019ad9c297800001
check "inspect --json: an invalid input gives {input, error}, the rest continue, exit 1" -s 1 \
    -o '{"stamp": "019ad9c297800000", "wall_ms": 1764590000000, "time": "2025-12-01T11:53:20.000Z", "logical": 0}
{"input": "0x9ad9c297800000", "error": "a stamp is lowercase hex; position 2 is not (0-9, a-f)"}
{"stamp": "019ad9c297800001", "wall_ms": 1764590000000, "time": "2025-12-01T11:53:20.000Z", "logical": 1}' \
    -- "$IDMINT" hlc inspect --json "$S0" 0x9ad9c297800000 019ad9c297800001
check "inspect: stamps from stdin, one per line, when none are given (CRLF too)" \
    -i "$S0"$'\r\n'$'\n'019ad9c297800001$'\n' -n 2 -L '\{"stamp": .*\}' -- "$IDMINT" hlc inspect --json
check "inspect round-trips now's stamps" -o ok --sh '
    "$IDMINT" hlc now -n 3 --at '"$T0"' | "$IDMINT" hlc inspect --json | jq -r .stamp | paste -sd " " | grep -qx "019ad9c297800000 019ad9c297800001 019ad9c297800002" && echo ok'
check "a closed stdout ends quietly (status 0)" -o "$S0" --sh '"$IDMINT" hlc now --at '"$T0"' -n 10000000 | head -n 1'

# ---- usage errors and help -----------------------------------------------------

check "hlc without a command is a usage error (2)" -s 2 -e "missing hlc command" -- "$IDMINT" hlc
check "an unknown hlc command is a usage error" -s 2 -e "unknown hlc command 'later'" -- "$IDMINT" hlc later
check "an unknown option is a usage error" -s 2 -e "unknown option '--frob'" -- "$IDMINT" hlc now --frob
check "--json does not apply to now" -s 2 -e "'--json' does not apply to 'hlc now'" -- "$IDMINT" hlc now --json
check "--max-offset does not apply to now" -s 2 -e "does not apply" -- "$IDMINT" hlc now --max-offset 5
check "-n does not apply to update" -s 2 -e "does not apply" -- "$IDMINT" hlc update -n 2 "$S0"
check "now takes no operands" -s 2 -e "takes no arguments" -- "$IDMINT" hlc now "$S0"
check "update needs a STAMP" -s 2 -e "needs the STAMP" -- "$IDMINT" hlc update
check "update takes one STAMP" -s 2 -e "takes one STAMP, got 2" -- "$IDMINT" hlc update "$S0" "$S0"
check "a bad --at is a usage error" -s 2 -e "invalid --at 'soon'" -- "$IDMINT" hlc now --at soon
check "a negative --at is a usage error" -s 2 -e "at" -- "$IDMINT" hlc now --at -5
check "a bad --max-offset is a usage error naming the range" -s 2 -e "max-offset" \
    -- "$IDMINT" hlc update --max-offset 1x "$S0"
check "a bad -n is a usage error" -s 2 -e "\-n" -- "$IDMINT" hlc now -n many
check "idmint hlc --help" -O "Usage: idmint hlc now.*" -- "$IDMINT" hlc --help
check "idmint help hlc prints the same help" -o "$("$IDMINT" hlc --help)" -- "$IDMINT" help hlc
check "idmint --help lists hlc" -O '.*  hlc now\|update\|inspect .*' -- "$IDMINT" --help

finish
