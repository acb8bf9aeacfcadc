# test_convert.sh - `idmint convert --to uuid|ulid|typeid [--prefix P]`:
# every direction with exact outputs, the refusals, stdin, usage errors.
# Usage: bash tests/cli/test_convert.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

# One 128-bit value in every text form (the TypeID spec's example).
U=01890a5d-ac96-774b-bcce-b302099a8057
L=01H455VB4PEX5VSKNK084SN02Q
S=01h455vb4pex5vsknk084sn02q

check "Re-encodes 128-bit IDs between UUID, ULID and TypeID text forms: uuid -> ulid" \
    -o "$L" -- "$IDMINT" convert --to ulid "$U"
check "uuid -> typeid with --prefix" \
    -o "prefix_$S" -- "$IDMINT" convert --to typeid --prefix prefix "$U"
check "--to typeid without --prefix writes the bare suffix (TypeID's empty prefix)" \
    -o "$S" -- "$IDMINT" convert --to typeid "$U"
check "ulid -> uuid (the bits are unchanged)" \
    -o "$U" -- "$IDMINT" convert --to uuid "$L"
check "ulid -> typeid" \
    -o "user_$S" -- "$IDMINT" convert --to typeid --prefix user "$L"
check "typeid -> uuid" \
    -o "$U" -- "$IDMINT" convert --to uuid "prefix_$S"
check "typeid -> ulid" \
    -o "$L" -- "$IDMINT" convert --to ulid "prefix_$S"
check "typeid -> typeid with another prefix" \
    -o "user_account_$S" -- "$IDMINT" convert --to typeid --prefix user_account "prefix_$S"
check "uuid -> uuid canonicalises (uppercase in, lowercase out)" \
    -o "$U" -- "$IDMINT" convert --to uuid 01890A5D-AC96-774B-BCCE-B302099A8057
check "ulid -> ulid canonicalises (lowercase in, uppercase out)" \
    -o "$L" -- "$IDMINT" convert --to ulid "$S"
check "UUID forms: braces" -o "$L" -- "$IDMINT" convert --to ulid "{$U}"
check "UUID forms: urn:uuid:" -o "$L" -- "$IDMINT" convert --to ulid "urn:uuid:$U"
check "UUID forms: 32 hex" -o "$L" -- "$IDMINT" convert --to ulid 01890a5dac96774bbcceb302099a8057
check "RFC 9562's UUIDv7 example as a ULID" \
    -o 01FWHE4YDGFK1SHH6W1G60EECF -- "$IDMINT" convert --to ulid 017F22E2-79B0-7CC3-98C4-DC0C0C07398F
check "the ULID spec's example as a UUID" \
    -o 01563e3a-b5d3-d676-4c61-efb99302bd5b -- "$IDMINT" convert --to uuid 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "the nil UUID" -o 00000000000000000000000000 -- "$IDMINT" convert --to ulid 00000000-0000-0000-0000-000000000000
check "the max UUID" -o 7ZZZZZZZZZZZZZZZZZZZZZZZZZ -- "$IDMINT" convert --to ulid ffffffff-ffff-ffff-ffff-ffffffffffff
check "several IDs, in order" \
    -o "$U
01563e3a-b5d3-d676-4c61-efb99302bd5b" -- "$IDMINT" convert --to uuid "$L" 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "round trip: gen uuidv7 -> ulid -> typeid -> uuid gives the same UUID" \
    -o same --sh 'u=$("$IDMINT" gen uuidv7); v=$(printf "%s\n" "$u" | "$IDMINT" convert --to ulid | "$IDMINT" convert --to typeid --prefix x | "$IDMINT" convert --to uuid); [ "$u" = "$v" ] && echo same'

# --- refusals --------------------------------------------------------------------

check "KSUIDs and snowflakes are refused with a clear error and status 1 (KSUID)" \
    -o '' -e '^idmint: 0ujtsYcgvSTl8PAuAdqWYSMnLOv: .+' -s 1 -- "$IDMINT" convert --to uuid 0ujtsYcgvSTl8PAuAdqWYSMnLOv
check "KSUIDs and snowflakes are refused with a clear error and status 1 (snowflake)" \
    -o '' -e '^idmint: 175928847299117063: .+' -s 1 -- "$IDMINT" convert --to ulid 175928847299117063
check "an invalid input is refused with status 1" \
    -o '' -e '^idmint: 8ZZZZZZZZZZZZZZZZZZZZZZZZZ: ULID exceeds 128 bits \(first character above 7\)' -s 1 \
    -- "$IDMINT" convert --to uuid 8ZZZZZZZZZZZZZZZZZZZZZZZZZ
check "the valid ones are still processed and printed (exit 1 at the end)" \
    -o "$U
$U" -e '^idmint: 0ujtsYcgvSTl8PAuAdqWYSMnLOv: ' -s 1 -- "$IDMINT" convert --to uuid "$L" 0ujtsYcgvSTl8PAuAdqWYSMnLOv "$U"

# --- stdin -------------------------------------------------------------------------

check "IDs from stdin, one per line, when none are given (\\r stripped)" \
    -i "$L"$'\r\n'"prefix_$S"$'\n' -o "$U
$U" -- "$IDMINT" convert --to uuid
check "stdin: invalid lines are reported, the rest converted" \
    -i "nope"$'\n'"$U"$'\n' -o "$L" -e '^idmint: nope: ' -s 1 -- "$IDMINT" convert --to ulid

# --- usage errors --------------------------------------------------------------------

check "convert --to uuid|ulid|typeid: --to is required" \
    -o '' -e '^idmint: .*--to' -s 2 -- "$IDMINT" convert "$U"
check "convert --to uuid|ulid|typeid: other forms are a usage error" \
    -o '' -e "^idmint: .*'ksuid'" -s 2 -- "$IDMINT" convert --to ksuid "$U"
check "--prefix P goes with --to typeid" \
    -o '' -e '^idmint: .*--prefix' -s 2 -- "$IDMINT" convert --to uuid --prefix user "$U"
check "--prefix P: the TypeID rule (uppercase refused)" \
    -o '' -e '^idmint: .*User' -s 2 -- "$IDMINT" convert --to typeid --prefix User "$U"
check "unknown option: usage error" \
    -o '' -e "^idmint: unknown option '--json'" -s 2 -- "$IDMINT" convert --to uuid --json "$U"

finish
