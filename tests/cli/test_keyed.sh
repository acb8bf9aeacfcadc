# test_keyed.sh - public IDs under a secret key (CONTRACT.md "Commands the
# open issues add": keygen, obfuscate, reveal, gen token --expires, verify;
# man/idmint.1): key files and their rules, round trips with and without
# prefixes, stdin, wrong keys, tampering, expiry, and the key never shown.
# Usage: bash tests/cli/test_keyed.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

OBF='[0-9A-Za-z]{17}'
STOK='[0-9A-Za-z]{50}'
K=$T_DIR/k
K2=$T_DIR/k2
ALL_OUT=$T_DIR/all-output
: >"$ALL_OUT"
# run ARGS...: $IDMINT with stdout and stderr also kept for the key check.
run() {
    local st
    "$IDMINT" "$@" 2> >(tee -a "$ALL_OUT.err" >&2) | tee -a "$ALL_OUT"
    st=${PIPESTATUS[0]}
    return "$st"
}
export -f run
export ALL_OUT

# --- keygen --------------------------------------------------------------------------
check "keygen FILE writes a new key and names its fingerprint on stderr" \
    -o '' -e "idmint: wrote key [0-9a-f]{16} to $K" -- "$IDMINT" keygen "$K"
check "the key file is mode 0600" -o 600 -- stat -c %a "$K"
check "the key file is one line: idmint-key-v1 and 64 hex digits" \
    -O 'idmint-key-v1 [0-9a-f]{64}' -- cat "$K"
check "keygen refuses to overwrite an existing key" -s 1 \
    -e "idmint: $K: already exists; not overwriting a key \\(--force replaces it\\)" \
    -o '' -- "$IDMINT" keygen "$K"
cp "$K" "$T_DIR/k.orig"
check "--force replaces it" -E -o '' -- "$IDMINT" keygen --force "$K"
check "the replaced key differs and is still 0600" -s 1 -o '' -E --sh \
    "cmp -s \"$T_DIR/k.orig\" \"$K\" || { [ \"\$(stat -c %a \"$K\")\" = 600 ] && exit 1; }"
ln -s "$K" "$T_DIR/link"
check "keygen never writes through a symbolic link" -s 1 -e "already exists" -o '' \
    -- "$IDMINT" keygen "$T_DIR/link"
check "keygen - prints the key text on stdout" -O 'idmint-key-v1 [0-9a-f]{64}' \
    -e "wrote key [0-9a-f]{16} to standard output" -- "$IDMINT" keygen -
check "keygen needs one FILE (usage error)" -s 2 -e "keygen takes one FILE" -- "$IDMINT" keygen
"$IDMINT" keygen "$K2" 2>/dev/null
KEYHEX=$(cut -c 15- "$K")
KEY2HEX=$(cut -c 15- "$K2")

# --- key file rules --------------------------------------------------------------------
cp "$K" "$T_DIR/k644"
chmod 644 "$T_DIR/k644"
check "a key file readable by others is refused, naming the file and the mode" -s 1 \
    -e "idmint: $T_DIR/k644: is readable or writable by group or others \\(mode 0644\\)" \
    -- "$IDMINT" obfuscate --key-file "$T_DIR/k644" 1
check "a symbolic link to a key file is refused" -s 1 -e "$T_DIR/link: is a symbolic link" \
    -- "$IDMINT" obfuscate --key-file "$T_DIR/link" 1
check "a directory is not a key file" -s 1 -e "$T_DIR: is not a regular file" \
    -- "$IDMINT" obfuscate --key-file "$T_DIR" 1
check "a missing key file is named" -s 1 -e "$T_DIR/none: cannot open the key file" \
    -- "$IDMINT" reveal --key-file "$T_DIR/none" x
printf 'idmint-key-v1 %s\n' "${KEYHEX%?}g" >"$T_DIR/kbad"
chmod 600 "$T_DIR/kbad"
check "a damaged key file is refused without quoting it" -s 1 \
    -e "$T_DIR/kbad: not an idmint key file: key text has a byte that is not a hex digit at position 78" \
    -- "$IDMINT" obfuscate --key-file "$T_DIR/kbad" 1
check "the damaged file's digits are not in the message" -s 1 -o '' -E --sh \
    "\"\$IDMINT\" obfuscate --key-file \"$T_DIR/kbad\" 1 2>&1 | grep -q '${KEYHEX:0:16}' || exit 1"
check "obfuscate without --key-file is a usage error" -s 2 -e "needs --key-file" \
    -- "$IDMINT" obfuscate 1

# --- obfuscate and reveal ------------------------------------------------------------
check "obfuscate prints one 17-character base62 token per ID" -n 4 -L "$OBF" \
    -- run obfuscate --key-file "$K" 0 1 2 18446744073709551615
check "with --prefix: PREFIX_ and 17 characters" -n 2 -L "user_$OBF" \
    -- run obfuscate --key-file "$K" --prefix user 1 2
check "obfuscate reads IDs from stdin when none are given" -i $'5\n6\n\n7\n' -n 3 -L "$OBF" \
    -- run obfuscate --key-file "$K"
check "round trip: 1..1000 through obfuscate and reveal" -o "$(seq 1 1000 | md5sum)" --sh \
    "seq 1 1000 | run obfuscate --key-file \"$K\" | run reveal --key-file \"$K\" | md5sum"
check "round trip with a prefix, via arguments" -o 18446744073709551615 --sh \
    "run reveal --key-file \"$K\" \$(run obfuscate --key-file \"$K\" --prefix order_line 18446744073709551615)"
check "the same ID and key give the same token" -O '1' --sh \
    "{ run obfuscate --key-file \"$K\" 42; run obfuscate --key-file \"$K\" 42; } | sort -u | wc -l"
check "another key gives another token" -O '2' --sh \
    "{ run obfuscate --key-file \"$K\" 42; run obfuscate --key-file \"$K2\" 42; } | sort -u | wc -l"
check "sequential IDs do not give sorted tokens" -s 1 -o '' --sh \
    "seq 1 200 | run obfuscate --key-file \"$K\" | sort -c 2>/dev/null"
check "bad inputs are named, the rest still printed, exit 1" -s 1 -n 2 -L "$OBF" \
    -e "idmint: abc: not a decimal 64-bit ID.*" \
    -- run obfuscate --key-file "$K" 1 abc 2 18446744073709551616
check "an ID past 64 bits says so" -s 1 -e "18446744073709551616: exceeds 64 bits" \
    -- "$IDMINT" obfuscate --key-file "$K" 18446744073709551616
check "an invalid --prefix is a usage error" -s 2 -e "invalid prefix 'User'" \
    -- "$IDMINT" obfuscate --key-file "$K" --prefix User 1
TOK=$("$IDMINT" obfuscate --key-file "$K" --prefix user 42)
check "a token under another key is refused, naming it" -s 1 \
    -e "idmint: $TOK: not an ID obfuscated under this key and prefix: another key, or altered" \
    -- run reveal --key-file "$K2" "$TOK"
check "a token moved to another prefix is refused" -s 1 -e "not an ID obfuscated under this key" \
    -- run reveal --key-file "$K" "item_${TOK#user_}"
last=${TOK: -1}
[ "$last" = A ] && alt=B || alt=A
check "a tampered token is refused" -s 1 -e "another key, or altered" \
    -- run reveal --key-file "$K" "${TOK%?}$alt"
check "a malformed token says why" -s 1 -e "idmint: user_abc: obfuscated ID must be 17 characters" \
    -- run reveal --key-file "$K" user_abc
check "reveal reads stdin, reports bad lines and goes on" -s 1 -i "$TOK"$'\nzzz\n'"$TOK" \
    -o $'42\n42' -e "zzz:" -- run reveal --key-file "$K"

# --- signed tokens -----------------------------------------------------------------------
check "gen token --expires D --key-file F mints signed tokens" -n 3 -L "share_$STOK" \
    -- run gen token --expires 1h --key-file "$K" --prefix share -n 3
check "--expires without --key-file is a usage error" -s 2 -e "'--expires' needs --key-file" \
    -- "$IDMINT" gen token --expires 1h
check "--key-file without --expires is a usage error" -s 2 -e "'--key-file' needs --expires" \
    -- "$IDMINT" gen token --key-file "$K"
check "--expires applies only to token" -s 2 -e "applies only to token" \
    -- "$IDMINT" gen ulid --expires 1h --key-file "$K"
check "a bad duration is a usage error" -s 2 -e "invalid --expires '1x'" \
    -- "$IDMINT" gen token --expires 1x --key-file "$K"
check "plain gen token is unchanged" -L '[0-9A-Za-z]{22}' -n 1 -- "$IDMINT" gen token
ST=$("$IDMINT" gen token --expires 1h30m --key-file "$K")
EXP=$(date -u -d "@$(($(date +%s) + 5400))" +%Y-%m-%dT%H:%M)
check "verify: valid (expires TIME), exit 0" -O "valid \\(expires $EXP:[0-9]{2}Z\\)" \
    -- run verify --key-file "$K" "$ST"
check "verify under another key: forged, exit 1" -s 1 -O "forged: not a token signed under this key.*" \
    -- run verify --key-file "$K2" "$ST"
[ "${ST:10:1}" = A ] && alt=B || alt=A
check "a tampered signed token is forged" -s 1 -O "forged: .*another key, or altered" \
    -- run verify --key-file "$K" "${ST:0:10}$alt${ST:11}"
check "a malformed token counts as forged, with its reason" -s 1 \
    -O "forged: signed token must be 50 characters.*" -- run verify --key-file "$K" abc
ST_RFC=$("$IDMINT" gen token --expires 2099-01-01T00:00:00Z --key-file "$K")
check "--expires takes an RFC 3339 time" -o "valid (expires 2099-01-01T00:00:00Z)" \
    -- run verify --key-file "$K" "$ST_RFC"
SHORT=$("$IDMINT" gen token --expires 1s --key-file "$K" --prefix s)
sleep 2
check "a token past its expiry: expired (at TIME), exit 1" -s 1 \
    -O "expired \\(at [0-9-]{10}T[0-9:]{8}Z\\)" -- run verify --key-file "$K" "$SHORT"
if [ -z "${IDM_SANITIZE:-}" ] && command -v faketime >/dev/null; then
    check "with the clock a day ahead (libfaketime), a 1h token is expired" -s 1 \
        -O "expired \\(at $EXP:[0-9]{2}Z\\)" -- faketime -f '+1d' "$IDMINT" verify --key-file "$K" "$ST"
fi

# --- the key never shows --------------------------------------------------------------
check "no output or message contained the key's digits" -s 1 -o '' --sh \
    "cat \"$ALL_OUT\" \"$ALL_OUT.err\" | grep -q -e '${KEYHEX:0:16}' -e '${KEY2HEX:0:16}' -e '${KEYHEX: -16}'"
check "help for each command" -L '.*' -E --sh \
    "for c in keygen obfuscate reveal verify; do \"\$IDMINT\" help \$c >/dev/null || exit 1; done"

finish
