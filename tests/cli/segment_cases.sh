# segment_cases.sh - the cases of `idmint segment create|list|show` that
# every store must pass, sourced (after lib.sh) by test_segment.sh (SQLite)
# and test_segment_pg.sh (PostgreSQL).
#
#   segment_cases URL NAME   URL: a store with no tags yet; NAME: for the
#                            evidence lines ("sqlite", "postgresql")
#
# Not a test of its own (tests/CMakeLists.txt registers test_*.sh only).

# RFC 3339 UTC with milliseconds (man/idmint.1, DESCRIPTION).
SEG_TIME='20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
export SEG_TIME

# Escapes an ERE's special characters in a literal (a store URL in a message).
ere_quote() {
    printf '%s' "$1" | sed 's/[][\.*^$?+(){}|/]/\\&/g'
}

segment_cases() {
    local S=$1 name=$2
    local SQ
    SQ=$(ere_quote "$S")
    export S

    # --- create with the defaults, show, list ---------------------------------------
    check "$name: segment create prints nothing on success (exit 0)" \
        -o '' -- "$IDMINT" segment create orders --store "$S"
    check "$name: segment show: field: value lines with the defaults (first 1, step 1000, max step 1000000, stride 1, offset 0)" \
        -O "tag: orders
next_id: 1
step: 1000
max_step: 1000000
stride: 1
offset: 0
leases: 0
created_ms: [0-9]{13}
updated_ms: [0-9]{13}
created: $SEG_TIME
updated: $SEG_TIME" \
        -- "$IDMINT" segment show orders --store "$S"
    check "$name: segment show --json: one JSON object (next_id a decimal string; times as RFC 3339 UTC with milliseconds)" \
        -o ok --sh '"$IDMINT" segment show orders --store "$S" --json | python3 -c "
import json, sys, re
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
t = json.loads(lines[0])
assert list(t) == [\"tag\", \"next_id\", \"step\", \"max_step\", \"stride\", \"offset\", \"leases\",
                   \"created_ms\", \"updated_ms\", \"created\", \"updated\"], list(t)
assert t[\"tag\"] == \"orders\" and t[\"next_id\"] == \"1\", t
assert (t[\"step\"], t[\"max_step\"], t[\"stride\"], t[\"offset\"], t[\"leases\"]) == (1000, 1000000, 1, 0, 0), t
assert isinstance(t[\"created_ms\"], int) and t[\"created_ms\"] == t[\"updated_ms\"], t
assert re.fullmatch(\"$SEG_TIME\", t[\"created\"]) and t[\"created\"] == t[\"updated\"], t
import datetime
d = datetime.datetime.fromtimestamp(t[\"created_ms\"] / 1000, datetime.timezone.utc)
assert d.strftime(\"%Y-%m-%dT%H:%M:%S.\") + \"%03dZ\" % (t[\"created_ms\"] % 1000) == t[\"created\"], t
print(\"ok\")"'

    # --- custom values ----------------------------------------------------------------
    check "$name: create with --first --step --max-step --stride --offset" \
        -o '' -- "$IDMINT" segment create odd.ids --store "$S" --first 10 --step 50 --max-step 500 \
        --stride 4 --offset 3
    check "$name: --first is rounded up to offset modulo stride (10 -> 11, mod 4 = 3)" \
        -O 'tag: odd.ids
next_id: 11
step: 50
max_step: 500
stride: 4
offset: 3
leases: 0
.*' -- "$IDMINT" segment show odd.ids --store "$S"
    check "$name: --first 0 --stride 2 --offset 1: the first odd ID, 1" \
        -o '' -- "$IDMINT" segment create odd-from-zero --store "$S" --first 0 --stride 2 --offset 1
    check "$name: show --json of the odd tag: next_id 1, stride 2, offset 1" \
        -O '\{"tag": "odd-from-zero", "next_id": "1", "step": 1000, "max_step": 1000000, "stride": 2, "offset": 1, "leases": 0, .*\}' \
        -- "$IDMINT" segment show odd-from-zero --store "$S" --json
    check "$name: --first already congruent is kept (7, mod 2 = 1)" \
        -o 'next_id: 7' --sh '"$IDMINT" segment create seven --store "$S" --first 7 --stride 2 --offset 1 &&
            "$IDMINT" segment show seven --store "$S" | grep "^next_id: "'
    check "$name: --step above the default max step raises it (max_step = step)" \
        -o 'step: 5000000
max_step: 5000000' --sh '"$IDMINT" segment create big_step --store "$S" --step 5000000 &&
            "$IDMINT" segment show big_step --store "$S" | grep -E "^(max_)?step: "'
    check "$name: the largest first ID (2^63 - 1)" \
        -o 'next_id: 9223372036854775807' --sh '"$IDMINT" segment create last --store "$S" --first 9223372036854775807 &&
            "$IDMINT" segment show last --store "$S" | grep "^next_id: "'
    check "$name: a first ID that rounds up past 2^63 - 1: usage error from the store's check" \
        -o '' -e "^idmint: .*2\^63 - 1" -s 2 -- \
        "$IDMINT" segment create past --store "$S" --first 9223372036854775807 --stride 2 --offset 0

    # --- list ---------------------------------------------------------------------------
    check "$name: segment list: a table, one row per tag in name order, UPDATED as RFC 3339" \
        -O "TAG +NEXT +STEP +MAX STEP +STRIDE +OFFSET +LEASES +UPDATED
big_step +1 +5000000 +5000000 +1 +0 +0 +$SEG_TIME
last +9223372036854775807 +1000 +1000000 +1 +0 +0 +$SEG_TIME
odd-from-zero +1 +1000 +1000000 +2 +1 +0 +$SEG_TIME
odd\.ids +11 +50 +500 +4 +3 +0 +$SEG_TIME
orders +1 +1000 +1000000 +1 +0 +0 +$SEG_TIME
seven +7 +1000 +1000000 +2 +1 +0 +$SEG_TIME" \
        -- "$IDMINT" segment list --store "$S"
    check "$name: segment list: the columns line up (each as wide as its widest cell)" \
        -o ok --sh '"$IDMINT" segment list --store "$S" | python3 -c "
import sys
lines = sys.stdin.read().splitlines()
head = lines[0]
starts = [head.index(h) for h in (\"NEXT\", \"STEP  \", \"MAX STEP\", \"STRIDE\", \"OFFSET\", \"LEASES\", \"UPDATED\")]
for l in lines[1:]:
    for s in starts:
        assert l[s - 2:s] == \"  \" and l[s] != \" \", (l, s)
print(\"ok\")"'
    check "$name: segment list --json: JSON Lines, one object per tag in name order" \
        -o ok --sh '"$IDMINT" segment list --store "$S" --json | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
tags = [r[\"tag\"] for r in rows]
assert tags == [\"big_step\", \"last\", \"odd-from-zero\", \"odd.ids\", \"orders\", \"seven\"], tags
by = {r[\"tag\"]: r for r in rows}
assert by[\"odd.ids\"][\"next_id\"] == \"11\" and by[\"odd.ids\"][\"stride\"] == 4, by[\"odd.ids\"]
assert by[\"last\"][\"next_id\"] == \"9223372036854775807\", by[\"last\"]
for r in rows:
    assert set(r) == {\"tag\", \"next_id\", \"step\", \"max_step\", \"stride\", \"offset\", \"leases\",
                      \"created_ms\", \"updated_ms\", \"created\", \"updated\"}, r
    assert r[\"created\"].endswith(\"Z\") and r[\"updated_ms\"] >= r[\"created_ms\"], r
print(\"ok\")"'
    check "$name: a closed stdout ends segment list quietly (status 0)" \
        -o '0' --sh '"$IDMINT" segment list --store "$S" | head -c 0; echo "${PIPESTATUS[0]}"'

    # --- errors (1) ------------------------------------------------------------------------
    check "$name: creating an existing tag: exit 1, naming it" \
        -o '' -e "^idmint: tag 'orders' exists already in $SQ"$'\n$' -s 1 -- \
        "$IDMINT" segment create orders --store "$S" --step 7
    check "$name: the existing tag is left as it was" \
        -o 'step: 1000' --sh '"$IDMINT" segment show orders --store "$S" | grep "^step: "'
    check "$name: segment show of an unknown tag: exit 1, no tag 'x' in STORE" \
        -o '' -e "^idmint: no tag 'nope' in $SQ"$'\n$' -s 1 -- "$IDMINT" segment show nope --store "$S"
    check "$name: segment show --json of an unknown tag: exit 1, nothing on stdout" \
        -o '' -e "^idmint: no tag 'nope' in " -s 1 -- "$IDMINT" segment show nope --store "$S" --json

    # --- usage errors (2): bad tag names and values, checked before the store --------------
    check "$name: an upper-case tag name is a tag of its own (Leaf's Orders)" \
        -o '' -- "$IDMINT" segment create Orders --store "$S" --first 500
    check "$name: ... shown with its own next ID, case kept" \
        -o 'tag: Orders next_id: 500' \
        --sh '"$IDMINT" segment show Orders --store "$S" | grep -E "^(tag|next_id): " | paste -sd " "'
    check "$name: Redis-style names with ':', '{', '}' are tags" \
        -o '' -- "$IDMINT" segment create '{user}:seq' --store "$S"
    check "$name: a tag name with a space: usage error with the reason" \
        -o '' -e "^idmint: invalid tag 'a b': byte 0x20 at 1 is not allowed \(only A-Z, a-z, 0-9 and _ \. - : @ \{ \} \| \+ ~\)" -s 2 -- \
        "$IDMINT" segment create 'a b' --store "$S"
    check "$name: a tag name with a quote: usage error" \
        -o '' -e "^idmint: invalid tag 'a\"b': byte 0x22 \('\"'\) at 1 is not allowed" -s 2 -- \
        "$IDMINT" segment create 'a"b' --store "$S"
    check "$name: a tag name of 129 bytes: usage error (at most 128)" \
        -o '' -e "^idmint: invalid tag 'a{80}\.\.\.': .*at most 128 bytes, got 129" -s 2 -- \
        "$IDMINT" segment create "$(printf 'a%.0s' {1..129})" --store "$S"
    check "$name: a tag name of 128 bytes is fine" \
        -o '' -- "$IDMINT" segment create "$(printf 'b%.0s' {1..128})" --store "$S"
    check "$name: a tag name with '/': usage error" \
        -o '' -e "^idmint: invalid tag 'a/b': byte 0x2f \('/'\) at 1 is not allowed" -s 2 -- \
        "$IDMINT" segment create a/b --store "$S"
    check "$name: an empty tag name: usage error" \
        -o '' -e "^idmint: invalid tag '': " -s 2 -- "$IDMINT" segment create '' --store "$S"
    check "$name: show checks the name too (usage error, not 'no tag')" \
        -o '' -e "^idmint: invalid tag 'A%': " -s 2 -- "$IDMINT" segment show A% --store "$S"
    check "$name: --stride 0: bad option value" \
        -o '' -e "^idmint: invalid --stride '0': out of range \(expected 1 to 9223372036854775807\)" -s 2 -- \
        "$IDMINT" segment create zero --store "$S" --stride 0 --offset 0
    check "$name: --offset equal to --stride: usage error" \
        -o '' -e "^idmint: --offset 2 must be below --stride 2" -s 2 -- \
        "$IDMINT" segment create even --store "$S" --stride 2 --offset 2
    check "$name: --step 0: bad option value" \
        -o '' -e "^idmint: invalid --step '0': out of range" -s 2 -- \
        "$IDMINT" segment create zero --store "$S" --step 0
    check "$name: --step above --max-step: usage error" \
        -o '' -e "^idmint: --step 2000 is above --max-step 1000" -s 2 -- \
        "$IDMINT" segment create zero --store "$S" --step 2000 --max-step 1000
    check "$name: --first above 2^63 - 1: bad option value" \
        -o '' -e "^idmint: invalid --first '9223372036854775808': out of range" -s 2 -- \
        "$IDMINT" segment create zero --store "$S" --first 9223372036854775808
    check "$name: --first not a number: bad option value" \
        -o '' -e "^idmint: invalid --first '1e3': not a whole number" -s 2 -- \
        "$IDMINT" segment create zero --store "$S" --first 1e3
    check "$name: none of the refused tags was made" \
        -o ok --sh '"$IDMINT" segment list --store "$S" --json | grep -Eq "\"(zero|even|a b|a/b|past)\"" || echo ok'
}
