# test_inspect.sh - `idmint inspect`: recognition, --as, the --json members
# for known inputs (RFC 9562, ULID, KSUID and TypeID spec examples,
# Discord's documented snowflake), the readable form, invalid and mixed
# inputs, and stdin.
# Usage: bash tests/cli/test_inspect.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

# --- UUIDs (RFC 9562 appendix examples) ----------------------------------------

V7='017F22E2-79B0-7CC3-98C4-DC0C0C07398F'
V7_JSON='"kind": "uuid", "unix_ms": 1645557742000, "time": "2022-02-22T19:22:22.000Z", "uuid": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "version": 7, "variant": "rfc9562"}'
check "--json members for a UUIDv7 (RFC 9562 A.6: 2022-02-22T19:22:22.000Z)" \
    -o "{\"input\": \"$V7\", $V7_JSON" -- "$IDMINT" inspect --json "$V7"
check "For UUID versions 1 and 6, unix_ms is the Gregorian 100-ns timestamp converted to Unix milliseconds; clock_seq, node (RFC 9562 A.1, v1)" \
    -o '{"input": "C232AB00-9414-11EC-B3C8-9F6BDECED846", "kind": "uuid", "unix_ms": 1645557742000, "time": "2022-02-22T19:22:22.000Z", "uuid": "c232ab00-9414-11ec-b3c8-9f6bdeced846", "version": 1, "variant": "rfc9562", "clock_seq": 13256, "node": "9f6bdeced846"}' \
    -- "$IDMINT" inspect --json C232AB00-9414-11EC-B3C8-9F6BDECED846
check "For UUID versions 1 and 6 ... clock_seq, node (RFC 9562 A.5, v6)" \
    -o '{"input": "1EC9414C-232A-6B00-B3C8-9F6BDECED846", "kind": "uuid", "unix_ms": 1645557742000, "time": "2022-02-22T19:22:22.000Z", "uuid": "1ec9414c-232a-6b00-b3c8-9f6bdeced846", "version": 6, "variant": "rfc9562", "clock_seq": 13256, "node": "9f6bdeced846"}' \
    -- "$IDMINT" inspect --json 1EC9414C-232A-6B00-B3C8-9F6BDECED846
check "UUIDs of other versions without a defined timestamp (4) have unix_ms and time null (RFC 9562 A.3)" \
    -o '{"input": "919108f7-52d1-4320-9bac-f847db4148a8", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "919108f7-52d1-4320-9bac-f847db4148a8", "version": 4, "variant": "rfc9562"}' \
    -- "$IDMINT" inspect --json 919108f7-52d1-4320-9bac-f847db4148a8
check "UUIDs ... without a defined timestamp (3) have unix_ms and time null (RFC 9562 A.2)" \
    -o '{"input": "5df41881-3aed-3515-88a7-2f4a814cf09e", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "5df41881-3aed-3515-88a7-2f4a814cf09e", "version": 3, "variant": "rfc9562"}' \
    -- "$IDMINT" inspect --json 5df41881-3aed-3515-88a7-2f4a814cf09e
check "UUIDs ... without a defined timestamp (5) have unix_ms and time null (RFC 9562 A.4)" \
    -o '{"input": "2ed6657d-e927-568b-95e1-2665a8aea6a2", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "2ed6657d-e927-568b-95e1-2665a8aea6a2", "version": 5, "variant": "rfc9562"}' \
    -- "$IDMINT" inspect --json 2ed6657d-e927-568b-95e1-2665a8aea6a2
check "UUIDs ... without a defined timestamp (8) have unix_ms and time null (RFC 9562 B.1)" \
    -o '{"input": "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", "version": 8, "variant": "rfc9562"}' \
    -- "$IDMINT" inspect --json 2489E9AD-2EE2-8E00-8EC9-32D5F69181C0
check "UUIDs ... (nil) have unix_ms and time null; variant ncs" \
    -o '{"input": "00000000-0000-0000-0000-000000000000", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "00000000-0000-0000-0000-000000000000", "version": 0, "variant": "ncs"}' \
    -- "$IDMINT" inspect --json 00000000-0000-0000-0000-000000000000
check "UUIDs ... (max) have unix_ms and time null; variant future" \
    -o '{"input": "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "ffffffff-ffff-ffff-ffff-ffffffffffff", "version": 15, "variant": "future"}' \
    -- "$IDMINT" inspect --json FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF
check "variant: \"microsoft\"" \
    -O '.*"variant": "microsoft"\}' -- "$IDMINT" inspect --json 00000000-0000-0000-c000-000000000000
check "36-character (or 32 hex, {...}, urn:uuid:) UUIDs: braces" \
    -o "{\"input\": \"{$V7}\", $V7_JSON" -- "$IDMINT" inspect --json "{$V7}"
check "36-character (or 32 hex, {...}, urn:uuid:) UUIDs: urn:uuid:" \
    -o "{\"input\": \"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f\", $V7_JSON" \
    -- "$IDMINT" inspect --json urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f
check "36-character (or 32 hex, {...}, urn:uuid:) UUIDs: 32 hex" \
    -o "{\"input\": \"017F22E279B07CC398C4DC0C0C07398F\", $V7_JSON" \
    -- "$IDMINT" inspect --json 017F22E279B07CC398C4DC0C0C07398F
check "32 hex digits that are all decimal are a UUID, not a snowflake" \
    -O '\{"input": "12345678901234567890123456789012", "kind": "uuid", .*' \
    -- "$IDMINT" inspect --json 12345678901234567890123456789012

# --- ULID, KSUID, TypeID -------------------------------------------------------

check "ulid, random: canonical uppercase ULID; 20 lowercase hex digits of the random part (ULID spec example)" \
    -o '{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", "unix_ms": 1469922850259, "time": "2016-07-30T23:54:10.259Z", "uuid": "01563e3a-b5d3-d676-4c61-efb99302bd5b", "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "random": "d6764c61efb99302bd5b"}' \
    -- "$IDMINT" inspect --json 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "26-character ULIDs (case-insensitive); input as given, ulid canonical" \
    -o '{"input": "01arz3ndektsv4rrffq69g5fav", "kind": "ulid", "unix_ms": 1469922850259, "time": "2016-07-30T23:54:10.259Z", "uuid": "01563e3a-b5d3-d676-4c61-efb99302bd5b", "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "random": "d6764c61efb99302bd5b"}' \
    -- "$IDMINT" inspect --json 01arz3ndektsv4rrffq69g5fav
check "years beyond 9999 as JavaScript's Date.prototype.toISOString writes them (+010889-08-02T05:31:50.655Z)" \
    -o '{"input": "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "kind": "ulid", "unix_ms": 281474976710655, "time": "+010889-08-02T05:31:50.655Z", "uuid": "ffffffff-ffff-ffff-ffff-ffffffffffff", "ulid": "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "random": "ffffffffffffffffffff"}' \
    -- "$IDMINT" inspect --json 7ZZZZZZZZZZZZZZZZZZZZZZZZZ
check "ksuid, payload: canonical KSUID; 32 lowercase hex digits (Segment's example)" \
    -o '{"input": "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "kind": "ksuid", "unix_ms": 1507608047000, "time": "2017-10-10T04:00:47.000Z", "ksuid": "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "payload": "b5a1cd34b5f99d1154fb6853345c9735"}' \
    -- "$IDMINT" inspect --json 0ujtsYcgvSTl8PAuAdqWYSMnLOv
check "27-character KSUIDs: the largest KSUID decodes" \
    -O '\{"input": "aWgEPTl1tmebfsQzFP4bxwgy80V", "kind": "ksuid", .*"payload": "ffffffffffffffffffffffffffffffff"\}' \
    -- "$IDMINT" inspect --json aWgEPTl1tmebfsQzFP4bxwgy80V
check "typeid, prefix: canonical TypeID; prefix (TypeID spec example)" \
    -o '{"input": "prefix_01h455vb4pex5vsknk084sn02q", "kind": "typeid", "unix_ms": 1688096058518, "time": "2023-06-30T03:34:18.518Z", "uuid": "01890a5d-ac96-774b-bcce-b302099a8057", "typeid": "prefix_01h455vb4pex5vsknk084sn02q", "prefix": "prefix"}' \
    -- "$IDMINT" inspect --json prefix_01h455vb4pex5vsknk084sn02q
check "prefix (\"\" when none): --as typeid on a bare suffix" \
    -o '{"input": "01h455vb4pex5vsknk084sn02q", "kind": "typeid", "unix_ms": 1688096058518, "time": "2023-06-30T03:34:18.518Z", "uuid": "01890a5d-ac96-774b-bcce-b302099a8057", "typeid": "01h455vb4pex5vsknk084sn02q", "prefix": ""}' \
    -- "$IDMINT" inspect --json --as typeid 01h455vb4pex5vsknk084sn02q
check "a TypeID follows the rule of the UUID it holds (v4: null time)" \
    -o '{"input": "user_4hj44femph8cg9qb7r8zdm2j58", "kind": "typeid", "unix_ms": null, "time": null, "uuid": "919108f7-52d1-4320-9bac-f847db4148a8", "typeid": "user_4hj44femph8cg9qb7r8zdm2j58", "prefix": "user"}' \
    -- "$IDMINT" inspect --json user_4hj44femph8cg9qb7r8zdm2j58
check "prefix_suffix TypeIDs: a prefix with underscores splits at the last _" \
    -O '\{"input": "user_account_01h455vb4pex5vsknk084sn02q", "kind": "typeid", .*"prefix": "user_account"\}' \
    -- "$IDMINT" inspect --json user_account_01h455vb4pex5vsknk084sn02q

# --- snowflakes ----------------------------------------------------------------

check "id, layout, node, sequence: decimal string; layout name; integers (Discord's documented example)" \
    -o '{"input": "175928847299117063", "kind": "snowflake", "unix_ms": 1462015105796, "time": "2016-04-30T11:18:25.796Z", "id": "175928847299117063", "layout": "discord", "node": 32, "sequence": 7}' \
    -- "$IDMINT" inspect --json --layout discord 175928847299117063
check "decimal integers as snowflakes of --layout (default twitter)" \
    -o '{"input": "1541815603606036480", "kind": "snowflake", "unix_ms": 1656432460105, "time": "2022-06-28T16:07:40.105Z", "id": "1541815603606036480", "layout": "twitter", "node": 378, "sequence": 0}' \
    -- "$IDMINT" inspect --json 1541815603606036480
check "--epoch E applies to inspect: the layout becomes a spec" \
    -o '{"input": "4194304", "kind": "snowflake", "unix_ms": 1735689600001, "time": "2025-01-01T00:00:00.001Z", "id": "4194304", "layout": "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000", "node": 0, "sequence": 0}' \
    -- "$IDMINT" inspect --json --epoch 2025-01-01T00:00:00Z 4194304
check "the layout is a spec for spec layouts" \
    -o '{"input": "16781313", "kind": "snowflake", "unix_ms": 1000, "time": "1970-01-01T00:00:01.000Z", "id": "16781313", "layout": "time=40,node=12,seq=12,unit=1s,epoch=0", "node": 1, "sequence": 1}' \
    -- "$IDMINT" inspect --json --layout time=40,node=12,seq=12,unit=1s,epoch=0 16781313
check "A snowflake with bits set above its layout's fields is invalid (twitter's top bit)" \
    -O '\{"input": "9223372036854775808", "error": ".+"\}' -s 1 \
    -- "$IDMINT" inspect --json 9223372036854775808
check "id is a decimal string (the largest 64-bit value, discord layout)" \
    -O '\{"input": "18446744073709551615", "kind": "snowflake", .*"id": "18446744073709551615", "layout": "discord", "node": 1023, "sequence": 4095\}' \
    -- "$IDMINT" inspect --json --layout discord 18446744073709551615

# --- readable form -------------------------------------------------------------

check "Without --json it prints readable field: value lines" \
    -o "input: $V7
kind: uuid
unix_ms: 1645557742000
time: 2022-02-22T19:22:22.000Z
uuid: 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
version: 7
variant: rfc9562" -- "$IDMINT" inspect "$V7"
check "Without --json ... a blank line between IDs" \
    -o "input: 0ujtsYcgvSTl8PAuAdqWYSMnLOv
kind: ksuid
unix_ms: 1507608047000
time: 2017-10-10T04:00:47.000Z
ksuid: 0ujtsYcgvSTl8PAuAdqWYSMnLOv
payload: b5a1cd34b5f99d1154fb6853345c9735

input: 175928847299117063
kind: snowflake
unix_ms: 1462015105796
time: 2016-04-30T11:18:25.796Z
id: 175928847299117063
layout: discord
node: 32
sequence: 7" -- "$IDMINT" inspect --layout discord 0ujtsYcgvSTl8PAuAdqWYSMnLOv 175928847299117063
check "readable form: a UUIDv4 has no time" \
    -O '.*
unix_ms: none
time: none
.*' -- "$IDMINT" inspect 919108f7-52d1-4320-9bac-f847db4148a8

# --- --as ------------------------------------------------------------------------

check "--as uuid|ulid|ksuid|typeid|snowflake forces a kind (ULID text as ulid)" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", .*' -- "$IDMINT" inspect --json --as ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "--as ... applies its rules strictly (a UUID is not a ULID)" \
    -O "\\{\"input\": \"$V7\", \"error\": \".+\"\\}" -s 1 -- "$IDMINT" inspect --json --as ulid "$V7"
check "--as ... applies its rules strictly (a ULID is not a snowflake)" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "error": ".+"\}' -s 1 \
    -- "$IDMINT" inspect --json --as snowflake 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "--as ... applies its rules strictly (a KSUID is not a UUID)" \
    -o '' -e '^idmint: 0ujtsYcgvSTl8PAuAdqWYSMnLOv: ' -s 1 -- "$IDMINT" inspect --as uuid 0ujtsYcgvSTl8PAuAdqWYSMnLOv
check "--as snowflake on digits" \
    -O '\{"input": "4097", "kind": "snowflake", .*"node": 1, "sequence": 1\}' -- "$IDMINT" inspect --json --as snowflake 4097
check "--as with an unknown kind is a usage error" \
    -o '' -e "^idmint: .*'uuid7'" -s 2 -- "$IDMINT" inspect --as uuid7 "$V7"
check "--layout with an unknown layout is a usage error" \
    -o '' -e '^idmint: ' -s 2 -- "$IDMINT" inspect --layout frob 4097

# --- invalid inputs --------------------------------------------------------------

check "idmint: 8ZZZZZZZZZZZZZZZZZZZZZZZZZ: ULID exceeds 128 bits (first character above 7)" \
    -o '' -e '^idmint: 8ZZZZZZZZZZZZZZZZZZZZZZZZZ: ULID exceeds 128 bits \(first character above 7\)
$' -s 1 -- "$IDMINT" inspect 8ZZZZZZZZZZZZZZZZZZZZZZZZZ
check "An invalid input gives {\"input\": \"...\", \"error\": \"reason\"} (with --json)" \
    -o '{"input": "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "error": "ULID exceeds 128 bits (first character above 7)"}' \
    -s 1 -- "$IDMINT" inspect --json 8ZZZZZZZZZZZZZZZZZZZZZZZZZ
check "ULID: letters outside Crockford's alphabet are invalid" \
    -o '' -e '^idmint: 01ARZ3NDEKTSV4RRFFQ69G5FAU: ' -s 1 -- "$IDMINT" inspect 01ARZ3NDEKTSV4RRFFQ69G5FAU
check "KSUID above the 160-bit maximum is invalid" \
    -o '' -e '^idmint: aWgEPTl1tmebfsQzFP4bxwgy80W: ' -s 1 -- "$IDMINT" inspect aWgEPTl1tmebfsQzFP4bxwgy80W
check "TypeID: an uppercase prefix is invalid" \
    -o '' -e '^idmint: User_01h455vb4pex5vsknk084sn02q: ' -s 1 -- "$IDMINT" inspect User_01h455vb4pex5vsknk084sn02q
check "TypeID: a suffix above 7zzz... is invalid" \
    -o '' -e '^idmint: user_8zzzzzzzzzzzzzzzzzzzzzzzzz: ' -s 1 -- "$IDMINT" inspect user_8zzzzzzzzzzzzzzzzzzzzzzzzz
check "a UUID with a bad hex digit is invalid" \
    -o '' -e '^idmint: 017F22E2-79B0-7CC3-98C4-DC0C0C07398G: ' -s 1 -- "$IDMINT" inspect 017F22E2-79B0-7CC3-98C4-DC0C0C07398G
check "a snowflake beyond 64 bits is invalid" \
    -o '' -e '^idmint: 18446744073709551616: ' -s 1 -- "$IDMINT" inspect 18446744073709551616
check "an unrecognisable input is invalid" \
    -o '' -e '^idmint: hello: ' -s 1 -- "$IDMINT" inspect hello
check "the valid ones are still processed and printed; exit 1 after all inputs (--json)" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", [^
]*\}
\{"input": "bogus", "error": "[^"]+"\}
\{"input": "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "kind": "ksuid", [^
]*\}' -n 3 -s 1 -- "$IDMINT" inspect --json 01ARZ3NDEKTSV4RRFFQ69G5FAV bogus 0ujtsYcgvSTl8PAuAdqWYSMnLOv
check "the valid ones are still processed and printed; the invalid one is a stderr diagnostic (readable)" \
    -O 'input: 01ARZ3NDEKTSV4RRFFQ69G5FAV
.*
input: 0ujtsYcgvSTl8PAuAdqWYSMnLOv
.*' -e '^idmint: bogus: [^
]+
$' -s 1 -- "$IDMINT" inspect 01ARZ3NDEKTSV4RRFFQ69G5FAV bogus 0ujtsYcgvSTl8PAuAdqWYSMnLOv

# --- JSON escaping ---------------------------------------------------------------

check "the input as given, as a valid JSON string (quote and backslash escaped)" \
    -O '\{"input": "a\\"b\\\\c", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json 'a"b\c'
check "the input as given, as a valid JSON string (control characters escaped)" \
    -O '\{"input": "a\\tb\\u0001", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\tb\x01'
check "the input as given, as a valid JSON string (invalid UTF-8 replaced)" \
    -O '\{"input": "x\\ufffdy", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'x\xffy'
check "the input as given, as a valid JSON string (overlong UTF-8 replaced byte by byte)" \
    -O '\{"input": "a\\ufffd\\ufffdb", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\xc0\x80b'
check "the input as given, as a valid JSON string (an encoded UTF-16 surrogate replaced)" \
    -O '\{"input": "a\\ufffd\\ufffd\\ufffdb", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\xed\xa0\x80b'
check "the input as given, as a valid JSON string (a truncated sequence replaced)" \
    -O '\{"input": "a\\ufffd\\ufffdb", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\xe2\x82b'
check "the input as given, as a valid JSON string (above U+10FFFF replaced)" \
    -O '\{"input": "a\\ufffd\\ufffd\\ufffd\\ufffdb", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\xf4\x90\x80\x80b'
check "the input as given, as a valid JSON string (a 4-byte character kept)" \
    -O '\{"input": "a'$'\xf0\x9f\x98\x80''b", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json $'a\xf0\x9f\x98\x80b'
check "the input as given, as a valid JSON string (valid UTF-8 kept)" \
    -O '\{"input": "é", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json 'é'

# --- stdin -----------------------------------------------------------------------

check "from stdin one per line when none are given" \
    -i "$V7
01ARZ3NDEKTSV4RRFFQ69G5FAV
" -O '\{"input": "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "kind": "uuid", [^
]*\}
\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", [^
]*\}' -- "$IDMINT" inspect --json
check "stdin lines: a trailing \\r is removed, an unterminated last line is read" \
    -i $'0ujtsYcgvSTl8PAuAdqWYSMnLOv\r\n01ARZ3NDEKTSV4RRFFQ69G5FAV' -O '\{"input": "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "kind": "ksuid", [^
]*\}
\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", [^
]*\}' -- "$IDMINT" inspect --json
check "stdin lines: empty lines are skipped; invalid lines still make the status 1" \
    -i $'\nnope\n\n01ARZ3NDEKTSV4RRFFQ69G5FAV\n\n' -O '\{"input": "nope", "error": "[^"]+"\}
\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", [^
]*\}' -s 1 -- "$IDMINT" inspect --json
check "stdin: many inputs (10000 minted ULIDs decode)" \
    -n 10000 -L '\{"input": "[0-9A-Z]{26}", "kind": "ulid", .*\}' \
    --sh '"$IDMINT" gen ulid -n 10000 | "$IDMINT" inspect --json'

# --- round trips through gen -------------------------------------------------------

for f in uuidv7 ulid ksuid; do
    check "gen $f then inspect: unix_ms is now (within 60 s; KSUID to the second)" \
        -o ok --sh "ms=\$(\"\$IDMINT\" gen $f | \"\$IDMINT\" inspect --json | sed 's/.*\"unix_ms\": \\([0-9]*\\).*/\\1/')
            now=\$(date +%s%3N); d=\$((now - ms)); [ \${d#-} -lt 60000 ] && echo ok"
done
check "gen uuidv4 then inspect: version 4, no time" \
    -O '\{"input": "[^"]+", "kind": "uuid", "unix_ms": null, "time": null, "uuid": "[^"]+", "version": 4, "variant": "rfc9562"\}' \
    --sh '"$IDMINT" gen uuidv4 | "$IDMINT" inspect --json'
check "gen typeid then inspect: kind typeid with its prefix" \
    -O '\{"input": "user_[^"]+", "kind": "typeid", "unix_ms": [0-9]+, .*"prefix": "user"\}' \
    --sh '"$IDMINT" gen typeid --prefix user | "$IDMINT" inspect --json'

check "Diagnostics name the offending input: control characters in it are shown as \\xNN, never sent raw to the terminal" \
    -o '' -e $'^idmint: ab\\\\x1b\\[31mcd: ' -s 1 --sh 'printf "ab\033[31mcd\n" | "$IDMINT" inspect'

finish
