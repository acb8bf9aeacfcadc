# test_statedir_parts.sh - the state directory survives partial deletion,
# and nothing is written before it is known to be usable (idmintd(8),
# FILES): STATE_DIR/mark removed under a running, loaded server is made
# again under the lock already held (every time-ordered format goes on
# being minted, /readyz stays 200, the mark is back and not below what was
# handed out); STATE_DIR/lock removed is noticed and made again, and a
# second idmintd on the directory is still refused (the exclusion is a lock
# on the directory itself), so the first's mark is never lowered; a lock
# file or directory made again and held by another process (as another
# idmintd would) stops the server minting, without writing or shrinking
# the mark at its stop; on a full
# filesystem (a small tmpfs, mounted here as root) the error says "No space
# left on device" and service comes back once there is room; a mark past
# the layout's end refuses the start, naming the file and how to clear it,
# and leaves the file byte for byte as it was; an --epoch whose layout ends
# before 1970 is refused as such.
# Usage: bash tests/server/test_statedir_parts.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'
UUID='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
KSUID='[0-9A-Za-z]{27}'
TYPEID='user_[0-7][0-9a-hjkmnp-tv-z]{25}'

ready() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ]
}
not_ready() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 503 ]
}
# past UNIX_MS: the real clock has passed it.
past() {
    [ "$(now_ms)" -gt "$1" ]
}
# sf_ms ID: a (twitter) snowflake's time in Unix ms.
sf_ms() {
    "$IDMINT" inspect --json "$1" | grep -Eo '"unix_ms": -?[0-9]+' | grep -Eo -- '-?[0-9]+$'
}
# Every time-ordered format, one request each.
mints_all() {
    http "$1: snowflakes" -L "$SNOWFLAKE" -n 2 -- '/v1/ids/snowflake?count=2'
    http "$1: UUIDv7" -L "$UUID" -n 2 -- '/v1/ids/uuidv7?count=2'
    http "$1: ULID" -L "$ULID" -n 2 -- '/v1/ids/ulid?count=2'
    http "$1: KSUID" -L "$KSUID" -n 2 -- '/v1/ids/ksuid?count=2'
    http "$1: TypeID" -L "$TYPEID" -n 2 -- '/v1/ids/typeid?prefix=user&count=2'
}

# --- STATE_DIR/mark removed under load ---------------------------------------------------

SD=$T_DIR/state
start_server --reserve 1000 --state-dir "$SD"
mints_all "a fresh server mints every time-ordered format"
load_out=$T_DIR/load.out
"$LOADCLIENT" --http "127.0.0.1:$HTTP_PORT" --path '/v1/ids/snowflake?count=5' --path '/v1/ids/uuidv7?count=5' \
    --path '/v1/ids/ulid?count=5' --path '/v1/ids/ksuid?count=5' --path '/v1/ids/typeid?prefix=user&count=5' \
    --conns 5 --interval-ms 2 --duration-ms 60000 --quiet-phases >"$load_out" 2>"$T_DIR/load.err" &
load=$!
track $load
wait_until 10 grep -q . <(curl -s "$BASE/v1/ids/snowflake")
rm "$SD/mark"
durable=$(durable_ms)
wait_until 15 past $((durable + 2000))
expect "(the checks below come more than 2 s past the mark durable at the removal: $(now_ms) > $durable + 2000)" \
    "$(now_ms)" -gt $((durable + 2000))
http "STATE_DIR/mark removed under load, 2 s past the mark: /readyz is 200" -- /readyz
mints_all "... every time-ordered format is still minted"
kill -TERM $load
wait $load
load_rc=$?
expect "... the load's replies were whole, valid, unique and increasing" "$load_rc:$(head -c 300 "$T_DIR/load.err")" = 0:
expect "... served throughout" "$(kv "$load_out" s200)" -gt 200
expect "... never refused (no 503 nor other error)" \
    "$(kv "$load_out" s503):$(kv "$load_out" s4xx):$(kv "$load_out" sother)" = 0:0:0
last=$(curl -s "$BASE/v1/ids/snowflake")
last_ms=$(sf_ms "${last:-0}")
mark=$(hwm_mark "$SD")
expect "... STATE_DIR/mark is back, with a mark not below what was handed out (${mark:-none} >= ${last_ms:-?})" \
    "${mark:-0}" -ge "${last_ms:-1}"
expect "... and not below the durable mark (${mark:-none} >= $(durable_ms))" \
    "${mark:-0}" -ge "$(durable_ms)"
check "... the log says it was made again (once)" -o 1 -- grep -c "$SD/mark was removed: made it again" "$SRV_LOG"
check "... and never that another idmintd holds the directory" -o 0 -s 1 -- grep -ci 'another idmintd' "$SRV_LOG"
stop_server TERM
expect "... it stops cleanly (exit 0)" "$SRV_STATUS" = 0

# --- STATE_DIR/lock removed ---------------------------------------------------------------

SD=$T_DIR/state_lock
start_server --reserve 1000 --state-dir "$SD" --node-registry "$T_DIR/nodes_lock"
first_pid=$SRV_PID
http "a server for the lock case mints" -L "$SNOWFLAKE" -n 100 -- '/v1/ids/snowflake?count=100'
# Idle now: the first writes a mark only when it mints.
durable=$(durable_ms)
rm "$SD/lock"
second_log=$T_DIR/second.log
"$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off --state-dir "$SD" --node-registry "$T_DIR/nodes_lock" \
    >"$second_log" 2>&1 &
second=$!
track $second
second_done() { ! running $second || grep -q 'ready (pid' "$second_log"; }
wait_until 10 second_done
second_ran=no
running $second && second_ran=yes
expect "STATE_DIR/lock removed: a second idmintd on the directory is refused (it did not start)" "$second_ran" = no
check "... saying the directory is in use by another idmintd" -O ".*state directory $SD is in use by another idmintd.*" \
    -- grep 'in use by another' "$second_log"
mark=$(hwm_mark "$SD")
expect "... the first's mark is not lowered by the attempt (${mark:-none} >= $durable)" "${mark:-0}" -ge "$durable"
# Past the first's mark, a request makes it write a higher one: a second
# that read the mark before would, at its stop, leave its own, lower.
wait_until 5 past "$durable"
http "... the first mints past its mark" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
durable2=$(durable_ms)
expect "(... so its durable mark rose: $durable2 > $durable)" "${durable2:-0}" -gt "$durable"
last=$(curl -s "$BASE/v1/ids/snowflake")
last_ms=$(sf_ms "${last:-0}")
kill -TERM $second 2>/dev/null
wait $second
mark=$(hwm_mark "$SD")
expect "... the first's mark is not lowered once the second has stopped either (${mark:-none} >= $durable2)" \
    "${mark:-0}" -ge "${durable2:-1}"
expect "... nor below what the first handed out (${mark:-none} >= ${last_ms:-?})" "${mark:-0}" -ge "${last_ms:-1}"
wait_until 5 test -e "$SD/lock"
check "... STATE_DIR/lock is back, with the first's pid" -o "$first_pid" -- cat "$SD/lock"
check "... the log says it was made again" -O ".*$SD/lock was removed: made it again.*" -- grep 'lock was removed' "$SRV_LOG"
check "... a third idmintd is refused too" -s 1 -- timeout 10 "$IDMINTD" --http "127.0.0.1:$(random_port)" \
    --resp off --state-dir "$SD" --node-registry "$T_DIR/nodes_lock"
http "... the first stays ready" -- /readyz
http "... and serves" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
last=$(curl -s "$BASE/v1/ids/snowflake")
last_ms=$(sf_ms "${last:-0}")
stop_server TERM
expect "... the first stops cleanly (exit 0)" "$SRV_STATUS" = 0
mark=$(hwm_mark "$SD")
expect "... leaving a mark not below what it handed out (${mark:-none} >= ${last_ms:-?})" "${mark:-0}" -ge "${last_ms:-1}"

# --- STATE_DIR/lock, or the directory, taken by another process -------------------------
# As another idmintd would (an older one locks only the file): flock(1)
# makes it again and holds a lock on it. The running one learns that
# another uses its directory: it stops minting past its durable mark, and
# does not shrink (or write) the mark at its stop.

# hold_new PATH file|dir: removes PATH and has flock(1) make it again and
# lock it. The running server may be first to make it again: then flock -n
# gives up at once, and it is tried again.
held() { [ -e "$T_DIR/held" ] || ! running "$holder"; }
hold_new() {
    local _
    rm -f "$T_DIR/held"
    for _ in 1 2 3 4 5; do
        rm -rf "$1"
        [ "$2" = dir ] && mkdir "$1" 2>/dev/null
        flock -n "$1" sh -c ": >'$T_DIR/held'; exec sleep 60" &
        holder=$!
        track $holder
        wait_until 5 held
        [ -e "$T_DIR/held" ] && return 0
    done
    return 1
}

# taken NAME PATH file|dir WHY: a server on $SD, then PATH made again and
# held by another process: the server is not ready, saying WHY (an ERE),
# and past its durable mark refuses snowflakes and UUIDv7 naming the other
# idmintd. It is left running; mark is what STATE_DIR/mark then holds.
taken() {
    start_server --reserve 1000 --state-dir "$SD" --node-registry "$T_DIR/nodes_${SD##*/}"
    http "$1: a server mints" -L "$SNOWFLAKE" -n 100 -- '/v1/ids/snowflake?count=100'
    check "$1: (another process holds a new $2)" -- hold_new "$2" "$3"
    wait_until 5 not_ready
    http "$1: /readyz is 503, saying another idmintd holds it" -s 503 -O ".*$4.*" -- /readyz
    check "$1: ... logged" -O ".*$4.*" -- grep -m 1 'another idmintd' "$SRV_LOG"
    mark=$(hwm_mark "$SD")
    local durable
    durable=$(durable_ms)
    wait_until 5 past "$durable"
    http "$1: past its durable mark, snowflakes get 503 naming it" -s 503 -O '.*another idmintd.*' -- /v1/ids/snowflake
    http "$1: ... and UUIDv7 too" -s 503 -O '.*another idmintd.*' -- /v1/ids/uuidv7
}

SD=$T_DIR/state_taken
taken "STATE_DIR/lock taken by another process" "$SD/lock" file \
    "$SD/lock was replaced, and another idmintd holds the new one"
check "... the mark file is left as it was (no more writes)" -o "$mark" -- hwm_mark "$SD"
stop_server TERM
expect "... it still stops cleanly (exit 0)" "$SRV_STATUS" = 0
check "... without shrinking the mark at its stop" -o "$mark" -- hwm_mark "$SD"
kill "$holder" 2>/dev/null

SD=$T_DIR/state_taken_dir
taken "the state directory replaced by one another process holds" "$SD" dir \
    "the state directory $SD was replaced, and another idmintd holds the new one"
stop_server TERM
expect "... it still stops cleanly (exit 0)" "$SRV_STATUS" = 0
check "... having written nothing in the other's directory" -o '' -- ls -A "$SD"
kill "$holder" 2>/dev/null

# --- a full filesystem ----------------------------------------------------------------------
# A tmpfs of 1 MiB as the state directory's parent, filled up; STATE_DIR/mark
# removed then cannot be made again. Root is needed to mount (CI runs as
# root): without it, or if the mount is refused, that is a failure here, not
# a skip.

MNT=$T_DIR/small
mkdir "$MNT"
# The processes that may hold files there go first.
unmount_small() {
    kill_tracked
    mountpoint -q "$MNT" && umount "$MNT"
    cleanup
}
trap unmount_small EXIT
check "the full-filesystem case runs as root (id -u is 0), to mount a tmpfs" -o 0 -- id -u
if ! check "... and a small tmpfs can be mounted (mount -t tmpfs -o size=1m)" -- \
    mount -t tmpfs -o size=1m,mode=0700 idmint-test "$MNT"; then
    finish
fi
SD=$MNT/state
start_server --reserve 1000 --state-dir "$SD" --node-registry "$T_DIR/nodes_full"
http "a server whose state directory is on a small tmpfs is ready" -- /readyz
dd if=/dev/zero of="$MNT/fill" bs=64k >/dev/null 2>&1
check "... the filesystem is then full (a new file cannot get a block)" -s 1 -- dd if=/dev/zero of="$MNT/probe" bs=4k count=1
rm -f "$MNT/probe"
http "... full, it still mints (the mark's block was allocated)" -L "$SNOWFLAKE" -n 1000 -- '/v1/ids/snowflake?count=1000'
rm "$SD/mark"
wait_until 10 not_ready
http "STATE_DIR/mark removed on a full filesystem: /readyz is 503 and says No space left on device" -s 503 \
    -O '.*No space left on device.*' -- /readyz
check "... so does the log" -O '.*No space left on device.*' -- grep -m 1 'No space left on device' "$SRV_LOG"
check "... which does not say another idmintd holds it" -o 0 -s 1 -- grep -ci 'another idmintd' "$SRV_LOG"
rm "$MNT/fill"
wait_until 10 ready
http "... space freed: ready again by itself" -- /readyz
http "... and serving" -L "$SNOWFLAKE" -n 1 -- /v1/ids/snowflake
last=$(curl -s "$BASE/v1/ids/snowflake")
last_ms=$(sf_ms "${last:-0}")
mark=$(hwm_mark "$SD")
expect "... with STATE_DIR/mark back, not below what was handed out (${mark:-none} >= ${last_ms:-?})" \
    "${mark:-0}" -ge "${last_ms:-1}"
stop_server TERM
expect "... it stops cleanly (exit 0)" "$SRV_STATUS" = 0
umount "$MNT"

# --- a mark past the layout's end -------------------------------------------------------------
# 2100-01-01T00:00:00Z: past the twitter layout's last unit (2080), within
# 48 bits (so not taken for a damaged file).

SD=$T_DIR/state_future
mkdir -m 0700 "$SD"
future=4102444800000
le=$(printf '%016x' $future | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\\x\8\\x\7\\x\6\\x\5\\x\4\\x\3\\x\2\\x\1/')
# shellcheck disable=SC2059 # the escapes are the point
printf "IDMHWM01$le" >"$SD/hwm"
check "(the mark file of idmintd before 0.3 says $future)" -o $future --sh "od -An -t d8 -j 8 -N 8 '$SD/hwm' | tr -d ' '"
sum=$(md5sum <"$SD/hwm")
for attempt in first second; do
    timeout 15 "$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off --state-dir "$SD" \
        --node-registry "$T_DIR/nodes_future" >"$T_DIR/future.$attempt.log" 2>&1
    rc=$?
    expect "a mark past the layout's end: the $attempt start is refused (exit status $rc)" \
        "$( ((rc != 0 && rc != 124 && rc != 137)) && echo refused)" = refused
    check "... naming the file, the mark and how to clear it" \
        -O ".*$SD/hwm.*2100-01-01T00:00:00.000Z.*past the end of.*remove $SD/hwm.*" \
        -- grep "$SD/hwm" "$T_DIR/future.$attempt.log"
    check "... leaving the file byte for byte as it was" -o "$sum" --sh "md5sum <'$SD/hwm'"
done

# --- the mark of idmintd before 0.3, carried over ------------------------------------------------
# STATE_DIR/hwm (16 bytes: "IDMHWM01" and a little-endian int64 of Unix ms)
# with a mark 2 s ahead of the clock, as a crash of an older idmintd leaves
# it: the new server resumes above it, writes STATE_DIR/mark and removes
# the old file once the new mark is durable.

SD=$T_DIR/state_old
mkdir -m 0700 "$SD"
old_mark=$(($(now_ms) + 2000))
le=$(printf '%016x' "$old_mark" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\\x\8\\x\7\\x\6\\x\5\\x\4\\x\3\\x\2\\x\1/')
# shellcheck disable=SC2059 # the escapes are the point
printf "IDMHWM01$le" >"$SD/hwm"
check "(the old mark file says $old_mark)" -o "$old_mark" --sh "od -An -t d8 -j 8 -N 8 '$SD/hwm' | tr -d ' '"
start_server --state-dir "$SD" --node-registry "$T_DIR/nodes_old"
# (In the log of the try that carried it over: a try that found its port
# taken did so before its listen failed, and the next found no hwm.)
check "an old STATE_DIR/hwm: the log says it was carried over" -O ".*$SD/hwm.*carried over to $SD/mark.*" -- \
    grep -h 'carried over' "${SRV_LOGS[@]}"
check "... and it is gone" -s 1 -- test -e "$SD/hwm"
got=$(hwm_mark "$SD")
expect "... STATE_DIR/mark holds a mark above the old one (${got:-none} > $old_mark)" "${got:-0}" -gt "$old_mark"
uuid=$(curl -fsS "$BASE/v1/ids/uuidv7")
ms=$("$IDMINT" inspect --json "$uuid" | grep -Eo '"unix_ms": [0-9]+' | grep -Eo '[0-9]+$')
expect "... and the first UUIDv7 lies above the old mark (${ms:-none} > $old_mark)" "${ms:-0}" -gt "$old_mark"
stop_server TERM
expect "... it stops cleanly (exit 0)" "$SRV_STATUS" = 0

# --- an --epoch whose layout ends before 1970 ---------------------------------------------------

"$IDMINTD" --http "127.0.0.1:$(random_port)" --resp off --state-dir "$T_DIR/state_epoch" \
    --node-registry "$T_DIR/nodes_epoch" --epoch 0000-01-01T00:00:00Z >"$T_DIR/epoch.log" 2>&1
rc=$?
expect "--epoch 0000-01-01T00:00:00Z: idmintd refuses to start (exit status $rc)" "$rc" != 0
check "... saying the layout's time range ends before 1970" -O '.*ends at 0069-.*before 1970.*' -- \
    grep -i 'epoch\|layout' "$T_DIR/epoch.log"
check "... not that resume_unix_ms 0 is past the layout's last time unit" -o 0 -s 1 -- \
    grep -c resume_unix_ms "$T_DIR/epoch.log"
finish
