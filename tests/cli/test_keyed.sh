# test_keyed.sh - public IDs under a secret key (man/idmint.1: keygen,
# obfuscate, reveal, gen token --expires, verify): key files and their
# rules, round trips with and without prefixes, stdin, wrong keys,
# tampering, expiry, rotation (keygen --rotate, --list, files of several
# keys, --force replacing atomically), and the key never shown.
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
    # stderr through a file, not a process substitution: bash does not wait
    # for one, so under load a check could read stderr before tee wrote it.
    local st err
    err=$(mktemp)
    "$IDMINT" "$@" 2>"$err" | tee -a "$ALL_OUT"
    st=${PIPESTATUS[0]}
    cat "$err" >>"$ALL_OUT.err"
    cat "$err" >&2
    rm -f "$err"
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
    -e "$T_DIR/kbad: not an idmint key file: line 1: key text has a byte that is not a hex digit at position 78" \
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

# --- rotation: files of several keys ---------------------------------------------------
R=$T_DIR/ring
R_FP0=$("$IDMINT" keygen "$R" 2>&1 | sed -n 's/.*wrote key \([0-9a-f]*\) .*/\1/p')
R_HEX0=$(cut -c 15- "$R")
R_TOK=$("$IDMINT" obfuscate --key-file "$R" --prefix user 42)
R_ST=$("$IDMINT" gen token --expires 1h --key-file "$R")
check "keygen --rotate FILE writes a new current key, names it, keeps the old" \
    -o '' -e "idmint: wrote key [0-9a-f]{16} to $R as the current key \\(1 previous kept\\)" \
    -- run keygen --rotate "$R"
check "the rotated file is two key lines, the old one last, still 0600" -o ok --sh \
    "[ \"\$(wc -l <\"$R\")\" = 2 ] && [ \"\$(tail -n 1 \"$R\" | cut -c 15-)\" = '$R_HEX0' ] &&
     [ \"\$(stat -c %a \"$R\")\" = 600 ] && grep -Eqx 'idmint-key-v1 [0-9a-f]{64}' \"$R\" && echo ok"
R_HEX1=$(head -n 1 "$R" | cut -c 15-)
check "keygen --list: each fingerprint and its role, the current first" \
    -O "[0-9a-f]{16} current"$'\n'"$R_FP0 previous" -- run keygen --list "$R"
check "keygen --list shows no key bytes" -s 1 -o '' --sh \
    "\"\$IDMINT\" keygen --list \"$R\" 2>&1 | grep -q -e '${R_HEX0:0:16}' -e '${R_HEX1:0:16}'"
check "a token made before --rotate still reveals after it" -o 42 -- run reveal --key-file "$R" "$R_TOK"
check "a signed token made before --rotate still verifies after it" -O "valid \\(expires .*\\)" \
    -- run verify --key-file "$R" "$R_ST"
R_TOK2=$("$IDMINT" obfuscate --key-file "$R" --prefix user 42)
check "after --rotate, obfuscate uses the new key: another token for the same ID" -s 1 -o '' \
    -- test "$R_TOK2" = "$R_TOK"
check "the new token reveals too" -o 42 -- run reveal --key-file "$R" "$R_TOK2"
tail -n 1 "$R" >"$T_DIR/ring-old"
chmod 600 "$T_DIR/ring-old"
check "the old key alone does not reveal the new token" -s 1 -e "another key, or altered" \
    -- run reveal --key-file "$T_DIR/ring-old" "$R_TOK2"
check "gen token --expires signs with the new key: the old key alone calls it forged" -s 1 \
    -O "forged: .*" --sh "run verify --key-file \"$T_DIR/ring-old\" \"\$(run gen token --expires 1h --key-file \"$R\")\""
check "--rotate on a missing file is an error (plain keygen makes one)" -s 1 \
    -e "idmint: $T_DIR/none: cannot open the key file.*make one with idmint keygen FILE" \
    -- "$IDMINT" keygen --rotate "$T_DIR/none"
check "--rotate never creates the file" -s 1 -o '' -- test -e "$T_DIR/none"
check "--rotate and --force together are a usage error" -s 2 -e "one of --force, --rotate and --list" \
    -- "$IDMINT" keygen --rotate --force "$R"
for i in 1 2 3 4 5 6 7 8 9; do "$IDMINT" keygen - 2>/dev/null; done >"$T_DIR/ring9"
chmod 600 "$T_DIR/ring9"
check "a file of 9 keys is refused, naming the limit" -s 1 -e "$T_DIR/ring9: holds more than 8 keys" \
    -- "$IDMINT" reveal --key-file "$T_DIR/ring9" "$R_TOK"
head -n 8 "$T_DIR/ring9" >"$T_DIR/ring8"
chmod 600 "$T_DIR/ring8"
check "a file of 8 keys is accepted" -n 8 -L '[0-9a-f]{16} (current|previous)' -- "$IDMINT" keygen --list "$T_DIR/ring8"
check "--rotate of a full file drops the oldest, saying so on stderr" -o '' \
    -e "dropped the oldest key [0-9a-f]{16} from $T_DIR/ring8 \\(a key file keeps at most 8 keys\\)" \
    -- "$IDMINT" keygen --rotate "$T_DIR/ring8"
check "... and keeps 8: the new one and the 7 newest" -o ok --sh \
    "[ \"\$(wc -l <\"$T_DIR/ring8\")\" = 8 ] && tail -n 7 \"$T_DIR/ring8\" | cmp -s - <(head -n 7 \"$T_DIR/ring9\") && echo ok"
{ head -n 1 "$R"; printf 'idmint-key-v1 %s\n' "${R_HEX0%?}g"; } >"$T_DIR/ringbad"
chmod 600 "$T_DIR/ringbad"
check "a bad line is refused, naming its line number" -s 1 \
    -e "$T_DIR/ringbad: not an idmint key file: line 2: key text has a byte that is not a hex digit at position 78" \
    -- "$IDMINT" reveal --key-file "$T_DIR/ringbad" "$R_TOK"
check "... and its digits are not in the message" -s 1 -o '' --sh \
    "\"\$IDMINT\" keygen --list \"$T_DIR/ringbad\" 2>&1 | grep -q -e '${R_HEX0:0:16}' -e '${R_HEX1:0:16}'"
{ head -n 1 "$R"; echo; tail -n 1 "$R"; } >"$T_DIR/ringempty"
chmod 600 "$T_DIR/ringempty"
check "an empty line is a bad line too" -s 1 -e "ringempty: not an idmint key file: line 2: " \
    -- "$IDMINT" obfuscate --key-file "$T_DIR/ringempty" 1
check "--rotate refuses a damaged file and leaves it as it was" -s 1 -e "ringbad: not an idmint key file: line 2" \
    --sh "cp \"$T_DIR/ringbad\" \"$T_DIR/ringbad.orig\"; \"\$IDMINT\" keygen --rotate \"$T_DIR/ringbad\" &&
          exit 0; cmp -s \"$T_DIR/ringbad\" \"$T_DIR/ringbad.orig\" && exit 1"

# --- --force replaces atomically -------------------------------------------------------
F=$T_DIR/forced
"$IDMINT" keygen "$F" 2>/dev/null
"$IDMINT" keygen --rotate "$F" 2>/dev/null
INODE=$(stat -c %i "$F")
check "--force replaces a file of several keys with one new key, mode 0600" -o ok -E --sh \
    "\"\$IDMINT\" keygen --force \"$F\" && [ \"\$(stat -c %a \"$F\")\" = 600 ] &&
     grep -Eqx 'idmint-key-v1 [0-9a-f]{64}' \"$F\" && [ \"\$(wc -l <\"$F\")\" = 1 ] && echo ok"
check "--force renames a new file over the old (another inode), leaving no temporary file" -o ok --sh \
    "[ \"\$(stat -c %i \"$F\")\" != '$INODE' ] && [ -z \"\$(ls \"$T_DIR\" | grep 'forced.tmp')\" ] && echo ok"
cp "$F" "$T_DIR/forced.orig"
# A write that fails: a file size limit of 0 (as root too; SIGXFSZ ignored,
# so write(2) fails with EFBIG). Unlinking first, as keygen once did, lost the key.
# no_fsize ARGS...: $IDMINT ARGS under that limit, its stderr through a pipe
# (a file would hit the limit too).
no_fsize() {
    (
        trap '' XFSZ
        ulimit -f 0
        exec "$IDMINT" "$@"
    ) 2>&1 >/dev/null | cat >&2
    return "${PIPESTATUS[0]}"
}
export -f no_fsize
check "a --force whose write fails leaves the old key file intact" -s 1 \
    -e "idmint: $F: cannot write the key file \\(it is unchanged\\): File too large" \
    --sh "no_fsize keygen --force \"$F\""
check "... byte for byte, with no temporary file left" -o ok --sh \
    "cmp -s \"$F\" \"$T_DIR/forced.orig\" && [ -z \"\$(ls \"$T_DIR\" | grep 'forced.tmp')\" ] && echo ok"
check "a --rotate whose write fails leaves the file intact too" -s 1 -e "cannot write the key file" \
    --sh "no_fsize keygen --rotate \"$F\"; st=\$?; cmp -s \"$F\" \"$T_DIR/forced.orig\" && exit \$st"
if [ "$(id -u)" != 0 ]; then
    mkdir "$T_DIR/ro" && "$IDMINT" keygen "$T_DIR/ro/k" 2>/dev/null && cp "$T_DIR/ro/k" "$T_DIR/ro.orig"
    chmod 500 "$T_DIR/ro"
    check "--force in a directory that is not writable fails and keeps the old key" -s 1 \
        -e "cannot create a temporary file beside it" -- "$IDMINT" keygen --force "$T_DIR/ro/k"
    check "... intact" -s 0 -o '' -- cmp -s "$T_DIR/ro/k" "$T_DIR/ro.orig"
    chmod 700 "$T_DIR/ro"
fi

# --- the key never shows --------------------------------------------------------------
check "no output or message contained the key's digits" -s 1 -o '' --sh \
    "cat \"$ALL_OUT\" \"$ALL_OUT.err\" | grep -q -e '${KEYHEX:0:16}' -e '${KEY2HEX:0:16}' -e '${KEYHEX: -16}' -e '${R_HEX0:0:16}' -e '${R_HEX1:0:16}'"
check "help for each command" -L '.*' -E --sh \
    "for c in keygen obfuscate reveal verify; do \"\$IDMINT\" help \$c >/dev/null || exit 1; done"

finish
