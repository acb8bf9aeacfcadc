# test_causal.sh - `idmint gen FORMAT --after ID [--max-offset MS]`
# (causal minting): every ID printed sorts after ID (string order for the
# text forms, numeric for snowflakes), also when ID is 300 ms ahead of the
# clock (--max-offset 1000), in bulk, and through a host-wide state file;
# an ID 2 s ahead is refused (exit 1, the input named); an ID from the past
# is accepted; an ID of another format, or --after for a format without
# time, is a usage error (exit 2).
# The IDs "from elsewhere" are made here from the clock (bash and
# coreutils only), not with libfaketime, so the case runs under sanitizers.
# Usage: bash tests/cli/test_causal.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

now_ms() {
    local t=${EPOCHREALTIME/./}
    echo $((t / 1000))
}

# Crockford base32 of the low 5*N bits of a number, N characters.
b32() {
    local v=$1 n=$2 out='' a=0123456789ABCDEFGHJKMNPQRSTVWXYZ
    for ((i = 0; i < n; i++)); do
        out=${a:$((v & 31)):1}$out
        v=$((v >> 5))
    done
    printf '%s' "$out"
}

# id_at FORMAT UNIX_MS: an ID of FORMAT with that time, minted "elsewhere"
# (a counter or sequence in the middle of its range, node 9 for snowflakes).
id_at() {
    local ms=$2 h
    case $1 in
    uuidv7)
        h=$(printf '%012x' "$ms")
        printf '%s-%s-7abc-8def-0123456789ab\n' "${h:0:8}" "${h:8:4}"
        ;;
    typeid)
        "$IDMINT" convert --to typeid --prefix user "$(id_at uuidv7 "$ms")"
        ;;
    ulid)
        printf '%s8000000000000000\n' "$(b32 "$ms" 10)"
        ;;
    snowflake) # twitter: 41 time, 10 node, 12 seq
        echo $((((ms - 1288834974657) << 22) | (9 << 12) | 100))
        ;;
    ksuid) # base62 of 32-bit seconds since 1400000000 and a 128-bit payload 0x7fff...
        local limbs=($(((ms / 1000) - 1400000000)) 2147483647 4294967295 4294967295 4294967295)
        local a=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz out='' r k
        for ((d = 0; d < 27; d++)); do
            r=0
            for ((k = 0; k < 5; k++)); do
                local cur=$(((r << 32) | limbs[k]))
                limbs[k]=$((cur / 62))
                r=$((cur % 62))
            done
            out=${a:r:1}$out
        done
        echo "$out"
        ;;
    esac
}

# after_all FORMAT SEEN FILE: "yes" when the IDs in FILE are strictly
# increasing and the first sorts after SEEN.
after_all() {
    local first
    first=$(head -n 1 "$3")
    if [ "$1" = snowflake ]; then
        sort -C -n -u "$3" && [ -n "$first" ] && ((first > $2)) && echo yes || echo no
    else
        LC_ALL=C sort -C -u "$3" && [[ $first > $2 ]] && echo yes || echo no
    fi
}
export -f after_all

opts_of() {
    case $1 in
    typeid) echo --prefix user ;;
    snowflake) echo --node 3 ;;
    esac
}

for f in uuidv7 ulid ksuid typeid snowflake; do
    seen=$(id_at "$f" $(($(now_ms) + 300)))
    # EVIDENCE: every time-ordered format is strictly increasing (idmint(1)),
    # and with --after every ID sorts after the one given.
    check "gen $f --after ID 300 ms ahead (--max-offset 1000): every ID sorts after ID" -o yes \
        --sh "\"\$IDMINT\" gen $f $(opts_of "$f") -n 5 --after '$seen' --max-offset 1000 >\"$T_DIR/ids\" &&
              after_all $f '$seen' \"$T_DIR/ids\""
    check "gen $f --after ID 300 ms ahead: the default --max-offset is 500 ms" -n 1 -E \
        -- "$IDMINT" gen "$f" $(opts_of "$f") --after "$seen"
    seen=$(id_at "$f" $(($(now_ms) + 300)))
    check "gen $f -n 5000 --after ID: bulk, still after ID" -o yes \
        --sh "\"\$IDMINT\" gen $f $(opts_of "$f") -n 5000 --after '$seen' >\"$T_DIR/ids\" &&
              after_all $f '$seen' \"$T_DIR/ids\""
    # EVIDENCE: exit 1 when an ID could not be minted; diagnostics name the
    # offending input and the reason.
    # 3 s: a KSUID's time is its second's start, so "2 s ahead" could be
    # only 1.0x s ahead, and less than the limit by the time a loaded
    # machine runs the command.
    far=$(id_at "$f" $(($(now_ms) + 3000)))
    check "gen $f --after an ID 3 s ahead (--max-offset 1000): refused, exit 1, nothing printed" \
        -s 1 -o '' -e "idmint: $far: the [A-Za-z0-9]+ seen is [0-9]+ ms ahead of the local clock, more than the limit of 1000 ms" \
        -- "$IDMINT" gen "$f" $(opts_of "$f") -n 3 --after "$far" --max-offset 1000
    old=$(id_at "$f" $(($(now_ms) - 10000)))
    check "gen $f --after an ID from the past: accepted" -o yes \
        --sh "\"\$IDMINT\" gen $f $(opts_of "$f") -n 3 --after '$old' >\"$T_DIR/ids\" &&
              after_all $f '$old' \"$T_DIR/ids\""
done

# With --state the observation stays in the host-wide state: a later run
# without --after continues after ID too.
STATE=$T_DIR/state
for f in ulid snowflake; do
    rm -f "$STATE"
    seen=$(id_at "$f" $(($(now_ms) + 300)))
    check "gen $f --state PATH --after ID, then gen $f --state PATH: both after ID" -o yes \
        --sh "\"\$IDMINT\" gen $f $(opts_of "$f") --state '$STATE' --after '$seen' >\"$T_DIR/ids\" &&
              \"\$IDMINT\" gen $f $(opts_of "$f") --state '$STATE' >>\"$T_DIR/ids\" &&
              after_all $f '$seen' \"$T_DIR/ids\""
done

# EVIDENCE: exit 2 for a usage error (bad option value).
check "gen uuidv7 --after a ULID: usage error" -s 2 -o '' \
    -e "^idmint: invalid --after '[0-9A-Z]+': not a uuidv7: " \
    -- "$IDMINT" gen uuidv7 --after "$(id_at ulid "$(now_ms)")"
check "gen uuidv7 --after a UUIDv4: usage error" -s 2 -o '' -e "its UUID is version 4, not 7" \
    -- "$IDMINT" gen uuidv7 --after 2c2c2c2c-2c2c-4c2c-8c2c-2c2c2c2c2c2c
check "gen ksuid --after garbage: usage error" -s 2 -o '' -e "^idmint: invalid --after 'x': not a ksuid: " \
    -- "$IDMINT" gen ksuid --after x
check "gen snowflake --after a negative number: usage error" -s 2 -o '' -e "invalid --after '-5'" \
    -- "$IDMINT" gen snowflake --node 1 --after -5
check "gen snowflake --after with bits above the layout's fields: usage error" -s 2 -o '' \
    -e "invalid --after '9223372036854775808'" \
    -- "$IDMINT" gen snowflake --node 1 --after 9223372036854775808
for f in uuidv4 token traceparent; do
    check "gen $f --after: usage error (no time)" -s 2 -o '' \
        -e "option '--after' applies only to time-ordered formats, not $f" \
        -- "$IDMINT" gen "$f" --after 0
done
check "--max-offset without --after: usage error" -s 2 -o '' \
    -e "option '--max-offset' applies only with --after" -- "$IDMINT" gen ulid --max-offset 5
check "--max-offset out of range: usage error" -s 2 -o '' -e "max-offset" \
    -- "$IDMINT" gen ulid --after "$(id_at ulid "$(now_ms)")" --max-offset -1
# Snowflakes: a node above the seen one's follows it in its own unit.
seen=$(id_at snowflake "$(now_ms)")
check "gen snowflake --node 12 --after a node 9 ID: after it" -o yes \
    --sh "\"\$IDMINT\" gen snowflake --node 12 -n 3 --after '$seen' >\"$T_DIR/ids\" &&
          after_all snowflake '$seen' \"$T_DIR/ids\""

finish
