# test_gen.sh - `idmint gen` for every format but snowflake (see
# test_snowflake.sh): shapes, counts, order, uniqueness, prefixes.
# Usage: bash tests/cli/test_gen.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
UUID4='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
KSUID='[0-9A-Za-z]{27}'
SUFFIX='[0-7][0-9a-hjkmnp-tv-z]{25}'
TOKEN='[0-9A-Za-z]{22}'
TRACEPARENT='00-[0-9a-f]{32}-[0-9a-f]{16}-01'

# --- shapes and counts -------------------------------------------------------

check "Mints COUNT IDs (default 1) of FORMAT: uuidv7 | RFC 9562 version 7, canonical lowercase 8-4-4-4-12" \
    -L "$UUID7" -n 1 -- "$IDMINT" gen uuidv7
check "uuidv7 | RFC 9562 version 7, canonical lowercase 8-4-4-4-12" \
    -L "$UUID7" -n 5 -- "$IDMINT" gen uuidv7 -n 5
check "uuidv4 | RFC 9562 version 4, canonical lowercase" \
    -L "$UUID4" -n 5 -- "$IDMINT" gen uuidv4 -n 5
check "ulid | 26 characters, Crockford base32, uppercase" \
    -L "$ULID" -n 5 -- "$IDMINT" gen ulid -n 5
check "ksuid | 27 characters, base62" \
    -L "$KSUID" -n 5 -- "$IDMINT" gen ksuid -n 5
check "typeid | PREFIX_ + 26 lowercase base32 characters of a UUIDv7" \
    -L "user_$SUFFIX" -n 5 -- "$IDMINT" gen typeid --prefix user -n 5
check "token | opaque public token: base62 of 128 CSPRNG bits" \
    -L "$TOKEN" -n 5 -- "$IDMINT" gen token -n 5
check "token | PREFIX_ (when --prefix is given) + base62 of 128 CSPRNG bits" \
    -L "sk_$TOKEN" -n 5 -- "$IDMINT" gen token --prefix sk -n 5
check "traceparent | W3C Trace Context header value 00-<32 hex>-<16 hex>-01" \
    -L "$TRACEPARENT" -n 5 -- "$IDMINT" gen traceparent -n 5
check "traceparent: the trace-id and parent-id are random, never all zeros" \
    -o 0 --sh '"$IDMINT" gen traceparent -n 2000 | grep -cE "^00-(0{32}-|[0-9a-f]{32}-0{16}-)" || true'
check "One ID per line on stdout, \\n-terminated, nothing else on stdout (1000 ULIDs)" \
    -L "$ULID" -n 1000 -- "$IDMINT" gen ulid -n 1000
check "-n, --count N how many IDs (long form with =)" \
    -L "$ULID" -n 3 -- "$IDMINT" gen ulid --count=3
check "-n, --count N how many IDs (long form, separate value)" \
    -L "$ULID" -n 3 -- "$IDMINT" gen ulid --count 3
check "-n, --count N how many IDs (short form, attached value)" \
    -L "$ULID" -n 3 -- "$IDMINT" gen ulid -n3
check "-n, --count N how many IDs (options before FORMAT)" \
    -L "$ULID" -n 3 -- "$IDMINT" gen -n 3 ulid
check "-n, --count N how many IDs (-- ends the options)" \
    -L "$ULID" -n 2 -- "$IDMINT" gen -n 2 -- ulid
for f in uuidv7 uuidv4 ulid ksuid token traceparent; do
    check "-n 0 mints zero IDs: nothing on stdout, status 0 ($f)" \
        -o '' -- "$IDMINT" gen "$f" -n 0
done
check "-n 0 mints zero IDs (typeid)" -o '' -- "$IDMINT" gen typeid --prefix user -n 0
check "batches: a count that is not a multiple of any batch size (10007 uuidv7)" \
    -L "$UUID7" -n 10007 -- "$IDMINT" gen uuidv7 -n 10007

# --- order and uniqueness ----------------------------------------------------

# strictly_increasing FORMAT [ARGS]: 100000 IDs, strictly increasing in
# byte order (sort -C -u fails on any equal or out-of-order pair).
strictly_increasing() {
    local f=$1
    shift
    check "every time-ordered format ($f) is strictly increasing in its own sort order (string order for text forms) and never repeats" \
        -o 'ok 100000' --sh "out=\$(\"\$IDMINT\" gen $f -n 100000 $*) || exit 9
            printf '%s\\n' \"\$out\" | sort -C -u || exit 8
            printf 'ok %s\\n' \"\$(printf '%s\\n' \"\$out\" | wc -l)\""
}
strictly_increasing uuidv7
strictly_increasing ulid
strictly_increasing ksuid
strictly_increasing typeid --prefix user

check "uuidv4: random IDs do not repeat (100000 distinct)" \
    -o 100000 --sh '"$IDMINT" gen uuidv4 -n 100000 | sort -u | wc -l'
check "token: 128 CSPRNG bits do not repeat (100000 distinct)" \
    -o 100000 --sh '"$IDMINT" gen token -n 100000 | sort -u | wc -l'
check "traceparent: random trace-ids do not repeat (20000 distinct)" \
    -o 20000 --sh '"$IDMINT" gen traceparent -n 20000 | cut -d- -f2 | sort -u | wc -l'
check "strictly increasing within one process: two processes' ULIDs are each ordered, and a later run sorts after" \
    -o ok --sh 'a=$("$IDMINT" gen ulid); sleep 0.01; b=$("$IDMINT" gen ulid); [[ $a < $b ]] && echo ok'
check "Random bits come from the operating system's CSPRNG: two runs in the same millisecond differ" \
    -o 2 --sh '{ "$IDMINT" gen uuidv7 & "$IDMINT" gen uuidv7; wait; } | sort -u | wc -l'

# --- prefixes ----------------------------------------------------------------

check "--prefix required for typeid" \
    -o '' -e '^idmint: .*--prefix' -s 2 -- "$IDMINT" gen typeid
check "--prefix P: lowercase [a-z_] (uppercase refused)" \
    -o '' -e '^idmint: .*User' -s 2 -- "$IDMINT" gen typeid --prefix User
check "--prefix P: lowercase [a-z_] (digits refused)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid --prefix user1
check "--prefix P: lowercase [a-z_] (a hyphen refused)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid --prefix user-id
check "--prefix P: not starting with _" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid --prefix _user
check "--prefix P: not ending with _" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid --prefix user_
P63=$(printf 'a%.0s' $(seq 63))
check "--prefix P: at most 63 characters (63 accepted)" \
    -L "${P63}_$SUFFIX" -n 1 -- "$IDMINT" gen typeid --prefix "$P63"
check "--prefix P: at most 63 characters (64 refused)" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid --prefix "${P63}a"
check "--prefix P: [a-z_] with an inner underscore" \
    -L "user_account_$SUFFIX" -n 2 -- "$IDMINT" gen typeid --prefix user_account -n 2
check "--prefix P for token follows the TypeID rule" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen token --prefix SK
check "a bad token prefix is named as a token's, its control bytes shown escaped" \
    -o '' -e "^idmint: invalid prefix 'a\\\\x0ab': token prefix has an invalid character byte 0x0a at position 2" \
    -s 2 -- "$IDMINT" gen token --prefix $'a\nb'
check "... and a TypeID's as a TypeID's" \
    -o '' -e "^idmint: invalid prefix 'A': TypeID prefix must be lowercase" -s 2 -- "$IDMINT" gen typeid --prefix A
check "an explicitly empty --prefix is TypeID's empty prefix: the bare suffix" \
    -L "$SUFFIX" -n 1 -- "$IDMINT" gen typeid --prefix ''
check "typeid suffix is the UUIDv7 (inspect shows version 7)" \
    -O '.*"version": 7, "variant": "rfc9562".*' --sh '"$IDMINT" gen typeid --prefix user | "$IDMINT" convert --to uuid | "$IDMINT" inspect --json'

# --- usage errors ------------------------------------------------------------

check "2 usage error (bad option value): -n abc" \
    -o '' -e "^idmint: .*'abc'" -s 2 -- "$IDMINT" gen ulid -n abc
check "2 usage error (bad option value): -n -1" \
    -o '' -e '^idmint: .*-1' -s 2 -- "$IDMINT" gen ulid -n -1
check "2 usage error (bad option value): -n 1.5" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen ulid -n 1.5
check "2 usage error (bad option value): -n ''" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen ulid -n ''
check "2 usage error (bad option value): -n beyond 64 bits" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen ulid -n 99999999999999999999999
check "Diagnostics ... naming the offending input and the reason in plain words: -n abc is not a whole number" \
    -o '' -e "^idmint: invalid -n 'abc': not a whole number" -s 2 -- "$IDMINT" gen ulid -n abc
check "Diagnostics ... the reason in plain words: a negative count is out of range" \
    -o '' -e "^idmint: invalid --count '-5': out of range \(expected 0 to 18446744073709551615\)" \
    -s 2 -- "$IDMINT" gen ulid --count -5
check "Diagnostics ... the reason in plain words: a count beyond 64 bits is out of range, not junk" \
    -o '' -e "^idmint: invalid -n '18446744073709551616': out of range" \
    -s 2 -- "$IDMINT" gen ulid -n 18446744073709551616
check "2 usage error (bad option value): -n without a value" \
    -o '' -e '^idmint: .*needs a value' -s 2 -- "$IDMINT" gen ulid -n
check "2 usage error (unknown format)" \
    -o '' -e "^idmint: unknown format 'uuidv9'" -s 2 -- "$IDMINT" gen uuidv9
check "2 usage error (unknown format), naming every FORMAT of the table" \
    -o '' -e "^idmint: unknown format 'uuidv9' \(expected uuidv7, uuidv4, ulid, ksuid, snowflake, typeid, token or traceparent\)" \
    -s 2 -- "$IDMINT" gen uuidv9
check "2 usage error: gen without FORMAT" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen
check "2 usage error: two FORMATs" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen ulid uuidv7
check "2 usage error (unknown option)" \
    -o '' -e "^idmint: unknown option '--frob'" -s 2 -- "$IDMINT" gen ulid --frob
check "2 usage error (unknown short option)" \
    -o '' -e "^idmint: unknown option '-x'" -s 2 -- "$IDMINT" gen ulid -x
check "snowflake options do not apply to ulid: usage error" \
    -o '' -e "^idmint: .*--node" -s 2 -- "$IDMINT" gen ulid --node 1
check "--prefix applies to typeid and token only: usage error" \
    -o '' -e "^idmint: option '--prefix' applies only to typeid and token, not uuidv7" -s 2 -- "$IDMINT" gen uuidv7 --prefix user
check "--state applies to time-ordered formats only: usage error (token)" \
    -o '' -e "^idmint: option '--state' applies only to time-ordered formats, not token" \
    -s 2 -- "$IDMINT" gen token --state /nonexistent/idmint.state
check "usage errors are checked even with -n 0" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" gen typeid -n 0

finish
