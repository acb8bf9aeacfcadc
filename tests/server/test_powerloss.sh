# test_powerloss.sh - power loss: idmintd (--layout sonyflake, --reserve
# 1000, under libfaketime) is killed with SIGKILL and its state directory
# put back as a power loss can leave it: every file as it was at start-up,
# except STATE_DIR/mark, the one file fsynced before use, which keeps what is
# on disk. Then it restarts with the clock at the durable mark, then (after
# another power loss) 200 ms before it, with --max-rewind 1000 (a rewind it
# may wait out) and with the default 10 ms (one it must refuse).
#
# Each run first takes a burst: one connection, three back-to-back
# count=10000 requests (256 snowflakes per 10 ms: ~0.4 s each, longer than
# the time between the mark's writes allows for). Then either the server is
# killed at once, idle with every reply delivered (what the issue
# reproduced), or it is loaded over several HTTP connections (count=10000)
# and RESP (NEXT snowflake 100) for 1.5 s and killed under load.
#
# Checked over every ID the clients received: no snowflake repeats across
# all the runs, none is below one of an earlier run, and none has a time
# past the mark on disk when its reply arrived (loadclient --hwm; for the
# burst, the server is idle between a reply and the next request, so that
# is the mark durable when the reply was sent) nor after its run
# (idmintd(8): no ID in any reply has a time above the value that was
# durable when the reply was sent).
# Usage: bash tests/server/test_powerloss.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

require_faketime test_powerloss.sh

SD=$T_DIR/state
# sonyflake_ms ID: 39-bit time in 10 ms units since 2014-09-01T00:00:00Z,
# then an 8-bit sequence and a 16-bit node; the time of an ID is the start
# of its unit.
sonyflake_ms() {
    echo $((($1 >> 24) * 10 + 1409529600000))
}
# Each client checks every reply against the mark on disk right after it
# arrived: at or above the mark that was durable when it was sent.
HWM_CHECK=(--hwm "$SD/mark" --hwm-time 24:10:1409529600000)

# power_loss SNAPSHOT DIR: DIR as a power loss leaves it: hwm as it is now,
# every other file as in SNAPSHOT (what was never fsynced is lost; files
# created since are gone).
power_loss() {
    local keep=$T_DIR/hwm.keep
    rm -f "$keep"
    [ -e "$2/mark" ] && cp -a "$2/mark" "$keep"
    rm -rf "$2"
    cp -a "$1" "$2"
    rm -f "$2/mark"
    [ -e "$keep" ] && cp -a "$keep" "$2/mark"
}

ready() {
    curl -fs -o /dev/null "$BASE/readyz"
}

# client NAME.SIDE LOADCLIENT OPTIONS...: a client in the background (IDs
# to $T_DIR/NAME.SIDE.ids, summary to .out); its PID is appended to CLIENTS.
client() {
    local f=$T_DIR/$1
    shift
    "$LOADCLIENT" "$@" --quiet-phases --ids "$f.ids" "${HWM_CHECK[@]}" >"$f.out" 2>"$f.err" &
    CLIENTS+=($!)
    track $!
}

# run NAME idle|load [IDMINTD OPTIONS]: starts idmintd on $SD, snapshots
# $SD at once, takes a burst once /readyz says ready, then kills it (idle, or under load for 1.5 s)
# and applies a power loss. MARK is then the mark on disk.
run() {
    local name=$1 mode=$2
    shift 2
    start_server "${FAKETIME_ENV[@]}" --layout sonyflake --reserve 1000 --state-dir "$SD" "$@"
    rm -rf "$T_DIR/snap"
    cp -a "$SD" "$T_DIR/snap"
    # Behind the mark, snowflakes are refused until the clock passes it.
    wait_until 15 ready
    expect "$name: ready (/readyz 200) once the clock is past the mark" "$(ready && echo ready)" = ready
    CLIENTS=()
    client "$name.burst" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=10000' --conns 1 \
        --batches 3 --duration-ms 30000
    wait "${CLIENTS[@]}"
    local sides=(burst)
    if [ "$mode" = load ]; then
        sides+=(http resp)
        CLIENTS=()
        # count=2000: four such requests share 256 IDs per 10 ms, so each
        # completes in well under the 1.5 s before the kill.
        client "$name.http" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=2000' --conns 4 \
            --duration-ms 30000
        client "$name.resp" --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 100' --conns 2 --pipeline 8 \
            --duration-ms 30000
        sleep 1.5
    fi
    MINTED=$(metric 'idmint_ids_minted_total{format="snowflake"}')
    stop_server KILL
    # The clients see the connections close and end.
    [ "$mode" = load ] && wait "${CLIENTS[@]}"
    power_loss "$T_DIR/snap" "$SD"
    MARK=$(hwm_mark "$SD")
    local side out max
    expect "$name: killed ($mode) after minting (snowflakes minted: ${MINTED:-none})" "${MINTED:-0}" -gt 0
    expect "$name: the mark is on disk after the power loss ($SD/hwm: ${MARK:-missing})" "${MARK:-0}" -gt 0
    for side in "${sides[@]}"; do
        RUNS+=("$name.$side")
        out=$T_DIR/$name.$side.out
        expect "$name ($side): no reply carried a snowflake past the mark on disk when it arrived (loadclient --hwm: pasthwm=$(kv "$out" pasthwm) $(grep -m 1 'past the high-water mark' "$T_DIR/$name.$side.err"))" \
            "$(kv "$out" pasthwm):$(kv "$out" nohwm)" = 0:0
        # A reply cut by the kill is "truncated"; what arrived whole is checked.
        expect "$name ($side): every whole reply valid, no ID twice, each connection increasing" \
            "$(kv "$out" malformed):$(kv "$out" invalid):$(kv "$out" dups):$(kv "$out" order)" = 0:0:0:0
        expect "$name ($side): snowflakes received" "$(wc -l <"$T_DIR/$name.$side.ids")" -gt 0
        max=$(sort -n "$T_DIR/$name.$side.ids" | tail -n 1)
        [ -n "$max" ] || continue
        expect "$name ($side): no snowflake has a time past the mark on disk after the run (latest $(sonyflake_ms "$max") <= mark ${MARK:-missing})" \
            "$(sonyflake_ms "$max")" -le "${MARK:-0}"
    done
    expect "$name (burst): all three requests answered in full" "$(wc -l <"$T_DIR/$name.burst.ids")" = 30000
}

RUNS=()
# The first run, on the clock as it is; killed idle after the burst.
step_clock +0
run r1 idle
one=$(head -n 1 "$T_DIR/r1.burst.ids")
expect "the decoding here agrees with idmint inspect --layout sonyflake" \
    "$("$IDMINT" inspect --json --layout sonyflake "${one:-0}" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')" \
    = "$(sonyflake_ms "${one:-0}")"

# Restart with the clock at the durable mark; killed under load.
clock_at "$MARK"
run r2 load

# Restart 200 ms before the mark, waited out (--max-rewind 1000); killed idle.
clock_at $((MARK - 200))
run r3 idle --max-rewind 1000

# Restart 200 ms before the mark, refused until the clock passes it; killed
# under load.
clock_at $((MARK - 200))
run r4 load

# Every ID any client received, over all the runs.
all=()
for r in "${RUNS[@]}"; do
    all+=("$T_DIR/$r.ids")
done
total=$(cat "${all[@]}" | wc -l)
repeats=$(cat "${all[@]}" | sort | uniq -d | wc -l)
expect "no snowflake repeats across the power losses ($repeats of $total IDs received twice; e.g. $(cat "${all[@]}" | sort | uniq -d | head -n 3 | paste -sd ' '))" \
    "$repeats" = 0
for r in r2 r3 r4; do
    p=r$((${r#r} - 1))
    prev=$(cat "$T_DIR/$p".*.ids | sort -n | tail -n 1)
    min=$(cat "$T_DIR/$r".*.ids | sort -n | head -n 1)
    [ -n "$prev" ] && [ -n "$min" ] || continue
    expect "$r: every snowflake above every one of $p ($min > $prev)" "$( ((min > prev)) && echo yes)" = yes
done
finish
