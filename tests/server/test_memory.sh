# test_memory.sh - memory against clients that do not play along: hundreds
# of RESP connections that pipeline big requests and never read a reply,
# hundreds of multibulk frames left half-sent, and arguments past the RESP
# limits. What idmintd buffers stays within --max-buffered, goes back to the
# system when the clients leave, and everyone else is served meanwhile.
#
# Memory is read from /proc/PID/status: VmHWM (the peak resident set, so
# that a spike between two looks counts too) and VmRSS (now). The attack
# client (tests/server/attack.c) asks for a small TCP window
# (--small-window): on loopback the kernel would otherwise take megabytes
# of unread replies per connection into its own socket buffers, which
# VmRSS does not show, and the test would measure the kernel's autotuning
# instead of idmintd.
#
# In a sanitizer build (IDM_SANITIZE, which tests/CMakeLists.txt passes to
# the server tests) the resident-set bounds are scaled by 3/2: ASan's
# redzones and shadow memory add to every buffer, and its runtime and its
# quarantine of freed blocks (kept to 16 MB here) to the base. Measured on
# the code before --max-buffered (5da0df6), the peaks were 1.05 to 1.4
# times the plain build's (773 -> 812 MiB, 146 -> 199 MiB), idle 13 MiB
# against 3.5 MiB; with --max-buffered (8f3721b) 57 -> 97 MiB and 6 -> 20
# MiB. The check that memory goes back to the system is
# skipped there, and said so: ASan's allocator keeps what is freed rather
# than returning it (malloc_trim does not reach it).
# Usage: bash tests/server/test_memory.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
MIB=1024 # KiB
PREFIX=$(printf 'a%.0s' $(seq 1 63))
ASAN_SMALL_QUARANTINE=(--env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16")

# below EVIDENCE KIB LIMIT_MIB: a resident-set bound, scaled by 3/2 in a
# sanitizer build.
scale=2
if [ -n "${IDM_SANITIZE:-}" ]; then
    scale=3
    echo "note: a -DIDM_SANITIZE=$IDM_SANITIZE build: resident-set bounds x 3/2, and the return to the system not checked"
fi
below() {
    local limit=$(($3 * scale / 2))
    echo "$1: $(($2 / MIB)) MiB (at most $limit MiB)"
    expect "$1 ($(($2 / MIB)) MiB; at most $limit MiB)" "$2" -lt $((limit * MIB))
}

# settle METRIC: waits until METRIC has not moved for a second (at most
# 30 s): the server has done what it will for clients that do not read.
settle() {
    local prev='' cur
    for _ in $(seq 1 30); do
        cur=$(metric "$1")
        [ -n "$cur" ] && [ "$cur" = "$prev" ] && return 0
        prev=$cur
        sleep 1
    done
    return 1
}

# A multibulk frame of about 1 MiB made of arguments that the old limits
# (64 arguments of 64 KiB each) allowed: NEXT and nineteen arguments of
# 50,000 bytes, sent up to about 490 KB and never finished.
HALF_FRAME=(--send '*20\r\n$4\r\nNEXT\r\n')
for _ in $(seq 1 9); do
    HALF_FRAME+=(--send '$50000\r\n' --fill a 50000 --send '\r\n')
done
HALF_FRAME+=(--send '$50000\r\n' --fill a 40000)

# --- RESP limits: 32 arguments of at most 1024 bytes ---------------------------------

start_server
# idmintd(8): "So do frames beyond the limits, which are sized for the
# commands served (whose arguments are under 100 bytes): at most 32
# arguments of at most 1024 bytes each". docs/idmintd.md: "a RESP frame
# declaring more is refused at its header."
expect "RESP limits: at most 32 arguments of at most 1024 bytes each (an argument of 1024 bytes is served)" \
    "$(redis-cli -p "$RESP_PORT" ECHO "$(printf 'e%.0s' $(seq 1 1024))" | wc -c)" = 1025
params=()
for i in $(seq 1 30); do
    params+=("p$i")
done
check "RESP limits: at most 32 arguments (CONFIG GET and 30 parameters are served)" -n 60 \
    -- redis-cli -p "$RESP_PORT" CONFIG GET "${params[@]}"
for bad in '*3\r\n$4\r\nNEXT\r\n$6\r\ntypeid\r\n$1025\r\n' '*3\r\n$4\r\nNEXT\r\n$6\r\ntypeid\r\n$1000000\r\n' \
    '*33\r\n' '*64\r\n$4\r\nPING\r\n'; do
    expect "frames beyond the limits get a -ERR Protocol error reply and the connection closes; a frame declaring more is refused at its header ($bad, the rest never sent)" \
        "$(printf "$bad" | exchange "$RESP_PORT" 5 | paste -sd ' ')" =~ '^-ERR Protocol error: [^ ].* closed$'
done
check "the RESP port serves on after the refusals" -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
stop_server TERM
expect "exits 0 after the RESP limits" "$SRV_STATUS" = 0

# --- 300 half-sent frames ---------------------------------------------------------------

# half_frames EVIDENCE ATTACK-ARGS...: 300 connections each send the start
# of a frame and read the reply once they have sent it (or the server
# refused it); on a fresh server, whose peak resident set is then checked.
half_frames() {
    local what=$1 out=$T_DIR/half.out
    shift
    start_server "${ASAN_SMALL_QUARANTINE[@]}"
    redis-cli -p "$RESP_PORT" NEXT ulid 5 >/dev/null
    "$ATTACK" "127.0.0.1:$RESP_PORT" --conns 300 "$@" --read after --hold-ms 15000 \
        --expect '-ERR Protocol error' >"$out" 2>&1
    echo "$what: $(grep '^summary' "$out")"
    expect "300 half-sent frames ($what): a frame declaring more is refused at its header: each gets -ERR Protocol error ($(grep '^reply' "$out" | head -n 3 | paste -sd ';'))" \
        "$(kv "$out" matched)" = 300
    expect "... and the connection closes" "$(kv "$out" closed)" = 300
    below "300 half-sent frames ($what): input is held only while unanswered (at most 33 KiB of Redis command): the peak resident set stays below 64 MiB" \
        "$(peak_kib "$SRV_PID")" 64
    check "... and the RESP port serves on" -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
    stop_server TERM
    expect "exits 0 after the half-sent frames ($what)" "$SRV_STATUS" = 0
}
half_frames '*20, arguments of $50000' "${HALF_FRAME[@]}"
half_frames '*3 NEXT typeid $1000000' --send '*3\r\n$4\r\nNEXT\r\n$6\r\ntypeid\r\n$1000000\r\n' --fill a 500000

# --- 400 pipelining clients that never read -------------------------------------------

# Each of 400 RESP connections pipelines NEXT typeid 10000 with a 63-byte
# prefix (about 900 frames, 100 KB, asking for 900 MB of replies) and
# reads nothing. With --max-buffered 16M a connection's share is 40 KiB:
# about that much of replies each, and of the requests waiting behind them.
start_server "${ASAN_SMALL_QUARANTINE[@]}" --max-buffered 16M
redis-cli -p "$RESP_PORT" NEXT typeid 10000 "$PREFIX" >/dev/null
rss_before=$(rss_kib "$SRV_PID")
out=$T_DIR/pipe.out
"$ATTACK" "127.0.0.1:$RESP_PORT" --conns 400 --small-window \
    --fill "*4\r\n\$4\r\nNEXT\r\n\$6\r\ntypeid\r\n\$5\r\n10000\r\n\$63\r\n$PREFIX\r\n" 100000 \
    --hold-ms 120000 >"$out" 2>&1 &
attack=$!
track "$attack"
wait_until 30 grep -q '^opened' "$out"
# idmintd(8), --max-buffered: "a connection whose unwritten replies and input reach half
# its share is not read until replies are written ... A client that asks and
# does not read therefore holds about one share of replies, whatever it
# asked"; "Memory is given back to the system once the bytes buffered fall
# well below their peak."
http "400 clients that pipeline and never read: /healthz is answered during the attack" -o ok -- /healthz
check "... and a normal client's NEXT ulid 5" -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
settle 'idmint_ids_minted_total{format="typeid"}'
http "... /healthz once the server has done what it will for them" -o ok -- /healthz
check "... and NEXT ulid 5" -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
buffered_in=$(metric 'idmint_buffered_bytes{direction="in"}')
buffered_out=$(metric 'idmint_buffered_bytes{direction="out"}')
echo "idmint_buffered_bytes during the attack: in $buffered_in, out $buffered_out"
expect "idmint_buffered_bytes shows what is buffered: the replies waiting, about one share each, stay within --max-buffered 16M" \
    "$buffered_out" -le $((16 << 20))
# 401 connections: the attack's and the one reading /metrics.
expect "... and the input each holds is at most 64 KiB" "$buffered_in" -le $((401 << 16))
expect "a connection whose unwritten replies and input reach half its share is not read until replies are written (not closed: all 400 are open)" \
    "$(metric idmint_connections_open)" -ge 400
below "--max-buffered 16M: a client that asks and does not read holds about one share, whatever it asked: 400 of them (900 MB asked each) keep the peak resident set below 160 MiB" \
    "$(peak_kib "$SRV_PID")" 160
kill -TERM "$attack"
wait "$attack"
echo "400 pipelining clients: $(grep '^summary' "$out")"
expect "the attack client opened its 400 connections" "$(kv "$out" conns):$(kv "$out" connect)" = 400:0
# back_down: the resident set is back within 32 MiB of before the attack.
back_down() {
    [ "$(rss_kib "$SRV_PID")" -lt $((rss_before + 32 * MIB)) ]
}
if [ $scale = 2 ]; then
    wait_until 10 back_down
    expect "Memory is given back to the system once the bytes buffered fall well below their peak: within 10 s of the clients leaving (RSS $((rss_before / MIB)) MiB before, at most +32 MiB after)" \
        "$(rss_kib "$SRV_PID")" -lt $((rss_before + 32 * MIB))
else
    echo "skipped under the sanitizer: memory goes back to the system ($(($(rss_kib "$SRV_PID") / MIB)) MiB now)"
fi
only_this() {
    [ "$(metric idmint_connections_open)" = 1 ]
}
wait_until 10 only_this
expect "every attack connection is gone (open connections besides this one)" "$(metric idmint_connections_open)" = 1
check "NEXT ulid 5 after the attack" -L "$ULID" -n 5 -- redis-cli -p "$RESP_PORT" NEXT ulid 5
stop_server TERM
expect "exits 0 after the pipelining clients" "$SRV_STATUS" = 0
finish
