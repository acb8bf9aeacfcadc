# test_state.sh - host-wide generators through the CLI: concurrent
# `idmint gen ... --state PATH` runs share one sequence per format (and one
# snowflake node) without duplicates; foreign state files are refused.
# Usage: bash tests/cli/test_state.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

STATE=$T_DIR/state
export STATE

# Four concurrent runs of each format on one state file: the union of what
# they print has no duplicate, and each run's own output is in order.
for fmt in uuidv7 ulid ksuid "typeid --prefix user" "snowflake --node 7"; do
    rm -f "$STATE"
    check "--state PATH: concurrent runs of gen $fmt share one sequence (4 x 50000 IDs, no duplicate)" \
        -o '200000 0' --sh "
        for i in 1 2 3 4; do \"\$IDMINT\" gen $fmt -n 50000 --state \"\$STATE\" > \"\$STATE.out\$i\" & done
        wait
        bad=0
        for i in 1 2 3 4; do
            case '$fmt' in
            snowflake*) sort -C -n \"\$STATE.out\$i\" || bad=\$((bad + 1)) ;;
            *) LC_ALL=C sort -C -u \"\$STATE.out\$i\" || bad=\$((bad + 1)) ;;
            esac
        done
        total=\$(cat \"\$STATE\".out? | sort -u | wc -l)
        echo \"\$total \$bad\""
done

# A snowflake run after others continues above everything they printed.
rm -f "$STATE"
check "--state PATH: a later run continues above every ID an earlier run printed" \
    -o 'ok' --sh '
    "$IDMINT" gen snowflake --node 3 -n 1000 --state "$STATE" > "$STATE.a"
    "$IDMINT" gen snowflake --node 3 -n 1000 --state "$STATE" > "$STATE.b"
    [ "$(tail -n 1 "$STATE.a")" -lt "$(head -n 1 "$STATE.b")" ] && echo ok'

rm -f "$STATE"
check "--state PATH creates the state file (an idmint state header, mode 0600)" \
    -o 'IDMSTATE 600' --sh '"$IDMINT" gen ulid --state "$STATE" >/dev/null && printf "%s %s\n" "$(head -c 8 "$STATE")" "$(stat -c %a "$STATE")"'

# Foreign files.
rm -f "$STATE"
"$IDMINT" gen snowflake --node 1 --state "$STATE" >/dev/null
check "a state file of another snowflake node is refused, saying what it holds" \
    -o '' -e "^idmint: .*state.* holds snowflake state for node 1, not node 2" -s 1 \
    -- "$IDMINT" gen snowflake --node 2 --state "$STATE"
check "a state file of another layout is refused, naming both layouts" \
    -o '' -e "holds snowflake state for layout time=41,node=10,seq=12.*needs snowflake state for layout time=42" -s 1 \
    -- "$IDMINT" gen snowflake --node 1 --layout discord --state "$STATE"
check "a snowflake state file is refused for uuidv7" \
    -o '' -e "holds snowflake state .* needs UUIDv7/ULID/KSUID generator state" -s 1 \
    -- "$IDMINT" gen uuidv7 --state "$STATE"
printf 'not a state file, just text\n' >"$T_DIR/junk"
check "a file that is not a state file is refused" \
    -o '' -e "junk is not an idmint state file" -s 1 -- "$IDMINT" gen ulid --state "$T_DIR/junk"
check "a state file in a missing directory is an error naming the path" \
    -o '' -e "/nonexistent-dir/s" -s 1 -- "$IDMINT" gen ulid --state /nonexistent-dir/s
# Files another user could have planted or could change.
rm -f "$STATE" "$T_DIR/link"
"$IDMINT" gen ulid --state "$STATE" >/dev/null
ln -s "$STATE" "$T_DIR/link"
check "a state file that is a symbolic link is refused, naming the link" \
    -o '' -e "^idmint: .*state file $T_DIR/link is a symbolic link; refusing to follow it" -s 1 \
    -- "$IDMINT" gen ulid --state "$T_DIR/link"
check "a snowflake state file that is a symbolic link is refused" \
    -o '' -e "state file $T_DIR/link is a symbolic link" -s 1 \
    -- "$IDMINT" gen snowflake --node 1 --state "$T_DIR/link"
chmod 666 "$STATE"
check "a world-writable state file is refused, with its mode and the fix" \
    -o '' -e "^idmint: .*state file $STATE is writable by other users \(mode 0666\); chmod 600 it" -s 1 \
    -- "$IDMINT" gen uuidv7 --state "$STATE"
chmod 620 "$STATE"
check "a group-writable state file is refused" \
    -o '' -e "state file $STATE is writable by its group \(mode 0620\); chmod 600 it" -s 1 \
    -- "$IDMINT" gen ulid --state "$STATE"
chmod 600 "$STATE"
check "once chmod 600, the same file is used again" \
    -n 1 -- "$IDMINT" gen ulid --state "$STATE"
rm -f "$STATE" "$T_DIR/link"
check "--state applies only to time-ordered formats (uuidv4: usage error)" \
    -o '' -e "^idmint: option '--state' applies only to time-ordered formats, not uuidv4" -s 2 \
    -- "$IDMINT" gen uuidv4 --state "$STATE"

finish
