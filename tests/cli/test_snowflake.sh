# test_snowflake.sh - `idmint gen snowflake`: --node, --layout (presets and
# specs), --epoch, --seq-start, --max-rewind, order, and the baidu layout
# whose time ran out. Decoding goes through `idmint inspect --json`.
# Usage: bash tests/cli/test_snowflake.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

DEC='[1-9][0-9]{0,19}'
# inspect --json of a freshly minted snowflake: LAYOUT NODE SEQUENCE-ERE
sf_json() {
    printf '%s' "\\{\"input\": \"$DEC\", \"kind\": \"snowflake\", \"unix_ms\": [0-9]+, \"time\": \"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z\", \"id\": \"$DEC\", \"layout\": \"$1\", \"node\": $2, \"sequence\": $3\\}"
}

# --- --node ------------------------------------------------------------------

check "--node N ... required for snowflake (usage error, naming the range)" \
    -o '' -e '^idmint: .*--node.*0\.\.1023' -s 2 -- "$IDMINT" gen snowflake
check "out of range for the layout is a usage error that names the range (twitter: 10 node bits)" \
    -o '' -e '^idmint: .*1024.*0\.\.1023' -s 2 -- "$IDMINT" gen snowflake --node 1024
check "out of range ... names the range (instagram: 13 node bits)" \
    -o '' -e '^idmint: .*0\.\.8191' -s 2 -- "$IDMINT" gen snowflake --layout instagram --node 8192
check "out of range ... names the range (sonyflake: 16 node bits)" \
    -o '' -e '^idmint: .*0\.\.65535' -s 2 -- "$IDMINT" gen snowflake --layout sonyflake --node 65536
check "out of range ... names the range (safe53: 6 node bits)" \
    -o '' -e '^idmint: .*0\.\.63' -s 2 -- "$IDMINT" gen snowflake --layout safe53 --node 64
check "out of range ... names the range (baidu: 22 node bits)" \
    -o '' -e '^idmint: .*0\.\.4194303' -s 2 -- "$IDMINT" gen snowflake --layout baidu --node 4194304
check "bad option value: --node abc" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen snowflake --node abc
check "bad option value: --node -1 (out of range, naming the range)" \
    -o '' -e "^idmint: --node '-1' is out of range 0\.\.1023 for layout twitter" -s 2 -- "$IDMINT" gen snowflake --node -1
check "bad option value: --node abc is not a number (naming the range)" \
    -o '' -e "^idmint: invalid --node 'abc': not a whole number \(expected 0\.\.1023 for layout twitter\)" \
    -s 2 -- "$IDMINT" gen snowflake --node abc
check "the largest node of the layout is accepted (twitter 1023)" \
    -O "$(sf_json twitter 1023 0)" --sh '"$IDMINT" gen snowflake --node 1023 | "$IDMINT" inspect --json'

# --- presets -----------------------------------------------------------------

for preset in twitter discord instagram sonyflake sonyflake2 safe53; do
    check "snowflake | unsigned decimal integer, laid out by --layout ($preset)" \
        -L "$DEC" -n 5 -- "$IDMINT" gen snowflake --layout "$preset" --node 5 -n 5
    check "--layout $preset: the node and first sequence decode back (inspect --layout $preset)" \
        -O "$(sf_json "$preset" 5 0)" \
        --sh "\"\$IDMINT\" gen snowflake --layout $preset --node 5 | \"\$IDMINT\" inspect --json --layout $preset"
done
check "--layout L ... Default twitter" \
    -O "$(sf_json twitter 9 0)" --sh '"$IDMINT" gen snowflake --node 9 | "$IDMINT" inspect --json --layout twitter'
check "the time field decodes to now (twitter, within 60 s)" \
    -o ok --sh 'ms=$("$IDMINT" gen snowflake --node 1 | "$IDMINT" inspect --json | sed "s/.*\"unix_ms\": \([0-9]*\).*/\1/")
        now=$(date +%s%3N); d=$((now - ms)); [ ${d#-} -lt 60000 ] && echo ok'
check "safe53 ... fits a JavaScript number (every ID below 2^53)" \
    -o ok --sh 'for id in $("$IDMINT" gen snowflake --layout safe53 --node 63 -n 1000); do
            [ "$id" -lt 9007199254740992 ] || { echo "too big: $id"; exit 1; }; done; echo ok'
check "unknown layout: usage error" \
    -o '' -e '^idmint: .*frob' -s 2 -- "$IDMINT" gen snowflake --layout frob --node 1

# --- order -------------------------------------------------------------------

check "snowflake is strictly increasing in numeric order and never repeats (100000 IDs)" \
    -o 'ok 100000' --sh 'out=$("$IDMINT" gen snowflake --node 7 -n 100000) || exit 9
        printf "%s\n" "$out" | sort -C -u -n || exit 8
        printf "ok %s\n" "$(printf "%s\n" "$out" | wc -l)"'
check "When a unit's sequence is exhausted, generation waits for the next unit (sonyflake: 256 per 10 ms)" \
    -o 'ok 3000' --sh 'out=$("$IDMINT" gen snowflake --layout sonyflake --node 1 -n 3000) || exit 9
        printf "%s\n" "$out" | sort -C -u -n || exit 8
        printf "ok %s\n" "$(printf "%s\n" "$out" | wc -l)"'
check "-n 0 prints nothing (snowflake)" -o '' -- "$IDMINT" gen snowflake --node 1 -n 0

# --- specs -------------------------------------------------------------------

SPEC='time=41,node=10,seq=12,unit=1ms,epoch=1735689600000'
check "A spec names the fields in order, most significant first, with optional unit and epoch" \
    -O "$(sf_json "$SPEC" 3 0)" \
    --sh "\"\$IDMINT\" gen snowflake --layout $SPEC --node 3 | \"\$IDMINT\" inspect --json --layout $SPEC"
check "Units are a whole number of ms or s (unit=10ms)" \
    -O "$(sf_json 'time=39,seq=8,node=16,unit=10ms,epoch=1735689600000' 300 0)" \
    --sh '"$IDMINT" gen snowflake --layout time=39,seq=8,node=16,unit=10ms,epoch=1735689600000 --node 300 |
          "$IDMINT" inspect --json --layout time=39,seq=8,node=16,unit=10ms,epoch=1735689600000'
check "Units are a whole number of ms or s (unit=1s)" \
    -L "$DEC" -n 3 -- "$IDMINT" gen snowflake --layout time=31,node=10,seq=22,unit=1s,epoch=1735689600000 --node 1 -n 3
check "a spec without unit and epoch is accepted" \
    -L "$DEC" -n 2 -- "$IDMINT" gen snowflake --layout time=41,node=10,seq=12 --node 1 -n 2
check "Field bits must add up to at most 64 (72 refused)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen snowflake --layout time=50,node=10,seq=12 --node 1
check "a spec must name time, node and seq (seq missing)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen snowflake --layout time=41,node=10 --node 1
check "a bad unit is refused (unit=5us)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen snowflake --layout time=41,node=10,seq=12,unit=5us --node 1

# --- --epoch -----------------------------------------------------------------

EPOCH_SPEC='time=41,node=10,seq=12,unit=1ms,epoch=1735689600000'
check "--epoch E overrides the layout's epoch: Unix milliseconds" \
    -O "$(sf_json "$EPOCH_SPEC" 2 0)" \
    --sh '"$IDMINT" gen snowflake --node 2 --epoch 1735689600000 | "$IDMINT" inspect --json --epoch 1735689600000'
check "--epoch E overrides the layout's epoch: ... or an RFC 3339 time (the same epoch)" \
    -O "$(sf_json "$EPOCH_SPEC" 2 0)" \
    --sh '"$IDMINT" gen snowflake --node 2 --epoch 2025-01-01T00:00:00Z | "$IDMINT" inspect --json --epoch 2025-01-01T00:00:00.000Z'
check "--epoch E: an RFC 3339 time with an offset" \
    -O "$(sf_json "$EPOCH_SPEC" 2 0)" \
    --sh '"$IDMINT" gen snowflake --node 2 --epoch 2025-01-01T08:00:00+08:00 | "$IDMINT" inspect --json --layout '"$EPOCH_SPEC"
check "--epoch E: a later epoch makes the same time a smaller ID" \
    -o ok --sh 'a=$("$IDMINT" gen snowflake --node 1); b=$("$IDMINT" gen snowflake --node 1 --epoch 2025-01-01T00:00:00Z); [ "$b" -lt "$a" ] && echo ok'
check "--epoch E overrides the layout's epoch: Unix milliseconds (negative: before 1970)" \
    -O "$(sf_json 'time=41,node=10,seq=12,unit=1ms,epoch=-1000' 1 0)" \
    --sh '"$IDMINT" gen snowflake --node 1 --epoch -1000 | "$IDMINT" inspect --json --epoch -1000'
check "--epoch E: a negative epoch also as --epoch=-1000, and as the RFC 3339 time it is" \
    -O "$(sf_json 'time=41,node=10,seq=12,unit=1ms,epoch=-1000' 1 0)" \
    --sh '"$IDMINT" gen snowflake --node 1 --epoch=-1000 | "$IDMINT" inspect --json --epoch 1969-12-31T23:59:59Z'
check "--epoch E: a negative epoch makes the same time a larger ID" \
    -o ok --sh 'a=$("$IDMINT" gen snowflake --node 1 --epoch 0); b=$("$IDMINT" gen snowflake --node 1 --epoch -1000); [ "$b" -gt "$a" ] && echo ok'
check "bad option value: --epoch beyond 64 bits of milliseconds is out of range (not an RFC 3339 error)" \
    -o '' -e "^idmint: invalid epoch '9223372036854775808': out of range" \
    -s 2 -- "$IDMINT" gen snowflake --node 1 --epoch 9223372036854775808
check "bad option value: an epoch the layout cannot take (its range would pass 64 bits of ms)" \
    -o '' -e "^idmint: invalid epoch '9223372036854775807' for layout 'twitter': " \
    -s 2 -- "$IDMINT" gen snowflake --node 1 --epoch 9223372036854775807
check "bad option value: --epoch yesterday" \
    -o '' -e "^idmint: .*yesterday" -s 2 -- "$IDMINT" gen snowflake --node 1 --epoch yesterday
check "bad option value: an epoch so early that the layout's range ends before 1970 is refused as such" \
    -o '' -e "^idmint: .*layout's time range ends at 0069-.*, before 1970" \
    -s 2 -- "$IDMINT" gen snowflake --node 1 --epoch 0000-01-01T00:00:00Z
check "... also when it ends in 1969 (--epoch 1900-01-01T00:00:00Z)" \
    -o '' -e "^idmint: .*layout's time range ends at 1969-.*, before 1970" \
    -s 2 -- "$IDMINT" gen snowflake --node 1 --epoch 1900-01-01T00:00:00Z
check "an epoch in the future is refused when minting (status 1)" \
    -o '' -e '^idmint: .*epoch' -s 1 -- "$IDMINT" gen snowflake --node 1 --epoch 4102444800000

# --- baidu -------------------------------------------------------------------

check "baidu ... its 28-bit time field ran out on 2024-11-20T13:24:16Z, so minting with it fails with an error saying so" \
    -o '' -e '^idmint: .*ran out.*2024-11-20T13:24:16' -s 1 -- "$IDMINT" gen snowflake --layout baidu --node 1
check "baidu ... fails ... unless --epoch moves it" \
    -L "$DEC" -n 3 -- "$IDMINT" gen snowflake --layout baidu --node 1 --epoch 2024-06-01T00:00:00Z -n 3
check "baidu with a moved epoch decodes its node (1 s unit)" \
    -O "$(sf_json 'time=28,node=22,seq=13,unit=1s,epoch=1717200000000' 4194303 0)" \
    --sh '"$IDMINT" gen snowflake --layout baidu --node 4194303 --epoch 2024-06-01T00:00:00Z |
          "$IDMINT" inspect --json --layout baidu --epoch 2024-06-01T00:00:00Z'

# --- --seq-start, --max-rewind -------------------------------------------------

WINDOW='([0-9]|[1-9][0-9]|1[01][0-9]|12[0-7])'
check "--seq-start random starts each unit's sequence at a random value below 128 (twitter: 2^(12 - 5))" \
    -O "$(sf_json twitter 1 "$WINDOW")" \
    --sh '"$IDMINT" gen snowflake --node 1 --seq-start random | "$IDMINT" inspect --json'
check "--seq-start random: the starts are spread (not all 0 over 20 runs)" \
    -o ok --sh 'for i in $(seq 20); do "$IDMINT" gen snowflake --node 1 --seq-start random | "$IDMINT" inspect --json; done |
        grep -v "\"sequence\": 0}" | grep -q . && echo ok'
check "--seq-start zero is the default" \
    -O "$(sf_json twitter 1 0)" --sh '"$IDMINT" gen snowflake --node 1 --seq-start zero | "$IDMINT" inspect --json'
check "bad option value: --seq-start sometimes" \
    -o '' -e '^idmint: .*sometimes' -s 2 -- "$IDMINT" gen snowflake --node 1 --seq-start sometimes
check "--max-rewind MS accepts milliseconds" \
    -L "$DEC" -n 2 -- "$IDMINT" gen snowflake --node 1 --max-rewind 0 -n 2
check "bad option value: --max-rewind -5" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen snowflake --node 1 --max-rewind -5
check "bad option value: --max-rewind beyond idmintd's limit (about 292 years) is refused" \
    -o '' -e "^idmint: invalid --max-rewind '9223372036855': out of range \(expected 0 to 9223372036854 ms\)" \
    -s 2 -- "$IDMINT" gen snowflake --node 1 --max-rewind 9223372036855

finish
