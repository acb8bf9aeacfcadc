# test_lease.sh - snowflake nodes leased for a run from this host's registry
# (`idmint gen snowflake --node auto`), `idmint lease list` over it, and the
# usage errors of --coord, --node-range, --lease-ttl and --registry (no
# coordinator needed: test_lease_coord.sh has etcd and ZooKeeper).
# Usage: bash tests/cli/test_lease.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

REG=$T_DIR/nodes
export REG
# The node of the first snowflake a command prints (inspect --json).
node_of() {
    "$IDMINT" inspect --json | head -n 1 | sed 's/.*"node": \([0-9]*\).*/\1/'
}
export -f node_of

# --- usage errors (2) ----------------------------------------------------------

check "--coord applies only to snowflake (usage error)" \
    -o '' -e "^idmint: option '--coord' applies only to snowflake, not uuidv7" -s 2 -- \
    "$IDMINT" gen uuidv7 --coord etcd://127.0.0.1:2379/idmint
check "--node-range applies only to snowflake" \
    -o '' -e "^idmint: option '--node-range' applies only to snowflake" -s 2 -- \
    "$IDMINT" gen ulid --node-range 0..3
check "--node-range applies only to --node auto" \
    -o '' -e "^idmint: option '--node-range' applies only to --node auto" -s 2 -- \
    "$IDMINT" gen snowflake --node 5 --node-range 0..3
check "--lease-ttl applies only with --coord" \
    -o '' -e "^idmint: option '--lease-ttl' applies only with --coord" -s 2 -- \
    "$IDMINT" gen snowflake --node auto --lease-ttl 5
check "--lease-ttl below 2 s: bad option value" \
    -o '' -e "^idmint: invalid --lease-ttl '1': out of range \(expected 2 to 86400 s\)" -s 2 -- \
    "$IDMINT" gen snowflake --coord etcd://127.0.0.1:1/idmint --lease-ttl 1
check "--registry applies only to --node auto without --coord" \
    -o '' -e "^idmint: option '--registry' applies only to --node auto" -s 2 -- \
    "$IDMINT" gen snowflake --node 3 --registry "$REG"
check "--node-range outside the layout: a usage error naming the range" \
    -o '' -e "^idmint: --node-range 0\.\.64 is outside layout safe53's nodes 0\.\.63" -s 2 -- \
    "$IDMINT" gen snowflake --layout safe53 --node auto --node-range 0..64 --registry "$REG"
check "--node-range LO above HI: bad option value" \
    -o '' -e "^idmint: --node-range: 5\.\.3 is empty" -s 2 -- \
    "$IDMINT" gen snowflake --node auto --node-range 5..3 --registry "$REG"
check "--node-range not LO..HI: bad option value" \
    -o '' -e "^idmint: --node-range: expected LO\.\.HI" -s 2 -- \
    "$IDMINT" gen snowflake --node auto --node-range 7 --registry "$REG"
check "a bad coordinator URL (unknown scheme) is a usage error" \
    -o '' -e "^idmint: --coord redis://x: .*not a coordinator URL" -s 2 -- \
    "$IDMINT" gen snowflake --coord redis://x
check "a bad coordinator URL (no path) is a usage error" \
    -o '' -e "^idmint: --coord etcd://127\.0\.0\.1:2379: " -s 2 -- \
    "$IDMINT" gen snowflake --node auto --coord etcd://127.0.0.1:2379
check "a bad coordinator URL (no port) is a usage error" \
    -o '' -e "^idmint: --coord zk://localhost/idmint: " -s 2 -- \
    "$IDMINT" gen snowflake --coord zk://localhost/idmint
check "gen snowflake without --node or --coord names both" \
    -o '' -e "^idmint: gen snowflake needs --node N \(0\.\.1023 for layout twitter\), --node auto or --coord URL" \
    -s 2 -- "$IDMINT" gen snowflake
check "lease without a subcommand: usage error" \
    -o '' -e "^idmint: lease needs a subcommand: list" -s 2 -- "$IDMINT" lease
check "lease with an unknown subcommand: usage error" \
    -o '' -e "^idmint: unknown lease subcommand 'show' \(expected list\)" -s 2 -- "$IDMINT" lease show
check "lease list takes no operands" \
    -o '' -e "^idmint: unexpected argument 'x'" -s 2 -- "$IDMINT" lease list x
check "lease list: --layout is the local registry's, not with --coord" \
    -o '' -e "^idmint: option '--layout' applies only to this host's registry" -s 2 -- \
    "$IDMINT" lease list --coord etcd://127.0.0.1:1/idmint --layout twitter
check "lease list: a bad coordinator URL is a usage error" \
    -o '' -e "^idmint: --coord etcd://: " -s 2 -- "$IDMINT" lease list --coord etcd://
check "lease list: unknown option" \
    -o '' -e "^idmint: .*--frob" -s 2 -- "$IDMINT" lease list --frob

# --- help ----------------------------------------------------------------------

check "idmint COMMAND --help works (lease)" \
    -O 'Usage: idmint lease list .*' -- "$IDMINT" lease --help
check "idmint lease list --help works" \
    -O 'Usage: idmint lease list .*' -- "$IDMINT" lease list --help
check "idmint help lease" -O 'Usage: idmint lease list .*' -- "$IDMINT" help lease
check "the main help lists lease" -o ok --sh '"$IDMINT" --help | grep -q "^  lease list" && echo ok'
check "gen --help names --node auto and --coord" \
    -o ok --sh 'h=$("$IDMINT" gen --help); [[ $h == *"--node N|auto"* && $h == *"--coord URL"* && $h == *"--node-range LO..HI"* && $h == *"--lease-ttl SECONDS"* ]] && echo ok'

# --- the host-local registry -----------------------------------------------------

check "lease list --registry of a directory that does not exist: an error, not an empty table" \
    -o '' -e "^idmint: cannot read the node registry $T_DIR/nowhere/x: No such file or directory" -s 1 \
    -- "$IDMINT" lease list --registry "$T_DIR/nowhere/x"
check "... nor a file" -o '' -e "^idmint: the node registry /etc/passwd is not a directory" -s 1 \
    -- "$IDMINT" lease list --registry /etc/passwd
mkdir -m 0700 "$REG"
check "lease list of a registry nobody has used: the header only" \
    -o 'NODE  STATE  GENERATION  MARK  TTL LEFT  HOLDER' -- "$IDMINT" lease list --registry "$REG"
check "lease list --json of a registry nobody has used: nothing" \
    -o '' -- "$IDMINT" lease list --registry "$REG" --json
check "--node auto leases the lowest free node of this host's registry (0)" \
    -o 0 --sh '"$IDMINT" gen snowflake --node auto --registry "$REG" -n 3 | node_of'
check "--node auto: COUNT IDs, strictly increasing" \
    -o ok --sh 'out=$("$IDMINT" gen snowflake --node auto --registry "$REG" -n 200000) || exit 9
        [ "$(printf "%s\n" "$out" | wc -l)" = 200000 ] || exit 8
        printf "%s\n" "$out" | sort -C -u -n && echo ok'
check "lease list: a released slot is free, with its mark (RFC 3339) and no holder" \
    -O 'NODE  STATE  GENERATION  MARK                      TTL LEFT  HOLDER
0     free   -           20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z  -         -' \
    -- "$IDMINT" lease list --registry "$REG"
check "lease list --json: one object per slot, nulls where nothing applies" \
    -O '\{"node": 0, "held": false, "generation": null, "mark_ms": [0-9]{13}, "mark": "20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z", "ttl_ms_left": null, "holder": null\}' \
    -- "$IDMINT" lease list --registry "$REG" --json
check "lease list: the layout is the namespace (nothing for sonyflake yet)" \
    -o '' -- "$IDMINT" lease list --registry "$REG" --layout sonyflake --json
check "--node auto --node-range: the lowest free node of the range" \
    -o 5 --sh '"$IDMINT" gen snowflake --node auto --node-range 5..6 --registry "$REG" | node_of'
check "--node auto in another layout: node 0 of its own namespace" \
    -o 0 --sh '"$IDMINT" gen snowflake --layout sonyflake --node auto --registry "$REG" | "$IDMINT" inspect --json --layout sonyflake | sed "s/.*\"node\": \([0-9]*\).*/\1/"'

# A holder that stays: a run of many IDs whose reader takes one line and then
# stops reading; the run blocks on the full pipe with node 0 held. Closing
# the pipe ends it (a closed stdout: status 0), which gives the node back.
HOLD='exec 3< <(exec "$IDMINT" gen snowflake --node auto --registry "$REG" -n 1000000000)
      holder=$!
      read -r first <&3 || exit 7
      [ "$(printf "%s\n" "$first" | node_of)" = 0 ] || exit 6'
export HOLD
check "two runs at once get distinct nodes: node 0 is held, the second gets node 1" \
    -o 1 --sh "$HOLD"'
      "$IDMINT" gen snowflake --node auto --registry "$REG" | node_of
      exec 3<&-; wait $holder'
check "lease list shows the held slot: state held, the holder (pid, host, program)" \
    -o ok --sh "$HOLD"'
      list=$("$IDMINT" lease list --registry "$REG")
      exec 3<&-; wait $holder
      printf "%s\n" "$list" | grep -Eq "^0 +held +- +20[^ ]+Z +- +pid=$holder host=[^ ]+ addrs=[^ ]+ since=[^ ]+ program=idmint\$" &&
      printf "%s\n" "$list" | grep -Eq "^5 +free " && echo ok'
check "lease list --json of a held slot: held true and its holder line" \
    -o ok --sh "$HOLD"'
      json=$("$IDMINT" lease list --registry "$REG" --json)
      exec 3<&-; wait $holder
      printf "%s\n" "$json" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
r0 = [r for r in rows if r[\"node\"] == 0][0]
assert r0[\"held\"] is True and r0[\"generation\"] is None and r0[\"ttl_ms_left\"] is None, r0
assert r0[\"holder\"].startswith(\"pid=$holder \") and r0[\"holder\"].endswith(\"program=idmint\"), r0
assert all(r[\"held\"] is False and r[\"holder\"] is None for r in rows if r[\"node\"] != 0), rows
assert [r[\"node\"] for r in rows] == sorted(r[\"node\"] for r in rows), rows
print(\"ok\")"'
check "a closed stdout ends a leased run quietly (status 0) and frees its node" \
    -o 'ok 0' --sh "$HOLD"'
      exec 3<&-; wait $holder; st=$?
      "$IDMINT" lease list --registry "$REG" --json | grep -q "\"node\": 0, \"held\": false" && echo "ok $st"'
check "every node of the range held: exit 1, naming the range" \
    -o '' -e '^idmint: no free snowflake node on this host \(registry .*\): .*0' -s 1 --sh "$HOLD"'
      "$IDMINT" gen snowflake --node auto --node-range 0..0 --registry "$REG"; st=$?
      exec 3<&-; wait $holder; exit $st'
check "a registry that is not ours is refused (exit 1)" \
    -o '' -e '^idmint: .*registry' -s 1 --sh 'mkdir -p "$REG-open" && chmod 0777 "$REG-open" &&
      "$IDMINT" gen snowflake --node auto --registry "$REG-open"'

# --- the time hand-over ----------------------------------------------------------

# A run whose clock is 2.5 s ahead (libfaketime) leaves its mark in the
# slot; the next holder of the node, on the real clock, waits until its clock
# has passed that mark (saying so: the wait is long) and mints above every
# ID of the first run.
FAKETIME_LIB=$(printf '%s\n' /usr/lib/*/faketime/libfaketime.so.1 | head -n 1)
# libfaketime and a sanitizer's runtime do not go together: the case runs
# where the preload works (the plain build).
# Not under a sanitizer even where a probe works: ASan's runtime and the
# preload can deadlock at start (a run hung on a futex in a fresh root).
if [ -z "${IDM_SANITIZE:-}" ] && [ -f "$FAKETIME_LIB" ] &&
    LD_PRELOAD=$FAKETIME_LIB FAKETIME=+0 timeout 10 "$IDMINT" --version >/dev/null 2>&1; then
    export FAKETIME_LIB
    check "a new holder mints nothing at or below the slot's mark (an earlier holder's clock ahead)" \
        -o ok -e "^idmint: node 0: waiting [0-9.]+ s for the clock to pass the slot's mark" --sh '
          R=$REG-handover
          last=$(LD_PRELOAD=$FAKETIME_LIB FAKETIME=+2.5s timeout 60 "$IDMINT" gen snowflake --node auto --registry "$R" -n 1000 | tail -n 1)
          first=$("$IDMINT" gen snowflake --node auto --registry "$R" -n 1)
          [ "$(printf "%s\n" "$first" | node_of)" = 0 ] && [ "$first" -gt "$last" ] && echo ok'
elif [ -z "${IDM_SANITIZE:-}" ]; then
    # Without a sanitizer it must work (scripts/test.sh installs it).
    check "libfaketime works here (the hand-over case needs it)" -o yes -- echo no
fi
check "a run right after another on the same node mints above it (no wait, nothing said)" \
    -o ok --sh 'a=$("$IDMINT" gen snowflake --node auto --registry "$REG" -n 5000 | tail -n 1)
        b=$("$IDMINT" gen snowflake --node auto --registry "$REG" -n 1)
        [ "$b" -gt "$a" ] && echo ok'

finish
